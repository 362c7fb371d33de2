//! The analysis against the fixture oracles: encodings after load, element
//! counts, expiries, per-db totals; thread-count invariance; merges that do
//! not depend on how keys were split.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rdblens_engine::*;
use rdblens_parser::{Rdb, Scratch, TypeKind};
use rdblens_summary::*;
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
        let estimator = rdblens_memory::Estimator::new(&profile);
        let oracle = oracle(&path);
        let mut scratch = Scratch::new();
        for entry in rdb.entries() {
            let entry = entry.unwrap();
            let key = entry.key_bytes().unwrap();
            let f = key_facts(&entry, &key, &estimator, &mut scratch).unwrap();
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
        assert_eq!(f.checksum, rdblens_summary::Checksum::Valid);
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
        // Design-rule fixtures: rule hits capped at 100 per rule, many
        // namespaces, sprawl tallies.
        "../rules/expired.rdb",
        "../rules/bigkeys.rdb",
        "../rules/sprawl.rdb",
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

/// Each accumulator fed alone: it holds what the full run holds, every
/// other one stays as a fresh one, and the summary passes its check.
#[test]
fn accumulators_left_out_stay_empty_and_the_rest_are_exact() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb/redis-7.4.5/all-types.rdb");
    let data = std::fs::read(&path).unwrap();
    let run = |accumulators| {
        let opts = Options {
            threads: 2,
            batch_entries: 64,
            accumulators,
            ..Options::default()
        };
        analyze_bytes(&data, "all-types.rdb", &opts).unwrap()
    };
    let full = run(Accumulators::ALL);
    let fresh = KeyStats::new(&full.settings);
    type Flag = fn(&mut Accumulators) -> &mut bool;
    type Same = fn(&KeyStats, &KeyStats) -> bool;
    // Each accumulator: its flag, and whether two statistics hold the same one.
    let table: [(&str, Flag, Same); 9] = [
        ("top", |a| &mut a.top, |x, y| x.top == y.top),
        ("limits", |a| &mut a.limits, |x, y| x.limits == y.limits),
        (
            "key_names",
            |a| &mut a.key_names,
            |x, y| x.key_names == y.key_names,
        ),
        ("prefixes", |a| &mut a.prefixes, |x, y| x.prefixes == y.prefixes),
        ("ttl", |a| &mut a.ttl, |x, y| x.ttl == y.ttl),
        ("expiry", |a| &mut a.expiry, |x, y| x.expiry == y.expiry),
        ("slots", |a| &mut a.slots, |x, y| x.slots == y.slots),
        ("access", |a| &mut a.access, |x, y| x.access == y.access),
        ("rules", |a| &mut a.rules, |x, y| x.rules == y.rules),
    ];
    for (name, flag, _) in table {
        let mut only = Accumulators::NONE;
        *flag(&mut only) = true;
        let part = run(only);
        part.check().unwrap_or_else(|e| panic!("{name}: {e}"));
        let (k, f) = (&part.keys, &full.keys);
        assert_eq!(k.totals, f.totals, "{name}");
        assert_eq!(k.types, f.types, "{name}");
        for (what, _, same) in table {
            if what == name {
                assert!(same(k, f), "{name}: {what} differs from the full run");
            } else {
                assert!(same(k, &fresh), "{name}: {what} was fed");
            }
        }
    }
}

