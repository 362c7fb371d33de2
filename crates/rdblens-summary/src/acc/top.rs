//! Top-N keys by a metric, with a total order (metric, then db and key) so
//! the result is the same however keys were split across workers.
//!
//! A key in several lists is stored once: the lists hold [`SharedRecord`]s,
//! and a key's record is built at most once for all its lists (the six of
//! [`TopSet`], the access lists, the limits' examples: `KeyStats::add`
//! passes one to each), so `--top N` costs one record per distinct key
//! kept, not one per list.

use std::sync::Arc;

use super::groups::Groups;

use serde::{Deserialize, Serialize};

use super::Accumulate;
use crate::facts::KeyFacts;
use crate::keyname::KeyName;

/// One big key, as reported. Ordered field by field: lists break ties of
/// their rank with the whole record, so the same key met in two dumps
/// (dumps of one server, a replica and its primary) lands in the same place
/// however summaries are grouped when merged.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct KeyRecord {
    /// Database number.
    pub db: u64,
    /// The key's name (serialized as `key`, or `key_hex` when not UTF-8).
    #[serde(flatten)]
    pub key: KeyName,
    /// Type name (serialized as `type`): `string`, `hash`..., `module:<name>`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Encoding on the target server (`listpack`, `hashtable`...).
    pub encoding: String,
    /// On-disk value type name, e.g. `hash_listpack`.
    pub rdb_type: String,
    /// STRLEN for strings; members, fields or entries for collections.
    pub elements: u64,
    /// Estimated `MEMORY USAGE` on the target server, bytes.
    pub memory: u64,
    /// Bytes the value takes in the file.
    pub serialized_bytes: u64,
    /// Longest element, bytes.
    pub max_element_len: u64,
    /// Absolute expiry time, unix ms; `None` without a TTL.
    pub expiry_ms: Option<i64>,
    /// LRU idle time in seconds, when the file records it.
    pub idle_seconds: Option<u64>,
    /// LFU counter (0-255), when the file records it.
    pub lfu_freq: Option<u8>,
}

impl KeyRecord {
    /// The record of one key.
    pub fn from_facts(f: &KeyFacts<'_>) -> Self {
        KeyRecord {
            db: f.db,
            key: KeyName::new(f.key),
            type_name: f.type_name(),
            encoding: f.encoding.as_str().to_string(),
            rdb_type: f.rdb_type.to_string(),
            elements: f.elements,
            memory: f.memory,
            serialized_bytes: f.serialized_bytes,
            max_element_len: f.max_element_len,
            expiry_ms: f.expiry_ms,
            idle_seconds: f.idle_seconds,
            lfu_freq: f.lfu_freq,
        }
    }
}

/// A kept key's record, shared by every list of a [`TopSet`] that holds it
/// (serialized as the record itself).
pub type SharedRecord = Arc<KeyRecord>;

/// What a top list ranks keys by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Estimated memory (largest first).
    Memory,
    /// Serialized bytes (largest first).
    Serialized,
    /// Element count, collections only (largest first).
    Elements,
    /// LRU idle time (coldest first).
    Idle,
    /// LFU counter (hottest first).
    Freq,
    /// No metric: the first keys in (db, key) order.
    KeyOrder,
}

impl Metric {
    /// The key's value for this metric; `None` when it has none (no idle time, no LFU counter, a string for `Elements`).
    pub fn of(self, f: &KeyFacts<'_>) -> Option<u64> {
        match self {
            Metric::Memory => Some(f.memory),
            Metric::Serialized => Some(f.serialized_bytes),
            // A string's length is not an element count.
            Metric::Elements => (f.kind != rdblens_parser::TypeKind::String).then_some(f.elements),
            Metric::Idle => f.idle_seconds,
            Metric::Freq => f.lfu_freq.map(u64::from),
            Metric::KeyOrder => Some(0),
        }
    }
}

/// Up to this many kept items, an admitted item is inserted into the sorted
/// list at once (a short memmove, and the admission bar tightens at once).
/// Above it, admitted items wait unsorted in a buffer of up to `n` items that
/// is sorted into the list when full: O(log n) per item instead of an O(n)
/// shift, so `--top 1000000` costs O(keys * log n) and at most 2n records.
const SORTED_INSERT_MAX: usize = 256;

