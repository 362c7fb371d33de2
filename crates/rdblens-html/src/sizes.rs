//! Value sizes per type (the JSON's `value_sizes`, section `bigkeys`):
//! p50/p90/p99/max of memory, length and largest element, as the table
//! report shows them below its top lists.

use serde_json::Value;

use crate::page::{bytes_cell, count_cell, s, text, u, Col, Table};

/// Per type, one row per figure (memory; elements, or a string's bytes;
/// largest element), the type and its keys on the first; `None` when the
/// document has no `value_sizes` (section `bigkeys` not shown).
pub fn value_sizes(d: &Value) -> Option<String> {
    let sizes = d.get("value_sizes")?.as_array()?;
    let mut t = Table::new(
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
    );
    for v in sizes {
        let type_name = s(v, "type");
        let string = type_name == "string";
        let figures = [
            ("memory", "memory", true),
            ("length", if string { "bytes" } else { "elements" }, string),
            ("largest_element", "largest element", true),
        ];
        let mut first = true;
        for (field, label, in_bytes) in figures {
            // Strings have no largest element: the JSON leaves it out.
            let Some(p) = v.get(field).filter(|p| p.is_object()) else {
                continue;
            };
            let cell = |n: u64| if in_bytes { bytes_cell(n) } else { count_cell(n) };
            let (name, keys) = if first {
                (text(type_name), count_cell(u(v, "keys")))
            } else {
                (text(""), text(""))
            };
            first = false;
            t.row(&[
                name,
                keys,
                text(label),
                cell(u(p, "p50")),
                cell(u(p, "p90")),
                cell(u(p, "p99")),
                cell(u(p, "max")),
            ]);
        }
    }
    if t.is_empty() {
        return None;
    }
    Some(format!(
        "<h3>Value sizes per type (p50 / p90 / p99 within 1/64, max exact)</h3>{}",
        t.finish()
    ))
}
