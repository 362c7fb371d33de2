//! Planted expiry clusters (one second, one minute, one hour, each from its
//! own mix of namespaces) among 1.2 M spread expiries: each is found at its
//! own resolution with its exact key count and its namespaces, identically
//! for 1 and 2 threads and for the keys split across files whose summaries
//! are shipped as JSON and merged; the accumulator's size does not grow
//! with the number of keys.

use rdblens_engine::*;
use rdblens_summary::acc::expiry::{ClusterRule, ExpiryCluster, ExpiryHistogram};
use rdblens_summary::acc::expiry_sketch::NamespaceSketch;
use rdblens_summary::acc::Accumulate;
use rdblens_summary::*;

const T0: i64 = 2_000_000_040_000; // a whole minute
const DAY: i64 = 86_400_000;
const SECOND: i64 = T0 + 7 * DAY + 12_345_000;
const MINUTE: i64 = T0 + 3 * DAY + 600_000;
const HOUR: i64 = (T0 + 11 * DAY) / 3_600_000 * 3_600_000 + 3_600_000; // a whole hour
const SPREAD: usize = 1_100_000;
const NOW: i64 = 1_900_000_000_000;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// (key, expiry ms): spread over 30 days from 20 namespaces, plus the
/// planted clusters, each from its own namespaces (weights in percent).
fn keyspace() -> Vec<(String, i64)> {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut out = Vec::with_capacity(SPREAD + 150_000);
    let mut id = 0u64;
    let mut key = |rng: &mut Rng, mix: &[(usize, u64)]| {
        let mut r = rng.below(100);
        let ns = mix
            .iter()
            .find(|(_, w)| {
                let hit = r < *w;
                r = r.saturating_sub(*w);
                hit
            })
            .map_or(19, |(n, _)| *n);
        id += 1;
        format!("ns{ns:02}:{id}")
    };
    let any: Vec<(usize, u64)> = (0..20).map(|n| (n, 5)).collect();
    for _ in 0..SPREAD {
        let t = T0 + rng.below(30 * DAY as u64) as i64;
        out.push((key(&mut rng, &any), t));
    }
    for _ in 0..24_000 {
        let t = SECOND + rng.below(1_000) as i64;
        out.push((key(&mut rng, &[(0, 50), (1, 30), (5, 20)]), t));
    }
    for _ in 0..60_000 {
        let t = MINUTE + rng.below(60_000) as i64;
        out.push((key(&mut rng, &[(2, 60), (3, 40)]), t));
    }
    for _ in 0..50_000 {
        let t = HOUR + rng.below(3_600_000) as i64;
        out.push((key(&mut rng, &[(4, 70), (6, 30)]), t));
    }
    // Shuffled: clusters arrive among the rest, as in a hash-ordered dump.
    for i in (1..out.len()).rev() {
        out.swap(i, rng.below(i as u64 + 1) as usize);
    }
    out
}

/// Keys of `keys` expiring in `[from, to)`, in total and of namespace `ns`.
fn truth(keys: &[(String, i64)], from: i64, to: i64, ns: &str) -> (u64, u64) {
    let inside: Vec<&(String, i64)> = keys.iter().filter(|(_, t)| (from..to).contains(t)).collect();
    let of_ns = inside
        .iter()
        .filter(|(k, _)| k.split(':').next() == Some(ns))
        .count();
    (inside.len() as u64, of_ns as u64)
}

fn names() -> Vec<Vec<u8>> {
    (0..20).map(|n| format!("ns{n:02}").into_bytes()).collect()
}

fn histogram(keys: &[(String, i64)]) -> ExpiryHistogram {
    let mut h = ExpiryHistogram::new(b':', 2, 65_536);
    for (k, t) in keys {
        h.add(&KeyFacts::synthetic(k.as_bytes(), Some(*t), 64));
    }
    h.flush();
    h
}

/// The three planted clusters, checked against the keys.
fn check(clusters: &[ExpiryCluster], keys: &[(String, i64)], memory_per_key: Option<u64>) {
    let windows: Vec<(i64, i64)> = clusters.iter().map(|c| (c.start_ms, c.end_ms)).collect();
    assert_eq!(
        windows,
        vec![
            (MINUTE, MINUTE + 60_000),
            (SECOND, SECOND + 1_000),
            (HOUR, HOUR + 3_600_000),
        ],
        "{clusters:#?}"
    );
    for (c, top) in clusters.iter().zip(["ns02", "ns00", "ns04"]) {
        let (keys_in, top_keys) = truth(keys, c.start_ms, c.end_ms, top);
        assert_eq!(c.keys, keys_in, "exact count of {c:?}");
        if let Some(m) = memory_per_key {
            assert_eq!(c.memory, m * keys_in);
        }
        let (name, est) = &c.namespaces[0];
        assert_eq!(name, top, "{c:?}");
        assert!(
            *est >= top_keys && *est <= top_keys + c.namespace_error,
            "{name}: {est} vs {top_keys} +- {}",
            c.namespace_error
        );
        // Namespaces beyond the cluster's mix are the true tail: below the bound.
        assert!(c.namespaces.len() <= 3, "{:?}", c.namespaces);
    }
    assert_eq!(clusters[1].resolution_ms, 1_000);
    assert_eq!(clusters[1].peak_keys_per_second, Some(clusters[1].keys));
}

