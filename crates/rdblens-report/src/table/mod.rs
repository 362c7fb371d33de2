//! The table renderer: terminal tables (comfy-table) with horizontal-bar
//! histograms, read from the report model, section by section.

mod expiry;
mod findings;
mod keys;
mod names;
mod shards;
mod view;

use std::fmt::Write;

use comfy_table::Cell;

use crate::cells::{right, table};
use crate::format::{human_bytes, percent, thousands, utc};
use crate::model::ReportJson;

pub use expiry::{cluster_figures, cluster_line};
pub use view::{access as access_cell, ttl as ttl_cell};

/// A prediction of `used_memory` and its parts, with the `used-mem` the
/// file recorded when it was saved, where given.
fn used_memory_line(u: &rdblens_summary::UsedMemory, saved: Option<u64>) -> String {
    let mut line = format!(
        "predicted used_memory once loaded: {} = MEMORY USAGE of the keys {} + keyspace {}",
        human_bytes(u.predicted),
        human_bytes(u.values),
        human_bytes(u.keyspace),
    );
    if u.value_rounding > 0 {
        let _ = write!(
            line,
            " + allocations MEMORY USAGE leaves out {}",
            human_bytes(u.value_rounding)
        );
    }
    if u.usage_overcount > 0 {
        let _ = write!(
            line,
            " - counted but not allocated {}",
            human_bytes(u.usage_overcount)
        );
    }
    let _ = write!(line, " + idle server {}", human_bytes(u.baseline));
    if u.unestimated_keys > 0 {
        let _ = write!(line, ", {} module values left out", thousands(u.unestimated_keys));
    }
    if u.expired_keys > 0 {
        let _ = write!(
            line,
            ", {} keys already expired left out (a primary drops them)",
            thousands(u.expired_keys)
        );
    }
    if let Some(saved) = saved {
        let _ = write!(line, "; used-mem when saved: {}", human_bytes(saved));
    }
    line
}

/// The files, the totals, and keys per database and per type: shown
/// whatever the sections.
fn overview(out: &mut String, r: &ReportJson<'_>) {
    let opts = r.options;
    for f in &r.files {
        if f.dialect.is_empty() {
            // A shard of a fleet that could not be read: no header to show.
            let why = f
                .incomplete
                .as_ref()
                .map_or("", |d| d.message.trim_start_matches("not read: "));
            let _ = writeln!(out, "{}: NOT READ: {why}", f.path);
            continue;
        }
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
        if let Some(u) = &f.used_memory {
            let saved = f.used_mem();
            let _ = writeln!(out, "  {}", used_memory_line(u, saved));
        }
    }
    let totals = r.totals;
    let _ = writeln!(
        out,
        "snapshot time {} UTC; {} keys, {} with expiry; estimated memory {} (+{} keyspace overhead); {} serialized",
        utc(r.now_ms),
        thousands(totals.keys),
        thousands(totals.keys_with_expiry),
        human_bytes(totals.memory),
        human_bytes(totals.keyspace_overhead),
        human_bytes(totals.serialized_bytes)
    );
    if let (Some(u), true) = (&r.used_memory, r.files.len() > 1) {
        let _ = writeln!(
            out,
            "the {} files, a server each: {}",
            r.files.len(),
            used_memory_line(u, None)
        );
    }
    if r.empty.keys > 0 {
        let e = r.empty;
        let named: Vec<String> = e
            .named
            .iter()
            .map(|k| {
                format!(
                    "db{} {} ({})",
                    k.db,
                    crate::cells::key_text(opts, k.key.as_bytes()),
                    k.type_name
                )
            })
            .collect();
        let more = match e.keys.saturating_sub(e.named.len() as u64) {
            0 => String::new(),
            n => format!(" and {} more", thousands(n)),
        };
        let _ = writeln!(
            out,
            "{} empty collections ({} serialized) left out of every figure: a server drops them on load; {}{more}",
            thousands(e.keys),
            human_bytes(e.serialized_bytes),
            named.join(", ")
        );
    }
    if r.damaged_keys > 0 {
        let first = r.damage.first().map_or("(not recorded)", |d| d.message.as_str());
        let _ = writeln!(
            out,
            "{} keys could not be decoded; first: {first}",
            r.damaged_keys
        );
    }
    let mut t = table(opts, &["db", "keys", "expiring", "memory", "serialized"]);
    for g in &r.databases {
        let c = g.counter;
        t.add_row(vec![
            right(&g.name),
            right(thousands(c.keys)),
            right(thousands(c.keys_with_expiry)),
            right(human_bytes(c.memory)),
            right(human_bytes(c.serialized_bytes)),
        ]);
    }
    let _ = writeln!(out, "{}", crate::cells::fitted(&mut t, opts));
    let mut t = table(opts, &["type", "keys", "share", "memory", "share", "elements"]);
    for g in &r.types {
        let c = g.counter;
        t.add_row(vec![
            Cell::new(&g.name),
            right(thousands(c.keys)),
            right(percent(c.keys, totals.keys)),
            right(human_bytes(c.memory)),
            right(percent(c.memory, totals.memory)),
            right(thousands(c.elements)),
        ]);
    }
    let _ = writeln!(out, "{}", crate::cells::fitted(&mut t, opts));
}

/// The report as text: the overview, then every section the model holds,
/// in the order of [`Section::ALL`](crate::section::Section::ALL), split plans last.
pub fn render(r: &ReportJson<'_>) -> String {
    let mut out = String::new();
    overview(&mut out, r);
    shards::render(&mut out, r);
    if let Some(top) = &r.top_keys {
        keys::bigkeys(&mut out, r, top);
    }
    if let (Some(encodings), Some(limits)) = (&r.encodings, &r.limits) {
        names::encodings(&mut out, r, encodings, limits);
    }
    if let Some(buckets) = &r.ttl {
        expiry::ttl(&mut out, r, buckets);
    }
    if let Some(e) = &r.expiry {
        expiry::expiry(&mut out, r, e);
    }
    if let Some(n) = &r.key_names {
        names::key_names(&mut out, r, n);
    }
    if let Some(p) = &r.prefixes {
        names::prefixes(&mut out, r, p);
    }
    if let Some(s) = &r.slots {
        names::slots(&mut out, r, s);
    }
    if let Some(a) = r.access {
        keys::access(&mut out, r, a);
    }
    for view in r.registered.views() {
        view::render(&mut out, r, &view);
    }
    if let Some(a) = r.findings() {
        findings::render(&mut out, a, r.options);
    }
    if let Some(plans) = &r.plans {
        out.push('\n');
        out.push_str(&rdblens_advice::text::render(plans));
    }
    crate::words::wrap_prose(&out, r.options.width)
}
