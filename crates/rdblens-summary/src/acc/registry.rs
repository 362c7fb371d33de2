//! The registry of optional accumulators: the list that [`KeyStats`] and
//! [`Accumulators`] are generated from, and the trait each entry
//! implements.
//!
//! [`KeyStats`]: crate::KeyStats
//! [`Accumulators`]: crate::Accumulators

use super::counter::Counter;
use super::top::SharedRecord;
use super::Accumulate;
use crate::checker::{Checked, Checker};
use crate::facts::KeyFacts;
use crate::keyshape::KeyShape;
use crate::settings::Settings;

/// One key as the optional accumulators see it: its facts, the shape of its
/// name (scanned once for every name check) and its record, shared by every
/// list of key records it enters (made by the first that keeps it).
pub struct KeyInput<'a, 'f> {
    /// What the engine learnt of the key.
    pub facts: &'a KeyFacts<'f>,
    /// Its name's separator position and byte classes.
    pub shape: &'a KeyShape,
    /// The key's record, once a list has made it.
    pub record: &'a mut Option<SharedRecord>,
}

/// What a summary's check gives each accumulator: the summary's settings
/// and the totals its counts are bounded by.
pub struct CheckContext<'a> {
    /// The settings that shaped the accumulators.
    pub settings: &'a Settings,
    /// Every key's figures, summed.
    pub totals: &'a Counter,
}

/// An accumulator a run may leave empty, registered in
/// [`optional_accumulators!`]: how it is set up, folds a key and checks
/// itself in a summary read from a file; merging and finishing are
/// [`Accumulate`]'s.
pub(crate) trait KeyAccumulator: Accumulate + Sized {
    /// Whether it reads the values' element lengths (without, compact
    /// blobs need no walk: `Estimator::counting_by_header`).
    const READS_LENGTHS: bool;

    /// Empty, sized and shaped by the settings.
    fn new(s: &Settings) -> Self;

    /// Folds one key in (by default [`Accumulate::add`] of its facts).
    #[inline]
    fn add_key(&mut self, key: &mut KeyInput<'_, '_>) {
        self.add(key.facts)
    }

    /// Checks that it is one rdblens could have written (a summary file is
    /// hostile input); the error names the field.
    fn check(&self, c: &mut Checker, ctx: &CheckContext<'_>) -> Checked;
}

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
        }
    };
}
pub(crate) use optional_accumulators;
