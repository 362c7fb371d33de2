//! Tables of keys: the biggest keys (section `bigkeys`) and the coldest and
//! hottest keys with their idle-time and frequency bars (section `access`).

use comfy_table::Cell;
use rdblens_summary::acc::access::Access;
use rdblens_summary::acc::top::SharedRecord;

use crate::cells::{bars_table, heading, key_text, right, table};
use crate::format::{duration, human_bytes, thousands};
use crate::model::{length_bars, Percentiles, ReportJson, TopJson, ValueSizesJson};
use crate::options::{ReportOptions, SortBy};

fn ttl_cell(expiry_ms: Option<i64>, now_ms: i64) -> String {
    match expiry_ms {
        None => "-".into(),
        Some(t) if t <= now_ms => "expired".into(),
        Some(t) => duration(t.saturating_sub(now_ms)),
    }
}

fn keys_table(opts: &ReportOptions, rows: &[SharedRecord], now_ms: i64, n: usize) -> String {
    let mut t = table(
        opts,
        &[
            "#",
            "db",
            "key",
            "type",
            "encoding",
            "elements",
            "memory",
            "serialized",
            "max elem",
            "ttl",
        ],
    );
    for (i, r) in rows.iter().take(n).enumerate() {
        t.add_row(vec![
            right(i + 1),
            right(r.db),
            Cell::new(key_text(opts, r.key.as_bytes())),
            Cell::new(&r.type_name),
            Cell::new(&r.encoding),
            right(thousands(r.elements)),
            right(human_bytes(r.memory)),
            right(human_bytes(r.serialized_bytes)),
            right(human_bytes(r.max_element_len)),
            right(ttl_cell(r.expiry_ms, now_ms)),
        ]);
    }
    format!("{}\n", crate::cells::fitted(&mut t, opts))
}

/// The three overall top lists (`--sort` first), then each type's by memory.
pub(crate) fn bigkeys(out: &mut String, r: &ReportJson<'_>, top: &TopJson<'_>) {
    let opts = r.options;
    let memory = ("estimated memory", top.by_memory);
    let serialized = ("serialized size", top.by_serialized);
    let elements = ("element count", top.by_elements);
    let order = match opts.sort {
        SortBy::Memory => [memory, serialized, elements],
        SortBy::Serialized => [serialized, memory, elements],
        SortBy::Elements => [elements, memory, serialized],
    };
    for (what, keys) in order {
        heading(out, &format!("Biggest keys by {what}"));
        out.push_str(&keys_table(opts, keys, r.now_ms, opts.top));
    }
    if let Some(sizes) = &r.value_sizes {
        value_sizes(out, opts, sizes);
    }
    for (t, lists) in r.top_keys_per_type.iter().flatten() {
        heading(out, &format!("Biggest {t} keys by memory"));
        out.push_str(&keys_table(opts, lists.by_memory, r.now_ms, opts.top.min(5)));
    }
}

/// Per type, one row per figure: memory, length (elements, or a string's
/// bytes) and largest element, each as p50 / p90 / p99 / max.
fn value_sizes(out: &mut String, opts: &ReportOptions, sizes: &[ValueSizesJson]) {
    heading(
        out,
        "Value sizes per type (p50 / p90 / p99 within 1/64, max exact)",
    );
    let mut t = table(opts, &["type", "keys", "figure", "p50", "p90", "p99", "max"]);
    for v in sizes {
        let string = v.type_name == "string";
        let rows: [(&str, Option<Percentiles>, bool); 3] = [
            ("memory", Some(v.memory), true),
            (if string { "bytes" } else { "elements" }, Some(v.length), string),
            ("largest elem", v.largest_element, true),
        ];
        for (i, (figure, p, bytes)) in rows.into_iter().enumerate() {
            let Some(p) = p else { continue };
            let show = |n: u64| if bytes { human_bytes(n) } else { thousands(n) };
            let (name, keys) = if i == 0 {
                (v.type_name.clone(), thousands(v.keys))
            } else {
                (String::new(), String::new())
            };
            t.add_row(vec![
                Cell::new(name),
                right(keys),
                Cell::new(figure),
                right(show(p.p50)),
                right(show(p.p90)),
                right(show(p.p99)),
                right(show(p.max)),
            ]);
        }
    }
    out.push_str(&crate::cells::fitted(&mut t, opts));
    out.push('\n');
}

/// Idle times (LRU) and access frequencies (LFU), with the keys at the ends.
pub(crate) fn access(out: &mut String, r: &ReportJson<'_>, a: &Access) {
    let opts = r.options;
    if a.idle_seconds.count > 0 {
        heading(out, "Idle time (LRU)");
        let rows: Vec<(String, u64, String)> = length_bars(&a.idle_seconds)
            .into_iter()
            // Idle times come from the file: any u64 (fuzz_regressions/analyze).
            .map(|(from, k)| {
                let ms = i64::try_from(from).unwrap_or(i64::MAX).saturating_mul(1000);
                (format!(">= {}", duration(ms)), k, String::new())
            })
            .collect();
        out.push_str(&bars_table(opts, "idle", &rows));
        heading(out, "Coldest keys");
        out.push_str(&keys_table(opts, &a.coldest.keys, r.now_ms, opts.top.min(10)));
    }
    if a.lfu_freq.count > 0 {
        heading(out, "Access frequency (LFU counter)");
        let rows: Vec<(String, u64, String)> = length_bars(&a.lfu_freq)
            .into_iter()
            .map(|(from, k)| (format!(">= {from}"), k, String::new()))
            .collect();
        out.push_str(&bars_table(opts, "LFU counter", &rows));
        heading(out, "Hottest keys");
        out.push_str(&keys_table(opts, &a.hottest.keys, r.now_ms, opts.top.min(10)));
    }
    if a.ram_lru_keys > 0 {
        heading(out, "Redis Enterprise RAM_LRU");
        out.push_str(&format!(
            "{} keys carry a RAM_LRU value (opcode 107), whose meaning is unpublished: \
             it is not shown as an idle time.\n",
            thousands(a.ram_lru_keys)
        ));
    }
}
