//! The report page (`report` and `merge`): every section of the JSON
//! report, as tables rendered here (readable without JavaScript and in
//! print) and as charts the script draws from the same document.

use serde_json::{json, Value};

use crate::escape::{html, key_text};
use crate::page::{
    arr, bar, bytes, bytes_cell, card, count, count_cell, i, percent, s, section, text, u, Col, Page, Table,
};

mod expiry;
mod findings;
mod keys;
mod namespaces;
mod shards;

pub use expiry::fine_expiry;
use expiry::{access, expiry, ttl};
use findings::findings;
use keys::{key_names, limits, top_keys};
use namespaces::{namespaces, treemap_data};
use shards::{shards, slots};

/// The page for a JSON report `d`; `fine_expiry` is the expiry histogram at
/// the finest width up to `expiry::TIMELINE_BUCKETS` buckets (`[start_ms, keys,
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
    if let Some(used) = d.get("used_memory").filter(|v| v.is_object()) {
        let files = arr(d, "files");
        let saved = match files {
            [f] => f["aux"]["used-mem"].as_str().and_then(|v| v.parse::<u64>().ok()),
            _ => None,
        };
        let note = match (saved, files.len()) {
            (Some(saved), _) => format!("once loaded; used-mem when saved: {}", bytes(saved)),
            (None, 1) => "once loaded".to_string(),
            (None, n) => format!("once loaded, {n} servers together"),
        };
        out.push_str(&card(
            "used-memory",
            "Predicted used_memory",
            u(used, "predicted"),
            &bytes(u(used, "predicted")),
            &note,
        ));
    }
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
    let empty = &d["empty_collections"];
    if u(empty, "keys") > 0 {
        let named: Vec<String> = arr(empty, "named")
            .iter()
            .map(|k| format!("db{} {} ({})", u(k, "db"), key_text(k), s(k, "type")))
            .collect();
        let more = u(empty, "keys").saturating_sub(named.len() as u64);
        let more = if more > 0 {
            format!(" and {} more", count(more))
        } else {
            String::new()
        };
        notes.push_str(&format!(
            "<li class=\"warn\">{} empty collections, left out of every figure: a server drops them on load; {}{more}</li>",
            count(u(empty, "keys")),
            html(&named.join(", "))
        ));
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
