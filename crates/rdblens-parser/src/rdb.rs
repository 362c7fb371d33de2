//! Entry points: [`Rdb`] over any byte slice, [`RdbFile`] over a memory map.

use std::fs::File;
use std::path::Path;

use crate::checksum::crc64;
use crate::entry::Entry;
use crate::error::{Dialect, Error, Result};
use crate::format::Format;
use crate::records::{Eof, ModuleAux, Record, Records};
use crate::string::RdbString;

/// A parsed header over borrowed bytes; everything else is read lazily.
#[derive(Clone, Copy, Debug)]
pub struct Rdb<'a> {
    data: &'a [u8],
    format: Format,
}

/// What the trailing checksum says about the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChecksumStatus {
    /// The stored CRC-64 matches the bytes.
    Valid(u64),
    /// Written with `rdbchecksum no` (stored 0).
    Disabled,
    /// RDB 1-4 carry no checksum.
    Absent,
    /// The stored CRC-64 differs from the one computed over the bytes.
    Mismatch {
        /// The CRC-64 the file stores after EOF.
        stored: u64,
        /// The CRC-64 of the bytes up to and including EOF.
        computed: u64,
    },
}

impl<'a> Rdb<'a> {
    /// Reads the magic. Fails on non-RDB input and unsupported versions.
    pub fn new(data: &'a [u8]) -> Result<Self> {
        let format = Format::from_magic(data).map_err(|kind| Error::new(0, kind))?;
        Ok(Rdb { data, format })
    }

    /// As [`Rdb::new`], but a version newer than any known (Redis 15+,
    /// Valkey 82+) is read with the newest layout known, up to the first type
    /// byte or opcode that layout does not have
    /// ([`Format::from_magic_allowing_newer`]).
    pub fn new_allowing_newer(data: &'a [u8]) -> Result<Self> {
        let format = Format::from_magic_allowing_newer(data).map_err(|kind| Error::new(0, kind))?;
        Ok(Rdb { data, format })
    }

    /// Dialect and version from the magic.
    pub fn format(&self) -> Format {
        self.format
    }

    /// RDB version from the magic.
    pub fn version(&self) -> u32 {
        self.format.version
    }

    /// Server family from the magic.
    pub fn dialect(&self) -> Dialect {
        self.format.dialect
    }

