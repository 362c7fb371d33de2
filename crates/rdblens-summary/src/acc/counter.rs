//! Keys, expiries, memory, bytes and elements summed over a group of keys.

use serde::{Deserialize, Serialize};

use crate::facts::KeyFacts;

/// Keys, expiries, memory, bytes and elements of a group of keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counter {
    /// Keys counted.
    pub keys: u64,
    /// Of them, keys with a TTL.
    pub keys_with_expiry: u64,
    /// Estimated memory (MEMORY USAGE equivalent; serialized size for opaque module values).
    pub memory: u64,
    /// Memory the keyspace spends on these keys beyond MEMORY USAGE (bucket share, expires entry).
    pub keyspace_overhead: u64,
    /// Bytes of the values in the file.
    pub serialized_bytes: u64,
    /// Their elements, summed (see [`KeyFacts::elements`]).
    pub elements: u64,
}

impl Counter {
    /// Counts one key.
    pub fn add(&mut self, f: &KeyFacts<'_>) {
        self.keys += 1;
        self.keys_with_expiry += u64::from(f.expiry_ms.is_some());
        self.memory += f.memory;
        self.keyspace_overhead += f.keyspace_overhead;
        self.serialized_bytes += f.serialized_bytes;
        self.elements += f.elements;
    }

    /// Adds `o` in, saturating (counters of summaries read from files can
    /// be anything; the summary check refuses totals past its bound).
    pub fn merge(&mut self, o: &Counter) {
        self.keys = self.keys.saturating_add(o.keys);
        self.keys_with_expiry = self.keys_with_expiry.saturating_add(o.keys_with_expiry);
        self.memory = self.memory.saturating_add(o.memory);
        self.keyspace_overhead = self.keyspace_overhead.saturating_add(o.keyspace_overhead);
        self.serialized_bytes = self.serialized_bytes.saturating_add(o.serialized_bytes);
        self.elements = self.elements.saturating_add(o.elements);
    }
}

/// Merges two maps of counters key by key.
pub fn merge_map<K: Ord>(
    into: &mut std::collections::BTreeMap<K, Counter>,
    from: std::collections::BTreeMap<K, Counter>,
) {
    for (k, c) in from {
        into.entry(k).or_default().merge(&c);
    }
}
