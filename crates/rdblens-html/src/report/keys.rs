//! The key tables: the biggest keys per figure and type, the keys that
//! miss their compact encoding by a little (encoding limits), and the
//! key-name statistics.

use serde_json::Value;

use crate::escape::{html, key_bytes, key_text};
use crate::page::{arr, bar, bytes_cell, count, count_cell, i, key, num, s, section, text, u, Col, Table};

fn ttl_cell(record: &Value, now_ms: i64) -> String {
    match record.get("expiry_ms").and_then(Value::as_i64) {
        Some(at) => num(at, &rdblens_report::format::duration(at.saturating_sub(now_ms))),
        None => num(-1, "-"),
    }
}

/// The TTL cell of keys alike: their TTL when they share it, else the
/// shortest to the longest (sorted by the shortest).
fn ttl_range_cell(records: &[&Value], now_ms: i64) -> String {
    let expiry = |r: &&Value| r.get("expiry_ms").and_then(Value::as_i64);
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
        _ => ttl_cell(records[0], now_ms),
    }
}

/// A table of key records, one row each.
pub(super) fn key_table(id: &str, records: &[&Value], now_ms: i64, filter: bool) -> String {
    let rows: Vec<Vec<&Value>> = records.iter().map(|r| vec![*r]).collect();
    rows_table(id, &rows, None, now_ms, filter)
}

/// The glob naming a row of keys alike, from its first key.
type GlobOf<'a> = dyn Fn(&Value) -> Option<String> + 'a;

