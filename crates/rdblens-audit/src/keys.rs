//! Findings of the per-key rules, from the hits the workers gathered:
//! one finding per listed key, or one finding for the whole keyspace
//! where the rule is a share (key-no-namespace, key-long's statistics
//! level) or a total (expired-in-snapshot).

use rdblens_summary::acc::rules::{KeyHit, RuleTally};
use rdblens_summary::rules::{RuleId, Severity};

use crate::advice::{advice, BIGKEY_EXPIRY_LAZY, ENCODING_MISS_FAR};
use crate::finding::{ConfigSuggestion, Finding, Quantity, Scope, Unit};
use crate::outcome::{key_ref, Ctx, Outcome};
use crate::text;

/// The unit of a rule's per-key measure.
fn unit_of(rule: RuleId, detail: Option<&str>) -> Unit {
    match rule {
        RuleId::KeyLong | RuleId::BigString | RuleId::BigValueBytes | RuleId::BigMember => Unit::Bytes,
        RuleId::BigCollection | RuleId::BigSortedSet | RuleId::BigListQueue => Unit::Elements,
        RuleId::EncodingMiss if detail.is_some_and(|d| d.ends_with("-entries")) => Unit::Elements,
        RuleId::EncodingMiss | RuleId::Compressible => Unit::Bytes,
        RuleId::BigkeyExpiry if detail == Some("big-collection") => Unit::Elements,
        RuleId::BigkeyExpiry => Unit::Bytes,
        RuleId::ExpiredInSnapshot => Unit::Milliseconds,
        RuleId::ColdKey if detail == Some("idle") => Unit::Seconds,
        RuleId::ColdKey | RuleId::HotKey => Unit::LfuCounter,
        _ => Unit::Count,
    }
}

fn amount(v: u64, unit: Unit) -> String {
    match unit {
        Unit::Bytes => text::bytes(v),
        Unit::Elements => format!("{} elements", text::count(v)),
        _ => text::count(v),
    }
}

/// What one listed key did.
fn message(rule: RuleId, h: &KeyHit) -> String {
    let detail = h.detail.as_deref().unwrap_or("");
    let unit = unit_of(rule, h.detail.as_deref());
    let (m, t) = (amount(h.measured, unit), amount(h.threshold, unit));
    match rule {
        RuleId::KeyLong => format!("key name of {m} > {t}"),
        RuleId::KeyChars => format!(
            "{} space, quote, backslash, control or glob byte(s) in the key",
            h.measured
        ),
        RuleId::KeyBraces => format!("{} brace(s) that are not one non-empty hash tag", h.measured),
        RuleId::BigString => format!("string of {m} > {t}"),
        RuleId::BigCollection => format!("{} of {m} > {t}", h.type_name),
        RuleId::BigValueBytes => format!("{} holding {m} of elements > {t}", h.type_name),
        RuleId::BigMember => format!("{} with an element of {m} > {t}", h.type_name),
        RuleId::EncodingMiss => format!(
            "{} is {}: {m} > {detail} {}",
            h.type_name, h.encoding, h.threshold
        ),
        RuleId::Compressible => format!(
            "string of {m} stored as {} ({:.1}:1)",
            text::bytes(h.extra),
            h.measured as f64 / h.extra.max(1) as f64
        ),
        RuleId::BigSortedSet => format!("sorted set of {m} > {t}"),
        RuleId::BigListQueue => format!("list of {m} > {t}"),
        RuleId::BigkeyExpiry => format!("{} with an expiry, big by {detail}: {m} > {t}", h.type_name),
        RuleId::HotKey => format!("LFU counter {}", h.measured),
        _ => format!("{m} > {t}"),
    }
}

fn key_finding(rule: RuleId, h: &KeyHit, ctx: &Ctx<'_>) -> Finding {
    let unit = unit_of(rule, h.detail.as_deref());
    let (measured, threshold) = match rule {
        RuleId::Compressible => (
            Quantity::real(h.measured as f64 / h.extra.max(1) as f64, Unit::Ratio),
            Some(Quantity::real(ctx.cfg.compressible.min_ratio, Unit::Ratio)),
        ),
        RuleId::KeyChars | RuleId::KeyBraces | RuleId::HotKey => (Quantity::int(h.measured, unit), None),
        _ => (
            Quantity::int(h.measured, unit),
            Some(Quantity::int(h.threshold, unit)),
        ),
    };
    let config = (rule == RuleId::EncodingMiss && h.savings.is_some())
        .then(|| format!("{} {}", h.detail.as_deref().unwrap_or(""), h.measured));
    let advice = match rule {
        RuleId::EncodingMiss if h.severity == Severity::Info => ENCODING_MISS_FAR,
        RuleId::BigkeyExpiry if h.severity == Severity::Info => BIGKEY_EXPIRY_LAZY,
        _ => advice(rule),
    };
    Finding {
        rule,
        severity: h.severity,
        scope: Scope::Key {
            db: h.db,
            key: h.key.clone(),
        },
        message: message(rule, h),
        measured,
        threshold,
        keys: 1,
        memory: h.memory,
        savings: h.savings,
        config,
        advice: advice.to_string(),
        examples: Vec::new(),
        more_keys: 0,
        impact: h.impact.max(h.savings.unwrap_or(0)),
    }
}

