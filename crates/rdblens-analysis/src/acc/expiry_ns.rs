//! Namespaces per expiry bucket, laid out for the per-key update.
//!
//! Every expiring key adds to a random one of up to 100,000 buckets. With a
//! vector of boxed names per bucket that update cost four or five cache
//! misses (~15% of a whole report). Here names are interned once per
//! histogram (the table is small and stays in cache: namespaces are few,
//! and only names a bucket keeps are interned), and a bucket holds its
//! kept namespaces inline as (name id, keys) pairs: one miss per key.
//!
//! Each bucket keeps the [`PER_BUCKET`] namespaces with the smallest
//! `(stable_hash, name)` (bottom-k, as [`super::bounded::BoundedMap`]):
//! which ones are kept, and their counts, do not depend on the order keys
//! arrive in or on how partial histograms merge.

use std::collections::HashMap;

use super::bounded::stable_hash;
use crate::keyname::KeyName;

/// Namespaces kept per bucket (a cluster usually comes from one or two).
pub const PER_BUCKET: usize = 8;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Slot {
    id: u32,
    /// Keys of this namespace in the bucket (u32 keeps a bucket in two
    /// cache lines; counts past it spill into `other_keys`, still exact in total).
    keys: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExpiryBucket {
    pub keys: u64,
    pub memory: u64,
    /// Keys of namespaces not kept in this bucket.
    pub other_keys: u64,
    /// Whether any namespace was left out (then the kept ones are a sample).
    pub folded: bool,
    len: u8,
    slots: [Slot; PER_BUCKET],
}

/// Interned namespace names with their stable hashes.
#[derive(Clone, Debug, Default)]
pub struct Names {
    index: HashMap<KeyName, u32, foldhash::fast::FixedState>,
    names: Vec<(KeyName, u64)>,
}

impl Names {
    pub fn get(&self, name: &[u8]) -> Option<u32> {
        self.index.get(name).copied()
    }

    pub(crate) fn intern(&mut self, name: &[u8], hash: u64) -> u32 {
        if let Some(id) = self.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push((KeyName::new(name), hash));
        self.index.insert(KeyName::new(name), id);
        id
    }

    pub fn name(&self, id: u32) -> &[u8] {
        self.names[id as usize].0.as_bytes()
    }

    fn order(&self, id: u32) -> (u64, &[u8]) {
        let (name, hash) = &self.names[id as usize];
        (*hash, name.as_bytes())
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// A namespace being added: known by id, or by name and hash.
#[derive(Clone, Copy)]
pub enum Namespace<'n> {
    Id(u32),
    New(&'n [u8], u64),
}

impl<'n> Namespace<'n> {
    pub fn of(names: &Names, name: &'n [u8]) -> Self {
        match names.get(name) {
            Some(id) => Namespace::Id(id),
            None => Namespace::New(name, stable_hash(name)),
        }
    }
}

impl ExpiryBucket {
    /// The kept namespaces (name id, keys), smallest hash first.
    pub fn kept(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.slots[..usize::from(self.len)]
            .iter()
            .map(|s| (s.id, u64::from(s.keys)))
    }

    /// Adds `keys` keys of namespace `ns`.
    pub fn add_namespace(&mut self, names: &mut Names, ns: Namespace<'_>, keys: u64) {
        let len = usize::from(self.len);
        if let Namespace::Id(id) = ns {
            if let Some(slot) = self.slots[..len].iter_mut().find(|s| s.id == id) {
                let room = u64::from(u32::MAX - slot.keys);
                slot.keys += keys.min(room) as u32;
                self.other_keys += keys.saturating_sub(room);
                return;
            }
        }
        let key = match ns {
            Namespace::Id(id) => names.order(id),
            Namespace::New(name, hash) => (hash, name),
        };
        // Bottom-k: the position among the kept ones, by (hash, name).
        let pos = self.slots[..len]
            .iter()
            .position(|s| names.order(s.id) > key)
            .unwrap_or(len);
        if pos == PER_BUCKET {
            self.other_keys += keys;
            self.folded = true;
            return;
        }
        // Only a name a bucket keeps is interned.
        let id = match ns {
            Namespace::Id(id) => id,
            Namespace::New(name, hash) => names.intern(name, hash),
        };
        if len == PER_BUCKET {
            let last = self.slots[PER_BUCKET - 1];
            self.other_keys += u64::from(last.keys);
            self.folded = true;
        } else {
            self.len += 1;
        }
        let end = usize::from(self.len);
        self.slots.copy_within(pos..end - 1, pos + 1);
        let kept = keys.min(u64::from(u32::MAX));
        self.slots[pos] = Slot {
            id,
            keys: kept as u32,
        };
        self.other_keys += keys - kept;
    }

    /// Adds everything of `o`, whose ids are in `theirs`, to this bucket.
    pub fn merge_from(&mut self, names: &mut Names, o: &ExpiryBucket, theirs: Option<&Names>) {
        self.keys += o.keys;
        self.memory += o.memory;
        self.other_keys += o.other_keys;
        self.folded |= o.folded;
        for (id, keys) in o.kept() {
            let ns = match theirs {
                None => Namespace::Id(id),
                Some(t) => Namespace::of(names, t.name(id)),
            };
            self.add_namespace(names, ns, keys);
        }
    }

    /// Rewrites name ids after the name table was compacted.
    pub fn remap(&mut self, map: &HashMap<u32, u32>) {
        for s in &mut self.slots[..usize::from(self.len)] {
            s.id = map[&s.id];
        }
    }
}

/// A table holding only the names `buckets` refer to, and the id mapping.
pub fn compact<'b>(
    names: &Names,
    buckets: impl Iterator<Item = &'b ExpiryBucket>,
) -> (Names, HashMap<u32, u32>) {
    let mut fresh = Names::default();
    let mut map = HashMap::new();
    for b in buckets {
        for (id, _) in b.kept() {
            map.entry(id).or_insert_with(|| {
                let (name, hash) = &names.names[id as usize];
                fresh.intern(name.as_bytes(), *hash)
            });
        }
    }
    (fresh, map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(b: &mut ExpiryBucket, names: &mut Names, name: &str) {
        let ns = Namespace::of(names, name.as_bytes());
        b.add_namespace(names, ns, 1);
    }

    #[test]
    fn bottom_k_is_order_independent() {
        let list: Vec<String> = (0..200).map(|i| format!("ns{}", i % 23)).collect();
        let (mut whole, mut names) = (ExpiryBucket::default(), Names::default());
        for n in &list {
            add(&mut whole, &mut names, n);
        }
        let (mut a, mut na) = (ExpiryBucket::default(), Names::default());
        let (mut b, mut nb) = (ExpiryBucket::default(), Names::default());
        for (i, n) in list.iter().enumerate().rev() {
            if i % 3 == 0 {
                add(&mut a, &mut na, n);
            } else {
                add(&mut b, &mut nb, n);
            }
        }
        let mut merged = ExpiryBucket::default();
        let mut nm = Names::default();
        merged.merge_from(&mut nm, &a, Some(&na));
        merged.merge_from(&mut nm, &b, Some(&nb));
        let named = |b: &ExpiryBucket, n: &Names| -> Vec<(Vec<u8>, u64)> {
            b.kept().map(|(id, k)| (n.name(id).to_vec(), k)).collect()
        };
        assert_eq!(named(&merged, &nm), named(&whole, &names));
        assert_eq!(merged.other_keys, whole.other_keys);
        let kept: u64 = whole.kept().map(|(_, k)| k).sum();
        assert_eq!(kept + whole.other_keys, 200);
        assert!(whole.folded && whole.kept().count() == PER_BUCKET);
        // The kept ones are the smallest hashes of all 23 names.
        let mut all: Vec<(u64, String)> = (0..23)
            .map(|i| format!("ns{i}"))
            .map(|n| (stable_hash(n.as_bytes()), n))
            .collect();
        all.sort();
        let expect: Vec<Vec<u8>> = all[..PER_BUCKET]
            .iter()
            .map(|(_, n)| n.clone().into_bytes())
            .collect();
        let got: Vec<Vec<u8>> = named(&whole, &names).into_iter().map(|(n, _)| n).collect();
        assert_eq!(got, expect);
    }

    #[test]
    fn compaction_keeps_only_referenced_names() {
        let (mut b, mut names) = (ExpiryBucket::default(), Names::default());
        for i in 0..50 {
            add(&mut b, &mut names, &format!("n{i}"));
        }
        assert!(names.len() > PER_BUCKET);
        let before: Vec<(Vec<u8>, u64)> = b.kept().map(|(id, k)| (names.name(id).to_vec(), k)).collect();
        let (fresh, map) = compact(&names, std::iter::once(&b));
        b.remap(&map);
        assert_eq!(fresh.len(), PER_BUCKET);
        let after: Vec<(Vec<u8>, u64)> = b.kept().map(|(id, k)| (fresh.name(id).to_vec(), k)).collect();
        assert_eq!(before, after);
    }
}
