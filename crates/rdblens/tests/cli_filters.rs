//! The filters users bring from redis-rdb-tools and HDT3213/rdb: `--regex`,
//! `--exclude`/`--not-match`, `--min-size`/`--max-size` (memory or
//! serialized), `--ttl`/`--no-ttl`/`--expired`, on `keys` and `report`.
//! Expected counts come from the unfiltered `keys` records of the fixture
//! (every column checked against the server's answers in cli_keys.rs).

mod support;

use serde_json::Value;
use support::{rdblens, ALL_TYPES};

const EXPIRED: &str = "fixtures/rules/expired.rdb";

fn keys(file: &str, args: &[&str]) -> Vec<Value> {
    let out = rdblens()
        .args(["keys", file, "--format", "jsonl"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

fn report_keys(file: &str, args: &[&str]) -> u64 {
    let out = rdblens()
        .args(["report", file, "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["totals"]["keys"].as_u64().unwrap()
}

fn names(rows: &[Value]) -> Vec<&str> {
    rows.iter().map(|r| r["key"].as_str().unwrap()).collect()
}

#[test]
fn each_filter_keeps_exactly_the_keys_it_names() {
    let all = keys(ALL_TYPES, &[]);
    assert_eq!(all.len(), 227);
    let count = |pred: &dyn Fn(&Value) -> bool| all.iter().filter(|r| pred(r)).count();
    let cases: [(&[&str], usize); 8] = [
        (&["--no-ttl"], count(&|r| r["expiry_ms"].is_null())),
        (
            &["--ttl", "1h.."],
            count(&|r| r["ttl_ms"].as_i64().is_some_and(|t| t >= 3_600_000)),
        ),
        (&["--ttl", "..1h"], 0),
        (
            &["--min-size", "100KiB"],
            count(&|r| r["size_in_bytes"].as_u64().unwrap() >= 102_400),
        ),
        (
            &["--min-size", "100KiB", "--size-by", "serialized"],
            count(&|r| r["serialized_bytes"].as_u64().unwrap() >= 102_400),
        ),
        (
            &["--max-size", "64"],
            count(&|r| r["size_in_bytes"].as_u64().unwrap() <= 64),
        ),
        (&["--regex", r"^user:1\d*:"], 11),
        (&["--match", "user:*", "--not-match", "user:1*"], 13),
    ];
    let expected = [144, 83, 0, 3, 1, 25, 11, 13];
    for ((args, n), e) in cases.iter().zip(expected) {
        assert_eq!(*n, e, "{args:?}: the oracle count");
        assert_eq!(keys(ALL_TYPES, args).len(), e, "keys {args:?}");
        assert_eq!(report_keys(ALL_TYPES, args), e as u64, "report {args:?}");
    }
    let excluded = keys(ALL_TYPES, &["--match", "user:*", "--exclude", "user:1*"]);
    assert!(names(&excluded)
        .iter()
        .all(|k| k.starts_with("user:") && !k.starts_with("user:1")));
}

#[test]
fn expired_keys_at_the_reference_time() {
    let all = keys(EXPIRED, &[]);
    assert_eq!(all.len(), 2500);
    let expired = all
        .iter()
        .filter(|r| r["ttl_ms"].as_i64().is_some_and(|t| t <= 0))
        .count();
    assert_eq!(expired, 2000);
    assert_eq!(keys(EXPIRED, &["--expired"]).len(), 2000);
    assert_eq!(report_keys(EXPIRED, &["--expired"]), 2000);
    // Expired keys have no TTL left: a range admits only the others.
    let live = all
        .iter()
        .filter(|r| r["ttl_ms"].as_i64().is_some_and(|t| t > 0))
        .count();
    assert_eq!(live, 500);
    assert_eq!(keys(EXPIRED, &["--ttl", "0s.."]).len(), 500);
}

#[test]
fn bad_filters_are_usage_errors() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["--ttl", "1x.."],
            "rdblens: --ttl \"1x..\": \"1x\" is not a duration (examples: 3600, 90m, 12h, 30d)\n",
        ),
        (
            &["--ttl", "1h"],
            "rdblens: --ttl \"1h\": expected MIN..MAX, e.g. 1h..1d, ..10m or 7d..\n",
        ),
        (
            &["--ttl", "1d..1h"],
            "rdblens: --ttl \"1d..1h\": the minimum is above the maximum\n",
        ),
        (
            &["--min-size", "lots"],
            "rdblens: --min-size: \"lots\" is not a size (examples: 4096, 10KiB, 1MiB, 2GiB)\n",
        ),
        (
            &["--min-size", "2k", "--max-size", "1k"],
            "rdblens: --min-size 2048 is above --max-size 1024: no key can match\n",
        ),
    ];
    for cmd in ["keys", "report"] {
        for (args, message) in cases {
            rdblens()
                .args([cmd, ALL_TYPES])
                .args(args)
                .assert()
                .code(2)
                .stdout("")
                .stderr(message);
        }
        rdblens()
            .args([cmd, ALL_TYPES, "--regex", "("])
            .assert()
            .code(2)
            .stderr(predicates::str::starts_with(
                "rdblens: --regex \"(\": regex parse error:",
            ));
    }
}

#[test]
fn summaries_with_other_filters_do_not_merge() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    for (out, extra) in [(&a, "--no-ttl"), (&b, "--expired")] {
        rdblens()
            .args([
                "report",
                ALL_TYPES,
                "--summary-only",
                "-q",
                extra,
                "-o",
                out.to_str().unwrap(),
            ])
            .assert()
            .success();
    }
    rdblens()
        .args(["merge", a.to_str().unwrap(), b.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "key filters [\"ttl Persistent\"] vs [\"ttl Expired\"]",
        ));
}

#[test]
fn filters_that_leave_nothing_say_so() {
    let note = "rdblens: note: no key matched the filters; the input holds 227 keys\n";
    for args in [
        &["--db", "99"][..],
        &["--match", "nothing*"],
        &["--regex", "^no such key$"],
    ] {
        rdblens()
            .args(["report", ALL_TYPES, "--section", "keys"])
            .args(args)
            .assert()
            .success()
            .stderr(note);
        rdblens()
            .args(["keys", ALL_TYPES])
            .args(args)
            .assert()
            .success()
            .stderr(note);
    }
    // A filter that matches something says nothing.
    rdblens()
        .args(["keys", ALL_TYPES, "--db", "0"])
        .assert()
        .success()
        .stderr("");
}

#[test]
fn targets_that_were_never_released_are_refused() {
    for cmd in ["report", "keys"] {
        rdblens()
            .args([cmd, ALL_TYPES, "--target", "redis-9.9"])
            .assert()
            .code(2)
            .stdout("")
            .stderr(
                "rdblens: --target redis-9.9: no Redis 9.9 release is known (Redis releases: 2.0, 2.2, 2.4, \
                 2.6, 2.8, 3.0, 3.2, 4.0, 5.0, 6.0, 6.2, 7.0, 7.2, 7.4, 8.0, 8.2, 8.4, 8.6, 8.8)\n",
            );
        rdblens()
            .args([cmd, ALL_TYPES, "--target", "valkey-8.3"])
            .assert()
            .code(2)
            .stderr(
                "rdblens: --target valkey-8.3: no Valkey 8.3 release is known (Valkey releases: 7.2, 8.0, \
                 8.1, 9.0, 9.1, 9.2)\n",
            );
    }
    rdblens()
        .args(["keys", ALL_TYPES, "--target", "redis-7.2.4", "--db", "0"])
        .assert()
        .success();
}
