//! The top-level record stream: opcodes and key/value entries, in file order.

use crate::entry::{Entry, Expiry, ExpiryUnit, KeyMeta};
use crate::error::{Dialect, Error, ErrorKind, Result};
use crate::format::{Format, ValueType};
use crate::module::{skip_opcodes, ModuleId};
use crate::reader::Reader;
use crate::string::RdbString;
use crate::value::walk::{walk, Skip};

/// A MODULE_AUX record (module data outside any key).
#[derive(Clone, Copy, Debug)]
pub struct ModuleAux<'a> {
    /// The module data type the record belongs to.
    pub module: ModuleId,
    /// 1 = written before the keyspace, 2 = after.
    pub when: u64,
    /// The module's opcode stream, including its EOF opcode.
    pub body: &'a [u8],
}

/// The end of the data: where the EOF opcode sits and the stored checksum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eof<'a> {
    /// File offset of the EOF opcode (0xFF); the checksum covers `[0, offset]`.
    pub offset: u64,
    /// The stored CRC-64 (RDB 5+); 0 means the writer had `rdbchecksum no`.
    pub checksum: Option<u64>,
    /// Bytes after the checksum (an AOF tail after an RDB preamble, or garbage).
    pub trailing: &'a [u8],
}

/// One top-level record.
#[derive(Clone, Debug)]
pub enum Record<'a> {
    /// AUX (250): one metadata field of the file, e.g. `redis-ver`.
    Aux {
        /// Field name.
        key: RdbString<'a>,
        /// Field value.
        value: RdbString<'a>,
    },
    /// SELECTDB (254): the keys that follow belong to database `db`.
    SelectDb {
        /// Database number.
        db: u64,
    },
    /// RESIZEDB (251): size hints for the current database.
    ResizeDb {
        /// Keys in the database, as the writer stated it.
        db_size: u64,
        /// Keys with an expiry, as the writer stated it.
        expires_size: u64,
    },
    /// MODULE_AUX (247): module data outside any key.
    ModuleAux(ModuleAux<'a>),
    /// FUNCTION2: one library's source (`#!lua name=...` then the code).
    Function {
        /// The library source.
        source: RdbString<'a>,
    },
    /// FUNCTION (Redis 7.0 release candidates only).
    FunctionPreGa {
        /// Function name.
        name: RdbString<'a>,
        /// Engine name (e.g. `LUA`).
        engine: RdbString<'a>,
        /// Description; `None` when the function has none.
        description: Option<RdbString<'a>>,
        /// Function body.
        code: RdbString<'a>,
    },
    /// Redis cluster slot hint.
    SlotInfo {
        /// Cluster slot number.
        slot: u64,
        /// Keys in the slot, as the writer stated it.
        keys: u64,
        /// Keys with an expiry in the slot, as the writer stated it.
        expires: u64,
    },
    /// Valkey 9 unfinished slot-import job.
    SlotImport {
        /// Name of the import job.
        job: RdbString<'a>,
        /// Slot ranges being imported, as (start slot, end slot).
        ranges: Vec<(u64, u64)>,
    },
    /// Valkey 9.2 inline command (RESP multibulk, raw).
    Update {
        /// The whole command, from `*` to the last CRLF.
        command: &'a [u8],
    },
    /// A key with its value and its prefixes (expiry, LRU/LFU, KEY_META).
    Entry(Entry<'a>),
    /// EOF (255): the last record; nothing is read after it.
    Eof(Eof<'a>),
}

#[derive(Default)]
struct Prefix<'a> {
    start: Option<usize>,
    expiry: Option<Expiry>,
    idle: Option<u64>,
    freq: Option<u8>,
    ram_lru: Option<u64>,
    key_meta: Option<KeyMeta<'a>>,
}

/// Iterates over the records of a file. Stops after EOF or the first error.
pub struct Records<'a> {
    r: Reader<'a>,
    file: &'a [u8],
    /// The file offset of `file[0]`: 0 but for a chunk of a stream.
    base: u64,
    format: Format,
    db: u64,
    prefix: Prefix<'a>,
    done: bool,
}

impl<'a> Records<'a> {
    pub(crate) fn new(file: &'a [u8], format: Format) -> Self {
        Records {
            r: Reader::at(file, 9),
            file,
            base: 0,
            format,
            db: 0,
            prefix: Prefix::default(),
            done: false,
        }
    }

    /// See [`crate::Rdb::records_at`]. An offset past the end is clamped
    /// to it (the first read then fails, naming that offset).
    pub(crate) fn resume(file: &'a [u8], format: Format, offset: u64, db: u64) -> Self {
        let pos = usize::try_from(offset).unwrap_or(usize::MAX).min(file.len());
        Records {
            r: Reader::at(file, pos),
            db,
            ..Records::new(file, format)
        }
    }

