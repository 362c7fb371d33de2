//! small-key-sprawl's savings: what a namespace of small string keys would
//! take as hashes of ~`fields` fields each, keyed `<namespace>:<bucket>`
//! (the field being the rest of the key name).
//!
//! Each bucket is one listpack hash: a 7-byte listpack header and end byte
//! plus the entries (measured per key by the workers, in listpack.c's
//! encoding), rounded to a jemalloc size class; plus the per-key cost of the
//! bucket key itself: a 16-byte object, the key sds, a 24-byte dict entry
//! and ~11 bytes of bucket array. That per-key cost is the Redis 7.x layout;
//! newer layouts differ by a few bytes per bucket, i.e. well under 1 byte
//! per field, so one formula serves every target. Measured against a real
//! server in docs/audit.md.

use rdblens_memory::usable_size;
use rdblens_summary::acc::rules::SprawlTally;

/// Listpack header (total bytes, entry count) and end byte.
const LISTPACK_OVERHEAD: u64 = 7;
/// robj (16) + dictEntry (24) + bucket-array share at a 0.75 load (11).
const BUCKET_KEY_FIXED: u64 = 16 + 24 + 11;
/// Quantum 8 and 16 differ only below 64 bytes, where nothing here lands
/// except the bucket key's sds, whose rounding is a byte per bucket.
const QUANTUM: u64 = 8;

/// The estimate for one namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SprawlEstimate {
    /// Hashes the keys would go into (at least 1).
    pub buckets: u64,
    /// Memory of the buckets.
    pub bucketed: u64,
    /// What the keys hold now, minus `bucketed`.
    pub savings: u64,
}

fn digits(n: u64) -> u64 {
    n.max(1).ilog10() as u64 + 1
}

/// The estimate for a namespace whose small string keys are tallied in `t`,
/// its name `namespace_len` bytes long, split into hashes of `fields` fields
/// (at least 1) each.
pub fn estimate(t: &SprawlTally, namespace_len: u64, fields: u64) -> SprawlEstimate {
    let fields = fields.max(1);
    let buckets = t.keys.div_ceil(fields).max(1);
    let listpack = LISTPACK_OVERHEAD + t.entry_bytes / buckets;
    let key_len = namespace_len + 1 + digits(buckets - 1);
    // sdshdr8: 3 header bytes and the terminating NUL.
    let per_bucket = BUCKET_KEY_FIXED + usable_size(key_len + 4, QUANTUM) + usable_size(listpack, QUANTUM);
    let bucketed = buckets.saturating_mul(per_bucket);
    SprawlEstimate {
        buckets,
        bucketed,
        savings: t.memory.saturating_sub(bucketed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hundred_fields_per_bucket() {
        // 10,000 keys "user:<6 digits>" with 20-byte values: field entries
        // of 5 bytes (24-bit ints) and value entries of 22 bytes.
        let t = SprawlTally {
            keys: 10_000,
            memory: 10_000 * 100,
            keyspace: 0,
            used_memory: 10_000 * 100,
            expiring: 0,
            entry_bytes: 10_000 * 27,
            max_field_len: 6,
            max_value_len: 20,
        };
        let e = estimate(&t, 4, 100);
        assert_eq!(e.buckets, 100);
        // listpack 2,707 B -> 3,072; key "user:99" -> 16; 51 fixed.
        assert_eq!(e.bucketed, 100 * (3072 + 16 + 51));
        assert_eq!(e.savings, 1_000_000 - 313_900);
    }
}
