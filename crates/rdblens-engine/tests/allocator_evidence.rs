//! The allocator evidence summed inside the main pass over a sample of the
//! keys (how dumps of 64 MiB and more are analysed; lowered here so the
//! fixtures take that path) gives the same figures as the separate pass
//! whenever the two settle on the same build, for any thread count, and
//! never leaves the main pass's provisional guess in the report.

use std::path::PathBuf;

use rdblens_engine::*;
use rdblens_summary::*;

fn analyze(f: &str, threads: usize, sample_evidence_from: usize) -> Summary {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/rdb")
        .join(f);
    let data = std::fs::read(&path).unwrap();
    let opts = Options {
        threads,
        now_ms: Some(1_700_000_000_000),
        sample_evidence_from,
        ..Options::default()
    };
    analyze_bytes(&data, f, &opts).unwrap()
}

#[test]
fn evidence_summed_in_the_main_pass_keeps_every_figure() {
    let mut seen = Vec::new();
    for file in [
        "redis-7.0.15-debian/all-types.rdb",
        "redis-7.0.15/all-types.rdb",
        "redis-7.4.5/lru.rdb",
        "valkey-8.1.1/lfu.rdb",
    ] {
        let separate = analyze(file, 1, usize::MAX);
        let in_pass = analyze(file, 1, 0);
        let in_pass_2 = analyze(file, 2, 0);
        assert!(in_pass == in_pass_2, "{file}: 1 vs 2 threads");
        let (a, b) = (
            separate.files[0].allocator.as_ref().unwrap(),
            in_pass.files[0].allocator.as_ref().unwrap(),
        );
        assert!(
            !b.reason.contains("not summed"),
            "{file}: the guess was reported: {}",
            b.reason
        );
        assert!(
            ["used-mem", "unclear"].contains(&b.basis.as_str()),
            "{file}: {}",
            b.basis
        );
        if a.quantum == b.quantum {
            // Same build: every per-key estimate is the same (estimating a
            // sampled key for both builds changes none of its facts).
            assert!(separate.keys == in_pass.keys, "{file}: key figures differ");
        }
        seen.push((file, a.quantum, b.quantum, b.basis));
    }
    // The fixtures are small: the sample leaves the evidence unclear
    // (the default build), as the whole-file evidence does.
    assert!(seen.iter().all(|(_, a, b, _)| a == b), "{seen:?}");
}

/// Every record of `name` in file order, as (db, key, memory, keyspace
/// overhead), and the file.
type Rows = Vec<(u64, Vec<u8>, u64, u64)>;

fn row(f: &KeyFacts<'_>, _: &Settings) -> (u64, Vec<u8>, u64, u64) {
    (f.db, f.key.to_vec(), f.memory, f.keyspace_overhead)
}

fn separate_pass(data: &[u8], opts: &Options) -> (Rows, FileInfo) {
    let mut rows = Vec::new();
    let info = map_keys_in_order(data, "x.rdb", opts, row, |item| {
        if let KeyItem::Key(r) = item {
            rows.push(r);
        }
        true
    })
    .unwrap();
    (rows, info)
}

/// The rewindable walk as `rdblens keys -o` drives it: on `Again`, the
/// records so far are dropped and the walk is repeated. Also says whether
/// it had to.
fn rewound(data: &[u8], opts: &Options) -> (Rows, FileInfo, bool) {
    let mut again = None;
    let mut repeated = false;
    loop {
        let mut rows = Vec::new();
        let map = |f: &KeyFacts<'_>, s: &Settings, _: &mut Vec<u8>| row(f, s);
        let done = map_keys_in_order_rewindable(data, "x.rdb", opts, again.take(), map, |item, _| {
            if let KeyItem::Key(r) = item {
                rows.push(r);
            }
            true
        })
        .unwrap();
        match done {
            InOrder::Done(info) => return (rows, *info, repeated),
            InOrder::Again(a) => {
                assert!(!repeated, "a walk with the decided build must be Done");
                repeated = true;
                again = Some(a);
            }
        }
    }
}

#[test]
fn keys_rewindable_walk_gives_the_separate_passs_records() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb");
    let mut seen = Vec::new();
    for folder in [
        "redis-7.0.15-debian",
        "redis-7.0.15",
        "redis-7.4.5",
        "valkey-8.1.1",
        "valkey-7.2.7",
    ] {
        for scenario in ["all-types", "lru"] {
            let data = std::fs::read(root.join(folder).join(format!("{scenario}.rdb"))).unwrap();
            for threads in [1, 2] {
                let opts = Options {
                    threads,
                    now_ms: Some(1_700_000_000_000),
                    sample_evidence_from: 0,
                    ..Options::default()
                };
                let (rows, info) = separate_pass(&data, &opts);
                let (rows_in_walk, info_in_walk, repeated) = rewound(&data, &opts);
                assert!(rows == rows_in_walk, "{folder}/{scenario}: records differ");
                assert_eq!(info, info_in_walk, "{folder}/{scenario}");
                assert!(!info_in_walk
                    .allocator
                    .as_ref()
                    .unwrap()
                    .reason
                    .contains("not summed"));
                seen.push((folder, scenario, threads, repeated));
            }
        }
    }
    assert_eq!(seen.len(), 20);
    // On files this small the separate pass never settles the build before
    // its end, so there is nothing for the walk to confirm or overturn.
    assert!(seen.iter().all(|s| !s.3), "{seen:?}");
}

