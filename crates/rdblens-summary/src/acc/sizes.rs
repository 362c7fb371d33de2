//! Value sizes per type with percentiles (p50/p90/p99/max of memory, length
//! and largest element), as `redis-cli --keystats` shows them.
//!
//! The display histogram ([`super::hist::Histogram`]) has power-of-two
//! buckets above 1024, so its percentiles can be off by up to 2x. Here each
//! power of two is split into 64 buckets (a log-linear layout, as
//! HdrHistogram's): a percentile is exact below 128 and at most 1/64 (1.6%)
//! below the true value above, in at most 3,776 counters per distribution
//! whatever the number of keys, and two distributions merge by adding
//! counters, so the result is the same for any split into threads or shards.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::buckets::{DenseCounts, Layout};
use crate::facts::KeyFacts;

/// Sub-buckets per power of two: 2^6 = 64.
const SUB_BITS: u32 = 6;
/// Values below this have a bucket each (exact).
const LINEAR: u64 = 1 << (SUB_BITS + 1);
/// Buckets in all: the linear ones, then 64 per power of two from 2^7 to
/// 2^63 (the bound on a distribution's counters; checked in the tests).
#[cfg(test)]
const SLOTS: usize = LINEAR as usize + (64 - (SUB_BITS as usize + 1)) * (1 << SUB_BITS);

fn index_of(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let top_bit = 63 - v.leading_zeros();
    let sub = (v >> (top_bit - SUB_BITS)) & ((1 << SUB_BITS) - 1);
    LINEAR as usize + (top_bit - SUB_BITS - 1) as usize * (1 << SUB_BITS) + sub as usize
}

fn lower_bound(i: usize) -> u64 {
    if i < LINEAR as usize {
        return i as u64;
    }
    let j = i - LINEAR as usize;
    let top_bit = (j >> SUB_BITS) as u32 + SUB_BITS + 1;
    let sub = (j & ((1 << SUB_BITS) - 1)) as u64;
    (1u64 << top_bit) | (sub << (top_bit - SUB_BITS))
}

/// A mergeable distribution of non-negative integers with percentiles
/// accurate to 1/64 (see the module comment).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(from = "DistributionRepr", into = "DistributionRepr")]
pub struct Distribution {
    /// Per bucket; only as long as the largest bucket used.
    counts: DenseCounts<LogLinear>,
    /// Values added.
    pub count: u64,
    /// The largest value added (exact).
    pub max: u64,
}

/// Equal when they hold the same counts (however long the arrays grew).
impl PartialEq for Distribution {
    fn eq(&self, o: &Self) -> bool {
        (self.count, self.max) == (o.count, o.max) && self.counts == o.counts
    }
}

impl Eq for Distribution {}

/// The serialized form: non-empty buckets by lower bound.
#[derive(Serialize, Deserialize)]
struct DistributionRepr {
    buckets: BTreeMap<u64, u64>,
    count: u64,
    max: u64,
}

impl From<Distribution> for DistributionRepr {
    fn from(d: Distribution) -> Self {
        DistributionRepr {
            buckets: d.buckets().collect(),
            count: d.count,
            max: d.max,
        }
    }
}

impl From<DistributionRepr> for Distribution {
    fn from(r: DistributionRepr) -> Self {
        let mut d = Distribution {
            counts: DenseCounts::default(),
            count: r.count,
            max: r.max,
        };
        for (lower, n) in r.buckets {
            let c = d.slot(lower);
            *c = c.saturating_add(n);
        }
        d
    }
}

/// 64 buckets per power of two (see the module comment).
#[derive(Clone, Debug)]
struct LogLinear;

impl Layout for LogLinear {
    // Up to 3,776 counters, most of them empty for any one distribution:
    // grown to the largest bucket used.
    const PREALLOCATED: usize = 0;
    fn index_of(v: u64) -> usize {
        index_of(v)
    }
    fn lower_bound(i: usize) -> u64 {
        lower_bound(i)
    }
}

impl Distribution {
    fn slot(&mut self, v: u64) -> &mut u64 {
        self.counts.slot(v)
    }

