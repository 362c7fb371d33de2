//! The report page (`report` and `merge`): every section of the report
//! model, as tables rendered here (readable without JavaScript and in
//! print) and as charts the script draws from the same model.

use std::io::{self, Write};

use rdblens_report::model::Group;
use rdblens_report::ReportJson;
use rdblens_summary::{Checksum, FileInfo};
use serde::Serialize;

use crate::escape::{html, key_text, script_json};
use crate::page::{
    bar, bytes, bytes_cell, card, count, count_cell, part, percent, section, text, Col, Page, Part, Table,
};

mod expiry;
mod findings;
mod keys;
mod namespaces;
mod shards;
mod view;

use expiry::{access, expiry, fine_expiry, ttl, ExpiryData};
use findings::findings;
use keys::{key_names, limits, top_keys};
use namespaces::{namespaces, treemap_data, TreemapData};
use shards::{shards, slots};

/// What the script draws the charts from (fields in name order, as the
/// page has always written them).
#[derive(Serialize)]
struct ChartData {
    expiry: Option<ExpiryData>,
    namespaces: Option<TreemapData>,
}

/// The page of the report model `m`: its sections (each written when the
/// page reaches it) and the charts' data.
pub fn page<'a>(m: &'a ReportJson<'a>) -> io::Result<Page<'a>> {
    let mut sections = vec![part("overview", "Overview", move |w| overview(m, w))];
    sections.extend(
        [
            shards(m),
            namespaces(m),
            Some(memory(m)),
            top_keys(m),
            expiry(m),
            findings(m),
            crate::plans::plans(m),
            limits(m),
            ttl(m),
            key_names(m),
            slots(m),
            access(m),
        ]
        .into_iter()
        .flatten(),
    );
    sections.extend(view::registered(m));
    let subtitle = match &m.files[..] {
        [f] => f.path.clone(),
        fs => format!("{} files", fs.len()),
    };
    let data = ChartData {
        expiry: m.expiry.as_ref().map(|e| ExpiryData {
            bucket_ms: e.bucket_ms,
            buckets: fine_expiry(e),
            clusters: e
                .clusters
                .iter()
                .map(|c| (c.start_ms, c.end_ms, c.keys))
                .collect(),
            stored_resolution_ms: e.stored_resolution_ms,
        }),
        namespaces: m.prefixes.as_ref().map(treemap_data),
    };
    Ok(Page {
        title: "rdblens report",
        subtitle,
        sections,
        data: script_json(&data)?,
    })
}

fn overview(m: &ReportJson<'_>, w: &mut dyn Write) -> io::Result<()> {
    section(w, "overview", "Overview", "", |w| overview_body(m, w))
}

