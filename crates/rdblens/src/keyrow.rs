//! One record per key for `rdblens keys`, as CSV or JSON lines.
//!
//! The first eight columns are those of the redis-rdb-tools memory report
//! (`rdb -c memory`), with the same names, order and value formats, so
//! spreadsheets and scripts written for it keep working; rdblens' own
//! columns follow. The column list is documented in docs/keys.md.

use rdblens_parser::{escape_bytes, TypeKind};
use rdblens_summary::KeyFacts;
use serde::Serialize;

/// One key. Field order is column order; names are the CSV header and the
/// JSON field names.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KeyRow {
    pub database: u64,
    /// redis-rdb-tools' type names (`sortedset` for zsets).
    #[serde(rename = "type")]
    pub type_name: &'static str,
    /// The key; escaped the redis-cli way (`\xNN`) when not valid UTF-8 or when it holds control characters.
    pub key: String,
    /// Estimated memory (MEMORY USAGE); the serialized size for opaque module values.
    pub size_in_bytes: u64,
    pub encoding: &'static str,
    pub num_elements: u64,
    pub len_largest_element: u64,
    /// `YYYY-MM-DDTHH:MM:SS[.ffffff]`, UTC, as redis-rdb-tools writes it.
    pub expiry: Option<String>,
    pub expiry_ms: Option<i64>,
    /// Expiry minus the reference time (`--now`, default the snapshot's ctime); <= 0: already expired.
    pub ttl_ms: Option<i64>,
    pub serialized_bytes: u64,
    pub rdb_type: &'static str,
    /// Module type name for module values (`hellotype`, `ReJSON-RL`...).
    pub module: Option<String>,
    pub idle_seconds: Option<u64>,
    pub lfu_freq: Option<u8>,
    pub slot: u16,
    /// Whether `key` was escaped (the key bytes were not valid UTF-8, or held control characters).
    pub key_escaped: bool,
    /// With several files: the file the key is in (its `--label`, or its path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The key's bytes as stored, for the Parquet dataset's binary `key`
    /// column (only it asks for them: other formats write `key`).
    #[serde(skip)]
    pub key_bytes: Option<Vec<u8>>,
}

/// The type column as redis-rdb-tools names it.
pub fn rdb_tools_type(kind: TypeKind) -> &'static str {
    match kind {
        TypeKind::ZSet => "sortedset",
        other => other.name(),
    }
}

impl KeyRow {
    pub fn from_facts(f: &KeyFacts<'_>, now_ms: i64) -> Self {
        let (key, key_escaped) = match key_text(f.key) {
            Some(text) => (text.to_string(), false),
            None => (escape_bytes(f.key), true),
        };
        KeyRow {
            database: f.db,
            type_name: rdb_tools_type(f.kind),
            key,
            size_in_bytes: f.memory,
            encoding: f.encoding.as_str(),
            num_elements: f.elements,
            len_largest_element: f.max_element_len,
            expiry: f.expiry_ms.map(iso_utc),
            expiry_ms: f.expiry_ms,
            ttl_ms: f.expiry_ms.map(|e| e.saturating_sub(now_ms)),
            serialized_bytes: f.serialized_bytes,
            rdb_type: f.rdb_type,
            module: f.module.clone(),
            idle_seconds: f.idle_seconds,
            lfu_freq: f.lfu_freq,
            slot: f.slot,
            key_escaped,
            file: None,
            key_bytes: None,
        }
    }
}

/// The key as the key column shows it unescaped, or `None` when it must be
/// escaped: bytes that are not UTF-8, or control characters (an ANSI escape
/// would recolour a terminal, a newline would split a line for `grep`).
pub fn key_text(key: &[u8]) -> Option<&str> {
    // Printable ASCII, most keys: one pass over the bytes decides.
    if key.iter().all(|b| (0x20..0x7f).contains(b)) {
        return std::str::from_utf8(key).ok();
    }
    std::str::from_utf8(key)
        .ok()
        .filter(|text| !text.chars().any(char::is_control))
}

/// Unix ms as Python's `datetime.isoformat()` of a naive UTC datetime, the
/// format redis-rdb-tools uses: microseconds only when not zero.
pub fn iso_utc(ms: i64) -> String {
    let mut out = Vec::with_capacity(26);
    iso_utc_into(&mut out, ms);
    String::from_utf8_lossy(&out).into_owned()
}

