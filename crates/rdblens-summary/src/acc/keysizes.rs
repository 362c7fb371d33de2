//! Redis 8's `INFO keysizes` histograms: per database and per type
//! (strings, lists, sets, sorted sets, hashes), the keys counted in
//! power-of-two bins of their length, as the server keeps them
//! (docs/keysizes.md).
//!
//! The server's rules (redis `src/db.c` `updateKeysizesHist`, `src/util.h`
//! `log2ceil`): the length is STRLEN for strings (the digits of an integer
//! string), LLEN, SCARD, ZCARD and HLEN (fields with a TTL included) for the
//! others; a length L >= 1 goes to bin floor(log2(L)), shown as 2^bin.
//! A length of 0 (only strings can have one) is counted in no bin by Redis
//! 8.0's first version and in a bin `0` by later 8.x releases, so it is
//! kept apart here. Streams and module values are not counted.

use std::collections::BTreeMap;

use rdblens_parser::TypeKind;
use serde::{Deserialize, Serialize};

use super::registry::{CheckContext, KeyAccumulator};
use super::Accumulate;
use crate::checker::{checked_sum, Checked, Checker};
use crate::facts::KeyFacts;
use crate::settings::Settings;

/// Bins of one histogram: one per power of two a `u64` length can reach.
pub const BINS: usize = 64;

/// The types the server keeps a histogram for, in the order `INFO
/// keysizes` prints them, with the name of each one's line.
pub const TYPES: [(TypeKind, &str); 5] = [
    (TypeKind::String, "distrib_strings_sizes"),
    (TypeKind::List, "distrib_lists_items"),
    (TypeKind::Set, "distrib_sets_items"),
    (TypeKind::ZSet, "distrib_zsets_items"),
    (TypeKind::Hash, "distrib_hashes_items"),
];

/// The bin of a length of at least 1: floor(log2(len)).
pub fn bin_of(len: u64) -> Option<usize> {
    (len > 0).then(|| 63 - len.leading_zeros() as usize)
}

/// One type's histogram in one database.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "BinsRepr", into = "BinsRepr")]
pub struct Bins {
    /// Keys of length 0 (empty strings).
    pub zero: u64,
    /// Keys per bin: `counts[i]` holds lengths in [2^i, 2^(i+1)).
    pub counts: [u64; BINS],
}

impl Default for Bins {
    fn default() -> Self {
        Bins {
            zero: 0,
            counts: [0; BINS],
        }
    }
}

impl Bins {
    /// Counts one key of length `len`.
    pub fn add(&mut self, len: u64) {
        match bin_of(len) {
            Some(b) => self.counts[b] += 1,
            None => self.zero += 1,
        }
    }

    /// Adds `o`'s counts bin by bin, saturating.
    pub fn merge(&mut self, o: &Bins) {
        self.zero = self.zero.saturating_add(o.zero);
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a = a.saturating_add(*b);
        }
    }

    /// The non-empty bins, as (bin, keys), smallest first.
    pub fn nonempty(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (i, n))
    }

    /// Keys counted, the empty ones too (`None` past `u64`).
    pub fn keys(&self) -> Option<u64> {
        checked_sum(self.counts.iter().copied().chain([self.zero]))
    }
}

/// The serialized form: the non-empty bins only.
#[derive(Serialize, Deserialize)]
struct BinsRepr {
    #[serde(default)]
    zero: u64,
    /// Bin (the exponent) -> keys.
    bins: BTreeMap<u32, u64>,
}

impl From<Bins> for BinsRepr {
    fn from(b: Bins) -> Self {
        BinsRepr {
            zero: b.zero,
            bins: b.nonempty().map(|(i, n)| (i as u32, n)).collect(),
        }
    }
}

impl TryFrom<BinsRepr> for Bins {
    type Error = String;
    fn try_from(r: BinsRepr) -> Result<Self, String> {
        let mut b = Bins {
            zero: r.zero,
            ..Bins::default()
        };
        for (i, n) in r.bins {
            let slot = usize::try_from(i).ok().and_then(|i| b.counts.get_mut(i));
            match slot {
                Some(slot) => *slot = n,
                None => return Err(format!("keysizes bin {i} is past the last ({})", BINS - 1)),
            }
        }
        Ok(b)
    }
}

/// One database's histograms, one per type of [`TYPES`], in that order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DbKeySizes {
    /// STRLEN of the strings.
    pub strings: Bins,
    /// LLEN of the lists.
    pub lists: Bins,
    /// SCARD of the sets.
    pub sets: Bins,
    /// ZCARD of the sorted sets.
    pub zsets: Bins,
    /// HLEN of the hashes.
    pub hashes: Bins,
}

