//! Section `composition`: each top-level namespace's keys by type and
//! encoding checked against the real server's answers (the fixture's
//! oracle: `TYPE`, `OBJECT ENCODING` of every key), and its memory against
//! the per-key records of `rdblens keys`; the table and the summary file.

mod support;

use std::collections::BTreeMap;

use serde_json::Value;
use support::{rdblens, root};

const DUMP: &str = "fixtures/rdb/redis-7.0.15/all-types.rdb";

fn stdout(args: &[&str]) -> String {
    let out = rdblens()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// (namespace or "" for a name without `:`, type, encoding).
type Group = (String, String, String);

fn namespace_of(key: &[u8]) -> String {
    let end = key.iter().position(|&b| b == b':');
    end.map_or(String::new(), |e| String::from_utf8_lossy(&key[..e]).into_owned())
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// Keys per group, as the server that wrote the dump answered.
fn oracle_keys() -> BTreeMap<Group, u64> {
    let text = std::fs::read_to_string(root().join(DUMP.replace(".rdb", ".oracle.jsonl"))).unwrap();
    let mut groups = BTreeMap::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let key = r["key"].as_str().unwrap();
        let key = if r["key_enc"] == "hex" {
            hex(key)
        } else {
            key.as_bytes().to_vec()
        };
        let kind = match r["type"].as_str().unwrap() {
            t @ ("string" | "list" | "set" | "zset" | "hash" | "stream") => t.to_string(),
            _ => "module".to_string(),
        };
        let group = (
            namespace_of(&key),
            kind,
            r["encoding"].as_str().unwrap().to_string(),
        );
        *groups.entry(group).or_insert(0) += 1;
    }
    groups
}

/// Estimated memory per group, from the per-key records.
fn records_memory() -> BTreeMap<Group, u64> {
    let mut groups = BTreeMap::new();
    for line in stdout(&["keys", DUMP, "--format", "jsonl"]).lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        // An escaped name (not UTF-8) keeps its namespace's bytes before `:`.
        let key = r["key"].as_str().unwrap();
        // The records name types as redis-rdb-tools does.
        let kind = match r["type"].as_str().unwrap() {
            "sortedset" => "zset",
            k if k.starts_with("module") => "module",
            k => k,
        };
        let group = (
            namespace_of(key.as_bytes()),
            kind.to_string(),
            r["encoding"].as_str().unwrap().to_string(),
        );
        *groups.entry(group).or_insert(0) += r["size_in_bytes"].as_u64().unwrap();
    }
    groups
}

/// The section's groups: (keys, memory) per group, namespaces past
/// `--top` left out.
fn section(top: &str) -> (Value, BTreeMap<Group, (u64, u64)>) {
    let report: Value = serde_json::from_str(&stdout(&[
        "report",
        DUMP,
        "--section",
        "composition",
        "--top",
        top,
        "--format",
        "json",
    ]))
    .unwrap();
    let c = report["composition"].clone();
    let mut groups = BTreeMap::new();
    let mut add = |namespace: &str, mix: &Value| {
        let mut keys = 0;
        for p in mix["parts"].as_array().unwrap() {
            let group = (
                namespace.to_string(),
                p["type"].as_str().unwrap().to_string(),
                p["encoding"].as_str().unwrap().to_string(),
            );
            let figures = (p["keys"].as_u64().unwrap(), p["memory"].as_u64().unwrap());
            keys += figures.0;
            assert!(groups.insert(group, figures).is_none());
        }
        assert_eq!(mix["keys"].as_u64().unwrap(), keys);
    };
    for n in c["namespaces"].as_array().unwrap() {
        add(n["namespace"]["key"].as_str().unwrap(), n);
    }
    add("", &c["unprefixed"]);
    (c, groups)
}

#[test]
fn every_namespace_by_type_and_encoding_as_the_server_has_it() {
    // --top 1000: every namespace of the fixture listed.
    let (c, groups) = section("1000");
    assert_eq!(
        (c["others"]["keys"].as_u64(), c["folded"].as_bool()),
        (Some(0), Some(false))
    );
    let oracle = oracle_keys();
    let memory = records_memory();
    let keys: BTreeMap<Group, u64> = groups.iter().map(|(g, f)| (g.clone(), f.0)).collect();
    assert_eq!(keys, oracle);
    let section_memory: BTreeMap<Group, u64> = groups.iter().map(|(g, f)| (g.clone(), f.1)).collect();
    assert_eq!(section_memory, memory);
    assert_eq!(keys.values().sum::<u64>(), 218);
    // Biggest namespace first; its parts biggest first.
    let first = &c["namespaces"][0];
    assert_eq!(first["namespace"]["key"], "str");
    let parts = first["parts"].as_array().unwrap();
    assert!(parts
        .windows(2)
        .all(|w| w[0]["memory"].as_u64() >= w[1]["memory"].as_u64()));
}

#[test]
fn namespaces_past_top_are_one_group_and_the_table_names_the_biggest() {
    let (c, groups) = section("3");
    assert_eq!(c["namespaces"].as_array().unwrap().len(), 3);
    let shown: u64 = groups.values().map(|f| f.0).sum();
    assert_eq!(shown + c["others"]["keys"].as_u64().unwrap(), 218);
    let table = stdout(&["report", DUMP, "--section", "composition", "--top", "3"]);
    assert!(table.contains("== Namespace composition =="), "{table}");
    let str_row = table.lines().find(|l| l.starts_with("| str:*")).unwrap();
    assert!(
        str_row.contains("string/raw 99.9%, string/embstr 0.0%, string/int 0.0%"),
        "{str_row}"
    );
    assert!(table.contains("| (other namespaces) |"), "{table}");
}

#[test]
fn the_summary_file_keeps_it_and_merges_it() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("s.json");
    stdout(&[
        "report",
        DUMP,
        "--section",
        "composition",
        "--summary-only",
        "--format",
        "json",
        "-o",
        summary.to_str().unwrap(),
    ]);
    let merged: Value = serde_json::from_str(&stdout(&[
        "merge",
        summary.to_str().unwrap(),
        summary.to_str().unwrap(),
        "--section",
        "composition",
        "--top",
        "1000",
        "--format",
        "json",
    ]))
    .unwrap();
    let (_, once) = section("1000");
    let str_ns = &merged["composition"]["namespaces"][0];
    assert_eq!(str_ns["namespace"]["key"], "str");
    let raw = &str_ns["parts"][0];
    let single = once[&("str".to_string(), "string".to_string(), "raw".to_string())];
    assert_eq!(
        (raw["keys"].as_u64().unwrap(), raw["memory"].as_u64().unwrap()),
        (2 * single.0, 2 * single.1)
    );
}
