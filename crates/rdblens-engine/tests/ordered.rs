//! `map_keys_in_order`: file order whatever the threads and batching, the
//! same keys as the summary, early stop, damage, and the progress hook.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rdblens_engine::*;
use rdblens_parser::{Rdb, TypeKind};
use rdblens_summary::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/rdb")
        .join(name);
    std::fs::read(path).unwrap()
}

/// (db, key) of every entry, in file order, read sequentially.
fn file_order(data: &[u8]) -> Vec<(u64, Vec<u8>)> {
    Rdb::new(data)
        .unwrap()
        .entries()
        .map(|e| {
            let e = e.unwrap();
            (e.db, e.key_bytes().unwrap().into_owned())
        })
        .collect()
}

fn keys_in_order(data: &[u8], opts: &Options) -> (Vec<(u64, Vec<u8>)>, FileInfo) {
    let mut out = Vec::new();
    let info = map_keys_in_order(
        data,
        "x.rdb",
        opts,
        |f, _| (f.db, f.key.to_vec()),
        |item| {
            match item {
                KeyItem::Key(k) => out.push(k),
                KeyItem::Damaged(d) => panic!("damage: {}", d.message),
            }
            true
        },
    )
    .unwrap();
    (out, info)
}

#[test]
fn file_order_for_any_thread_count_and_batch_size() {
    for name in [
        "redis-7.4.5/all-types.rdb",
        "valkey-9.1.2/all-types.rdb",
        "redis-3.2.13/all-types.rdb",
    ] {
        let data = fixture(name);
        let expected = file_order(&data);
        for (threads, batch) in [(1, 2048), (2, 1), (4, 3), (3, 64)] {
            let opts = Options {
                threads,
                batch_entries: batch,
                ..Options::default()
            };
            let (got, info) = keys_in_order(&data, &opts);
            assert_eq!(got, expected, "{name} threads={threads} batch={batch}");
            assert_eq!(info.keys, expected.len() as u64);
            assert_eq!(info.checksum.as_str(), "valid");
            assert!(info.incomplete.is_none());
        }
    }
}

#[test]
fn facts_match_the_summary_and_the_filter_applies() {
    let data = fixture("redis-7.4.5/all-types.rdb");
    let filter = KeyFilter {
        dbs: vec![0],
        kinds: vec![TypeKind::Hash, TypeKind::ZSet],
        pattern: Some(b"*:*".to_vec()),
        prefix: None,
        ..KeyFilter::default()
    };
    let opts = Options {
        threads: 2,
        batch_entries: 5,
        filter,
        ..Options::default()
    };
    let summary = analyze_bytes(&data, "x.rdb", &opts).unwrap();
    let mut memory = 0;
    let mut keys = 0;
    map_keys_in_order(
        &data,
        "x.rdb",
        &opts,
        |f, settings| {
            assert_eq!(settings.now_ms, summary.settings.now_ms);
            assert!(matches!(f.kind, TypeKind::Hash | TypeKind::ZSet) && f.db == 0);
            f.memory
        },
        |item| {
            if let KeyItem::Key(m) = item {
                memory += m;
                keys += 1;
            }
            true
        },
    )
    .unwrap();
    assert!(keys > 10);
    assert_eq!(keys, summary.keys.totals.keys);
    assert_eq!(memory, summary.keys.totals.memory);
}

#[test]
fn the_sink_can_stop_the_walk() {
    let data = fixture("redis-7.4.5/all-types.rdb");
    let opts = Options {
        threads: 2,
        batch_entries: 1,
        ..Options::default()
    };
    let mut seen = 0;
    map_keys_in_order(
        &data,
        "x.rdb",
        &opts,
        |_, _| (),
        |_| {
            seen += 1;
            seen < 7
        },
    )
    .unwrap();
    assert_eq!(seen, 7);
}

#[test]
fn truncation_is_reported_after_the_keys_before_it() {
    let data = fixture("redis-7.4.5/all-types.rdb");
    let cut = &data[..data.len() / 2];
    let (got, info) = keys_in_order(cut, &Options::default());
    let expected = file_order(&data);
    assert!(!got.is_empty());
    assert_eq!(got[..], expected[..got.len()]);
    let damage = info.incomplete.unwrap();
    assert!(
        damage.message.contains("unexpected end of input"),
        "{}",
        damage.message
    );
    assert!(damage.offset < cut.len() as u64);
    assert!(map_keys_in_order(b"hello world", "x", &Options::default(), |_, _| (), |_| true).is_err());
}

#[test]
fn progress_is_monotonic_and_ends_at_the_file_size() {
    let data = fixture("redis-7.4.5/all-types.rdb");
    let calls = Arc::new(Mutex::new(Vec::new()));
    let sink = calls.clone();
    let opts = Options {
        progress: Some(Progress::new(move |n| sink.lock().unwrap().push(n))),
        ..Options::default()
    };
    analyze_bytes(&data, "x.rdb", &opts).unwrap();
    keys_in_order(&data, &opts);
    let calls = calls.lock().unwrap();
    // One final call per pass (the fixture is smaller than the step).
    assert_eq!(*calls, vec![data.len() as u64, data.len() as u64]);
    assert_eq!(format!("{:?}", opts.progress), "Some(Hook(..))");
}

/// A `REDIS0009` file of `n` string keys with 1 MiB values, checksum disabled.
fn big_file(n: usize) -> Vec<u8> {
    let mut data = b"REDIS0009".to_vec();
    for i in 0..n {
        data.push(0); // string
        let key = format!("big:{i}");
        data.push(key.len() as u8); // 6-bit length
        data.extend_from_slice(key.as_bytes());
        data.push(0x80); // 32-bit length follows, big-endian
        data.extend_from_slice(&(1u32 << 20).to_be_bytes());
        data.extend(std::iter::repeat_n(b'v', 1 << 20));
    }
    data.push(0xff);
    data.extend_from_slice(&[0; 8]);
    data
}

#[test]
fn progress_is_reported_every_few_mib() {
    let data = big_file(20);
    let calls = Arc::new(Mutex::new(Vec::new()));
    let sink = calls.clone();
    let opts = Options {
        progress: Some(Progress::new(move |n| sink.lock().unwrap().push(n))),
        ..Options::default()
    };
    let (keys, info) = keys_in_order(&data, &opts);
    assert_eq!((keys.len(), info.checksum.as_str()), (20, "disabled"));
    let calls = calls.lock().unwrap();
    assert!(calls.len() >= 4, "{calls:?}");
    assert!(calls.windows(2).all(|w| w[0] < w[1]), "{calls:?}");
    // Intermediate calls are a step apart; the final one comes whatever the gap.
    let steps = &calls[..calls.len() - 1];
    assert!(steps.windows(2).all(|w| w[1] - w[0] >= 4 << 20), "{calls:?}");
    assert_eq!(calls.last(), Some(&(data.len() as u64)));
}
