//! The diff page (`diff`): what changed between two snapshots, from the
//! diff model (docs/diff.md), with growth per namespace as diverging bars.

use std::io::{self, Write};

use rdblens_report::diff::{DiffJson, GroupDiff, KeyChange, KeyChangeKind, SideJson};
use rdblens_summary::acc::counter::Counter;
use rdblens_summary::acc::top::Metric;

use crate::escape::{html, key_text, prefix_text};
use crate::page::{
    bytes, bytes_cell, card, code_cell, count, count_cell, num, part, section, text, Col, Page, Table,
};

fn signed_bytes(d: i64) -> String {
    rdblens_report::diff::signed_bytes(d)
}

fn signed_count(d: i64) -> String {
    rdblens_report::diff::signed_count(d)
}

/// A change as a bar left (shrank) or right (grew) of the middle, scaled to `max`.
fn diverging(delta: i64, max: u64) -> String {
    let pct = if max == 0 {
        0.0
    } else {
        delta.unsigned_abs() as f64 * 50.0 / max as f64
    };
    let (class, style) = if delta < 0 {
        ("down", format!("right:50%;width:{pct:.2}%"))
    } else {
        ("up", format!("left:50%;width:{pct:.2}%"))
    };
    format!(
        "<td class=\"divcell\" data-v=\"{delta}\"><span class=\"div\"><i class=\"{class}\" style=\"{style}\"></i></span><small>{}</small></td>",
        html(&signed_bytes(delta))
    )
}

fn group_table(w: &mut dyn Write, id: &str, label: &'static str, rows: &[GroupDiff]) -> io::Result<()> {
    let max = rows
        .iter()
        .map(|g| g.delta.memory.unsigned_abs())
        .max()
        .unwrap_or(0);
    let mut t = Table::new(
        w,
        id,
        &[
            Col(label, false),
            Col("keys before", true),
            Col("keys after", true),
            Col("keys change", true),
            Col("memory before", true),
            Col("memory after", true),
            Col("memory change", true),
        ],
        true,
        false,
    )?;
    for g in rows {
        let dk = g.delta.keys;
        t.row(&[
            text(&g.name),
            count_cell(g.old.keys),
            count_cell(g.new.keys),
            num(dk, &signed_count(dk)),
            bytes_cell(g.old.memory),
            bytes_cell(g.new.memory),
            diverging(g.delta.memory, max),
        ])?;
    }
    t.finish()
}

/// A side's files, as one line.
fn side(s: &SideJson<'_>) -> String {
    s.files.join(", ")
}

pub fn page<'a>(d: &'a DiffJson<'a>) -> io::Result<Page<'a>> {
    Ok(Page {
        title: "rdblens diff",
        subtitle: format!("{} → {}", side(&d.old), side(&d.new)),
        sections: vec![
            part("overview", "Overview", move |w| overview(d, w)),
            part("namespaces", "Namespaces", move |w| namespaces(d, w)),
            part("groups", "Types", move |w| {
                section(w, "groups", "Types, encodings and databases", "", |w| {
                    w.write_all(b"<h3>By type</h3>")?;
                    group_table(w, "types", "type", &d.types)?;
                    w.write_all(b"<h3>By encoding</h3>")?;
                    group_table(w, "encodings", "type encoding", &d.encodings)?;
                    if d.databases.len() > 1 {
                        w.write_all(b"<h3>By database</h3>")?;
                        group_table(w, "databases", "db", &d.databases)?;
                    }
                    Ok(())
                })
            }),
            part("became-big", "Became big", move |w| became_big(d, w)),
            part("key-changes", "Keys changed", move |w| key_changes(d, w)),
            part("expiry", "Expiry", move |w| new_clusters(d, w)),
        ],
        data: "{}".to_string(),
    })
}

