//! Writing [`KeyRow`]s: CSV (with a header), JSON lines, or (feature
//! `parquet`) a Parquet file.

use std::io::{self, Write};

use rdblens_parser::escape_bytes;
use rdblens_summary::KeyFacts;

use crate::keyrow::{iso_utc_into, key_text, rdb_tools_type, KeyRow, COLUMNS};

/// Appends the CSV record of one key to `line`, as [`csv_record`] writes
/// its [`KeyRow`] (a test compares the two), made from the facts directly:
/// the worker that decoded the key writes its line into its batch's bytes,
/// with no row and no allocation per key (building rows and their strings,
/// then freeing them on the writing thread, was a fifth of `keys`).
pub fn csv_line(line: &mut Vec<u8>, f: &KeyFacts<'_>, now_ms: i64, file: Option<&str>) {
    int(line, Some(f.db));
    plain(line, rdb_tools_type(f.kind));
    let escaped = key_field(line, f.key);
    int(line, Some(f.memory));
    plain(line, f.encoding.as_str());
    int(line, Some(f.elements));
    int(line, Some(f.max_element_len));
    if let Some(ms) = f.expiry_ms {
        iso_utc_into(line, ms);
    }
    line.push(b',');
    int(line, f.expiry_ms);
    int(line, f.expiry_ms.map(|e| e.saturating_sub(now_ms)));
    int(line, Some(f.serialized_bytes));
    plain(line, f.rdb_type);
    text(line, f.module.as_deref().unwrap_or(""));
    int(line, f.idle_seconds);
    int(line, f.lfu_freq);
    int(line, Some(f.slot));
    plain(line, if escaped { "true" } else { "false" });
    if let Some(file) = file {
        text(line, file);
    }
    end(line);
}

/// Appends `row` as one CSV record to `line`: what the csv crate's
/// `serialize` wrote (a test compares the two). Written by hand because it
/// was measured: through the csv crate (serde dispatch, then a quoting scan
/// and state machine per field) writing took a sixth of `keys --format csv`
/// on the 1.15 GB benchmark dump; here numbers are set in a fixed buffer
/// ([`digits_and_comma`]) and only the three free-text fields are scanned
/// for quoting.
fn csv_record(line: &mut Vec<u8>, row: &KeyRow) {
    int(line, Some(row.database));
    plain(line, row.type_name);
    text(line, &row.key);
    int(line, Some(row.size_in_bytes));
    plain(line, row.encoding);
    int(line, Some(row.num_elements));
    int(line, Some(row.len_largest_element));
    plain(line, row.expiry.as_deref().unwrap_or(""));
    int(line, row.expiry_ms);
    int(line, row.ttl_ms);
    int(line, Some(row.serialized_bytes));
    plain(line, row.rdb_type);
    text(line, row.module.as_deref().unwrap_or(""));
    int(line, row.idle_seconds);
    int(line, row.lfu_freq);
    int(line, Some(row.slot));
    plain(line, if row.key_escaped { "true" } else { "false" });
    if let Some(file) = &row.file {
        text(line, file);
    }
    end(line);
}

/// Every field ends with a comma: the last one ends the record.
fn end(line: &mut Vec<u8>) {
    line.pop();
    line.push(b'\n');
}

/// An integer field (empty for `None`) and its comma.
fn int<I: Into<i128>>(line: &mut Vec<u8>, v: Option<I>) {
    match v {
        // u64 and i64 fields alike (i128 holds both): the sign goes first.
        Some(v) => match v.into() {
            v @ 0.. => digits_and_comma(line, false, v as u64),
            v => digits_and_comma(line, true, v.unsigned_abs() as u64),
        },
        None => line.push(b','),
    }
}

