//! What one file (one shard of a cluster) holds, kept beside its
//! [`FileInfo`](crate::FileInfo) so a combined report (or a merge of
//! summaries made on different hosts) can still break figures down per
//! shard: keys, memory, the biggest key and the slot ranges seen.

use serde::{Deserialize, Serialize};

use crate::acc::counter::Counter;
use crate::acc::top::KeyRecord;
use crate::slot::SLOTS;
use crate::summary::KeyStats;

/// A file's own figures (the keys the filters admitted).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardStats {
    /// Keys, memory and bytes of the keys the filters admitted from this file.
    pub totals: Counter,
    /// The biggest key by estimated memory; `None` without keys or with `--top 0`.
    pub biggest: Option<KeyRecord>,
    /// Cluster slots holding at least one key, as inclusive `[from, to]` ranges in order.
    pub slot_ranges: Vec<[u16; 2]>,
}

impl ShardStats {
    /// The per-file figures of a single file's key statistics.
    pub fn of(keys: &KeyStats) -> Self {
        ShardStats {
            totals: keys.totals,
            biggest: keys.top.by_memory.keys.first().map(|r| KeyRecord::clone(r)),
            slot_ranges: slot_ranges(keys.slots.counts().iter().map(|c| c.keys > 0)),
        }
    }

    /// Slots holding keys.
    pub fn slots_used(&self) -> u64 {
        self.slot_ranges.iter().map(|[a, b]| u64::from(b - a) + 1).sum()
    }
}

/// Compresses "slot i is used" flags (index = slot) into inclusive ranges.
pub fn slot_ranges(used: impl IntoIterator<Item = bool>) -> Vec<[u16; 2]> {
    let mut out: Vec<[u16; 2]> = Vec::new();
    for (slot, on) in used.into_iter().enumerate().take(SLOTS) {
        if !on {
            continue;
        }
        let slot = slot as u16;
        match out.last_mut() {
            Some(last) if last[1] + 1 == slot => last[1] = slot,
            _ => out.push([slot, slot]),
        }
    }
    out
}

/// Ranges as `0-5460,5461,5463-5470`.
pub fn format_ranges(ranges: &[[u16; 2]]) -> String {
    ranges
        .iter()
        .map(|[a, b]| if a == b { a.to_string() } else { format!("{a}-{b}") })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_compress_runs() {
        let mut used = vec![false; SLOTS];
        for s in (0..=5460).chain([5462]).chain(16380..16384) {
            used[s] = true;
        }
        let r = slot_ranges(used);
        assert_eq!(r, vec![[0, 5460], [5462, 5462], [16380, 16383]]);
        assert_eq!(format_ranges(&r), "0-5460,5462,16380-16383");
        let s = ShardStats {
            slot_ranges: r,
            ..ShardStats::default()
        };
        assert_eq!(s.slots_used(), 5461 + 1 + 4);
        assert!(slot_ranges(vec![false; 10]).is_empty());
    }
}
