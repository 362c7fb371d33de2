//! Absolute expiry times as a histogram whose resolution adapts to the data:
//! 1 s buckets while the distinct buckets fit in `cap`, else coarser steps.
//! The final resolution depends only on the set of expiries, never on the
//! order of arrival or merging, so results are identical for any thread count.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::bounded::{stable_hash, Mergeable};
pub use super::expiry_ns::ExpiryBucket;
use super::expiry_ns::{compact, Names, Namespace, PER_BUCKET};
use super::Accumulate;
use crate::facts::KeyFacts;
use crate::keyname::KeyName;
use crate::keyshape::KeyShape;

/// Bucket widths tried in turn, in ms.
pub const RESOLUTIONS_MS: [i64; 8] = [
    1_000,
    10_000,
    60_000,
    600_000,
    3_600_000,
    21_600_000,
    86_400_000,
    604_800_000,
];

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeysMemory {
    pub keys: u64,
    pub memory: u64,
}

impl Mergeable for KeysMemory {
    fn merge_from(&mut self, o: &Self) {
        self.keys += o.keys;
        self.memory += o.memory;
    }
}

#[derive(Clone, Debug)]
pub struct ExpiryHistogram {
    pub separator: u8,
    pub cap: usize,
    /// Index into [`RESOLUTIONS_MS`].
    pub resolution: usize,
    /// Bucket start (unix ms, a multiple of the resolution) -> content.
    /// Complete only after [`Self::flush`] (which `KeyStats::finish` and
    /// every merge call): see `pending`.
    pub buckets: BTreeMap<i64, ExpiryBucket>,
    /// The namespace names the buckets (and `pending`) refer to.
    pub names: Names,
    pub expiring_keys: u64,
    pub expiring_memory: u64,
    /// Expiring keys not yet in their buckets. Every key lands in a random
    /// one of up to `cap` (100,000) buckets, some 10 MB: one update per key
    /// was a cache miss per key, 11% of a whole report, in a hash map or a
    /// B-tree alike. Sorted by time and applied [`PENDING`] at a time, the
    /// updates walk the B-tree in order, one miss per leaf rather than per
    /// key. Bucket contents do not depend on the order keys arrive in.
    pending: Vec<Pending>,
}

/// Expiring keys buffered before they go into their buckets (1.5 MiB).
const PENDING: usize = 1 << 16;

#[derive(Clone, Copy, Debug)]
struct Pending {
    expiry_ms: i64,
    memory: u64,
    /// Interned namespace.
    ns: u32,
}

impl ExpiryHistogram {
    pub fn new(separator: u8, cap: usize) -> Self {
        ExpiryHistogram {
            separator,
            cap: cap.max(16),
            resolution: 0,
            buckets: BTreeMap::new(),
            names: Names::default(),
            expiring_keys: 0,
            expiring_memory: 0,
            pending: Vec::new(),
        }
    }

    pub fn width_ms(&self) -> i64 {
        RESOLUTIONS_MS[self.resolution]
    }

