//! The cluster sections: per-shard totals and overlapping slots of a
//! multi-file report, and keys and memory per hash slot.

use std::io::{self, Write};

use rdblens_report::model::{ShardsJson, SlotJson, SlotsJson};
use rdblens_report::ReportJson;

use crate::escape::{html, key_text, prefix_text};
use crate::page::{bytes, bytes_cell, count, count_cell, part, section, text, Col, Part, Table};

fn slot_table(w: &mut dyn Write, id: &str, rows: &[SlotJson]) -> io::Result<()> {
    let mut t = Table::new(
        w,
        id,
        &[Col("slot", true), Col("keys", true), Col("memory", true)],
        true,
        false,
    )?;
    for r in rows {
        t.row(&[
            count_cell(r.slot as u64),
            count_cell(r.keys),
            bytes_cell(r.memory),
        ])?;
    }
    t.finish()
}

pub(super) fn slots<'a>(m: &'a ReportJson<'a>) -> Option<Part<'a>> {
    let sl = m.slots.as_ref()?;
    Some(part("slots", "Slots", move |w| {
        section(w, "slots", "Cluster slots and hash tags", "", |w| {
            slots_body(sl, w)
        })
    }))
}

fn slots_body(sl: &SlotsJson, w: &mut dyn Write) -> io::Result<()> {
    write!(
        w,
        "<p class=\"facts\">{} of 16,384 cluster slots hold keys; {} keys carry a hash tag.</p><div class=\"cols\">",
        count(sl.slots_used as u64),
        count(sl.keys_with_hash_tag)
    )?;
    w.write_all(b"<div><h3>Slots with the most keys</h3>")?;
    slot_table(w, "slots-keys", &sl.most_keys)?;
    w.write_all(b"</div><div><h3>Slots with the most memory</h3>")?;
    slot_table(w, "slots-memory", &sl.most_memory)?;
    w.write_all(b"</div></div><h3>Hash tags</h3>")?;
    if sl.hash_tags.is_empty() {
        return w.write_all(b"<p>No key has a hash tag.</p>");
    }
    let mut t = Table::new(
        w,
        "hash-tags",
        &[Col("tag", false), Col("keys", true), Col("memory", true)],
        true,
        true,
    )?;
    for tag in &sl.hash_tags {
        t.row(&[
            format!(
                "<td class=\"key\"><code>{{{}}}</code></td>",
                html(&prefix_text(&tag.tag))
            ),
            count_cell(tag.keys),
            bytes_cell(tag.memory),
        ])?;
    }
    t.finish()
}

pub(super) fn shards<'a>(m: &'a ReportJson<'a>) -> Option<Part<'a>> {
    let sh = m.shards.as_ref().filter(|sh| sh.shards.len() >= 2)?;
    Some(part("shards", "Shards", move |w| {
        section(
            w,
            "shards",
            "Shards",
            "One row per file; the bars show how evenly memory spreads across them.",
            |w| shards_body(sh, w),
        )
    }))
}

fn shards_body(sh: &ShardsJson<'_>, w: &mut dyn Write) -> io::Result<()> {
    let rows = &sh.shards;
    let max = rows.iter().map(|r| r.totals.memory).max().unwrap_or(0);
    let total: u64 = rows.iter().map(|r| r.totals.memory).sum();
    let mean = total as f64 / rows.len() as f64;
    let mean_pct = if max == 0 { 0.0 } else { mean * 100.0 / max as f64 };
    let im = &sh.imbalance;
    let ratio = |x: Option<f64>| x.map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into());
    write!(
        w,
        "<p class=\"facts\">Heaviest shard by memory: <b>{}</b>× the mean (<span class=\"path\">{}</span>); by keys: <b>{}</b>× the mean.</p>",
        ratio(im.memory_max_over_mean),
        html(im.heaviest_by_memory.unwrap_or("")),
        ratio(im.keys_max_over_mean),
    )?;
    let mut t = Table::new(
        w,
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
    )?;
    for r in rows {
        let m = r.totals.memory;
        let pct = if max == 0 {
            0.0
        } else {
            m as f64 * 100.0 / max as f64
        };
        let biggest = r.biggest_key.map_or_else(
            || text("-"),
            |b| {
                format!(
                    "<td class=\"key\"><code>{}</code> {}</td>",
                    html(&key_text(&b.key)),
                    bytes(b.memory)
                )
            },
        );
        t.row(&[
            format!("<td class=\"path\">{}</td>", html(r.path)),
            count_cell(r.totals.keys),
            bytes_cell(m),
            format!(
                "<td class=\"barcell\" data-v=\"{m}\"><span class=\"bar imb\"><i style=\"width:{pct:.2}%\"></i><b style=\"left:{mean_pct:.2}%\"></b></span><small>{:.1}%</small></td>",
                r.memory_share * 100.0
            ),
            count_cell(r.slots_used),
            biggest,
        ])?;
    }
    t.finish()?;
    if sh.overlapping_slots_count > 0 {
        write!(
            w,
            "<p class=\"warn\">{} slots hold keys in more than one file: {}</p>",
            count(sh.overlapping_slots_count),
            html(&shorten(&sh.overlapping_slots, 200))
        )?;
    }
    Ok(())
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
