//! What a plan is: the scheme a key or namespace is split by, the
//! buckets' limits, the memory before and after, and the totals per
//! namespace and overall. The planners (`keys.rs`, `zsets.rs`,
//! `sprawl.rs`, `migrate.rs`) fill these in; the renderers read them.

use rdblens_summary::rules::{RuleId, Severity};
use rdblens_summary::KeyName;
use serde::Serialize;

/// How a key or namespace is split.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheme {
    /// Hash or set: bucket = hash of the field/member modulo N.
    HashBuckets,
    /// Sorted set: consecutive score ranges, so ranks and score ranges
    /// survive (a rank is the rank in the bucket plus the buckets above).
    ScoreRanges,
    /// List that keeps its order: consecutive index (or time) ranges.
    ListRanges,
    /// String: N parts of consecutive bytes, read back with MGET.
    StringParts,
    /// Stream: N streams, by a hash of the producer's entity id.
    StreamSplit,
    /// Small strings of a namespace folded into hashes of ~100 fields.
    NamespaceHashes,
}

impl Scheme {
    /// Kebab-case name, as in JSON output: `hash-buckets`, `list-ranges`, ...
    pub fn name(self) -> &'static str {
        match self {
            Scheme::HashBuckets => "hash-buckets",
            Scheme::ScoreRanges => "score-ranges",
            Scheme::ListRanges => "list-ranges",
            Scheme::StringParts => "string-parts",
            Scheme::StreamSplit => "stream-split",
            Scheme::NamespaceHashes => "namespace-hashes",
        }
    }

    /// Whether elements find their bucket by a hash (so bucket sizes
    /// spread), not by consecutive ranges (sizes as cut).
    pub fn fills_by_hash(self) -> bool {
        matches!(
            self,
            Scheme::HashBuckets | Scheme::StreamSplit | Scheme::NamespaceHashes
        )
    }
}

/// The compact-encoding limit the buckets are sized against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BucketLimit {
    /// The config directive (`hash-max-listpack-entries`), or the design
    /// rule (`big-collection.warn`) when no compact encoding is possible.
    pub name: String,
    /// The limit's value in its own unit (elements; bytes for `big-string.warn`).
    pub value: u64,
}

/// What a plan splits. Serialized as `key` or `namespace`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanKind {
    /// One big key, split into parts.
    Key,
    /// A namespace of small string keys, folded into hashes.
    Namespace,
}

/// One plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    /// `key` or `namespace`.
    pub kind: PlanKind,
    /// Database of the key; `None` for a namespace plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db: Option<u64>,
    /// The key to split; `None` for a namespace plan.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub key: Option<KeyName>,
    /// The key's namespace (first segment), or the namespace planned.
    pub namespace: String,
    /// The findings this plan answers.
    pub rules: Vec<RuleId>,
    /// The worst severity among those findings.
    pub severity: Severity,
    /// The value's type (`hash`, `list`, ...; `string` for a namespace plan).
    #[serde(rename = "type")]
    pub type_name: String,
    /// The key's encoding now (`string` for a namespace plan).
    pub encoding_before: String,
    /// How the split is done.
    pub scheme: Scheme,
    /// N: how many keys the value or namespace is split into.
    pub buckets: u64,
    /// Names of the new keys: `<0..N-1>` stands for the bucket number.
    pub key_pattern: String,
    /// How an element finds its bucket.
    pub bucket_by: String,
    /// The variant that keeps every bucket in one cluster slot.
    pub hash_tag_pattern: String,
    /// One sentence: what the hash-tag variant costs and what it buys.
    pub hash_tag_cost: String,
    /// Elements now (string: bytes; namespace: keys).
    pub elements: u64,
    /// Elements per bucket on average.
    pub per_bucket: u64,
    /// Elements in the fullest bucket at 99 % confidence (the binomial
    /// maximum of N buckets, [`sizing::fullest`]); ranges and parts: their size.
    pub max_per_bucket: u64,
    /// The limit the buckets are sized to stay under.
    pub limit: BucketLimit,
    /// Growth the buckets absorb before their fullest (at 99 %) passes the
    /// limit (0.25 = 25% more elements).
    pub headroom: f64,
    /// The encoding the new keys get on the target (`OBJECT ENCODING` name).
    pub encoding_after: String,
    /// Why the buckets cannot be compact, or what config they need; for a
    /// sorted set, why score ranges and not hash buckets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Another way to fix the key, with its memory: for a sorted set, one
    /// key trimmed to its top (ZREMRANGEBYRANK).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alternative: Option<String>,
    /// What deleting the key(s) now frees from the server's `used_memory`,
    /// in bytes: their `MEMORY USAGE` and keyspace entries, plus the
    /// allocator rounding `MEMORY USAGE` leaves out, less the keyspace
    /// bucket arrays' share (they do not shrink) and the objects of shared
    /// integers 0-9999 (never freed).
    pub used_memory_before: u64,
    /// What creating the new keys adds to `used_memory`, in bytes (their
    /// expires entries included when they carry the key's TTL).
    pub used_memory_after: u64,
    /// The change of `used_memory` the split makes: `used_memory_before`
    /// minus `used_memory_after` (negative: the split costs memory).
    pub saved: i64,
    /// `MEMORY USAGE` of the key(s) now, summed, in bytes.
    pub memory_before: u64,
    /// `MEMORY USAGE` of the new keys, summed, in bytes.
    pub memory_after: u64,
    /// `memory_before` minus `memory_after`: the change of the keys'
    /// `MEMORY USAGE` sum (negative: the split costs memory).
    pub memory_usage_saved: i64,
    /// Keyspace overhead MEMORY USAGE leaves out (dict buckets, expires
    /// entries) of the key(s) now, in bytes.
    pub keyspace_before: u64,
    /// The same keyspace overhead for the new keys, in bytes.
    pub keyspace_after: u64,
    /// `used_memory_after` with the hash-tag names (2 bytes longer).
    pub hash_tag_used_memory_after: u64,
    /// `memory_after` with the hash-tag names (2 bytes longer).
    pub hash_tag_memory_after: u64,
    /// What the split does to command latency, in words.
    pub latency: String,
    /// Migration steps that do not block the server, in order.
    pub migration: Vec<String>,
    /// The server the memory is estimated for (e.g. `redis-7.2.4`).
    pub target: String,
}

