//! Empty collections: lists, sets, sorted sets and hashes stored with no
//! element. A server skips them on load (`rdbLoadObject` returns an "empty
//! key" and the loader drops it), so they are counted here and named, and
//! left out of every other figure: they are not keys the server would have.

use serde::{Deserialize, Serialize};

use super::Accumulate;
use crate::facts::KeyFacts;
use crate::keyname::KeyName;
use rdblens_parser::TypeKind;

/// Empty collections named in a summary: the first by database and name,
/// so the same ones for any thread count.
pub const EMPTY_NAMED: usize = 10;

/// One empty collection.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EmptyKey {
    /// Its database.
    pub db: u64,
    /// Its name.
    #[serde(flatten)]
    pub key: KeyName,
    /// Its type: `list`, `set`, `zset` or `hash`.
    #[serde(rename = "type")]
    pub type_name: String,
}

/// The empty collections of a dump.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmptyCollections {
    /// How many there are.
    pub keys: u64,
    /// Their values as stored in the file (as every `serialized_bytes`).
    pub serialized_bytes: u64,
    /// The first [`EMPTY_NAMED`] of them, by database and name.
    pub named: Vec<EmptyKey>,
}

/// True for a collection a server drops on load because it has no element.
/// Streams stay (an empty stream is a valid key), as do strings and modules.
pub fn is_dropped_on_load(kind: TypeKind, elements: u64) -> bool {
    elements == 0
        && matches!(
            kind,
            TypeKind::List | TypeKind::Set | TypeKind::ZSet | TypeKind::Hash
        )
}

impl EmptyCollections {
    /// Keeps the first [`EMPTY_NAMED`] by database and name. Not deduplicated:
    /// two entries alike are two keys (a dump that repeats a name, or two
    /// shards), and `named` has one entry per key up to the cap.
    fn keep_first(&mut self) {
        self.named.sort();
        self.named.truncate(EMPTY_NAMED);
    }
}

impl Accumulate for EmptyCollections {
    fn add(&mut self, f: &KeyFacts<'_>) {
        self.keys += 1;
        self.serialized_bytes = self.serialized_bytes.saturating_add(f.serialized_bytes);
        let candidate = EmptyKey {
            db: f.db,
            key: KeyName::new(f.key),
            type_name: f.kind.name().to_string(),
        };
        // Rare (old bugs wrote them): a sort per key costs nothing.
        if self.named.len() < EMPTY_NAMED || self.named.last().is_some_and(|last| &candidate < last) {
            self.named.push(candidate);
            self.keep_first();
        }
    }

    fn merge(&mut self, other: Self) {
        // Saturating: summaries come from files; the summary check refuses
        // a total past its bound.
        self.keys = self.keys.saturating_add(other.keys);
        self.serialized_bytes = self.serialized_bytes.saturating_add(other.serialized_bytes);
        self.named.extend(other.named);
        self.keep_first();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty(db: u64, key: &[u8], kind: TypeKind) -> KeyFacts<'_> {
        KeyFacts {
            db,
            kind,
            elements: 0,
            serialized_bytes: 10,
            ..KeyFacts::synthetic(key, None, 0)
        }
    }

    #[test]
    fn the_first_by_db_and_name_are_named_whatever_the_split() {
        let names: Vec<Vec<u8>> = (0..30u8).rev().map(|i| format!("k{i:02}").into_bytes()).collect();
        let mut one = EmptyCollections::default();
        let (mut left, mut right) = (EmptyCollections::default(), EmptyCollections::default());
        for (i, n) in names.iter().enumerate() {
            let f = empty(1, n, TypeKind::Set);
            one.add(&f);
            if i % 3 == 0 {
                left.add(&f)
            } else {
                right.add(&f)
            }
        }
        left.merge(right);
        assert_eq!(left, one);
        assert_eq!(
            (one.keys, one.serialized_bytes, one.named.len()),
            (30, 300, EMPTY_NAMED)
        );
        assert_eq!(one.named[0].key.as_bytes(), b"k00");
        assert_eq!(one.named[9].key.as_bytes(), b"k09");
    }

    #[test]
    fn a_name_met_twice_is_two_keys() {
        let mut e = EmptyCollections::default();
        e.add(&empty(0, b"twice", TypeKind::Hash));
        e.add(&empty(0, b"twice", TypeKind::Hash));
        // One entry per key, as the summary check asks (min(keys, cap)).
        assert_eq!((e.keys, e.named.len()), (2, 2));
    }

    #[test]
    fn only_collections_without_elements_are_dropped_on_load() {
        for kind in [TypeKind::List, TypeKind::Set, TypeKind::ZSet, TypeKind::Hash] {
            assert!(is_dropped_on_load(kind, 0));
            assert!(!is_dropped_on_load(kind, 1));
        }
        for kind in [TypeKind::String, TypeKind::Stream, TypeKind::Module] {
            assert!(!is_dropped_on_load(kind, 0));
        }
    }
}