    /// The records of `chunk`, a part of a file that starts where a record
    /// does, at file offset `base`, in database `db`: what a stream hands
    /// out as its bytes arrive. Offsets (of records, values and errors)
    /// are the file's; a record cut by the chunk's end is an error
    /// ([`crate::ErrorKind::Truncated`]) as at a file's end.
    pub(crate) fn in_chunk(chunk: &'a [u8], format: Format, base: u64, db: u64) -> Self {
        Records {
            r: Reader::new(chunk, base),
            base,
            db,
            ..Records::new(chunk, format)
        }
    }

    /// File offset of the next record.
    pub fn offset(&self) -> u64 {
        self.r.offset()
    }

    /// The database the next entry belongs to.
    pub fn current_db(&self) -> u64 {
        self.db
    }

    /// The next record, as [`Iterator::next`] gives it, when an earlier
    /// walk found that an entry of `record_len` bytes starts here: its
    /// value is taken as the bytes up to there, not walked again (a giant
    /// hash's fields are read once per walk, not skipped one by one). The
    /// length only applies to an entry starting at [`Self::offset`]; one
    /// that ends before the entry's key does, or past the file, is an
    /// error as a damaged length is.
    pub fn next_known(&mut self, record_len: u64) -> Option<Result<Record<'a>>> {
        self.next_with(Some(record_len))
    }

    fn next_with(&mut self, known_len: Option<u64>) -> Option<Result<Record<'a>>> {
        if self.done {
            return None;
        }
        let record = self.read(known_len);
        if record.is_err() {
            self.done = true;
        }
        Some(record)
    }

    fn read(&mut self, known_len: Option<u64>) -> Result<Record<'a>> {
        let r = &mut self.r;
        loop {
            let at = r.pos();
            let op = r.u8("record type")?;
            let record = match op {
                0xff => {
                    let checksum = if self.format.has_checksum() {
                        Some(r.u64_le("checksum")?)
                    } else {
                        None
                    };
                    self.done = true;
                    Record::Eof(Eof {
                        offset: self.base + at as u64,
                        checksum,
                        trailing: r.rest(),
                    })
                }
                0xfe => {
                    self.db = r.length("database number")?;
                    Record::SelectDb { db: self.db }
                }
                0xfd => {
                    self.prefix.start.get_or_insert(at);
                    let secs = i32::from_le_bytes(r.array("expiry seconds")?);
                    self.prefix.expiry = Some(Expiry {
                        unix_ms: i64::from(secs) * 1000,
                        unit: ExpiryUnit::Seconds,
                    });
                    continue;
                }
                0xfc => {
                    self.prefix.start.get_or_insert(at);
                    self.prefix.expiry = Some(Expiry {
                        unix_ms: r.i64_le("expiry milliseconds")?,
                        unit: ExpiryUnit::Milliseconds,
                    });
                    continue;
                }
                0xfb => Record::ResizeDb {
                    db_size: r.length("database size hint")?,
                    expires_size: r.length("expires size hint")?,
                },
                0xfa => Record::Aux {
                    key: r.string("aux field name")?,
                    value: r.string("aux field value")?,
                },
                0xf9 => {
                    self.prefix.start.get_or_insert(at);
                    self.prefix.freq = Some(r.u8("LFU frequency")?);
                    continue;
                }
                0xf8 => {
                    self.prefix.start.get_or_insert(at);
                    self.prefix.idle = Some(r.length("LRU idle time")?);
                    continue;
                }
                0xf7 => {
                    let module = ModuleId(r.length("module aux id")?);
                    let op_at = r.pos();
                    let opcode = r.length("module aux opcode")?;
                    if opcode != 2 {
                        return Err(r.err_at(
                            op_at,
                            ErrorKind::BadModule(format!("module aux opcode {opcode}, expected 2 (UINT)")),
                        ));
                    }
                    let when = r.length("module aux 'when'")?;
                    let start = r.pos();
                    skip_opcodes(r).map_err(|e| e.with_key(module.name().as_bytes()))?;
                    Record::ModuleAux(ModuleAux {
                        module,
                        when,
                        body: r.since(start),
                    })
                }
                0xf6 => {
                    let name = r.string("function name")?;
                    let engine = r.string("function engine")?;
                    let description = match r.length("function description flag")? {
                        0 => None,
                        _ => Some(r.string("function description")?),
                    };
                    let code = r.string("function code")?;
                    Record::FunctionPreGa {
                        name,
                        engine,
                        description,
                        code,
                    }
                }
                0xf5 => Record::Function {
                    source: r.string("function library")?,
                },
                0xf4 => Record::SlotInfo {
                    slot: r.length("slot id")?,
                    keys: r.length("slot key count")?,
                    expires: r.length("slot expires count")?,
                },
                0xf3 if self.format.dialect == Dialect::Valkey => {
                    let job = r.string("slot import job name")?;
                    let n = r.count("slot import range count", 2)?;
                    let mut ranges = Vec::new();
                    for _ in 0..n {
                        ranges.push((r.length("slot range start")?, r.length("slot range end")?));
                    }
                    Record::SlotImport { job, ranges }
                }
                0xf3 if self.format.version >= 13 => {
                    self.prefix.start.get_or_insert(at);
                    self.prefix.key_meta = Some(KeyMeta::read(r)?);
                    continue;
                }
                // Redis Enterprise's RAM_LRU: one length before a key
                // (never a value type: those end far below 107). Its
                // meaning is unpublished (librdb reads and discards it):
                // kept as it is, not as the key's idle time.
                107 if self.format.dialect == Dialect::Redis => {
                    self.prefix.start.get_or_insert(at);
                    self.prefix.ram_lru = Some(r.length("RAM_LRU value (Redis Enterprise)")?);
                    continue;
                }
                0xf2 if self.format.dialect == Dialect::Valkey && self.format.version >= 81 => {
                    Record::Update {
                        command: read_resp_multibulk(r)?,
                    }
                }
                byte => {
                    let Some(value_type) = ValueType::from_byte(byte, self.format) else {
                        return Err(r.err_at(
                            at,
                            ErrorKind::UnknownType {
                                byte,
                                dialect: self.format.dialect,
                                version: self.format.version,
                            },
                        ));
                    };
                    let prefix = std::mem::take(&mut self.prefix);
                    let start = prefix.start.unwrap_or(at);
                    let key = r.string("key")?;
                    let value_start = r.pos();
                    let value_offset = r.offset();
                    let skipped = match known_len {
                        Some(len) => {
                            let end = (start as u64).saturating_add(len);
                            match end.checked_sub(value_start as u64) {
                                Some(n) => r.take(n, "value of a known length").map(drop),
                                None => Err(r.err(ErrorKind::BadValue(format!(
                                    "a record of {len} bytes ends before its value"
                                )))),
                            }
                        }
                        None => walk(r, value_type, &mut Skip),
                    };
                    if let Err(e) = skipped {
                        return Err(attach_key(e, &key));
                    }
                    Record::Entry(Entry {
                        db: self.db,
                        key,
                        value_type,
                        value: r.since(value_start),
                        offset: self.base + start as u64,
                        value_offset,
                        record_len: (r.pos() - start) as u64,
                        expiry: prefix.expiry,
                        idle_seconds: prefix.idle,
                        ram_lru: prefix.ram_lru,
                        lfu_freq: prefix.freq,
                        key_meta: prefix.key_meta,
                        format: self.format,
                        file: self.file,
                        file_base: self.base,
                    })
                }
            };
            return Ok(record);
        }
    }
}