/// One finding per listed key; the rest are counted as omitted.
pub(crate) fn per_key(rule: RuleId, t: &RuleTally, ctx: &Ctx<'_>) -> Outcome {
    let mut out = Outcome::from_tally(t, ctx.separator);
    out.findings = t.listed.items.iter().map(|h| key_finding(rule, h, ctx)).collect();
    for s in Severity::ALL {
        out.counts.add(s, t.keys[s.index()]);
    }
    if rule == RuleId::HotKey {
        // Only the top N are findings; the other keys with counters are not.
        out.counts = Default::default();
        out.counts.add(Severity::Info, out.findings.len() as u64);
        out.keys = out.findings.len() as u64;
        out.memory = out.findings.iter().map(|f| f.memory).sum();
        return out;
    }
    if rule == RuleId::KeyLong && t.unlisted > 0 {
        // The statistics level is one finding, not one per key. Every key
        // over the warn length is over the info length too, so the rule
        // covers the statistic's keys (the rules table must not say 0
        // keys while the finding names thousands).
        out.counts.info = out.counts.info.saturating_sub(t.unlisted) + 1;
        out.keys = t.unlisted;
        out.memory = t.memory[Severity::Info.index()];
        out.findings.push(long_keys_statistic(t, ctx));
    }
    if rule == RuleId::EncodingMiss {
        out.config = t
            .details
            .iter()
            .filter(|(_, d)| d.fixable_keys > 0)
            .map(|(limit, d)| ConfigSuggestion {
                directive: format!("{limit} {}", d.fixable_max_measured),
                keys: d.fixable_keys,
                savings: d.savings,
            })
            .collect();
    }
    let listable = t.total_keys() - t.unlisted;
    out.omitted = listable.saturating_sub(t.listed.items.len() as u64);
    out
}

/// key-long's statistics level: keys over the info length, as one finding.
fn long_keys_statistic(t: &RuleTally, ctx: &Ctx<'_>) -> Finding {
    let total = ctx.summary.keys.totals.keys;
    let limit = ctx.cfg.key_long.info.0;
    Finding {
        rule: RuleId::KeyLong,
        severity: Severity::Info,
        scope: Scope::Global,
        message: format!(
            "{} keys ({}) have names longer than {limit} bytes",
            text::count(t.unlisted),
            text::percent(t.unlisted as f64 / total.max(1) as f64)
        ),
        measured: Quantity::share(t.unlisted, total),
        threshold: Some(Quantity::int(limit, Unit::Bytes)),
        keys: t.unlisted,
        memory: t.memory[Severity::Info.index()],
        savings: None,
        config: None,
        advice: advice(RuleId::KeyLong).to_string(),
        examples: Vec::new(),
        more_keys: 0,
        impact: t.memory[Severity::Info.index()],
    }
}

/// One finding for the keyspace, with the listed keys as examples.
pub(crate) fn global(rule: RuleId, t: &RuleTally, ctx: &Ctx<'_>) -> Outcome {
    let mut out = Outcome::from_tally(t, ctx.separator);
    let total = ctx.summary.keys.totals.keys;
    let n = t.total_keys();
    let share = n as f64 / total.max(1) as f64;
    let (message, measured, threshold) = match rule {
        RuleId::KeyNoNamespace => {
            let min = ctx.cfg.key_no_namespace.min_share;
            if share <= min {
                return out;
            }
            (
                format!(
                    "{} keys ({}) have no '{}' namespace separator",
                    text::count(n),
                    text::percent(share),
                    ctx.separator as char
                ),
                Quantity::share(n, total),
                Some(Quantity::real(min, Unit::Share)),
            )
        }
        _ => (
            format!(
                "{} keys ({}) expired before the snapshot was taken; {} would be freed",
                text::count(n),
                text::percent(share),
                text::bytes(t.savings)
            ),
            Quantity::int(n, Unit::Keys),
            None,
        ),
    };
    let examples: Vec<_> = t.listed.items.iter().map(|h| key_ref(h.db, &h.key)).collect();
    out.counts.add(Severity::Info, 1);
    out.findings.push(Finding {
        rule,
        severity: Severity::Info,
        scope: Scope::Global,
        message,
        measured,
        threshold,
        keys: n,
        memory: t.total_memory(),
        savings: out.savings,
        config: None,
        advice: advice(rule).to_string(),
        more_keys: n.saturating_sub(examples.len() as u64),
        examples,
        impact: t.total_memory().max(t.savings),
    });
    out
}
