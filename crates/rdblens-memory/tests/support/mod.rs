//! Runs the estimator over the shipped fixtures and pairs every key with its
//! oracle line (fixtures/rdb/README.md documents the fields). Shared by the
//! fixture test and the `accuracy` example that writes
//! docs/memory-model-accuracy.md.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rdblens_memory::{estimate, Encoding, Family, Profile, ServerVersion};
use rdblens_parser::{Rdb, Scratch};
use serde_json::Value;

pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb")
}

/// Every `<server>/<scenario>.rdb`, sorted.
pub fn fixture_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let dirs = std::fs::read_dir(fixtures_dir()).expect("fixtures/rdb exists");
    for dir in dirs.flatten() {
        let dir = dir.path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).expect("fixture folder").flatten() {
            let f = f.path();
            if f.extension().is_some_and(|e| e == "rdb") {
                out.push(f);
            }
        }
    }
    out.sort();
    out
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn oracle(rdb: &Path) -> Vec<Value> {
    let path = rdb.with_extension("oracle.jsonl");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("oracle line is JSON"))
        .collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex key"))
        .collect()
}

fn oracle_key(o: &Value) -> (u64, Vec<u8>) {
    let key = o["key"].as_str().expect("key");
    let bytes = match o["key_enc"].as_str() {
        Some("hex") => unhex(key),
        _ => key.as_bytes().to_vec(),
    };
    (o["db"].as_u64().expect("db"), bytes)
}

/// The server that produced the fixture, as a profile: family and version
/// from meta.json, limits from its CONFIG GET dump, and the allocator: the
/// Debian folder links the system libjemalloc (quantum 16), every other
/// folder was built from source with the bundled one (quantum 8).
pub fn profile_for(rdb: &Path) -> Profile {
    let meta = read_json(&rdb.with_extension("meta.json"));
    let family = match meta["server"].as_str() {
        Some("valkey") => Family::Valkey,
        _ => Family::Redis,
    };
    let version = ServerVersion::parse(meta["version"].as_str().expect("version")).expect("version parses");
    let folder = folder(rdb);
    let quantum = if folder.ends_with("-debian") { 16 } else { 8 };
    let mut profile = Profile::new(family, version, quantum);
    if let Some(config) = meta["config"].as_object() {
        for (name, value) in config {
            if let Some(v) = value.as_str() {
                profile.limits.set(name, v).expect("fixture config values parse");
            }
        }
    }
    profile
}

pub fn folder(rdb: &Path) -> String {
    rdb.parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub fn scenario(rdb: &Path) -> String {
    rdb.file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// One key: what the oracle says and what the estimator says.
#[derive(Clone, Debug)]
pub struct KeyResult {
    pub db: u64,
    pub key: Vec<u8>,
    /// Oracle TYPE (module keys: the module type name).
    pub kind: String,
    pub is_module: bool,
    pub oracle_encoding: String,
    pub encoding: Encoding,
    pub oracle_memory: Option<u64>,
    pub memory: Option<u64>,
    pub compact_memory: Option<u64>,
    pub keyspace_overhead: u64,
    pub count: Option<u64>,
    pub rdb_type: String,
}

impl KeyResult {
    /// Signed relative error, when both sides have a number.
    pub fn error(&self) -> Option<f64> {
        let (est, mu) = (self.memory?, self.oracle_memory?);
        Some((est as f64 - mu as f64) / mu.max(1) as f64)
    }

    pub fn exact(&self) -> bool {
        matches!((self.memory, self.oracle_memory), (Some(a), Some(b)) if a == b)
    }

    pub fn label(&self) -> String {
        format!("{}:{}", self.db, String::from_utf8_lossy(&self.key))
    }
}

pub struct FixtureResult {
    pub folder: String,
    pub scenario: String,
    pub profile: Profile,
    pub keys: Vec<KeyResult>,
}

const BASIC_TYPES: [&str; 6] = ["string", "list", "set", "zset", "hash", "stream"];

/// Estimates every key of one fixture with the profile of its server.
pub fn run(rdb_path: &Path) -> FixtureResult {
    let profile = profile_for(rdb_path);
    let data = std::fs::read(rdb_path).expect("fixture readable");
    let rdb = Rdb::new(&data).expect("fixture parses");
    let mut by_key: HashMap<(u64, Vec<u8>), Value> = oracle(rdb_path)
        .into_iter()
        .map(|o| (oracle_key(&o), o))
        .collect();
    let mut scratch = Scratch::new();
    let mut keys = Vec::new();
    for entry in rdb.entries() {
        let entry = entry.expect("fixture entry parses");
        let key = entry.key_bytes().expect("key").into_owned();
        let o = by_key
            .remove(&(entry.db, key.clone()))
            .unwrap_or_else(|| panic!("{}: no oracle line for {:?}", rdb_path.display(), key));
        let e = estimate(&entry, &profile, &mut scratch).expect("estimate");
        let kind = o["type"].as_str().unwrap_or("").to_string();
        keys.push(KeyResult {
            db: entry.db,
            key,
            is_module: !BASIC_TYPES.contains(&kind.as_str()),
            kind,
            oracle_encoding: o["encoding"].as_str().unwrap_or("").to_string(),
            encoding: e.encoding,
            oracle_memory: o["memory_usage"].as_u64(),
            memory: e.memory,
            compact_memory: e.compact_memory,
            keyspace_overhead: e.keyspace_overhead,
            count: o["count"].as_u64(),
            rdb_type: o["rdb_type_name"].as_str().unwrap_or("").to_string(),
        });
    }
    assert!(
        by_key.is_empty(),
        "{}: oracle keys missing from the file: {:?}",
        rdb_path.display(),
        by_key.keys().collect::<Vec<_>>()
    );
    FixtureResult {
        folder: folder(rdb_path),
        scenario: scenario(rdb_path),
        profile,
        keys,
    }
}

/// Error statistics of a group of keys.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub keys: usize,
    pub estimated: usize,
    pub exact: usize,
    pub max_abs_error: f64,
    pub oracle_total: u64,
    pub estimate_total: u64,
}

impl Stats {
    pub fn add(&mut self, k: &KeyResult) {
        self.keys += 1;
        if let (Some(est), Some(mu)) = (k.memory, k.oracle_memory) {
            self.estimated += 1;
            self.exact += usize::from(est == mu);
            self.oracle_total += mu;
            self.estimate_total += est;
            self.max_abs_error = self.max_abs_error.max(k.error().unwrap_or(0.0).abs());
        }
    }

    pub fn total_error(&self) -> f64 {
        if self.oracle_total == 0 {
            0.0
        } else {
            (self.estimate_total as f64 - self.oracle_total as f64) / self.oracle_total as f64
        }
    }
}
