//! The report page (`report` and `merge`): every section of the JSON
//! report, as tables rendered here (readable without JavaScript and in
//! print) and as charts the script draws from the same document.

use rdblens_analysis::acc::expiry::ExpiryHistogram;
use serde_json::{json, Value};

use crate::escape::{html, key_text, prefix_text};
use crate::page::{
    arr, bar, bytes, bytes_cell, card, count, count_cell, i, key, num, percent, s, section, text, u, Col,
    Page, Table,
};

/// Namespaces per level in the treemap, and first-level rows in the table.
const NAMESPACE_ROWS: usize = 50;
/// Rows per deeper level in the table (the treemap shows more).
const CHILD_ROWS: usize = 10;
/// Rows below the first level in the table at most, whatever `--depth`.
const TABLE_CHILD_ROWS: usize = 500;
/// Findings listed per rule before the rest are folded.
const FINDINGS_SHOWN: usize = 5;
/// Expiry buckets at most in the zoomable timeline over the whole span...
const TIMELINE_BUCKETS: i64 = 2_000;
/// ...and across each expiry cluster.
const CLUSTER_BUCKETS: i64 = 3_600;

/// The page for a JSON report `d`; `fine_expiry` is the expiry histogram at
/// the finest width up to [`TIMELINE_BUCKETS`] buckets (`[start_ms, keys,
/// memory]`), for zooming in below the report's bucket.
pub fn page(d: &Value, fine_expiry: Value) -> Page {
    let mut nav = vec![("overview", "Overview")];
    let mut body = String::new();
    body.push_str(&overview(d));
    let mut add = |id: &'static str, label: &'static str, html: Option<String>| {
        if let Some(h) = html {
            nav.push((id, label));
            body.push_str(&h);
        }
    };
    add("shards", "Shards", shards(d));
    add("namespaces", "Namespaces", namespaces(d));
    add("memory", "Memory", memory(d));
    add("bigkeys", "Top keys", top_keys(d));
    add("expiry", "Expiry", expiry(d));
    add("findings", "Findings", findings(d));
    add("plans", "Split plans", crate::plans::plans(d));
    add("limits", "Encoding limits", limits(d));
    add("ttl", "TTL", ttl(d));
    add("keynames", "Key names", key_names(d));
    add("slots", "Slots", slots(d));
    add("access", "LRU/LFU", access(d));
    let files = arr(d, "files");
    let subtitle = match files {
        [f] => s(f, "path").to_string(),
        fs => format!("{} files", fs.len()),
    };
    let data = json!({
        "namespaces": d.get("prefixes").map(treemap_data),
        "expiry": d.get("expiry").map(|e| json!({
            "bucket_ms": i(e, "bucket_ms"),
            "stored_resolution_ms": i(e, "stored_resolution_ms"),
            "buckets": fine_expiry,
            "clusters": arr(e, "clusters").iter().map(|c| json!([i(c, "start_ms"), i(c, "end_ms"), u(c, "keys")])).collect::<Vec<_>>(),
        })),
    });
    Page {
        title: "rdblens report".into(),
        subtitle,
        nav,
        body,
        data,
    }
}

