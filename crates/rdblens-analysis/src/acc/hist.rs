use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Values below this are counted exactly; above, in power-of-two buckets.
const EXACT: u64 = 1024;

/// A mergeable distribution of non-negative integers: exact below 1024,
/// power-of-two buckets above, so memory is bounded whatever the input.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histogram {
    /// Bucket lower bound -> count.
    pub buckets: BTreeMap<u64, u64>,
    pub count: u64,
    pub sum: u128,
    pub min: Option<u64>,
    pub max: Option<u64>,
}

/// Lower bound of the bucket holding `v`.
pub fn bucket_of(v: u64) -> u64 {
    if v < EXACT {
        v
    } else {
        1u64 << (63 - v.leading_zeros())
    }
}

impl Histogram {
    pub fn add(&mut self, v: u64) {
        *self.buckets.entry(bucket_of(v)).or_default() += 1;
        self.count += 1;
        self.sum += u128::from(v);
        self.min = Some(self.min.map_or(v, |m| m.min(v)));
        self.max = Some(self.max.map_or(v, |m| m.max(v)));
    }

    pub fn merge(&mut self, o: Histogram) {
        for (b, n) in o.buckets {
            *self.buckets.entry(b).or_default() += n;
        }
        self.count += o.count;
        self.sum += o.sum;
        self.min = match (self.min, o.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max = self.max.max(o.max);
    }

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
        for (&b, &n) in &self.buckets {
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
        assert_eq!(big.buckets.keys().copied().collect::<Vec<_>>(), vec![4096]);
        h.merge(big);
        assert_eq!((h.count, h.min, h.max), (101, Some(1), Some(5000)));
    }
}
