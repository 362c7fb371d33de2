//! LRU idle times and LFU counters, when the file carries them.

use serde::{Deserialize, Serialize};

use super::hist::Histogram;
use super::top::{Metric, SharedRecord, TopKeys};
use super::Accumulate;
use crate::facts::KeyFacts;

/// LRU idle times and LFU counters of the keys whose file records them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Access {
    /// Idle times in seconds, of the keys that carry one.
    pub idle_seconds: Histogram,
    /// LFU counters (0-255), of the keys that carry one.
    pub lfu_freq: Histogram,
    /// The keys idle longest.
    pub coldest: TopKeys,
    /// The keys with the highest LFU counters.
    pub hottest: TopKeys,
    /// Keys carrying Redis Enterprise's RAM_LRU value (opcode 107). No
    /// published source defines it (librdb reads and discards it), so it
    /// is counted, not taken for an idle time. Left out of the JSON at 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ram_lru_keys: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Access {
    /// Empty, keeping `n` keys in each list.
    pub fn new(n: usize) -> Self {
        Access {
            idle_seconds: Histogram::default(),
            lfu_freq: Histogram::default(),
            coldest: TopKeys::new(Metric::Idle, n),
            hottest: TopKeys::new(Metric::Freq, n),
            ram_lru_keys: 0,
        }
    }
}

impl Access {
    /// [`Accumulate::add`] sharing the key's record with its other lists.
    pub(crate) fn add_sharing(&mut self, f: &KeyFacts<'_>, record: &mut Option<SharedRecord>) {
        if let Some(idle) = f.idle_seconds {
            self.idle_seconds.add(idle);
            self.coldest.add_sharing(f, record);
        }
        if let Some(freq) = f.lfu_freq {
            self.lfu_freq.add(u64::from(freq));
            self.hottest.add_sharing(f, record);
        }
        if f.ram_lru.is_some() {
            self.ram_lru_keys += 1;
        }
    }
}

impl Accumulate for Access {
    fn add(&mut self, f: &KeyFacts<'_>) {
        self.add_sharing(f, &mut None);
    }

    fn finish(&mut self) {
        self.coldest.finish();
        self.hottest.finish();
    }

    fn merge(&mut self, other: Self) {
        self.idle_seconds.merge(other.idle_seconds);
        self.lfu_freq.merge(other.lfu_freq);
        self.coldest.merge(other.coldest);
        self.hottest.merge(other.hottest);
        self.ram_lru_keys = self.ram_lru_keys.saturating_add(other.ram_lru_keys);
    }
}