/// Two decimal digits per entry, "00" to "99".
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends `v` in decimal (after a minus sign when `negative`) and a
/// comma. The digits are set in a fixed 24-byte buffer, appended whole and
/// cut to length: a copy of a known size is two vector moves, where
/// `extend_from_slice` of the few bytes `itoa` returns was a call to libc's
/// `memcpy` per field, ten per row (3 % of `keys --format csv`; paired
/// runs with the ISO time appended the same way: 0.95 of the time on
/// prod-1g, 0.96 on the collection-heavy dump).
fn digits_and_comma(line: &mut Vec<u8>, negative: bool, mut v: u64) {
    // u64::MAX has 20 digits: sign, digits and comma fit in 22.
    let mut buf = [b','; 24];
    let len = usize::from(negative) + decimal_len(v);
    buf[0] = b'-';
    let mut at = len;
    let mut pair = |at: usize, p: u32| {
        let p = p as usize * 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[p..p + 2]);
    };
    // Four digits per 64-bit division, their two pairs split with 32-bit
    // arithmetic off the division chain: a 13-digit expiry takes three
    // dependent divisions, where two digits a step took six (the numbers
    // were 9 % of `keys --format csv` on prod-1g).
    while v >= 10_000 {
        let four = (v % 10_000) as u32;
        v /= 10_000;
        at -= 4;
        pair(at, four / 100);
        pair(at + 2, four % 100);
    }
    let mut v = v as u32;
    if v >= 100 {
        at -= 2;
        pair(at, v % 100);
        v /= 100;
    }
    if v >= 10 {
        pair(at - 2, v);
    } else {
        buf[at - 1] = b'0' + v as u8;
    }
    let end = line.len() + len + 1;
    line.extend_from_slice(&buf);
    line.truncate(end);
}

