//! The query pack (examples/queries/*.sql) run by DuckDB and by Spark in
//! local mode over a dataset `rdblens keys --format parquet -o DIR` wrote
//! of a multi-shard set: each query's figures equal the report's of the
//! same files, exactly (top keys, memory per namespace and per shard,
//! expiry per minute), and growth between two snapshots equals `rdblens
//! diff`'s. DuckDB and PySpark come from PyPI, Java from
//! Debian (`.ci/run` installs them); without them the tests are skipped
//! locally and fail under CI.

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{rdblens, root, RdbBuilder, ALL_TYPES};

/// Three generated shards (namespaced keys, keys without a namespace, a
/// binary key, expiries spread over minutes and within them, one big key
/// each) and a fixture of every type as a fourth.
fn shards(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = (0..3u64)
        .map(|shard| {
            let mut b = RdbBuilder::new();
            for n in 0..400u64 {
                let profile = vec![b'p'; 10 + (n % 7) as usize * 9];
                b = b.string(format!("user:{shard}-{n}:profile").as_bytes(), &profile, None);
                let expiry = 1_800_000_000_000 + (n % 13) as i64 * 60_000 + n as i64 * 97;
                b = b.string(format!("session:{shard:x}{n:08x}").as_bytes(), b"s", Some(expiry));
                if n % 3 == 0 {
                    b = b.string(format!("counter{shard}-{n}").as_bytes(), b"12345", None);
                }
            }
            b = b.string(
                &[&b"bin:\xff\x00"[..], &[b'0' + shard as u8]].concat(),
                b"x",
                None,
            );
            b = b.string(
                format!("big:{shard}").as_bytes(),
                &vec![b'b'; 5_000 * (shard as usize + 1)],
                None,
            );
            let path = dir.join(format!("node-{}.rdb", shard + 1));
            std::fs::write(&path, b.finish()).unwrap();
            path
        })
        .collect();
    files.push(root().join(ALL_TYPES));
    files
}

