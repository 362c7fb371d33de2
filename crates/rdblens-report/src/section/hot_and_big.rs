//! Section `hot-and-big`: where the dump records idle times or LFU
//! counters, the biggest hot keys (what the server serves most and moves
//! most bytes for: split, cache client-side or replicate them first) and
//! the biggest cold ones, with the memory the cold keys hold (memory to
//! reclaim). Absent when the dump records neither (most dumps: a server
//! stores them only under an LRU or LFU `maxmemory-policy`).

use rdblens_summary::acc::heat::{Heat, HeatGroup, HeatRule};
use rdblens_summary::acc::top::SharedRecord;
use rdblens_summary::Summary;
use serde::Serialize;

use super::{BuildContext, Column, SectionModel, SectionView, ViewCell, ViewPart};
use crate::format::{duration, human_bytes, percent, thousands};

/// The section's model (JSON field `hot_and_big`).
#[derive(Serialize)]
pub struct HotAndBig<'s> {
    /// Keys whose dump records an idle time or an LFU counter.
    pub keys_with_access: u64,
    /// Keys hot by the thresholds, their memory and the biggest.
    pub hot: HeatGroupJson<'s>,
    /// Keys cold by the thresholds: memory nobody reads, to reclaim.
    pub cold: HeatGroupJson<'s>,
    /// The thresholds (rules file: `hot-key`, `cold-key`).
    pub thresholds: &'s HeatRule,
    /// Every key's estimated memory (the shares' whole; in the JSON's `totals`).
    #[serde(skip)]
    total_memory: u64,
}

/// A group of keys (hot or cold) as the JSON has it.
#[derive(Serialize)]
pub struct HeatGroupJson<'s> {
    /// Keys in the group.
    pub keys: u64,
    /// Their estimated memory, summed.
    pub memory: u64,
    /// The biggest by estimated memory, at most `--top`.
    pub biggest: &'s [SharedRecord],
}

fn group<'s>(g: &'s HeatGroup, top: usize) -> HeatGroupJson<'s> {
    HeatGroupJson {
        keys: g.keys,
        memory: g.memory,
        biggest: &g.biggest.keys[..g.biggest.keys.len().min(top)],
    }
}

impl<'s> SectionModel<'s> for HotAndBig<'s> {
    fn build(s: &'s Summary, cx: &BuildContext) -> Option<Self> {
        let h: &Heat = &s.keys.heat;
        (h.with_access > 0).then(|| HotAndBig {
            keys_with_access: h.with_access,
            hot: group(&h.hot, cx.top),
            cold: group(&h.cold, cx.top),
            thresholds: &h.rule,
            total_memory: s.keys.totals.memory,
        })
    }

    fn view(&self) -> SectionView<'_> {
        const COLUMNS: &[Column] = &[
            Column {
                title: "keys",
                numeric: false,
            },
            Column {
                title: "count",
                numeric: true,
            },
            Column {
                title: "share",
                numeric: false,
            },
            Column {
                title: "memory",
                numeric: true,
            },
            Column {
                title: "share of memory",
                numeric: false,
            },
            Column {
                title: "by",
                numeric: false,
            },
        ];
        let t = self.thresholds;
        let memory = self.total_memory;
        let row = |name: &str, g: &HeatGroupJson<'_>, by: String| {
            vec![
                ViewCell::Text(name.to_string()),
                ViewCell::Count(g.keys),
                ViewCell::Text(percent(g.keys, self.keys_with_access)),
                ViewCell::Bytes(g.memory),
                ViewCell::Text(percent(g.memory, memory)),
                ViewCell::Text(by),
            ]
        };
        let rows = vec![
            row(
                "hot",
                &self.hot,
                format!(
                    "LFU counter >= {} or idle <= {}",
                    t.hot_min_lfu,
                    duration(secs_ms(t.hot_max_idle))
                ),
            ),
            row(
                "cold",
                &self.cold,
                format!(
                    "LFU counter <= {} or idle > {}",
                    t.cold_max_lfu,
                    duration(secs_ms(t.cold_idle))
                ),
            ),
        ];
        let mut parts = vec![ViewPart::Table {
            id: "heat-groups",
            title: "Hot and cold keys",
            columns: COLUMNS,
            rows,
        }];
        if !self.hot.biggest.is_empty() {
            parts.push(ViewPart::Keys {
                id: "big-hot-keys",
                title: "Biggest hot keys",
                keys: self.hot.biggest,
            });
        }
        if !self.cold.biggest.is_empty() {
            parts.push(ViewPart::Text(format!(
                "{} cold keys hold {} of estimated memory nobody has read lately: the first to reclaim.",
                thousands(self.cold.keys),
                human_bytes(self.cold.memory)
            )));
            parts.push(ViewPart::Keys {
                id: "big-cold-keys",
                title: "Biggest cold keys",
                keys: self.cold.biggest,
            });
        }
        SectionView {
            id: "hot-and-big",
            title: "Hot and big",
            intro: format!(
                "Of the {} keys whose dump records an idle time or LFU counter: the biggest hot ones (split or replicate them first) and the biggest cold ones (memory to reclaim).",
                thousands(self.keys_with_access)
            ),
            parts,
        }
    }
}

/// Seconds as milliseconds, for [`duration`].
fn secs_ms(s: u64) -> i64 {
    i64::try_from(s).unwrap_or(i64::MAX / 1000).saturating_mul(1000)
}
