//! What a worker learns about one key: everything the accumulators need,
//! computed in one decoding pass (plus the memory model's own pass).

use rdblens_memory::{Encoding, Shape};
use rdblens_parser::TypeKind;

use crate::limits::LimitCheck;
use crate::slot::key_slot;

/// The facts about one key. Borrows the key; owns nothing per element.
#[derive(Clone, Debug)]
pub struct KeyFacts<'k> {
    /// Database number (from the last SELECTDB).
    pub db: u64,
    /// The key's bytes.
    pub key: &'k [u8],
    /// The logical type.
    pub kind: TypeKind,
    /// Module type name for module values (`vectorset`, `ReJSON-RL`...).
    pub module: Option<String>,
    /// The on-disk value type name, e.g. `hash_listpack`.
    pub rdb_type: &'static str,
    /// The encoding the key would have once loaded on the target server.
    pub encoding: Encoding,
    /// STRLEN for strings; members, fields or entries for collections; 0 for most module values.
    pub elements: u64,
    /// Longest element (member, field, value, stream field or value), in bytes.
    pub max_element_len: u64,
    /// Sum of the element lengths in bytes (hash fields and values both count).
    pub payload_bytes: u64,
    /// Bytes the value takes in the file.
    pub serialized_bytes: u64,
    /// Estimated `MEMORY USAGE` on the target server, in bytes (see `memory_estimated`).
    pub memory: u64,
    /// False when the memory model has no estimate (module values): `memory`
    /// then holds the serialized size.
    pub memory_estimated: bool,
    /// What the value would cost in a compact encoding, when it is not in one.
    pub compact_memory: Option<u64>,
    /// Bytes the keyspace spends on the key beyond `MEMORY USAGE` (bucket share, allocator rounding, expires entry).
    pub keyspace_overhead: u64,
    /// The part of `keyspace_overhead` that is the key's guessed share of
    /// the bucket arrays (counted exactly per database for `used_memory`).
    pub bucket_share: u64,
    /// Allocator rounding inside the value that `MEMORY USAGE` leaves out
    /// (dict entries, quicklist nodes and dict structs counted by `sizeof`).
    pub value_rounding: u64,
    /// What `MEMORY USAGE` counts that the server does not allocate for the
    /// key (a shared integer's object, a stream's rough rax figure).
    pub usage_overcount: u64,
    /// Absolute expiry time in unix ms; `None` without a TTL.
    pub expiry_ms: Option<i64>,
    /// The integer a string value holds, where the file stores it as one
    /// (the small-key-sprawl tally prices its listpack entry exactly).
    pub int_value: Option<i64>,
    /// LRU idle time in seconds, when the file records it (LRU eviction policies).
    pub idle_seconds: Option<u64>,
    /// LFU access counter (0-255), when the file records it (LFU eviction policies).
    pub lfu_freq: Option<u8>,
    /// Redis Enterprise's RAM_LRU value (opcode 107), whose meaning is
    /// unpublished: counted, never read as an idle time.
    pub ram_lru: Option<u64>,
    /// Cluster hash slot of the key (0-16383).
    pub slot: u16,
    /// Bytes the value's LZF-compressed strings and blobs take in the file; 0 without any.
    pub lzf_stored_bytes: u64,
    /// Their size once decompressed, in bytes.
    pub lzf_uncompressed_bytes: u64,
    /// The compact-encoding limit the key is measured against; `None` when none applies (strings, streams, modules...).
    pub limit: Option<LimitCheck>,
    /// The sums the memory estimate was made of (for split plans).
    pub shape: Shape,
}

impl<'k> KeyFacts<'k> {
    /// What the key adds to `used_memory` besides the keyspace bucket
    /// arrays, which is what deleting it frees (the arrays do not shrink):
    /// its `MEMORY USAGE` (0 for module values), the keyspace's per-key
    /// spending beyond it, the allocator rounding inside the value, less
    /// what it counts but the server does not allocate (a shared integer).
    pub fn adds_to_used_memory(&self) -> u64 {
        let usage = if self.memory_estimated { self.memory } else { 0 };
        (usage + self.keyspace_overhead.saturating_sub(self.bucket_share) + self.value_rounding)
            .saturating_sub(self.usage_overcount)
    }

    /// A small string key with these name, expiry and memory, as tests and
    /// synthetic keyspaces feed accumulators directly.
    pub fn synthetic(key: &'k [u8], expiry_ms: Option<i64>, memory: u64) -> Self {
        KeyFacts {
            db: 0,
            key,
            kind: TypeKind::String,
            module: None,
            rdb_type: "string",
            encoding: Encoding::Embstr,
            elements: 1,
            max_element_len: 8,
            payload_bytes: 8,
            serialized_bytes: 10,
            memory,
            memory_estimated: true,
            compact_memory: None,
            keyspace_overhead: 8,
            bucket_share: 0,
            value_rounding: 0,
            usage_overcount: 0,
            expiry_ms,
            int_value: None,
            idle_seconds: None,
            lfu_freq: None,
            ram_lru: None,
            slot: key_slot(key),
            lzf_stored_bytes: 0,
            lzf_uncompressed_bytes: 0,
            limit: None,
            shape: Shape::default(),
        }
    }

    /// Type name for grouping: the logical type, or `module:<name>`.
    pub fn type_name(&self) -> String {
        match &self.module {
            Some(m) => format!("module:{m}"),
            None => self.kind.name().to_string(),
        }
    }
}