/// The zoomable timeline's buckets, `[start_ms, keys, memory, width_ms]`:
/// the stored histogram in at most [`TIMELINE_BUCKETS`] buckets over the
/// report histogram's span, and at the stored resolution (or the finest
/// width keeping [`CLUSTER_BUCKETS`]) across each cluster, so zooming into
/// a cluster goes down to the second.
pub fn fine_expiry(h: &ExpiryHistogram, report: &Value) -> Value {
    let stored = h.width_ms().max(1);
    let bars = arr(report, "histogram");
    let (Some(first), Some(last)) = (bars.first(), bars.last()) else {
        return Value::Array(Vec::new());
    };
    let span = i(last, "start_ms") + i(report, "bucket_ms") - i(first, "start_ms");
    let coarse = stored * (span / stored / TIMELINE_BUCKETS + 1);
    // Cluster windows widened to whole coarse buckets, merged when they touch.
    let mut windows: Vec<(i64, i64)> = Vec::new();
    for c in arr(report, "clusters") {
        let start = i(c, "start_ms").div_euclid(coarse) * coarse;
        let end = (i(c, "end_ms") + coarse - 1).div_euclid(coarse) * coarse;
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
    json!(out)
}

fn overview(d: &Value) -> String {
    let t = &d["totals"];
    let mut out = String::from("<div class=\"cards\">");
    out.push_str(&card(
        "total-keys",
        "Keys",
        u(t, "keys"),
        &count(u(t, "keys")),
        "",
    ));
    out.push_str(&card(
        "total-memory",
        "Estimated memory",
        u(t, "memory"),
        &bytes(u(t, "memory")),
        &format!("+{} keyspace overhead", bytes(u(t, "keyspace_overhead"))),
    ));
    out.push_str(&card(
        "expiring-keys",
        "Keys with a TTL",
        u(t, "keys_with_expiry"),
        &count(u(t, "keys_with_expiry")),
        &percent(u(t, "keys_with_expiry"), u(t, "keys")),
    ));
    out.push_str(&card(
        "serialized",
        "Serialized",
        u(t, "serialized_bytes"),
        &bytes(u(t, "serialized_bytes")),
        "as stored in the file",
    ));
    if let Some(biggest) = arr(d.get("top_keys").unwrap_or(&Value::Null), "by_memory").first() {
        out.push_str(&format!(
            "<div class=\"card\"><div class=\"label\">Biggest key</div><div class=\"value key\"><code id=\"biggest-key\">{}</code></div><div class=\"note\">{} · {} {}</div></div>",
            html(&key_text(biggest)),
            bytes(u(biggest, "memory")),
            html(s(biggest, "type")),
            html(s(biggest, "encoding")),
        ));
    }
    out.push_str("</div>");

    let mut files = Table::new(
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
    );
    for f in arr(d, "files") {
        let aux = &f["aux"];
        let ctime = s(aux, "ctime")
            .parse::<i64>()
            .map(|secs| rdblens_report::format::utc(secs * 1000) + " UTC")
            .unwrap_or_default();
        let checksum = s(f, "checksum");
        files.row(&[
            format!("<td class=\"path\">{}</td>", html(s(f, "path"))),
            bytes_cell(u(f, "size")),
            text(&format!("{} RDB {}", s(f, "dialect"), u(f, "rdb_version"))),
            text(if s(aux, "valkey-ver").is_empty() {
                s(aux, "redis-ver")
            } else {
                s(aux, "valkey-ver")
            }),
            format!(
                "<td><span class=\"pill {}\">{}</span></td>",
                pill_class(checksum),
                html(checksum)
            ),
            text(s(f, "profile")),
            match f.get("accuracy").filter(|a| !a.is_null()) {
                Some(a) => format!(
                    "<td><span class=\"pill {}\">{}</span></td>",
                    if s(a, "level") == "verified" { "ok" } else { "info" },
                    html(s(a, "level"))
                ),
                None => text("-"),
            },
            count_cell(u(f, "keys")),
            text(&ctime),
        ]);
    }
    out.push_str(&files.finish());

    let mut notes = String::new();
    let mut said: Vec<String> = Vec::new();
    for f in arr(d, "files") {
        // The memory model's assumptions, once per distinct statement.
        for line in [
            f.get("allocator")
                .map(|a| format!("Allocator {}", s(a, "description"))),
            f.get("accuracy")
                .map(|a| format!("Accuracy: {}", s(a, "statement"))),
        ]
        .into_iter()
        .flatten()
        {
            if !said.contains(&line) {
                notes.push_str(&format!("<li>{}</li>", html(&line)));
                said.push(line);
            }
        }
        if let Some(inc) = f.get("incomplete").filter(|v| !v.is_null()) {
            notes.push_str(&format!(
                "<li class=\"crit\">{}: incomplete: {}</li>",
                html(s(f, "path")),
                html(s(inc, "message"))
            ));
        }
        for w in arr(f, "warnings") {
            notes.push_str(&format!(
                "<li class=\"warn\">{}: {}</li>",
                html(s(f, "path")),
                html(w.as_str().unwrap_or(""))
            ));
        }
    }
    if u(d, "damaged_keys") > 0 {
        notes.push_str(&format!(
            "<li class=\"crit\">{} keys could not be decoded</li>",
            count(u(d, "damaged_keys"))
        ));
        for dmg in arr(d, "damage") {
            notes.push_str(&format!("<li class=\"crit\">{}</li>", html(s(dmg, "message"))));
        }
    }
    let c = &d["compression"];
    if u(c, "compressed_values") > 0 {
        notes.push_str(&format!(
            "<li>{} values stored LZF-compressed: {} in the file, {} decompressed</li>",
            count(u(c, "compressed_values")),
            bytes(u(c, "stored_bytes")),
            bytes(u(c, "uncompressed_bytes"))
        ));
    }
    notes.push_str(&format!(
        "<li>TTLs relative to {} UTC</li>",
        rdblens_report::format::utc(i(d, "now_ms"))
    ));
    out.push_str(&format!("<ul class=\"notes\">{notes}</ul>"));
    section("overview", "Overview", "", &out)
}

fn pill_class(checksum: &str) -> &'static str {
    match checksum {
        "valid" => "ok",
        "mismatch" => "crit",
        _ => "info",
    }
}

