//! The diff page (`diff`): what changed between two snapshots, from the
//! diff document (docs/diff.md), with growth per namespace as diverging bars.

use serde_json::{json, Value};

use crate::escape::{html, key_text, prefix_text};
use crate::page::{arr, bytes, bytes_cell, card, count, i, num, s, section, text, u, Col, Page, Table};

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

fn group_table(id: &str, label: &'static str, rows: &[Value]) -> String {
    let max = rows
        .iter()
        .map(|g| i(&g["delta"], "memory").unsigned_abs())
        .max()
        .unwrap_or(0);
    let mut t = Table::new(
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
    );
    for g in rows {
        let dk = i(&g["delta"], "keys");
        t.row(&[
            text(s(g, "name")),
            count_cell(u(&g["old"], "keys")),
            count_cell(u(&g["new"], "keys")),
            num(dk, &signed_count(dk)),
            bytes_cell(u(&g["old"], "memory")),
            bytes_cell(u(&g["new"], "memory")),
            diverging(i(&g["delta"], "memory"), max),
        ]);
    }
    t.finish()
}

fn count_cell(n: u64) -> String {
    crate::page::count_cell(n)
}

pub fn page(d: &Value) -> Page {
    let mut nav = vec![("overview", "Overview")];
    let mut body = String::new();
    let side = |v: &Value| -> String {
        arr(v, "files")
            .iter()
            .map(|f| f.as_str().unwrap_or(""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let t = &d["totals"];
    let dm = i(&t["delta"], "memory");
    let dk = i(&t["delta"], "keys");
    let mut out = String::from("<div class=\"cards\">");
    out.push_str(&card(
        "total-keys",
        "Keys after",
        u(&t["new"], "keys"),
        &count(u(&t["new"], "keys")),
        &format!("{} since before", signed_count(dk)),
    ));
    out.push_str(&card(
        "total-memory",
        "Memory after",
        u(&t["new"], "memory"),
        &bytes(u(&t["new"], "memory")),
        &format!("{} since before", signed_bytes(dm)),
    ));
    out.push_str(&card(
        "keys-before",
        "Keys before",
        u(&t["old"], "keys"),
        &count(u(&t["old"], "keys")),
        "",
    ));
    out.push_str(&card(
        "memory-before",
        "Memory before",
        u(&t["old"], "memory"),
        &bytes(u(&t["old"], "memory")),
        "",
    ));
    out.push_str("</div>");
    out.push_str(&format!(
        "<ul class=\"notes\"><li>Before: <span class=\"path\">{}</span> (TTLs relative to {} UTC)</li><li>After: <span class=\"path\">{}</span> (TTLs relative to {} UTC)</li></ul>",
        html(&side(&d["old"])),
        rdblens_report::format::utc(i(&d["old"], "now_ms")),
        html(&side(&d["new"])),
        rdblens_report::format::utc(i(&d["new"], "now_ms")),
    ));
    body.push_str(&section("overview", "Overview", "", &out));

    nav.push(("namespaces", "Namespaces"));
    let namespaces = arr(d, "namespaces");
    let max = namespaces
        .iter()
        .map(|n| i(n.get("delta").unwrap_or(&Value::Null), "memory").unsigned_abs())
        .max()
        .unwrap_or(0);
    let mut nt = Table::new(
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
    );
    let side_cell = |c: Option<&Value>, f: fn(u64) -> String, field: &str| match c.filter(|c| !c.is_null()) {
        Some(c) => f(u(c, field)),
        None => num(-1, "folded"),
    };
    for n in namespaces {
        let delta = n.get("delta").filter(|v| !v.is_null());
        nt.row(&[
            format!(
                "<td class=\"key\"><code>{}</code></td>",
                html(&prefix_text(&n["prefix"]))
            ),
            num(u(n, "level"), &u(n, "level").to_string()),
            side_cell(n.get("old"), count_cell, "keys"),
            side_cell(n.get("new"), count_cell, "keys"),
            side_cell(n.get("old"), bytes_cell, "memory"),
            side_cell(n.get("new"), bytes_cell, "memory"),
            match delta {
                Some(dl) => diverging(i(dl, "memory"), max),
                None => num(0, "unknown"),
            },
        ]);
    }
    body.push_str(&section(
        "namespaces",
        "Growth per namespace",
        "Namespaces whose figures changed, largest memory change first.",
        &nt.finish(),
    ));

    nav.push(("groups", "Types"));
    let mut g = String::from("<h3>By type</h3>");
    g.push_str(&group_table("types", "type", arr(d, "types")));
    g.push_str("<h3>By encoding</h3>");
    g.push_str(&group_table("encodings", "type encoding", arr(d, "encodings")));
    if arr(d, "databases").len() > 1 {
        g.push_str("<h3>By database</h3>");
        g.push_str(&group_table("databases", "db", arr(d, "databases")));
    }
    body.push_str(&section("groups", "Types, encodings and databases", "", &g));

    nav.push(("became-big", "Became big"));
    let mut bt = Table::new(
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
    );
    for b in arr(d, "became_big") {
        let metric = s(b, "metric");
        let fmt = |v: u64| if metric == "elements" { count(v) } else { bytes(v) };
        let before = match (
            b.get("old_value").and_then(Value::as_u64),
            b.get("old_at_most").and_then(Value::as_u64),
        ) {
            (Some(v), _) => num(v, &fmt(v)),
            (None, Some(at_most)) => num(at_most, &format!("≤ {}", fmt(at_most))),
            (None, None) => num(0, "new"),
        };
        bt.row(&[
            format!(
                "<td class=\"key\"><code>{}</code></td>",
                html(&key_text(&b["key"]))
            ),
            text(s(&b["key"], "type")),
            text(metric),
            before,
            num(u(b, "new_value"), &fmt(u(b, "new_value"))),
        ]);
    }
    body.push_str(&section(
        "became-big",
        "Keys that became big",
        "Keys of the new top lists that were absent from the old ones or smaller there.",
        &if bt.is_empty() {
            "<p>None.</p>".to_string()
        } else {
            bt.finish()
        },
    ));

    nav.push(("key-changes", "Keys changed"));
    let mut kt = Table::new(
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
    );
    let kc = &d["key_changes"];
    for kind in ["appeared", "disappeared", "grew", "shrank"] {
        for k in arr(kc, kind) {
            // A side the key is not listed on: absent, or at most its list's smallest.
            let side = |memory: &str, at_most: &str| match (
                k.get(memory).and_then(Value::as_u64),
                k.get(at_most).and_then(Value::as_u64),
            ) {
                (Some(v), _) => num(v, &bytes(v)),
                (None, Some(v)) => num(v, &format!("≤ {}", bytes(v))),
                (None, None) => num(0, "absent"),
            };
            let delta = i(k, "delta");
            kt.row(&[
                text(kind),
                format!("<td class=\"key\"><code>{}</code></td>", html(&key_text(k))),
                text(s(k, "type")),
                side("old_memory", "old_at_most"),
                side("new_memory", "new_at_most"),
                num(delta, &signed_bytes(delta)),
            ]);
        }
    }
    body.push_str(&section(
        "key-changes",
        "Keys that appeared, disappeared, grew or shrank most",
        "By estimated memory, from both sides' top lists: a key missing from one side's lists is absent there, or at most as big as that list's smallest key (≤).",
        &if kt.is_empty() {
            "<p>None.</p>".to_string()
        } else {
            kt.finish()
        },
    ));

    nav.push(("expiry", "Expiry"));
    let e = &d["expiry"];
    let mut et = Table::new(
        "new-clusters",
        &[
            Col("from (UTC)", false),
            Col("to", false),
            Col("keys", true),
            Col("memory", true),
        ],
        false,
        false,
    );
    for c in arr(e, "new_clusters") {
        et.row_with(
            &format!(" data-keys=\"{}\"", u(c, "keys")),
            &[
                num(i(c, "start_ms"), &rdblens_report::format::utc(i(c, "start_ms"))),
                num(i(c, "end_ms"), &rdblens_report::format::utc(i(c, "end_ms"))),
                count_cell(u(c, "keys")),
                bytes_cell(u(c, "memory")),
            ],
        );
    }
    body.push_str(&section(
        "expiry",
        "New expiry clusters",
        &format!(
            "Compared in {} buckets; the old side had {} clusters. Clusters of the new side that overlap none of them:",
            rdblens_report::format::duration(i(e, "bucket_ms")),
            u(e, "old_clusters")
        ),
        &if et.is_empty() { "<p>None.</p>".to_string() } else { et.finish() },
    ));

    Page {
        title: "rdblens diff".into(),
        subtitle: format!("{} → {}", side(&d["old"]), side(&d["new"])),
        nav,
        body,
        data: json!({}),
    }
}
