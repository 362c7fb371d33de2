//! Shared helpers for the fixture tests: locating fixtures and reading oracles.
#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;

pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb")
}

/// Every `<server>/<scenario>.rdb` under fixtures/rdb, sorted.
pub fn fixture_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(fixtures_dir()).expect("fixtures/rdb exists") {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "rdb") {
                out.push(f);
            }
        }
    }
    out.sort();
    assert!(
        out.len() >= 40,
        "expected the shipped fixtures, found {}",
        out.len()
    );
    out
}

pub fn oracle(rdb: &std::path::Path) -> Vec<Value> {
    let path = rdb.with_extension("oracle.jsonl");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn meta(rdb: &std::path::Path) -> Value {
    let path = rdb.with_extension("meta.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn oracle_key(o: &Value) -> Vec<u8> {
    let key = o["key"].as_str().unwrap();
    match o["key_enc"].as_str().unwrap() {
        "hex" => hex::decode(key).unwrap(),
        _ => key.as_bytes().to_vec(),
    }
}

pub fn name(path: &std::path::Path) -> String {
    let dir = path.parent().unwrap().file_name().unwrap().to_string_lossy();
    format!("{dir}/{}", path.file_name().unwrap().to_string_lossy())
}