/// A table of groups (`name` + counter fields) with a memory-share bar.
fn groups(id: &str, label: &'static str, rows: &[Value], total_memory: u64) -> String {
    let mut t = Table::new(
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
    );
    for g in rows {
        t.row(&[
            text(s(g, "name")),
            count_cell(u(g, "keys")),
            count_cell(u(g, "keys_with_expiry")),
            bytes_cell(u(g, "memory")),
            bar(u(g, "memory"), total_memory),
            bytes_cell(u(g, "serialized_bytes")),
            count_cell(u(g, "elements")),
        ]);
    }
    t.finish()
}

fn memory(d: &Value) -> Option<String> {
    let total = u(&d["totals"], "memory");
    let mut out = String::new();
    out.push_str("<h3>By type</h3>");
    out.push_str(&groups("types", "type", arr(d, "types"), total));
    if d.get("encodings").is_some() {
        out.push_str("<h3>By encoding (after loading on the target server)</h3>");
        out.push_str(&groups("encodings", "type encoding", arr(d, "encodings"), total));
        out.push_str("<h3>By type in the file</h3>");
        out.push_str(&groups("rdb-types", "rdb type", arr(d, "rdb_types"), total));
    }
    if arr(d, "databases").len() > 1 {
        out.push_str("<h3>By database</h3>");
        out.push_str(&groups("databases", "db", arr(d, "databases"), total));
    }
    Some(section(
        "memory",
        "Memory by type and encoding",
        "Estimated memory is the sum of the keys' MEMORY USAGE on the target server.",
        &out,
    ))
}

/// Namespaces in the treemap at most, whatever `--depth` (the heaviest
/// namespaces' children first).
const TREEMAP_NODES: usize = 2_500;