#[test]
fn merging_partial_summaries_in_any_grouping_gives_the_whole() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb/redis-8.0.6/all-types.rdb");
    let data = std::fs::read(&path).unwrap();
    let rdb = Rdb::new(&data).unwrap();
    let profile = profile_for(&rdb, &aux(&rdb), &Options::default());
    let estimator = rdblens_memory::Estimator::new(&profile);
    let settings = analyze(&path, 1, 2048).settings;
    let mut parts: Vec<KeyStats> = (0..3).map(|_| KeyStats::new(&settings)).collect();
    let mut whole = KeyStats::new(&settings);
    let mut scratch = Scratch::new();
    for (i, entry) in rdb.entries().enumerate() {
        let entry = entry.unwrap();
        let key = entry.key_bytes().unwrap();
        let f = key_facts(&entry, &key, &estimator, &mut scratch).unwrap();
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

#[test]
fn the_cache_page_expiry_cluster_is_found() {
    use rdblens_summary::acc::expiry::ClusterRule;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb");
    for f in [
        "redis-7.4.5/all-types.rdb",
        "valkey-9.1.2/all-types.rdb",
        "redis-4.0.14/all-types.rdb",
    ] {
        let s = analyze(&dir.join(f), 2, 16);
        // Every width at once: the 30 session keys an hour apart are no
        // cluster at any of them.
        let clusters = s.keys.expiry_clusters(ClusterRule::default());
        assert_eq!(clusters.len(), 1, "{f}: {clusters:?}");
        let c = &clusters[0];
        // 40 cache:page:N keys share the millisecond 1950000000000.
        assert_eq!(
            (c.start_ms, c.end_ms, c.keys),
            (1_950_000_000_000, 1_950_000_001_000, 40),
            "{f}"
        );
        assert_eq!(c.resolution_ms, 1_000);
        assert_eq!(c.namespaces, vec![("cache:page".to_string(), 40)], "{f}");
        assert_eq!(c.other_keys, 0);
    }
}

fn synthetic<'k>(key: &'k [u8], expiry_ms: Option<i64>) -> KeyFacts<'k> {
    KeyFacts {
        db: 0,
        key,
        kind: TypeKind::String,
        module: None,
        rdb_type: "string",
        encoding: rdblens_memory::Encoding::Embstr,
        elements: 3,
        max_element_len: 3,
        payload_bytes: 3,
        serialized_bytes: 4,
        memory: 56,
        memory_estimated: true,
        compact_memory: None,
        keyspace_overhead: 8,
        bucket_share: 0,
        value_rounding: 0,
        usage_overcount: 0,
        expiry_ms,
        int_value: None,
        idle_seconds: None,
        lfu_freq: None,
        ram_lru: None,
        slot: rdblens_summary::slot::key_slot(key),
        lzf_stored_bytes: 0,
        lzf_uncompressed_bytes: 0,
        limit: None,
        shape: Default::default(),
    }
}

#[test]
fn a_huge_keyspace_stays_bounded_and_exact_where_it_matters() {
    let settings = Settings {
        top: 5,
        separator: b':',
        prefix_depth: 3,
        now_ms: 0,
        expiry_buckets: 1000,
        rules: Default::default(),
        shaping: Default::default(),
    };
    let mut whole = KeyStats::new(&settings);
    let mut parts = [KeyStats::new(&settings), KeyStats::new(&settings)];
    let n = 60_000u64;
    for i in 0..n {
        // Letters, not digits: a second segment that is a name (an id
        // would be counted in `user` alone, crate::namespace).
        let name: String = (0..4)
            .map(|d| char::from(b'a' + (i / 26u64.pow(d) % 26) as u8))
            .collect();
        let key = format!("user:{name}:profile");
        // Expiries spread over 100,000 s: more distinct seconds than the cap.
        let f = synthetic(
            key.as_bytes(),
            Some(1_000_000 + (i as i64 * 7919 % 100_000) * 1000),
        );
        whole.add(&f);
        parts[(i % 2) as usize].add(&f);
        let other = format!("ns{}:x", i % 400);
        let g = synthetic(other.as_bytes(), None);
        whole.add(&g);
        parts[(i % 2) as usize].add(&g);
    }
    let [mut a, b] = parts;
    a.merge(b);
    assert_eq!(a, whole, "split and merged equals whole");
    whole.finish();
    let root = &whole.prefixes.root;
    assert!(root.entries.len() <= 512);
    // "user" is one namespace with exact totals; its 60,000 names are folded.
    // 401 namespaces fit under the root's cap: all exact.
    assert!(!root.is_folded());
    assert_eq!(root.entries.len(), 401);
    let user = root
        .entries
        .iter()
        .find(|(k, _)| k.as_bytes() == b"user")
        .map(|(_, v)| v);
    {
        let user = user.unwrap();
        assert_eq!(user.totals.keys, n);
        let ids = user.children.as_ref().unwrap();
        assert!(ids.entries.len() <= 64 && ids.is_folded());
        let kept: u64 = ids.entries.values().map(|c| c.totals.keys).sum();
        assert_eq!(kept + ids.other.totals.keys, n);
        let est = ids.folded_names_estimate() + ids.entries.len() as u64;
        assert!((30_000..120_000).contains(&est), "distinct estimate {est}");
    }
    let kept: u64 = root.entries.values().map(|c| c.totals.keys).sum();
    assert_eq!(kept, 2 * n);
    // The expiry histogram coarsened instead of growing.
    assert!(
        whole.expiry.cells.blocks() + whole.expiry.cells.heavy_cells() <= 1000
            && whole.expiry.width_ms() > 1000
    );
    assert_eq!(whole.expiry.expiring_keys, n);
}

