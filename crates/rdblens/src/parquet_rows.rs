//! `rdblens keys --format parquet` (cargo feature `parquet`, on by
//! default), written with the parquet crate's low-level column writers (no
//! arrow), Snappy-compressed, one row group per [`ROW_GROUP_ROWS`] keys, so
//! memory stays bounded whatever the dump size. Two layouts: one file
//! (`-o keys.parquet`) has the CSV's columns, typed ([`SCHEMA`]); a dataset
//! part (`-o DIR`) has the versioned dataset schema ([`DATASET_SCHEMA`],
//! docs/fleet.md). DuckDB, Spark, Trino and pandas read both as they are.

use std::io::{self, Write};
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, Int32Type, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};
use parquet::schema::parser::parse_message_type;

use crate::keyrow::KeyRow;

/// Rows per row group (and buffered before writing one).
pub const ROW_GROUP_ROWS: usize = 128 * 1024;

/// Key and value bytes buffered before a row group is written anyway.
const ROW_GROUP_BYTES: usize = 64 << 20;

/// The schema: the CSV columns in CSV order. Counts are signed 64-bit
/// (every engine reads those; unsigned ones are awkward in Spark), `expiry`
/// is a UTC timestamp in ms (the CSV's ISO text, typed), absent values are
/// nulls.
pub const SCHEMA: &str = "
message rdblens_key {
  REQUIRED INT64 database;
  REQUIRED BYTE_ARRAY type (STRING);
  REQUIRED BYTE_ARRAY key (STRING);
  REQUIRED INT64 size_in_bytes;
  REQUIRED BYTE_ARRAY encoding (STRING);
  REQUIRED INT64 num_elements;
  REQUIRED INT64 len_largest_element;
  OPTIONAL INT64 expiry (TIMESTAMP(MILLIS,true));
  OPTIONAL INT64 expiry_ms;
  OPTIONAL INT64 ttl_ms;
  REQUIRED INT64 serialized_bytes;
  REQUIRED BYTE_ARRAY rdb_type (STRING);
  OPTIONAL BYTE_ARRAY module (STRING);
  OPTIONAL INT64 idle_seconds;
  OPTIONAL INT32 lfu_freq;
  REQUIRED INT32 slot;
  REQUIRED BOOLEAN key_escaped;
}
";

/// The dataset schema (version [`crate::dataset::SCHEMA_VERSION`]): where rdbinsight's Parquet output has a column of
/// the same meaning, its name (`db`, `key`, `type`, `encoding`,
/// `member_count`, `rdb_size`, `expire_at`, `idle_seconds`, `freq`,
/// `redis_slot`). `key` is the key's bytes as stored, `key_text` its text
/// as the CSV writes it (escaped the redis-cli way when not UTF-8). The
/// partition labels (cluster, snapshot, shard) are in the path, not in the
/// file (Spark refuses a column that is both).
pub const DATASET_SCHEMA: &str = "
message rdblens_key {
  REQUIRED INT64 db;
  REQUIRED BYTE_ARRAY key;
  REQUIRED BYTE_ARRAY key_text (STRING);
  REQUIRED BOOLEAN key_escaped;
  REQUIRED BYTE_ARRAY type (STRING);
  REQUIRED BYTE_ARRAY encoding (STRING);
  REQUIRED INT64 size_in_bytes;
  REQUIRED INT64 member_count;
  REQUIRED INT64 len_largest_element;
  REQUIRED INT64 rdb_size;
  OPTIONAL INT64 expire_at (TIMESTAMP(MILLIS,true));
  OPTIONAL INT64 expiry_ms;
  OPTIONAL INT64 ttl_ms;
  OPTIONAL INT64 idle_seconds;
  OPTIONAL INT32 freq;
  REQUIRED INT32 redis_slot;
  REQUIRED BYTE_ARRAY rdb_type (STRING);
  OPTIONAL BYTE_ARRAY module (STRING);
}
";

/// Which schema a writer writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// [`SCHEMA`]: the CSV's columns (one file, `-o keys.parquet`).
    CsvColumns,
    /// [`DATASET_SCHEMA`]: a dataset part (`-o DIR`).
    Dataset,
}

/// A nullable column: the values present, and a definition level per row.
#[derive(Default)]
struct Nullable<T> {
    values: Vec<T>,
    levels: Vec<i16>,
}

impl<T> Nullable<T> {
    fn push(&mut self, v: Option<T>) {
        self.levels.push(i16::from(v.is_some()));
        self.values.extend(v);
    }

    fn clear(&mut self) {
        self.values.clear();
        self.levels.clear();
    }
}

