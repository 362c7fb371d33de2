//! The `shards` section as data: one row per input file (a shard of a
//! cluster, or any dump of a combined report) and how unevenly keys and
//! memory spread across them.

use rdblens_summary::acc::counter::Counter;
use rdblens_summary::acc::top::KeyRecord;
use rdblens_summary::shard::{format_ranges, slot_ranges};
use rdblens_summary::slot::SLOTS;
use rdblens_summary::Summary;
use serde::Serialize;

/// One file's row.
#[derive(Serialize)]
pub struct ShardJson<'s> {
    /// The file's path (or label).
    pub path: &'s str,
    /// The file's figures.
    #[serde(flatten)]
    pub totals: Counter,
    /// Share of all memory (0-1).
    pub memory_share: f64,
    /// `used_memory` predicted once the file is loaded (null without a
    /// prediction: key filters, a damaged file).
    pub predicted_used_memory: Option<u64>,
    /// The biggest key by estimated memory (null without keys or with `--top 0`).
    pub biggest_key: Option<&'s KeyRecord>,
    /// Slots holding keys.
    pub slots_used: u64,
    /// The slots holding keys, as `CLUSTER NODES` writes them but with
    /// commas: `0-5460,5462` (empty without keys).
    pub slot_ranges: String,
    #[serde(skip)]
    ranges: &'s [[u16; 2]],
}

impl ShardJson<'_> {
    /// The slots holding keys, as inclusive ranges.
    pub fn ranges(&self) -> &[[u16; 2]] {
        self.ranges
    }
}

/// How unevenly the shards are loaded.
#[derive(Serialize)]
pub struct ImbalanceJson<'s> {
    /// Memory of the heaviest shard over the mean (1.0 = even); null without memory.
    pub memory_max_over_mean: Option<f64>,
    /// Keys of the shard with the most keys over the mean; null without keys.
    pub keys_max_over_mean: Option<f64>,
    /// The shard with the most memory (the first in order on ties).
    pub heaviest_by_memory: Option<&'s str>,
    /// The shard with the most keys.
    pub heaviest_by_keys: Option<&'s str>,
}

/// The section.
#[derive(Serialize)]
pub struct ShardsJson<'s> {
    /// One row per file, in the order given.
    pub shards: Vec<ShardJson<'s>>,
    /// How unevenly they are loaded.
    pub imbalance: ImbalanceJson<'s>,
    /// Slots holding keys in more than one file (a slot being migrated,
    /// files that are not shards of one cluster, or the same shard twice),
    /// as ranges like `slot_ranges`.
    pub overlapping_slots: String,
    /// How many slots that is.
    pub overlapping_slots_count: u64,
    #[serde(skip)]
    overlapping: Vec<[u16; 2]>,
}

impl ShardsJson<'_> {
    /// The slots holding keys in more than one file, as inclusive ranges.
    pub fn overlapping(&self) -> &[[u16; 2]] {
        &self.overlapping
    }
}

const NO_RANGES: &[[u16; 2]] = &[];

/// The section for the files of `s`.
pub(crate) fn build(s: &Summary) -> ShardsJson<'_> {
    let total_memory: u64 = s
        .files
        .iter()
        .filter_map(|f| f.shard.as_ref())
        .map(|x| x.totals.memory)
        .sum();
    let shards: Vec<ShardJson<'_>> = s
        .files
        .iter()
        .map(|f| {
            let shard = f.shard.as_ref();
            let totals = shard.map(|x| x.totals).unwrap_or_default();
            ShardJson {
                path: &f.path,
                totals,
                memory_share: ratio(totals.memory, total_memory).unwrap_or(0.0),
                predicted_used_memory: f.used_memory.map(|u| u.predicted),
                biggest_key: shard.and_then(|x| x.biggest.as_ref()),
                slots_used: shard.map_or(0, |x| x.slots_used()),
                slot_ranges: shard.map_or(String::new(), |x| format_ranges(&x.slot_ranges)),
                ranges: shard.map_or(NO_RANGES, |x| &x.slot_ranges),
            }
        })
        .collect();
    let heaviest = |metric: fn(&Counter) -> u64| {
        // The first maximum, so ties name the earlier file.
        shards
            .iter()
            .fold(None::<&ShardJson<'_>>, |best, x| match best {
                Some(b) if metric(&b.totals) >= metric(&x.totals) => Some(b),
                _ => Some(x),
            })
            .filter(|x| metric(&x.totals) > 0)
    };
    let max_over_mean = |metric: fn(&Counter) -> u64| {
        let n = shards.len() as f64;
        let total: u64 = shards.iter().map(|x| metric(&x.totals)).sum();
        let max = heaviest(metric).map(|x| metric(&x.totals))?;
        Some(max as f64 / (total as f64 / n))
    };
    let memory = |c: &Counter| c.memory;
    let keys = |c: &Counter| c.keys;
    let imbalance = ImbalanceJson {
        memory_max_over_mean: max_over_mean(memory),
        keys_max_over_mean: max_over_mean(keys),
        heaviest_by_memory: heaviest(memory).map(|x| x.path),
        heaviest_by_keys: heaviest(keys).map(|x| x.path),
    };
    let mut seen = vec![0u32; SLOTS];
    for x in &shards {
        for &[a, b] in x.ranges {
            for slot in a..=b {
                if let Some(n) = seen.get_mut(usize::from(slot)) {
                    *n += 1;
                }
            }
        }
    }
    let overlapping = slot_ranges(seen.iter().map(|&n| n > 1));
    ShardsJson {
        shards,
        imbalance,
        overlapping_slots: format_ranges(&overlapping),
        overlapping_slots_count: count(&overlapping),
        overlapping,
    }
}

fn count(ranges: &[[u16; 2]]) -> u64 {
    ranges.iter().map(|[a, b]| u64::from(b - a) + 1).sum()
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}
