//! Summaries of several files, made apart (on other hosts: serialized and
//! read back) and merged, equal the summaries merged in one process; each
//! file keeps its own per-shard figures.

use std::path::PathBuf;

use rdblens_engine::*;
use rdblens_summary::*;

fn analyze(f: &str, opts: &Options) -> Summary {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/rdb")
        .join(f);
    let data = std::fs::read(&path).unwrap();
    analyze_bytes(&data, f, opts).unwrap()
}

const FILES: [&str; 3] = [
    "redis-7.4.5/all-types.rdb",
    "valkey-9.1.2/lru.rdb",
    "redis-5.0.14/lfu.rdb",
];

#[test]
fn merging_serialized_summaries_is_exact() {
    let opts = Options {
        threads: 2,
        top: 7,
        ..Options::default()
    };
    let parts: Vec<Summary> = FILES.iter().map(|f| analyze(f, &opts)).collect();
    // In one process.
    let mut direct = parts[0].clone();
    for p in &parts[1..] {
        direct.merge(p.clone()).unwrap();
    }
    // Through JSON, as summary files from other hosts are.
    let mut shipped: Summary = serde_json::from_str(&serde_json::to_string(&parts[0]).unwrap()).unwrap();
    for p in &parts[1..] {
        let back: Summary = serde_json::from_str(&serde_json::to_string(p).unwrap()).unwrap();
        shipped.merge(back).unwrap();
    }
    assert_eq!(direct, shipped);
    // And the merged summary round-trips too (merging in steps).
    let again: Summary = serde_json::from_str(&serde_json::to_string(&direct).unwrap()).unwrap();
    assert_eq!(direct, again);

    assert_eq!(direct.files.len(), 3);
    for (file, part) in direct.files.iter().zip(&parts) {
        let shard = file.shard.as_ref().unwrap();
        assert_eq!(shard.totals, part.keys.totals);
        assert_eq!(
            shard.biggest.as_ref(),
            part.keys.top.by_memory.keys.first().map(|r| &**r)
        );
        assert_eq!(
            shard.slots_used(),
            part.keys.slots.counts().iter().filter(|c| c.keys > 0).count() as u64
        );
    }
    let sum: u64 = direct
        .files
        .iter()
        .map(|f| f.shard.as_ref().unwrap().totals.keys)
        .sum();
    assert_eq!(sum, direct.keys.totals.keys);
}

#[test]
fn settings_that_differ_are_named() {
    let a = analyze(FILES[0], &Options::default());
    let b = analyze(
        FILES[1],
        &Options {
            top: 3,
            separator: b'_',
            prefix_depth: 3,
            ..Options::default()
        },
    );
    let texts: Vec<String> = a
        .settings
        .differences(&b.settings)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        texts,
        ["--top 20 vs 3", "--separator ':' vs '_'", "--depth 2 vs 3"]
    );
    let err = a.clone().merge(b).unwrap_err().to_string();
    assert!(
        err.starts_with("summaries were made with different settings: --top 20 vs 3;"),
        "{err}"
    );
    // The reference time is each file's own.
    let c = analyze(FILES[1], &Options::default());
    assert_ne!(a.settings.now_ms, c.settings.now_ms);
    assert!(a.settings.differences(&c.settings).is_empty());
}

/// The same key names in several dumps (the fixtures of two servers hold
/// the same keys with other sizes; a dump given twice): any grouping of the
/// merges gives the same summary, as the CLI merges files as they finish.
#[test]
fn merging_is_associative_with_the_same_keys_in_several_files() {
    let opts = Options {
        threads: 1,
        top: 5,
        ..Options::default()
    };
    let a = analyze("redis-7.4.5/all-types.rdb", &opts);
    let b = analyze("valkey-9.1.2/all-types.rdb", &opts);
    let c = analyze("redis-7.2.4/all-types.rdb", &opts);
    let merged = |x: &Summary, y: &Summary| {
        let mut m = x.clone();
        m.merge(y.clone()).unwrap();
        m
    };
    let left = merged(&merged(&merged(&a, &b), &c), &a);
    let right = merged(&a, &merged(&b, &merged(&c, &a)));
    let middle = merged(&merged(&a, &merged(&b, &c)), &a);
    // (assert!, not assert_eq!: the debug form of a summary is huge.)
    assert!(left == right, "left and right folds differ");
    assert!(left == middle, "left fold and middle grouping differ");
    // The key lists are commutative too (the order of the files and the
    // first file's reference time are not).
    let swapped = merged(&merged(&merged(&c, &a), &a), &b);
    assert!(left.keys.top == swapped.keys.top, "top lists");
    assert!(left.keys.limits == swapped.keys.limits, "limit examples");
    assert!(left.keys.key_names == swapped.keys.key_names, "key name examples");
    assert!(
        left.keys.access == swapped.keys.access,
        "coldest and hottest keys"
    );
}

/// A long top list (`--top` above the size where kept keys are inserted in
/// order, so admitted keys are buffered and sorted in bulk) holds exactly
/// what the in-order insertion holds, at any thread count.
#[test]
fn long_top_lists_equal_short_ones_extended() {
    let file = "redis-7.4.5/all-types.rdb";
    let short = analyze(
        file,
        &Options {
            threads: 1,
            top: 200,
            ..Options::default()
        },
    );
    for threads in [1, 2] {
        let long = analyze(
            file,
            &Options {
                threads,
                top: 5000,
                ..Options::default()
            },
        );
        let (s, l) = (&short.keys.top, &long.keys.top);
        // Every key of the fixture is in the long list.
        assert_eq!(l.by_memory.keys.len() as u64, long.keys.totals.keys);
        for (a, b) in [
            (&s.by_memory, &l.by_memory),
            (&s.by_serialized, &l.by_serialized),
            (&s.by_elements, &l.by_elements),
        ] {
            assert!(a.keys.len() == 200.min(b.keys.len()));
            assert!(a.keys[..] == b.keys[..a.keys.len()], "threads {threads}");
        }
        for (t, lists) in &s.per_type {
            let theirs = l.per_type.get(t).expect("the same types in both"); // ok: integration test
            for (a, b) in lists.iter().zip(theirs) {
                assert!(a.keys[..] == b.keys[..a.keys.len()], "{t}, threads {threads}");
            }
        }
    }
}
