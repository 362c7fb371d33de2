//! Terminal tables (comfy-table) with horizontal-bar histograms.

use std::fmt::Write;

use comfy_table::{presets, Cell, CellAlignment, ContentArrangement, Table};
use rdblens_analysis::acc::expiry::ExpiryCluster;
use rdblens_analysis::acc::hist::Histogram;
use rdblens_analysis::acc::top::KeyRecord;
use rdblens_analysis::acc::ttl::TTL_BUCKETS;
use rdblens_analysis::Summary;

use crate::format::{bar, duration, human_bytes, percent, short_key, thousands, utc};
use crate::json::prefixes_json;
use crate::options::{ReportOptions, Section, SortBy};

const BAR_WIDTH: usize = 40;

pub(crate) fn table(opts: &ReportOptions, header: &[&str]) -> Table {
    let mut t = Table::new();
    match opts.width {
        Some(w) => {
            t.load_preset(presets::UTF8_FULL_CONDENSED)
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(w);
        }
        None => {
            t.load_preset(presets::ASCII_MARKDOWN);
        }
    }
    t.set_header(header.iter().map(|h| Cell::new(*h)));
    t
}

pub(crate) fn right(s: impl ToString) -> Cell {
    Cell::new(s.to_string()).set_alignment(CellAlignment::Right)
}

pub(crate) fn heading(out: &mut String, title: &str) {
    let _ = write!(out, "\n== {title} ==\n");
}

/// Bars for a distribution: (bucket lower bound, count), merging buckets so
/// that at most ~24 bars are drawn.
pub fn length_bars(h: &Histogram) -> Vec<(u64, u64)> {
    let mut bars: Vec<(u64, u64)> = Vec::new();
    for (b, n) in h.buckets() {
        // Power-of-two groups: 0, 1, 2-3, 4-7, ...
        let group = if b == 0 {
            0
        } else {
            1u64 << (63 - b.leading_zeros())
        };
        match bars.last_mut() {
            Some(last) if last.0 == group => last.1 += n,
            _ => bars.push((group, n)),
        }
    }
    bars
}

fn bars_table(opts: &ReportOptions, label: &str, rows: &[(String, u64, String)]) -> String {
    let max = rows.iter().map(|r| r.1).max().unwrap_or(0);
    let mut t = table(opts, &[label, "keys", "", "memory"]);
    for (name, n, extra) in rows {
        t.add_row(vec![
            Cell::new(name),
            right(thousands(*n)),
            Cell::new(bar(*n, max, BAR_WIDTH)),
            right(extra),
        ]);
    }
    format!("{t}\n")
}

fn ttl_cell(expiry_ms: Option<i64>, now_ms: i64) -> String {
    match expiry_ms {
        None => "-".into(),
        Some(t) if t <= now_ms => "expired".into(),
        Some(t) => duration(t.saturating_sub(now_ms)),
    }
}

fn keys_table(opts: &ReportOptions, rows: &[KeyRecord], now_ms: i64, n: usize) -> String {
    let mut t = table(
        opts,
        &[
            "#",
            "db",
            "key",
            "type",
            "encoding",
            "elements",
            "memory",
            "serialized",
            "max elem",
            "ttl",
        ],
    );
    for (i, r) in rows.iter().take(n).enumerate() {
        t.add_row(vec![
            right(i + 1),
            right(r.db),
            Cell::new(short_key(r.key.as_bytes())),
            Cell::new(&r.type_name),
            Cell::new(&r.encoding),
            right(thousands(r.elements)),
            right(human_bytes(r.memory)),
            right(human_bytes(r.serialized_bytes)),
            right(human_bytes(r.max_element_len)),
            right(ttl_cell(r.expiry_ms, now_ms)),
        ]);
    }
    format!("{t}\n")
}