impl Plan {
    /// Adds what the keyspace tables of the database give back (or take)
    /// to `used_memory_before` (or `used_memory_after`), then sets the
    /// savings.
    pub(crate) fn settle_with_tables(&mut self, tables_freed: i64) {
        if tables_freed >= 0 {
            self.used_memory_before += tables_freed as u64;
        } else {
            self.used_memory_after += tables_freed.unsigned_abs();
        }
        self.settle();
    }

    /// Sets the two savings from the before and after figures.
    fn settle(&mut self) {
        self.saved = self.used_memory_before as i64 - self.used_memory_after as i64;
        self.memory_usage_saved = self.memory_before as i64 - self.memory_after as i64;
    }
}

/// Plans of one namespace, summed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// The namespace; `None` for the total over every plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Plans summed.
    pub plans: u64,
    /// Sum of the plans' `used_memory_before`, in bytes.
    pub used_memory_before: u64,
    /// Sum of the plans' `used_memory_after`, in bytes.
    pub used_memory_after: u64,
    /// Sum of the plans' `saved`: the change of `used_memory`, in bytes
    /// (negative: the splits cost memory).
    pub saved: i64,
    /// Sum of the plans' `memory_before`, in bytes.
    pub memory_before: u64,
    /// Sum of the plans' `memory_after`, in bytes.
    pub memory_after: u64,
    /// Sum of the plans' `memory_usage_saved`, in bytes.
    pub memory_usage_saved: i64,
    /// Sum of the plans' `keyspace_before`, in bytes.
    pub keyspace_before: u64,
    /// Sum of the plans' `keyspace_after`, in bytes.
    pub keyspace_after: u64,
}

impl Totals {
    pub(crate) fn add(&mut self, p: &Plan) {
        self.plans += 1;
        self.used_memory_before += p.used_memory_before;
        self.used_memory_after += p.used_memory_after;
        self.memory_usage_saved += p.memory_usage_saved;
        self.memory_before += p.memory_before;
        self.memory_after += p.memory_after;
        self.keyspace_before += p.keyspace_before;
        self.keyspace_after += p.keyspace_after;
        self.saved += p.saved;
    }
}

/// Every plan, with totals per namespace and overall.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Plans {
    /// The server the memory is estimated for.
    pub target: String,
    /// The jemalloc quantum the memory is estimated with (8 or 16): the
    /// allocator build the report chose, or `--jemalloc-quantum`.
    pub jemalloc_quantum: u64,
    /// Big keys first (most severe, then most memory), then namespaces.
    pub plans: Vec<Plan>,
    /// Most memory saved first.
    pub namespaces: Vec<Totals>,
    /// Every plan summed.
    pub total: Totals,
}