/// The N largest keys by one metric. Ties are broken by (db, key) ascending.
///
/// `keys` is complete and sorted once [`TopKeys::finish`] (or a merge) has
/// run after the last `add`: with a large N, `add` buffers.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TopKeys {
    /// What the list ranks by.
    pub metric: Metric,
    /// Keys kept at most (`--top`; the smaller of the two after a merge).
    pub n: usize,
    /// Sorted: largest first.
    pub keys: Vec<SharedRecord>,
    /// Admitted, not yet sorted into `keys` (only when `n` > [`SORTED_INSERT_MAX`]).
    #[serde(skip)]
    pending: Vec<SharedRecord>,
    /// A metric below this never enters: the last kept key's, once the list
    /// is full (0 before, and after deserializing). One comparison turns
    /// away nearly every key; the whole rank was compared for each of the
    /// six lists a key meets (2.7 % of a report's instructions on prod-1g).
    #[serde(skip)]
    floor: u64,
}

/// Equal lists hold the same keys; the floor is a cache.
impl PartialEq for TopKeys {
    fn eq(&self, other: &Self) -> bool {
        (self.metric, self.n, &self.keys, &self.pending)
            == (other.metric, other.n, &other.keys, &other.pending)
    }
}

impl Eq for TopKeys {}

/// A record's value of `metric` (what `Metric::of` gives for its facts).
fn metric_value(metric: Metric, r: &KeyRecord) -> u64 {
    match metric {
        Metric::Memory => r.memory,
        Metric::Serialized => r.serialized_bytes,
        Metric::Elements => r.elements,
        Metric::Idle => r.idle_seconds.unwrap_or(0),
        Metric::Freq => u64::from(r.lfu_freq.unwrap_or(0)),
        Metric::KeyOrder => 0,
    }
}

/// Sort order: larger metric first, then smaller (db, key).
fn rank(metric: Metric, r: &KeyRecord) -> (std::cmp::Reverse<u64>, u64, &[u8]) {
    (std::cmp::Reverse(metric_value(metric, r)), r.db, r.key.as_bytes())
}

impl TopKeys {
    /// An empty list of the `n` first keys by `metric`.
    pub fn new(metric: Metric, n: usize) -> Self {
        TopKeys {
            metric,
            n,
            keys: Vec::new(),
            pending: Vec::new(),
            floor: 0,
        }
    }

    /// Sorts buffered keys into `keys`; call after the last `add`.
    pub fn finish(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let metric = self.metric;
        self.keys.append(&mut self.pending);
        self.keys
            .sort_unstable_by(|a, b| (rank(metric, a), a).cmp(&(rank(metric, b), b)));
        self.keys.truncate(self.n);
        self.raise_floor();
    }

    /// Sets [`Self::floor`] from the kept keys. The last kept key's metric
    /// only grows while keys are added, so a floor is never too high.
    fn raise_floor(&mut self) {
        if let Some(last) = self.n.checked_sub(1).and_then(|i| self.keys.get(i)) {
            self.floor = metric_value(self.metric, last);
        }
    }

    /// Whether a key with value `v` (and this db/key) would enter the list.
    #[inline]
    fn admits(&self, v: u64, db: u64, key: &[u8]) -> bool {
        if v < self.floor || self.n == 0 {
            return false;
        }
        match self.keys.get(self.n - 1) {
            None => true,
            // A tie with the last (the same key in another dump) is
            // settled by the whole record in `insert`.
            Some(last) => (std::cmp::Reverse(v), db, key) <= rank(self.metric, last),
        }
    }

    /// Whether the records are in the list's order (largest first).
    pub fn is_sorted(&self) -> bool {
        let metric = self.metric;
        self.keys
            .windows(2)
            .all(|w| (rank(metric, &w[0]), &w[0]) <= (rank(metric, &w[1]), &w[1]))
    }

    fn insert(&mut self, r: SharedRecord) {
        if self.n > SORTED_INSERT_MAX {
            self.pending.push(r);
            if self.pending.len() >= self.n {
                self.finish();
            }
            return;
        }
        let metric = self.metric;
        let pos = self
            .keys
            .partition_point(|k| (rank(metric, k), k) < (rank(metric, &r), &r));
        self.keys.insert(pos, r);
        self.keys.truncate(self.n);
        self.raise_floor();
    }
}

impl TopKeys {
    /// [`Accumulate::add`] sharing the key's record: `record` is built on
    /// the first list that admits the key, and cloned (a reference) by the
    /// others.
    pub(crate) fn add_sharing(&mut self, f: &KeyFacts<'_>, record: &mut Option<SharedRecord>) {
        if let Some(v) = self.metric.of(f) {
            if self.admits(v, f.db, f.key) {
                let r = record.get_or_insert_with(|| Arc::new(KeyRecord::from_facts(f)));
                self.insert(Arc::clone(r));
            }
        }
    }
}

impl Accumulate for TopKeys {
    fn add(&mut self, f: &KeyFacts<'_>) {
        self.add_sharing(f, &mut None);
    }