    /// The namespaces kept in bucket `b` (name, keys), smallest hash first.
    pub fn namespaces<'s>(&'s self, b: &'s ExpiryBucket) -> impl Iterator<Item = (&'s [u8], u64)> + 's {
        b.kept().map(|(id, keys)| (self.names.name(id), keys))
    }

    /// Whether every key added is in its bucket (readers need this).
    pub fn is_flushed(&self) -> bool {
        self.pending.is_empty()
    }

    /// Puts the pending keys into their buckets, in time order.
    pub fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_unstable_by_key(|p| p.expiry_ms);
        let mut i = 0;
        while i < pending.len() {
            let width = self.width_ms();
            // Expiries come from the file: any i64, even i64::MIN.
            let start_of = |t: i64| t.div_euclid(width).saturating_mul(width);
            let start = start_of(pending[i].expiry_ms);
            let b = self.buckets.entry(start).or_default();
            // Starts rise with the expiry: a bucket's keys are one run.
            while let Some(p) = pending.get(i).filter(|p| start_of(p.expiry_ms) == start) {
                b.keys += 1;
                b.memory += p.memory;
                b.add_namespace(&mut self.names, Namespace::Id(p.ns), 1);
                i += 1;
            }
            self.coarsen_to_cap();
        }
        pending.clear();
        // The buffer is kept for the next keys.
        self.pending = pending;
        self.compact_names();
    }

    fn coarsen_to(&mut self, resolution: usize) {
        if resolution <= self.resolution {
            return;
        }
        self.resolution = resolution;
        let width = self.width_ms();
        let old = std::mem::take(&mut self.buckets);
        for (start, b) in old {
            self.buckets
                .entry(start.div_euclid(width).saturating_mul(width))
                .or_default()
                .merge_from(&mut self.names, &b, None);
        }
    }

    fn fit(&mut self) {
        self.coarsen_to_cap();
        self.compact_names();
    }

    /// Coarsens until the buckets fit the cap (or the widest resolution).
    fn coarsen_to_cap(&mut self) {
        while self.buckets.len() > self.cap && self.resolution + 1 < RESOLUTIONS_MS.len() {
            self.coarsen_to(self.resolution + 1);
        }
    }

    /// Drops names no bucket keeps any more (bounded by the buckets'
    /// slots). Only with nothing pending: pending keys hold name ids.
    fn compact_names(&mut self) {
        debug_assert!(self.pending.is_empty());
        if self.names.len() > 2 * PER_BUCKET * self.buckets.len() + 1024 {
            let (fresh, map) = compact(&self.names, self.buckets.values());
            for b in self.buckets.values_mut() {
                b.remap(&map);
            }
            self.names = fresh;
        }
    }

    /// The buckets starting inside `range`, in time order.
    pub fn buckets_in(&self, range: Range<i64>) -> Vec<(i64, &ExpiryBucket)> {
        debug_assert!(self.is_flushed());
        if range.is_empty() {
            return Vec::new();
        }
        self.buckets.range(range).map(|(&s, b)| (s, b)).collect()
    }

    /// Re-buckets at `width_ms` (a multiple of the stored resolution) for display.
    pub fn rebucket(&self, width_ms: i64) -> BTreeMap<i64, KeysMemory> {
        debug_assert!(self.is_flushed());
        let width = width_ms.max(self.width_ms());
        let mut out: BTreeMap<i64, KeysMemory> = BTreeMap::new();
        for (&start, b) in &self.buckets {
            let e = out
                .entry(start.div_euclid(width).saturating_mul(width))
                .or_default();
            e.keys += b.keys;
            e.memory += b.memory;
        }
        out
    }

    /// [`Accumulate::add`] for a key whose shape is known.
    pub fn add_shaped(&mut self, f: &KeyFacts<'_>, shape: &KeyShape) {
        let Some(t) = f.expiry_ms else { return };
        self.expiring_keys += 1;
        self.expiring_memory += f.memory;
        let name = shape.namespace(f.key);
        let ns = match self.names.get(name) {
            Some(id) => id,
            None => self.names.intern(name, stable_hash(name)),
        };
        self.pending.push(Pending {
            expiry_ms: t,
            memory: f.memory,
            ns,
        });
        if self.pending.len() >= PENDING {
            self.flush();
        }
    }
}

impl Accumulate for ExpiryHistogram {
    fn add(&mut self, f: &KeyFacts<'_>) {
        if f.expiry_ms.is_some() {
            self.add_shaped(f, &KeyShape::of(f.key, self.separator))
        }
    }

    fn merge(&mut self, mut other: Self) {
        self.flush();
        other.flush();
        let r = self.resolution.max(other.resolution);
        self.coarsen_to(r);
        other.coarsen_to(r);
        self.expiring_keys += other.expiring_keys;
        self.expiring_memory += other.expiring_memory;
        for (start, b) in &other.buckets {
            self.buckets
                .entry(*start)
                .or_default()
                .merge_from(&mut self.names, b, Some(&other.names));
        }
        self.fit();
    }
}

/// The serialized form: buckets in time order, namespaces by name.
#[derive(Serialize, Deserialize, PartialEq)]
struct HistogramRepr {
    separator: u8,
    cap: usize,
    resolution: usize,
    buckets: BTreeMap<i64, BucketRepr>,
    expiring_keys: u64,
    expiring_memory: u64,
}

#[derive(Serialize, Deserialize, PartialEq)]
struct BucketRepr {
    keys: u64,
    memory: u64,
    /// Kept namespaces and their keys, smallest hash first.
    namespaces: Vec<(KeyName, u64)>,
    other_keys: u64,
    folded: bool,
}

impl ExpiryHistogram {
    fn repr(&self) -> HistogramRepr {
        if !self.is_flushed() {
            let mut flushed = self.clone();
            flushed.flush();
            return flushed.repr();
        }
        HistogramRepr {
            separator: self.separator,
            cap: self.cap,
            resolution: self.resolution,
            buckets: self
                .buckets
                .iter()
                .map(|(&start, b)| {
                    let repr = BucketRepr {
                        keys: b.keys,
                        memory: b.memory,
                        namespaces: self.namespaces(b).map(|(n, k)| (KeyName::new(n), k)).collect(),
                        other_keys: b.other_keys,
                        folded: b.folded,
                    };
                    (start, repr)
                })
                .collect(),
            expiring_keys: self.expiring_keys,
            expiring_memory: self.expiring_memory,
        }
    }
}

// Equal content, whatever the name ids.
impl PartialEq for ExpiryHistogram {
    fn eq(&self, o: &Self) -> bool {
        self.repr() == o.repr()
    }
}

impl Serialize for ExpiryHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.repr().serialize(s)
    }
}

