//! Namespaces whose second segment is an id (`rate:<IPv4>:n`,
//! `user:<id>:profile`, `sess:<UUID>`) are counted in their first segment,
//! in the namespace tree, the expiry clusters and the diff alike, on a dump
//! Debian's redis-server 7.0.15 wrote (fixtures/namespaces/generate.py).

mod support;

use serde_json::{json, Value};
use support::{rdblens, ALL_TYPES};

const IDS: &str = "fixtures/namespaces/ids.rdb";

fn run_json(args: &[&str]) -> Value {
    let mut cmd = rdblens();
    cmd.args(args).args(["--format", "json"]);
    // `merge` reads summaries and shows no progress: it has no --quiet.
    if args[0] != "merge" {
        cmd.arg("-q");
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `[prefix, keys, [[child, keys]...]]` per first-level namespace.
fn rows(prefixes: &Value) -> Value {
    let name = |n: &Value| n["prefix"]["key"].clone();
    Value::Array(
        prefixes["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let children: Vec<Value> = n["children"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| json!([name(c), c["keys"]]))
                    .collect();
                json!([name(n), n["keys"], children])
            })
            .collect(),
    )
}

#[test]
fn id_segments_are_counted_in_their_parent_namespace() {
    let expected = json!([
        ["rate", 3020, []],
        ["sess", 1050, []],
        ["user", 500, []],
        ["cache", 20, [["cache:page", 20]]],
    ]);
    for depth in ["1", "2", "4"] {
        let doc = run_json(&["report", IDS, "--section", "prefixes", "--depth", depth]);
        let p = &doc["prefixes"];
        if depth == "1" {
            assert_eq!(
                rows(p),
                json!([
                    ["rate", 3020, []],
                    ["sess", 1050, []],
                    ["user", 500, []],
                    ["cache", 20, []]
                ])
            );
        } else {
            assert_eq!(rows(p), expected, "--depth {depth}");
        }
        assert_eq!(p["folded"], Value::Null);
        assert_eq!(p["no_namespace"]["keys"], 10);
    }
}

#[test]
fn the_expiry_cluster_of_the_rate_keys_is_named_rate() {
    for depth in ["1", "2", "3"] {
        let doc = run_json(&["report", IDS, "--section", "expiry", "--depth", depth]);
        let clusters = doc["expiry"]["clusters"].as_array().unwrap();
        let cluster = clusters
            .iter()
            .find(|c| c["start_ms"] == 1_893_456_000_000i64)
            .expect("the cluster at 2030-01-01T00:00:00Z");
        // 3,000 rate keys and one session key that expires in that second.
        assert_eq!(cluster["keys"], 3001);
        assert_eq!(cluster["namespaces"], json!([["rate", 3000]]), "--depth {depth}");
        assert_eq!(cluster["other_keys"], 1);
    }
}

#[test]
fn the_html_and_the_diff_name_the_parent_namespaces() {
    let out = rdblens()
        .args(["report", IDS, "--format", "html", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let html = String::from_utf8(out.stdout).unwrap();
    assert!(
        !html.contains("rate:10."),
        "an address as a namespace in the HTML"
    );
    assert!(
        !html.contains("more under rate"),
        "rate's children folded in the HTML"
    );

    let diff = run_json(&["diff", ALL_TYPES, IDS]);
    let rows: Vec<(String, u64)> = diff["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["prefix"]["key"].as_str().unwrap().to_string(),
                r["level"].as_u64().unwrap(),
            )
        })
        .collect();
    for (name, level) in [
        ("rate", 1),
        ("sess", 1),
        ("user", 1),
        ("cache", 1),
        ("cache:page", 2),
    ] {
        assert!(
            rows.contains(&(name.to_string(), level)),
            "{name} missing from {rows:?}"
        );
    }
    assert!(
        rows.iter().all(|(name, _)| !name.starts_with("rate:")
            && !name.starts_with("sess:")
            && !name.starts_with("user:")),
        "{rows:?}"
    );
    let rate = diff["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["prefix"]["key"] == "rate")
        .unwrap();
    assert_eq!(rate["new"]["keys"], 3020);
    assert_eq!(rate["old"]["keys"], 0);
}

/// Each key's memory estimate, by key, for the keys `rdblens keys` lists
/// with `extra` (e.g. `--expired`).
fn key_memory(extra: &[&str]) -> Vec<(String, u64)> {
    let out = rdblens()
        .args(["keys", IDS, "--format", "jsonl"])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["key"].as_str().unwrap().to_string(),
                v["size_in_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The 80 keys the generator let expire before the snapshot: 50 `sess`,
/// 20 `rate`, 10 without a namespace, counted per namespace with the memory
/// a reload frees, in the JSON, the tables, the HTML and through a summary.
#[test]
fn keys_already_expired_at_the_snapshot_are_counted_per_namespace() {
    let expired = key_memory(&["--expired"]);
    assert_eq!(expired.len(), 80);
    let sum = |f: &dyn Fn(&str) -> bool| -> (u64, u64) {
        let hit: Vec<u64> = expired.iter().filter(|(k, _)| f(k)).map(|(_, m)| *m).collect();
        (hit.len() as u64, hit.iter().sum())
    };
    let (sess, rate) = (sum(&|k| k.starts_with("sess:")), sum(&|k| k.starts_with("rate:")));
    let none = sum(&|k| !k.contains(':'));
    assert_eq!((sess.0, rate.0, none.0), (50, 20, 10));
    let total = sess.1 + rate.1 + none.1;
    let want = json!({
        "keys": 80,
        "memory": total,
        "namespaces": [
            {"prefix": {"key": "sess"}, "keys": 50, "memory": sess.1, "children": []},
            {"prefix": {"key": "rate"}, "keys": 20, "memory": rate.1, "children": []},
        ],
        "folded": {"keys": 0, "memory": 0},
        "no_namespace": {"keys": 10, "memory": none.1},
    });
    let doc = run_json(&["report", IDS, "--section", "prefixes"]);
    assert_eq!(doc["prefixes"]["expired"], want);

    // Through a summary and `merge`, the same.
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("ids.json");
    rdblens()
        .args(["report", IDS, "--summary-only", "-q", "-o"])
        .arg(&summary)
        .assert()
        .success();
    let merged = run_json(&["merge", summary.to_str().unwrap(), "--section", "prefixes"]);
    assert_eq!(merged["prefixes"]["expired"], want);

    let out = rdblens()
        .args(["report", IDS, "--section", "prefixes", "-q"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let kib = |b: u64| format!("{:.1} KiB", b as f64 / 1024.0);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("already expired at 2026-11-29 08:14:29 UTC are still in the dump"))
        .collect();
    assert_eq!(
        table[0],
        format!(
            "80 keys ({}) already expired at 2026-11-29 08:14:29 UTC are still in the dump: loading it (or the server's expiry) frees them.",
            kib(total)
        )
    );
    let rows: Vec<Vec<&str>> = table[3..6]
        .iter()
        .map(|l| l.split('|').map(str::trim).filter(|c| !c.is_empty()).collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["\"sess\"", "50", &kib(sess.1)],
            vec!["\"rate\"", "20", &kib(rate.1)],
            vec!["(no namespace)", "10", &format!("{} B", none.1)],
        ]
    );

    let page = rdblens()
        .args(["report", IDS, "--format", "html", "-q"])
        .output()
        .unwrap();
    let page = String::from_utf8(page.stdout).unwrap();
    let table = &page[page
        .find("<table id=\"expired-table\"")
        .expect("the expired table")..];
    let table = &table[..table.find("</table>").unwrap()];
    for (name, keys, memory) in [("sess", 50, sess.1), ("rate", 20, rate.1)] {
        assert!(
            table.contains(&format!(
                "<code>{name}</code></td><td class=\"n\" data-v=\"{keys}\">{keys}</td><td class=\"n\" data-v=\"{memory}\">"
            )),
            "{name} in {table}"
        );
    }
    assert!(table.contains(&format!(
        "<td>(no namespace)</td><td class=\"n\" data-v=\"10\">10</td><td class=\"n\" data-v=\"{}\">",
        none.1
    )));
}
