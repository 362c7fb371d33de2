//! Value sizes per type (section `bigkeys`): p50/p90/p99/max of memory,
//! length and largest element, as `redis-cli --keystats` shows them.

use rdblens_summary::acc::sizes::{Distribution, ValueSizes};
use rdblens_summary::KeyStats;
use serde::Serialize;

/// Percentiles of one figure of one type's keys, within 1/64 of the true
/// value (the maximum is exact).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// The largest value (exact).
    pub max: u64,
}

impl Percentiles {
    /// `None` for an empty distribution.
    pub fn of(d: &Distribution) -> Option<Percentiles> {
        Some(Percentiles {
            p50: d.percentile(50.0)?,
            p90: d.percentile(90.0)?,
            p99: d.percentile(99.0)?,
            max: d.max,
        })
    }
}

/// The value sizes of one type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValueSizesJson {
    /// The type (`string`, `hash`, ...).
    #[serde(rename = "type")]
    pub type_name: String,
    /// Keys of the type.
    pub keys: u64,
    /// Estimated memory per key (bytes).
    pub memory: Percentiles,
    /// Elements per collection; bytes per string.
    pub length: Percentiles,
    /// Bytes of a collection's largest element (absent for strings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub largest_element: Option<Percentiles>,
}

/// One entry per type with keys, in name order.
pub fn build(k: &KeyStats) -> Vec<ValueSizesJson> {
    k.value_sizes
        .iter()
        .filter_map(|(name, v): (&str, &ValueSizes)| {
            Some(ValueSizesJson {
                type_name: name.to_string(),
                keys: v.memory.count,
                memory: Percentiles::of(&v.memory)?,
                length: Percentiles::of(&v.length)?,
                largest_element: Percentiles::of(&v.largest_element),
            })
        })
        .collect()
}