    /// The whole input, magic included.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Every record in file order.
    pub fn records(&self) -> Records<'a> {
        Records::new(self.data, self.format)
    }

    /// The records from `offset` on, in database `db`: a walk resumed at a
    /// record an earlier walk found (an [`Entry`]'s `offset`, which
    /// `db` was selected before), without walking the file to it. An
    /// offset that is not where a record starts reads garbage, with the
    /// errors any damaged file gives; past the end, the first read fails.
    pub fn records_at(&self, offset: u64, db: u64) -> Records<'a> {
        Records::resume(self.data, self.format, offset, db)
    }

    /// The records of `chunk`, bytes of this file's format that start at
    /// file offset `base` where a record does, in database `db` (the one
    /// selected before it): a stream's records as they arrive, without the
    /// bytes before. Entries, values and errors carry the file's offsets;
    /// a record the chunk cuts short is [`crate::ErrorKind::Truncated`].
    pub fn records_in<'c>(&self, chunk: &'c [u8], base: u64, db: u64) -> Records<'c> {
        Records::in_chunk(chunk, self.format, base, db)
    }

    /// Only the key/value entries.
    pub fn entries(&self) -> impl Iterator<Item = Result<Entry<'a>>> + 'a {
        self.records().filter_map(|r| match r {
            Ok(Record::Entry(e)) => Some(Ok(e)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
    }

    /// Checks the stored CRC-64 against the bytes up to and including EOF.
    pub fn checksum_status(&self, eof: &Eof<'_>) -> ChecksumStatus {
        self.checksum_status_with(eof, || crc64(&self.data[..self.checksum_end(eof)]))
    }

    /// How many bytes from the start of the file the trailer checksum
    /// covers: everything up to and including the EOF opcode.
    pub fn checksum_end(&self, eof: &Eof<'_>) -> usize {
        (eof.offset as usize + 1).min(self.data.len())
    }

    /// [`Self::checksum_status`] for a caller that hashes the file itself
    /// (e.g. a [`crate::Crc64Digest`] fed while walking, so the file is not
    /// read a second time): `computed` is only called when a checksum is stored.
    pub fn checksum_status_with(&self, eof: &Eof<'_>, computed: impl FnOnce() -> u64) -> ChecksumStatus {
        match eof.checksum {
            None => ChecksumStatus::Absent,
            Some(0) => ChecksumStatus::Disabled,
            Some(stored) => {
                let computed = computed();
                if computed == stored {
                    ChecksumStatus::Valid(stored)
                } else {
                    ChecksumStatus::Mismatch { stored, computed }
                }
            }
        }
    }

    /// Walks the whole file and collects everything that is not a key:
    /// aux fields, size hints, functions, module aux data, slot info, EOF.
    pub fn metadata(&self) -> Result<Metadata<'a>> {
        let mut meta = Metadata::default();
        for record in self.records() {
            match record? {
                Record::Aux { key, value } => meta.aux.push((key, value)),
                Record::SelectDb { db } => meta.databases.push(DbInfo {
                    db,
                    ..DbInfo::default()
                }),
                Record::ResizeDb {
                    db_size,
                    expires_size,
                } => {
                    if let Some(db) = meta.databases.last_mut() {
                        db.resize_hint = Some((db_size, expires_size));
                    }
                }
                Record::ModuleAux(aux) => meta.module_aux.push(aux),
                Record::Function { source } => meta.functions.push(source),
                Record::FunctionPreGa { code, .. } => meta.functions.push(code),
                Record::SlotInfo { slot, keys, expires } => meta.slot_info.push((slot, keys, expires)),
                Record::SlotImport { .. } | Record::Update { .. } => meta.other_records += 1,
                Record::Entry(e) => {
                    if meta.databases.last().is_none_or(|d| d.db != e.db) {
                        meta.databases.push(DbInfo {
                            db: e.db,
                            ..DbInfo::default()
                        });
                    }
                    if let Some(db) = meta.databases.last_mut() {
                        db.keys += 1;
                        db.expires += u64::from(e.expiry.is_some());
                    }
                }
                Record::Eof(eof) => meta.eof = Some(eof),
            }
        }
        Ok(meta)
    }
}

/// Per-database counts from a full walk, and the RESIZEDB hint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DbInfo {
    /// Database number.
    pub db: u64,
    /// Keys walked in this database section.
    pub keys: u64,
    /// Those of these keys that have an expiry.
    pub expires: u64,
    /// RESIZEDB hint (keys, keys with an expiry) as the writer stated it;
    /// `None` when the file has none for this database.
    pub resize_hint: Option<(u64, u64)>,
}

/// Everything in a file that is not a key.
#[derive(Clone, Debug, Default)]
pub struct Metadata<'a> {
    /// AUX fields (name, value) in file order, e.g. `redis-ver`, `used-mem`.
    pub aux: Vec<(RdbString<'a>, RdbString<'a>)>,
    /// One entry per database section (SELECTDB, or keys of a new database without one), in file order.
    pub databases: Vec<DbInfo>,
    /// MODULE_AUX records in file order.
    pub module_aux: Vec<ModuleAux<'a>>,
    /// Function library sources.
    pub functions: Vec<RdbString<'a>>,
    /// SLOT_INFO hints as (slot, keys, keys with an expiry), in file order.
    pub slot_info: Vec<(u64, u64, u64)>,
    /// Records kept only as a count: Valkey SLOT_IMPORT and UPDATE.
    pub other_records: u64,
    /// The EOF record; always set by [`Rdb::metadata`].
    pub eof: Option<Eof<'a>>,
}

