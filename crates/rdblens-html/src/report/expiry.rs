//! The expiry and TTL sections: the zoomable expiry timeline with its
//! clusters, TTLs left, and LRU idle times / LFU counters.

use rdblens_summary::acc::expiry::ExpiryHistogram;
use serde_json::{json, Value};

use super::keys::key_table;
use crate::escape::html;
use crate::page::{arr, bar, bytes, bytes_cell, count, count_cell, i, num, s, section, text, u, Col, Table};

/// Expiry buckets at most in the zoomable timeline over the whole span...
const TIMELINE_BUCKETS: i64 = 2_000;

/// ...and across each expiry cluster.
const CLUSTER_BUCKETS: i64 = 3_600;

/// The zoomable timeline's buckets, `[start_ms, keys, memory, width_ms]`:
/// the stored histogram in at most [`TIMELINE_BUCKETS`] buckets over the
/// report histogram's span, and at the stored resolution (or the finest
/// width keeping [`CLUSTER_BUCKETS`]) across each cluster, so zooming into
/// a cluster goes down to the second.
pub fn fine_expiry(h: &ExpiryHistogram, report: &Value) -> Value {
    let stored = h.width_ms().max(1);
    let bars = arr(report, "histogram");
    let (Some(first), Some(last)) = (bars.first(), bars.last()) else {
        return Value::Array(Vec::new());
    };
    let span = i(last, "start_ms") + i(report, "bucket_ms") - i(first, "start_ms");
    let coarse = stored * (span / stored / TIMELINE_BUCKETS + 1);
    // Cluster windows widened to whole coarse buckets, merged when they touch.
    let mut windows: Vec<(i64, i64)> = Vec::new();
    for c in arr(report, "clusters") {
        let start = i(c, "start_ms").div_euclid(coarse) * coarse;
        let end = (i(c, "end_ms") + coarse - 1).div_euclid(coarse) * coarse;
        match windows.last_mut() {
            Some(w) if start <= w.1 => w.1 = w.1.max(end),
            _ => windows.push((start, end)),
        }
    }
    let inside = |t: i64| windows.iter().any(|&(s, e)| (s..e).contains(&t));
    let mut out: Vec<[i64; 4]> = h
        .rebucket(coarse)
        .into_iter()
        .filter(|(start, _)| coarse == stored || !inside(*start))
        .map(|(start, b)| [start, b.keys as i64, b.memory as i64, coarse])
        .collect();
    if coarse > stored {
        for &(start, end) in &windows {
            let width = stored * ((end - start) / stored / CLUSTER_BUCKETS + 1);
            out.extend(
                h.rebucket_range(width, start, end)
                    .into_iter()
                    .map(|(t, b)| [t, b.keys as i64, b.memory as i64, width]),
            );
        }
        out.sort_unstable();
    }
    json!(out)
}

pub(super) fn ttl(d: &Value) -> Option<String> {
    let rows = d.get("ttl")?.as_array()?;
    let keys: u64 = rows.iter().map(|b| u(b, "keys")).sum();
    let mut t = Table::new(
        "ttl-table",
        &[
            Col("time to live", false),
            Col("keys", true),
            Col("share of keys", true),
            Col("memory", true),
        ],
        false,
        false,
    );
    for b in rows {
        t.row(&[
            text(s(b, "bucket")),
            count_cell(u(b, "keys")),
            bar(u(b, "keys"), keys),
            bytes_cell(u(b, "memory")),
        ]);
    }
    Some(section(
        "ttl",
        "Time to live",
        "Keys by remaining time to live at the snapshot.",
        &t.finish(),
    ))
}