/// Sections that read no element length count the compact blobs the target
/// keeps as stored by their headers (no walk, no LZF past the header): on
/// every fixture, each figure they read is the one of a run that walks
/// every blob. That counting happened shows in the one figure such a run
/// does not read, the longest elements (never shown by those sections).
#[test]
fn blobs_counted_by_their_header_give_the_walked_figures() {
    let lean = Accumulators {
        ttl: true,
        expiry: true,
        prefixes: true,
        slots: true,
        ..Accumulators::NONE
    };
    assert!(!lean.read_lengths());
    // The same, plus one accumulator that reads lengths: every blob walked.
    let walked = Accumulators { limits: true, ..lean };
    assert!(walked.read_lengths());
    // The writer as target, its allocator build settled in a pass of its
    // own and, as for big dumps, by a sample in the main pass (the sampled
    // keys estimated for both builds); smaller limits (stored blobs
    // converted while loading); older and newer targets (ziplists and
    // listpacks converted, set listpacks and field TTLs new or gone).
    let small: Vec<(String, String)> = [
        "hash-max-listpack-entries",
        "zset-max-listpack-entries",
        "set-max-listpack-entries",
        "set-max-intset-entries",
    ]
    .iter()
    .map(|name| (name.to_string(), "3".to_string()))
    .collect();
    let own_pass = Options::default().sample_evidence_from;
    let targets = [
        (None, vec![], own_pass),
        (None, vec![], 0),
        (None, small, own_pass),
        (Some("redis-6.2"), vec![], own_pass),
        (Some("redis-7.0"), vec![], own_pass),
        (Some("valkey-9.0"), vec![], own_pass),
    ];
    let mut counted_somewhere = 0;
    for (path, (target, config, sample_from)) in fixtures()
        .iter()
        .flat_map(|p| targets.iter().map(move |t| (p, t)))
    {
        let data = std::fs::read(path).unwrap();
        let run = |accumulators| {
            let opts = Options {
                threads: 2,
                batch_entries: 16,
                accumulators,
                profile: target.map(|t| rdblens_memory::Profile::parse_target(t).unwrap()),
                config: config.clone(),
                sample_evidence_from: *sample_from,
                ..Options::default()
            };
            analyze_bytes(&data, "dump.rdb", &opts).map(|s| s.keys)
        };
        let name = format!("{} for {target:?} {config:?} {sample_from}", path.display());
        let (a, b) = match (run(lean), run(walked)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(a), Err(b)) => {
                assert_eq!(a.to_string(), b.to_string(), "{name}");
                continue;
            }
            (a, b) => panic!("{name}: {:?} / {:?}", a.err(), b.err()),
        };
        assert_eq!(a.totals, b.totals, "{name}");
        assert_eq!(a.databases, b.databases, "{name}");
        assert_eq!(a.types, b.types, "{name}");
        assert_eq!(a.encodings, b.encodings, "{name}");
        assert_eq!(a.rdb_types, b.rdb_types, "{name}");
        assert_eq!(a.elements, b.elements, "{name}");
        assert_eq!(a.compression, b.compression, "{name}");
        assert_eq!(a.empty, b.empty, "{name}");
        assert_eq!((a.damaged_keys, &a.damage), (b.damaged_keys, &b.damage), "{name}");
        assert_eq!(a.ttl, b.ttl, "{name}");
        assert_eq!(a.expiry, b.expiry, "{name}");
        assert_eq!(a.prefixes, b.prefixes, "{name}");
        assert_eq!(a.slots, b.slots, "{name}");
        for ((ta, va), (tb, vb)) in a.value_sizes.iter().zip(b.value_sizes.iter()) {
            assert_eq!(
                (ta, &va.memory, &va.length),
                (tb, &vb.memory, &vb.length),
                "{name}"
            );
            if va.largest_element != vb.largest_element {
                counted_somewhere += 1;
            }
        }
    }
    assert!(
        counted_somewhere >= 800,
        "{counted_somewhere} types counted by header"
    );
}
