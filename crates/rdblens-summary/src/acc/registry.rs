//! The traits of the accumulators: [`Accumulate`] (what every one does)
//! and `KeyAccumulator` (what the optional ones registered in
//! `optional_accumulators!`, in `acc/mod.rs`, add: set-up, the fold of a
//! key with its shared record, and the check of a summary file's copy).
//!
//! [`KeyStats`]: crate::KeyStats
//! [`Accumulators`]: crate::Accumulators

use super::counter::Counter;
use super::top::SharedRecord;
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

    /// Whether it keeps lists of key records `--top` long (held in memory
    /// and printed whole, so the command caps `--top`).
    const KEEPS_TOP_LISTS: bool = false;

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