#[derive(Default)]
struct Columns {
    database: Vec<i64>,
    type_name: Vec<ByteArray>,
    key: Vec<ByteArray>,
    /// The key's bytes as stored (dataset layout only).
    key_bytes: Vec<ByteArray>,
    size_in_bytes: Vec<i64>,
    encoding: Vec<ByteArray>,
    num_elements: Vec<i64>,
    len_largest_element: Vec<i64>,
    expiry: Nullable<i64>,
    expiry_ms: Nullable<i64>,
    ttl_ms: Nullable<i64>,
    serialized_bytes: Vec<i64>,
    rdb_type: Vec<ByteArray>,
    module: Nullable<ByteArray>,
    idle_seconds: Nullable<i64>,
    lfu_freq: Nullable<i32>,
    slot: Vec<i32>,
    key_escaped: Vec<bool>,
    rows: usize,
    bytes: usize,
}

fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn text(s: &str) -> ByteArray {
    ByteArray::from(s.as_bytes().to_vec())
}

/// A name rdblens knows (a type, an encoding), without a copy: three
/// allocations a row less.
fn static_text(s: &'static str) -> ByteArray {
    ByteArray::from(bytes::Bytes::from_static(s.as_bytes()))
}

fn io_error(e: ParquetError) -> io::Error {
    match e {
        ParquetError::External(inner) => match inner.downcast::<io::Error>() {
            Ok(e) => *e,
            Err(other) => io::Error::other(other.to_string()),
        },
        other => io::Error::other(other.to_string()),
    }
}

fn column<T: DataType>(
    group: &mut SerializedRowGroupWriter<'_, Box<dyn Write + Send>>,
    values: &[T::T],
    levels: Option<&[i16]>,
) -> Result<(), ParquetError> {
    let mut col = group
        .next_column()?
        .ok_or_else(|| ParquetError::General("more columns written than the schema has".into()))?;
    col.typed::<T>().write_batch(values, levels, None)?;
    col.close()
}

/// Redis' name of a type (`TYPE`), as rdbinsight writes it, from the
/// redis-rdb-tools one the CSV has.
fn redis_type_name(rdb_tools: &'static str) -> &'static str {
    match rdb_tools {
        "sortedset" => "zset",
        other => other,
    }
}

impl Columns {
    fn push(&mut self, r: &KeyRow, layout: Layout) {
        self.database.push(signed(r.database));
        match layout {
            Layout::CsvColumns => self.type_name.push(static_text(r.type_name)),
            Layout::Dataset => {
                self.type_name.push(static_text(redis_type_name(r.type_name)));
                let bytes = r.key_bytes.clone().unwrap_or_else(|| r.key.as_bytes().to_vec());
                self.bytes += bytes.len();
                self.key_bytes.push(ByteArray::from(bytes));
            }
        }
        self.key.push(text(&r.key));
        self.size_in_bytes.push(signed(r.size_in_bytes));
        self.encoding.push(static_text(r.encoding));
        self.num_elements.push(signed(r.num_elements));
        self.len_largest_element.push(signed(r.len_largest_element));
        self.expiry.push(r.expiry_ms);
        self.expiry_ms.push(r.expiry_ms);
        self.ttl_ms.push(r.ttl_ms);
        self.serialized_bytes.push(signed(r.serialized_bytes));
        self.rdb_type.push(static_text(r.rdb_type));
        self.module.push(r.module.as_deref().map(text));
        self.idle_seconds.push(r.idle_seconds.map(signed));
        self.lfu_freq.push(r.lfu_freq.map(i32::from));
        self.slot.push(i32::from(r.slot));
        self.key_escaped.push(r.key_escaped);
        self.rows += 1;
        self.bytes += r.key.len() + 64;
    }

    fn write(
        &mut self,
        file: &mut SerializedFileWriter<Box<dyn Write + Send>>,
        layout: Layout,
    ) -> Result<(), ParquetError> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut g = file.next_row_group()?;
        if layout == Layout::Dataset {
            self.write_dataset(&mut g)?;
            g.close()?;
            self.clear();
            return Ok(());
        }
        column::<Int64Type>(&mut g, &self.database, None)?;
        column::<ByteArrayType>(&mut g, &self.type_name, None)?;
        column::<ByteArrayType>(&mut g, &self.key, None)?;
        column::<Int64Type>(&mut g, &self.size_in_bytes, None)?;
        column::<ByteArrayType>(&mut g, &self.encoding, None)?;
        column::<Int64Type>(&mut g, &self.num_elements, None)?;
        column::<Int64Type>(&mut g, &self.len_largest_element, None)?;
        column::<Int64Type>(&mut g, &self.expiry.values, Some(&self.expiry.levels))?;
        column::<Int64Type>(&mut g, &self.expiry_ms.values, Some(&self.expiry_ms.levels))?;
        column::<Int64Type>(&mut g, &self.ttl_ms.values, Some(&self.ttl_ms.levels))?;
        column::<Int64Type>(&mut g, &self.serialized_bytes, None)?;
        column::<ByteArrayType>(&mut g, &self.rdb_type, None)?;
        column::<ByteArrayType>(&mut g, &self.module.values, Some(&self.module.levels))?;
        column::<Int64Type>(&mut g, &self.idle_seconds.values, Some(&self.idle_seconds.levels))?;
        column::<Int32Type>(&mut g, &self.lfu_freq.values, Some(&self.lfu_freq.levels))?;
        column::<Int32Type>(&mut g, &self.slot, None)?;
        column::<BoolType>(&mut g, &self.key_escaped, None)?;
        g.close()?;
        self.clear();
        Ok(())
    }

    /// The columns in [`DATASET_SCHEMA`] order.
    fn write_dataset(
        &self,
        g: &mut SerializedRowGroupWriter<'_, Box<dyn Write + Send>>,
    ) -> Result<(), ParquetError> {
        column::<Int64Type>(g, &self.database, None)?;
        column::<ByteArrayType>(g, &self.key_bytes, None)?;
        column::<ByteArrayType>(g, &self.key, None)?;
        column::<BoolType>(g, &self.key_escaped, None)?;
        column::<ByteArrayType>(g, &self.type_name, None)?;
        column::<ByteArrayType>(g, &self.encoding, None)?;
        column::<Int64Type>(g, &self.size_in_bytes, None)?;
        column::<Int64Type>(g, &self.num_elements, None)?;
        column::<Int64Type>(g, &self.len_largest_element, None)?;
        column::<Int64Type>(g, &self.serialized_bytes, None)?;
        column::<Int64Type>(g, &self.expiry.values, Some(&self.expiry.levels))?;
        column::<Int64Type>(g, &self.expiry_ms.values, Some(&self.expiry_ms.levels))?;
        column::<Int64Type>(g, &self.ttl_ms.values, Some(&self.ttl_ms.levels))?;
        column::<Int64Type>(g, &self.idle_seconds.values, Some(&self.idle_seconds.levels))?;
        column::<Int32Type>(g, &self.lfu_freq.values, Some(&self.lfu_freq.levels))?;
        column::<Int32Type>(g, &self.slot, None)?;
        column::<ByteArrayType>(g, &self.rdb_type, None)?;
        column::<ByteArrayType>(g, &self.module.values, Some(&self.module.levels))
    }

    fn clear(&mut self) {
        self.database.clear();
        self.key_bytes.clear();
        self.type_name.clear();
        self.key.clear();
        self.size_in_bytes.clear();
        self.encoding.clear();
        self.num_elements.clear();
        self.len_largest_element.clear();
        self.expiry.clear();
        self.expiry_ms.clear();
        self.ttl_ms.clear();
        self.serialized_bytes.clear();
        self.rdb_type.clear();
        self.module.clear();
        self.idle_seconds.clear();
        self.lfu_freq.clear();
        self.slot.clear();
        self.key_escaped.clear();
        self.rows = 0;
        self.bytes = 0;
    }
}

