//! Split and bucketing plans (docs/advisor.md): for every big key the
//! audit lists at warn or crit (big-string, big-collection,
//! big-value-bytes) and every small-key-sprawl namespace, how to split it,
//! into how many keys, under which names, what the keys would cost on the
//! target server, and how to migrate without blocking it.
//!
//! Plans come from what the analysis already kept (no second pass): the
//! listed rule hits carry the value's [`Shape`](rdblens_memory::Shape) and
//! the sprawl tallies the listpack entries of every key; the memory model
//! ([`rdblens_memory::price_part`]) prices the buckets.
//!
//! ```no_run
//! # fn get() -> rdblens_summary::Summary { unimplemented!() }
//! let summary = get();
//! let audit = rdblens_audit::audit(&summary);
//! let target = rdblens_advice::target_for(&summary, None, &[]);
//! let plans = rdblens_advice::plans(&summary, &audit, &target);
//! print!("{}", rdblens_advice::text::render(&plans));
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]
// A failure that can happen is an error, never a panic: no unwrap, expect
// or panic! outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod keys;
mod migrate;
mod plan;
pub mod sizing;
mod sprawl;
mod tables;
pub mod text;
mod zsets;

use std::collections::BTreeMap;

use rdblens_audit::{Audit, Scope};
use rdblens_memory::Profile;
use rdblens_summary::rules::{RuleId, Severity};
use rdblens_summary::Summary;

pub use plan::{BucketLimit, Plan, PlanKind, Plans, Scheme, Totals};

/// The target the plans are priced for: the profile the first file was
/// estimated for and the allocator quantum it assumed (given
/// with `--jemalloc-quantum` or detected), unless `quantum` overrides it,
/// with the compact-encoding limits given (the ones the analysis ran with).
pub fn target_for(summary: &Summary, quantum: Option<u64>, config: &[(String, String)]) -> Profile {
    let profile = summary
        .files
        .first()
        .map(|f| f.profile.profile(8))
        .unwrap_or_else(|| {
            Profile::new(
                rdblens_memory::Family::Redis,
                rdblens_memory::ServerVersion::new(7, 2, 0),
                8,
            )
        });
    let assumed = summary
        .files
        .first()
        .and_then(|f| f.allocator.as_ref())
        .map(|a| a.quantum);
    profile.configured(quantum.or(assumed), config)
}

/// The big-key rules a key (db, name) broke, and the worst severity.
type RulesByKey<'a> = BTreeMap<(u64, &'a [u8]), (Vec<RuleId>, Severity)>;

/// The plans for the findings of `audit` (made from `summary`).
pub fn plans(summary: &Summary, audit: &Audit, target: &Profile) -> Plans {
    let mut by_key: RulesByKey = BTreeMap::new();
    let mut order = Vec::new();
    let mut namespaces = Vec::new();
    for f in &audit.findings {
        match &f.scope {
            Scope::Key { db, key }
                if rdblens_summary::acc::rules::SHAPED_RULES.contains(&f.rule)
                    && f.severity >= Severity::Warn =>
            {
                let slot = by_key.entry((*db, key.as_bytes())).or_insert_with(|| {
                    order.push((*db, key.as_bytes()));
                    (Vec::new(), f.severity)
                });
                slot.0.push(f.rule);
                slot.1 = slot.1.max(f.severity);
            }
            Scope::Namespace { namespace } if f.rule == RuleId::SmallKeySprawl => {
                namespaces.push((namespace.clone(), f.severity));
            }
            _ => {}
        }
    }
    let mut plans = Vec::new();
    for id in order {
        let (rules, severity) = &by_key[&id];
        if let Some(p) = keys::plan(summary, target, id, rules, *severity) {
            plans.push(p);
        }
    }
    for (ns, severity) in namespaces {
        if let Some(p) = sprawl::plan(summary, target, &ns, severity) {
            plans.push(p);
        }
    }
    let mut total = Totals::default();
    let mut per_ns: BTreeMap<String, Totals> = BTreeMap::new();
    for p in &plans {
        total.add(p);
        per_ns
            .entry(p.namespace.clone())
            .or_insert_with(|| Totals {
                namespace: Some(p.namespace.clone()),
                ..Totals::default()
            })
            .add(p);
    }
    let mut namespaces: Vec<Totals> = per_ns.into_values().collect();
    namespaces.sort_by(|a, b| b.saved.cmp(&a.saved).then_with(|| a.namespace.cmp(&b.namespace)));
    Plans {
        target: target.name(),
        jemalloc_quantum: target.quantum,
        plans,
        namespaces,
        total,
    }
}
