//! The `shards` section as a table: one row per input file, then how
//! unevenly they are loaded and which slots they share.

use std::fmt::Write;

use comfy_table::Cell;
use rdblens_summary::shard::format_ranges;

use crate::cells::{heading, right, table};
use crate::format::{human_bytes, percent, thousands};
use crate::model::ReportJson;

/// Ranges for a table cell: the first few, then how many more.
fn short_ranges(ranges: &[[u16; 2]]) -> String {
    const SHOWN: usize = 3;
    if ranges.is_empty() {
        return "-".into();
    }
    let mut text = format_ranges(&ranges[..ranges.len().min(SHOWN)]);
    if ranges.len() > SHOWN {
        let _ = write!(text, " (+{} ranges)", thousands((ranges.len() - SHOWN) as u64));
    }
    text
}

/// The table: only for several files (one file is its own breakdown).
pub(crate) fn render(out: &mut String, r: &ReportJson<'_>) {
    let Some(j) = &r.shards else { return };
    if r.files.len() < 2 {
        return;
    }
    heading(out, &format!("Shards ({} files)", r.files.len()));
    let mut t = table(
        r.options,
        &[
            "file",
            "keys",
            "expiring",
            "memory",
            "share",
            "used_memory",
            "biggest key (memory)",
            "slots",
            "slot ranges",
        ],
    );
    for x in &j.shards {
        let biggest = x.biggest_key.map_or("-".into(), |k| {
            format!(
                "{} ({})",
                crate::cells::key_text(r.options, k.key.as_bytes()),
                human_bytes(k.memory)
            )
        });
        t.add_row(vec![
            Cell::new(x.path),
            right(thousands(x.totals.keys)),
            right(thousands(x.totals.keys_with_expiry)),
            right(human_bytes(x.totals.memory)),
            right(percent(x.totals.memory, r.totals.memory)),
            right(x.predicted_used_memory.map_or("-".into(), human_bytes)),
            Cell::new(biggest),
            right(thousands(x.slots_used)),
            Cell::new(short_ranges(x.ranges())),
        ]);
    }
    let _ = writeln!(out, "{}", crate::cells::fitted(&mut t, r.options));
    let i = &j.imbalance;
    let line = |what: &str, r: Option<f64>, who: Option<&str>| match (r, who) {
        (Some(r), Some(who)) => format!("{what} max/mean {r:.2} (heaviest: {who})"),
        _ => format!("{what} max/mean -"),
    };
    let _ = writeln!(
        out,
        "imbalance: {}; {}",
        line("memory", i.memory_max_over_mean, i.heaviest_by_memory),
        line("keys", i.keys_max_over_mean, i.heaviest_by_keys)
    );
    if j.overlapping_slots_count > 0 {
        let _ = writeln!(
            out,
            "{} slots hold keys in more than one file: {}",
            thousands(j.overlapping_slots_count),
            short_ranges(j.overlapping())
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ranges_shows_the_first_few() {
        assert_eq!(short_ranges(&[]), "-");
        assert_eq!(short_ranges(&[[0, 5460]]), "0-5460");
        assert_eq!(
            short_ranges(&[[0, 1], [3, 3], [5, 9], [11, 11], [13, 13]]),
            "0-1,3,5-9 (+2 ranges)"
        );
    }
}
