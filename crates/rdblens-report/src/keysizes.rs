//! Redis 8's `INFO keysizes` (docs/keysizes.md): the dump's histograms
//! written as the server writes them ([`render`]), a saved `INFO keysizes`
//! read back ([`parse_info`]: hostile input, every error names its line)
//! and the two compared bin by bin ([`compare`]).
//!
//! The server's format (redis `src/server.c`, `genRedisInfoString`, the
//! "keysizes" section): a `# Keysizes` header, then for each database
//! holding keys, in order, one line per type with keys, in the order
//! strings, lists, sets, sorted sets, hashes:
//! `db0_distrib_strings_sizes:1=2,8=1,1K=4`; a bin is named by its lower
//! bound 2^i, written with a K, M, G, T, P or E suffix from 1024 on
//! (`512`, `1K`, `2K` ... `512K`, `1M`...); empty bins are left out.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rdblens_summary::acc::keysizes::{Bins, KeySizes, BINS, TYPES};

/// Suffixes of the bins' names, one per factor of 1024.
const SUFFIXES: [&str; 7] = ["", "K", "M", "G", "T", "P", "E"];

/// The largest `INFO` text read: a whole `INFO everything` of a server
/// with every database's histograms is far below it.
pub const MAX_INFO_BYTES: u64 = 4 << 20;

/// The name of the bin `bin` (lengths 2^bin to 2^(bin+1)-1): `1`, `512`, `1K`, `2M`.
pub fn bin_label(bin: usize) -> String {
    format!("{}{}", 1u64 << (bin % 10), SUFFIXES[bin / 10])
}

/// The bin a label names: `Some(None)` for `0` (empty strings, later
/// Redis 8 releases), `Some(Some(bin))` for a power of two; `None` if the
/// label names no bin.
fn parse_label(label: &str) -> Option<Option<usize>> {
    if label == "0" {
        return Some(None);
    }
    let digits = label.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &label[digits.len()..];
    let scale = SUFFIXES.iter().position(|s| *s == suffix)?;
    if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    if !n.is_power_of_two() || n >= 1024 || digits.starts_with('0') {
        return None;
    }
    let bin = n.trailing_zeros() as usize + 10 * scale;
    (bin < BINS).then_some(Some(bin))
}

/// Writes the histograms as `INFO keysizes` does, with `\n` line ends
/// (the server's reply ends its lines with `\r\n`): the header, then a
/// line per database and type with keys. `zero_bin`: empty strings in a
/// bin `0` first, as later Redis 8 releases count them (Redis 8.0's first
/// version counts them nowhere).
pub fn render(k: &KeySizes, zero_bin: bool) -> String {
    let mut out = String::from("# Keysizes\n");
    for (db, hists) in &k.dbs {
        for (name, bins) in hists.each() {
            let mut fields: Vec<String> = Vec::new();
            if zero_bin && bins.zero > 0 {
                fields.push(format!("0={}", bins.zero));
            }
            fields.extend(bins.nonempty().map(|(i, n)| format!("{}={n}", bin_label(i))));
            if !fields.is_empty() {
                let _ = writeln!(out, "db{db}_{name}:{}", fields.join(","));
            }
        }
    }
    out
}

/// A saved `INFO keysizes` (or a whole `INFO`, of which the `# Keysizes`
/// section is read), as parsed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ServerKeySizes {
    /// Database -> line name -> bins.
    pub lines: BTreeMap<u64, BTreeMap<&'static str, Bins>>,
    /// Whether any line has a bin `0` (a later Redis 8 release: empty
    /// strings are counted there).
    pub has_zero_bin: bool,
    /// Fields of the section that are not one of the five histograms
    /// (a later release's), by line number: not compared.
    pub skipped: Vec<(usize, String)>,
}

/// Why a saved `INFO` cannot be read: the line (from 1) and what is wrong.
#[derive(Debug, PartialEq, Eq)]
pub struct InfoError {
    /// The line, from 1; 0 for the file as a whole.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for InfoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => write!(f, "{}", self.message),
            n => write!(f, "line {n}: {}", self.message),
        }
    }
}

impl std::error::Error for InfoError {}

fn error(line: usize, message: impl Into<String>) -> InfoError {
    InfoError {
        line,
        message: message.into(),
    }
}