/// Decimal digits of `v` (1 for 0).
fn decimal_len(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// A field that never needs quotes (names rdblens chooses, ISO times).
fn plain(line: &mut Vec<u8>, field: &str) {
    line.extend_from_slice(field.as_bytes());
    line.push(b',');
}

/// The key column of `key`, and whether it is escaped (see [`key_text`]).
/// Printable ASCII, most keys, is told, checked for quoting and copied in
/// one pass over its bytes, without the UTF-8 check: the key column's
/// checks were 7 % of `keys --format csv` on the cache-like benchmark dump.
fn key_field(line: &mut Vec<u8>, key: &[u8]) -> bool {
    // Both flags over every byte, without a branch per byte.
    let (mut ascii, mut quote) = (true, false);
    for &b in key {
        ascii &= (0x20..0x7f).contains(&b);
        quote |= b == b',' || b == b'"';
    }
    if ascii {
        // CR and LF are not printable: a comma or a quote decides.
        text_bytes(line, key, quote);
        return false;
    }
    match key_text(key) {
        Some(key) => {
            text(line, key);
            false
        }
        None => {
            text(line, &escape_bytes(key));
            true
        }
    }
}

/// A free-text field, quoted when it holds a comma, a quote, CR or LF
/// (quotes doubled), as RFC 4180 and the csv crate's default do.
fn text(line: &mut Vec<u8>, field: &str) {
    let bytes = field.as_bytes();
    let quote = bytes.iter().any(|&b| matches!(b, b',' | b'"' | b'\r' | b'\n'));
    text_bytes(line, bytes, quote);
}

/// [`text`] of bytes already known to need quotes or not.
fn text_bytes(line: &mut Vec<u8>, bytes: &[u8], quote: bool) {
    if quote {
        line.push(b'"');
        for &b in bytes {
            if b == b'"' {
                line.push(b'"');
            }
            line.push(b);
        }
        line.push(b'"');
    } else {
        line.extend_from_slice(bytes);
    }
    line.push(b',');
}

/// Writes rows as CSV (with a header), as one JSON object per line, or
/// (feature `parquet`) as a Parquet file.
pub enum RowWriter<W: Write> {
    /// `out` (buffered by the caller) and the record being built.
    Csv {
        out: W,
        line: Vec<u8>,
    },
    Jsonl(W),
    /// Writes to its own sink (the parquet writer needs `Send`).
    #[cfg(feature = "parquet")]
    Parquet(Box<crate::parquet_rows::ParquetRows>),
}

impl<W: Write> RowWriter<W> {
    /// CSV to `out`, which should be buffered. A field is quoted only when
    /// it must be (comma, quote, CR or LF inside), quotes doubled, as RFC
    /// 4180 asks. The header is written by `header`, so that a file with no
    /// keys still has one.
    pub fn csv(out: W) -> Self {
        RowWriter::Csv {
            out,
            line: Vec::with_capacity(256),
        }
    }

    pub fn jsonl(out: W) -> Self {
        RowWriter::Jsonl(out)
    }

    /// A Parquet file of `layout` written to `out`, `metadata` in its footer.
    #[cfg(feature = "parquet")]
    pub fn parquet(
        out: Box<dyn Write + Send>,
        layout: crate::parquet_rows::Layout,
        metadata: Vec<(String, String)>,
    ) -> io::Result<Self> {
        Ok(RowWriter::Parquet(Box::new(
            crate::parquet_rows::ParquetRows::new(out, layout, metadata)?,
        )))
    }

    /// The CSV header (JSON lines have none).
    pub fn header(&mut self, with_file: bool) -> io::Result<()> {
        match self {
            RowWriter::Csv { out, .. } => {
                let file = if with_file { ",file" } else { "" };
                writeln!(out, "{}{file}", COLUMNS.join(","))
            }
            RowWriter::Jsonl(_) => Ok(()),
            #[cfg(feature = "parquet")]
            RowWriter::Parquet(_) => Ok(()),
        }
    }

    pub fn write(&mut self, row: &KeyRow) -> io::Result<()> {
        match self {
            RowWriter::Csv { out, line } => {
                line.clear();
                csv_record(line, row);
                out.write_all(line)
            }
            RowWriter::Jsonl(w) => {
                serde_json::to_writer(&mut *w, row)?;
                w.write_all(b"\n")
            }
            #[cfg(feature = "parquet")]
            RowWriter::Parquet(p) => p.write(row),
        }
    }

    /// Writes a record made by [`csv_line`] (CSV only: the caller made it
    /// because this writer writes CSV).
    pub fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        match self {
            RowWriter::Csv { out, .. } => out.write_all(line),
            _ => Err(io::Error::other("a CSV line given to a writer of another format")),
        }
    }

    /// Flushes; for Parquet, writes the last row group and the footer.
    pub fn flush(&mut self) -> io::Result<()> {
        match self {
            RowWriter::Csv { out, .. } => out.flush(),
            RowWriter::Jsonl(w) => w.flush(),
            #[cfg(feature = "parquet")]
            RowWriter::Parquet(p) => p.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyrow::tests::row;

    #[test]
    fn integer_fields_are_what_display_writes() {
        let mut expected = Vec::new();
        let mut line = b"k,".to_vec();
        let mut fields = vec![0, 1, 9, 10, 99, 100, 101, 999, 1000, 65_535, 1_700_000_000_000];
        fields.extend([
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
            -1,
            -9,
            -10,
            -99,
            -100,
            -86_400_000,
        ]);
        fields.extend(
            (0..19)
                .map(|p| 10i64.pow(p) - 1)
                .chain((0..19).map(|p| 10i64.pow(p))),
        );
        for v in &fields {
            int(&mut line, Some(*v));
            expected.extend_from_slice(format!("{v},").as_bytes());
        }
        // Every length, every digit in every place.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = x >> (x % 64);
            int(&mut line, Some(v));
            expected.extend_from_slice(format!("{v},").as_bytes());
        }
        for v in [u64::MAX, u64::MAX / 10, 10u64.pow(19), 10u64.pow(19) - 1] {
            int(&mut line, Some(v));
            expected.extend_from_slice(format!("{v},").as_bytes());
        }
        int(&mut line, Some(u16::MAX));
        int(&mut line, Some(200u8));
        int(&mut line, None::<u64>);
        expected.extend_from_slice(b"65535,200,,");
        assert_eq!(
            String::from_utf8_lossy(&line[2..]),
            String::from_utf8_lossy(&expected)
        );
        assert_eq!(&line[..2], b"k,");
    }

    #[test]
    fn csv_records_are_what_serde_wrote() {
        let mut rows = vec![row("plain"), row("a,\"b\"\nc")];
        let mut other = row("x");
        (other.expiry, other.expiry_ms, other.ttl_ms) = (None, None, None);
        (other.module, other.idle_seconds, other.lfu_freq) = (Some("ReJSON-RL".into()), Some(9), None);
        other.key_escaped = true;
        rows.push(other.clone());
        other.file = Some("shard,1".into());
        rows.push(other);
        for key in ["", " lead", "tab\tx", "#hash", "q\"", "cr\rlf\n", "ünï", "a,b"] {
            rows.push(row(key));
        }
        for r in &rows {
            let mut by_serde = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(Vec::new());
            by_serde.serialize(r).unwrap(); // ok: unit test
            let mut direct = Vec::new();
            csv_record(&mut direct, r);
            let by_serde = by_serde.into_inner().unwrap(); // ok: unit test
            assert_eq!(
                String::from_utf8_lossy(&direct),
                String::from_utf8_lossy(&by_serde)
            );
        }
    }

    /// The record of `f` by its row and by [`csv_line`] (after earlier
    /// bytes), with and without a file column that needs quotes.
    fn both_ways(f: &KeyFacts<'_>, now_ms: i64) -> Vec<(String, String)> {
        [None, Some("shard \"a\",1")]
            .into_iter()
            .map(|file| {
                let mut row = KeyRow::from_facts(f, now_ms);
                row.file = file.map(str::to_string);
                let mut by_row = Vec::new();
                csv_record(&mut by_row, &row);
                let mut by_facts = b"earlier lines,".to_vec();
                csv_line(&mut by_facts, f, now_ms, file);
                (
                    String::from_utf8_lossy(&by_row).into_owned(),
                    String::from_utf8_lossy(&by_facts[14..]).into_owned(),
                )
            })
            .collect()
    }

    /// The line made from a key's facts is the record of its row, for
    /// every key of every fixture (binary and control-character keys,
    /// module values, expiries, LRU and LFU fields) and for keys with odd
    /// bytes.
    #[test]
    fn csv_lines_from_facts_are_the_records_of_their_rows() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb");
        let mut pairs = Vec::new();
        let mut dirs: Vec<_> = std::fs::read_dir(&root)
            .unwrap() // ok: unit test
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            for scenario in ["all-types", "lru", "lfu"] {
                let Ok(data) = std::fs::read(dir.join(format!("{scenario}.rdb"))) else {
                    continue;
                };
                let opts = rdblens_summary::Options {
                    now_ms: Some(1_700_000_000_000),
                    ..Default::default()
                };
                let map = |f: &KeyFacts<'_>, s: &rdblens_summary::Settings| both_ways(f, s.now_ms);
                rdblens_engine::map_keys_in_order(&data, "x", &opts, map, |item| {
                    if let rdblens_engine::KeyItem::Key(k) = item {
                        pairs.extend(k);
                    }
                    true
                })
                .unwrap(); // ok: unit test
            }
        }
        for key in [
            &b"tab\tkey"[..],
            b"\xff\xfe",
            b"bell\x07",
            b"a,b",
            b"q\"",
            b"\xc3\xa9t\xc3\xa9",
            b"",
        ] {
            let mut f = KeyFacts::synthetic(key, Some(253_402_300_800_000), 64);
            f.module = Some("ReJSON,RL".into());
            (f.idle_seconds, f.lfu_freq) = (Some(7), Some(3));
            pairs.extend(both_ways(&f, 0));
        }
        assert!(pairs.len() > 4000, "{} records compared", pairs.len());
        for (by_row, by_facts) in &pairs {
            assert_eq!(by_facts, by_row);
        }
        // Escaped keys were among them.
        assert!(pairs.iter().any(|(r, _)| r.contains("\\x")));
    }

    #[test]
    fn csv_quotes_only_when_needed_and_jsonl_is_one_line() {
        let mut out = Vec::new();
        let mut w = RowWriter::csv(&mut out);
        w.header(false).unwrap(); // ok: unit test
        w.write(&row("plain")).unwrap(); // ok: unit test
        w.write(&row("a,\"b\"\nc")).unwrap(); // ok: unit test
        w.flush().unwrap(); // ok: unit test
        drop(w);
        let text = String::from_utf8(out).unwrap(); // ok: unit test
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        assert_eq!(
            lines[1],
            "0,sortedset,plain,1,listpack,2,3,1970-01-01T00:00:01,1000,-5,4,zset_listpack,,,5,7,false\n"
        );
        assert!(lines[2].starts_with("0,sortedset,\"a,\"\"b\"\"\n"), "{text}");
        let mut out = Vec::new();
        let mut w = RowWriter::jsonl(&mut out);
        w.header(false).unwrap(); // ok: unit test
        w.write(&row("a\nb")).unwrap(); // ok: unit test
        drop(w);
        let text = String::from_utf8(out).unwrap(); // ok: unit test
        assert_eq!(text.lines().count(), 1);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap(); // ok: unit test
        assert_eq!(v["key"], "a\nb");
        assert_eq!(v["module"], serde_json::Value::Null);
    }
}
