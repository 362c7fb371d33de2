//! Accumulators: each gathers one aspect of the keyspace from [`KeyFacts`](crate::KeyFacts),
//! merges associatively and commutatively with another of its kind (so the
//! result does not depend on how keys were split across workers or files),
//! and serializes for mergeable summaries.
//!
//! The accumulators a run may leave empty (fewer report sections) are
//! registered in one list, `optional_accumulators!` below: [`KeyStats`]
//! (its fields, set-up, fold, merge, finish and check) and
//! [`Accumulators`] (one flag each) are generated from it, so a new one is
//! its own file implementing `registry::KeyAccumulator`, declared here
//! with one entry in the list (docs/architecture.md).
//!
//! [`KeyStats`]: crate::KeyStats
//! [`Accumulators`]: crate::Accumulators

pub mod access;
pub mod bounded;
mod buckets;
pub mod composition;
pub mod counter;
pub mod empty;
pub mod expiry;
pub mod expiry_cells;
pub mod expiry_clusters;
pub mod expiry_codec;
pub mod expiry_sketch;
pub mod groups;
pub mod heat;
pub mod hist;
pub mod keysizes;
pub mod limits;
pub mod names;
pub mod prefix;
mod registered;
pub mod registry;
pub mod rules;
pub mod sizes;
pub mod slots;
pub mod top;
pub mod ttl;

pub use registry::Accumulate;

/// Version of the summary layout, which the list below decides; raised
/// on incompatible changes (a new entry is one: summary files change).
pub const SUMMARY_VERSION: u32 = 10;

/// The registry of optional accumulators, in the order they fold a key
/// (and are serialized in a summary): `field: type`, with the doc that
/// both the [`KeyStats`](crate::KeyStats) field and the
/// [`Accumulators`](crate::Accumulators) flag carry. Calls `$then!` with
/// the list; `summary.rs` declares both types from it.
macro_rules! optional_accumulators {
    ($then:ident) => {
        $then! {
            /// Keys measured against the compact-encoding limits of the target server.
            limits: $crate::acc::limits::Limits,
            /// The biggest keys, one bounded list per metric (and each shard's biggest key).
            top: $crate::acc::top::TopSet,
            /// Key-name lengths and naming problems.
            key_names: $crate::acc::names::KeyNames,
            /// The namespace tree, down to the prefix depth (also names expiry clusters).
            prefixes: $crate::acc::prefix::Prefixes,
            /// Keys by TTL bucket, relative to the reference time.
            ttl: $crate::acc::ttl::Ttl,
            /// When keys expire, by namespace, for the histogram and expiry clusters.
            expiry: $crate::acc::expiry::ExpiryHistogram,
            /// Keys and memory per cluster hash slot, and hash-tag use.
            slots: $crate::acc::slots::Slots,
            /// Idle times and LFU counters, where the file records them.
            access: $crate::acc::access::Access,
            /// Design-rule hits, key by key.
            rules: $crate::acc::rules::RuleHits,
            /// The biggest hot and cold keys (LRU/LFU dumps).
            heat: $crate::acc::heat::Heat,
            /// Redis 8's `INFO keysizes` histograms: keys per database, type and power-of-two length.
            keysizes: $crate::acc::keysizes::KeySizes,
            /// Each top-level namespace's keys and memory by type and encoding.
            composition: $crate::acc::composition::Composition,
        }
    };
}
pub(crate) use optional_accumulators;
