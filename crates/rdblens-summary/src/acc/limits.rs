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
    /// Largest keys over the limit.
    pub over_examples: TopKeys,
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
                threshold: check.threshold,
                over_keys: 0,
                over_memory: 0,
                over_savings: 0,
                over_by_small_margin: 0,
                near_keys: 0,
                near_memory: 0,
                over_examples: TopKeys::new(Metric::Memory, n),
            });
        if check.over() {
            g.over_keys += 1;
            g.over_memory += f.memory;
            g.over_savings += f.compact_memory.map_or(0, |c| f.memory.saturating_sub(c));
            g.over_by_small_margin += u64::from(check.measured <= check.threshold.saturating_mul(2));
            g.over_examples.add_sharing(f, record);
        } else {
            g.near_keys += 1;
            g.near_memory += f.memory;
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
                    g.over_keys = g.over_keys.saturating_add(o.over_keys);
                    g.over_memory = g.over_memory.saturating_add(o.over_memory);
                    g.over_savings = g.over_savings.saturating_add(o.over_savings);
                    g.over_by_small_margin = g.over_by_small_margin.saturating_add(o.over_by_small_margin);
                    g.near_keys = g.near_keys.saturating_add(o.near_keys);
                    g.near_memory = g.near_memory.saturating_add(o.near_memory);
                    g.over_examples.merge(o.over_examples);
                }
            }
        }
    }
}
