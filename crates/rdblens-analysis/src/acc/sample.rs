//! A handful of names with exact counts, chosen by smallest hash (bottom-k),
//! for places that keep a few names per bucket: the same guarantees as
//! [`super::bounded::BoundedMap`] (exact for kept names, independent of
//! order and merging) in a small sorted vector, without tree nodes.

use serde::{Deserialize, Serialize};

use super::bounded::stable_hash;
use super::expiry::KeysMemory;
use crate::keyname::KeyName;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmallSample {
    pub cap: usize,
    /// Kept names, sorted by their stable hash (ties by name).
    pub entries: Vec<(KeyName, KeysMemory)>,
    /// Everything folded out of `entries`.
    pub other: KeysMemory,
    pub folded: bool,
}

fn order(name: &[u8]) -> (u64, &[u8]) {
    (stable_hash(name), name)
}

impl SmallSample {
    pub fn new(cap: usize) -> Self {
        SmallSample {
            cap: cap.max(1),
            ..SmallSample::default()
        }
    }

    pub fn add(&mut self, name: &[u8], km: KeysMemory) {
        if let Some((_, v)) = self.entries.iter_mut().find(|(n, _)| n.as_bytes() == name) {
            v.keys += km.keys;
            v.memory += km.memory;
            return;
        }
        let key = order(name);
        if self.entries.len() >= self.cap {
            let last_is_smaller = self
                .entries
                .last()
                .is_some_and(|(n, _)| order(n.as_bytes()) < key);
            self.folded = true;
            if last_is_smaller {
                self.other.keys += km.keys;
                self.other.memory += km.memory;
                return;
            }
            if let Some((_, v)) = self.entries.pop() {
                self.other.keys += v.keys;
                self.other.memory += v.memory;
            }
        }
        let pos = self.entries.partition_point(|(n, _)| order(n.as_bytes()) < key);
        self.entries.insert(pos, (KeyName::new(name), km));
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
