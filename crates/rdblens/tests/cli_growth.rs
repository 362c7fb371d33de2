//! `diff --fail-on-growth`: limits on total memory, keys, a namespace's
//! memory and a key's memory; crossing one prints the alert in the diff
//! (tables and JSON) and on standard error, and exits 1.

mod support;

use std::path::Path;

use serde_json::{json, Value};
use support::{rdblens, RdbBuilder};

const KIB: usize = 1024;

/// Two snapshots: `cache:*` grows from two 10 KiB keys to three (one new,
/// one grown to 200 KiB), `user:*` (five small keys) is unchanged.
fn snapshots(dir: &Path) -> (String, String) {
    let users = |b: RdbBuilder| (1..=5).fold(b, |b, i| b.string(format!("user:{i}").as_bytes(), b"v", None));
    let old = users(RdbBuilder::new())
        .string(b"cache:a", &vec![b'a'; 10 * KIB], None)
        .string(b"cache:b", &vec![b'b'; 10 * KIB], None)
        .finish();
    let new = users(RdbBuilder::new())
        .string(b"cache:a", &vec![b'a'; 200 * KIB], None)
        .string(b"cache:b", &vec![b'b'; 10 * KIB], None)
        .string(b"cache:c", &vec![b'c'; 10 * KIB], None)
        .finish();
    let (o, n) = (dir.join("old.rdb"), dir.join("new.rdb"));
    std::fs::write(&o, old).unwrap();
    std::fs::write(&n, new).unwrap();
    (o.to_str().unwrap().into(), n.to_str().unwrap().into())
}

/// `(exit code, stdout, stderr)` of `rdblens diff OLD NEW -q ARGS`.
fn diff(old: &str, new: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let out = rdblens()
        .args(["diff", old, new, "-q"])
        .args(args)
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const ALL_CROSSED: [&str; 4] = [
    "total memory 24.4 KiB -> 248.4 KiB (+224.1 KiB, +918.9%), above total=10%",
    "keys 7 -> 8 (+1, +14.3%), above keys=5%",
    "namespace \"cache\" memory 24.1 KiB -> 248.2 KiB (+224.1 KiB, +929.3%), above namespace=20%",
    "key \"cache:a\" (db 0) memory 12.1 KiB -> 224.1 KiB (+212.0 KiB, +1758.7%), above key=50KiB",
];

#[test]
fn growth_above_a_limit_is_named_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let (o, n) = snapshots(dir.path());
    let limits = "total=10%,keys=5%,namespace=20%,key=50KiB";
    let (code, out, err) = diff(&o, &n, &["--fail-on-growth", limits]);
    assert_eq!(code, Some(1), "{err}");
    let expected: String = ALL_CROSSED
        .iter()
        .map(|a| format!("rdblens: --fail-on-growth: {a}\n"))
        .collect();
    assert_eq!(err, expected);
    // The table output ends with the same alerts, the rest of the diff first.
    let section = format!(
        "== Growth alerts (--fail-on-growth) ==\n{}\n",
        ALL_CROSSED.join("\n")
    );
    assert!(out.ends_with(&section), "{out}");
    assert!(out.contains("Keys that appeared, disappeared, grew or shrank most"));
}

#[test]
fn growth_within_the_limits_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let (o, n) = snapshots(dir.path());
    // +918.9% memory, +1 key (14.3%), the namespace +224.1 KiB, the key +212.0 KiB:
    // each at or below its limit (a growth equal to the limit does not cross it).
    let (code, out, err) = diff(
        &o,
        &n,
        &["--fail-on-growth", "total=1000%,keys=1,namespace=1MiB,key=300KiB"],
    );
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert!(
        out.ends_with(
            "== Growth alerts (--fail-on-growth) ==\nnone: no figure grew by more than its limit\n"
        ),
        "{out}"
    );
    // Without the flag: no section, no JSON field, exit 0.
    let (code, out, _) = diff(&o, &n, &[]);
    assert_eq!(code, Some(0));
    assert!(!out.contains("Growth alerts"));
    let (code, out, _) = diff(&o, &n, &["--format", "json"]);
    assert_eq!(code, Some(0));
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert!(doc.get("growth_alerts").is_none());
}