/// Reads a saved `redis-cli INFO keysizes` (or `INFO`, `INFO everything`):
/// `\r\n` or `\n` line ends; section headers (`# Name`) say which lines
/// are the Keysizes section's (without any header, every line is).
/// Errors name the line: a field that is not `NAME:VALUE`, a histogram
/// line whose bins are not `LABEL=COUNT` with a label of the server's, a
/// bin or line given twice, bytes that are not UTF-8.
pub fn parse_info(data: &[u8]) -> Result<ServerKeySizes, InfoError> {
    if data.len() as u64 > MAX_INFO_BYTES {
        return Err(error(
            0,
            format!(
                "{} bytes, more than any INFO ({MAX_INFO_BYTES} bytes at most)",
                data.len()
            ),
        ));
    }
    let mut out = ServerKeySizes::default();
    let mut saw_header = false;
    let mut in_keysizes = true;
    let mut saw_keysizes = false;
    let mut saw_fields = false;
    for (i, raw) in data.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let line = std::str::from_utf8(raw).map_err(|e| {
            error(
                n,
                format!("not UTF-8 text (byte {} of the line)", e.valid_up_to() + 1),
            )
        })?;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(section) = line.strip_prefix('#') {
            saw_header = true;
            in_keysizes = section.trim().eq_ignore_ascii_case("keysizes");
            saw_keysizes |= in_keysizes;
            continue;
        }
        saw_fields = true;
        if !in_keysizes {
            continue;
        }
        read_line(n, line, &mut out)?;
    }
    if !saw_header && !saw_fields {
        return Err(error(0, "empty: no # Keysizes header and no field"));
    }
    if saw_header && !saw_keysizes {
        return Err(error(
            0,
            "no # Keysizes section (save the output of `redis-cli INFO keysizes` of a Redis 8 server)",
        ));
    }
    Ok(out)
}

/// One line of the Keysizes section.
fn read_line(n: usize, line: &str, out: &mut ServerKeySizes) -> Result<(), InfoError> {
    let Some((field, value)) = line.split_once(':') else {
        return Err(error(n, format!("`{}` is not a NAME:VALUE field", shorten(line))));
    };
    let parsed = field
        .strip_prefix("db")
        .and_then(|rest| rest.split_once('_'))
        .and_then(|(db, name)| {
            let db: u64 =
                (db.bytes().all(|b| b.is_ascii_digit()) && !db.is_empty()).then(|| db.parse().ok())??;
            Some((db, name))
        });
    let Some((db, name)) = parsed else {
        return Err(error(n, format!("field `{}` is not dbN_NAME", shorten(field))));
    };
    let Some(&(_, name)) = TYPES.iter().find(|(_, t)| *t == name) else {
        out.skipped.push((n, field.to_string()));
        return Ok(());
    };
    let db_lines = out.lines.entry(db).or_default();
    if db_lines.contains_key(name) {
        return Err(error(n, format!("{field} is given twice")));
    }
    let mut bins = Bins::default();
    let mut seen_zero = false;
    for bin in value.split(',') {
        let Some((label, count)) = bin.trim().split_once('=') else {
            return Err(error(
                n,
                format!("{field}: `{}` is not LABEL=COUNT", shorten(bin)),
            ));
        };
        let count: u64 = match count.bytes().all(|b| b.is_ascii_digit()) {
            true => count.parse().ok(),
            false => None,
        }
        .ok_or_else(|| {
            error(
                n,
                format!(
                    "{field}: bin {label}: count `{}` is not a whole number",
                    shorten(count)
                ),
            )
        })?;
        let slot = match parse_label(label) {
            Some(Some(b)) if bins.counts[b] == 0 && count > 0 => &mut bins.counts[b],
            Some(None) if !seen_zero => {
                seen_zero = true;
                out.has_zero_bin = true;
                &mut bins.zero
            }
            Some(_) if count == 0 => {
                return Err(error(
                    n,
                    format!("{field}: bin {label} has 0 keys (the server leaves empty bins out)"),
                ))
            }
            Some(_) => return Err(error(n, format!("{field}: bin {label} is given twice"))),
            None => {
                return Err(error(
                    n,
                    format!(
                    "{field}: `{}` is not a bin (0, or a power of two: 1, 2, 4 ... 512, 1K ... 512K, 1M ...)",
                    shorten(label)
                ),
                ))
            }
        };
        *slot = count;
    }
    db_lines.insert(name, bins);
    Ok(())
}

/// At most 40 characters of hostile text, for an error message.
fn shorten(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s.to_string(),
    }
}

