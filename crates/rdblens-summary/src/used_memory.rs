//! The `used_memory` a server would report once it has loaded a file: what
//! an operator sizes an instance by, and more than the sum of `MEMORY
//! USAGE` (the keyspace's tables and entries, and allocator rounding that
//! `MEMORY USAGE` counts by `sizeof`: dict entries of 24 bytes are 32 on a
//! quantum-16 jemalloc, which on a collection-heavy dump is 3 % of the
//! total).
//!
//! Summed key by key in the main pass ([`UsedMemorySums`]), completed per
//! file with the keyspace bucket arrays (exact from each database's key
//! counts) and an idle server's baseline ([`UsedMemory::predict`]). The
//! same sum, over a sample of the keys and under both allocator builds, is
//! the evidence the build is chosen by (`crate::allocator`).

use std::collections::BTreeMap;

use rdblens_memory::allocator::{keyspace_tables, BASELINE};
use rdblens_memory::Profile;
use serde::{Deserialize, Serialize};

use crate::acc::counter::Counter;
use crate::acc::ttl::ttl_bucket;
use crate::facts::KeyFacts;

/// [`ttl_bucket`]'s bucket of keys already expired.
const EXPIRED: usize = 1;

/// What the keys add to `used_memory`, summed key by key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsedMemorySums {
    /// Estimated `MEMORY USAGE` of the keys with an estimate.
    pub values: u64,
    /// What the keyspace spends on the keys beyond `MEMORY USAGE`, but the
    /// bucket arrays counted per database: dict entries' and key names'
    /// allocator rounding, expires entries.
    pub keyspace_entries: u64,
    /// Allocator rounding inside the values that `MEMORY USAGE` leaves out.
    pub value_rounding: u64,
    /// What `MEMORY USAGE` counts that is not allocated for the keys.
    pub usage_overcount: u64,
    /// Module values, whose memory only the module knows: left out.
    pub unestimated_keys: u64,
    /// Keys already expired at the reference time (the `ttl` section's
    /// `expired` bucket), which a primary drops while loading: left out.
    #[serde(default)]
    pub expired_keys: u64,
}

impl UsedMemorySums {
    /// Counts one key, as of `now_ms` (the reference time of TTLs).
    pub fn add(&mut self, f: &KeyFacts<'_>, now_ms: i64) {
        if ttl_bucket(f.expiry_ms, now_ms) == EXPIRED {
            self.expired_keys += 1;
            return;
        }
        if f.memory_estimated {
            self.values += f.memory;
        } else {
            self.unestimated_keys += 1;
        }
        self.keyspace_entries += f.keyspace_overhead.saturating_sub(f.bucket_share);
        self.value_rounding += f.value_rounding;
        self.usage_overcount += f.usage_overcount;
    }

    /// Adds `o` in, saturating (summaries read from files can hold anything).
    pub fn merge(&mut self, o: &UsedMemorySums) {
        self.values = self.values.saturating_add(o.values);
        self.keyspace_entries = self.keyspace_entries.saturating_add(o.keyspace_entries);
        self.value_rounding = self.value_rounding.saturating_add(o.value_rounding);
        self.usage_overcount = self.usage_overcount.saturating_add(o.usage_overcount);
        self.unestimated_keys = self.unestimated_keys.saturating_add(o.unestimated_keys);
        self.expired_keys = self.expired_keys.saturating_add(o.expired_keys);
    }
}

/// The `used_memory` predicted for the target server once it has loaded
/// one file, and what it is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsedMemory {
    /// The prediction: `values + keyspace + value_rounding + baseline -
    /// usage_overcount`.
    pub predicted: u64,
    /// Estimated `MEMORY USAGE` of the keys (the report's memory total,
    /// module values left out).
    pub values: u64,
    /// The keyspace: bucket arrays of the keys and expires tables (exact
    /// from each database's key counts), dict entries' and key names'
    /// rounding, expires entries.
    pub keyspace: u64,
    /// Allocator rounding inside the values that `MEMORY USAGE` leaves out.
    pub value_rounding: u64,
    /// What `MEMORY USAGE` counts that the server does not allocate for
    /// the keys: the objects of integers 0-9999, which keys share (up to
    /// Redis 8.0 and Valkey 8.0, without an LRU or LFU policy), and how far
    /// the rough figure `MEMORY USAGE` gives streams' radix trees (up to
    /// Redis 8.0) exceeds their allocations.
    pub usage_overcount: u64,
    /// An idle server's own `used_memory` (0.82-1.12 MB across releases).
    pub baseline: u64,
    /// Module values left out (their memory only the module knows).
    pub unestimated_keys: u64,
    /// Keys already expired at the report's reference time, left out: a
    /// primary drops them while loading (a replica would keep them).
    pub expired_keys: u64,
}

impl UsedMemory {
    /// The prediction for `profile`'s server holding the keys of `sums`,
    /// in the databases of `databases` (keys and keys with a TTL each).
    pub fn predict(profile: &Profile, sums: &UsedMemorySums, databases: &BTreeMap<u64, Counter>) -> Self {
        let tables: u64 = databases
            .values()
            .map(|db| keyspace_tables(profile, db.keys, db.keys_with_expiry).0)
            .sum();
        let keyspace = sums.keyspace_entries.saturating_add(tables);
        UsedMemory {
            predicted: sums
                .values
                .saturating_add(keyspace)
                .saturating_add(sums.value_rounding)
                .saturating_add(BASELINE)
                .saturating_sub(sums.usage_overcount),
            values: sums.values,
            keyspace,
            value_rounding: sums.value_rounding,
            usage_overcount: sums.usage_overcount,
            baseline: BASELINE,
            unestimated_keys: sums.unestimated_keys,
            expired_keys: sums.expired_keys,
        }
    }
}

impl UsedMemory {
    /// The predictions of several files (the shards of a cluster, each a
    /// server of its own: a baseline each) added part by part; `None`
    /// unless every file has one.
    pub fn total<'a>(files: impl IntoIterator<Item = Option<&'a UsedMemory>>) -> Option<UsedMemory> {
        let mut sum: Option<UsedMemory> = None;
        for u in files {
            let u = u?;
            sum = Some(match sum {
                None => *u,
                Some(s) => UsedMemory {
                    predicted: s.predicted.saturating_add(u.predicted),
                    values: s.values.saturating_add(u.values),
                    keyspace: s.keyspace.saturating_add(u.keyspace),
                    value_rounding: s.value_rounding.saturating_add(u.value_rounding),
                    usage_overcount: s.usage_overcount.saturating_add(u.usage_overcount),
                    baseline: s.baseline.saturating_add(u.baseline),
                    unestimated_keys: s.unestimated_keys.saturating_add(u.unestimated_keys),
                    expired_keys: s.expired_keys.saturating_add(u.expired_keys),
                },
            });
        }
        sum
    }
}
