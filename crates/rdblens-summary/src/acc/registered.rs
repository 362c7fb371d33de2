//! [`KeyAccumulator`] for the accumulators the registry started with:
//! their set-up, fold and check, each a call into the code that was there
//! before the registry (the checks in `check/acc.rs`). A new accumulator
//! implements the trait in its own file (`acc/heat.rs`).

use super::access::Access;
use super::expiry::ExpiryHistogram;
use super::limits::Limits;
use super::names::KeyNames;
use super::prefix::Prefixes;
use super::registry::{CheckContext, KeyAccumulator, KeyInput};
use super::rules::RuleHits;
use super::slots::Slots;
use super::top::TopSet;
use super::ttl::Ttl;
use crate::check::acc as check;
use crate::checker::{Checked, Checker};
use crate::settings::Settings;

impl KeyAccumulator for Limits {
    const READS_LENGTHS: bool = true;
    const KEEPS_TOP_LISTS: bool = true;
    fn new(s: &Settings) -> Self {
        Limits::new(s.top)
    }
    #[inline]
    fn add_key(&mut self, k: &mut KeyInput<'_, '_>) {
        self.add_sharing(k.facts, k.record);
    }
    fn check(&self, c: &mut Checker, x: &CheckContext<'_>) -> Checked {
        check::limits(c, self, x.settings.top, x.totals)
    }
}

impl KeyAccumulator for TopSet {
    const READS_LENGTHS: bool = true;
    const KEEPS_TOP_LISTS: bool = true;
    fn new(s: &Settings) -> Self {
        TopSet::new(s.top)
    }
    #[inline]
    fn add_key(&mut self, k: &mut KeyInput<'_, '_>) {
        self.add_sharing(k.facts, k.record);
    }
    fn check(&self, c: &mut Checker, _: &CheckContext<'_>) -> Checked {
        check::top_set(c, self)
    }
}

impl KeyAccumulator for KeyNames {
    const READS_LENGTHS: bool = true;
    fn new(s: &Settings) -> Self {
        KeyNames::new(s.separator)
    }
    #[inline]
    fn add_key(&mut self, k: &mut KeyInput<'_, '_>) {
        self.add_shaped(k.facts, k.shape);
    }
    fn check(&self, c: &mut Checker, x: &CheckContext<'_>) -> Checked {
        check::key_names(c, self, x.settings, x.totals)
    }
}

impl KeyAccumulator for Prefixes {
    const READS_LENGTHS: bool = false;
    fn new(s: &Settings) -> Self {
        Prefixes::new(s.separator, s.prefix_depth, s.now_ms)
    }
    fn check(&self, c: &mut Checker, x: &CheckContext<'_>) -> Checked {
        check::prefixes(c, self, x.settings, x.totals)
    }
}

impl KeyAccumulator for Ttl {
    const READS_LENGTHS: bool = false;
    fn new(s: &Settings) -> Self {
        Ttl {
            now_ms: s.now_ms,
            ..Ttl::default()
        }
    }
    fn check(&self, c: &mut Checker, x: &CheckContext<'_>) -> Checked {
        check::ttl(c, self, x.totals)
    }
}

impl KeyAccumulator for ExpiryHistogram {
    const READS_LENGTHS: bool = false;
    fn new(s: &Settings) -> Self {
        ExpiryHistogram::new(s.separator, s.prefix_depth.clamp(1, 4), s.expiry_buckets)
    }
    #[inline]
    fn add_key(&mut self, k: &mut KeyInput<'_, '_>) {
        self.add_shaped(k.facts, k.shape);
    }
    fn check(&self, c: &mut Checker, x: &CheckContext<'_>) -> Checked {
        check::expiry(c, self, x.settings, x.totals)
    }
}

impl KeyAccumulator for Slots {
    const READS_LENGTHS: bool = false;
    fn new(_: &Settings) -> Self {
        Slots::default()
    }
    #[inline]
    fn add_key(&mut self, k: &mut KeyInput<'_, '_>) {
        self.add_shaped(k.facts, k.shape);
    }
    fn check(&self, c: &mut Checker, x: &CheckContext<'_>) -> Checked {
        check::slots(c, self, x.totals)
    }
}

impl KeyAccumulator for Access {
    const READS_LENGTHS: bool = true;
    const KEEPS_TOP_LISTS: bool = true;
    fn new(s: &Settings) -> Self {
        Access::new(s.top)
    }
    #[inline]
    fn add_key(&mut self, k: &mut KeyInput<'_, '_>) {
        self.add_sharing(k.facts, k.record);
    }
    fn check(&self, c: &mut Checker, x: &CheckContext<'_>) -> Checked {
        check::access(c, self, x.totals)
    }
}

impl KeyAccumulator for RuleHits {
    const READS_LENGTHS: bool = true;
    fn new(s: &Settings) -> Self {
        RuleHits::new(&s.rules, s.separator, s.now_ms)
    }
    #[inline]
    fn add_key(&mut self, k: &mut KeyInput<'_, '_>) {
        self.add_shaped(k.facts, k.shape);
    }
    fn check(&self, c: &mut Checker, x: &CheckContext<'_>) -> Checked {
        check::rules(c, self, x.settings, x.totals)
    }
}