#[test]
fn the_json_lists_the_alerts() {
    let dir = tempfile::tempdir().unwrap();
    let (o, n) = snapshots(dir.path());
    // key=5KiB: cache:a grew, cache:c appeared (from nothing: old 0); keys=1
    // and total=2000% are not crossed.
    let args = [
        "--format",
        "json",
        "--fail-on-growth",
        "key=5KiB,keys=1,total=2000%",
    ];
    let (code, out, err) = diff(&o, &n, &args);
    assert_eq!(code, Some(1), "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let kc = &doc["key_changes"];
    let (grew, appeared) = (&kc["grew"][0], &kc["appeared"][0]);
    assert_eq!(
        (grew["key"].as_str(), appeared["key"].as_str()),
        (Some("cache:a"), Some("cache:c"))
    );
    assert_eq!(
        doc["growth_alerts"],
        json!([
            {
                "what": "key", "name": "cache:a", "db": 0,
                "old": grew["old_memory"], "new": grew["new_memory"], "change": grew["delta"],
                "threshold": "5KiB"
            },
            {
                "what": "key", "name": "cache:c", "db": 0,
                "old": 0, "new": appeared["new_memory"], "change": appeared["delta"],
                "threshold": "5KiB"
            }
        ])
    );
    assert_eq!(err.lines().count(), 2, "{err}");
    // Crossed limits on totals and namespaces carry a null name.
    let args = [
        "--format",
        "json",
        "--fail-on-growth",
        "total=100KiB,namespace=200KiB",
    ];
    let (code, out, _) = diff(&o, &n, &args);
    assert_eq!(code, Some(1));
    let doc: Value = serde_json::from_str(&out).unwrap();
    let t = &doc["totals"];
    let delta = t["delta"]["memory"].as_i64().unwrap();
    assert_eq!(
        doc["growth_alerts"][0],
        json!({
            "what": "total", "name": null, "old": t["old"]["memory"], "new": t["new"]["memory"],
            "change": delta, "threshold": "100KiB"
        })
    );
    assert_eq!(doc["growth_alerts"][1]["what"], "namespace");
    assert_eq!(doc["growth_alerts"][1]["name"], "cache");
    assert_eq!(doc["growth_alerts"].as_array().unwrap().len(), 2);
}

#[test]
fn a_bad_limit_is_a_usage_error_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let (o, n) = snapshots(dir.path());
    for (spec, message) in [
        (
            "total=abc",
            "total=abc: \"abc\" is not a percentage or a size (e.g. total=10% or total=50MiB)",
        ),
        (
            "size=10%",
            "\"size\" is not a figure to limit (total, keys, namespace, namespace-keys, key or expiry-clusters)",
        ),
        (
            "keys=1MiB",
            "keys=1MiB: \"1MiB\" is not a percentage or a number of keys (e.g. keys=5% or keys=1000)",
        ),
        ("total=5%,total=6%", "total is given more than once"),
        (
            "total=-5%",
            "total=-5%: \"-5\" is not a percentage (e.g. total=10%,keys=5%,namespace=20%,key=50MiB)",
        ),
        (
            "total",
            "\"total\" is not WHAT=LIMIT (e.g. total=10%,keys=5%,namespace=20%,key=50MiB)",
        ),
    ] {
        let (code, out, err) = diff(&o, &n, &["--fail-on-growth", spec]);
        assert_eq!(code, Some(2), "{spec}: {err}");
        assert_eq!(err, format!("rdblens: --fail-on-growth: {message}\n"), "{spec}");
        assert_eq!(out, "", "{spec}");
    }
}

/// A real redis-server 7.0.15 saved before and after growth
/// (fixtures/growth/generate.py): `cache:page:*` doubles, `queue:jobs`
/// grows from 100 to 5,000 items, 1,201 keys become 1,401.
#[test]
fn snapshots_of_a_real_server_before_and_after_growth() {
    let root = support::root().join("fixtures/growth");
    let (o, n) = (root.join("before.rdb"), root.join("after.rdb"));
    let (o, n) = (o.to_str().unwrap(), n.to_str().unwrap());
    let (code, out, err) = diff(
        o,
        n,
        &["--fail-on-growth", "total=10%,keys=5%,namespace=50%,key=100KiB"],
    );
    assert_eq!(code, Some(1), "{err}");
    let alerts = [
        "total memory 217.6 KiB -> 531.5 KiB (+313.9 KiB, +144.2%), above total=10%",
        "keys 1,201 -> 1,401 (+200, +16.7%), above keys=5%",
        "namespace \"queue\" memory 5.1 KiB -> 208.1 KiB (+203.0 KiB, +3954.5%), above namespace=50%",
        "namespace \"cache\" memory 110.9 KiB -> 221.9 KiB (+110.9 KiB, +100.0%), above namespace=50%",
        "namespace \"cache:page\" memory 110.9 KiB -> 221.9 KiB (+110.9 KiB, +100.0%), above namespace=50%",
        "key \"queue:jobs\" (db 0) memory 5.1 KiB -> 208.1 KiB (+203.0 KiB, +3954.5%), above key=100KiB",
    ];
    let expected: String = alerts
        .iter()
        .map(|a| format!("rdblens: --fail-on-growth: {a}\n"))
        .collect();
    assert_eq!(err, expected);
    assert!(out.ends_with(&format!(
        "== Growth alerts (--fail-on-growth) ==\n{}\n",
        alerts.join("\n")
    )));
    // Limits just above each growth: no alert.
    let (code, _, err) = diff(
        o,
        n,
        &[
            "--fail-on-growth",
            "total=150%,keys=20%,namespace=300KiB,key=250KiB",
        ],
    );
    assert_eq!((code, err.as_str()), (Some(0), ""));
}

