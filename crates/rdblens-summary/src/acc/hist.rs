//! A bounded, mergeable histogram of non-negative integers (element counts,
//! key-name lengths, idle times, LFU counters).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::buckets::{DenseCounts, Layout};

/// Values below this are counted exactly; above, in power-of-two buckets.
const EXACT: u64 = 1024;

/// Slots of the dense form: one per value below [`EXACT`], then one per
/// power of two from 2^10 to 2^63.
const SLOTS: usize = EXACT as usize + 54;

/// A mergeable distribution of non-negative integers: exact below 1024,
/// power-of-two buckets above, so memory is bounded whatever the input.
///
/// Counts live in a dense array (every key adds to two of these; a B-tree
/// insert per add was ~3% of a report); the serialized form is the sparse
/// map of non-empty buckets.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(try_from = "HistogramRepr", into = "HistogramRepr")]
pub struct Histogram {
    /// Every bucket's counter once the first value is added.
    counts: DenseCounts<ExactThenPowersOfTwo>,
    /// Values added.
    pub count: u64,
    /// Their sum.
    pub sum: u128,
    /// The smallest value added; `None` when empty.
    pub min: Option<u64>,
    /// The largest value added; `None` when empty.
    pub max: Option<u64>,
}

#[derive(Serialize, Deserialize)]
struct HistogramRepr {
    /// Bucket lower bound -> count.
    buckets: BTreeMap<u64, u64>,
    count: u64,
    sum: u128,
    min: Option<u64>,
    max: Option<u64>,
}

impl From<Histogram> for HistogramRepr {
    fn from(h: Histogram) -> Self {
        HistogramRepr {
            buckets: h.buckets().collect(),
            count: h.count,
            sum: h.sum,
            min: h.min,
            max: h.max,
        }
    }
}

impl TryFrom<HistogramRepr> for Histogram {
    type Error = String;
    /// Each bucket must be named by its lower bound (so no two share a
    /// slot); the counts' agreement is [`Histogram::check`]'s.
    fn try_from(r: HistogramRepr) -> Result<Self, String> {
        let mut h = Histogram {
            counts: DenseCounts::default(),
            count: r.count,
            sum: r.sum,
            min: r.min,
            max: r.max,
        };
        for (b, n) in r.buckets {
            if bucket_of(b) != b {
                return Err(format!(
                    "histogram bucket {b} is not a bucket's lower bound ({})",
                    bucket_of(b)
                ));
            }
            *h.slot(b) = n;
        }
        Ok(h)
    }
}

impl PartialEq for Histogram {
    fn eq(&self, o: &Self) -> bool {
        (self.count, self.sum, self.min, self.max) == (o.count, o.sum, o.min, o.max)
            && self.counts == o.counts
    }
}

impl Eq for Histogram {}

/// Lower bound of the bucket holding `v`.
pub fn bucket_of(v: u64) -> u64 {
    if v < EXACT {
        v
    } else {
        1u64 << (63 - v.leading_zeros())
    }
}

fn index_of(v: u64) -> usize {
    if v < EXACT {
        v as usize
    } else {
        EXACT as usize + (63 - v.leading_zeros() as usize) - 10
    }
}

fn lower_bound(i: usize) -> u64 {
    if i < EXACT as usize {
        i as u64
    } else {
        1u64 << (i - EXACT as usize + 10)
    }
}

/// Exact below [`EXACT`], then one bucket per power of two.
#[derive(Clone, Debug)]
struct ExactThenPowersOfTwo;

impl Layout for ExactThenPowersOfTwo {
    // 1,078 counters, allocated whole: every key adds to two histograms
    // (a B-tree insert per add was ~3% of a report).
    const PREALLOCATED: usize = SLOTS;
    fn index_of(v: u64) -> usize {
        index_of(v)
    }
    fn lower_bound(i: usize) -> u64 {
        lower_bound(i)
    }
}

impl Histogram {
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
        self.sum += u128::from(v);
        self.min = Some(self.min.map_or(v, |m| m.min(v)));
        self.max = Some(self.max.map_or(v, |m| m.max(v)));
    }

    /// Adds `o`'s counts in, saturating.
    pub fn merge(&mut self, o: Histogram) {
        self.counts.merge(&o.counts);
        self.count = self.count.saturating_add(o.count);
        self.sum = self.sum.saturating_add(o.sum);
        self.min = match (self.min, o.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max = self.max.max(o.max);
    }

    /// The shape a histogram built by [`Self::add`] and [`Self::merge`]
    /// has: bucket counts adding up to `count`, `min` and `max` in the
    /// first and last buckets, a `sum` between `count * min` and
    /// `count * max`.
    pub(crate) fn check(&self, c: &mut crate::checker::Checker) -> crate::checker::Checked {
        c.count("count", self.count)?;
        let buckets = crate::checker::checked_sum(self.buckets().map(|(_, n)| n));
        c.sum_is("buckets", buckets, "count", self.count)?;
        let (min, max) = match (self.min, self.max) {
            (None, None) if self.count == 0 && self.sum == 0 => return Ok(()),
            (Some(min), Some(max)) if self.count > 0 && min <= max => (min, max),
            _ => {
                return Err(c.fail(format!(
                    "count {}, sum {}, min {:?}, max {:?} do not fit together",
                    self.count, self.sum, self.min, self.max
                )))
            }
        };
        let first = self.buckets().next().map(|(b, _)| b);
        let last = self.buckets().last().map(|(b, _)| b);
        if first != Some(bucket_of(min)) || last != Some(bucket_of(max)) {
            return Err(c.fail(format!(
                "min {min} and max {max} are not in the first and last buckets"
            )));
        }
        let count = u128::from(self.count);
        if self.sum < count * u128::from(min) || self.sum > count * u128::from(max) {
            return Err(c.fail_at(
                "sum",
                format!("{} is not between count * min and count * max", self.sum),
            ));
        }
        Ok(())
    }

    /// The mean of the values added; `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// The value at quantile `q` (0..=1): exact below 1024, else the lower
    /// bound of its power-of-two bucket (clamped to the observed max).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, n) in self.buckets() {
            seen += n;
            if seen >= rank {
                return Some(b.min(self.max.unwrap_or(b)).max(self.min.unwrap_or(0)));
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_below_1024() {
        let mut h = Histogram::default();
        for v in 1..=100 {
            h.add(v);
        }
        assert_eq!(h.quantile(0.5), Some(50));
        assert_eq!(h.quantile(0.9), Some(90));
        assert_eq!(h.quantile(0.99), Some(99));
        assert_eq!(h.quantile(1.0), Some(100));
        assert_eq!(h.mean(), Some(50.5));
        let mut big = Histogram::default();
        big.add(5000);
        assert_eq!(big.buckets().collect::<Vec<_>>(), vec![(4096, 1)]);
        assert_eq!(index_of(u64::MAX), SLOTS - 1);
        assert_eq!(lower_bound(index_of(u64::MAX)), 1 << 63);
        let json = serde_json::to_string(&big).unwrap(); // ok: unit test
        assert_eq!(
            json,
            r#"{"buckets":{"4096":1},"count":1,"sum":5000,"min":5000,"max":5000}"#
        );
        assert_eq!(serde_json::from_str::<Histogram>(&json).unwrap(), big); // ok: unit test
        h.merge(big);
        assert_eq!((h.count, h.min, h.max), (101, Some(1), Some(5000)));
    }
}
