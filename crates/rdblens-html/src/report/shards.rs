//! The cluster sections: per-shard totals and overlapping slots of a
//! multi-file report, and keys and memory per hash slot.

use serde_json::Value;

use crate::escape::{html, key_text, prefix_text};
use crate::page::{arr, bytes, bytes_cell, count, count_cell, s, section, text, u, Col, Table};

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

pub(super) fn slots(d: &Value) -> Option<String> {
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

pub(super) fn shards(d: &Value) -> Option<String> {
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