fn overview(out: &mut String, s: &Summary, opts: &ReportOptions) {
    for f in &s.files {
        let ver = f
            .aux
            .get("redis-ver")
            .or_else(|| f.aux.get("valkey-ver"))
            .map_or("?", String::as_str);
        let _ = writeln!(
            out,
            "{} ({}): {} RDB {}, server {ver}, checksum {}, {} keys, estimated for {}",
            f.path,
            human_bytes(f.size),
            f.dialect,
            f.rdb_version,
            f.checksum,
            thousands(f.keys),
            f.profile
        );
        if let Some(d) = &f.incomplete {
            let _ = writeln!(
                out,
                "INCOMPLETE: the report covers only the part before byte offset {}: {}",
                d.offset, d.message
            );
        }
        for w in &f.warnings {
            let _ = writeln!(out, "WARNING: {w}");
        }
        // Then which allocator build and how far the line's estimates are
        // checked: the two things a reader needs to trust the figures.
        if let Some(a) = &f.allocator {
            let _ = writeln!(out, "  {}", a.description);
        }
        if let Some(a) = &f.accuracy {
            let _ = writeln!(out, "  expected accuracy ({}): {}", a.line, a.statement);
        }
    }
    let k = &s.keys;
    let _ = writeln!(
        out,
        "snapshot time {} UTC; {} keys, {} with expiry; estimated memory {} (+{} keyspace overhead); {} serialized",
        utc(s.settings.now_ms),
        thousands(k.totals.keys),
        thousands(k.totals.keys_with_expiry),
        human_bytes(k.totals.memory),
        human_bytes(k.totals.keyspace_overhead),
        human_bytes(k.totals.serialized_bytes)
    );
    // Summaries are checked on reading (damage records come with the
    // count); a renderer does not rely on it.
    if let (true, Some(first)) = (k.damaged_keys > 0, k.damage.first()) {
        let _ = writeln!(
            out,
            "{} keys could not be decoded; first: {}",
            k.damaged_keys, first.message
        );
    }
    let mut t = table(opts, &["db", "keys", "expiring", "memory", "serialized"]);
    for (db, c) in &k.databases {
        t.add_row(vec![
            right(db),
            right(thousands(c.keys)),
            right(thousands(c.keys_with_expiry)),
            right(human_bytes(c.memory)),
            right(human_bytes(c.serialized_bytes)),
        ]);
    }
    let _ = writeln!(out, "{t}");
    let mut t = table(opts, &["type", "keys", "share", "memory", "share", "elements"]);
    for (name, c) in &k.types {
        t.add_row(vec![
            Cell::new(name),
            right(thousands(c.keys)),
            right(percent(c.keys, k.totals.keys)),
            right(human_bytes(c.memory)),
            right(percent(c.memory, k.totals.memory)),
            right(thousands(c.elements)),
        ]);
    }
    let _ = writeln!(out, "{t}");
}

fn bigkeys(out: &mut String, s: &Summary, opts: &ReportOptions) {
    let top = &s.keys.top;
    let now = s.settings.now_ms;
    let memory = ("estimated memory", &top.by_memory.keys);
    let serialized = ("serialized size", &top.by_serialized.keys);
    let elements = ("element count", &top.by_elements.keys);
    let order = match opts.sort {
        SortBy::Memory => [memory, serialized, elements],
        SortBy::Serialized => [serialized, memory, elements],
        SortBy::Elements => [elements, memory, serialized],
    };
    for (what, keys) in order {
        heading(out, &format!("Biggest keys by {what}"));
        out.push_str(&keys_table(opts, keys, now, opts.top));
    }
    for (t, [by_mem, _, _]) in &top.per_type {
        heading(out, &format!("Biggest {t} keys by memory"));
        out.push_str(&keys_table(opts, &by_mem.keys, now, opts.top.min(5)));
    }
}

fn encodings(out: &mut String, s: &Summary, opts: &ReportOptions) {
    let k = &s.keys;
    heading(out, "Encodings (after loading on the target server)");
    let mut t = table(opts, &["type encoding", "keys", "memory", "share of memory"]);
    for (name, c) in &k.encodings {
        t.add_row(vec![
            Cell::new(name),
            right(thousands(c.keys)),
            right(human_bytes(c.memory)),
            right(percent(c.memory, k.totals.memory)),
        ]);
    }
    let _ = writeln!(out, "{t}");
    if k.limits.groups.is_empty() {
        return;
    }
    heading(out, "Compact-encoding limits");
    let mut t = table(
        opts,
        &[
            "limit",
            "value",
            "keys over",
            "memory over",
            "compact would save",
            "over by <= 2x",
            "within 10% under",
        ],
    );
    for (name, g) in &k.limits.groups {
        t.add_row(vec![
            Cell::new(name),
            right(g.threshold),
            right(thousands(g.over_keys)),
            right(human_bytes(g.over_memory)),
            right(human_bytes(g.over_savings)),
            right(thousands(g.over_by_small_margin)),
            right(thousands(g.near_keys)),
        ]);
    }
    let _ = writeln!(out, "{t}");
}

fn ttl(out: &mut String, s: &Summary, opts: &ReportOptions) {
    let b = &s.keys.ttl.buckets;
    heading(
        out,
        &format!("Time to live (relative to {} UTC)", utc(s.settings.now_ms)),
    );
    let rows: Vec<(String, u64, String)> = (0..10)
        .map(|i| (TTL_BUCKETS[i].to_string(), b.keys[i], human_bytes(b.memory[i])))
        .collect();
    out.push_str(&bars_table(opts, "ttl", &rows));
}