impl DbKeySizes {
    /// The histogram of a type the server counts; `None` for the others.
    pub fn of_mut(&mut self, kind: TypeKind) -> Option<&mut Bins> {
        Some(match kind {
            TypeKind::String => &mut self.strings,
            TypeKind::List => &mut self.lists,
            TypeKind::Set => &mut self.sets,
            TypeKind::ZSet => &mut self.zsets,
            TypeKind::Hash => &mut self.hashes,
            _ => return None,
        })
    }

    /// The histograms with their line names, in the server's order.
    pub fn each(&self) -> [(&'static str, &Bins); 5] {
        [
            (TYPES[0].1, &self.strings),
            (TYPES[1].1, &self.lists),
            (TYPES[2].1, &self.sets),
            (TYPES[3].1, &self.zsets),
            (TYPES[4].1, &self.hashes),
        ]
    }
}

/// The histograms of every database that has a counted key, by number.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeySizes {
    /// Database number -> its histograms.
    pub dbs: BTreeMap<u64, DbKeySizes>,
}

impl Accumulate for KeySizes {
    fn add(&mut self, f: &KeyFacts<'_>) {
        // Streams and module values have no histogram (and make no entry
        // for their database: the server prints no line for it).
        if !TYPES.iter().any(|(k, _)| *k == f.kind) {
            return;
        }
        if let Some(bins) = self.dbs.entry(f.db).or_default().of_mut(f.kind) {
            bins.add(f.elements);
        }
    }

    fn merge(&mut self, o: Self) {
        for (db, theirs) in o.dbs {
            let ours = self.dbs.entry(db).or_default();
            ours.strings.merge(&theirs.strings);
            ours.lists.merge(&theirs.lists);
            ours.sets.merge(&theirs.sets);
            ours.zsets.merge(&theirs.zsets);
            ours.hashes.merge(&theirs.hashes);
        }
    }
}

impl KeyAccumulator for KeySizes {
    /// Element counts come from headers; no element is read.
    const READS_LENGTHS: bool = false;

    fn new(_: &Settings) -> Self {
        KeySizes::default()
    }

    fn check(&self, c: &mut Checker, x: &CheckContext<'_>) -> Checked {
        let mut counted = Some(0u64);
        for (db, hists) in &self.dbs {
            for (name, bins) in hists.each() {
                counted = counted.zip(bins.keys()).and_then(|(a, b)| a.checked_add(b));
                c.at(format!("dbs.{db}.{name}"), |c| c.count("zero", bins.zero))?;
            }
        }
        match counted {
            Some(n) => c.at_most("dbs", n, "totals.keys", x.totals.keys),
            None => Err(c.fail_at("dbs", "the bins' keys add up past 2^64")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_floor_log2_of_the_length() {
        let cases = [
            (1, 0),
            (2, 1),
            (3, 1),
            (4, 2),
            (1023, 9),
            (1024, 10),
            (1 << 20, 20),
            (u64::MAX, 63),
        ];
        for (len, bin) in cases {
            assert_eq!(bin_of(len), Some(bin), "{len}");
        }
        assert_eq!(bin_of(0), None);
    }

    #[test]
    fn merges_add_up_bin_by_bin_and_serialize_sparse() {
        let mut a = KeySizes::default();
        let mut b = KeySizes::default();
        for len in [0, 1, 3, 3, 1024] {
            a.dbs.entry(0).or_default().strings.add(len);
        }
        b.dbs.entry(0).or_default().strings.add(2);
        b.dbs.entry(7).or_default().hashes.add(600);
        a.merge(b);
        let strings = &a.dbs[&0].strings;
        assert_eq!(
            (
                strings.zero,
                strings.counts[0],
                strings.counts[1],
                strings.counts[10]
            ),
            (1, 1, 3, 1)
        );
        assert_eq!(a.dbs[&7].hashes.counts[9], 1);
        let json = serde_json::to_string(&a.dbs[&0].strings).unwrap(); // ok: unit test
        assert_eq!(json, r#"{"zero":1,"bins":{"0":1,"1":3,"10":1}}"#);
        let back: Bins = serde_json::from_str(&json).unwrap(); // ok: unit test
        assert_eq!(&back, strings);
        let past = serde_json::from_str::<Bins>(r#"{"bins":{"64":1}}"#).unwrap_err();
        assert!(
            past.to_string().contains("keysizes bin 64 is past the last (63)"),
            "{past}"
        );
    }
}
