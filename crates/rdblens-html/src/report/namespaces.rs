//! The namespaces section: the prefix tree as a table (readable without
//! JavaScript) and as the treemap's data.

use std::io::{self, Write};

use rdblens_report::model::{ExpiredJson, FoldedJson, PrefixJson, PrefixesJson};
use rdblens_report::ReportJson;
use rdblens_summary::acc::counter::Counter;
use serde::Serialize;

use crate::escape::{html, prefix_text};
use crate::page::{
    bar, bytes, bytes_cell, code_cell, count, count_cell, part, section, text, Col, Part, Table,
};

/// Namespaces in the treemap at most, whatever `--depth` (the heaviest
/// namespaces' children first).
const TREEMAP_NODES: usize = 2_500;

/// Namespaces per level in the treemap, and first-level rows in the table.
const NAMESPACE_ROWS: usize = 50;

/// Rows per deeper level in the table (the treemap shows more).
const CHILD_ROWS: usize = 10;

/// Rows below the first level in the table at most, whatever `--depth`.
const TABLE_CHILD_ROWS: usize = 500;

/// The treemap's data for the script (fields in name order).
#[derive(Serialize)]
pub(super) struct TreemapData {
    depth: usize,
    /// `[memory, keys]` of the keys without a namespace.
    no_namespace: [u64; 2],
    separator: String,
    tree: Vec<TreemapNode>,
}

/// A namespace in the treemap: `[label, memory, keys, children]`.
#[derive(Serialize)]
struct TreemapNode(String, u64, u64, Vec<TreemapNode>);

/// Namespaces for the treemap, at most [`NAMESPACE_ROWS`] per level and
/// [`TREEMAP_NODES`] in all.
pub(super) fn treemap_data(p: &PrefixesJson<'_>) -> TreemapData {
    fn level(nodes: &[PrefixJson], budget: &mut usize) -> Vec<TreemapNode> {
        let kept = &nodes[..nodes.len().min(NAMESPACE_ROWS.min(*budget))];
        *budget -= kept.len();
        kept.iter()
            .map(|n| {
                let mut children = level(&n.children, budget);
                // What was folded away still takes its share of the area.
                if let Some(f) = &n.folded {
                    children.push(TreemapNode(
                        format!("(~{} more, folded)", count(f.prefixes)),
                        f.totals.memory,
                        f.totals.keys,
                        Vec::new(),
                    ));
                }
                TreemapNode(prefix_text(&n.prefix), n.totals.memory, n.totals.keys, children)
            })
            .collect()
    }
    let mut budget = TREEMAP_NODES;
    TreemapData {
        separator: p.separator.clone(),
        depth: p.depth,
        tree: level(&p.namespaces, &mut budget),
        no_namespace: [p.no_namespace.memory, p.no_namespace.keys],
    }
}

/// A namespace row's figures: keys, expiring, memory and its share, serialized.
fn figures(c: &Counter, total: u64) -> [String; 5] {
    [
        count_cell(c.keys),
        count_cell(c.keys_with_expiry),
        bytes_cell(c.memory),
        bar(c.memory, total),
        bytes_cell(c.serialized_bytes),
    ]
}

/// A row: its first cell, then [`figures`].
fn row(t: &mut Table<'_>, attrs: &str, first: String, c: &Counter, total: u64) -> io::Result<()> {
    let [keys, expiring, memory, share, serialized] = figures(c, total);
    t.row_with(attrs, &[first, keys, expiring, memory, share, serialized])
}

/// What the table's rows below the first level may still take.
struct Rows<'a> {
    sep: &'a str,
    total: u64,
    /// Rows below the first level still allowed.
    budget: usize,
}

/// The rows of `nodes` (whose `prefix` is their whole path, `user:42`) and
/// of their children.
fn rows(
    t: &mut Table<'_>,
    nodes: &[PrefixJson],
    parent: &str,
    level: usize,
    cx: &mut Rows<'_>,
) -> io::Result<()> {
    let (sep, total) = (cx.sep, cx.total);
    let shown = if level == 1 {
        NAMESPACE_ROWS
    } else {
        let shown = CHILD_ROWS.min(cx.budget);
        cx.budget -= shown;
        shown
    };
    for (index, n) in nodes.iter().enumerate().take(shown) {
        let name = prefix_text(&n.prefix);
        row(
            t,
            &format!(" class=\"lvl{level}\""),
            format!("<td class=\"key\"><code>{}{}</code></td>", html(&name), html(sep)),
            &n.totals,
            total,
        )?;
        rows(t, &n.children, &format!("{name}{sep}"), level + 1, cx)?;
        if let Some(f) = &n.folded {
            row(
                t,
                &format!(" class=\"lvl{} more\"", level + 1),
                text(&format!("~{} more under {name}{sep} (folded)", count(f.prefixes))),
                &f.totals,
                total,
            )?;
        }
        if nodes.len() > shown && index + 1 == shown {
            let rest = &nodes[shown..];
            let mem: u64 = rest.iter().map(|n| n.totals.memory).sum();
            let keys: u64 = rest.iter().map(|n| n.totals.keys).sum();
            t.row_with(
                &format!(" class=\"lvl{level} more\""),
                &[
                    text(&format!(
                        "… {} more {}",
                        rest.len(),
                        if parent.is_empty() {
                            "namespaces".to_string()
                        } else {
                            format!("under {parent}")
                        }
                    )),
                    count_cell(keys),
                    text(""),
                    bytes_cell(mem),
                    bar(mem, total),
                    text(""),
                ],
            )?;
        }
    }
    Ok(())
}

