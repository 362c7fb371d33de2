//! Accumulators: each gathers one aspect of the keyspace from [`KeyFacts`],
//! merges associatively and commutatively with another of its kind (so the
//! result does not depend on how keys were split across workers or files),
//! and serializes for mergeable summaries.

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
pub mod hist;
pub mod limits;
pub mod names;
pub mod prefix;
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