fn overview(d: &DiffJson<'_>, w: &mut dyn Write) -> io::Result<()> {
    section(w, "overview", "Overview", "", |w| {
        let t = &d.totals;
        let (old, new) = (&t.old, &t.new);
        w.write_all(b"<div class=\"cards\">")?;
        for card in [
            card(
                "total-keys",
                "Keys after",
                new.keys,
                &count(new.keys),
                &format!("{} since before", signed_count(t.delta.keys)),
            ),
            card(
                "total-memory",
                "Memory after",
                new.memory,
                &bytes(new.memory),
                &format!("{} since before", signed_bytes(t.delta.memory)),
            ),
            card("keys-before", "Keys before", old.keys, &count(old.keys), ""),
            card(
                "memory-before",
                "Memory before",
                old.memory,
                &bytes(old.memory),
                "",
            ),
        ] {
            w.write_all(card.as_bytes())?;
        }
        w.write_all(b"</div>")?;
        write!(
            w,
            "<ul class=\"notes\"><li>Before: <span class=\"path\">{}</span> (TTLs relative to {} UTC)</li><li>After: <span class=\"path\">{}</span> (TTLs relative to {} UTC)</li></ul>",
            html(&side(&d.old)),
            rdblens_report::format::utc(d.old.now_ms),
            html(&side(&d.new)),
            rdblens_report::format::utc(d.new.now_ms),
        )
    })
}

fn namespaces(d: &DiffJson<'_>, w: &mut dyn Write) -> io::Result<()> {
    section(
        w,
        "namespaces",
        "Growth per namespace",
        "Namespaces whose figures changed, largest memory change first.",
        |w| {
            let max = d
                .namespaces
                .iter()
                .map(|n| n.delta.map_or(0, |dl| dl.memory.unsigned_abs()))
                .max()
                .unwrap_or(0);
            let mut nt = Table::new(
                w,
                "namespace-growth",
                &[
                    Col("namespace", false),
                    Col("level", true),
                    Col("keys before", true),
                    Col("keys after", true),
                    Col("memory before", true),
                    Col("memory after", true),
                    Col("memory change (left: shrank, right: grew)", true),
                ],
                true,
                true,
            )?;
            // A side that folded the namespace away.
            let side_cell = |c: Option<Counter>, cell: fn(u64) -> String, field: fn(&Counter) -> u64| match c
            {
                Some(c) => cell(field(&c)),
                None => num(-1, "folded"),
            };
            let keys = |c: &Counter| c.keys;
            let memory = |c: &Counter| c.memory;
            for n in &d.namespaces {
                nt.row(&[
                    code_cell(&prefix_text(&n.prefix)),
                    num(n.level, &n.level.to_string()),
                    side_cell(n.old, count_cell, keys),
                    side_cell(n.new, count_cell, keys),
                    side_cell(n.old, bytes_cell, memory),
                    side_cell(n.new, bytes_cell, memory),
                    match n.delta {
                        Some(dl) => diverging(dl.memory, max),
                        None => num(0, "unknown"),
                    },
                ])?;
            }
            nt.finish()
        },
    )
}

fn became_big(d: &DiffJson<'_>, w: &mut dyn Write) -> io::Result<()> {
    section(
        w,
        "became-big",
        "Keys that became big",
        "Keys of the new top lists that were absent from the old ones or smaller there.",
        |w| {
            if d.became_big.is_empty() {
                return w.write_all(b"<p>None.</p>");
            }
            let mut bt = Table::new(
                w,
                "became-big-table",
                &[
                    Col("key", false),
                    Col("type", false),
                    Col("metric", false),
                    Col("before", true),
                    Col("now", true),
                ],
                true,
                true,
            )?;
            for b in &d.became_big {
                let fmt = |v: u64| {
                    if b.metric == Metric::Elements {
                        count(v)
                    } else {
                        bytes(v)
                    }
                };
                let before = match (b.old_value, b.old_at_most) {
                    (Some(v), _) => num(v, &fmt(v)),
                    (None, Some(at_most)) => num(at_most, &format!("≤ {}", fmt(at_most))),
                    (None, None) => num(0, "new"),
                };
                bt.row(&[
                    code_cell(&key_text(&b.key.key)),
                    text(&b.key.type_name),
                    text(crate::names::metric(b.metric)),
                    before,
                    num(b.new_value, &fmt(b.new_value)),
                ])?;
            }
            bt.finish()
        },
    )
}

