//! The design-rule audit of an rdblens [`Summary`]: turns the statistics
//! into findings (docs/design-rules.md, docs/audit.md).
//!
//! Per-key rules (key names, big values, encodings, expiries, access) were
//! evaluated by the analysis workers, which keep per rule the counts, the
//! memory, and a capped list of the worst keys; the rest (slot skew,
//! namespaces without expiries, expiry windows, databases, small-key
//! sprawl) are judged here from the summary's aggregates. [`audit`] gives
//! the findings, most severe first and then by the memory at stake, and a
//! summary per rule with what the caps left out. [`config`] reads rules
//! files and `--set` flags into the [`RuleConfig`] the analysis runs with.
//!
//! ```no_run
//! # fn get() -> rdblens_summary::Summary { unimplemented!() }
//! let summary = get(); // rdblens_engine::analyze_bytes(...)
//! let audit = rdblens_audit::audit(&summary);
//! for f in &audit.findings {
//!     println!("{} {} {}", f.severity, f.rule, f.message);
//! }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]
// A failure that can happen is an error, never a panic: no unwrap, expect
// or panic! outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod advice;
pub mod config;
mod expiry;
mod finding;
mod keys;
mod keyspace;
mod outcome;
pub mod sprawl;
pub mod text;

use std::cmp::Reverse;

use rdblens_summary::rules::{RuleConfig, RuleId};
use rdblens_summary::Summary;

pub use config::{load, RulesBuilder, RulesError};
pub use finding::{
    Audit, ConfigSuggestion, Counts, Finding, KeyRef, NamespaceCount, Num, Quantity, RuleSummary, Scope, Unit,
};
pub use rdblens_summary::rules::Severity;

use outcome::{Ctx, Outcome};

fn evaluate(rule: RuleId, ctx: &Ctx<'_>) -> Outcome {
    let tally = ctx.summary.keys.rules.rules.get(&rule);
    match rule {
        RuleId::HashtagSkew => keyspace::hashtag_skew(ctx),
        RuleId::NoTtl => keyspace::no_ttl(ctx),
        RuleId::ExpiryCluster => expiry::expiry_cluster(ctx),
        RuleId::MultiDb => keyspace::multi_db(ctx),
        RuleId::SmallKeySprawl => keyspace::small_key_sprawl(ctx),
        RuleId::KeyNoNamespace | RuleId::ExpiredInSnapshot => {
            tally.map(|t| keys::global(rule, t, ctx)).unwrap_or_default()
        }
        RuleId::ColdKey => tally.map(|t| keyspace::cold_keys(t, ctx)).unwrap_or_default(),
        _ => tally.map(|t| keys::per_key(rule, t, ctx)).unwrap_or_default(),
    }
}

fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        (Reverse(a.severity), Reverse(a.impact), a.rule, &a.scope).cmp(&(
            Reverse(b.severity),
            Reverse(b.impact),
            b.rule,
            &b.scope,
        ))
    });
}

/// A rule's thresholds as `name = value` pairs (from its settings, so they
/// never drift from what was applied).
fn thresholds(cfg: &RuleConfig, rule: RuleId) -> String {
    let value = serde_json::to_value(cfg).unwrap_or_default();
    let Some(fields) = value.get(rule.name()).and_then(|v| v.as_object()) else {
        return String::new();
    };
    fields
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "enabled" | "cap" | "severity"))
        .map(|(k, v)| match (v, v.as_u64()) {
            (serde_json::Value::Null, _) => format!("{k} = unknown"),
            (_, Some(n)) if is_size(rule, k) => format!("{k} = {}", text::size_setting(n)),
            (_, Some(n)) if rule == RuleId::ColdKey && k == "idle" => {
                format!("{k} = {}", text::duration_setting(n))
            }
            (v, _) => format!("{k} = {v}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Settings that are sizes (shown as a rules file would write them).
fn is_size(rule: RuleId, field: &str) -> bool {
    matches!(
        (rule, field),
        (RuleId::KeyLong, _)
            | (RuleId::BigString | RuleId::BigValueBytes | RuleId::BigMember, _)
            | (RuleId::Compressible, "min-bytes")
            | (RuleId::SmallKeySprawl, "max-value-bytes")
    )
}

/// Audits a summary with the rule settings it was analysed with
/// (`summary.settings.rules`).
pub fn audit(summary: &Summary) -> Audit {
    let cfg = &summary.settings.rules;
    let ctx = Ctx {
        summary,
        cfg,
        separator: summary.settings.separator,
    };
    let mut all = Vec::new();
    let mut rules = Vec::new();
    let mut counts = Counts::default();
    for &rule in RuleId::ALL {
        let common = cfg.common(rule);
        let mut out = if common.enabled {
            evaluate(rule, &ctx)
        } else {
            Outcome::default()
        };
        if let Some(s) = common.severity {
            out.findings.iter_mut().for_each(|f| f.severity = s);
            out.counts = out.counts.all_at(s);
        }
        sort(&mut out.findings);
        // hot-key is a top N by definition: its size is its own setting.
        let cap = if rule == RuleId::HotKey {
            usize::MAX
        } else {
            common.cap
        };
        if out.findings.len() > cap {
            out.omitted += (out.findings.len() - cap) as u64;
            out.findings.truncate(cap);
        }
        rules.push(RuleSummary {
            rule,
            enabled: common.enabled,
            thresholds: thresholds(cfg, rule),
            counts: out.counts,
            listed: out.findings.len(),
            omitted: out.omitted,
            keys: out.keys,
            memory: out.memory,
            savings: out.savings,
            advice: match (rule, out.advice) {
                (_, Some(a)) => a,
                (RuleId::BigkeyExpiry, _) if cfg.bigkey_expiry.lazyfree_lazy_expire == Some(true) => {
                    advice::BIGKEY_EXPIRY_LAZY.to_string()
                }
                (_, None) => advice::advice(rule).to_string(),
            },
            note: out.note,
            namespaces: out.namespaces,
            config: out.config,
        });
        counts.merge(&out.counts);
        all.extend(out.findings);
    }
    sort(&mut all);
    Audit {
        findings: all,
        rules,
        counts,
    }
}
