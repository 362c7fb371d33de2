//! The key tables: the biggest keys per figure and type, the keys that
//! miss their compact encoding by a little (encoding limits), and the
//! key-name statistics.

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

use rdblens_report::ReportJson;
use rdblens_summary::acc::top::KeyRecord;

use crate::escape::{html, key_text};
use crate::page::{bar, bytes_cell, count, count_cell, key, num, part, section, text, Col, Part, Table};

fn ttl_cell(record: &KeyRecord, now_ms: i64) -> String {
    match record.expiry_ms {
        Some(at) => num(at, &rdblens_report::format::duration(at.saturating_sub(now_ms))),
        None => num(-1, "-"),
    }
}

/// The TTL cell of keys alike: their TTL when they share it, else the
/// shortest to the longest (sorted by the shortest).
fn ttl_range_cell(records: &[&KeyRecord], now_ms: i64) -> String {
    let expiry = |r: &&KeyRecord| r.expiry_ms;
    let (first, last) = (records.iter().map(expiry).min(), records.iter().map(expiry).max());
    match (first, last) {
        (Some(Some(a)), Some(Some(b))) if a != b => num(
            a,
            &format!(
                "{} – {}",
                rdblens_report::format::duration(a.saturating_sub(now_ms)),
                rdblens_report::format::duration(b.saturating_sub(now_ms))
            ),
        ),
        // Some keys without an expiry (`None` sorts first) and some with.
        (Some(None), Some(Some(b))) => num(
            -1,
            &format!(
                "- – {}",
                rdblens_report::format::duration(b.saturating_sub(now_ms))
            ),
        ),
        _ => match records.first() {
            Some(r) => ttl_cell(r, now_ms),
            None => num(-1, "-"),
        },
    }
}

/// A table of key records, one row each.
pub(super) fn key_table(
    w: &mut dyn Write,
    id: &str,
    records: &[std::sync::Arc<KeyRecord>],
    now_ms: i64,
    filter: bool,
) -> io::Result<()> {
    let rows: Vec<Vec<&KeyRecord>> = records.iter().map(|r| vec![&**r]).collect();
    rows_table(w, id, &rows, None, now_ms, filter)
}

/// The glob naming a row of keys alike, from its first key.
type GlobOf<'a> = dyn Fn(&KeyRecord) -> Option<String> + 'a;

/// A table of rows of one key or of keys alike (the same database,
/// namespace, type, encoding and figures); `alike` gives the glob a row of
/// several keys is named by.
fn rows_table(
    w: &mut dyn Write,
    id: &str,
    rows: &[Vec<&KeyRecord>],
    alike: Option<&GlobOf<'_>>,
    now_ms: i64,
    filter: bool,
) -> io::Result<()> {
    let mut t = Table::new(
        w,
        id,
        &[
            Col("#", true),
            Col("db", true),
            Col("key", false),
            Col("type", false),
            Col("encoding", false),
            Col("elements", true),
            Col("memory", true),
            Col("serialized", true),
            Col("max element", true),
            Col("ttl", true),
        ],
        true,
        filter,
    )?;
    for (n, keys) in rows.iter().enumerate() {
        let Some(&r) = keys.first() else { continue };
        let (key_cell, ttl) = match (keys.len(), alike.and_then(|f| f(r))) {
            (many @ 2.., Some(glob)) => (
                format!(
                    "<td class=\"key\" data-keys=\"{many}\">{many} keys like <code>{}</code>, e.g. <code>{}</code></td>",
                    html(&glob),
                    html(&key_text(&r.key))
                ),
                ttl_range_cell(keys, now_ms),
            ),
            _ => (key(&r.key), ttl_cell(r, now_ms)),
        };
        t.row(&[
            num(n + 1, &(n + 1).to_string()),
            num(r.db, &r.db.to_string()),
            key_cell,
            text(&r.type_name),
            text(&r.encoding),
            count_cell(r.elements),
            bytes_cell(r.memory),
            bytes_cell(r.serialized_bytes),
            bytes_cell(r.max_element_len),
            ttl,
        ])?;
    }
    t.finish()
}

/// The namespace of a key name as the report counts it: up to the
/// `depth`-th separator, or its last; `None` without a separator.
fn namespace(key: &[u8], separator: u8, depth: usize) -> Option<&[u8]> {
    let cut = key
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == separator)
        .map(|(at, _)| at)
        .take(depth.max(1))
        .last()?;
    Some(&key[..cut])
}

/// What makes keys alike: namespace, database, type, encoding and figures.
type Alike<'r> = (&'r [u8], u64, &'r str, &'r str, [u64; 4]);

/// The top lists as rows: a key in several lists is one row, and keys
/// alike (the same database, namespace, type, encoding, elements, memory,
/// serialized size and largest element: 25 `feed:*` strings of 456 B) are
/// one row, where the first of them is.
fn top_rows<'r>(
    lists: [&'r [std::sync::Arc<KeyRecord>]; 3],
    separator: u8,
    depth: usize,
) -> Vec<Vec<&'r KeyRecord>> {
    let mut seen: HashSet<(u64, &[u8])> = HashSet::new();
    let mut rows: Vec<Vec<&KeyRecord>> = Vec::new();
    let mut groups: HashMap<Alike<'r>, usize> = HashMap::new();
    for list in lists {
        for r in list {
            if !seen.insert((r.db, r.key.as_bytes())) {
                continue;
            }
            let alike = namespace(r.key.as_bytes(), separator, depth).map(|ns| {
                (
                    ns,
                    r.db,
                    r.type_name.as_str(),
                    r.encoding.as_str(),
                    [r.elements, r.memory, r.serialized_bytes, r.max_element_len],
                )
            });
            match alike.as_ref().and_then(|a| groups.get(a)) {
                Some(&row) => rows[row].push(r),
                None => {
                    if let Some(a) = alike {
                        groups.insert(a, rows.len());
                    }
                    rows.push(vec![r]);
                }
            }
        }
    }
    rows
}

