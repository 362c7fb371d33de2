//! Every shipped fixture against its oracle, with the profile of the server
//! that wrote it: the encoding of every key, `MEMORY USAGE` byte for byte
//! where the model is deterministic, within bands where the server itself is
//! random, and the file total. Error figures are computed here from the
//! oracle; nothing is compared with remembered numbers.

mod support;

use std::collections::BTreeMap;

use rdblens_memory::{estimate, Encoding, Family, Profile, ServerVersion};
use rdblens_parser::{Rdb, Scratch};
use support::{KeyResult, Stats};

/// Encodings whose size the model derives deterministically.
const DETERMINISTIC: [&str; 10] = [
    "int",
    "embstr",
    "raw",
    "listpack",
    "listpackex",
    "ziplist",
    "intset",
    "quicklist",
    "stream",
    "unknown",
];

/// Hash tables depend on bucket collisions (Valkey 8.1+) and rehash
/// progress (tables re-expanded while loading): memory-model.md §5.2.
const HASHTABLE_BAND: f64 = 0.05;
/// Skiplist node levels are random (p = 1/4). Over ten or more members
/// they average out; a two-member set can be one level-3 node off.
const SKIPLIST_BAND: f64 = 0.05;
const SMALL_SKIPLIST_BAND: f64 = 0.10;
const SMALL_SKIPLIST: u64 = 10;
/// The sum over every estimated key of a file.
const TOTAL_BAND: f64 = 0.01;

/// Why a key's size was not compared: the server wrote no `MEMORY USAGE`
/// figure (before 4.0 it has no such command), or the model gave none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Unchecked {
    NoMemoryUsage,
    NoEstimate,
}

/// Checks one key; returns why its size could not be compared, if it could not.
fn check_key(
    fixture: &str,
    profile: &Profile,
    k: &KeyResult,
    failures: &mut Vec<String>,
) -> Option<Unchecked> {
    let ctx = format!(
        "{fixture} {} ({}/{}, {})",
        k.label(),
        k.kind,
        k.oracle_encoding,
        k.rdb_type
    );
    // OBJECT ENCODING of module values is "raw", which the estimator reports too.
    if k.encoding.as_str() != k.oracle_encoding {
        failures.push(format!(
            "{ctx}: encoding {} (oracle {})",
            k.encoding, k.oracle_encoding
        ));
    }
    if k.is_module {
        if k.memory.is_some() {
            failures.push(format!("{ctx}: module values have no estimate"));
        }
        return None;
    }
    let Some(est) = k.memory else {
        return Some(Unchecked::NoEstimate);
    };
    let Some(mu) = k.oracle_memory else {
        return Some(Unchecked::NoMemoryUsage);
    };
    let err = k.error().unwrap_or(0.0);
    let band = match k.oracle_encoding.as_str() {
        e if DETERMINISTIC.contains(&e) => 0.0,
        "hashtable" => HASHTABLE_BAND,
        "skiplist" if k.count.unwrap_or(0) < SMALL_SKIPLIST => SMALL_SKIPLIST_BAND,
        "skiplist" => SKIPLIST_BAND,
        other => {
            failures.push(format!("{ctx}: unexpected oracle encoding {other}"));
            return None;
        }
    };
    let ok = if band == 0.0 { est == mu } else { err.abs() <= band };
    if !ok {
        failures.push(format!(
            "{ctx}: estimate {est}, MEMORY USAGE {mu} ({:+.2}%, band {:.0}%)",
            100.0 * err,
            100.0 * band
        ));
    }
    // The compact alternative of a table or skiplist is what the encoding
    // limits exist for: it is smaller. Before 7.2 a set of strings has no
    // compact encoding at all.
    let no_string_set_listpack = k.kind == "set" && profile.version < ServerVersion::new(7, 2, 0);
    if matches!(k.encoding, Encoding::Hashtable | Encoding::Skiplist) {
        match k.compact_memory {
            Some(c) if c < est => {}
            None if no_string_set_listpack => {}
            other => failures.push(format!("{ctx}: compact alternative {other:?} vs {est}")),
        }
    } else if k.compact_memory.is_some() && k.encoding.is_compact() {
        failures.push(format!("{ctx}: compact value with a compact alternative"));
    }
    None
}

