//! The namespaces section: the prefix tree as a table (readable without
//! JavaScript) and as the treemap's data.

use serde_json::{json, Value};

use crate::escape::{html, prefix_text};
use crate::page::{arr, bar, bytes, bytes_cell, count, count_cell, s, section, text, u, Col, Table};

/// Namespaces in the treemap at most, whatever `--depth` (the heaviest
/// namespaces' children first).
const TREEMAP_NODES: usize = 2_500;

/// Namespaces per level in the treemap, and first-level rows in the table.
const NAMESPACE_ROWS: usize = 50;

/// Rows per deeper level in the table (the treemap shows more).
const CHILD_ROWS: usize = 10;

/// Rows below the first level in the table at most, whatever `--depth`.
const TABLE_CHILD_ROWS: usize = 500;

/// Namespaces for the treemap: `[label, memory, keys, children]`, at most
/// [`NAMESPACE_ROWS`] per level and [`TREEMAP_NODES`] in all.
pub(super) fn treemap_data(p: &Value) -> Value {
    fn level(nodes: &[Value], budget: &mut usize) -> Value {
        let kept: Vec<&Value> = nodes.iter().take(NAMESPACE_ROWS.min(*budget)).collect();
        *budget -= kept.len();
        Value::Array(
            kept.into_iter()
                .map(|n| {
                    let mut children = level(arr(n, "children"), budget);
                    // What was folded away still takes its share of the area.
                    if let (Some(f), Value::Array(list)) =
                        (n.get("folded").filter(|f| !f.is_null()), &mut children)
                    {
                        list.push(json!([
                            format!("(~{} more, folded)", count(u(f, "prefixes"))),
                            u(f, "memory"),
                            u(f, "keys"),
                            []
                        ]));
                    }
                    json!([prefix_text(&n["prefix"]), u(n, "memory"), u(n, "keys"), children])
                })
                .collect(),
        )
    }
    let mut budget = TREEMAP_NODES;
    json!({
        "separator": s(p, "separator"),
        "depth": u(p, "depth"),
        "tree": level(arr(p, "namespaces"), &mut budget),
        "no_namespace": [u(&p["no_namespace"], "memory"), u(&p["no_namespace"], "keys")],
    })
}

pub(super) fn namespaces(d: &Value) -> Option<String> {
    let p = d.get("prefixes")?;
    let total = u(&d["totals"], "memory");
    let sep = s(p, "separator");
    let mut t = Table::new(
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
    );
    // A node's `prefix` is its whole path (`user:42`).
    struct Ctx<'a> {
        sep: &'a str,
        total: u64,
        /// Rows below the first level still allowed.
        budget: usize,
    }
    fn rows(t: &mut Table, nodes: &[Value], parent: &str, level: usize, cx: &mut Ctx) {
        let (sep, total) = (cx.sep, cx.total);
        let shown = if level == 1 {
            NAMESPACE_ROWS
        } else {
            let shown = CHILD_ROWS.min(cx.budget);
            cx.budget -= shown;
            shown
        };
        for (index, n) in nodes.iter().enumerate().take(shown) {
            let name = prefix_text(&n["prefix"]);
            t.row_with(
                &format!(" class=\"lvl{level}\""),
                &[
                    format!("<td class=\"key\"><code>{}{}</code></td>", html(&name), html(sep)),
                    count_cell(u(n, "keys")),
                    count_cell(u(n, "keys_with_expiry")),
                    bytes_cell(u(n, "memory")),
                    bar(u(n, "memory"), total),
                    bytes_cell(u(n, "serialized_bytes")),
                ],
            );
            rows(t, arr(n, "children"), &format!("{name}{sep}"), level + 1, cx);
            if let Some(f) = n.get("folded").filter(|f| !f.is_null()) {
                t.row_with(
                    &format!(" class=\"lvl{} more\"", level + 1),
                    &[
                        text(&format!(
                            "~{} more under {name}{sep} (folded)",
                            count(u(f, "prefixes"))
                        )),
                        count_cell(u(f, "keys")),
                        count_cell(u(f, "keys_with_expiry")),
                        bytes_cell(u(f, "memory")),
                        bar(u(f, "memory"), total),
                        bytes_cell(u(f, "serialized_bytes")),
                    ],
                );
            }
            if nodes.len() > shown && index + 1 == shown {
                let rest = &nodes[shown..];
                let mem: u64 = rest.iter().map(|n| u(n, "memory")).sum();
                let keys: u64 = rest.iter().map(|n| u(n, "keys")).sum();
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
                );
            }
        }
    }
    let mut cx = Ctx {
        sep,
        total,
        budget: TABLE_CHILD_ROWS,
    };
    rows(&mut t, arr(p, "namespaces"), "", 1, &mut cx);
    let none = &p["no_namespace"];
    if u(none, "keys") > 0 {
        t.row_with(
            " class=\"lvl1\"",
            &[
                text("(no namespace)"),
                count_cell(u(none, "keys")),
                count_cell(u(none, "keys_with_expiry")),
                bytes_cell(u(none, "memory")),
                bar(u(none, "memory"), total),
                bytes_cell(u(none, "serialized_bytes")),
            ],
        );
    }
    if let Some(f) = p.get("folded").filter(|f| !f.is_null()) {
        t.row_with(
            " class=\"lvl1 more\"",
            &[
                text(&format!("(~{} namespaces folded)", count(u(f, "prefixes")))),
                count_cell(u(f, "keys")),
                count_cell(u(f, "keys_with_expiry")),
                bytes_cell(u(f, "memory")),
                bar(u(f, "memory"), total),
                bytes_cell(u(f, "serialized_bytes")),
            ],
        );
    }
    let body = format!(
        "<div class=\"chart\" id=\"treemap\" role=\"img\" aria-label=\"Namespace treemap\"></div>{}{}",
        t.finish(),
        expired(&p["expired"], &d["now_ms"])
    );
    Some(section(
        "namespaces",
        "Memory by namespace",
        &format!(
            "Key names split on <code>{}</code>, {} levels deep. Click a namespace in the map to look inside it.",
            html(sep),
            u(p, "depth")
        ),
        &body,
    ))
}