    fn finish(&mut self) {
        TopKeys::finish(self);
    }

    fn merge(&mut self, mut other: Self) {
        self.n = self.n.min(other.n);
        // One sort of both lists (and both buffers): O(n log n), where
        // inserting one by one into a long list would be O(n^2).
        self.pending.append(&mut other.keys);
        self.pending.append(&mut other.pending);
        self.finish();
        self.keys.truncate(self.n);
    }
}

/// Top keys by memory, serialized size and elements, overall and per type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopSet {
    /// All keys by estimated memory.
    pub by_memory: TopKeys,
    /// All keys by serialized bytes.
    pub by_serialized: TopKeys,
    /// Collections by element count.
    pub by_elements: TopKeys,
    /// The same three lists (memory, serialized, elements) per type name;
    /// all module values under `module`. [`Groups`], looked up by the
    /// name's address: a `BTreeMap<String, _>` compared text per key.
    pub per_type: Groups<[TopKeys; 3]>,
}

impl TopSet {
    /// Empty lists keeping `n` keys each.
    pub fn new(n: usize) -> Self {
        TopSet {
            by_memory: TopKeys::new(Metric::Memory, n),
            by_serialized: TopKeys::new(Metric::Serialized, n),
            by_elements: TopKeys::new(Metric::Elements, n),
            per_type: Groups::default(),
        }
    }

    fn fresh(n: usize) -> [TopKeys; 3] {
        [
            TopKeys::new(Metric::Memory, n),
            TopKeys::new(Metric::Serialized, n),
            TopKeys::new(Metric::Elements, n),
        ]
    }
}

impl TopSet {
    /// [`Accumulate::add`] sharing the key's record with the other lists
    /// of the key (see [`TopKeys::add_sharing`]).
    pub(crate) fn add_sharing(&mut self, f: &KeyFacts<'_>, record: &mut Option<SharedRecord>) {
        self.by_memory.add_sharing(f, record);
        self.by_serialized.add_sharing(f, record);
        self.by_elements.add_sharing(f, record);
        let n = self.by_memory.n;
        let per = self.per_type.slot_static_or(f.kind.name(), || Self::fresh(n));
        per.iter_mut().for_each(|t| t.add_sharing(f, record));
    }
}

impl Accumulate for TopSet {
    fn add(&mut self, f: &KeyFacts<'_>) {
        self.add_sharing(f, &mut None);
    }

    fn finish(&mut self) {
        self.by_memory.finish();
        self.by_serialized.finish();
        self.by_elements.finish();
        self.per_type.values_mut().flatten().for_each(TopKeys::finish);
    }

    fn merge(&mut self, other: Self) {
        self.by_memory.merge(other.by_memory);
        self.by_serialized.merge(other.by_serialized);
        self.by_elements.merge(other.by_elements);
        let n = self.by_memory.n;
        self.per_type.merge_or(
            other.per_type,
            || Self::fresh(n),
            |mine, tops| {
                for (m, t) in mine.iter_mut().zip(tops) {
                    m.merge(t);
                }
            },
        );
    }
}

/// The `n` smallest items by their own total order: the generic form of
/// [`TopKeys`] for records that carry their own rank (rule hits order by
/// severity, impact, then db and key). Merging keeps the same set whatever
/// the split, because the order is total.
///
/// `items` is complete and sorted once [`TopBy::finish`] (or a merge) has
/// run after the last `insert`: with a large N, `insert` buffers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopBy<T> {
    /// Items kept at most (the smaller of the two after a merge).
    pub n: usize,
    /// Sorted: smallest (first reported) first.
    pub items: Vec<T>,
    /// Admitted, not yet sorted into `items` (only when `n` > [`SORTED_INSERT_MAX`]).
    #[serde(skip, default = "Vec::new")]
    pending: Vec<T>,
}