/// The dataset of the shards, and the report of the same files.
fn dataset_and_report(dir: &Path) -> (PathBuf, Value) {
    let files = shards(dir);
    let names: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let dataset = dir.join("keys");
    rdblens()
        .arg("keys")
        .args(&names)
        .args([
            "--label", "node-1", "--label", "node-2", "--label", "node-3", "--label", "fixture",
        ])
        .args([
            "--cluster-label",
            "test",
            "--snapshot-label",
            "s1",
            "--format",
            "parquet",
            "-q",
            "-o",
        ])
        .arg(&dataset)
        .assert()
        .success()
        .stdout("");
    let mut parts: Vec<String> = walk(&dataset)
        .iter()
        .map(|p| p.strip_prefix(&dataset).unwrap().to_str().unwrap().to_string())
        .collect();
    parts.sort();
    assert_eq!(
        parts,
        ["fixture", "node-1", "node-2", "node-3"]
            .map(|s| format!("cluster=test/snapshot=s1/shard={s}/part-0.parquet"))
    );
    let out = rdblens()
        .arg("report")
        .args(&names)
        .args(["--format", "json", "--bucket", "1m", "-q"])
        .assert()
        .success();
    (dataset, serde_json::from_slice(&out.get_output().stdout).unwrap())
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Runs `runner` (an examples/*/run_queries.py) with `python` over the
/// dataset: every query's rows, by query name.
fn run_queries(python: &Path, runner: &str, dataset: &Path, extra: &[&str]) -> Value {
    let out = std::process::Command::new(python)
        .arg(root().join(runner))
        .arg(dataset)
        .arg("--json")
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{runner}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn rows<'a>(result: &'a Value, query: &str) -> &'a Vec<Value> {
    result[query]
        .as_array()
        .unwrap_or_else(|| panic!("{query}: no rows in {result}"))
}

/// Each query's figures against the report's.
fn check_against_report(result: &Value, report: &Value) {
    // Top keys: the same 20 keys in the same order with the same memory.
    let top: Vec<(u64, String, u64)> = report["top_keys"]["by_memory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["db"].as_u64().unwrap(),
                k["key"].as_str().unwrap().to_string(),
                k["memory"].as_u64().unwrap(),
            )
        })
        .collect();
    let queried: Vec<(u64, String, u64)> = rows(result, "top_keys")
        .iter()
        .map(|r| {
            (
                r["db"].as_u64().unwrap(),
                r["key_text"].as_str().unwrap().to_string(),
                r["size_in_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(top.len(), 20);
    assert_eq!(queried, top);
    assert_eq!(top[0].1, "str:big:1mb-lzf");
    assert!(top.iter().any(|(_, k, _)| k == "big:2"));

    // Memory per first-level namespace, and the keys without one.
    let prefixes = &report["prefixes"];
    let mut namespaces: Vec<(Option<String>, u64, u64, u64)> = prefixes["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                Some(n["prefix"]["key"].as_str().unwrap().to_string()),
                n["keys"].as_u64().unwrap(),
                n["keys_with_expiry"].as_u64().unwrap(),
                n["memory"].as_u64().unwrap(),
            )
        })
        .collect();
    let none = &prefixes["no_namespace"];
    namespaces.push((
        None,
        none["keys"].as_u64().unwrap(),
        none["keys_with_expiry"].as_u64().unwrap(),
        none["memory"].as_u64().unwrap(),
    ));
    let mut queried: Vec<(Option<String>, u64, u64, u64)> = rows(result, "namespace_memory")
        .iter()
        .map(|r| {
            (
                r["namespace"].as_str().map(str::to_string),
                r["keys"].as_u64().unwrap(),
                r["keys_with_expiry"].as_u64().unwrap(),
                r["memory"].as_u64().unwrap(),
            )
        })
        .collect();
    namespaces.sort();
    queried.sort();
    assert_eq!(queried, namespaces);
    assert!(namespaces
        .iter()
        .any(|n| n.0.as_deref() == Some("session") && n.1 == 1200 + 30));

    // Per shard, in the order given.
    let shards: Vec<(u64, u64, u64)> = report["shards"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["keys"].as_u64().unwrap(),
                s["keys_with_expiry"].as_u64().unwrap(),
                s["memory"].as_u64().unwrap(),
            )
        })
        .collect();
    let by_label: Vec<(String, (u64, u64, u64))> = rows(result, "shard_memory")
        .iter()
        .map(|r| {
            (
                r["shard"].as_str().unwrap().to_string(),
                (
                    r["keys"].as_u64().unwrap(),
                    r["keys_with_expiry"].as_u64().unwrap(),
                    r["memory"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    let queried: Vec<(u64, u64, u64)> = ["node-1", "node-2", "node-3", "fixture"]
        .iter()
        .map(|label| by_label.iter().find(|(l, _)| l == label).unwrap().1)
        .collect();
    assert_eq!(queried, shards);

    // Expiry per minute: the report's histogram with --bucket 1m.
    let expiry = &report["expiry"];
    assert_eq!(expiry["bucket_ms"], 60_000);
    let histogram: Vec<(i64, u64, u64)> = expiry["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["start_ms"].as_i64().unwrap(),
                b["keys"].as_u64().unwrap(),
                b["memory"].as_u64().unwrap(),
            )
        })
        .collect();
    let queried: Vec<(i64, u64, u64)> = rows(result, "expiry_per_minute")
        .iter()
        .map(|r| {
            (
                r["minute_start_ms"].as_i64().unwrap(),
                r["keys"].as_u64().unwrap(),
                r["memory"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(queried, histogram);
    assert!(histogram
        .iter()
        .any(|&(start, keys, _)| start == 1_800_000_000_000 && keys > 90));

    // The other queries run and find what the data has: one snapshot (all
    // growth is new), and the fixture's big hashes, sets and zsets.
    let growth = rows(result, "growth");
    assert!(growth
        .iter()
        .all(|r| r["snapshot_before"].is_null() && r["keys_before"] == 0));
    let over = rows(result, "over_compact_limits");
    assert!(over
        .iter()
        .any(|r| r["key_text"] == "hash:big" && r["limit_passed"] == "hash-max-listpack-entries"));
}

#[test]
fn query_pack_in_duckdb_equals_the_report() {
    let test = "query_pack_in_duckdb_equals_the_report";
    let Some(python) = support::python_with("duckdb", "duckdb", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (dataset, report) = dataset_and_report(dir.path());
    let result = run_queries(&python, "examples/duckdb/run_queries.py", &dataset, &[]);
    check_against_report(&result, &report);
}

/// All the queries in one Spark session (one JVM start, about 30 s).
#[test]
fn query_pack_in_spark_equals_the_report() {
    let test = "query_pack_in_spark_equals_the_report";
    let Some(python) = support::python_with("pyspark", "pyspark", test) else {
        return;
    };
    if support::java(test).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (dataset, report) = dataset_and_report(dir.path());
    // The queries read through Spark, as from a bucket on a cluster.
    let queries = format!(
        "file://{}",
        root().join("examples/queries").canonicalize().unwrap().display()
    );
    let result = run_queries(
        &python,
        "examples/spark/run_queries.py",
        &dataset,
        &["--master", "local[2]", "--queries-dir", &queries],
    );
    check_against_report(&result, &report);
}

/// growth.sql over two snapshots (fixtures/growth: a real server saved
/// before and after growth) gives `rdblens diff`'s figures per first-level
/// namespace.
#[test]
fn growth_query_in_duckdb_equals_the_diff() {
    let test = "growth_query_in_duckdb_equals_the_diff";
    let Some(python) = support::python_with("duckdb", "duckdb", test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let dataset = dir.path().join("keys");
    for (snapshot, dump) in [("2026-11-20", "before"), ("2026-11-21", "after")] {
        rdblens()
            .args([
                "keys",
                &format!("fixtures/growth/{dump}.rdb"),
                "--format",
                "parquet",
                "-q",
            ])
            .args(["--snapshot-label", snapshot, "--label", "node-1", "-o"])
            .arg(&dataset)
            .assert()
            .success();
    }
    let out = rdblens()
        .args([
            "diff",
            "fixtures/growth/before.rdb",
            "fixtures/growth/after.rdb",
            "-q",
            "--format",
            "json",
        ])
        .assert()
        .success();
    let diff: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let mut expected: Vec<(String, u64, u64, u64, u64)> = diff["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["level"] == 1)
        .map(|n| {
            (
                n["prefix"]["key"].as_str().unwrap().to_string(),
                n["old"]["keys"].as_u64().unwrap(),
                n["new"]["keys"].as_u64().unwrap(),
                n["old"]["memory"].as_u64().unwrap(),
                n["new"]["memory"].as_u64().unwrap(),
            )
        })
        .collect();
    let result = run_queries(&python, "examples/duckdb/run_queries.py", &dataset, &["growth"]);
    let growth = rows(&result, "growth");
    assert!(growth
        .iter()
        .all(|r| r["snapshot_before"] == "2026-11-20" && r["snapshot_after"] == "2026-11-21"));
    let mut queried: Vec<(String, u64, u64, u64, u64)> = growth
        .iter()
        .map(|r| {
            (
                r["namespace"].as_str().unwrap().to_string(),
                r["keys_before"].as_u64().unwrap(),
                r["keys_after"].as_u64().unwrap(),
                r["memory_before"].as_u64().unwrap(),
                r["memory_after"].as_u64().unwrap(),
            )
        })
        .filter(|row| expected.iter().any(|e| e.0 == row.0))
        .collect();
    expected.sort();
    queried.sort();
    assert_eq!(expected.len(), 2, "{expected:?}");
    assert_eq!(queried, expected);
    // The biggest growth first: the list that became 40 times bigger.
    assert_eq!(growth[0]["namespace"], "queue");
    assert_eq!(growth[0]["memory_growth"], 207_848);
}
