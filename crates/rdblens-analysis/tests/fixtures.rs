//! The analysis against the fixture oracles: encodings after load, element
//! counts, expiries, per-db totals; thread-count invariance; merges that do
//! not depend on how keys were split.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rdblens_analysis::*;
use rdblens_parser::{Rdb, Scratch, TypeKind};
use serde_json::Value;

fn fixtures() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).into_iter().flatten())
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rdb"))
        .collect();
    out.sort();
    assert!(out.len() >= 40);
    out
}

fn oracle(path: &Path) -> BTreeMap<(u64, Vec<u8>), Value> {
    std::fs::read_to_string(path.with_extension("oracle.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let o: Value = serde_json::from_str(l).unwrap();
            let key = o["key"].as_str().unwrap();
            let key = match o["key_enc"].as_str().unwrap() {
                "hex" => hex::decode(key).unwrap(),
                _ => key.as_bytes().to_vec(),
            };
            ((o["db"].as_u64().unwrap(), key), o)
        })
        .collect()
}

fn meta(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path.with_extension("meta.json")).unwrap()).unwrap()
}

fn aux(rdb: &Rdb<'_>) -> BTreeMap<String, String> {
    rdb.metadata()
        .unwrap()
        .aux
        .iter()
        .map(|(k, v)| {
            (
                String::from_utf8(k.to_vec().unwrap()).unwrap(),
                String::from_utf8(v.to_vec().unwrap()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn encodings_counts_and_expiries_match_the_oracles() {
    let mut checked = 0;
    for path in fixtures() {
        let data = std::fs::read(&path).unwrap();
        let rdb = Rdb::new(&data).unwrap();
        let profile = profile_for(&rdb, &aux(&rdb), &Options::default());
        let oracle = oracle(&path);
        let mut scratch = Scratch::new();
        for entry in rdb.entries() {
            let entry = entry.unwrap();
            let key = entry.key_bytes().unwrap();
            let f = key_facts(&entry, &key, &profile, &mut scratch).unwrap();
            let o = &oracle[&(entry.db, key.to_vec())];
            let ctx = format!(
                "{} db{} {:?}",
                path.display(),
                entry.db,
                String::from_utf8_lossy(&key)
            );
            assert_eq!(f.expiry_ms, o["expire_ms"].as_i64(), "{ctx}");
            if f.kind == TypeKind::Module {
                continue;
            }
            assert_eq!(
                f.encoding.as_str(),
                o["encoding"].as_str().unwrap(),
                "{ctx}: encoding"
            );
            assert_eq!(Some(f.elements), o["count"].as_u64(), "{ctx}: count");
            checked += 1;
        }
    }
    assert!(checked > 6500, "{checked}");
}

fn analyze(path: &Path, threads: usize, batch: usize) -> Summary {
    let data = std::fs::read(path).unwrap();
    let opts = Options {
        threads,
        batch_entries: batch,
        ..Options::default()
    };
    analyze_bytes(&data, &path.display().to_string(), &opts).unwrap()
}

#[test]
fn summary_totals_match_the_meta() {
    for path in fixtures() {
        let s = analyze(&path, 2, 64);
        let m = meta(&path);
        let f = &s.files[0];
        assert_eq!(f.checksum, "valid");
        assert!(f.incomplete.is_none());
        assert_eq!(
            s.keys.totals.keys,
            m["total_keys"].as_u64().unwrap(),
            "{}",
            path.display()
        );
        for (db, c) in &s.keys.databases {
            assert_eq!(Some(c.keys), m["keys_per_db"][db.to_string()].as_u64());
            assert_eq!(
                c.keys_with_expiry,
                m["expires_per_db"][db.to_string()].as_u64().unwrap_or(0)
            );
        }
        assert_eq!(s.keys.damaged_keys, 0);
        let by_type: u64 = s.keys.types.values().map(|c| c.keys).sum();
        assert_eq!(by_type, s.keys.totals.keys);
        let ttl_keys: u64 = s.keys.ttl.buckets.keys.iter().sum();
        assert_eq!(ttl_keys, s.keys.totals.keys);
        assert_eq!(s.keys.expiry.expiring_keys, s.keys.totals.keys_with_expiry);
    }
}

#[test]
fn thread_count_and_batching_do_not_change_the_summary() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb");
    for f in [
        "redis-7.4.5/all-types.rdb",
        "valkey-9.1.2/lru.rdb",
        "redis-5.0.14/lfu.rdb",
    ] {
        let path = dir.join(f);
        let one = analyze(&path, 1, 2048);
        for (threads, batch) in [(2, 7), (3, 1), (4, 64)] {
            assert_eq!(one, analyze(&path, threads, batch), "{f} with {threads} threads");
        }
        let json = serde_json::to_string(&one).unwrap();
        let back: Summary = serde_json::from_str(&json).unwrap();
        assert_eq!(one, back, "{f}: JSON round trip");
    }
}

#[test]
fn merging_partial_summaries_in_any_grouping_gives_the_whole() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb/redis-8.0.6/all-types.rdb");
    let data = std::fs::read(&path).unwrap();
    let rdb = Rdb::new(&data).unwrap();
    let profile = profile_for(&rdb, &aux(&rdb), &Options::default());
    let settings = analyze(&path, 1, 2048).settings;
    let mut parts: Vec<KeyStats> = (0..3).map(|_| KeyStats::new(&settings)).collect();
    let mut whole = KeyStats::new(&settings);
    let mut scratch = Scratch::new();
    for (i, entry) in rdb.entries().enumerate() {
        let entry = entry.unwrap();
        let key = entry.key_bytes().unwrap();
        let f = key_facts(&entry, &key, &profile, &mut scratch).unwrap();
        whole.add(&f);
        parts[(i * 7 + i / 5) % 3].add(&f);
    }
    let [a, b, c]: [KeyStats; 3] = parts.try_into().unwrap();
    let mut left = a.clone();
    left.merge(b.clone());
    left.merge(c.clone());
    let mut bc = b;
    bc.merge(c);
    let mut right = bc;
    right.merge(a);
    assert_eq!(left, whole);
    assert_eq!(right, whole);
}