/// Namespaces for the treemap: `[label, memory, keys, children]`, at most
/// [`NAMESPACE_ROWS`] per level and [`TREEMAP_NODES`] in all.
fn treemap_data(p: &Value) -> Value {
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

fn namespaces(d: &Value) -> Option<String> {
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
        "<div class=\"chart\" id=\"treemap\" role=\"img\" aria-label=\"Namespace treemap\"></div>{}",
        t.finish()
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

fn ttl_cell(record: &Value, now_ms: i64) -> String {
    match record.get("expiry_ms").and_then(Value::as_i64) {
        Some(at) => num(at, &rdblens_report::format::duration(at.saturating_sub(now_ms))),
        None => num(-1, "-"),
    }
}

/// A table of key records, one row each.
fn key_table(id: &str, records: &[&Value], now_ms: i64, filter: bool) -> String {
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
    for (n, r) in records.iter().enumerate() {
        t.row(&[
            num(n + 1, &(n + 1).to_string()),
            num(u(r, "db"), &u(r, "db").to_string()),
            key(r),
            text(s(r, "type")),
            text(s(r, "encoding")),
            count_cell(u(r, "elements")),
            bytes_cell(u(r, "memory")),
            bytes_cell(u(r, "serialized_bytes")),
            bytes_cell(u(r, "max_element_len")),
            ttl_cell(r, now_ms),
        ]);
    }
    t.finish()
}

fn top_keys(d: &Value) -> Option<String> {
    let top = d.get("top_keys")?;
    // The three top lists as one table: sorted by a column, its first rows
    // are that column's top list (a key big enough for one list is in it).
    let mut seen = std::collections::HashSet::new();
    let mut records: Vec<&Value> = Vec::new();
    for list in ["by_memory", "by_serialized", "by_elements"] {
        for r in arr(top, list) {
            if seen.insert((u(r, "db"), key_text(r))) {
                records.push(r);
            }
        }
    }
    let n = arr(top, "by_memory").len();
    let mut body = key_table("top-keys", &records, i(d, "now_ms"), true);
    if let Some(sizes) = crate::sizes::value_sizes(d) {
        body.push_str(&sizes);
    }
    Some(section(
        "bigkeys",
        "Top keys",
        &format!(
            "The biggest keys by estimated memory, serialized size and element count (top {n} of each, in one table). Click a column to sort by it; type to filter."
        ),
        &body,
    ))
}

fn limits(d: &Value) -> Option<String> {
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

fn ttl(d: &Value) -> Option<String> {
    let rows = d.get("ttl")?.as_array()?;
    let keys: u64 = rows.iter().map(|b| u(b, "keys")).sum();
    let mut t = Table::new(
        "ttl-table",
        &[
            Col("time to live", false),
            Col("keys", true),
            Col("share of keys", true),
            Col("memory", true),
        ],
        false,
        false,
    );
    for b in rows {
        t.row(&[
            text(s(b, "bucket")),
            count_cell(u(b, "keys")),
            bar(u(b, "keys"), keys),
            bytes_cell(u(b, "memory")),
        ]);
    }
    Some(section(
        "ttl",
        "Time to live",
        "Keys by remaining time to live at the snapshot.",
        &t.finish(),
    ))
}

fn expiry(d: &Value) -> Option<String> {
    let e = d.get("expiry")?;
    let mut out = format!(
        "<p class=\"facts\">{} keys ({}) expire; stored at {} resolution, shown in {} buckets.</p>",
        count(u(e, "expiring_keys")),
        bytes(u(e, "expiring_memory")),
        rdblens_report::format::duration(i(e, "stored_resolution_ms")),
        rdblens_report::format::duration(i(e, "bucket_ms")),
    );
    out.push_str(
        "<div class=\"chart-tools\" id=\"timeline-tools\"></div><div class=\"chart\" id=\"timeline\" role=\"img\" aria-label=\"Expiry timeline\"></div>",
    );
    let clusters = arr(e, "clusters");
    out.push_str("<h3>Expiry clusters</h3>");
    if clusters.is_empty() {
        out.push_str("<p>No cluster: no window holds an outsized share of the expiring keys.</p>");
    } else {
        let mut t = Table::new(
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
        );
        for (n, c) in clusters.iter().enumerate() {
            let mut namespaces: Vec<String> = arr(c, "namespaces")
                .iter()
                .map(|pair| {
                    let name = pair.get(0).and_then(Value::as_str).unwrap_or("");
                    let keys = pair.get(1).and_then(Value::as_u64).unwrap_or(0);
                    format!(
                        "{} ({})",
                        rdblens_parser::escape_bytes(name.as_bytes()),
                        count(keys)
                    )
                })
                .collect();
            if u(c, "other_keys") > 0 {
                namespaces.push(format!("(other) ({})", count(u(c, "other_keys"))));
            }
            // The table report's words for the peak rate, active expiry and jitter.
            let figures = serde_json::from_value(c.clone())
                .map(|cluster| rdblens_report::table::cluster_figures(&cluster))
                .unwrap_or_default();
            let share = c.get("share").and_then(Value::as_f64).unwrap_or(0.0);
            let resolution = i(c, "resolution_ms");
            t.row_with(
                &format!(" id=\"cluster-{n}\" data-keys=\"{}\"", u(c, "keys")),
                &[
                    num(i(c, "start_ms"), &rdblens_report::format::utc(i(c, "start_ms"))),
                    num(i(c, "end_ms"), &rdblens_report::format::utc(i(c, "end_ms"))),
                    num(resolution, &rdblens_report::format::duration(resolution)),
                    count_cell(u(c, "keys")),
                    bytes_cell(u(c, "memory")),
                    num(share, &format!("{:.1}%", share * 100.0)),
                    text(&namespaces.join(", ")),
                    format!("<td class=\"muted small\">{}</td>", html(&figures)),
                ],
            );
        }
        out.push_str(&t.finish());
    }
    let mut h = Table::new(
        "expiry-histogram",
        &[
            Col("from (UTC)", false),
            Col("keys", true),
            Col("share", true),
            Col("memory", true),
        ],
        false,
        false,
    );
    let bars = arr(e, "histogram");
    let keys: u64 = bars.iter().map(|b| u(b, "keys")).sum();
    for b in bars {
        h.row(&[
            num(i(b, "start_ms"), &rdblens_report::format::utc(i(b, "start_ms"))),
            count_cell(u(b, "keys")),
            bar(u(b, "keys"), keys),
            bytes_cell(u(b, "memory")),
        ]);
    }
    out.push_str(&format!(
        "<details class=\"print-open\"><summary>Histogram as a table ({} buckets)</summary>{}</details>",
        bars.len(),
        h.finish()
    ));
    Some(section(
        "expiry",
        "Expiry timeline",
        "When keys expire, by absolute time. Clusters (many keys in one window) are shaded; drag across the chart to zoom in, double-click to zoom out.",
        &out,
    ))
}

fn key_names(d: &Value) -> Option<String> {
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

fn slot_table(id: &str, rows: &[Value]) -> String {
    let mut t = Table::new(
        id,
        &[Col("slot", true), Col("keys", true), Col("memory", true)],
        true,
        false,
    );
    for r in rows {
        t.row(&[
            count_cell(u(r, "slot")),
            count_cell(u(r, "keys")),
            bytes_cell(u(r, "memory")),
        ]);
    }
    t.finish()
}

fn slots(d: &Value) -> Option<String> {
    let sl = d.get("slots")?;
    let mut out = format!(
        "<p class=\"facts\">{} of 16,384 cluster slots hold keys; {} keys carry a hash tag.</p><div class=\"cols\">",
        count(u(sl, "slots_used")),
        count(u(sl, "keys_with_hash_tag"))
    );
    out.push_str("<div><h3>Slots with the most keys</h3>");
    out.push_str(&slot_table("slots-keys", arr(sl, "most_keys")));
    out.push_str("</div><div><h3>Slots with the most memory</h3>");
    out.push_str(&slot_table("slots-memory", arr(sl, "most_memory")));
    out.push_str("</div></div><h3>Hash tags</h3>");
    let tags = arr(sl, "hash_tags");
    if tags.is_empty() {
        out.push_str("<p>No key has a hash tag.</p>");
    } else {
        let mut t = Table::new(
            "hash-tags",
            &[Col("tag", false), Col("keys", true), Col("memory", true)],
            true,
            true,
        );
        for tag in tags {
            t.row(&[
                format!(
                    "<td class=\"key\"><code>{{{}}}</code></td>",
                    html(&prefix_text(&tag["tag"]))
                ),
                count_cell(u(tag, "keys")),
                bytes_cell(u(tag, "memory")),
            ]);
        }
        out.push_str(&t.finish());
    }
    Some(section("slots", "Cluster slots and hash tags", "", &out))
}

/// A log2 histogram (`{"buckets": {"from": count}}`) as a table.
fn log_histogram(id: &str, label: &'static str, h: &Value, seconds: bool) -> String {
    let mut rows: Vec<(u64, u64)> = h
        .get("buckets")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_u64()?)))
                .collect()
        })
        .unwrap_or_default();
    rows.sort_unstable();
    let total: u64 = rows.iter().map(|r| r.1).sum();
    let mut t = Table::new(
        id,
        &[Col(label, true), Col("keys", true), Col("share", true)],
        false,
        false,
    );
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
        ]);
    }
    if t.is_empty() {
        return "<p>Not stored in this dump (only with a maxmemory-policy of that kind).</p>".into();
    }
    t.finish()
}