fn key_change_name(kind: KeyChangeKind) -> &'static str {
    match kind {
        KeyChangeKind::Appeared => "appeared",
        KeyChangeKind::Disappeared => "disappeared",
        KeyChangeKind::Grew => "grew",
        KeyChangeKind::Shrank => "shrank",
    }
}

fn key_changes(d: &DiffJson<'_>, w: &mut dyn Write) -> io::Result<()> {
    section(
        w,
        "key-changes",
        "Keys that appeared, disappeared, grew or shrank most",
        "By estimated memory, from both sides' top lists: a key missing from one side's lists is absent there, or at most as big as that list's smallest key (≤).",
        |w| {
            let kc = &d.key_changes;
            let lists: [(KeyChangeKind, &[KeyChange<'_>]); 4] = [
                (KeyChangeKind::Appeared, &kc.appeared),
                (KeyChangeKind::Disappeared, &kc.disappeared),
                (KeyChangeKind::Grew, &kc.grew),
                (KeyChangeKind::Shrank, &kc.shrank),
            ];
            if lists.iter().all(|(_, l)| l.is_empty()) {
                return w.write_all(b"<p>None.</p>");
            }
            let mut kt = Table::new(
                w,
                "key-changes-table",
                &[
                    Col("change", false),
                    Col("key", false),
                    Col("type", false),
                    Col("before", true),
                    Col("now", true),
                    Col("change in memory", true),
                ],
                true,
                true,
            )?;
            for (kind, list) in lists {
                for k in list {
                    // A side the key is not listed on: absent, or at most its list's smallest.
                    let side = |memory: Option<u64>, at_most: Option<u64>| match (memory, at_most) {
                        (Some(v), _) => num(v, &bytes(v)),
                        (None, Some(v)) => num(v, &format!("≤ {}", bytes(v))),
                        (None, None) => num(0, "absent"),
                    };
                    kt.row(&[
                        text(key_change_name(kind)),
                        code_cell(&key_text(k.key)),
                        text(k.type_name),
                        side(k.old_memory, k.old_at_most),
                        side(k.new_memory, k.new_at_most),
                        num(k.delta, &signed_bytes(k.delta)),
                    ])?;
                }
            }
            kt.finish()
        },
    )
}

fn new_clusters(d: &DiffJson<'_>, w: &mut dyn Write) -> io::Result<()> {
    let e = &d.expiry;
    section(
        w,
        "expiry",
        "New expiry clusters",
        &format!(
            "Compared in {} buckets; the old side had {} clusters. Clusters of the new side that overlap none of them:",
            rdblens_report::format::duration(e.bucket_ms),
            e.old_clusters
        ),
        |w| {
            if e.new_clusters.is_empty() {
                return w.write_all(b"<p>None.</p>");
            }
            let mut et = Table::new(
                w,
                "new-clusters",
                &[
                    Col("from (UTC)", false),
                    Col("to", false),
                    Col("keys", true),
                    Col("memory", true),
                ],
                false,
                false,
            )?;
            for c in &e.new_clusters {
                et.row_with(
                    &format!(" data-keys=\"{}\"", c.keys),
                    &[
                        num(c.start_ms, &rdblens_report::format::utc(c.start_ms)),
                        num(c.end_ms, &rdblens_report::format::utc(c.end_ms)),
                        count_cell(c.keys),
                        bytes_cell(c.memory),
                    ],
                )?;
            }
            et.finish()
        },
    )
}
