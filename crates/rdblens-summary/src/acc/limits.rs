//! Keys past, or just under, their compact-encoding limits, and what a
//! compact encoding would save.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::top::{Metric, SharedRecord, TopKeys};
use super::Accumulate;
use crate::facts::KeyFacts;

/// Keys past, or within 10% under, one compact-encoding limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LimitGroup {
    /// The limit and the keys' figures (the report's JSON borrows them as
    /// they are, flattened there).
    pub counts: LimitCounts,
    /// Largest keys over the limit.
    pub over_examples: TopKeys,
}

/// One compact-encoding limit's value and the figures of the keys past or
/// near it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LimitCounts {
    /// The limit's value on the target server (see [`LimitCheck::threshold`](crate::LimitCheck::threshold)).
    pub threshold: u64,
    /// Keys past the limit.
    pub over_keys: u64,
    /// Their estimated memory, bytes.
    pub over_memory: u64,
    /// Memory saved if every key over the limit were compact (where the model can tell).
    pub over_savings: u64,
    /// Over by at most 2x (a config change would bring them back).
    pub over_by_small_margin: u64,
    /// Within 10% under the limit.
    pub near_keys: u64,
    /// Estimated memory of the keys near the limit, bytes.
    pub near_memory: u64,
}

impl LimitCounts {
    /// Adds `other`'s keys (the threshold is the same: one target profile).
    fn merge(&mut self, other: &LimitCounts) {
        self.over_keys = self.over_keys.saturating_add(other.over_keys);
        self.over_memory = self.over_memory.saturating_add(other.over_memory);
        self.over_savings = self.over_savings.saturating_add(other.over_savings);
        self.over_by_small_margin = self
            .over_by_small_margin
            .saturating_add(other.over_by_small_margin);
        self.near_keys = self.near_keys.saturating_add(other.near_keys);
        self.near_memory = self.near_memory.saturating_add(other.near_memory);
    }
}

/// Keys past or near their compact-encoding limits, by limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Example keys kept per limit.
    pub examples: usize,
    /// By limit name (`hash-max-listpack-entries`...).
    pub groups: BTreeMap<String, LimitGroup>,
}

impl Limits {
    /// Empty, keeping `examples` example keys per limit.
    pub fn new(examples: usize) -> Self {
        Limits {
            examples,
            groups: BTreeMap::new(),
        }
    }

    /// [`Accumulate::add`] sharing the key's record with its other lists.
    pub(crate) fn add_sharing(&mut self, f: &KeyFacts<'_>, record: &mut Option<SharedRecord>) {
        let Some(check) = f.limit else { return };
        if !check.over() && !check.near() {
            return;
        }
        let n = self.examples;
        let g = self
            .groups
            .entry(check.limit.to_string())
            .or_insert_with(|| LimitGroup {
                counts: LimitCounts {
                    threshold: check.threshold,
                    ..LimitCounts::default()
                },
                over_examples: TopKeys::new(Metric::Memory, n),
            });
        let c = &mut g.counts;
        if check.over() {
            c.over_keys += 1;
            c.over_memory += f.memory;
            c.over_savings += f
                .compact_memory
                .map_or(0, |compact| f.memory.saturating_sub(compact));
            c.over_by_small_margin += u64::from(check.measured <= check.threshold.saturating_mul(2));
            g.over_examples.add_sharing(f, record);
        } else {
            c.near_keys += 1;
            c.near_memory += f.memory;
        }
    }
}

impl Accumulate for Limits {
    fn add(&mut self, f: &KeyFacts<'_>) {
        self.add_sharing(f, &mut None);
    }

    fn finish(&mut self) {
        self.groups.values_mut().for_each(|g| g.over_examples.finish());
    }

    fn merge(&mut self, other: Self) {
        for (name, o) in other.groups {
            match self.groups.get_mut(&name) {
                None => {
                    self.groups.insert(name, o);
                }
                Some(g) => {
                    g.counts.merge(&o.counts);
                    g.over_examples.merge(o.over_examples);
                }
            }
        }
    }
}
