//! The dense bucket counts both distribution types keep: the display
//! histogram ([`super::hist::Histogram`], exact below 1024 then powers of
//! two) and the percentile distribution ([`super::sizes::Distribution`],
//! log-linear). A [`Layout`] says which bucket a value falls in; the
//! counts, their non-empty buckets and their merge are the same code.

use std::marker::PhantomData;

/// How values map to buckets.
pub(crate) trait Layout {
    /// Counters allocated at the first value: every bucket at once (a
    /// small, fixed layout, so that `add` never grows the array), or 0 to
    /// grow to the largest bucket used (a long layout most of which stays
    /// empty).
    const PREALLOCATED: usize;
    /// The bucket holding `v`.
    fn index_of(v: u64) -> usize;
    /// The smallest value of bucket `i`.
    fn lower_bound(i: usize) -> u64;
}

/// One counter per bucket, as long as the layout or the largest bucket
/// used. Two of them are equal when their non-empty buckets are.
#[derive(Clone, Debug)]
pub(crate) struct DenseCounts<L> {
    counts: Vec<u64>,
    layout: PhantomData<L>,
}

impl<L> Default for DenseCounts<L> {
    fn default() -> Self {
        DenseCounts {
            counts: Vec::new(),
            layout: PhantomData,
        }
    }
}

impl<L: Layout> DenseCounts<L> {
    /// The counter of the bucket holding `v`.
    #[inline]
    pub(crate) fn slot(&mut self, v: u64) -> &mut u64 {
        let i = L::index_of(v);
        if i >= self.counts.len() {
            self.counts.resize((i + 1).max(L::PREALLOCATED), 0);
        }
        &mut self.counts[i]
    }

    /// Non-empty buckets in order: (lower bound, count).
    pub(crate) fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (L::lower_bound(i), n))
    }

    /// Adds `o`'s counts, saturating (a summary file may claim anything).
    pub(crate) fn merge(&mut self, o: &DenseCounts<L>) {
        if self.counts.len() < o.counts.len() {
            self.counts.resize(o.counts.len().max(L::PREALLOCATED), 0);
        }
        for (mine, theirs) in self.counts.iter_mut().zip(&o.counts) {
            *mine = mine.saturating_add(*theirs);
        }
    }
}

impl<L: Layout> PartialEq for DenseCounts<L> {
    fn eq(&self, o: &Self) -> bool {
        self.buckets().eq(o.buckets())
    }
}

impl<L: Layout> Eq for DenseCounts<L> {}