fn access(d: &Value) -> Option<String> {
    let a = d.get("access")?;
    let now = i(d, "now_ms");
    let mut out = String::from("<div class=\"cols\"><div><h3>LRU idle time</h3>");
    out.push_str(&log_histogram("idle-histogram", "idle", &a["idle_seconds"], true));
    out.push_str("</div><div><h3>LFU counter</h3>");
    out.push_str(&log_histogram("lfu-histogram", "counter", &a["lfu_freq"], false));
    out.push_str("</div></div>");
    for (list, title) in [("coldest", "Coldest keys"), ("hottest", "Hottest keys")] {
        let keys: Vec<&Value> = arr(&a[list], "keys").iter().collect();
        if !keys.is_empty() {
            out.push_str(&format!("<h3>{title}</h3>"));
            out.push_str(&key_table(&format!("{list}-keys"), &keys, now, false));
        }
    }
    Some(section(
        "access",
        "LRU and LFU",
        "Idle times and access counters stored with the keys (RDB 9+, with a maxmemory-policy of that kind).",
        &out,
    ))
}

fn findings(d: &Value) -> Option<String> {
    let findings = d.get("findings")?.as_array()?;
    let audit = d.get("audit");
    let counts = audit.map(|a| &a["counts"]).unwrap_or(&Value::Null);
    let mut out = format!(
        "<p class=\"facts\"><span class=\"pill crit\">{} crit</span> <span class=\"pill warn\">{} warn</span> <span class=\"pill info\">{} info</span></p>",
        count(u(counts, "crit")),
        count(u(counts, "warn")),
        count(u(counts, "info"))
    );
    // Rules in the order of their most severe finding (findings come most
    // severe first); warn and crit rules open, info rules folded.
    let mut rules: Vec<&str> = Vec::new();
    for f in findings {
        if !rules.contains(&s(f, "rule")) {
            rules.push(s(f, "rule"));
        }
    }
    let any = !rules.is_empty();
    for rule in rules {
        let of_rule: Vec<&Value> = findings.iter().filter(|f| s(f, "rule") == rule).collect();
        let Some(first) = of_rule.first() else { continue };
        let summary = audit
            .and_then(|a| arr(a, "rules").iter().find(|r| s(r, "rule") == rule))
            .cloned()
            .unwrap_or(Value::Null);
        let worst = s(first, "severity");
        let advice = if s(&summary, "advice").is_empty() {
            s(first, "advice")
        } else {
            s(&summary, "advice")
        };
        out.push_str(&format!(
            "<details class=\"rule print-open\"{}><summary><span class=\"pill {worst}\">{worst}</span> <b>{}</b> <span class=\"muted\">{} finding{}{}</span></summary>",
            if worst == "info" { "" } else { " open" },
            html(rule),
            of_rule.len(),
            if of_rule.len() == 1 { "" } else { "s" },
            if u(&summary, "omitted") > 0 {
                format!(", {} more not listed", count(u(&summary, "omitted")))
            } else {
                String::new()
            }
        ));
        if !advice.is_empty() {
            out.push_str(&format!("<p class=\"advice\">{}</p>", html(advice)));
        }
        out.push_str("<ul class=\"findings\">");
        for (n, f) in of_rule.iter().enumerate() {
            if n == FINDINGS_SHOWN {
                out.push_str(&format!(
                    "</ul><details class=\"more print-open\"><summary>{} more</summary><ul class=\"findings\">",
                    of_rule.len() - n
                ));
            }
            let mut extra = Vec::new();
            if u(f, "keys") > 0 {
                extra.push(format!("{} keys", count(u(f, "keys"))));
            }
            if u(f, "memory") > 0 {
                extra.push(bytes(u(f, "memory")));
            }
            if let Some(sv) = f.get("savings").and_then(Value::as_u64) {
                extra.push(format!("saves ~{}", bytes(sv)));
            }
            let examples: Vec<String> = arr(f, "examples")
                .iter()
                .take(5)
                .map(|e| format!("<code>{}</code>", html(&key_text(e))))
                .collect();
            let config = f
                .get("config")
                .filter(|c| !c.is_null())
                .map(|c| format!("<div class=\"config\">{}</div>", html(&config_text(c))))
                .unwrap_or_default();
            out.push_str(&format!(
                "<li><span class=\"pill {sev}\">{sev}</span> {scope}{msg} <span class=\"muted\">{extra}</span>{ex}{config}</li>",
                sev = html(s(f, "severity")),
                scope = scope_html(&f["scope"]),
                msg = html(s(f, "message")),
                extra = html(&extra.join(" · ")),
                ex = if examples.is_empty() { String::new() } else { format!("<div class=\"examples\">{}</div>", examples.join(" ")) },
            ));
        }
        out.push_str(if of_rule.len() > FINDINGS_SHOWN {
            "</ul></details></details>"
        } else {
            "</ul></details>"
        });
    }
    if !any {
        out.push_str("<p>No rule found anything.</p>");
    }
    Some(section(
        "findings",
        "Findings",
        "The design-rule audit (docs/audit.md), grouped by rule, most severe first, with what to do about them.",
        &out,
    ))
}

