//! Time to live relative to a reference time (the snapshot's ctime by default).

use serde::{Deserialize, Serialize};

use super::Accumulate;
use crate::facts::KeyFacts;

/// Bucket labels, in order: no expiry, already expired, then upper bounds.
pub const TTL_BUCKETS: [&str; 10] = [
    "no expiry",
    "expired",
    "< 1m",
    "< 10m",
    "< 1h",
    "< 6h",
    "< 1d",
    "< 7d",
    "< 30d",
    ">= 30d",
];

const BOUNDS_MS: [i64; 7] = [
    60_000,
    600_000,
    3_600_000,
    21_600_000,
    86_400_000,
    604_800_000,
    2_592_000_000,
];

/// Which TTL bucket an expiry falls in, relative to `now_ms`.
pub fn ttl_bucket(expiry_ms: Option<i64>, now_ms: i64) -> usize {
    match expiry_ms {
        None => 0,
        Some(t) if t <= now_ms => 1,
        Some(t) => {
            // Both come from the file (expiry, ctime): any i64.
            let ttl = t.saturating_sub(now_ms);
            2 + BOUNDS_MS.iter().position(|&b| ttl < b).unwrap_or(BOUNDS_MS.len())
        }
    }
}

/// Keys and memory per TTL bucket.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TtlBuckets {
    /// Keys per bucket, in the order of [`TTL_BUCKETS`].
    pub keys: [u64; 10],
    /// Their estimated memory per bucket, bytes.
    pub memory: [u64; 10],
}

impl TtlBuckets {
    /// Counts one key of `memory` bytes in `bucket` (an index into [`TTL_BUCKETS`]).
    pub fn add_at(&mut self, bucket: usize, memory: u64) {
        self.keys[bucket] += 1;
        self.memory[bucket] += memory;
    }

    /// Adds `o`'s counts in, saturating.
    pub fn merge_from(&mut self, o: &TtlBuckets) {
        for i in 0..10 {
            self.keys[i] = self.keys[i].saturating_add(o.keys[i]);
            self.memory[i] = self.memory[i].saturating_add(o.memory[i]);
        }
    }
}

/// Keys and memory by TTL bucket, relative to a reference time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ttl {
    /// Reference time, unix ms.
    pub now_ms: i64,
    /// Keys and memory per bucket.
    pub buckets: TtlBuckets,
}

impl Accumulate for Ttl {
    fn add(&mut self, f: &KeyFacts<'_>) {
        self.buckets
            .add_at(ttl_bucket(f.expiry_ms, self.now_ms), f.memory);
    }

    fn merge(&mut self, other: Self) {
        self.buckets.merge_from(&other.buckets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets() {
        let now = 1_000_000_000_000;
        assert_eq!(ttl_bucket(None, now), 0);
        assert_eq!(ttl_bucket(Some(now), now), 1);
        assert_eq!(ttl_bucket(Some(now + 59_999), now), 2);
        assert_eq!(ttl_bucket(Some(now + 60_000), now), 3);
        assert_eq!(ttl_bucket(Some(now + 86_400_000), now), 7);
        assert_eq!(ttl_bucket(Some(now + 40 * 86_400_000), now), 9);
    }
}
