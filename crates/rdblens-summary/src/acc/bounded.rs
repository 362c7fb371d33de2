//! A map with a bounded number of entries whose content does not depend on
//! the order keys arrive in or on how partial maps are merged: it keeps the
//! `cap` names with the smallest hashes (bottom-k) exactly and folds every
//! other name into `other`. A name kept in the final map was kept in every
//! partial map that saw it, so its aggregate is exact.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::keyname::KeyName;

/// Values a bounded map can hold: they add up.
pub trait Mergeable: Default {
    /// Adds `other` into this value.
    fn merge_from(&mut self, other: &Self);
}

/// Hash used for bottom-k selection: FNV-1a, fixed by its definition and so
/// stable across builds and hosts, which merging summaries made on different
/// machines needs (std's SipHash keys and algorithm are not guaranteed).
pub fn stable_hash(name: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    h.write(name);
    // A final avalanche: FNV's low bits are weak for short, similar names.
    let mut x = h.finish();
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51afd7ed558ccd);
    x ^ (x >> 33)
}

/// Fixed-seed fast hashing for kept names (they come from the file; a
/// collision attack only slows the report, results do not depend on order).
pub type NameHasher = foldhash::fast::FixedState;

/// Values per name for at most `cap` names (those with the smallest [`stable_hash`]), everything else folded into `other`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BoundedMap<V> {
    /// Names kept at most (at least 1; the smaller of the two after a merge).
    pub cap: usize,
    /// Kept names. A hash map: one lookup per key and level, where a B-tree
    /// compared names ~10 times (memcmp was ~5% of a report). Serialized
    /// sorted by name; iterate with [`Self::sorted`] wherever order shows.
    #[serde(with = "crate::keyname::as_pairs")]
    #[serde(bound(serialize = "V: Serialize", deserialize = "V: Deserialize<'de>"))]
    pub entries: HashMap<KeyName, V, NameHasher>,
    /// Everything folded out of `entries`.
    pub other: V,
    /// Whether any name was folded into `other` (then `entries` is a hash-chosen sample).
    pub folded: bool,
    #[serde(skip)]
    by_hash: BTreeSet<(u64, KeyName)>,
}

// The hash index is derived state: equality is about the content.
impl<V: PartialEq> PartialEq for BoundedMap<V> {
    fn eq(&self, o: &Self) -> bool {
        self.cap == o.cap && self.entries == o.entries && self.other == o.other && self.folded == o.folded
    }
}

impl<V: Mergeable> BoundedMap<V> {
    /// An empty map keeping at most `cap` names (at least 1).
    pub fn new(cap: usize) -> Self {
        BoundedMap {
            cap: cap.max(1),
            entries: HashMap::default(),
            other: V::default(),
            folded: false,
            by_hash: BTreeSet::new(),
        }
    }

    /// The kept names in name order.
    pub fn sorted(&self) -> impl Iterator<Item = (&KeyName, &V)> {
        let mut v: Vec<(&KeyName, &V)> = self.entries.iter().collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v.into_iter()
    }

    /// Whether names were folded: `entries` is then a hash-chosen sample.
    pub fn is_folded(&self) -> bool {
        self.folded
    }

    /// Distinct names folded into `other`, estimated from the bottom-k
    /// sample (k-1 over the largest kept hash as a fraction of the hash
    /// space): deterministic for a given set of names.
    pub fn folded_names_estimate(&self) -> u64 {
        if !self.folded {
            return 0;
        }
        let max_hash = self
            .entries
            .keys()
            .map(|k| stable_hash(k.as_bytes()))
            .max()
            .unwrap_or(u64::MAX)
            .max(1);
        let k = self.entries.len() as f64;
        let total = (k - 1.0).max(1.0) * (u64::MAX as f64 / max_hash as f64);
        (total - k).max(1.0).round() as u64
    }

    fn rebuild_index(&mut self) {
        if self.by_hash.len() != self.entries.len() {
            self.by_hash = self
                .entries
                .keys()
                .map(|k| (stable_hash(k.as_bytes()), k.clone()))
                .collect();
        }
    }

    /// The value for `name`, or `other` when `name` is folded.
    pub fn slot(&mut self, name: &[u8]) -> &mut V {
        // One hash lookup; the borrow checker needs the second for the hit.
        if self.entries.contains_key(name) {
            return self.entries.get_mut(name).map_or(&mut self.other, |v| v);
        }
        self.rebuild_index();
        let hash = stable_hash(name);
        if self.entries.len() >= self.cap {
            let Some(&(max_hash, _)) = self.by_hash.iter().next_back() else {
                return &mut self.other;
            };
            if hash >= max_hash {
                self.folded = true;
                return &mut self.other;
            }
            self.evict_largest();
        }
        let key = KeyName::new(name);
        self.by_hash.insert((hash, key.clone()));
        self.entries.entry(key).or_default()
    }

    fn evict_largest(&mut self) {
        if let Some(last) = self.by_hash.pop_last() {
            if let Some(v) = self.entries.remove(&last.1) {
                self.other.merge_from(&v);
                self.folded = true;
            }
        }
    }

    /// Folds `other` in, keeping the smaller cap; names evicted are folded into `other`.
    pub fn merge(&mut self, other: BoundedMap<V>) {
        self.cap = self.cap.min(other.cap);
        self.other.merge_from(&other.other);
        self.folded |= other.folded;
        self.rebuild_index();
        for (k, v) in other.entries {
            if let Some(mine) = self.entries.get_mut(&k) {
                mine.merge_from(&v);
            } else {
                self.by_hash.insert((stable_hash(k.as_bytes()), k.clone()));
                self.entries.insert(k, v);
            }
        }
        while self.entries.len() > self.cap {
            self.evict_largest();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Mergeable for u64 {
        fn merge_from(&mut self, other: &Self) {
            *self += other;
        }
    }

    #[test]
    fn order_and_split_do_not_matter() {
        let names: Vec<Vec<u8>> = (0..500).map(|i| format!("n{}", i % 137).into_bytes()).collect();
        let mut whole = BoundedMap::<u64>::new(16);
        for n in &names {
            *whole.slot(n) += 1;
        }
        let mut a = BoundedMap::<u64>::new(16);
        let mut b = BoundedMap::<u64>::new(16);
        for (i, n) in names.iter().enumerate().rev() {
            *(if i % 3 == 0 { &mut a } else { &mut b }).slot(n) += 1;
        }
        b.merge(a);
        assert_eq!(whole.entries, b.entries);
        let total = |m: &BoundedMap<u64>| m.entries.values().sum::<u64>() + m.other;
        assert_eq!(total(&whole), 500);
        assert_eq!(total(&b), 500);
        // Kept names are exact: every name occurs 3 or 4 times.
        assert!(whole.entries.values().all(|&c| c == 3 || c == 4));
    }
}