pub(super) fn expiry(d: &Value) -> Option<String> {
    let e = d.get("expiry")?;
    let mut out = format!(
        "<p class=\"facts\">{} keys ({}) expire; stored at {} resolution, shown in {} buckets.</p>",
        count(u(e, "expiring_keys")),
        bytes(u(e, "expiring_memory")),
        rdblens_report::format::duration(i(e, "stored_resolution_ms")),
        rdblens_report::format::duration(i(e, "bucket_ms")),
    );
    out.push_str(
        "<div class=\"chart-tools\" id=\"timeline-tools\"></div><div class=\"chart\" id=\"timeline\" role=\"img\" aria-label=\"Expiry timeline\"></div>",
    );
    let clusters = arr(e, "clusters");
    out.push_str("<h3>Expiry clusters</h3>");
    if clusters.is_empty() {
        out.push_str("<p>No cluster: no window holds an outsized share of the expiring keys.</p>");
    } else {
        let mut t = Table::new(
            "clusters",
            &[
                Col("from (UTC)", false),
                Col("to", false),
                Col("found at", true),
                Col("keys", true),
                Col("memory", true),
                Col("share of expiring", true),
                Col("namespaces", false),
                Col("what it means", false),
            ],
            false,
            false,
        );
        for (n, c) in clusters.iter().enumerate() {
            let mut namespaces: Vec<String> = arr(c, "namespaces")
                .iter()
                .map(|pair| {
                    let name = pair.get(0).and_then(Value::as_str).unwrap_or("");
                    let keys = pair.get(1).and_then(Value::as_u64).unwrap_or(0);
                    format!(
                        "{} ({})",
                        rdblens_parser::escape_bytes(name.as_bytes()),
                        count(keys)
                    )
                })
                .collect();
            if u(c, "other_keys") > 0 {
                namespaces.push(format!("(other) ({})", count(u(c, "other_keys"))));
            }
            // The table report's words for the peak rate, active expiry and jitter.
            let figures = serde_json::from_value(c.clone())
                .map(|cluster| rdblens_report::table::cluster_figures(&cluster))
                .unwrap_or_default();
            let share = c.get("share").and_then(Value::as_f64).unwrap_or(0.0);
            let resolution = i(c, "resolution_ms");
            t.row_with(
                &format!(" id=\"cluster-{n}\" data-keys=\"{}\"", u(c, "keys")),
                &[
                    num(i(c, "start_ms"), &rdblens_report::format::utc(i(c, "start_ms"))),
                    num(i(c, "end_ms"), &rdblens_report::format::utc(i(c, "end_ms"))),
                    num(resolution, &rdblens_report::format::duration(resolution)),
                    count_cell(u(c, "keys")),
                    bytes_cell(u(c, "memory")),
                    num(share, &format!("{:.1}%", share * 100.0)),
                    text(&namespaces.join(", ")),
                    format!("<td class=\"muted small\">{}</td>", html(&figures)),
                ],
            );
        }
        out.push_str(&t.finish());
    }
    let mut h = Table::new(
        "expiry-histogram",
        &[
            Col("from (UTC)", false),
            Col("keys", true),
            Col("share", true),
            Col("memory", true),
        ],
        false,
        false,
    );
    let bars = arr(e, "histogram");
    let keys: u64 = bars.iter().map(|b| u(b, "keys")).sum();
    for b in bars {
        h.row(&[
            num(i(b, "start_ms"), &rdblens_report::format::utc(i(b, "start_ms"))),
            count_cell(u(b, "keys")),
            bar(u(b, "keys"), keys),
            bytes_cell(u(b, "memory")),
        ]);
    }
    out.push_str(&format!(
        "<details class=\"print-open\"><summary>Histogram as a table ({} buckets)</summary>{}</details>",
        bars.len(),
        h.finish()
    ));
    Some(section(
        "expiry",
        "Expiry timeline",
        "When keys expire, by absolute time. Clusters (many keys in one window) are shaded; drag across the chart to zoom in, double-click to zoom out.",
        &out,
    ))
}

/// A log2 histogram (`{"buckets": {"from": count}}`) as a table.
fn log_histogram(id: &str, label: &'static str, h: &Value, seconds: bool) -> String {
    let mut rows: Vec<(u64, u64)> = h
        .get("buckets")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_u64()?)))
                .collect()
        })
        .unwrap_or_default();
    rows.sort_unstable();
    let total: u64 = rows.iter().map(|r| r.1).sum();
    let mut t = Table::new(
        id,
        &[Col(label, true), Col("keys", true), Col("share", true)],
        false,
        false,
    );
    for (from, keys) in rows {
        let shown = if seconds {
            rdblens_report::format::duration(from as i64 * 1000)
        } else {
            from.to_string()
        };
        t.row(&[
            num(from, &format!("≥ {shown}")),
            count_cell(keys),
            bar(keys, total),
        ]);
    }
    if t.is_empty() {
        return "<p>Not stored in this dump (only with a maxmemory-policy of that kind).</p>".into();
    }
    t.finish()
}

pub(super) fn access(d: &Value) -> Option<String> {
    let a = d.get("access")?;
    let now = i(d, "now_ms");
    let mut out = String::from("<div class=\"cols\"><div><h3>LRU idle time</h3>");
    out.push_str(&log_histogram("idle-histogram", "idle", &a["idle_seconds"], true));
    out.push_str("</div><div><h3>LFU counter</h3>");
    out.push_str(&log_histogram("lfu-histogram", "counter", &a["lfu_freq"], false));
    out.push_str("</div></div>");
    for (list, title) in [("coldest", "Coldest keys"), ("hottest", "Hottest keys")] {
        let keys: Vec<&Value> = arr(&a[list], "keys").iter().collect();
        if !keys.is_empty() {
            out.push_str(&format!("<h3>{title}</h3>"));
            out.push_str(&key_table(&format!("{list}-keys"), &keys, now, false));
        }
    }
    Some(section(
        "access",
        "LRU and LFU",
        "Idle times and access counters stored with the keys (RDB 9+, with a maxmemory-policy of that kind).",
        &out,
    ))
}