/// A build settled from the first part of the file is confirmed by the
/// evidence the walk sums over every key; when the whole file overturns
/// it, the rewindable walk answers `Again` with what the first walk
/// assumed, and the walk repeated with the whole file's build gives the
/// separate pass's records.
#[test]
fn keys_walk_is_repeated_when_the_whole_file_overturns_an_early_settlement() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb");
    for folder in ["redis-7.0.15-debian", "redis-7.4.5", "valkey-7.2.7"] {
        let data = std::fs::read(root.join(folder).join("all-types.rdb")).unwrap();
        let opts = Options {
            now_ms: Some(1_700_000_000_000),
            sample_evidence_from: 0,
            ..Options::default()
        };
        let (rows, info) = separate_pass(&data, &opts);
        // The whole file leaves the default build (too small to tell).
        let whole = info.allocator.as_ref().unwrap();
        assert_eq!((whole.quantum, whole.basis.as_str()), (8, "unclear"), "{folder}");
        for (settled, repeats) in [(16, true), (8, false)] {
            let early = Options {
                settle_evidence_after: Some((1, settled)),
                ..opts.clone()
            };
            let first =
                map_keys_in_order_rewindable(&data, "x.rdb", &early, None, |f, s, _| row(f, s), |_, _| true)
                    .unwrap();
            match &first {
                InOrder::Again(again) => {
                    assert!(repeats, "{folder}: quantum {settled} overturned");
                    assert_eq!(again.quantum(), 8);
                    let assumed = again.walked().allocator.as_ref().unwrap();
                    assert_eq!(assumed.quantum, 16);
                    assert!(assumed.reason.contains("by a test"), "{}", assumed.reason);
                }
                InOrder::Done(done) => {
                    assert!(!repeats, "{folder}: quantum {settled} confirmed");
                    // Confirmed: the whole file's reason, as the report gives.
                    assert_eq!(done.allocator, info.allocator, "{folder}");
                }
            }
            let (rows_in_walk, info_in_walk, repeated) = rewound(&data, &early);
            assert_eq!(repeated, repeats, "{folder}: quantum {settled}");
            assert!(
                rows == rows_in_walk,
                "{folder}: quantum {settled}: records differ"
            );
            assert_eq!(info, info_in_walk, "{folder}: quantum {settled}");
        }
    }
}

/// Every fact of every record of one rewindable walk, and whether it
/// answered `Again` (the records are kept either way).
fn first_walk(data: &[u8], opts: &Options) -> (Vec<String>, bool) {
    let mut rows = Vec::new();
    let map = |f: &KeyFacts<'_>, _: &Settings, _: &mut Vec<u8>| format!("{f:?}");
    let done = map_keys_in_order_rewindable(data, "x.rdb", opts, None, map, |item, _| {
        if let KeyItem::Key(r) = item {
            rows.push(r);
        }
        true
    })
    .unwrap();
    (rows, matches!(done, InOrder::Again(_)))
}

/// Values the settling pass decoded are not decoded again by the walk
/// that confirms the build: their facts, and the evidence they add, are
/// exactly those a second decoding gives, under either settled build and
/// for any thread count.
#[test]
fn values_decoded_while_settling_give_the_facts_of_a_second_decoding() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb");
    for folder in [
        "redis-7.0.15-debian",
        "redis-7.4.5",
        "valkey-8.1.1",
        "redis-3.2.13",
    ] {
        let data = std::fs::read(root.join(folder).join("all-types.rdb")).unwrap();
        for (settled, threads) in [(8, 1), (16, 1), (16, 2)] {
            // Every key sampled, so every key can be kept.
            let opts = |known_values_from| Options {
                threads,
                now_ms: Some(1_700_000_000_000),
                sample_evidence_from: usize::MAX,
                settle_evidence_after: Some((1, settled)),
                known_values_from,
                ..Options::default()
            };
            // From 0 bytes: every key the settling pass sampled is kept.
            let (kept, again_kept) = first_walk(&data, &opts(0));
            let (decoded, again_decoded) = first_walk(&data, &opts(u64::MAX));
            assert!(decoded.len() > 20, "{folder}");
            assert_eq!(
                again_kept, again_decoded,
                "{folder}: quantum {settled}: the evidence differs"
            );
            assert_eq!(again_kept, settled == 16, "{folder}");
            for (k, d) in kept.iter().zip(&decoded) {
                assert_eq!(k, d, "{folder}: quantum {settled}");
            }
            assert_eq!(kept.len(), decoded.len());
        }
    }
}
