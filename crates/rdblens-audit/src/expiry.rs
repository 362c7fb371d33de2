//! expiry-cluster: 1-second and 1-minute windows (aligned to the clock)
//! holding too many of the expiring keys, from the expiry histogram.

use rdblens_analysis::acc::expiry_clusters::{namespaces_in, windows};
use rdblens_analysis::acc::expiry_sketch::{NamespaceSketch, LEVELS_MS};
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
    let names = ctx.summary.keys.prefixes.names();
    let error = NamespaceSketch::error_bound(total);
    let mut out = Outcome::default();
    let mut coarse = false;
    for (width, label, share, min_keys) in [
        (1_000, "1-second", c.second_share, c.second_keys),
        (60_000, "1-minute", c.minute_share, c.minute_keys),
    ] {
        // Cells wider than the window (expiries over a very long span):
        // a cell under the thresholds proves every window in it is; one
        // over them is reported as the cell, the window in it not known.
        let cell = width.max(h.width_ms());
        coarse |= cell > width;
        let level = LEVELS_MS.iter().position(|&w| w == cell);
        for (start, b) in windows(h, cell) {
            // Expiry times come from the file: any i64.
            let end = start.saturating_add(cell);
            let s = b.keys as f64 / total.max(1) as f64;
            // Keys that expired before the snapshot cannot stampede any more
            // (expired-in-snapshot reports them).
            if end <= ctx.summary.settings.now_ms || b.keys <= min_keys || s <= share {
                continue;
            }
            let ns = match level {
                Some(level) => namespaces_in(h, level, start, end, &names, error),
                None => Vec::new(),
            };
            let listed: Vec<String> = ns
                .iter()
                .take(NAMESPACES)
                .map(|(n, k)| format!("{n} (~{})", text::count((*k).min(b.keys))))
                .collect();
            let window = if cell > width {
                format!(
                    "one {} cell (expiries span so long that cells are {} wide; the {label} window within is not known)",
                    text::duration_secs((cell / 1000) as u64),
                    text::duration_secs((cell / 1000) as u64)
                )
            } else {
                format!("one {label} window")
            };
            let message = format!(
                "{} keys ({} of the expiring keys) expire in {window}; namespaces: {}",
                text::count(b.keys),
                text::percent(s),
                if listed.is_empty() {
                    "(none above the sketch error)".to_string()
                } else {
                    listed.join(", ")
                }
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
    if coarse {
        out.note = Some(format!(
            "expiries spread over so many seconds that cells are {} wide: windows judged by their cell",
            text::duration_secs((h.width_ms() / 1000) as u64)
        ));
    }
    out.counts.add(Severity::Warn, out.findings.len() as u64);
    out
}
