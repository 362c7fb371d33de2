//! Writing [`KeyRow`]s: CSV (with a header), JSON lines, or (feature
//! `parquet`) a Parquet file.

use std::io::{self, Write};

use crate::keyrow::{KeyRow, COLUMNS};

/// Writes `row` as one CSV record, field by field: what `serialize` wrote
/// (a test compares the two), without serde's per-field dispatch and
/// `fmt` (a third of the time `keys --format csv` spent writing).
fn write_csv<W: Write>(w: &mut csv::Writer<W>, row: &KeyRow) -> csv::Result<()> {
    let mut n = itoa::Buffer::new();
    w.write_field(n.format(row.database))?;
    w.write_field(row.type_name)?;
    w.write_field(&row.key)?;
    w.write_field(n.format(row.size_in_bytes))?;
    w.write_field(row.encoding)?;
    w.write_field(n.format(row.num_elements))?;
    w.write_field(n.format(row.len_largest_element))?;
    w.write_field(row.expiry.as_deref().unwrap_or(""))?;
    match row.expiry_ms {
        Some(v) => w.write_field(n.format(v))?,
        None => w.write_field("")?,
    }
    match row.ttl_ms {
        Some(v) => w.write_field(n.format(v))?,
        None => w.write_field("")?,
    }
    w.write_field(n.format(row.serialized_bytes))?;
    w.write_field(row.rdb_type)?;
    w.write_field(row.module.as_deref().unwrap_or(""))?;
    match row.idle_seconds {
        Some(v) => w.write_field(n.format(v))?,
        None => w.write_field("")?,
    }
    match row.lfu_freq {
        Some(v) => w.write_field(n.format(v))?,
        None => w.write_field("")?,
    }
    w.write_field(n.format(row.slot))?;
    w.write_field(if row.key_escaped { "true" } else { "false" })?;
    if let Some(file) = &row.file {
        w.write_field(file)?;
    }
    w.write_record(None::<&[u8]>)
}

/// The I/O error inside a csv error, kind intact (`From` would wrap it as
/// `Other`, hiding a closed pipe).
fn csv_io(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}

/// Writes rows as CSV (with a header), as one JSON object per line, or
/// (feature `parquet`) as a Parquet file.
pub enum RowWriter<W: Write> {
    // Boxed: the csv writer carries its own buffer and state (~350 bytes).
    Csv(Box<csv::Writer<W>>),
    Jsonl(W),
    /// Writes to its own sink (the parquet writer needs `Send`).
    #[cfg(feature = "parquet")]
    Parquet(Box<crate::parquet_rows::ParquetRows>),
}

impl<W: Write> RowWriter<W> {
    pub fn csv(out: W) -> Self {
        // The csv crate quotes a field only when it must (delimiter, quote,
        // CR or LF inside), doubling quotes, as RFC 4180 asks. The header is
        // written by `header`, so that a file with no keys still has one.
        RowWriter::Csv(Box::new(
            csv::WriterBuilder::new().has_headers(false).from_writer(out),
        ))
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
            RowWriter::Csv(w) if with_file => w.write_record(COLUMNS.iter().chain(&["file"])).map_err(csv_io),
            RowWriter::Csv(w) => w.write_record(COLUMNS).map_err(csv_io),
            RowWriter::Jsonl(_) => Ok(()),
            #[cfg(feature = "parquet")]
            RowWriter::Parquet(_) => Ok(()),
        }
    }

    pub fn write(&mut self, row: &KeyRow) -> io::Result<()> {
        match self {
            RowWriter::Csv(w) => write_csv(w, row).map_err(csv_io),
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
            RowWriter::Csv(w) => w.flush(),
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
        for r in &rows {
            let mut by_serde = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(Vec::new());
            by_serde.serialize(r).unwrap(); // ok: unit test
            let mut direct = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(Vec::new());
            write_csv(&mut direct, r).unwrap(); // ok: unit test
            assert_eq!(direct.into_inner().unwrap(), by_serde.into_inner().unwrap());
            // ok: unit test
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
