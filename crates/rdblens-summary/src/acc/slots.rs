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

/// Keys and memory of one slot, side by side: every key updates both, and
/// a random slot of 16,384 is a cache miss; as two arrays (their serialized
/// form) it was two misses per key, 6% of a report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotCount {
    /// Keys in the slot.
    pub keys: u64,
    /// Their estimated memory, bytes.
    pub memory: u64,
}

/// Keys and memory per cluster hash slot, and per hash tag.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(into = "SlotsRepr", try_from = "SlotsRepr")]
pub struct Slots {
    /// Index = slot.
    counts: Vec<SlotCount>,
    /// Keys and memory per hash tag (the bytes between the braces); 4096 tags kept exactly.
    pub hash_tags: BoundedMap<KeysMemory>,
    /// Keys with a hash tag.
    pub keys_with_tag: u64,
    /// (slot, memory) of keys not yet in `counts` (complete only after
    /// [`Accumulate::finish`], which `KeyStats::finish`, every merge and
    /// the serialized form call). Even as one array, a random slot of
    /// 16,384 was a cache miss that stalled the whole per-key update (6%
    /// of a report); applied [`PENDING`] at a time in a loop of nothing
    /// else, the misses overlap.
    pending: Vec<(u16, u64)>,
}

/// Keys buffered before they go into their slots (16 KiB).
const PENDING: usize = 1024;

impl PartialEq for Slots {
    fn eq(&self, other: &Self) -> bool {
        let (mut a, mut b) = (self.clone(), other.clone());
        a.finish();
        b.finish();
        a.counts == b.counts && a.hash_tags == b.hash_tags && a.keys_with_tag == b.keys_with_tag
    }
}

/// The serialized form: keys and memory as two arrays indexed by slot.
#[derive(Serialize, Deserialize)]
struct SlotsRepr {
    keys: Vec<u64>,
    memory: Vec<u64>,
    hash_tags: BoundedMap<KeysMemory>,
    keys_with_tag: u64,
}

impl From<Slots> for SlotsRepr {
    fn from(mut s: Slots) -> Self {
        s.finish();
        SlotsRepr {
            keys: s.counts.iter().map(|c| c.keys).collect(),
            memory: s.counts.iter().map(|c| c.memory).collect(),
            hash_tags: s.hash_tags,
            keys_with_tag: s.keys_with_tag,
        }
    }
}

impl TryFrom<SlotsRepr> for Slots {
    type Error = String;
    fn try_from(r: SlotsRepr) -> Result<Self, String> {
        if r.keys.len() != SLOTS {
            return Err(format!(
                "keys: {} entries, expected one per slot ({SLOTS})",
                r.keys.len()
            ));
        }
        if r.memory.len() != r.keys.len() {
            return Err(format!(
                "memory: {} entries, keys has {}",
                r.memory.len(),
                r.keys.len()
            ));
        }
        Ok(Slots {
            counts: r
                .keys
                .iter()
                .zip(&r.memory)
                .map(|(&keys, &memory)| SlotCount { keys, memory })
                .collect(),
            hash_tags: r.hash_tags,
            keys_with_tag: r.keys_with_tag,
            pending: Vec::new(),
        })
    }
}

impl Default for Slots {
    fn default() -> Self {
        Slots {
            counts: vec![SlotCount::default(); SLOTS],
            hash_tags: BoundedMap::new(TAGS),
            keys_with_tag: 0,
            pending: Vec::new(),
        }
    }
}

impl Slots {
    /// Keys and memory per slot, index = slot.
    pub fn counts(&self) -> &[SlotCount] {
        debug_assert!(self.pending.is_empty(), "slots read before finish");
        &self.counts
    }

    /// [`Accumulate::add`] for a key whose shape is known: most keys have
    /// no brace, and no hash tag to look for.
    pub fn add_shaped(&mut self, f: &KeyFacts<'_>, shape: &KeyShape) {
        if self.pending.len() >= PENDING {
            self.finish();
        }
        self.pending.push((f.slot, f.memory));
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

    fn finish(&mut self) {
        for &(slot, memory) in &self.pending {
            let c = &mut self.counts[usize::from(slot) % SLOTS];
            c.keys += 1;
            c.memory += memory;
        }
        self.pending.clear();
    }

    fn merge(&mut self, mut other: Self) {
        self.finish();
        other.finish();
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            a.keys = a.keys.saturating_add(b.keys);
            a.memory = a.memory.saturating_add(b.memory);
        }
        self.hash_tags.merge(other.hash_tags);
        self.keys_with_tag = self.keys_with_tag.saturating_add(other.keys_with_tag);
    }
}
