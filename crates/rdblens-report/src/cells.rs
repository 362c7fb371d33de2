//! comfy-table helpers shared by the table renderers (the report's and the
//! diff's): one table style fitted to the terminal, right-aligned figures,
//! key names cut for a cell, section headings and bar charts.

use std::fmt::Write;

use comfy_table::{presets, Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table, Width};

use crate::format::{bar, thousands};
use crate::options::ReportOptions;
use crate::words::{unbreakable, GLUE};

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

/// Columns whose text may wrap (at spaces) in a narrow terminal; every
/// other column (figures with their units, type, encoding and rule names,
/// bars) keeps its content on one line, so a number or a name is never cut.
const WRAPPABLE: &[&str] = &[
    "key",
    "rule / scope",
    "examples",
    "finding",
    "scope",
    "thresholds",
    "prefix",
    "namespaces",
    "slot ranges",
    "biggest key (memory)",
    "file",
    "problem",
    "figure",
    "hash tag",
];

/// The narrowest a text column of [`WRAPPABLE`] gets on a terminal: a
/// key name or a finding's scope, cut to it, is one line.
pub(crate) const MIN_TEXT_WIDTH: u16 = 22;

/// A text column is widened for a word up to this long (the longest
/// config directive, `zset-max-listpack-entries`, is 25); a longer word is
/// cut where the column ends.
const MAX_WORD: u16 = 28;

/// A key name for a cell: on a narrow terminal (under 120 columns) a name
/// longer than a text column's minimum is cut in the middle (`"user:12…:name"`),
/// so that it neither wraps nor widens the table; elsewhere `short_key`'s
/// form. JSON, CSV and piped tables keep the whole name.
pub(crate) fn key_text(opts: &ReportOptions, key: &[u8]) -> String {
    key_text_within(opts, key, usize::from(MIN_TEXT_WIDTH))
}

/// [`key_text`] cut to `max` characters (a name after an indent).
pub(crate) fn key_text_within(opts: &ReportOptions, key: &[u8], max: usize) -> String {
    unbreakable(opts, cut_middle(opts, crate::format::short_key(key), max))
}

/// `text` cut in the middle to `max` characters (at least 3) with an
/// ellipsis on a narrow terminal (under 120 columns), as [`key_text`] cuts
/// key names; whole elsewhere.
pub(crate) fn cut_middle(opts: &ReportOptions, text: String, max: usize) -> String {
    let max = max.max(3);
    match opts.width {
        Some(w) if w < 120 && text.chars().count() > max => {
            let chars: Vec<char> = text.chars().collect();
            let head = (max - 1) / 2;
            let tail = max - 1 - head;
            let mut out: String = chars[..head].iter().collect();
            out.push('…');
            out.extend(&chars[chars.len() - tail..]);
            out
        }
        _ => text,
    }
}

/// Columns left out, in this order, while a table is wider than the
/// terminal: the figures the report shows elsewhere or that matter least.
/// JSON and CSV always have every field.
const LOW_VALUE: &[&str] = &[
    "serialized",
    "max elem",
    "share of memory",
    "expiring",
    "used_memory",
    "not listed",
    "listed",
    "savings",
    "within 10% under",
    "over by <= 2x",
    "memory over",
    "thresholds",
    "encoding",
    "share",
    "#",
    "ttl",
    "db",
    "examples",
    "slot ranges",
    "severity",
];

/// The table as text. On a terminal (`opts.width`) only the text columns
/// of [`WRAPPABLE`] wrap, and while the table is wider than the terminal
/// the columns of [`LOW_VALUE`] are dropped, least useful first; piped
/// output (no width) is the whole table, unwrapped.
pub(crate) fn fitted(t: &mut Table, opts: &ReportOptions) -> String {
    fitted_dropping(t, opts, LOW_VALUE)
}