pub(super) fn top_keys<'a>(m: &'a ReportJson<'a>) -> Option<Part<'a>> {
    let top = m.top_keys.as_ref()?;
    Some(part("bigkeys", "Top keys", move |w| {
        // The three top lists as one table: sorted by a column, its first rows
        // are that column's top list (a key big enough for one list is in it).
        let separator = m
            .prefixes
            .as_ref()
            .map(|p| p.separator.as_bytes())
            .and_then(|b| (b.len() == 1).then(|| b[0]))
            .unwrap_or(b':');
        let depth = m.prefixes.as_ref().map_or(1, |p| p.depth);
        let rows = top_rows(
            [top.by_memory, top.by_serialized, top.by_elements],
            separator,
            depth,
        );
        let glob = |r: &KeyRecord| {
            let mut pattern = namespace(r.key.as_bytes(), separator, depth)?.to_vec();
            pattern.extend_from_slice(&[separator, b'*']);
            Some(rdblens_report::format::quote_key(&pattern))
        };
        let n = top.by_memory.len();
        let alike = if rows.iter().any(|r| r.len() > 1) {
            " Keys alike (the same database, namespace, type, encoding and figures) share one row."
        } else {
            ""
        };
        section(
            w,
            "bigkeys",
            "Top keys",
            &format!(
                "The biggest keys by estimated memory, serialized size and element count (top {n} of each, in one table). Click a column to sort by it; type to filter.{alike}"
            ),
            |w| {
                rows_table(w, "top-keys", &rows, Some(&glob), m.now_ms, true)?;
                crate::sizes::value_sizes(m, w)
            },
        )
    }))
}

pub(super) fn limits<'a>(m: &'a ReportJson<'a>) -> Option<Part<'a>> {
    let rows = m.limits.as_ref()?;
    Some(part("limits", "Encoding limits", move |w| {
        if rows.is_empty() {
            return section(
                w,
                "limits",
                "Compact-encoding limits",
                "No key is over or near a compact-encoding limit (listpack, intset) of the target server.",
                |_| Ok(()),
            );
        }
        section(
            w,
            "limits",
            "Compact-encoding limits",
            "Keys over a limit use the big encoding; savings is what raising the limit past them would save.",
            |w| {
                let mut t = Table::new(
                    w,
                    "limit-table",
                    &[
                        Col("limit", false),
                        Col("threshold", true),
                        Col("keys over", true),
                        Col("their memory", true),
                        Col("savings if compact", true),
                        Col("keys near", true),
                        Col("their memory", true),
                        Col("example", false),
                    ],
                    true,
                    false,
                )?;
                for l in rows {
                    let example = l.over_examples.first().map_or_else(|| text(""), |r| key(&r.key));
                    let n = l.counts;
                    t.row(&[
                        format!("<td><code>{}</code></td>", html(l.limit)),
                        count_cell(n.threshold),
                        count_cell(n.over_keys),
                        bytes_cell(n.over_memory),
                        bytes_cell(n.over_savings),
                        count_cell(n.near_keys),
                        bytes_cell(n.near_memory),
                        example,
                    ])?;
                }
                t.finish()
            },
        )
    }))
}

pub(super) fn key_names<'a>(m: &'a ReportJson<'a>) -> Option<Part<'a>> {
    let k = m.key_names.as_ref()?;
    Some(part("keynames", "Key names", move |w| {
        section(w, "keynames", "Key names", "", |w| {
            let opt = |n: Option<u64>| n.map(count).unwrap_or_else(|| "-".into());
            write!(
                w,
                "<p class=\"facts\">{} keys; name length min {}, median {}, p90 {}, p99 {}, max {} bytes.</p>",
                count(k.keys),
                opt(k.min),
                opt(k.p50),
                opt(k.p90),
                opt(k.p99),
                opt(k.max)
            )?;
            let mut t = Table::new(
                w,
                "name-lengths",
                &[
                    Col("length from (bytes)", true),
                    Col("keys", true),
                    Col("share", true),
                ],
                false,
                false,
            )?;
            for b in &k.histogram {
                t.row(&[count_cell(b.from), count_cell(b.keys), bar(b.keys, k.keys)])?;
            }
            t.finish()?;
            w.write_all(b"<h3>Naming problems</h3>")?;
            if k.problems.is_empty() {
                return w.write_all(b"<p>None found.</p>");
            }
            let mut p = Table::new(
                w,
                "name-problems",
                &[
                    Col("problem", false),
                    Col("keys", true),
                    Col("memory", true),
                    Col("examples", false),
                ],
                false,
                false,
            )?;
            for pr in &k.problems {
                let examples: Vec<String> = pr
                    .examples
                    .iter()
                    .take(3)
                    .map(|e| format!("<code>{}</code>", html(&key_text(e))))
                    .collect();
                p.row(&[
                    text(crate::names::problem(pr.id)),
                    count_cell(pr.keys),
                    bytes_cell(pr.memory),
                    format!("<td class=\"key\">{}</td>", examples.join(" ")),
                ])?;
            }
            p.finish()
        })
    }))
}