#[test]
fn every_fixture_matches_its_oracle() {
    let files = support::fixture_files();
    assert!(
        files.len() >= 40,
        "expected the shipped fixtures, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    let mut with_memory = 0;
    let mut unchecked: BTreeMap<(String, Unchecked), usize> = BTreeMap::new();
    for file in &files {
        let r = support::run(file);
        let fixture = format!("{}/{}", r.folder, r.scenario);
        let mut stats = Stats::default();
        for k in &r.keys {
            if let Some(why) = check_key(&fixture, &r.profile, k, &mut failures) {
                *unchecked.entry((fixture.clone(), why)).or_default() += 1;
            }
            if !k.is_module {
                stats.add(k);
            }
        }
        if stats.estimated > 0 {
            with_memory += 1;
            let total = stats.total_error();
            eprintln!(
                "{fixture:32} {:>3} keys, {:>3} estimated, {:>3} exact, max |err| {:.2}%, total {:+.3}%",
                stats.keys,
                stats.estimated,
                stats.exact,
                100.0 * stats.max_abs_error,
                100.0 * total
            );
            if total.abs() > TOTAL_BAND {
                failures.push(format!("{fixture}: total off by {:+.3}%", 100.0 * total));
            }
        }
    }
    // Every fixture from 4.0 on carries MEMORY USAGE (non-empty ones only).
    assert!(
        with_memory >= 30,
        "only {with_memory} fixtures had memory figures"
    );
    // Redis 3.2 has no MEMORY USAGE: its dump's 202 keys are the only ones
    // not compared. Every other key that is not a module value has an
    // estimate and an oracle figure.
    let expected = BTreeMap::from([(
        ("redis-3.2.13/all-types".to_string(), Unchecked::NoMemoryUsage),
        202,
    )]);
    assert_eq!(unchecked, expected, "keys whose size was not compared");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The profile derived from a file's AUX fields is the server that wrote it.
#[test]
fn aux_fields_name_the_writer() {
    for file in support::fixture_files() {
        let data = std::fs::read(&file).expect("fixture");
        let rdb = Rdb::new(&data).expect("parses");
        let meta = rdb.metadata().expect("metadata");
        let aux = |name: &str| {
            meta.aux_value(name)
                .and_then(|v| v.to_vec().ok())
                .map(|v| String::from_utf8_lossy(&v).into_owned())
        };
        let redis_ver = aux("redis-ver");
        let valkey_ver = aux("valkey-ver");
        let p = Profile::from_aux(
            redis_ver.as_deref(),
            valkey_ver.as_deref(),
            rdb.version(),
            rdb.dialect(),
        );
        let expected = support::profile_for(&file);
        assert_eq!(
            (p.family, p.version),
            (expected.family, expected.version),
            "{}",
            file.display()
        );
    }
}

/// Any file against any target: no panics, an encoding for every key, and
/// figures in the same order of magnitude as the writer's own.
#[test]
fn every_fixture_against_every_target() {
    let mut targets: Vec<Profile> = [
        "redis-2.8",
        "redis-3.0",
        "redis-3.2",
        "redis-4.0",
        "redis-5.0",
        "redis-6.0",
        "redis-6.2",
        "redis-7.0",
        "redis-7.2",
        "redis-7.4",
        "redis-8.0",
        "redis-8.2",
        "redis-8.4",
        "redis-8.8",
        "valkey-7.2",
        "valkey-8.0",
        "valkey-8.1",
        "valkey-9.0",
        "valkey-9.1",
    ]
    .iter()
    .map(|t| Profile::parse_target(t).expect("target"))
    .collect();
    let mut q16_cluster = Profile::new(Family::Redis, ServerVersion::new(7, 0, 15), 16);
    q16_cluster.cluster = true;
    targets.push(q16_cluster);
    let mut tiny = Profile::new(Family::Redis, ServerVersion::new(7, 2, 4), 8);
    for (name, value) in [
        ("hash-max-listpack-entries", "2"),
        ("zset-max-listpack-entries", "1"),
        ("set-max-intset-entries", "1"),
        ("list-max-listpack-size", "2"),
    ] {
        tiny.limits.set(name, value).expect("limit");
    }
    targets.push(tiny);

    let mut scratch = Scratch::new();
    for file in support::fixture_files() {
        let data = std::fs::read(&file).expect("fixture");
        let rdb = Rdb::new(&data).expect("parses");
        for entry in rdb.entries() {
            let entry = entry.expect("entry");
            let own = estimate(&entry, &support::profile_for(&file), &mut scratch).expect("estimate");
            for target in &targets {
                let e = estimate(&entry, target, &mut scratch).expect("estimate");
                assert_eq!(e.memory.is_some(), own.memory.is_some(), "{}", target.name());
                if let (Some(m), Some(o)) = (e.memory, own.memory) {
                    // Across versions and limits the same data stays within
                    // a small factor (encodings can change, so not closer).
                    assert!(
                        m > 0 && m <= o.saturating_mul(20) + 4096,
                        "{} {m} vs {o}",
                        target.name()
                    );
                }
                assert!(e.keyspace_overhead > 0);
            }
        }
    }
}

/// A target with `list-compress-depth` > 0 holds interior quicklist nodes as
/// LZF; nodes the file stored compressed have that size (not validated
/// against a server: the fixture servers all ran with depth 0).
#[test]
fn compress_depth_shrinks_interior_nodes() {
    let file = support::fixtures_dir().join("redis-7.2.4/all-types.rdb");
    let data = std::fs::read(&file).expect("fixture");
    let rdb = Rdb::new(&data).expect("parses");
    let plain = support::profile_for(&file);
    let mut deep = plain.clone();
    deep.limits.set("list-compress-depth", "1").expect("limit");
    let mut scratch = Scratch::new();
    let entry = rdb
        .entries()
        .map(|e| e.expect("entry"))
        .find(|e| e.key_bytes().is_ok_and(|k| k.as_ref() == b"list:compressed"))
        .expect("list:compressed");
    let flat = estimate(&entry, &plain, &mut scratch).expect("estimate");
    let packed = estimate(&entry, &deep, &mut scratch).expect("estimate");
    let (flat, packed) = (flat.memory.expect("memory"), packed.memory.expect("memory"));
    // 25 nodes of ~8 KiB text that LZF shrinks about tenfold; the two end
    // nodes stay plain.
    assert!(packed < flat / 4, "{packed} vs {flat}");
    assert!(packed > 2 * 8192, "{packed}");
}

/// The expected-accuracy statement of the report names exactly the fixture
/// folders this test checks: a line is "verified" only with a folder here.
#[test]
fn accuracy_statements_name_the_fixture_folders() {
    let mut folders: Vec<String> = support::fixture_files()
        .iter()
        .map(|f| support::folder(f))
        .collect();
    folders.sort();
    folders.dedup();
    let mut named: Vec<String> = rdblens_memory::verified_fixtures().map(String::from).collect();
    named.sort();
    assert_eq!(named, folders);
    for file in support::fixture_files() {
        let accuracy = rdblens_memory::Accuracy::of(&support::profile_for(&file));
        assert!(
            accuracy.fixtures.contains(&support::folder(&file).as_str()),
            "{}: {:?}",
            file.display(),
            accuracy
        );
    }
}
