//! Accumulators: each gathers one aspect of the keyspace from [`KeyFacts`],
//! merges associatively and commutatively with another of its kind (so the
//! result does not depend on how keys were split across workers or files),
//! and serializes for mergeable summaries.
//!
//! The accumulators a run may leave empty (fewer report sections) are
//! registered in one list, `optional_accumulators!` in [`registry`]:
//! [`KeyStats`] (its fields, set-up, fold, merge, finish and check) and
//! [`Accumulators`] (one flag each) are generated from it, so a new one is
//! its own file implementing [`registry::KeyAccumulator`] and one entry in
//! the list (docs/architecture.md).
//!
//! [`KeyStats`]: crate::KeyStats
//! [`Accumulators`]: crate::Accumulators

pub mod access;
pub mod bounded;
mod buckets;
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

use crate::facts::KeyFacts;

/// What every accumulator does.
pub trait Accumulate {
    /// Folds one key in.
    fn add(&mut self, facts: &KeyFacts<'_>);
    /// Folds `other` in; must be associative and commutative.
    fn merge(&mut self, other: Self);
    /// Completes what `add` buffers (top-N lists with a large N); call once
    /// after the last `add`, before reading. A merge completes both sides.
    fn finish(&mut self) {}
}