    /// Non-empty buckets in order: (lower bound, count).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.buckets()
    }

    /// Counts `v`.
    pub fn add(&mut self, v: u64) {
        *self.slot(v) += 1;
        self.count += 1;
        self.max = self.max.max(v);
    }

    /// Bucket counts adding up to `count`, the maximum in the last bucket.
    pub(crate) fn check(&self, c: &mut crate::checker::Checker) -> crate::checker::Checked {
        c.count("count", self.count)?;
        let buckets = crate::checker::checked_sum(self.buckets().map(|(_, n)| n));
        c.sum_is("buckets", buckets, "count", self.count)?;
        match self.buckets().last() {
            None if self.max == 0 => Ok(()),
            Some((lower, _)) if index_of(lower) == index_of(self.max) => Ok(()),
            _ => Err(c.fail_at("max", format!("{} is not in the last bucket", self.max))),
        }
    }

    /// Adds `o`'s counts (saturating: a summary file may claim anything).
    pub fn merge(&mut self, o: &Distribution) {
        self.counts.merge(&o.counts);
        self.count = self.count.saturating_add(o.count);
        self.max = self.max.max(o.max);
    }

    /// The value at percentile `p` (0..=100): the lower bound of the bucket
    /// that holds the `ceil(p% * count)`-th smallest value, never above the
    /// maximum (p100 is the maximum itself); `None` when empty.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((p.clamp(0.0, 100.0) / 100.0 * self.count as f64).ceil() as u64).max(1);
        if rank >= self.count {
            return Some(self.max);
        }
        let mut seen = 0u64;
        for (lower, n) in self.buckets() {
            seen = seen.saturating_add(n);
            if seen >= rank {
                return Some(lower.min(self.max));
            }
        }
        Some(self.max)
    }
}

/// The three size distributions of one type's values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueSizes {
    /// Estimated memory per key (as `MEMORY USAGE`).
    pub memory: Distribution,
    /// Elements per collection; bytes per string.
    pub length: Distribution,
    /// Length of the largest element of a collection (strings: none).
    pub largest_element: Distribution,
}

impl ValueSizes {
    /// Counts one key's memory, length and (collections only) largest element.
    pub fn add(&mut self, f: &KeyFacts<'_>) {
        self.memory.add(f.memory);
        self.length.add(f.elements);
        if f.kind != rdblens_parser::TypeKind::String {
            self.largest_element.add(f.max_element_len);
        }
    }

    /// Each distribution's shape; as many lengths as memory figures, and
    /// no more largest elements.
    pub(crate) fn check(&self, c: &mut crate::checker::Checker) -> crate::checker::Checked {
        c.at("memory", |c| self.memory.check(c))?;
        c.at("length", |c| self.length.check(c))?;
        c.at("largest_element", |c| self.largest_element.check(c))?;
        if self.length.count != self.memory.count {
            return Err(c.fail_at(
                "length.count",
                format!("{}, memory.count is {}", self.length.count, self.memory.count),
            ));
        }
        c.at_most(
            "largest_element.count",
            self.largest_element.count,
            "memory.count",
            self.memory.count,
        )
    }

    /// Adds `o`'s counts in, saturating.
    pub fn merge(&mut self, o: &ValueSizes) {
        self.memory.merge(&o.memory);
        self.length.merge(&o.length);
        self.largest_element.merge(&o.largest_element);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_range_with_relative_width_at_most_one_64th() {
        assert_eq!(index_of(u64::MAX), SLOTS - 1);
        for i in 0..SLOTS - 1 {
            let (lo, next) = (lower_bound(i), lower_bound(i + 1));
            assert_eq!(index_of(lo), i);
            assert_eq!(index_of(next - 1), i);
            if lo >= LINEAR {
                assert!((next - lo) * 64 <= lo, "bucket {i}: {lo}..{next}");
            } else {
                assert_eq!(next, lo + 1);
            }
        }
    }

    #[test]
    fn percentiles_are_exact_below_128_and_within_a_64th_above() {
        let mut d = Distribution::default();
        for v in 1..=100 {
            d.add(v);
        }
        assert_eq!(d.percentile(50.0), Some(50));
        assert_eq!(d.percentile(90.0), Some(90));
        assert_eq!(d.percentile(99.0), Some(99));
        assert_eq!(d.percentile(100.0), Some(100));
        let mut big = Distribution::default();
        for v in 1..=1_000_000u64 {
            big.add(v * 1000);
        }
        for (p, exact) in [(50.0, 500_000_000u64), (90.0, 900_000_000), (99.0, 990_000_000)] {
            let got = big.percentile(p).unwrap(); // ok: unit test
            assert!(
                got <= exact && (exact - got) * 64 <= exact,
                "p{p}: {got} vs {exact}"
            );
        }
        assert_eq!(big.percentile(100.0), Some(1_000_000_000));
        assert_eq!(Distribution::default().percentile(50.0), None);
    }

    #[test]
    fn merging_and_serializing_keep_every_count() {
        let (mut a, mut b, mut all) = (
            Distribution::default(),
            Distribution::default(),
            Distribution::default(),
        );
        for v in (0..5000u64).map(|i| i * i) {
            if v % 3 == 0 {
                a.add(v)
            } else {
                b.add(v)
            }
            all.add(v);
        }
        a.merge(&b);
        assert_eq!(a, all);
        let json = serde_json::to_string(&a).unwrap(); // ok: unit test
        assert_eq!(serde_json::from_str::<Distribution>(&json).unwrap(), all); // ok: unit test
    }
}