/// One bin where the dump and the server disagree.
#[derive(Debug, PartialEq, Eq)]
pub struct BinDifference {
    /// Database number.
    pub db: u64,
    /// The line's name, e.g. `distrib_strings_sizes`.
    pub name: &'static str,
    /// The bin's label (`0`, `1`, `1K`...).
    pub bin: String,
    /// Keys in the dump.
    pub dump: u64,
    /// Keys on the server.
    pub server: u64,
}

/// The comparison of the dump's histograms with the server's.
#[derive(Debug, PartialEq, Eq)]
pub struct Comparison {
    /// Every bin that differs, by database, line (the server's order) and bin.
    pub differences: Vec<BinDifference>,
    /// Bins compared (non-empty on either side).
    pub bins_compared: u64,
    /// Whether the bin `0` (empty strings) was compared.
    pub zero_bin: bool,
    /// The dump's empty strings, left out when the bin `0` is not compared.
    pub empty_strings_not_compared: u64,
}

/// Compares bin by bin. The bin `0` (empty strings) is compared when
/// `zero_bin` or when the server's text has one.
pub fn compare(dump: &KeySizes, server: &ServerKeySizes, zero_bin: bool) -> Comparison {
    let zero_bin = zero_bin || server.has_zero_bin;
    let empty = Bins::default();
    let mut dbs: Vec<u64> = dump.dbs.keys().chain(server.lines.keys()).copied().collect();
    dbs.sort_unstable();
    dbs.dedup();
    let mut out = Comparison {
        differences: Vec::new(),
        bins_compared: 0,
        zero_bin,
        empty_strings_not_compared: 0,
    };
    for db in dbs {
        let ours = dump.dbs.get(&db);
        for (i, (_, name)) in TYPES.iter().enumerate() {
            let a = ours.map_or(&empty, |h| h.each()[i].1);
            let b = server.lines.get(&db).and_then(|l| l.get(name)).unwrap_or(&empty);
            if zero_bin {
                out.note(db, name, "0".into(), a.zero, b.zero);
            } else {
                out.empty_strings_not_compared += a.zero;
            }
            for bin in 0..BINS {
                out.note(db, name, bin_label(bin), a.counts[bin], b.counts[bin]);
            }
        }
    }
    out
}

impl Comparison {
    fn note(&mut self, db: u64, name: &'static str, bin: String, dump: u64, server: u64) {
        if dump == 0 && server == 0 {
            return;
        }
        self.bins_compared += 1;
        if dump != server {
            self.differences.push(BinDifference {
                db,
                name,
                bin,
                dump,
                server,
            });
        }
    }

    /// The comparison for people: each differing bin on a line, then a
    /// verdict.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if !self.differences.is_empty() {
            let _ = writeln!(
                out,
                "{:<32} {:>5} {:>14} {:>14} {:>14}",
                "line", "bin", "dump", "server", "dump-server"
            );
            for d in &self.differences {
                let delta = i128::from(d.dump) - i128::from(d.server);
                let _ = writeln!(
                    out,
                    "{:<32} {:>5} {:>14} {:>14} {:>+14}",
                    format!("db{}_{}", d.db, d.name),
                    d.bin,
                    d.dump,
                    d.server,
                    delta
                );
            }
        }
        let _ = match self.differences.len() {
            0 => writeln!(
                out,
                "the same: {} bins compared, every one equal",
                self.bins_compared
            ),
            n => writeln!(
                out,
                "different: {n} of {} bins compared differ",
                self.bins_compared
            ),
        };
        if self.empty_strings_not_compared > 0 {
            let _ = writeln!(
                out,
                "note: the dump's empty strings ({}) are not compared: the server's INFO has no bin 0 (Redis 8.0's first format counts them nowhere; --zero-bin compares them)",
                self.empty_strings_not_compared
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_servers() {
        let names: Vec<String> = (0..BINS).map(bin_label).collect();
        assert_eq!(
            &names[..12],
            ["1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1K", "2K"]
        );
        assert_eq!(names[20], "1M");
        assert_eq!(names[63], "8E");
        for (i, name) in names.iter().enumerate() {
            assert_eq!(parse_label(name), Some(Some(i)), "{name}");
        }
        for bad in ["", "3", "1024", "01", "1k", "16E", "1KK", "K", "-1", "+1", "2X"] {
            assert_eq!(parse_label(bad), None, "{bad:?}");
        }
        assert_eq!(parse_label("0"), Some(None));
    }
}