/// Buffers rows and writes them as row groups.
pub struct ParquetRows {
    file: Option<SerializedFileWriter<Box<dyn Write + Send>>>,
    columns: Columns,
    layout: Layout,
}

impl ParquetRows {
    /// A file of `layout` written to `out`, with `metadata` (name, value)
    /// in its footer's key-value metadata.
    pub fn new(
        out: Box<dyn Write + Send>,
        layout: Layout,
        metadata: Vec<(String, String)>,
    ) -> io::Result<Self> {
        let schema_text = match layout {
            Layout::CsvColumns => SCHEMA,
            Layout::Dataset => DATASET_SCHEMA,
        };
        let schema = Arc::new(parse_message_type(schema_text).map_err(io_error)?);
        let key_values: Vec<KeyValue> = metadata.into_iter().map(|(k, v)| KeyValue::new(k, v)).collect();
        // Keys are unique: a dictionary of them is built, found too big
        // and dropped for every page (docs/fleet.md: 2 % bigger files, and slower).
        let unique = |name: &str| parquet::schema::types::ColumnPath::from(name);
        let props = WriterProperties::builder()
            .set_column_dictionary_enabled(unique("key"), false)
            .set_column_dictionary_enabled(unique("key_text"), false)
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("rdblens {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata((!key_values.is_empty()).then_some(key_values))
            .build();
        let file = SerializedFileWriter::new(out, schema, Arc::new(props)).map_err(io_error)?;
        Ok(ParquetRows {
            file: Some(file),
            columns: Columns::default(),
            layout,
        })
    }

    pub fn write(&mut self, row: &KeyRow) -> io::Result<()> {
        self.columns.push(row, self.layout);
        if self.columns.rows >= ROW_GROUP_ROWS || self.columns.bytes >= ROW_GROUP_BYTES {
            self.flush_group()?;
        }
        Ok(())
    }

    fn flush_group(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(file) => self.columns.write(file, self.layout).map_err(io_error),
            None => Ok(()),
        }
    }

    /// Writes the last row group and the footer; the file is complete after this.
    pub fn finish(&mut self) -> io::Result<()> {
        self.flush_group()?;
        match self.file.take() {
            Some(file) => {
                let mut out = file.into_inner().map_err(io_error)?;
                out.flush()
            }
            None => Ok(()),
        }
    }
}
