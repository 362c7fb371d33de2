//! Writing [`KeyRow`]s: CSV (with a header), JSON lines, or (feature
//! `parquet`) a Parquet file.

use std::io::{self, Write};

use crate::keyrow::{KeyRow, COLUMNS};

/// Appends `row` as one CSV record to `line`: what the csv crate's
/// `serialize` wrote (a test compares the two). Written by hand because it
/// was measured: through the csv crate (serde dispatch, then a quoting scan
/// and state machine per field) writing took a sixth of `keys --format csv`
/// on the 1.15 GB benchmark dump; here numbers are formatted with `itoa`
/// and only the three free-text fields are scanned for quoting.
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
    // Every field ends with a comma: the last one ends the record.
    line.pop();
    line.push(b'\n');
}

/// An integer field (empty for `None`), in its own type: 128-bit
/// formatting for all of them cost 3 % of `keys`.
fn int<I: itoa::Integer>(line: &mut Vec<u8>, v: Option<I>) {
    if let Some(v) = v {
        line.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    }
    line.push(b',');
}

/// A field that never needs quotes (names rdblens chooses, ISO times).
fn plain(line: &mut Vec<u8>, field: &str) {
    line.extend_from_slice(field.as_bytes());
    line.push(b',');
}

/// A free-text field, quoted when it holds a comma, a quote, CR or LF
/// (quotes doubled), as RFC 4180 and the csv crate's default do.
fn text(line: &mut Vec<u8>, field: &str) {
    let bytes = field.as_bytes();
    if bytes.iter().any(|&b| matches!(b, b',' | b'"' | b'\r' | b'\n')) {
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

    /// A Parquet file written to `out`.
    #[cfg(feature = "parquet")]
    pub fn parquet(out: Box<dyn Write + Send>) -> io::Result<Self> {
        Ok(RowWriter::Parquet(Box::new(
            crate::parquet_rows::ParquetRows::new(out)?,
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