/// A table of rows of one key or of keys alike (the same database,
/// namespace, type, encoding and figures); `alike` gives the glob a row of
/// several keys is named by.
fn rows_table(
    id: &str,
    rows: &[Vec<&Value>],
    alike: Option<&GlobOf<'_>>,
    now_ms: i64,
    filter: bool,
) -> String {
    let mut t = Table::new(
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
    );
    for (n, keys) in rows.iter().enumerate() {
        let r = keys[0];
        let (key_cell, ttl) = match (keys.len(), alike.and_then(|f| f(r))) {
            (many @ 2.., Some(glob)) => (
                format!(
                    "<td class=\"key\" data-keys=\"{many}\">{many} keys like <code>{}</code>, e.g. <code>{}</code></td>",
                    html(&glob),
                    html(&key_text(r))
                ),
                ttl_range_cell(keys, now_ms),
            ),
            _ => (key(r), ttl_cell(r, now_ms)),
        };
        t.row(&[
            num(n + 1, &(n + 1).to_string()),
            num(u(r, "db"), &u(r, "db").to_string()),
            key_cell,
            text(s(r, "type")),
            text(s(r, "encoding")),
            count_cell(u(r, "elements")),
            bytes_cell(u(r, "memory")),
            bytes_cell(u(r, "serialized_bytes")),
            bytes_cell(u(r, "max_element_len")),
            ttl,
        ]);
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

/// The top lists as rows: a key in several lists is one row, and keys
/// alike (the same database, namespace, type, encoding, elements, memory,
/// serialized size and largest element: 25 `feed:*` strings of 456 B) are
/// one row, where the first of them is.
fn top_rows(d: &Value, separator: u8, depth: usize) -> Vec<Vec<&Value>> {
    let top = &d["top_keys"];
    let mut seen = std::collections::HashSet::new();
    let mut rows: Vec<Vec<&Value>> = Vec::new();
    let mut groups: std::collections::HashMap<_, usize> = std::collections::HashMap::new();
    for list in ["by_memory", "by_serialized", "by_elements"] {
        for r in arr(top, list) {
            if !seen.insert((u(r, "db"), key_text(r))) {
                continue;
            }
            let name = key_bytes(r).unwrap_or_default();
            let alike = namespace(&name, separator, depth).map(|ns| {
                (
                    ns.to_vec(),
                    u(r, "db"),
                    s(r, "type"),
                    s(r, "encoding"),
                    [
                        u(r, "elements"),
                        u(r, "memory"),
                        u(r, "serialized_bytes"),
                        u(r, "max_element_len"),
                    ],
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

pub(super) fn top_keys(d: &Value) -> Option<String> {
    let top = d.get("top_keys")?;
    // The three top lists as one table: sorted by a column, its first rows
    // are that column's top list (a key big enough for one list is in it).
    let prefixes = d.get("prefixes");
    let separator = prefixes
        .map(|p| s(p, "separator").as_bytes())
        .and_then(|b| (b.len() == 1).then(|| b[0]))
        .unwrap_or(b':');
    let depth = prefixes.map(|p| u(p, "depth")).unwrap_or(1) as usize;
    let rows = top_rows(d, separator, depth);
    let glob = |r: &Value| {
        let name = key_bytes(r)?;
        let mut pattern = namespace(&name, separator, depth)?.to_vec();
        pattern.extend_from_slice(&[separator, b'*']);
        Some(rdblens_report::format::quote_key(&pattern))
    };
    let n = arr(top, "by_memory").len();
    let mut body = rows_table("top-keys", &rows, Some(&glob), i(d, "now_ms"), true);
    if let Some(sizes) = crate::sizes::value_sizes(d) {
        body.push_str(&sizes);
    }
    let alike = if rows.iter().any(|r| r.len() > 1) {
        " Keys alike (the same database, namespace, type, encoding and figures) share one row."
    } else {
        ""
    };
    Some(section(
        "bigkeys",
        "Top keys",
        &format!(
            "The biggest keys by estimated memory, serialized size and element count (top {n} of each, in one table). Click a column to sort by it; type to filter.{alike}"
        ),
        &body,
    ))
}

pub(super) fn limits(d: &Value) -> Option<String> {
    let limits = d.get("limits")?;
    let rows = limits.as_array()?;
    if rows.is_empty() {
        return Some(section(
            "limits",
            "Compact-encoding limits",
            "No key is over or near a compact-encoding limit (listpack, intset) of the target server.",
            "",
        ));
    }
    let mut t = Table::new(
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
    );
    for l in rows {
        let example = arr(l, "over_examples")
            .first()
            .map(|r| format!("<td class=\"key\"><code>{}</code></td>", html(&key_text(r))))
            .unwrap_or_else(|| text(""));
        t.row(&[
            format!("<td><code>{}</code></td>", html(s(l, "limit"))),
            count_cell(u(l, "threshold")),
            count_cell(u(l, "over_keys")),
            bytes_cell(u(l, "over_memory")),
            bytes_cell(u(l, "over_savings")),
            count_cell(u(l, "near_keys")),
            bytes_cell(u(l, "near_memory")),
            example,
        ]);
    }
    Some(section(
        "limits",
        "Compact-encoding limits",
        "Keys over a limit use the big encoding; savings is what raising the limit past them would save.",
        &t.finish(),
    ))
}

pub(super) fn key_names(d: &Value) -> Option<String> {
    let k = d.get("key_names")?;
    let opt = |f: &str| {
        k.get(f)
            .and_then(Value::as_u64)
            .map(count)
            .unwrap_or_else(|| "-".into())
    };
    let mut out = format!(
        "<p class=\"facts\">{} keys; name length min {}, median {}, p90 {}, p99 {}, max {} bytes.</p>",
        count(u(k, "keys")),
        opt("min"),
        opt("p50"),
        opt("p90"),
        opt("p99"),
        opt("max")
    );
    let mut t = Table::new(
        "name-lengths",
        &[
            Col("length from (bytes)", true),
            Col("keys", true),
            Col("share", true),
        ],
        false,
        false,
    );
    for b in arr(k, "histogram") {
        t.row(&[
            count_cell(u(b, "from")),
            count_cell(u(b, "keys")),
            bar(u(b, "keys"), u(k, "keys")),
        ]);
    }
    out.push_str(&t.finish());
    let problems = arr(k, "problems");
    out.push_str("<h3>Naming problems</h3>");
    if problems.is_empty() {
        out.push_str("<p>None found.</p>");
    } else {
        let mut p = Table::new(
            "name-problems",
            &[
                Col("problem", false),
                Col("keys", true),
                Col("memory", true),
                Col("examples", false),
            ],
            false,
            false,
        );
        for pr in problems {
            let examples: Vec<String> = arr(pr, "examples")
                .iter()
                .take(3)
                .map(|e| format!("<code>{}</code>", html(&key_text(e))))
                .collect();
            p.row(&[
                text(
                    &pr["id"]
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| pr["id"].to_string()),
                ),
                count_cell(u(pr, "keys")),
                bytes_cell(u(pr, "memory")),
                format!("<td class=\"key\">{}</td>", examples.join(" ")),
            ]);
        }
        out.push_str(&p.finish());
    }
    Some(section("keynames", "Key names", "", &out))
}