pub(super) fn namespaces<'a>(m: &'a ReportJson<'a>) -> Option<Part<'a>> {
    let p = m.prefixes.as_ref()?;
    Some(part("namespaces", "Namespaces", move |w| {
        let sep = p.separator.as_str();
        section(
            w,
            "namespaces",
            "Memory by namespace",
            &format!(
                "Key names split on <code>{}</code>, {} levels deep. Click a namespace in the map to look inside it.",
                html(sep),
                p.depth
            ),
            |w| {
                w.write_all(b"<div class=\"chart\" id=\"treemap\" role=\"img\" aria-label=\"Namespace treemap\"></div>")?;
                let total = m.totals.memory;
                let mut t = Table::new(
                    w,
                    "namespace-table",
                    &[
                        Col("namespace", false),
                        Col("keys", true),
                        Col("expiring", true),
                        Col("memory", true),
                        Col("share of memory", true),
                        Col("serialized", true),
                    ],
                    false,
                    true,
                )?;
                let mut cx = Rows {
                    sep,
                    total,
                    budget: TABLE_CHILD_ROWS,
                };
                rows(&mut t, &p.namespaces, "", 1, &mut cx)?;
                let none = p.no_namespace;
                if none.keys > 0 {
                    row(&mut t, " class=\"lvl1\"", text("(no namespace)"), none, total)?;
                }
                if let Some(FoldedJson { prefixes, totals }) = &p.folded {
                    row(
                        &mut t,
                        " class=\"lvl1 more\"",
                        text(&format!("(~{} namespaces folded)", count(*prefixes))),
                        totals,
                        total,
                    )?;
                }
                t.finish()?;
                expired(w, &p.expired, m.now_ms)
            },
        )
    }))
}

/// The keys already expired at the reference time, per namespace (only
/// when there are any): memory that loading the dump frees.
fn expired(w: &mut dyn Write, e: &ExpiredJson, now_ms: i64) -> io::Result<()> {
    if e.total.keys == 0 {
        return Ok(());
    }
    write!(
        w,
        "<h3>Already expired</h3><p>{} keys ({}) already expired{} are still in the dump: loading it (or the server's expiry) frees them.</p>",
        count(e.total.keys),
        bytes(e.total.memory),
        html(&format!(" at {} UTC", rdblens_report::format::utc(now_ms))),
    )?;
    let mut t = Table::new(
        w,
        "expired-table",
        &[
            Col("namespace", false),
            Col("expired keys", true),
            Col("memory", true),
        ],
        false,
        true,
    )?;
    for n in e.namespaces.iter().take(NAMESPACE_ROWS) {
        for (level, node) in std::iter::once((1, n)).chain(n.children.iter().take(CHILD_ROWS).map(|c| (2, c)))
        {
            t.row_with(
                &format!(" class=\"lvl{level}\""),
                &[
                    code_cell(&prefix_text(&node.prefix)),
                    count_cell(node.expired.keys),
                    bytes_cell(node.expired.memory),
                ],
            )?;
        }
    }
    let rest = &e.namespaces[NAMESPACE_ROWS.min(e.namespaces.len())..];
    let mut tail: Vec<(String, u64, u64)> = Vec::new();
    if !rest.is_empty() {
        let keys = rest.iter().map(|n| n.expired.keys).sum();
        let memory = rest.iter().map(|n| n.expired.memory).sum();
        tail.push((format!("… {} more namespaces", rest.len()), keys, memory));
    }
    if e.folded.keys > 0 {
        tail.push(("(folded namespaces)".into(), e.folded.keys, e.folded.memory));
    }
    if e.no_namespace.keys > 0 {
        tail.push((
            "(no namespace)".into(),
            e.no_namespace.keys,
            e.no_namespace.memory,
        ));
    }
    for (label, keys, memory) in tail {
        t.row_with(
            " class=\"lvl1\"",
            &[text(&label), count_cell(keys), bytes_cell(memory)],
        )?;
    }
    t.finish()
}