impl<'a> Metadata<'a> {
    /// An aux field's value by name, e.g. `redis-ver`, `ctime`.
    pub fn aux_value(&self, name: &str) -> Option<RdbString<'a>> {
        self.aux
            .iter()
            .find(|(k, _)| k.to_cow().is_ok_and(|k| &*k == name.as_bytes()))
            .map(|(_, v)| *v)
    }
}

/// Bytes Linux maps per page fault on a file mapping whose pages are in
/// the page cache (`fault_around_bytes`, 64 KiB by default).
const FAULT_AROUND: usize = 64 << 10;

/// A dump mapped read-only into memory.
pub struct RdbFile {
    map: Option<memmap2::Mmap>,
}

impl RdbFile {
    /// Maps the file read-only with sequential read-ahead advice.
    pub fn open(path: impl AsRef<Path>) -> std::io::Result<RdbFile> {
        Self::from_file(File::open(path)?)
    }

    /// Maps an open file (e.g. an anonymous temporary file holding a
    /// decompressed dump) read-only, as [`RdbFile::open`].
    #[allow(unsafe_code)] // the memory map: see the SAFETY comment
    pub fn from_file(file: File) -> std::io::Result<RdbFile> {
        if file.metadata()?.len() == 0 {
            return Ok(RdbFile { map: None });
        }
        // SAFETY: the map is read-only and we never hand out a mutable view.
        // Another process truncating or rewriting the file while we read it
        // is outside what any reader of a shared file can prevent (it may
        // cause SIGBUS); dumps are written to a temporary file and renamed,
        // so a finished dump.rdb is not modified in place by Redis.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(RdbFile { map: Some(map) })
    }

    /// The mapped bytes (empty for an empty file).
    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// Drops the resident pages of `[start, end)` from this process: a
    /// reader done with that part of the file keeps its resident set small
    /// on dumps larger than RAM. The bytes stay readable (they are read
    /// from the file again if touched). Best effort: errors are ignored.
    #[allow(unsafe_code)] // madvise: see the SAFETY comment
    pub fn release(&self, start: usize, end: usize) {
        #[cfg(unix)]
        if let Some(map) = &self.map {
            let end = end.min(map.len());
            if start < end {
                // SAFETY: the map is a read-only, shared mapping of a file.
                // MADV_DONTNEED on such a mapping only drops the pages from
                // this process's page tables; the next access faults them in
                // again from the page cache or the file, with the same
                // content, so borrowed slices stay valid and unchanged (the
                // zero-fill that makes DONTNEED unsafe in general applies to
                // private anonymous and written private pages, which a
                // read-only file map has none of).
                let _ = unsafe {
                    map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
                };
            }
        }
        #[cfg(not(unix))]
        let _ = (start, end);
    }

    /// Maps `[start, end)` into this process's page tables ahead of use,
    /// so a reader touching those bytes later takes (almost) no page fault;
    /// on a file not in the page cache it also reads the pages in. It
    /// reads one byte per `FAULT_AROUND` bytes: each fault maps that
    /// many bytes around the touched page from the page cache. Why not
    /// `MADV_POPULATE_READ`: it walks every page on its own, and a
    /// two-thread report of the 1.15 GB benchmark dump spent 0.206 s in
    /// the kernel with it against 0.156 s so.
    /// Pages the kernel did not map (not yet read in, or a smaller
    /// fault-around) are faulted in by their reader as without this.
    pub fn populate(&self, start: usize, end: usize) {
        let bytes = self.bytes();
        let end = end.min(bytes.len());
        for at in (start..end).step_by(FAULT_AROUND) {
            // The read is the point: black_box keeps it.
            std::hint::black_box(bytes[at]);
        }
    }

    /// Size of the file in bytes.
    pub fn len(&self) -> usize {
        self.bytes().len()
    }

    /// True for an empty file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads the magic of the mapped file, as [`Rdb::new`].
    pub fn rdb(&self) -> Result<Rdb<'_>> {
        Rdb::new(self.bytes())
    }
}
