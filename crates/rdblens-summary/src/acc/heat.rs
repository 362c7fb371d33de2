//! Keys both big and hot, and big and cold: where a dump records idle
//! times (an LRU `maxmemory-policy`) or LFU counters (an LFU one), the
//! biggest keys among the hot ones (what a cache serves most: split or
//! replicate them first) and among the cold ones (memory nobody reads:
//! the first to reclaim), with the keys and memory of each group.
//!
//! Hot and cold are the design rules' (docs/design-rules.md, settings in
//! the rules file): cold as `cold-key` (idle above `idle`, or an LFU
//! counter at most `lfu-max`), hot as `hot-key`'s `min-lfu` and
//! `max-idle` (an LFU counter of at least `min-lfu`, or idle at most
//! `max-idle`).

use serde::{Deserialize, Serialize};

use super::counter::Counter;
use super::registry::{CheckContext, KeyAccumulator, KeyInput};
use super::top::{Metric, SharedRecord, TopKeys};
use super::Accumulate;
use crate::checker::{Checked, Checker};
use crate::facts::KeyFacts;
use crate::rules::RuleConfig;
use crate::settings::Settings;

/// One group (hot or cold): its keys, their memory, and the biggest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeatGroup {
    /// Keys in the group.
    pub keys: u64,
    /// Their estimated memory (`MEMORY USAGE`), summed.
    pub memory: u64,
    /// The biggest of them by estimated memory.
    pub biggest: TopKeys,
}

impl HeatGroup {
    fn new(n: usize) -> Self {
        HeatGroup {
            keys: 0,
            memory: 0,
            biggest: TopKeys::new(Metric::Memory, n),
        }
    }

    fn add(&mut self, f: &KeyFacts<'_>, record: &mut Option<SharedRecord>) {
        self.keys += 1;
        self.memory += f.memory;
        self.biggest.add_sharing(f, record);
    }

    fn merge(&mut self, o: HeatGroup) {
        self.keys = self.keys.saturating_add(o.keys);
        self.memory = self.memory.saturating_add(o.memory);
        self.biggest.merge(o.biggest);
    }

    fn check(&self, c: &mut Checker, totals: &Counter) -> Checked {
        c.at_most("keys", self.keys, "totals.keys", totals.keys)?;
        c.count("memory", self.memory)?;
        c.top_keys("biggest", &self.biggest, Metric::Memory)
    }
}

/// The thresholds that make a key hot or cold, from the rules' settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeatRule {
    /// Hot: an LFU counter at least this.
    pub hot_min_lfu: u8,
    /// Hot: idle at most this many seconds.
    pub hot_max_idle: u64,
    /// Cold: idle above this many seconds.
    pub cold_idle: u64,
    /// Cold: an LFU counter at most this.
    pub cold_max_lfu: u8,
}

impl HeatRule {
    /// The thresholds of `rules` (`hot-key` and `cold-key`).
    pub fn of(rules: &RuleConfig) -> Self {
        HeatRule {
            hot_min_lfu: rules.hot_key.min_lfu,
            hot_max_idle: rules.hot_key.max_idle.0,
            cold_idle: rules.cold_key.idle.0,
            cold_max_lfu: rules.cold_key.lfu_max,
        }
    }

    /// Whether a key with this idle time or LFU counter is hot.
    pub fn is_hot(&self, idle: Option<u64>, lfu: Option<u8>) -> bool {
        idle.is_some_and(|i| i <= self.hot_max_idle) || lfu.is_some_and(|l| l >= self.hot_min_lfu)
    }

    /// Whether a key with this idle time or LFU counter is cold.
    pub fn is_cold(&self, idle: Option<u64>, lfu: Option<u8>) -> bool {
        idle.is_some_and(|i| i > self.cold_idle) || lfu.is_some_and(|l| l <= self.cold_max_lfu)
    }
}

/// The hot and the cold keys of the dump (none when it records no access).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Heat {
    /// Keys whose dump records an idle time or an LFU counter.
    pub with_access: u64,
    /// The hot keys.
    pub hot: HeatGroup,
    /// The cold keys.
    pub cold: HeatGroup,
    /// The thresholds the keys were judged by (the settings' rules).
    pub rule: HeatRule,
}

impl Heat {
    /// Empty, keeping `n` keys per list, judging by `rule`.
    pub fn new(n: usize, rule: HeatRule) -> Self {
        Heat {
            with_access: 0,
            hot: HeatGroup::new(n),
            cold: HeatGroup::new(n),
            rule,
        }
    }

    fn add_sharing(&mut self, f: &KeyFacts<'_>, record: &mut Option<SharedRecord>) {
        let (idle, lfu) = (f.idle_seconds, f.lfu_freq);
        if idle.is_none() && lfu.is_none() {
            return;
        }
        self.with_access += 1;
        let rule = self.rule;
        if rule.is_hot(idle, lfu) {
            self.hot.add(f, record);
        }
        if rule.is_cold(idle, lfu) {
            self.cold.add(f, record);
        }
    }
}

impl Accumulate for Heat {
    fn add(&mut self, f: &KeyFacts<'_>) {
        self.add_sharing(f, &mut None);
    }

    fn finish(&mut self) {
        self.hot.biggest.finish();
        self.cold.biggest.finish();
    }

    fn merge(&mut self, o: Self) {
        self.with_access = self.with_access.saturating_add(o.with_access);
        self.hot.merge(o.hot);
        self.cold.merge(o.cold);
    }
}

impl KeyAccumulator for Heat {
    const READS_LENGTHS: bool = true;
    const KEEPS_TOP_LISTS: bool = true;

    fn new(s: &Settings) -> Self {
        Heat::new(s.top, HeatRule::of(&s.rules))
    }

    #[inline]
    fn add_key(&mut self, k: &mut KeyInput<'_, '_>) {
        self.add_sharing(k.facts, k.record);
    }

    fn check(&self, c: &mut Checker, x: &CheckContext<'_>) -> Checked {
        c.at_most("with_access", self.with_access, "totals.keys", x.totals.keys)?;
        let rule = HeatRule::of(&x.settings.rules);
        if self.rule != rule {
            return Err(c.fail_at(
                "rule",
                format!("{:?}, the settings' rules give {rule:?}", self.rule),
            ));
        }
        for (name, group, belongs) in [
            (
                "hot",
                &self.hot,
                HeatRule::is_hot as fn(&HeatRule, Option<u64>, Option<u8>) -> bool,
            ),
            ("cold", &self.cold, HeatRule::is_cold),
        ] {
            c.at(name, |c| {
                group.check(c, x.totals)?;
                c.at_most("keys", group.keys, "with_access", self.with_access)?;
                if group.biggest.n != x.settings.top {
                    let msg = format!("{}, settings.top is {}", group.biggest.n, x.settings.top);
                    return c.at("biggest", |c| Err(c.fail_at("n", msg)));
                }
                // Every key listed is one the settings' thresholds put there.
                match group
                    .biggest
                    .keys
                    .iter()
                    .position(|r| !belongs(&rule, r.idle_seconds, r.lfu_freq))
                {
                    Some(i) => Err(c.at("biggest", |c| {
                        c.fail_at(
                            format!("keys[{i}]"),
                            format!("not a {name} key by the settings' thresholds"),
                        )
                    })),
                    None => Ok(()),
                }
            })?;
        }
        Ok(())
    }
}