/// The keys already expired at the reference time, per namespace (only
/// when there are any): memory that loading the dump frees.
fn expired(e: &Value, now_ms: &Value) -> String {
    if u(e, "keys") == 0 {
        return String::new();
    }
    let mut t = Table::new(
        "expired-table",
        &[
            Col("namespace", false),
            Col("expired keys", true),
            Col("memory", true),
        ],
        false,
        true,
    );
    for n in arr(e, "namespaces").iter().take(NAMESPACE_ROWS) {
        for (level, node) in
            std::iter::once((1, n)).chain(arr(n, "children").iter().take(CHILD_ROWS).map(|c| (2, c)))
        {
            t.row_with(
                &format!(" class=\"lvl{level}\""),
                &[
                    format!(
                        "<td class=\"key\"><code>{}</code></td>",
                        html(&prefix_text(&node["prefix"]))
                    ),
                    count_cell(u(node, "keys")),
                    bytes_cell(u(node, "memory")),
                ],
            );
        }
    }
    let rest = &arr(e, "namespaces")[NAMESPACE_ROWS.min(arr(e, "namespaces").len())..];
    let mut tail: Vec<(String, u64, u64)> = Vec::new();
    if !rest.is_empty() {
        let keys = rest.iter().map(|n| u(n, "keys")).sum();
        let memory = rest.iter().map(|n| u(n, "memory")).sum();
        tail.push((format!("… {} more namespaces", rest.len()), keys, memory));
    }
    if u(&e["folded"], "keys") > 0 {
        tail.push((
            "(folded namespaces)".into(),
            u(&e["folded"], "keys"),
            u(&e["folded"], "memory"),
        ));
    }
    if u(&e["no_namespace"], "keys") > 0 {
        tail.push((
            "(no namespace)".into(),
            u(&e["no_namespace"], "keys"),
            u(&e["no_namespace"], "memory"),
        ));
    }
    for (label, keys, memory) in tail {
        t.row_with(
            " class=\"lvl1\"",
            &[text(&label), count_cell(keys), bytes_cell(memory)],
        );
    }
    let when = now_ms.as_i64().map_or_else(String::new, |ms| {
        format!(" at {} UTC", rdblens_report::format::utc(ms))
    });
    format!(
        "<h3>Already expired</h3><p>{} keys ({}) already expired{} are still in the dump: loading it (or the server's expiry) frees them.</p>{}",
        count(u(e, "keys")),
        bytes(u(e, "memory")),
        html(&when),
        t.finish()
    )
}