impl<'de> Deserialize<'de> for ExpiryHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = HistogramRepr::deserialize(d)?;
        let mut h = ExpiryHistogram::new(r.separator, r.cap);
        h.resolution = r.resolution.min(RESOLUTIONS_MS.len() - 1);
        h.expiring_keys = r.expiring_keys;
        h.expiring_memory = r.expiring_memory;
        for (start, br) in r.buckets {
            let b = h.buckets.entry(start).or_default();
            b.keys = br.keys;
            b.memory = br.memory;
            b.other_keys = br.other_keys;
            b.folded = br.folded;
            for (name, keys) in br.namespaces {
                let ns = Namespace::of(&h.names, name.as_bytes());
                b.add_namespace(&mut h.names, ns, keys);
            }
        }
        Ok(h)
    }
}

/// A window of expiries standing far above its surroundings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpiryCluster {
    pub start_ms: i64,
    /// Exclusive.
    pub end_ms: i64,
    pub keys: u64,
    pub memory: u64,
    /// Share of all expiring keys.
    pub share: f64,
    /// Mean keys per bucket in the surrounding window.
    pub baseline: f64,
    /// Namespaces the keys come from, most keys first.
    pub namespaces: Vec<(String, u64)>,
}

/// Parameters of the detection rule (see docs/expiry-clusters.md).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterRule {
    /// Buckets on each side that form the baseline.
    pub neighbours: i64,
    /// A bucket is a spike when it holds at least `factor` times the baseline...
    pub factor: f64,
    /// ...and at least this many keys.
    pub min_keys: u64,
}

impl Default for ClusterRule {
    fn default() -> Self {
        ClusterRule {
            neighbours: 30,
            factor: 10.0,
            min_keys: 20,
        }
    }
}

/// Finds clusters at bucket width `width_ms`: buckets whose count is at
/// least `factor` x the mean of the `neighbours` buckets on each side (empty
/// buckets count as zero, the bucket itself excluded) and at least
/// `min_keys`; adjacent spike buckets join into one cluster.
pub fn detect_clusters(h: &ExpiryHistogram, width_ms: i64, rule: ClusterRule) -> Vec<ExpiryCluster> {
    let width = width_ms.max(h.width_ms());
    let buckets = h.rebucket(width);
    let mut spikes: Vec<(i64, KeysMemory, f64)> = Vec::new();
    for (&start, b) in &buckets {
        // Saturating: expiry times come from the file and can be any i64.
        let lo = start.saturating_sub(rule.neighbours.saturating_mul(width));
        let hi = start.saturating_add(rule.neighbours.saturating_mul(width));
        let around: u64 = buckets
            .range(lo..=hi)
            .filter(|(&s, _)| s != start)
            .map(|(_, v)| v.keys)
            .sum();
        let baseline = around as f64 / (2 * rule.neighbours) as f64;
        if b.keys >= rule.min_keys && b.keys as f64 >= rule.factor * baseline.max(1.0) {
            spikes.push((start, *b, baseline));
        }
    }
    let mut clusters: Vec<ExpiryCluster> = Vec::new();
    for (start, b, baseline) in spikes {
        match clusters.last_mut() {
            Some(c) if c.end_ms == start => {
                c.end_ms = c.end_ms.saturating_add(width);
                c.keys += b.keys;
                c.memory += b.memory;
                c.baseline = c.baseline.max(baseline);
            }
            _ => clusters.push(ExpiryCluster {
                start_ms: start,
                end_ms: start.saturating_add(width),
                keys: b.keys,
                memory: b.memory,
                share: 0.0,
                baseline,
                namespaces: Vec::new(),
            }),
        }
    }
    for c in &mut clusters {
        c.share = c.keys as f64 / h.expiring_keys.max(1) as f64;
        let mut ns: BTreeMap<String, u64> = BTreeMap::new();
        for (_, b) in h.buckets_in(c.start_ms..c.end_ms) {
            for (name, keys) in h.namespaces(b) {
                *ns.entry(String::from_utf8_lossy(name).into_owned()).or_default() += keys;
            }
            if b.other_keys > 0 {
                *ns.entry("(other)".into()).or_default() += b.other_keys;
            }
        }
        let mut ns: Vec<(String, u64)> = ns.into_iter().collect();
        ns.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        c.namespaces = ns;
    }
    clusters
}

/// A display width for the histogram: the finest standard width (1 s, 1 min,
/// 1 h, 1 d, 7 d) at which the expiries fall into at most `max_buckets`
/// non-empty buckets.
pub fn auto_width(h: &ExpiryHistogram, max_buckets: i64) -> i64 {
    let widths = [1_000, 60_000, 3_600_000, 86_400_000, 604_800_000];
    widths
        .into_iter()
        .filter(|&w| w >= h.width_ms())
        .find(|&w| h.rebucket(w).len() as i64 <= max_buckets)
        .unwrap_or(604_800_000.max(h.width_ms()))
}
