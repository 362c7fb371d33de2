//! What a line break may not part, in the text of both table renderers
//! (the report's and the diff's) on a terminal: prose lines folded at
//! spaces (textwrap), and the glue that keeps a key name, a figure and its
//! unit, or a date and its time, whole in a wrapping table cell.

use crate::options::ReportOptions;

/// A no-break space: joins what a table cell must not part at a line break
/// (a key name's words, a figure and its unit); `cells::fitted_dropping`
/// renders it as a plain space, on a terminal only. Key names are escaped
/// to ASCII, so they hold none of their own (a namespace or a path with
/// one shows a plain space there).
pub(crate) const GLUE: char = '\u{a0}';

/// `text` (a key name) with its spaces unbreakable on a terminal, so that a
/// cell of prose wraps around it, not inside it.
pub(crate) fn unbreakable(opts: &ReportOptions, text: String) -> String {
    match opts.width {
        Some(_) if text.contains(' ') => text.replace(' ', &GLUE.to_string()),
        _ => text,
    }
}

/// Prose for a cell: on a terminal a figure stays with its unit and a date
/// with its time when the cell wraps, as [`wrap_prose`] keeps them.
pub(crate) fn glue_figures(opts: &ReportOptions, text: &str) -> String {
    if opts.width.is_none() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut prev: Option<&str> = None;
    for word in text.split(' ') {
        if let Some(p) = prev {
            out.push(if glued(p, word) { GLUE } else { ' ' });
        }
        out.push_str(word);
        prev = Some(word);
    }
    out
}

/// Lines of prose (not tables) folded at spaces to a terminal's width, the
/// continuation indented, so the terminal never cuts a word, a figure from
/// its unit or a timestamp ([`prose_words`]); unchanged when piped (`width`
/// none).
pub(crate) fn wrap_prose(text: &str, width: Option<u16>) -> String {
    let Some(width) = width else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let table = line.starts_with(['┌', '│', '╞', '├', '└', '|']);
        if table || line.chars().count() <= usize::from(width) {
            out.push_str(line);
        } else {
            let indent = if line.starts_with("  ") { "    " } else { "  " };
            let opts = textwrap::Options::new(usize::from(width))
                .subsequent_indent(indent)
                .word_separator(textwrap::WordSeparator::Custom(prose_words))
                .word_splitter(textwrap::WordSplitter::NoHyphenation);
            out.push_str(&textwrap::fill(line, opts));
        }
        out.push('\n');
    }
    out
}

/// Units never parted from the figure before them at a line break
/// (`2.4 MiB`, `within 5 %`, `21:48:50 UTC`).
const UNITS: &[&str] = &["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "MB", "%", "UTC"];

/// Whether `next` stays on the line of `prev`: a unit after a figure, a
/// time after a date (`2026-11-21 21:48:50`).
fn glued(prev: &str, next: &str) -> bool {
    if !prev.ends_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let unit = next.trim_end_matches([',', ';', ':', '.', ')']);
    let date = prev.len() >= 10
        && prev.as_bytes()[prev.len() - 3] == b'-'
        && prev.as_bytes()[prev.len() - 6] == b'-';
    let time =
        next.len() >= 8 && next.as_bytes()[2] == b':' && next.starts_with(|c: char| c.is_ascii_digit());
    UNITS.contains(&unit) || (date && time)
}

/// The words textwrap folds prose at: split at spaces as
/// `WordSeparator::AsciiSpace` does, but a figure and its unit, and a
/// date and its time, are one word.
fn prose_words(line: &str) -> Box<dyn Iterator<Item = textwrap::core::Word<'_>> + '_> {
    let bytes = line.as_bytes();
    let mut words = Vec::new();
    // Where the current word group starts, and its last word's span.
    let mut group = 0;
    let mut last: Option<(usize, usize)> = None;
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        while at < bytes.len() && bytes[at] != b' ' {
            at += 1;
        }
        if let Some((prev_start, prev_end)) = last {
            let one_space = start == prev_end + 1;
            if !(one_space && glued(&line[prev_start..prev_end], &line[start..at])) {
                words.push(textwrap::core::Word::from(&line[group..start]));
                group = start;
            }
        }
        last = Some((start, at));
        while at < bytes.len() && bytes[at] == b' ' {
            at += 1;
        }
    }
    if group < line.len() {
        words.push(textwrap::core::Word::from(&line[group..]));
    }
    Box::new(words.into_iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prose folds at spaces, never between a figure and its unit or
    /// inside a timestamp; tables and piped text are left alone.
    #[test]
    fn prose_keeps_figures_and_timestamps_whole() {
        let line = "estimated memory 2.4 MiB (+220.3 KiB), snapshot 2026-11-21 21:48:50 UTC; 12 keys\n";
        assert_eq!(
            wrap_prose(line, Some(28)),
            "estimated memory 2.4 MiB\n  (+220.3 KiB), snapshot\n  2026-11-21 21:48:50 UTC;\n  12 keys\n"
        );
        assert_eq!(wrap_prose(line, None), line);
        let table = format!("│ {} │\n", "x ".repeat(40));
        assert_eq!(wrap_prose(&table, Some(28)), table);
        // Two spaces are a real gap: the unit may go to the next line.
        let gap = prose_words("1  MiB").map(|w| w.word).collect::<Vec<_>>();
        assert_eq!(gap, ["1", "MiB"]);
    }
}