fn expiry(out: &mut String, s: &Summary, opts: &ReportOptions) {
    let h = &s.keys.expiry;
    if h.expiring_keys == 0 {
        return;
    }
    let clusters: Vec<_> = s
        .keys
        .expiry_clusters(opts.cluster_rule)
        .into_iter()
        .filter(|c| opts.in_expiry_window(c.start_ms, c.end_ms))
        .collect();
    heading(out, "Expiry clusters");
    if clusters.is_empty() {
        let _ = writeln!(
            out,
            "none: no window of 1s, 10s, 1m, 10m or 1h holds a spike of expiring keys (cells of {})",
            duration(h.width_ms())
        );
    }
    for c in &clusters {
        let _ = writeln!(out, "{}", cluster_line(c));
        let _ = writeln!(out, "  {}", cluster_figures(c));
    }
    let width = opts.expiry_bucket_ms(h);
    let (from, to) = opts.expiry_range();
    let title = match opts.expiry_window {
        Some(_) => format!(
            "Expiry times ({} buckets, {} to {} UTC)",
            duration(width),
            utc(from),
            utc(to)
        ),
        None => format!("Expiry times ({} buckets)", duration(width)),
    };
    heading(out, &title);
    let buckets = h.rebucket_range(width, from, to);
    let rows: Vec<(String, u64, String)> = if buckets.len() <= 2 * crate::options::AUTO_BARS as usize {
        buckets
            .iter()
            .map(|(&t, b)| (utc(t), b.keys, human_bytes(b.memory)))
            .collect()
    } else {
        // Too many to draw: the busiest buckets, in time order.
        let mut top: Vec<_> = buckets.iter().collect();
        top.sort_by(|a, b| b.1.keys.cmp(&a.1.keys).then(a.0.cmp(b.0)));
        top.truncate(crate::options::AUTO_BARS as usize);
        top.sort_by_key(|(t, _)| **t);
        top.into_iter()
            .map(|(&t, b)| (utc(t), b.keys, human_bytes(b.memory)))
            .collect()
    };
    out.push_str(&bars_table(opts, "expires at (UTC)", &rows));
    if !clusters.is_empty() && opts.expiry_window.is_none() {
        let c = &clusters[0];
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

fn keys(out: &mut String, s: &Summary, opts: &ReportOptions) {
    let n = &s.keys.key_names;
    let l = &n.lengths;
    heading(out, "Key names");
    let _ = writeln!(
        out,
        "length: min {} mean {:.1} p50 {} p90 {} p99 {} max {}",
        l.min.unwrap_or(0),
        l.mean().unwrap_or(0.0),
        l.quantile(0.5).unwrap_or(0),
        l.quantile(0.9).unwrap_or(0),
        l.quantile(0.99).unwrap_or(0),
        l.max.unwrap_or(0)
    );
    let rows: Vec<(String, u64, String)> = length_bars(l)
        .into_iter()
        .map(|(from, k)| {
            let to = if from < 2 { from } else { from * 2 - 1 };
            (
                if from == to {
                    format!("{from} B")
                } else {
                    format!("{from}-{to} B")
                },
                k,
                String::new(),
            )
        })
        .collect();
    out.push_str(&bars_table(opts, "key length", &rows));
    if n.problems.is_empty() {
        return;
    }
    let mut t = table(opts, &["problem", "keys", "share", "memory", "examples"]);
    for (p, c) in &n.problems {
        let examples: Vec<String> = c
            .examples
            .keys
            .iter()
            .take(3)
            .map(|r| short_key(r.key.as_bytes()))
            .collect();
        t.add_row(vec![
            Cell::new(
                serde_json::to_value(p)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
            ),
            right(thousands(c.keys)),
            right(percent(c.keys, s.keys.totals.keys)),
            right(human_bytes(c.memory)),
            Cell::new(examples.join(" ")),
        ]);
    }
    let _ = writeln!(out, "{t}");
}

fn prefixes(out: &mut String, s: &Summary, opts: &ReportOptions) {
    let k = &s.keys;
    heading(
        out,
        &format!("Namespaces (separator '{}')", s.settings.separator as char),
    );
    let (nodes, folded) = prefixes_json(&k.prefixes.root);
    let mut t = table(opts, &["prefix", "keys", "memory", "share of memory", "no ttl"]);
    for node in nodes.iter().take(opts.top) {
        let add = |t: &mut Table, indent: &str, n: &crate::json::PrefixJson| {
            t.add_row(vec![
                Cell::new(format!("{indent}{}", short_key(n.prefix.as_bytes()))),
                right(thousands(n.totals.keys)),
                right(human_bytes(n.totals.memory)),
                right(percent(n.totals.memory, k.totals.memory)),
                right(percent(n.ttl[0].keys, n.totals.keys)),
            ]);
        };
        add(&mut t, "", node);
        for child in node.children.iter().take(3) {
            add(&mut t, "  ", child);
        }
        if let Some(f) = &node.folded {
            t.add_row(vec![
                Cell::new(format!("  (+~{} more prefixes)", thousands(f.prefixes))),
                right(thousands(f.totals.keys)),
                right(human_bytes(f.totals.memory)),
                right(percent(f.totals.memory, k.totals.memory)),
                Cell::new(""),
            ]);
        }
    }
    if let Some(f) = folded {
        t.add_row(vec![
            Cell::new(format!("(+~{} more namespaces)", thousands(f.prefixes))),
            right(thousands(f.totals.keys)),
            right(human_bytes(f.totals.memory)),
            right(percent(f.totals.memory, k.totals.memory)),
            Cell::new(""),
        ]);
    }
    let u = &k.prefixes.unprefixed;
    if u.keys > 0 {
        t.add_row(vec![
            Cell::new("(no namespace)"),
            right(thousands(u.keys)),
            right(human_bytes(u.memory)),
            right(percent(u.memory, k.totals.memory)),
            right(percent(u.keys.saturating_sub(u.keys_with_expiry), u.keys)),
        ]);
    }
    let _ = writeln!(out, "{t}");
}

fn slots(out: &mut String, s: &Summary, opts: &ReportOptions) {
    let j = crate::json::build(s, opts).slots;
    let Some(j) = j else { return };
    heading(out, &format!("Cluster slots ({} of 16384 used)", j.slots_used));
    let mut t = table(opts, &["slot", "keys", "memory"]);
    for r in j.most_memory.iter().take(opts.top.min(10)) {
        t.add_row(vec![
            right(r.slot),
            right(thousands(r.keys)),
            right(human_bytes(r.memory)),
        ]);
    }
    let _ = writeln!(out, "{t}");
    if !j.hash_tags.is_empty() {
        let mut t = table(opts, &["hash tag", "keys", "memory"]);
        for r in j.hash_tags.iter().take(opts.top.min(10)) {
            t.add_row(vec![
                Cell::new(short_key(r.tag.as_bytes())),
                right(thousands(r.keys)),
                right(human_bytes(r.memory)),
            ]);
        }
        let _ = writeln!(out, "{t}");
    }
}

fn access(out: &mut String, s: &Summary, opts: &ReportOptions) {
    let a = &s.keys.access;
    let now = s.settings.now_ms;
    if a.idle_seconds.count > 0 {
        heading(out, "Idle time (LRU)");
        let rows: Vec<(String, u64, String)> = length_bars(&a.idle_seconds)
            .into_iter()
            // Idle times come from the file: any u64 (fuzz_regressions/analyze).
            .map(|(from, k)| {
                let ms = i64::try_from(from).unwrap_or(i64::MAX).saturating_mul(1000);
                (format!(">= {}", duration(ms)), k, String::new())
            })
            .collect();
        out.push_str(&bars_table(opts, "idle", &rows));
        heading(out, "Coldest keys");
        out.push_str(&keys_table(opts, &a.coldest.keys, now, opts.top.min(10)));
    }
    if a.lfu_freq.count > 0 {
        heading(out, "Access frequency (LFU counter)");
        let rows: Vec<(String, u64, String)> = length_bars(&a.lfu_freq)
            .into_iter()
            .map(|(from, k)| (format!(">= {from}"), k, String::new()))
            .collect();
        out.push_str(&bars_table(opts, "LFU counter", &rows));
        heading(out, "Hottest keys");
        out.push_str(&keys_table(opts, &a.hottest.keys, now, opts.top.min(10)));
    }
}

/// Renders the chosen sections as text.
pub fn render(s: &Summary, opts: &ReportOptions) -> String {
    let mut out = String::new();
    overview(&mut out, s, opts);
    for sec in Section::ALL {
        if !opts.sections.contains(&sec) {
            continue;
        }
        match sec {
            Section::Shards => crate::shards::render(&mut out, s, opts),
            Section::Bigkeys => bigkeys(&mut out, s, opts),
            Section::Encodings => encodings(&mut out, s, opts),
            Section::Ttl => ttl(&mut out, s, opts),
            Section::Expiry => expiry(&mut out, s, opts),
            Section::Keys => keys(&mut out, s, opts),
            Section::Prefixes => prefixes(&mut out, s, opts),
            Section::Slots => slots(&mut out, s, opts),
            Section::Access => access(&mut out, s, opts),
            Section::Findings => crate::findings::render(&mut out, &rdblens_audit::audit(s), opts),
            Section::Plans => {}
        }
    }
    if opts.sections.contains(&Section::Plans) {
        out.push('\n');
        out.push_str(&rdblens_advice::text::render(
            &opts.plans(s, &rdblens_audit::audit(s)),
        ));
    }
    out
}
