//! What each namespace is made of: for every top-level namespace (a key's
//! name up to its first separator), its keys and estimated memory by type
//! and encoding, so that a namespace's memory can be traced to the kind of
//! value that holds it (`session` is 80 % hash tables: the hashes that
//! missed their listpack limit). Keys without the separator are one group
//! of their own.
//!
//! Namespaces are kept exactly up to [`NAMESPACES_KEPT`] (the bottom-k of
//! their hashes, so the same whatever the order keys arrive in or how the
//! shards merge); the rest are folded into one group.

use serde::{Deserialize, Serialize};

use super::bounded::{BoundedMap, Mergeable};
use super::registry::{CheckContext, KeyAccumulator, KeyInput};
use super::Accumulate;
use crate::checker::{checked_sum, Checked, Checker};
use crate::facts::KeyFacts;
use crate::settings::Settings;

/// Top-level namespaces kept exactly; the rest are folded into one group.
/// A keyspace has tens of them where its names are namespaced at all; the
/// cap bounds a keyspace whose names are not (each key its own namespace).
pub const NAMESPACES_KEPT: usize = 1000;

/// The keys of one type in one encoding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// The type (`hash`, `string`... `module` for every module type).
    #[serde(rename = "type")]
    pub kind: String,
    /// The encoding once loaded on the target server (`OBJECT ENCODING`).
    pub encoding: String,
    /// Keys.
    pub keys: u64,
    /// Their estimated memory (`MEMORY USAGE`), summed.
    pub memory: u64,
}

/// A group of keys by type and encoding, the parts sorted by (type,
/// encoding) so that equal groups are equal whatever the order keys came in.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Mix {
    /// One part per type and encoding present.
    pub parts: Vec<Part>,
}

impl Mix {
    /// Adds `keys` keys of `memory` bytes of `kind` in `encoding`.
    fn add(&mut self, kind: &str, encoding: &str, keys: u64, memory: u64) {
        let at = self
            .parts
            .binary_search_by(|p| (p.kind.as_str(), p.encoding.as_str()).cmp(&(kind, encoding)));
        match at {
            Ok(i) => {
                let p = &mut self.parts[i];
                p.keys = p.keys.saturating_add(keys);
                p.memory = p.memory.saturating_add(memory);
            }
            Err(i) => self.parts.insert(
                i,
                Part {
                    kind: kind.to_string(),
                    encoding: encoding.to_string(),
                    keys,
                    memory,
                },
            ),
        }
    }

    /// Its keys.
    pub fn keys(&self) -> u64 {
        self.parts.iter().fold(0, |n, p| n.saturating_add(p.keys))
    }

    /// Their estimated memory.
    pub fn memory(&self) -> u64 {
        self.parts.iter().fold(0, |n, p| n.saturating_add(p.memory))
    }

    fn check(&self, c: &mut Checker, total_keys: u64) -> Checked {
        c.at("parts", |c| {
            for (i, p) in self.parts.iter().enumerate() {
                c.at(i, |c| {
                    for (field, name) in [("type", &p.kind), ("encoding", &p.encoding)] {
                        let known = name.len() <= 16 && name.bytes().all(|b| b.is_ascii_lowercase());
                        if !known {
                            return Err(c.fail_at(field, format!("{name:?} is no type or encoding name")));
                        }
                    }
                    c.at_most("keys", p.keys, "totals.keys", total_keys)?;
                    c.count("memory", p.memory)
                })?;
            }
            let sorted = self
                .parts
                .windows(2)
                .all(|w| (&w[0].kind, &w[0].encoding) < (&w[1].kind, &w[1].encoding));
            if !sorted {
                return Err(c.fail("not sorted by type and encoding, or one twice"));
            }
            let keys = checked_sum(self.parts.iter().map(|p| p.keys));
            c.at_most("keys", keys.unwrap_or(u64::MAX), "totals.keys", total_keys)
        })
    }
}

impl Mergeable for Mix {
    fn merge_from(&mut self, other: &Self) {
        for p in &other.parts {
            self.add(&p.kind, &p.encoding, p.keys, p.memory);
        }
    }
}

/// Every top-level namespace's keys by type and encoding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Composition {
    /// The namespace separator (`--separator`).
    pub separator: u8,
    /// By namespace (the name up to the first separator).
    pub namespaces: BoundedMap<Mix>,
    /// The keys whose names hold no separator.
    pub unprefixed: Mix,
}

impl Composition {
    /// Empty, namespaces ending at `separator`.
    pub fn new(separator: u8) -> Self {
        Composition {
            separator,
            namespaces: BoundedMap::new(NAMESPACES_KEPT),
            unprefixed: Mix::default(),
        }
    }

    fn add_in(&mut self, f: &KeyFacts<'_>, namespace: Option<&[u8]>) {
        let mix = match namespace {
            Some(ns) => self.namespaces.slot(ns),
            None => &mut self.unprefixed,
        };
        mix.add(f.kind.name(), f.encoding.as_str(), 1, f.memory);
    }
}

impl Accumulate for Composition {
    /// Without the name's shape: the namespace ends at the first separator.
    fn add(&mut self, f: &KeyFacts<'_>) {
        let namespace = f
            .key
            .iter()
            .position(|&b| b == self.separator)
            .map(|end| &f.key[..end]);
        self.add_in(f, namespace);
    }

    fn merge(&mut self, other: Self) {
        self.namespaces.merge(other.namespaces);
        self.unprefixed.merge_from(&other.unprefixed);
    }
}

impl KeyAccumulator for Composition {
    const READS_LENGTHS: bool = false;

    fn new(s: &Settings) -> Self {
        Composition::new(s.separator)
    }

    #[inline]
    fn add_key(&mut self, k: &mut KeyInput<'_, '_>) {
        let key = k.facts.key;
        let namespace = k.shape.first_separator.map(|end| &key[..end]);
        self.add_in(k.facts, namespace);
    }

    fn check(&self, c: &mut Checker, x: &CheckContext<'_>) -> Checked {
        if self.separator != x.settings.separator {
            let msg = format!(
                "{}, settings.separator is {}",
                self.separator, x.settings.separator
            );
            return Err(c.fail_at("separator", msg));
        }
        let total = x.totals.keys;
        c.bounded("namespaces", &self.namespaces, |c, mix| mix.check(c, total))?;
        c.at("unprefixed", |c| self.unprefixed.check(c, total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &'static [u8], memory: u64) -> KeyFacts<'static> {
        KeyFacts::synthetic(name, None, memory)
    }

    #[test]
    fn namespaces_by_type_and_encoding_whatever_the_order() {
        let keys = [
            key(b"session:1", 100),
            key(b"session:2", 60),
            key(b"user:9", 70),
            key(b"loose", 5),
        ];
        let mut forward = Composition::new(b':');
        keys.iter().for_each(|k| forward.add(k));
        let (mut a, mut b) = (Composition::new(b':'), Composition::new(b':'));
        keys.iter()
            .rev()
            .enumerate()
            .for_each(|(i, k)| if i % 2 == 0 { a.add(k) } else { b.add(k) });
        a.merge(b);
        assert_eq!(forward, a);
        let session = &forward.namespaces.entries[b"session".as_slice()];
        assert_eq!((session.keys(), session.memory()), (2, 160));
        assert_eq!(session.parts.len(), 1);
        assert_eq!((forward.unprefixed.keys(), forward.unprefixed.memory()), (1, 5));
    }
}
