//! Per-shard names: `--label` on `report` (tables, JSON, summaries, merges,
//! diffs) and `keys` (a `file` column with several files); files of one
//! path from several hosts are told apart as HOST:PATH when merged.

mod support;

use serde_json::Value;
use support::{rdblens, ALL_TYPES};

const CLEAN: &str = "fixtures/rules/clean.rdb";

fn json(out: &std::process::Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn labels_name_the_files_in_reports_and_shard_tables() {
    let out = rdblens()
        .args([
            "report", ALL_TYPES, CLEAN, "--label", "shard-a", "--label", "shard-b",
        ])
        .args(["--format", "json", "--section", "shards"])
        .output()
        .unwrap();
    let doc = json(&out);
    let paths: Vec<&str> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["shard-a", "shard-b"]);
    let rows: Vec<&str> = doc["shards"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(rows, ["shard-a", "shard-b"]);
    let out = rdblens()
        .args([
            "report",
            ALL_TYPES,
            CLEAN,
            "--label",
            "shard-a",
            "--label",
            "shard-b",
            "--section",
            "shards",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("| shard-a "), "{text}");
    assert!(text.contains("| shard-b "), "{text}");
    assert!(!text.contains(CLEAN), "{text}");
}

#[test]
fn label_mistakes_are_usage_errors() {
    for cmd in ["report", "keys"] {
        rdblens()
            .args([cmd, ALL_TYPES, CLEAN, "--label", "a"])
            .assert()
            .code(2)
            .stdout("")
            .stderr("rdblens: --label is given 1 times for 2 files: give one per file, in order\n");
        rdblens()
            .args([cmd, ALL_TYPES, CLEAN, "--label", "a", "--label", "a"])
            .assert()
            .code(2)
            .stderr("rdblens: --label \"a\" is given twice: each file needs its own name\n");
    }
}

#[test]
fn one_path_on_several_hosts_is_told_apart_when_merged() {
    let dir = tempfile::tempdir().unwrap();
    // The same path on two hosts: a summary made elsewhere is edited to
    // say so (its host is whatever this machine is called).
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    for out in [&a, &b] {
        rdblens()
            .args([
                "report",
                CLEAN,
                "--summary-only",
                "-q",
                "-o",
                out.to_str().unwrap(),
            ])
            .assert()
            .success();
    }
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    assert!(doc["host"].is_string(), "summaries record their host");
    doc["host"] = "redis-2".into();
    std::fs::write(&b, doc.to_string()).unwrap();
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    doc["host"] = "redis-1".into();
    std::fs::write(&a, doc.to_string()).unwrap();
    let out = rdblens()
        .args([
            "merge",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let merged = json(&out);
    let paths: Vec<&str> = merged["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, [format!("redis-1:{CLEAN}"), format!("redis-2:{CLEAN}")]);
    // Paths that do not collide keep their names.
    let c = dir.path().join("c.json");
    rdblens()
        .args([
            "report",
            ALL_TYPES,
            "--summary-only",
            "-q",
            "-o",
            c.to_str().unwrap(),
        ])
        .assert()
        .success();
    let out = rdblens()
        .args([
            "merge",
            a.to_str().unwrap(),
            c.to_str().unwrap(),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let merged = json(&out);
    let paths: Vec<&str> = merged["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, [CLEAN, ALL_TYPES]);
}

#[test]
fn keys_of_several_files_get_a_file_column() {
    let out = rdblens()
        .args([
            "keys", CLEAN, ALL_TYPES, "--label", "one", "--label", "two", "--match", "user:1:*",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].ends_with(",slot,key_escaped,file"), "{}", lines[0]);
    assert!(
        lines[1..]
            .iter()
            .all(|l| l.ends_with(",one") || l.ends_with(",two")),
        "{text}"
    );
    assert!(lines[1..].iter().any(|l| l.ends_with(",two")), "{text}");
    // Without labels, the path; one file: no column.
    let out = rdblens()
        .args(["keys", CLEAN, ALL_TYPES, "--format", "jsonl"])
        .output()
        .unwrap();
    let rows: Vec<Value> = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(rows.iter().filter(|r| r["file"] == ALL_TYPES).count(), 227);
    let one = rdblens().args(["keys", ALL_TYPES]).output().unwrap();
    assert!(String::from_utf8(one.stdout)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .ends_with(",key_escaped"));
}
