//! The expiry and TTL sections: the zoomable expiry timeline with its
//! clusters, TTLs left, and LRU idle times / LFU counters.

use std::io::{self, Write};

use rdblens_report::model::ExpiryJson;
use rdblens_report::ReportJson;
use rdblens_summary::acc::hist::Histogram;
use serde::Serialize;

use super::keys::key_table;
use crate::escape::html;
use crate::page::{bar, bytes, bytes_cell, count, count_cell, num, part, section, text, Col, Part, Table};

/// Expiry buckets at most in the zoomable timeline over the whole span...
const TIMELINE_BUCKETS: i64 = 2_000;

/// ...and across each expiry cluster.
const CLUSTER_BUCKETS: i64 = 3_600;

/// The timeline's data for the script (fields in name order).
#[derive(Serialize)]
pub(super) struct ExpiryData {
    pub bucket_ms: i64,
    /// [`fine_expiry`].
    pub buckets: Vec<[i64; 4]>,
    /// `(start_ms, end_ms, keys)` per cluster.
    pub clusters: Vec<(i64, i64, u64)>,
    pub stored_resolution_ms: i64,
}

/// The zoomable timeline's buckets, `[start_ms, keys, memory, width_ms]`:
/// the stored histogram in at most [`TIMELINE_BUCKETS`] buckets over the
/// report histogram's span, and at the stored resolution (or the finest
/// width keeping [`CLUSTER_BUCKETS`]) across each cluster, so zooming into
/// a cluster goes down to the second.
pub(super) fn fine_expiry(e: &ExpiryJson<'_>) -> Vec<[i64; 4]> {
    let h = e.cells;
    let stored = h.width_ms().max(1);
    let (Some(first), Some(last)) = (e.histogram.first(), e.histogram.last()) else {
        return Vec::new();
    };
    let span = last.start_ms + e.bucket_ms - first.start_ms;
    let coarse = stored * (span / stored / TIMELINE_BUCKETS + 1);
    // Cluster windows widened to whole coarse buckets, merged when they touch.
    let mut windows: Vec<(i64, i64)> = Vec::new();
    for c in &e.clusters {
        let start = c.start_ms.div_euclid(coarse) * coarse;
        let end = (c.end_ms + coarse - 1).div_euclid(coarse) * coarse;
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
    out
}

pub(super) fn ttl<'a>(m: &'a ReportJson<'a>) -> Option<Part<'a>> {
    let rows = m.ttl.as_ref()?;
    Some(part("ttl", "TTL", move |w| {
        section(
            w,
            "ttl",
            "Time to live",
            "Keys by remaining time to live at the snapshot.",
            |w| {
                let keys: u64 = rows.iter().map(|b| b.keys).sum();
                let mut t = Table::new(
                    w,
                    "ttl-table",
                    &[
                        Col("time to live", false),
                        Col("keys", true),
                        Col("share of keys", true),
                        Col("memory", true),
                    ],
                    false,
                    false,
                )?;
                for b in rows {
                    t.row(&[
                        text(b.bucket),
                        count_cell(b.keys),
                        bar(b.keys, keys),
                        bytes_cell(b.memory),
                    ])?;
                }
                t.finish()
            },
        )
    }))
}

pub(super) fn expiry<'a>(m: &'a ReportJson<'a>) -> Option<Part<'a>> {
    let e = m.expiry.as_ref()?;
    Some(part("expiry", "Expiry", move |w| {
        section(
            w,
            "expiry",
            "Expiry timeline",
            "When keys expire, by absolute time. Clusters (many keys in one window) are shaded; drag across the chart to zoom in, double-click to zoom out.",
            |w| expiry_body(e, w),
        )
    }))
}

fn expiry_body(e: &ExpiryJson<'_>, w: &mut dyn Write) -> io::Result<()> {
    write!(
        w,
        "<p class=\"facts\">{} keys ({}) expire; stored at {} resolution, shown in {} buckets.</p>",
        count(e.expiring_keys),
        bytes(e.expiring_memory),
        rdblens_report::format::duration(e.stored_resolution_ms),
        rdblens_report::format::duration(e.bucket_ms),
    )?;
    w.write_all(
        b"<div class=\"chart-tools\" id=\"timeline-tools\"></div><div class=\"chart\" id=\"timeline\" role=\"img\" aria-label=\"Expiry timeline\"></div>",
    )?;
    w.write_all(b"<h3>Expiry clusters</h3>")?;
    if e.clusters.is_empty() {
        w.write_all(b"<p>No cluster: no window holds an outsized share of the expiring keys.</p>")?;
    } else {
        let mut t = Table::new(
            w,
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
        )?;
        for (n, c) in e.clusters.iter().enumerate() {
            let mut namespaces: Vec<String> = c
                .namespaces
                .iter()
                .map(|(name, keys)| {
                    format!(
                        "{} ({})",
                        rdblens_parser::escape_bytes(name.as_bytes()),
                        count(*keys)
                    )
                })
                .collect();
            if c.other_keys > 0 {
                namespaces.push(format!("(other) ({})", count(c.other_keys)));
            }
            // The table report's words for the peak rate, active expiry and jitter.
            let figures = rdblens_report::table::cluster_figures(c);
            let resolution = c.resolution_ms;
            t.row_with(
                &format!(" id=\"cluster-{n}\" data-keys=\"{}\"", c.keys),
                &[
                    num(c.start_ms, &rdblens_report::format::utc(c.start_ms)),
                    num(c.end_ms, &rdblens_report::format::utc(c.end_ms)),
                    num(resolution, &rdblens_report::format::duration(resolution)),
                    count_cell(c.keys),
                    bytes_cell(c.memory),
                    num(c.share, &format!("{:.1}%", c.share * 100.0)),
                    text(&namespaces.join(", ")),
                    format!("<td class=\"muted small\">{}</td>", html(&figures)),
                ],
            )?;
        }
        t.finish()?;
    }
    let keys: u64 = e.histogram.iter().map(|b| b.keys).sum();
    write!(
        w,
        "<details class=\"print-open\"><summary>Histogram as a table ({} buckets)</summary>",
        e.histogram.len()
    )?;
    let mut h = Table::new(
        w,
        "expiry-histogram",
        &[
            Col("from (UTC)", false),
            Col("keys", true),
            Col("share", true),
            Col("memory", true),
        ],
        false,
        false,
    )?;
    for b in &e.histogram {
        h.row(&[
            num(b.start_ms, &rdblens_report::format::utc(b.start_ms)),
            count_cell(b.keys),
            bar(b.keys, keys),
            bytes_cell(b.memory),
        ])?;
    }
    h.finish()?;
    w.write_all(b"</details>")
}

/// A log2 histogram as a table.
fn log_histogram(
    w: &mut dyn Write,
    id: &str,
    label: &'static str,
    h: &Histogram,
    seconds: bool,
) -> io::Result<()> {
    let mut rows: Vec<(u64, u64)> = h.buckets().collect();
    if rows.is_empty() {
        return w.write_all(b"<p>Not stored in this dump (only with a maxmemory-policy of that kind).</p>");
    }
    rows.sort_unstable();
    let total: u64 = rows.iter().map(|r| r.1).sum();
    let mut t = Table::new(
        w,
        id,
        &[Col(label, true), Col("keys", true), Col("share", true)],
        false,
        false,
    )?;
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
        ])?;
    }
    t.finish()
}

pub(super) fn access<'a>(m: &'a ReportJson<'a>) -> Option<Part<'a>> {
    let a = m.access?;
    Some(part("access", "LRU/LFU", move |w| {
        section(
            w,
            "access",
            "LRU and LFU",
            "Idle times and access counters stored with the keys (RDB 9+, with a maxmemory-policy of that kind).",
            |w| {
                w.write_all(b"<div class=\"cols\"><div><h3>LRU idle time</h3>")?;
                log_histogram(w, "idle-histogram", "idle", &a.idle_seconds, true)?;
                w.write_all(b"</div><div><h3>LFU counter</h3>")?;
                log_histogram(w, "lfu-histogram", "counter", &a.lfu_freq, false)?;
                w.write_all(b"</div></div>")?;
                let lists = [
                    (&a.coldest, "coldest-keys", "Coldest keys"),
                    (&a.hottest, "hottest-keys", "Hottest keys"),
                ];
                for (list, id, title) in lists {
                    if !list.keys.is_empty() {
                        write!(w, "<h3>{title}</h3>")?;
                        key_table(w, id, &list.keys, m.now_ms, false)?;
                    }
                }
                Ok(())
            },
        )
    }))
}