/// The key a finding is about, before its message.
fn scope_html(scope: &Value) -> String {
    match s(scope, "kind") {
        "key" => format!("<code class=\"scope\">{}</code> ", html(&key_text(scope))),
        // The messages of the other scopes name what they are about.
        _ => String::new(),
    }
}

/// A finding's configuration advice, whatever its shape (text or a list of directives).
fn config_text(c: &Value) -> String {
    match c {
        Value::String(t) => t.clone(),
        Value::Array(items) => items.iter().map(config_text).collect::<Vec<_>>().join("; "),
        other => other.to_string(),
    }
}

fn shards(d: &Value) -> Option<String> {
    let sh = d.get("shards")?;
    let rows = arr(sh, "shards");
    if rows.len() < 2 {
        return None;
    }
    let max = rows.iter().map(|r| u(r, "memory")).max().unwrap_or(0);
    let total: u64 = rows.iter().map(|r| u(r, "memory")).sum();
    let mean = total as f64 / rows.len() as f64;
    let mean_pct = if max == 0 { 0.0 } else { mean * 100.0 / max as f64 };
    let mut t = Table::new(
        "shard-table",
        &[
            Col("file", false),
            Col("keys", true),
            Col("memory", true),
            Col("memory (bar: heaviest = full, line: mean)", true),
            Col("slots", true),
            Col("biggest key", false),
        ],
        true,
        true,
    );
    for r in rows {
        let m = u(r, "memory");
        let pct = if max == 0 {
            0.0
        } else {
            m as f64 * 100.0 / max as f64
        };
        let share = r.get("memory_share").and_then(Value::as_f64).unwrap_or(0.0);
        let biggest = r
            .get("biggest_key")
            .filter(|b| !b.is_null())
            .map(|b| {
                format!(
                    "<td class=\"key\"><code>{}</code> {}</td>",
                    html(&key_text(b)),
                    bytes(u(b, "memory"))
                )
            })
            .unwrap_or_else(|| text("-"));
        t.row(&[
            format!("<td class=\"path\">{}</td>", html(s(r, "path"))),
            count_cell(u(r, "keys")),
            bytes_cell(m),
            format!(
                "<td class=\"barcell\" data-v=\"{m}\"><span class=\"bar imb\"><i style=\"width:{pct:.2}%\"></i><b style=\"left:{mean_pct:.2}%\"></b></span><small>{:.1}%</small></td>",
                share * 100.0
            ),
            count_cell(u(r, "slots_used")),
            biggest,
        ]);
    }
    let im = &sh["imbalance"];
    let ratio = |f: &str| {
        im.get(f)
            .and_then(Value::as_f64)
            .map(|x| format!("{x:.2}"))
            .unwrap_or_else(|| "-".into())
    };
    let mut out = format!(
        "<p class=\"facts\">Heaviest shard by memory: <b>{}</b>× the mean (<span class=\"path\">{}</span>); by keys: <b>{}</b>× the mean.</p>",
        ratio("memory_max_over_mean"),
        html(s(im, "heaviest_by_memory")),
        ratio("keys_max_over_mean"),
    );
    out.push_str(&t.finish());
    if u(sh, "overlapping_slots_count") > 0 {
        out.push_str(&format!(
            "<p class=\"warn\">{} slots hold keys in more than one file: {}</p>",
            count(u(sh, "overlapping_slots_count")),
            html(&shorten(s(sh, "overlapping_slots"), 200))
        ));
    }
    Some(section(
        "shards",
        "Shards",
        "One row per file; the bars show how evenly memory spreads across them.",
        &out,
    ))
}

fn shorten(t: &str, max: usize) -> String {
    if t.len() <= max {
        return t.to_string();
    }
    let cut = t
        .char_indices()
        .take_while(|(i, _)| *i < max)
        .last()
        .map_or(0, |(i, _)| i);
    format!("{}…", &t[..cut])
}