/// [`iso_utc`] appended to `out`.
pub fn iso_utc_into(out: &mut Vec<u8>, ms: i64) {
    let frac = ms.rem_euclid(1000);
    let (y, m, d, hh, mm, ss) = rdblens_report::format::civil(ms);
    if !(0..=9999).contains(&y) {
        // Outside four-digit years: the general (slower) formatting.
        let mut s = rdblens_report::format::utc(ms).replacen(' ', "T", 1);
        if frac != 0 {
            s.push_str(&format!(".{:06}", frac * 1000));
        }
        out.extend_from_slice(s.as_bytes());
        return;
    }
    // Digits set in a fixed buffer, appended once: `format!` per key was
    // 3 % of `keys`, and a push per digit or per field another 1-2 %.
    let digit = |v: i64| b'0' + (v % 10) as u8;
    let mut buf = *b"0000-00-00T00:00:00.000000";
    buf[..4].copy_from_slice(&[digit(y / 1000), digit(y / 100), digit(y / 10), digit(y)]);
    for (at, v) in [(5, m), (8, d), (11, hh), (14, mm), (17, ss)] {
        buf[at] = digit(v / 10);
        buf[at + 1] = digit(v);
    }
    let len = if frac != 0 {
        buf[20..23].copy_from_slice(&[digit(frac / 100), digit(frac / 10), digit(frac)]);
        buf.len()
    } else {
        19
    };
    // Appended whole, then cut: a copy of a known size is inlined, one of
    // `len` bytes was a call to libc's `memcpy`.
    let end = out.len() + len;
    out.extend_from_slice(&buf);
    out.truncate(end);
}

/// The CSV header: the field names of [`KeyRow`], in order (a test checks
/// that they agree).
pub const COLUMNS: [&str; 17] = [
    "database",
    "type",
    "key",
    "size_in_bytes",
    "encoding",
    "num_elements",
    "len_largest_element",
    "expiry",
    "expiry_ms",
    "ttl_ms",
    "serialized_bytes",
    "rdb_type",
    "module",
    "idle_seconds",
    "lfu_freq",
    "slot",
    "key_escaped",
];

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn iso_times_like_rdb_tools() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00");
        assert_eq!(iso_utc(1_893_456_000_000), "2030-01-01T00:00:00");
        assert_eq!(iso_utc(1_893_456_000_123), "2030-01-01T00:00:00.123000");
        assert_eq!(iso_utc(-1), "1969-12-31T23:59:59.999000");
    }

    /// A row for tests of the writers.
    pub(crate) fn row(key: &str) -> KeyRow {
        KeyRow {
            database: 0,
            type_name: "sortedset",
            key: key.into(),
            size_in_bytes: 1,
            encoding: "listpack",
            num_elements: 2,
            len_largest_element: 3,
            expiry: Some(iso_utc(1_000)),
            expiry_ms: Some(1_000),
            ttl_ms: Some(-5),
            serialized_bytes: 4,
            rdb_type: "zset_listpack",
            module: None,
            idle_seconds: None,
            lfu_freq: Some(5),
            slot: 7,
            key_escaped: false,
            key_bytes: None,
            file: None,
        }
    }

    /// The formatting `iso_utc` replaced, as the reference.
    fn iso_utc_by_fmt(ms: i64) -> String {
        let mut s = rdblens_report::format::utc(ms).replacen(' ', "T", 1);
        let frac = ms.rem_euclid(1000);
        if frac != 0 {
            s.push_str(&format!(".{:06}", frac * 1000));
        }
        s
    }

    #[test]
    fn iso_times_agree_with_the_general_formatting() {
        // Year 1 to 9999, days, leap years, fractions; and outside that range.
        let mut ms: i64 = -62_135_596_800_000;
        while ms < 253_402_300_800_000 {
            assert_eq!(iso_utc(ms), iso_utc_by_fmt(ms), "{ms}");
            ms += 7_776_003_937; // 90 days and a little: hours, seconds and ms drift by
        }
        for ms in [
            i64::MIN,
            -62_135_596_800_001,
            253_402_300_800_000,
            i64::MAX,
            0,
            999,
            -1,
        ] {
            assert_eq!(iso_utc(ms), iso_utc_by_fmt(ms), "{ms}");
        }
    }

    #[test]
    fn columns_are_the_field_names_in_order() {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(row("k")).unwrap(); // ok: unit test
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap(); // ok: unit test
        assert_eq!(text.lines().next().unwrap(), COLUMNS.join(",")); // ok: unit test
    }
}