fn overview_body(m: &ReportJson<'_>, w: &mut dyn Write) -> io::Result<()> {
    let t = m.totals;
    w.write_all(b"<div class=\"cards\">")?;
    w.write_all(card("total-keys", "Keys", t.keys, &count(t.keys), "").as_bytes())?;
    w.write_all(
        card(
            "total-memory",
            "Estimated memory",
            t.memory,
            &bytes(t.memory),
            &format!("+{} keyspace overhead", bytes(t.keyspace_overhead)),
        )
        .as_bytes(),
    )?;
    if let Some(used) = &m.used_memory {
        let saved = match &m.files[..] {
            [f] => f.used_mem(),
            _ => None,
        };
        let note = match (saved, m.files.len()) {
            (Some(saved), _) => format!("once loaded; used-mem when saved: {}", bytes(saved)),
            (None, 1) => "once loaded".to_string(),
            (None, n) => format!("once loaded, {n} servers together"),
        };
        w.write_all(
            card(
                "used-memory",
                "Predicted used_memory",
                used.predicted,
                &bytes(used.predicted),
                &note,
            )
            .as_bytes(),
        )?;
    }
    w.write_all(
        card(
            "expiring-keys",
            "Keys with a TTL",
            t.keys_with_expiry,
            &count(t.keys_with_expiry),
            &percent(t.keys_with_expiry, t.keys),
        )
        .as_bytes(),
    )?;
    w.write_all(
        card(
            "serialized",
            "Serialized",
            t.serialized_bytes,
            &bytes(t.serialized_bytes),
            "as stored in the file",
        )
        .as_bytes(),
    )?;
    if let Some(biggest) = m.top_keys.as_ref().and_then(|top| top.by_memory.first()) {
        write!(
            w,
            "<div class=\"card\"><div class=\"label\">Biggest key</div><div class=\"value key\"><code id=\"biggest-key\">{}</code></div><div class=\"note\">{} · {} {}</div></div>",
            html(&key_text(&biggest.key)),
            bytes(biggest.memory),
            html(&biggest.type_name),
            html(&biggest.encoding),
        )?;
    }
    w.write_all(b"</div>")?;

    let mut files = Table::new(
        w,
        "files",
        &[
            Col("file", false),
            Col("size", true),
            Col("format", false),
            Col("server", false),
            Col("checksum", false),
            Col("estimated for", false),
            Col("model accuracy", false),
            Col("keys", true),
            Col("snapshot time", false),
        ],
        false,
        false,
    )?;
    for f in &m.files {
        let aux = |name| aux(f, name);
        let ctime = aux("ctime")
            .parse::<i64>()
            .map(|secs| rdblens_report::format::utc(secs * 1000) + " UTC")
            .unwrap_or_default();
        let checksum = f.checksum.as_str();
        files.row(&[
            format!("<td class=\"path\">{}</td>", html(&f.path)),
            bytes_cell(f.size),
            text(&format!("{} RDB {}", f.dialect, f.rdb_version)),
            text(if aux("valkey-ver").is_empty() {
                aux("redis-ver")
            } else {
                aux("valkey-ver")
            }),
            format!(
                "<td><span class=\"pill {}\">{}</span></td>",
                pill_class(f.checksum),
                html(checksum)
            ),
            text(&f.profile.to_string()),
            match &f.accuracy {
                Some(a) => format!(
                    "<td><span class=\"pill {}\">{}</span></td>",
                    if a.level == rdblens_memory::AccuracyLevel::Verified {
                        "ok"
                    } else {
                        "info"
                    },
                    html(a.level.as_str())
                ),
                None => text("-"),
            },
            count_cell(f.keys),
            text(&ctime),
        ])?;
    }
    files.finish()?;

    w.write_all(b"<ul class=\"notes\">")?;
    let mut said: Vec<String> = Vec::new();
    for f in &m.files {
        // The memory model's assumptions, once per distinct statement.
        for line in [
            f.allocator
                .as_ref()
                .map(|a| format!("Allocator {}", a.description)),
            f.accuracy.as_ref().map(|a| format!("Accuracy: {}", a.statement)),
        ]
        .into_iter()
        .flatten()
        {
            if !said.contains(&line) {
                write!(w, "<li>{}</li>", html(&line))?;
                said.push(line);
            }
        }
        if let Some(inc) = &f.incomplete {
            write!(
                w,
                "<li class=\"crit\">{}: incomplete: {}</li>",
                html(&f.path),
                html(&inc.message)
            )?;
        }
        for warning in &f.warnings {
            write!(w, "<li class=\"warn\">{}: {}</li>", html(&f.path), html(warning))?;
        }
    }
    let empty = m.empty;
    if empty.keys > 0 {
        let named: Vec<String> = empty
            .named
            .iter()
            .map(|k| format!("db{} {} ({})", k.db, key_text(&k.key), k.type_name))
            .collect();
        let more = empty.keys.saturating_sub(named.len() as u64);
        let more = if more > 0 {
            format!(" and {} more", count(more))
        } else {
            String::new()
        };
        write!(
            w,
            "<li class=\"warn\">{} empty collections, left out of every figure: a server drops them on load; {}{more}</li>",
            count(empty.keys),
            html(&named.join(", "))
        )?;
    }
    if m.damaged_keys > 0 {
        write!(
            w,
            "<li class=\"crit\">{} keys could not be decoded</li>",
            count(m.damaged_keys)
        )?;
        for damage in m.damage {
            write!(w, "<li class=\"crit\">{}</li>", html(&damage.message))?;
        }
    }
    let c = m.compression;
    if c.compressed_values > 0 {
        write!(
            w,
            "<li>{} values stored LZF-compressed: {} in the file, {} decompressed</li>",
            count(c.compressed_values),
            bytes(c.stored_bytes),
            bytes(c.uncompressed_bytes)
        )?;
    }
    write!(
        w,
        "<li>TTLs relative to {} UTC</li></ul>",
        rdblens_report::format::utc(m.now_ms)
    )
}

/// An AUX field the file was saved with (`ctime`, `redis-ver`...: named
/// by the RDB format, not by the model), "" when the file has none.
fn aux<'f>(f: &'f FileInfo, name: &str) -> &'f str {
    f.aux.get(name).map_or("", String::as_str)
}

fn pill_class(checksum: Checksum) -> &'static str {
    match checksum {
        Checksum::Valid => "ok",
        Checksum::Mismatch => "crit",
        Checksum::Disabled | Checksum::Absent | Checksum::Unknown => "info",
    }
}

/// A table of groups (a name and its figures) with a memory-share bar.
fn groups(
    w: &mut dyn Write,
    id: &str,
    label: &'static str,
    rows: &[Group<'_>],
    total_memory: u64,
) -> io::Result<()> {
    let mut t = Table::new(
        w,
        id,
        &[
            Col(label, false),
            Col("keys", true),
            Col("expiring", true),
            Col("memory", true),
            Col("share of memory", true),
            Col("serialized", true),
            Col("elements", true),
        ],
        true,
        false,
    )?;
    for g in rows {
        let c = g.counter;
        t.row(&[
            text(&g.name),
            count_cell(c.keys),
            count_cell(c.keys_with_expiry),
            bytes_cell(c.memory),
            bar(c.memory, total_memory),
            bytes_cell(c.serialized_bytes),
            count_cell(c.elements),
        ])?;
    }
    t.finish()
}

fn memory<'a>(m: &'a ReportJson<'a>) -> Part<'a> {
    part("memory", "Memory", move |w| {
        section(
            w,
            "memory",
            "Memory by type and encoding",
            "Estimated memory is the sum of the keys' MEMORY USAGE on the target server.",
            |w| {
                let total = m.totals.memory;
                w.write_all(b"<h3>By type</h3>")?;
                groups(w, "types", "type", &m.types, total)?;
                if let Some(encodings) = &m.encodings {
                    w.write_all(b"<h3>By encoding (after loading on the target server)</h3>")?;
                    groups(w, "encodings", "type encoding", encodings, total)?;
                    w.write_all(b"<h3>By type in the file</h3>")?;
                    groups(
                        w,
                        "rdb-types",
                        "rdb type",
                        m.rdb_types.as_deref().unwrap_or_default(),
                        total,
                    )?;
                }
                if m.databases.len() > 1 {
                    w.write_all(b"<h3>By database</h3>")?;
                    groups(w, "databases", "db", &m.databases, total)?;
                }
                Ok(())
            },
        )
    })
}
