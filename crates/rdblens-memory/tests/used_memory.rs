//! What each key adds to `used_memory` (`Estimate::adds_to_used_memory`)
//! against what deleting it freed on the server that loaded the dump:
//! Debian 12's `redis-server` 7.0.15 (system jemalloc, quantum 16),
//! measured by `benches/dump_oracle.py --freed` (fixtures/used-memory).
//! `MEMORY USAGE` is a formula; these are the allocations: shared integer
//! objects are not freed, streams' radix trees are their nodes, not the
//! rough figure `MEMORY USAGE` gives them, and dict entries are rounded.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use rdblens_memory::{estimate, Family, Profile, ServerVersion};
use rdblens_parser::{Rdb, Scratch, TypeKind};

/// Encodings whose allocations the model derives deterministically.
const DETERMINISTIC: [&str; 7] = [
    "int",
    "embstr",
    "raw",
    "listpack",
    "intset",
    "quicklist",
    "stream",
];

/// Hash tables on the conversion path and skiplists are random (rehash
/// progress, node levels): their sum over the file, within this.
const RANDOM_TOTAL_BAND: f64 = 0.01;

struct Freed {
    encoding: String,
    freed: i64,
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/used-memory")
        .join(name)
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex key"))
        .collect()
}

/// The oracle of `name`: db, hex key, type, encoding, MEMORY USAGE, bytes freed.
fn oracle(name: &str) -> HashMap<(u64, Vec<u8>), Freed> {
    let text = std::fs::read_to_string(fixture(&format!("{name}.oracle.tsv"))).expect("oracle");
    text.lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 6, "oracle line {line:?}");
            let key = (f[0].parse().expect("db"), unhex(f[1]));
            let freed = Freed {
                encoding: f[3].to_string(),
                freed: f[5].parse().expect("freed"),
            };
            (key, freed)
        })
        .collect()
}

/// What checking one fixture found.
#[derive(Default)]
struct Checked {
    exact: BTreeMap<String, u64>,
    shared_ints: u64,
    overcounted_streams: u64,
    overcounted_sets: u64,
}

/// Checks every key of fixture `name` estimated for `profile`: the
/// deterministic encodings exactly, the random ones in total.
fn check(name: &str, profile: &Profile) -> Checked {
    let data = std::fs::read(fixture(&format!("{name}.rdb"))).expect("fixture");
    let mut oracle = oracle(name);
    let rdb = Rdb::new(&data).expect("fixture parses");
    let mut scratch = Scratch::new();
    let mut found = Checked::default();
    let mut failures = Vec::new();
    let (mut random_estimate, mut random_freed) = (0i64, 0i64);
    for entry in rdb.entries() {
        let entry = entry.expect("entry parses");
        let key = entry.key_bytes().expect("key").into_owned();
        let truth = oracle
            .remove(&(entry.db, key.clone()))
            .unwrap_or_else(|| panic!("{name}: no oracle line for {key:?}"));
        let e = estimate(&entry, profile, &mut scratch).expect("estimate");
        assert_eq!(e.encoding.as_str(), truth.encoding, "{name} {key:?}");
        let adds = e.adds_to_used_memory() as i64;
        if e.usage_overcount > 0 {
            match (entry.kind(), truth.encoding.as_str()) {
                (TypeKind::String, _) => found.shared_ints += 1,
                (TypeKind::Stream, _) => found.overcounted_streams += 1,
                (TypeKind::Set, "hashtable") => found.overcounted_sets += 1,
                _ => {}
            }
        }
        if DETERMINISTIC.contains(&truth.encoding.as_str()) {
            if adds == truth.freed {
                *found.exact.entry(truth.encoding).or_default() += 1;
            } else {
                failures.push(format!(
                    "{name} db{} {} ({}): adds {adds}, deleting it freed {}",
                    entry.db,
                    String::from_utf8_lossy(&key),
                    truth.encoding,
                    truth.freed
                ));
            }
        } else {
            random_estimate += adds;
            random_freed += truth.freed;
        }
    }
    assert!(oracle.is_empty(), "{name}: oracle keys missing from the file");
    assert!(
        failures.is_empty(),
        "{} keys off:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let off = (random_estimate - random_freed) as f64 / random_freed as f64;
    assert!(
        off.abs() <= RANDOM_TOTAL_BAND,
        "{name}: hash tables and skiplists: {random_estimate} against {random_freed} freed ({:+.3} %)",
        100.0 * off
    );
    found
}

#[test]
fn redis_7_0_debian_each_key_adds_what_deleting_it_frees() {
    let profile = Profile::new(Family::Redis, ServerVersion::new(7, 0, 15), 16);
    let found = check("redis-7.0.15-debian", &profile);
    // Every deterministic encoding is in the fixture, and both corrections
    // to MEMORY USAGE are exercised: integers of 0-9999 share one object,
    // and the streams (consumer groups, PELs) count their raxes roughly.
    for encoding in DETERMINISTIC {
        let n = found.exact.get(encoding).copied().unwrap_or(0);
        assert!(n > 0, "no {encoding} key: {:?}", found.exact);
    }
    assert!(found.shared_ints > 100, "{} shared integers", found.shared_ints);
    assert_eq!(found.overcounted_streams, 4);
}

#[test]
fn valkey_7_2_each_key_adds_what_deleting_it_frees() {
    // Bundled jemalloc (quantum 8). From 7.2 a set's members sit in the
    // table's buckets, where MEMORY USAGE counts a 24-byte entry each.
    let profile = Profile::new(Family::Valkey, ServerVersion::new(7, 2, 7), 8);
    let found = check("valkey-7.2.7", &profile);
    assert!(
        found.exact.get("listpack").copied().unwrap_or(0) > 1000,
        "{:?}",
        found.exact
    );
    assert_eq!(found.overcounted_sets, 24);
}