/// [`fitted`], dropping the columns headed `drop`, in this order, while
/// the table is wider than the terminal (of columns with the same header,
/// the leftmost still shown).
pub(crate) fn fitted_dropping(t: &mut Table, opts: &ReportOptions, drop: &[&str]) -> String {
    let Some(width) = opts.width else {
        return t.to_string();
    };
    let headers: Vec<String> = t
        .header()
        .map(|h| h.cell_iter().map(|c| c.content()).collect())
        .unwrap_or_default();
    for (i, h) in headers.iter().enumerate() {
        let constraint = if WRAPPABLE.contains(&h.as_str()) {
            // Room for a typical key or phrase before it wraps; a table
            // that cannot give it that much drops columns instead.
            let min = match h.as_str() {
                "figure" => 8,
                "finding" | "examples" | "thresholds" => 16,
                // A key name, scope or prefix cut to MIN_TEXT_WIDTH
                // characters, and the cell's padding (the boundary counts
                // it): one line.
                _ => MIN_TEXT_WIDTH + 2,
            };
            // And room for the column's longest word (a config directive,
            // a key name), up to a limit, so that no word is cut.
            let longest = t
                .column_cells_iter(i)
                .flatten()
                .flat_map(|c| {
                    c.content()
                        .split([' ', '\n'])
                        .map(|w| w.chars().count())
                        .collect::<Vec<_>>()
                })
                .max()
                .unwrap_or(0);
            let word = u16::try_from(longest).unwrap_or(u16::MAX).min(MAX_WORD);
            ColumnConstraint::LowerBoundary(Width::Fixed(min.max(word + 2)))
        } else {
            ColumnConstraint::ContentWidth
        };
        if let Some(c) = t.column_mut(i) {
            c.set_constraint(constraint);
        }
    }
    let fits = |s: &str| s.lines().all(|l| l.chars().count() <= usize::from(width));
    let mut hidden = vec![false; headers.len()];
    let mut text = t.to_string();
    for name in drop {
        if fits(&text) {
            break;
        }
        let Some(i) = (0..headers.len()).find(|&i| headers[i] == *name && !hidden[i]) else {
            continue;
        };
        if let Some(c) = t.column_mut(i) {
            c.set_constraint(ColumnConstraint::Hidden);
            hidden[i] = true;
            text = t.to_string();
        }
    }
    text.replace(GLUE, " ")
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
    // Narrower bars in a narrow terminal: the labels and figures stay whole.
    let bar_width = match opts.width {
        Some(w) if w < 100 => BAR_WIDTH * 3 / 4,
        _ => BAR_WIDTH,
    };
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
            Cell::new(bar(*n, max, bar_width)),
        ];
        if memory {
            row.push(right(extra));
        }
        t.add_row(row);
    }
    format!("{}\n", fitted(&mut t, opts))
}

#[cfg(test)]
mod fit_tests {
    use super::*;
    use crate::words::glue_figures;

    /// At 80 columns figures and names stay whole, low-value columns go
    /// first, and the table fits; piped output keeps every column.
    #[test]
    fn figures_never_break_and_the_table_fits() {
        let header = [
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
        ];
        let row = |t: &mut Table| {
            t.add_row(vec![
                right(1),
                right(0),
                Cell::new("\"str:big:1mb-lzf\""),
                Cell::new("string"),
                Cell::new("raw"),
                right("1,048,576"),
                right("1.3 MiB"),
                right("12.8 KiB"),
                right("1.0 MiB"),
                right("1136.2d"),
            ]);
        };
        let narrow = ReportOptions {
            width: Some(80),
            ..ReportOptions::default()
        };
        let mut t = table(&narrow, &header);
        row(&mut t);
        let text = fitted(&mut t, &narrow);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        for whole in [
            "1,048,576",
            "1.3 MiB",
            "string",
            "1136.2d",
            "str:big:1mb-lzf",
            "elements",
        ] {
            assert!(text.lines().any(|l| l.contains(whole)), "{whole} cut: {text}");
        }
        // A column is shown whole or not at all.
        assert!(!text.contains("encodi") || text.contains("encoding"), "{text}");
        assert!(
            !text.contains("serialized") && !text.contains("12.8 KiB"),
            "{text}"
        );
        let piped = ReportOptions::default();
        let mut t = table(&piped, &header);
        row(&mut t);
        assert!(fitted(&mut t, &piped).contains("12.8 KiB |"));
    }

    /// A cell of prose wraps between words: a config directive, a figure
    /// with its unit and a key name with spaces stay whole on one line.
    #[test]
    fn cells_wrap_between_words_never_inside() {
        let narrow = ReportOptions {
            width: Some(56),
            ..ReportOptions::default()
        };
        let mut t = table(&narrow, &["rule", "finding", "memory"]);
        let finding = format!(
            "{}; e.g. {}",
            glue_figures(
                &narrow,
                "hash of 65 B > hash-max-listpack-value 64, holding 97.0 KiB"
            ),
            key_text(&narrow, b"key with spaces")
        );
        t.add_row(vec![
            Cell::new("encoding-miss"),
            Cell::new(finding),
            right("1.0 KiB"),
        ]);
        let text = fitted(&mut t, &narrow);
        assert!(!text.contains('\u{a0}'), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 56), "{text}");
        assert!(text.lines().count() > 6, "the finding wraps: {text}");
        for whole in [
            "hash-max-listpack-value",
            "97.0 KiB",
            "65 B",
            "\"key with spaces\"",
        ] {
            assert!(text.lines().any(|l| l.contains(whole)), "{whole} cut: {text}");
        }
        // Piped, nothing is glued.
        assert_eq!(glue_figures(&ReportOptions::default(), "1 B"), "1 B");
        assert_eq!(key_text(&ReportOptions::default(), b"a b"), "\"a b\"");
    }

    /// Long key names are cut in the middle on a narrow terminal only.
    #[test]
    fn long_keys_are_cut_in_the_middle_on_a_narrow_terminal() {
        let narrow = ReportOptions {
            width: Some(80),
            ..ReportOptions::default()
        };
        let key = b"session:0000d1a8d0c7b848e10081de3091854b";
        assert_eq!(key_text(&narrow, key), "\"session:0…de3091854b\"");
        assert_eq!(key_text(&narrow, key).chars().count(), 22);
        assert_eq!(key_text(&narrow, b"user:1"), "\"user:1\"");
        let piped = ReportOptions::default();
        assert_eq!(
            key_text(&piped, key),
            format!("\"{}\"", std::str::from_utf8(key).unwrap_or_default())
        );
    }
}