fn attach_key(e: Error, key: &RdbString<'_>) -> Error {
    match key.to_cow() {
        Ok(k) => e.with_key(&k),
        Err(_) => e,
    }
}

/// `*<argc>\r\n` then `$<len>\r\n<bytes>\r\n` per argument.
fn read_resp_multibulk<'a>(r: &mut Reader<'a>) -> Result<&'a [u8]> {
    fn number(r: &mut Reader<'_>, sigil: u8) -> Result<u64> {
        let at = r.pos();
        if r.u8("RESP command")? != sigil {
            return Err(r.err_at(
                at,
                ErrorKind::BadValue(format!("expected '{}' in RESP command", sigil as char)),
            ));
        }
        let mut n: u64 = 0;
        loop {
            match r.u8("RESP command")? {
                d @ b'0'..=b'9' if n < u64::MAX / 10 => n = n * 10 + u64::from(d - b'0'),
                b'\r' if r.u8("RESP command")? == b'\n' => return Ok(n),
                _ => return Err(r.err_at(at, ErrorKind::BadValue("malformed RESP number".into()))),
            }
        }
    }
    let start = r.pos();
    let argc = number(r, b'*')?;
    for _ in 0..argc {
        let len = number(r, b'$')?;
        r.take(len, "RESP argument")?;
        if r.take(2, "RESP argument")? != b"\r\n" {
            return Err(r.err(ErrorKind::BadValue("RESP argument not followed by CRLF".into())));
        }
    }
    Ok(r.since(start))
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_with(None)
    }
}

impl std::iter::FusedIterator for Records<'_> {}

#[cfg(test)]
mod tests {
    use crate::{Rdb, Record};