impl<T: Ord> TopBy<T> {
    /// An empty list keeping the `n` smallest items.
    pub fn new(n: usize) -> Self {
        TopBy {
            n,
            items: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Sorts buffered items into `items`; call after the last `insert`.
    pub fn finish(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        self.items.append(&mut self.pending);
        self.items.sort_unstable();
        self.items.truncate(self.n);
    }

    /// Whether an item would enter the list; `cmp_to(existing)` orders the
    /// candidate against an item already kept. Lets callers skip building
    /// (allocating) records that would be dropped at once.
    pub fn admits(&self, cmp_to: impl Fn(&T) -> std::cmp::Ordering) -> bool {
        if self.n == 0 {
            return false;
        }
        match self.items.get(self.n - 1) {
            None => true,
            Some(last) => cmp_to(last) == std::cmp::Ordering::Less,
        }
    }

    /// Whether the items are in order (smallest first).
    pub fn is_sorted(&self) -> bool {
        self.items.is_sorted()
    }

    /// Offers `item`: kept while it is among the `n` smallest.
    pub fn insert(&mut self, item: T) {
        if self.n == 0 {
            return;
        }
        if self.n > SORTED_INSERT_MAX {
            self.pending.push(item);
            if self.pending.len() >= self.n {
                self.finish();
            }
            return;
        }
        let pos = self.items.partition_point(|k| *k < item);
        self.items.insert(pos, item);
        self.items.truncate(self.n);
    }

    /// Folds `other` in, keeping the smaller `n`.
    pub fn merge(&mut self, mut other: Self) {
        self.n = self.n.min(other.n);
        self.pending.append(&mut other.items);
        self.pending.append(&mut other.pending);
        self.finish();
        self.items.truncate(self.n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys whose memory ties in sevens, added in a scrambled order, in two
    /// halves merged: every list holds the first `n` of a full sort (ties by
    /// key), whatever the floor turned away.
    #[test]
    fn a_list_holds_the_first_keys_of_a_full_sort() {
        let names: Vec<String> = (0..2000u64)
            .map(|i| format!("k{:05}", (i * 7919) % 2000))
            .collect();
        fn facts(name: &str) -> KeyFacts<'_> {
            let memory = name.len() as u64 + u64::from(name.as_bytes()[5] % 7);
            KeyFacts::synthetic(name.as_bytes(), None, memory)
        }
        let mut sorted: Vec<SharedRecord> = names
            .iter()
            .map(|n| Arc::new(KeyRecord::from_facts(&facts(n))))
            .collect();
        sorted.sort_by(|a, b| (rank(Metric::Memory, a), a).cmp(&(rank(Metric::Memory, b), b)));
        for n in [0, 1, 5, 256, 300, 2500] {
            let (mut left, mut right) = (TopKeys::new(Metric::Memory, n), TopKeys::new(Metric::Memory, n));
            for (i, name) in names.iter().enumerate() {
                let list = if i % 3 == 0 { &mut right } else { &mut left };
                list.add(&facts(name));
            }
            left.merge(right);
            assert_eq!(left.keys, sorted[..n.min(sorted.len())], "n = {n}");
        }
    }

    /// A key that tops the three overall lists and its type's three is
    /// stored once: all six lists point at one record (one copy of the key
    /// bytes), at any `--top`.
    #[test]
    fn a_key_in_six_lists_is_stored_once() {
        for n in [1, SORTED_INSERT_MAX + 1] {
            let mut set = TopSet::new(n);
            for name in ["small:1", "small:2", "big"] {
                let size = if name == "big" { 1000 } else { 10 };
                let mut f = KeyFacts::synthetic(name.as_bytes(), None, size);
                (f.kind, f.elements, f.serialized_bytes) = (rdblens_parser::TypeKind::Hash, size, size);
                set.add(&f);
            }
            Accumulate::finish(&mut set);
            let [m, ser, el] = set.per_type.iter().next().map(|(_, l)| l).expect("one type"); // ok: unit test
            let lists = [&set.by_memory, &set.by_serialized, &set.by_elements, m, ser, el];
            let first = &set.by_memory.keys[0];
            assert_eq!(first.key.as_bytes(), b"big", "n = {n}");
            for list in lists {
                let same = list.keys.iter().filter(|r| r.key.as_bytes() == b"big");
                assert_eq!(
                    same.map(|r| Arc::ptr_eq(r, first)).collect::<Vec<_>>(),
                    [true],
                    "n = {n}"
                );
            }
            // One record referenced from six lists, and nothing else.
            assert_eq!(Arc::strong_count(first), 6, "n = {n}");
        }
    }

    /// A key in the big-key lists and among the coldest keys is stored
    /// once for all of them (`KeyStats::add` shares its record).
    #[test]
    fn a_key_in_the_top_and_access_lists_is_stored_once() {
        let opts = crate::Options {
            top: 3,
            ..crate::Options::default()
        };
        let mut stats = crate::KeyStats::new(&crate::Settings::of(&opts, 0));
        let mut f = KeyFacts::synthetic(b"cold:big", None, 1000);
        f.idle_seconds = Some(86_400);
        stats.add(&f);
        stats.finish();
        let coldest = &stats.access.coldest.keys[0];
        assert!(Arc::ptr_eq(coldest, &stats.top.by_memory.keys[0]));
        // Memory and serialized size, overall and for strings, and coldest.
        assert_eq!(Arc::strong_count(coldest), 5);
    }
}
