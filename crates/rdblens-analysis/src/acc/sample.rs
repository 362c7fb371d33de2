//! A handful of names with exact counts, chosen by smallest hash (bottom-k),
//! for places that keep a few names per bucket: the same guarantees as
//! [`super::bounded::BoundedMap`] (exact for kept names, independent of
//! order and merging) in a small sorted vector, without tree nodes.

use serde::{Deserialize, Serialize};

use super::bounded::stable_hash;
use super::expiry::KeysMemory;
use crate::keyname::KeyName;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SmallSample {
    pub cap: usize,
    /// Kept names, sorted by their stable hash (ties by name).
    pub entries: Vec<(KeyName, KeysMemory)>,
    /// Everything folded out of `entries`.
    pub other: KeysMemory,
    pub folded: bool,
    /// `stable_hash` of each kept name, in `entries` order: derived state,
    /// rebuilt after deserializing. Without it every insertion re-hashed
    /// every kept name (a profile showed ~4% of a report in this function).
    #[serde(skip)]
    hashes: Vec<u64>,
}

// The hash cache is derived state: equality is about the content.
impl PartialEq for SmallSample {
    fn eq(&self, o: &Self) -> bool {
        self.cap == o.cap && self.entries == o.entries && self.other == o.other && self.folded == o.folded
    }
}

impl SmallSample {
    pub fn new(cap: usize) -> Self {
        SmallSample {
            cap: cap.max(1),
            ..SmallSample::default()
        }
    }

    /// Bottom-k order of the kept name at `i`: hash, then name.
    fn order_at(&self, i: usize) -> (u64, &[u8]) {
        (self.hashes[i], self.entries[i].0.as_bytes())
    }

    fn rebuild_hashes(&mut self) {
        if self.hashes.len() != self.entries.len() {
            self.hashes = self
                .entries
                .iter()
                .map(|(n, _)| stable_hash(n.as_bytes()))
                .collect();
        }
    }

    pub fn add(&mut self, name: &[u8], km: KeysMemory) {
        self.add_hashed(name, stable_hash(name), km)
    }

    /// [`Self::add`] for a caller that already has `stable_hash(name)`.
    pub fn add_hashed(&mut self, name: &[u8], hash: u64, km: KeysMemory) {
        self.rebuild_hashes();
        let found = self
            .hashes
            .iter()
            .zip(&self.entries)
            .position(|(&h, (n, _))| h == hash && n.as_bytes() == name);
        if let Some(i) = found {
            let v = &mut self.entries[i].1;
            v.keys += km.keys;
            v.memory += km.memory;
            return;
        }
        let key = (hash, name);
        if self.entries.len() >= self.cap {
            let last_is_smaller = !self.entries.is_empty() && self.order_at(self.entries.len() - 1) < key;
            self.folded = true;
            if last_is_smaller {
                self.other.keys += km.keys;
                self.other.memory += km.memory;
                return;
            }
            if let Some((_, v)) = self.entries.pop() {
                self.hashes.pop();
                self.other.keys += v.keys;
                self.other.memory += v.memory;
            }
        }
        let mut pos = self.hashes.partition_point(|&h| h < hash);
        while pos < self.entries.len() && self.order_at(pos) < key {
            pos += 1;
        }
        self.entries.insert(pos, (KeyName::new(name), km));
        self.hashes.insert(pos, hash);
    }

    pub fn merge(&mut self, o: SmallSample) {
        self.cap = self.cap.min(o.cap);
        self.folded |= o.folded;
        self.other.keys += o.other.keys;
        self.other.memory += o.other.memory;
        for (name, km) in o.entries {
            self.add(name.as_bytes(), km);
        }
        while self.entries.len() > self.cap {
            if let Some((_, v)) = self.entries.pop() {
                self.hashes.pop();
                self.other.keys += v.keys;
                self.other.memory += v.memory;
                self.folded = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bottom_k_is_order_independent() {
        let one = KeysMemory { keys: 1, memory: 10 };
        let names: Vec<String> = (0..200).map(|i| format!("ns{}", i % 23)).collect();
        let mut whole = SmallSample::new(8);
        for n in &names {
            whole.add(n.as_bytes(), one);
        }
        let (mut a, mut b) = (SmallSample::new(8), SmallSample::new(8));
        for (i, n) in names.iter().enumerate().rev() {
            if i % 3 == 0 { &mut a } else { &mut b }.add(n.as_bytes(), one);
        }
        a.merge(b);
        assert_eq!(a, whole);
        let kept: u64 = whole.entries.iter().map(|(_, v)| v.keys).sum();
        assert_eq!(kept + whole.other.keys, 200);
        assert!(whole.folded && whole.entries.len() == 8);
    }
}