    /// db 0: "a" = "b"; db 3: "c" = "d"; checksum disabled.
    const FILE: &[u8] = b"REDIS0009\xfe\x00\x00\x01a\x01b\xfe\x03\x00\x01c\x01d\xff\0\0\0\0\0\0\0\0";

    #[test]
    fn a_walk_resumes_where_an_earlier_one_found_a_record() {
        let rdb = Rdb::new(FILE).expect("rdb"); // ok: unit test
        let second = rdb.entries().nth(1).expect("two keys").expect("read"); // ok: unit test
        assert_eq!((second.offset, second.db), (18, 3));
        let mut resumed = rdb.records_at(second.offset, second.db);
        match resumed.next() {
            Some(Ok(Record::Entry(e))) => {
                let shape = |e: &crate::Entry<'_>| {
                    (
                        e.offset,
                        e.db,
                        e.key.to_vec().ok(),
                        e.value.to_vec(),
                        e.record_len,
                    )
                };
                assert_eq!(shape(&e), shape(&second));
            }
            other => panic!("{other:?}"), // ok: unit test
        }
        assert!(matches!(resumed.next(), Some(Ok(Record::Eof(_)))));
        assert!(resumed.next().is_none());
        // Past the end: the first read fails there, and the walk ends.
        let mut past = rdb.records_at(u64::MAX, 0);
        let err = past.next().expect("an error").expect_err("nothing to read"); // ok: unit test
        assert_eq!(err.offset(), FILE.len() as u64);
        assert!(past.next().is_none());
    }

    /// A chunk cut from the file where a record starts reads as the file
    /// does there: the same offsets (of records, values and a decoding
    /// error inside a value), and a record cut by the chunk's end is
    /// `Truncated` at the file offset where the chunk ends.
    #[test]
    fn a_chunk_reads_with_the_files_offsets() {
        let rdb = Rdb::new(FILE).expect("rdb"); // ok: unit test
        let whole: Vec<_> = rdb.entries().map(|e| e.expect("read")).collect(); // ok: unit test
        let chunk = &FILE[18..];
        let mut records = rdb.records_in(chunk, 18, 3);
        match records.next() {
            Some(Ok(Record::Entry(e))) => {
                assert_eq!((e.offset, e.db, e.value_offset, e.record_len), (18, 3, 21, 5));
                assert_eq!(
                    (e.offset, e.value_offset, e.record_len),
                    (whole[1].offset, whole[1].value_offset, whole[1].record_len)
                );
            }
            other => panic!("{other:?}"), // ok: unit test
        }
        match records.next() {
            Some(Ok(Record::Eof(eof))) => assert_eq!(eof.offset, 23),
            other => panic!("{other:?}"), // ok: unit test
        }
        let mut cut = rdb.records_in(&FILE[18..21], 18, 3);
        let err = cut.next().expect("an error").expect_err("cut"); // ok: unit test
        assert!(matches!(err.kind(), crate::ErrorKind::Truncated { .. }), "{err}");
        assert_eq!(err.offset(), 21);
    }

    /// A set that claims five members and holds one, then "c" = "d".
    const SHORT_SET: &[u8] = b"REDIS0009\xfe\x00\x02\x01s\x05\x01x\x00\x01c\x01d\xff\0\0\0\0\0\0\0\0";

    #[test]
    fn a_known_length_is_taken_not_walked() {
        let rdb = Rdb::new(SHORT_SET).expect("rdb"); // ok: unit test
                                                     // Walked, the set's count runs past its members.
        assert!(rdb.entries().any(|e| e.is_err()));
        // Its record known to be 6 bytes: taken as it is, then the next key.
        let mut records = rdb.records_at(11, 0);
        match records.next_known(6) {
            Some(Ok(Record::Entry(e))) => assert_eq!((e.value, e.record_len), (&b"\x05\x01x"[..], 6)),
            other => panic!("{other:?}"), // ok: unit test
        }
        match records.next() {
            Some(Ok(Record::Entry(e))) => assert_eq!(e.key.to_vec().ok(), Some(b"c".to_vec())),
            other => panic!("{other:?}"), // ok: unit test
        }
        // A known length that ends inside the key, or past the file, fails.
        let err = |len| {
            let mut records = rdb.records_at(11, 0);
            records
                .next_known(len)
                .expect("a record") // ok: unit test
                .map(drop)
                .expect_err("a bad length") // ok: unit test
        };
        assert!(
            err(2)
                .to_string()
                .contains("a record of 2 bytes ends before its value"),
            "{}",
            err(2)
        );
        assert!(
            err(1000).to_string().contains("value of a known length"),
            "{}",
            err(1000)
        );
    }
}
