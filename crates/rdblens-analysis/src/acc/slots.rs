//! Keys and memory per cluster slot, and per hash tag.

use serde::{Deserialize, Serialize};

use super::bounded::BoundedMap;
use super::expiry::KeysMemory;
use super::Accumulate;
use crate::facts::KeyFacts;
use crate::keyshape::KeyShape;
use crate::slot::{hash_tag, SLOTS};

/// Hash tags kept exactly (bottom-k by hash beyond that).
const TAGS: usize = 4096;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slots {
    /// Index = slot.
    pub keys: Vec<u64>,
    pub memory: Vec<u64>,
    pub hash_tags: BoundedMap<KeysMemory>,
    pub keys_with_tag: u64,
}

impl Default for Slots {
    fn default() -> Self {
        Slots {
            keys: vec![0; SLOTS],
            memory: vec![0; SLOTS],
            hash_tags: BoundedMap::new(TAGS),
            keys_with_tag: 0,
        }
    }
}

impl Slots {
    /// [`Accumulate::add`] for a key whose shape is known: most keys have
    /// no brace, and no hash tag to look for.
    pub fn add_shaped(&mut self, f: &KeyFacts<'_>, shape: &KeyShape) {
        let s = usize::from(f.slot) % SLOTS;
        self.keys[s] += 1;
        self.memory[s] += f.memory;
        if !shape.has_braces() {
            return;
        }
        if let Some(tag) = hash_tag(f.key) {
            self.keys_with_tag += 1;
            let t = self.hash_tags.slot(tag);
            t.keys += 1;
            t.memory += f.memory;
        }
    }
}

impl Accumulate for Slots {
    fn add(&mut self, f: &KeyFacts<'_>) {
        // The separator does not matter for braces.
        self.add_shaped(f, &KeyShape::of(f.key, b':'))
    }

    fn merge(&mut self, other: Self) {
        for (a, b) in self.keys.iter_mut().zip(&other.keys) {
            *a += b;
        }
        for (a, b) in self.memory.iter_mut().zip(&other.memory) {
            *a += b;
        }
        self.hash_tags.merge(other.hash_tags);
        self.keys_with_tag += other.keys_with_tag;
    }
}
