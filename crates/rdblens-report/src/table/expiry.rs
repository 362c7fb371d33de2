//! Time to live and expiry times (sections `ttl` and `expiry`): the
//! buckets, the clusters in words with their modelled cost, and the
//! histogram of expiry times.

use std::fmt::Write;

use rdblens_summary::acc::expiry::ExpiryCluster;

use crate::cells::{bars_table, heading};
use crate::format::{duration, human_bytes, thousands, utc};
use crate::model::{ExpiryJson, ReportJson, TtlBucketJson};
use crate::options::AUTO_BARS;

/// The time-to-live buckets as bars.
pub(crate) fn ttl(out: &mut String, r: &ReportJson<'_>, buckets: &[TtlBucketJson]) {
    heading(out, &format!("Time to live (relative to {} UTC)", utc(r.now_ms)));
    let rows: Vec<(String, u64, String)> = buckets
        .iter()
        .map(|b| (b.bucket.to_string(), b.keys, human_bytes(b.memory)))
        .collect();
    out.push_str(&bars_table(r.options, "ttl", &rows));
}

/// The clusters, then the histogram (its busiest bars when there are too
/// many to draw), then how to zoom in on the first cluster.
pub(crate) fn expiry(out: &mut String, r: &ReportJson<'_>, e: &ExpiryJson<'_>) {
    let opts = r.options;
    if e.expiring_keys == 0 {
        return;
    }
    heading(out, "Expiry clusters");
    if e.clusters.is_empty() {
        let _ = writeln!(
            out,
            "none: no window of 1s, 10s, 1m, 10m or 1h holds a spike of expiring keys (cells of {})",
            duration(e.stored_resolution_ms)
        );
    }
    for c in &e.clusters {
        let _ = writeln!(out, "{}", cluster_line(c));
        let _ = writeln!(out, "  {}", cluster_figures(c));
    }
    let title = match e.window {
        Some([from, to]) => format!(
            "Expiry times ({} buckets, {} to {} UTC)",
            duration(e.bucket_ms),
            utc(from),
            utc(to)
        ),
        None => format!("Expiry times ({} buckets)", duration(e.bucket_ms)),
    };
    heading(out, &title);
    let rows: Vec<(String, u64, String)> = if e.histogram.len() <= 2 * AUTO_BARS as usize {
        e.histogram
            .iter()
            .map(|b| (utc(b.start_ms), b.keys, human_bytes(b.memory)))
            .collect()
    } else {
        // Too many to draw: the busiest buckets, in time order.
        let mut top: Vec<_> = e.histogram.iter().collect();
        top.sort_by(|a, b| b.keys.cmp(&a.keys).then(a.start_ms.cmp(&b.start_ms)));
        top.truncate(AUTO_BARS as usize);
        top.sort_by_key(|b| b.start_ms);
        top.into_iter()
            .map(|b| (utc(b.start_ms), b.keys, human_bytes(b.memory)))
            .collect()
    };
    out.push_str(&bars_table(opts, "expires at (UTC)", &rows));
    if let (Some(c), None) = (e.clusters.first(), e.window) {
        let _ = writeln!(
            out,
            "zoom in: --expiry-window {}..{} --bucket 1s",
            iso(c.start_ms.saturating_sub(60_000)),
            iso(c.end_ms.saturating_add(60_000))
        );
    }
}

/// `YYYY-MM-DDThh:mm:ss`, as `--expiry-window` takes it.
fn iso(ms: i64) -> String {
    utc(ms).replacen(' ', "T", 1)
}

/// The window of a cluster in words: a second, a minute, an hour, or a span.
fn cluster_window(c: &ExpiryCluster) -> String {
    let t = utc(c.start_ms);
    match c.end_ms - c.start_ms {
        1_000 => format!("in the second {t} UTC"),
        60_000 if c.start_ms % 60_000 == 0 => format!("in the minute {} UTC", &t[..16]),
        3_600_000 if c.start_ms % 3_600_000 == 0 => format!("in the hour {}:00 UTC", &t[..13]),
        _ => format!("between {t} and {} UTC", utc(c.end_ms)),
    }
}

/// "N keys, S% of expiring, expire in the second ...: ns 28%, ..."
pub fn cluster_line(c: &ExpiryCluster) -> String {
    let share = |k: u64| format!("{:.0}%", k as f64 * 100.0 / c.keys.max(1) as f64);
    let mut ns: Vec<String> = c
        .namespaces
        .iter()
        .map(|(n, k)| format!("{n} {}", share(*k)))
        .collect();
    if c.other_keys > 0 {
        ns.push(format!("(other) {}", share(c.other_keys)));
    }
    format!(
        "{} keys, {:.1}% of expiring, {}, expire {}: {}",
        thousands(c.keys),
        c.share * 100.0,
        human_bytes(c.memory),
        cluster_window(c),
        ns.join(", ")
    )
}

/// Peak rate, active expiry and jitter advice of a cluster.
pub fn cluster_figures(c: &ExpiryCluster) -> String {
    let mut parts = Vec::new();
    if let Some(p) = c.peak_keys_per_second {
        parts.push(format!("peak {} keys/s", thousands(p)));
    }
    let a = &c.active_expiry;
    let mut active = String::from("active expiry (hz 10)");
    if a.busy_seconds > 0.0 {
        active.push_str(&format!(
            ": {:.2}s of back-to-back cycles at 25% CPU",
            a.busy_seconds
        ));
    }
    if a.sweep_seconds > 0.0 {
        active.push_str(&format!(
            "{} reclaims the rest within {} (unless read first)",
            if a.busy_seconds > 0.0 { ", then" } else { "" },
            seconds(a.sweep_seconds)
        ));
    }
    parts.push(active);
    if c.jitter_seconds > 0 {
        parts.push(format!(
            "spread these TTLs by +-{} to stay under the audit thresholds",
            jitter(c.jitter_seconds)
        ));
    }
    parts.push(format!("namespace counts +-{}", thousands(c.namespace_error)));
    parts.join("; ")
}

/// Modelled seconds: milliseconds below one second.
fn seconds(s: f64) -> String {
    if s < 0.001 {
        "<1ms".to_string()
    } else if s < 1.0 {
        format!("{:.0}ms", s * 1000.0)
    } else {
        duration((s * 1000.0) as i64)
    }
}

fn jitter(s: u64) -> String {
    if s >= 60 {
        let m = s / 60;
        format!("{m} minute{}", if m == 1 { "" } else { "s" })
    } else {
        format!("{s} second{}", if s == 1 { "" } else { "s" })
    }
}