/// Two snapshots with TTLs: 300 `sess:*` keys expiring evenly over a day in
/// both, and in the new one 3,000 `cache:*` keys set to expire in the same
/// second (a cache warmed with one TTL: an expiry cluster it did not have).
fn expiring_snapshots(dir: &Path) -> (String, String) {
    const NOW_MS: i64 = 1_800_000_000_000;
    let sessions = |b: RdbBuilder| {
        (0..300).fold(b, |b, i| {
            let at = NOW_MS + 3_600_000 + i * 288_000;
            b.string(format!("sess:{i}").as_bytes(), b"v", Some(at))
        })
    };
    let old = sessions(RdbBuilder::new()).finish();
    let new = (0..3000)
        .fold(sessions(RdbBuilder::new()), |b, i| {
            b.string(format!("cache:{i}").as_bytes(), b"page", Some(NOW_MS + 7_200_000))
        })
        .finish();
    let (o, n) = (dir.join("old.rdb"), dir.join("new.rdb"));
    std::fs::write(&o, old).unwrap();
    std::fs::write(&n, new).unwrap();
    (o.to_str().unwrap().into(), n.to_str().unwrap().into())
}

#[test]
fn a_new_expiry_cluster_and_namespace_keys_are_growth_alerts() {
    let dir = tempfile::tempdir().unwrap();
    let (o, n) = expiring_snapshots(dir.path());
    let now = ["--now", "1800000000"];
    let (code, out, err) = diff(
        &o,
        &n,
        &[
            &now[..],
            &["--fail-on-growth", "expiry-clusters=0,namespace-keys=100"],
        ]
        .concat(),
    );
    assert_eq!(code, Some(1), "{err}");
    let alerts = [
        "namespace \"cache\" keys 0 -> 3,000 (+3,000), above namespace-keys=100",
        "new expiry cluster 2027-01-15T10:00:00Z to 2027-01-15T10:00:01Z: 3,000 keys, above expiry-clusters=0",
    ];
    let expected: String = alerts
        .iter()
        .map(|a| format!("rdblens: --fail-on-growth: {a}\n"))
        .collect();
    assert_eq!(err, expected);
    assert!(out.ends_with(&format!(
        "== Growth alerts (--fail-on-growth) ==\n{}\n",
        alerts.join("\n")
    )));
    // The JSON names the cluster by its window.
    let (_, json, _) = diff(
        &o,
        &n,
        &[
            &now[..],
            &["--fail-on-growth", "expiry-clusters=0", "--format", "json"],
        ]
        .concat(),
    );
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        doc["growth_alerts"],
        json!([{
            "what": "expiry_cluster",
            "name": "2027-01-15T10:00:00Z/2027-01-15T10:00:01Z",
            "old": 0,
            "new": 3000,
            "change": 3000,
            "threshold": "0"
        }])
    );
    // One new cluster is let pass by expiry-clusters=1.
    let (code, _, err) = diff(
        &o,
        &n,
        &[&now[..], &["--fail-on-growth", "expiry-clusters=1"]].concat(),
    );
    assert_eq!((code, err.as_str()), (Some(0), ""));
}

#[test]
fn limits_come_from_the_rules_file_and_the_flag_replaces_them() {
    let dir = tempfile::tempdir().unwrap();
    let (o, n) = snapshots(dir.path());
    let rules = dir.path().join("rules.toml");
    // The audit's rules sit beside the limits; the diff reads [growth] only.
    std::fs::write(
        &rules,
        "[big-string]\nwarn = \"20KiB\"\n[growth]\ntotal = \"10%\"\nkeys = \"5%\"\n",
    )
    .unwrap();
    let rules = rules.to_str().unwrap();
    let (code, _, err) = diff(&o, &n, &["--rules", rules]);
    assert_eq!(code, Some(1));
    assert_eq!(
        err,
        format!(
            "rdblens: --fail-on-growth: {}\nrdblens: --fail-on-growth: {}\n",
            ALL_CROSSED[0], ALL_CROSSED[1]
        )
    );
    // The flag's keys limit replaces the file's; the file's total stays.
    let (code, _, err) = diff(&o, &n, &["--rules", rules, "--fail-on-growth", "keys=10"]);
    assert_eq!(code, Some(1));
    assert_eq!(err, format!("rdblens: --fail-on-growth: {}\n", ALL_CROSSED[0]));
    // A bad limit in the file is named by the file.
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[growth]\ntotal = \"ten\"\n").unwrap();
    let (code, _, err) = diff(&o, &n, &["--rules", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        format!(
            "rdblens: {} [growth]: total=ten: \"ten\" is not a percentage or a size (e.g. total=10% or total=50MiB)\n",
            bad.display()
        )
    );
}
