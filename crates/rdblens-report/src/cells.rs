//! comfy-table helpers shared by the table renderers (the report's and the
//! diff's): one table style, right-aligned figures, section headings and
//! bar charts.

use std::fmt::Write;

use comfy_table::{presets, Cell, CellAlignment, ContentArrangement, Table};

use crate::format::{bar, thousands};
use crate::options::ReportOptions;

/// Cells of the longest bar in a bar chart.
const BAR_WIDTH: usize = 40;

/// A table with `header`: box drawing fitted to the terminal's width, or
/// plain Markdown when not on a terminal.
pub(crate) fn table(opts: &ReportOptions, header: &[&str]) -> Table {
    let mut t = Table::new();
    match opts.width {
        Some(w) => {
            t.load_preset(presets::UTF8_FULL_CONDENSED)
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(w);
        }
        None => {
            t.load_preset(presets::ASCII_MARKDOWN);
        }
    }
    t.set_header(header.iter().map(|h| Cell::new(*h)));
    t
}

/// A right-aligned cell (figures).
pub(crate) fn right(s: impl ToString) -> Cell {
    Cell::new(s.to_string()).set_alignment(CellAlignment::Right)
}

/// `== title ==` after a blank line.
pub(crate) fn heading(out: &mut String, title: &str) {
    let _ = write!(out, "\n== {title} ==\n");
}

/// A table of (label, keys, memory) rows with a bar for the keys. The
/// memory column is left out when no row has one (histograms that do not
/// track memory: key lengths, idle times, LFU counters).
pub(crate) fn bars_table(opts: &ReportOptions, label: &str, rows: &[(String, u64, String)]) -> String {
    let max = rows.iter().map(|r| r.1).max().unwrap_or(0);
    let memory = rows.iter().any(|r| !r.2.is_empty());
    let header: &[&str] = if memory {
        &[label, "keys", "", "memory"]
    } else {
        &[label, "keys", ""]
    };
    let mut t = table(opts, header);
    for (name, n, extra) in rows {
        let mut row = vec![
            Cell::new(name),
            right(thousands(*n)),
            Cell::new(bar(*n, max, BAR_WIDTH)),
        ];
        if memory {
            row.push(right(extra));
        }
        t.add_row(row);
    }
    format!("{t}\n")
}
