//! expiry-cluster: 1-second and 1-minute windows (aligned to the clock)
//! holding too many of the expiring keys, from the expiry histogram.
//!
//! Each cluster is reported once, at the finer window that describes it:
//! a minute is judged on its keys outside the 1-second windows over their
//! own thresholds (as the report's cluster detection judges a width on
//! what finer clusters leave, docs/expiry-clusters.md). A burst in one
//! second is that second, not also its minute; a minute that is a cluster
//! even without its bursts is the minute, its bursts named in it.

use rdblens_summary::acc::expiry_cells::KeysMemory;
use rdblens_summary::acc::expiry_clusters::{namespaces_in, CellIndex};
use rdblens_summary::rules::{RuleId, Severity};

use crate::advice::advice;
use crate::finding::{Finding, Quantity, Scope, Unit};
use crate::outcome::{Ctx, Outcome};
use crate::text;

/// Namespaces named per window.
const NAMESPACES: usize = 3;

/// A window over its thresholds, before it becomes a finding.
struct Window {
    start: i64,
    end: i64,
    keys: KeysMemory,
    threshold: u64,
    /// How the message names it, e.g. `one 1-second window`.
    name: String,
}

/// The windows of one width (a multiple of the cells') over `min_keys`
/// and `share` of the expiring keys, not counting the keys of `finer`
/// windows inside them; with the indices of those finer windows.
fn windows_over(
    ctx: &Ctx<'_>,
    index: &CellIndex<'_>,
    (width, label, share, min_keys): (i64, &str, f64, u64),
    finer: &[Window],
) -> Vec<(Window, Vec<usize>)> {
    let h = &ctx.summary.keys.expiry;
    let total = h.expiring_keys;
    // Cells wider than the window (expiries over a very long span): a cell
    // under the thresholds proves every window in it is; one over them is
    // reported as the cell, the window in it not known.
    let cell = width.max(h.width_ms());
    let mut out = Vec::new();
    for (start, b) in index.windows_at_least(cell, min_keys.saturating_add(1)) {
        // Expiry times come from the file: any i64.
        let end = start.saturating_add(cell);
        // Keys that expired before the snapshot cannot stampede any more
        // (expired-in-snapshot reports them).
        if end <= ctx.summary.settings.now_ms {
            continue;
        }
        // `finer` is in time order: those inside are one run of it.
        let first = finer.partition_point(|w| w.start < start);
        let inside: Vec<usize> = (first..finer.partition_point(|w| w.start < end))
            .filter(|&i| finer[i].end <= end)
            .collect();
        let rest = b
            .keys
            .saturating_sub(inside.iter().map(|&i| finer[i].keys.keys).sum::<u64>());
        if rest <= min_keys || rest as f64 / total.max(1) as f64 <= share {
            continue;
        }
        let name = if cell > width {
            format!(
                "one {} cell (expiries span so long that cells are {} wide; the {label} window within is not known)",
                text::duration_secs((cell / 1000) as u64),
                text::duration_secs((cell / 1000) as u64)
            )
        } else {
            format!("one {label} window")
        };
        let window = Window {
            start,
            end,
            keys: b,
            threshold: min_keys,
            name,
        };
        out.push((window, inside));
    }
    out
}

/// `03:34:05` UTC, the time of day of `ms`.
fn clock(ms: i64) -> String {
    let s = ms.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn finding(ctx: &Ctx<'_>, w: &Window, inner: &[&Window]) -> Finding {
    let h = &ctx.summary.keys.expiry;
    let total = h.expiring_keys;
    let names = ctx.summary.keys.prefixes.names();
    let (ns, _) = namespaces_in(h, w.start, w.end, &names);
    let listed: Vec<String> = ns
        .iter()
        .take(NAMESPACES)
        .map(|(n, k)| format!("{n} (~{})", text::count((*k).min(w.keys.keys))))
        .collect();
    let bursts: Vec<String> = inner
        .iter()
        .map(|i| {
            format!(
                "{} in the second {} UTC",
                text::count(i.keys.keys),
                clock(i.start)
            )
        })
        .collect();
    let within = if bursts.is_empty() {
        String::new()
    } else {
        format!(
            ", including {}, over the 1-second thresholds",
            bursts.join(" and ")
        )
    };
    let message = format!(
        "{} keys ({} of the expiring keys) expire in {}{within}; namespaces: {}",
        text::count(w.keys.keys),
        text::percent(w.keys.keys as f64 / total.max(1) as f64),
        w.name,
        if listed.is_empty() {
            "(none above the sketch error)".to_string()
        } else {
            listed.join(", ")
        }
    );
    Finding {
        rule: RuleId::ExpiryCluster,
        severity: Severity::Warn,
        scope: Scope::Window {
            start_ms: w.start,
            end_ms: w.end,
        },
        message,
        measured: Quantity::int(w.keys.keys, Unit::Keys),
        threshold: Some(Quantity::int(w.threshold, Unit::Keys)),
        keys: w.keys.keys,
        memory: w.keys.memory,
        savings: None,
        config: None,
        advice: advice(RuleId::ExpiryCluster).to_string(),
        examples: Vec::new(),
        more_keys: 0,
        impact: w.keys.memory,
    }
}

pub(crate) fn expiry_cluster(ctx: &Ctx<'_>) -> Outcome {
    let h = &ctx.summary.keys.expiry;
    let c = &ctx.cfg.expiry_cluster;
    let index = CellIndex::new(h);
    let seconds: Vec<Window> = windows_over(
        ctx,
        &index,
        (1_000, "1-second", c.second_share, c.second_keys),
        &[],
    )
    .into_iter()
    .map(|(w, _)| w)
    .collect();
    let minutes = windows_over(
        ctx,
        &index,
        (60_000, "1-minute", c.minute_share, c.minute_keys),
        &seconds,
    );
    // A second inside a reported minute is named in the minute's finding.
    let mut in_minute = vec![false; seconds.len()];
    for (_, inside) in &minutes {
        for &i in inside {
            in_minute[i] = true;
        }
    }
    let mut out = Outcome::default();
    for (w, _) in seconds.iter().zip(&in_minute).filter(|(_, m)| !**m) {
        out.findings.push(finding(ctx, w, &[]));
    }
    for (w, inside) in &minutes {
        let inner: Vec<&Window> = inside.iter().map(|&i| &seconds[i]).collect();
        out.findings.push(finding(ctx, w, &inner));
    }
    for f in &out.findings {
        out.keys += f.keys;
        out.memory += f.memory;
    }
    if h.width_ms() > 1_000 {
        out.note = Some(format!(
            "expiries spread over so many seconds that cells are {} wide: windows judged by their cell",
            text::duration_secs((h.width_ms() / 1000) as u64)
        ));
    }
    out.counts.add(Severity::Warn, out.findings.len() as u64);
    out
}
