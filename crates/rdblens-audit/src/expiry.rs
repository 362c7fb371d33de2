//! expiry-cluster: 1-second and 1-minute windows (aligned to the clock)
//! holding too many of the expiring keys, from the expiry histogram.

use rdblens_analysis::rules::{RuleId, Severity};

use crate::advice::advice;
use crate::finding::{Finding, Quantity, Scope, Unit};
use crate::outcome::{Ctx, Outcome};
use crate::text;

/// Namespaces named per window.
const NAMESPACES: usize = 3;

pub(crate) fn expiry_cluster(ctx: &Ctx<'_>) -> Outcome {
    let h = &ctx.summary.keys.expiry;
    let c = &ctx.cfg.expiry_cluster;
    let total = h.expiring_keys;
    let mut out = Outcome::default();
    let mut skipped = Vec::new();
    for (width, label, share, min_keys) in [
        (1_000, "1-second", c.second_share, c.second_keys),
        (60_000, "1-minute", c.minute_share, c.minute_keys),
    ] {
        // A coarser histogram cannot tell which window within a bucket
        // the keys fall in; judging it would overstate clusters.
        if h.width_ms() > width {
            skipped.push(label);
            continue;
        }
        for (start, b) in h.rebucket(width) {
            // Expiry times come from the file: any i64.
            let end = start.saturating_add(width);
            let s = b.keys as f64 / total.max(1) as f64;
            // Keys that expired before the snapshot cannot stampede any more
            // (expired-in-snapshot reports them).
            if end <= ctx.summary.settings.now_ms || b.keys <= min_keys || s <= share {
                continue;
            }
            let mut ns: Vec<(String, u64)> = Vec::new();
            for (_, bucket) in h.buckets_in(start..end) {
                for (name, keys) in h.namespaces(bucket) {
                    let name = String::from_utf8_lossy(name).into_owned();
                    match ns.iter_mut().find(|(n, _)| *n == name) {
                        Some(e) => e.1 += keys,
                        None => ns.push((name, keys)),
                    }
                }
            }
            ns.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let names: Vec<String> = ns
                .iter()
                .take(NAMESPACES)
                .map(|(n, k)| format!("{n} ({})", text::count(*k)))
                .collect();
            let message = format!(
                "{} keys ({} of the expiring keys) expire in one {label} window; namespaces: {}",
                text::count(b.keys),
                text::percent(s),
                names.join(", ")
            );
            out.keys += b.keys;
            out.memory += b.memory;
            out.findings.push(Finding {
                rule: RuleId::ExpiryCluster,
                severity: Severity::Warn,
                scope: Scope::Window {
                    start_ms: start,
                    end_ms: end,
                },
                message,
                measured: Quantity::int(b.keys, Unit::Keys),
                threshold: Some(Quantity::int(min_keys, Unit::Keys)),
                keys: b.keys,
                memory: b.memory,
                savings: None,
                config: None,
                advice: advice(RuleId::ExpiryCluster).to_string(),
                examples: Vec::new(),
                more_keys: 0,
                impact: b.memory,
            });
        }
    }
    if !skipped.is_empty() {
        out.note = Some(format!(
            "{} windows not judged: expiries spread over so many seconds that the histogram keeps {} buckets",
            skipped.join(" and "),
            text::duration_secs((h.width_ms() / 1000) as u64)
        ));
    }
    out.counts.add(Severity::Warn, out.findings.len() as u64);
    out
}
