//! Value sizes per type (the model's `value_sizes`, section `bigkeys`):
//! p50/p90/p99/max of memory, length and largest element, as the table
//! report shows them below its top lists.

use std::io::{self, Write};

use rdblens_report::model::Percentiles;
use rdblens_report::ReportJson;

use crate::page::{bytes_cell, count_cell, text, Col, Table};

/// Per type, one row per figure (memory; elements, or a string's bytes;
/// largest element), the type and its keys on the first; nothing when the
/// model has no value sizes (section `bigkeys` not shown, or no key).
pub fn value_sizes(m: &ReportJson<'_>, w: &mut dyn Write) -> io::Result<()> {
    let Some(sizes) = m.value_sizes.as_ref().filter(|s| !s.is_empty()) else {
        return Ok(());
    };
    w.write_all(b"<h3>Value sizes per type (p50 / p90 / p99 within 1/64, max exact)</h3>")?;
    let mut t = Table::new(
        w,
        "value-sizes",
        &[
            Col("type", false),
            Col("keys", true),
            Col("figure", false),
            Col("p50", true),
            Col("p90", true),
            Col("p99", true),
            Col("max", true),
        ],
        false,
        false,
    )?;
    for v in sizes {
        let string = v.type_name == "string";
        // Strings have no largest element.
        let figures: [(Option<&Percentiles>, &str, bool); 3] = [
            (Some(&v.memory), "memory", true),
            (Some(&v.length), if string { "bytes" } else { "elements" }, string),
            (v.largest_element.as_ref(), "largest element", true),
        ];
        let mut first = true;
        for (p, label, in_bytes) in figures {
            let Some(p) = p else { continue };
            let cell = |n: u64| if in_bytes { bytes_cell(n) } else { count_cell(n) };
            let (name, keys) = if first {
                (text(&v.type_name), count_cell(v.keys))
            } else {
                (text(""), text(""))
            };
            first = false;
            t.row(&[
                name,
                keys,
                text(label),
                cell(p.p50),
                cell(p.p90),
                cell(p.p99),
                cell(p.max),
            ])?;
        }
    }
    t.finish()
}