#[test]
fn planted_clusters_are_found_at_their_own_resolution_for_any_split() {
    let keys = keyspace();
    assert!(keys.len() > 1_000_000);
    let whole = histogram(&keys);
    assert_eq!(whole.width_ms(), 1_000);
    let clusters = rdblens_summary::acc::expiry::detect_clusters(&whole, ClusterRule::default(), &names());
    check(&clusters, &keys, Some(64));

    // Two workers taking keys in turns, merged either way round.
    let (mut a, mut b) = (
        ExpiryHistogram::new(b':', 2, 65_536),
        ExpiryHistogram::new(b':', 2, 65_536),
    );
    for (i, (k, t)) in keys.iter().enumerate() {
        let f = KeyFacts::synthetic(k.as_bytes(), Some(*t), 64);
        if i % 2 == 0 {
            a.add(&f)
        } else {
            b.add(&f)
        }
    }
    let mut ab = a.clone();
    ab.merge(b.clone());
    b.merge(a);
    assert!(ab == whole && b == whole);

    // Three shards shipped as summaries (JSON) and merged.
    let mut merged: Option<ExpiryHistogram> = None;
    for part in keys.chunks(keys.len() / 3 + 1).rev() {
        let h = histogram(part);
        let shipped: ExpiryHistogram = serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
        match &mut merged {
            Some(m) => m.merge(shipped),
            None => merged = Some(shipped),
        }
    }
    let merged = merged.unwrap();
    assert!(merged == whole);
    assert_eq!(
        rdblens_summary::acc::expiry::detect_clusters(&merged, ClusterRule::default(), &names()),
        clusters
    );
}

/// A `REDIS0009` file of string keys with millisecond expiries, checksum disabled.
fn rdb(keys: &[(String, i64)]) -> Vec<u8> {
    let mut data = b"REDIS0009".to_vec();
    for (k, t) in keys {
        data.push(0xfc);
        data.extend_from_slice(&t.to_le_bytes());
        data.push(0); // string
        data.push(k.len() as u8); // 6-bit length
        data.extend_from_slice(k.as_bytes());
        data.push(1);
        data.push(b'v');
    }
    data.push(0xff);
    data.extend_from_slice(&[0; 8]);
    data
}

#[test]
fn threads_and_shards_give_the_same_clusters_through_the_pipeline() {
    let keys = keyspace();
    let opts = |threads| Options {
        threads,
        now_ms: Some(NOW),
        ..Options::default()
    };
    let data = rdb(&keys);
    let one = analyze_bytes(&data, "all.rdb", &opts(1)).unwrap();
    let two = analyze_bytes(&data, "all.rdb", &opts(2)).unwrap();
    assert!(one.keys.expiry == two.keys.expiry);
    let clusters = two.keys.expiry_clusters(ClusterRule::default());
    check(&clusters, &keys, None);
    assert_eq!(one.keys.expiry_clusters(ClusterRule::default()), clusters);

    let mut merged: Option<Summary> = None;
    for (i, part) in keys.chunks(keys.len() / 2 + 1).enumerate() {
        let s = analyze_bytes(&rdb(part), &format!("shard{i}.rdb"), &opts(2)).unwrap();
        let shipped: Summary = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        match &mut merged {
            Some(m) => m.merge(shipped).unwrap(),
            None => merged = Some(shipped),
        }
    }
    let merged = merged.unwrap();
    assert!(merged.keys.expiry == two.keys.expiry);
    assert_eq!(merged.keys.expiry_clusters(ClusterRule::default()), clusters);
}

#[test]
fn memory_does_not_grow_with_the_number_of_keys() {
    // The same day of expiries from 50 thousand and from 2 million keys.
    let size = |n: u64| {
        let mut rng = Rng(7);
        let mut h = ExpiryHistogram::new(b':', 1, 65_536);
        for i in 0..n {
            let key = format!("ns{}:{i}", i % 50);
            h.add(&KeyFacts::synthetic(
                key.as_bytes(),
                Some(T0 + rng.below(DAY as u64) as i64),
                100,
            ));
        }
        h.flush();
        assert_eq!(h.width_ms(), 1_000);
        (h.cells.approx_bytes() + h.namespaces.bytes(), h.cells.blocks())
    };
    let (small, small_blocks) = size(50_000);
    let (large, large_blocks) = size(2_000_000);
    // Every minute of the day has a key either way: 1,440 blocks.
    assert_eq!((small_blocks, large_blocks), (1_440, 1_440));
    assert_eq!(small, large);
    assert_eq!(NamespaceSketch::default().bytes(), 3 * 4 * (1 << 14) * 4);

    // A span too long for the cap: cells widen, blocks stay under the cap.
    let mut rng = Rng(11);
    let mut h = ExpiryHistogram::new(b':', 1, 1_000);
    for i in 0..300_000u64 {
        let key = format!("k:{i}");
        h.add(&KeyFacts::synthetic(
            key.as_bytes(),
            Some(T0 + rng.below(365 * DAY as u64) as i64),
            1,
        ));
    }
    h.flush();
    assert!(h.cells.blocks() + h.cells.heavy_cells() <= 1_000);
    assert_eq!(h.width_ms(), 600_000);
    assert_eq!(h.cells.iter().map(|(_, c)| c.keys).sum::<u64>(), 300_000);
}
