//! A key and its value, borrowed from the input.

use crate::error::{ErrorKind, Result};
use crate::format::{Format, TypeKind, ValueType};
use crate::module::{ModuleId, ModuleValue};
use crate::reader::Reader;
use crate::stream::StreamValue;
use crate::string::RdbString;
use crate::value::decode::{Decoder, Scratch};
use crate::value::walk::{walk, Structure};
use crate::value::{ValueStats, ValueVisitor};

/// How the expiry was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExpiryUnit {
    /// EXPIRETIME (253): 4-byte seconds, RDB 1-2.
    Seconds,
    /// EXPIRETIME_MS (252): 8-byte milliseconds.
    Milliseconds,
}

/// When a key expires, as read from its EXPIRETIME or EXPIRETIME_MS prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Expiry {
    /// Absolute expiry time, unix milliseconds.
    pub unix_ms: i64,
    /// Which opcode carried it (seconds are converted to `unix_ms`).
    pub unit: ExpiryUnit,
}

/// Redis 8.6+ per-key module metadata (KEY_META), kept raw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyMeta<'a> {
    /// Number of metadata classes attached to the key (1-7).
    pub classes: u64,
    /// The records after the count: per class a 4-byte spec and an opcode stream.
    pub bytes: &'a [u8],
}

/// One key with its value, as it sits in the file.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'a> {
    /// Database number (from the last SELECTDB before the key; 0 if none).
    pub db: u64,
    /// The key as stored (raw, integer-encoded or LZF-compressed).
    pub key: RdbString<'a>,
    /// The value's on-disk type byte, decoded for the file's dialect.
    pub value_type: ValueType,
    /// The value payload, exactly as serialized (its length is the serialized size).
    pub value: &'a [u8],
    /// File offset of the first byte of the record (its first prefix opcode, or the type byte).
    pub offset: u64,
    /// File offset of `value`.
    pub value_offset: u64,
    /// Bytes of the whole record: prefixes, type byte, key and value.
    pub record_len: u64,
    /// When the key expires; `None` for a key without a TTL.
    pub expiry: Option<Expiry>,
    /// LRU idle seconds (IDLE opcode, RDB 9+ under an LRU policy).
    pub idle_seconds: Option<u64>,
    /// LFU counter (FREQ opcode, RDB 9+ under an LFU policy).
    pub lfu_freq: Option<u8>,
    /// Redis Enterprise's RAM_LRU value (opcode 107), as stored. No
    /// published source says what it measures (librdb reads it and throws
    /// it away), so it is not taken for an idle time.
    pub ram_lru: Option<u64>,
    /// Per-key module metadata (KEY_META, Redis 8.6+); `None` when the key has none.
    pub key_meta: Option<KeyMeta<'a>>,
    pub(crate) format: Format,
    pub(crate) file: &'a [u8],
    /// The file offset of `file[0]` (see [`crate::Rdb::records_in`]).
    pub(crate) file_base: u64,
}

impl<'a> Entry<'a> {
    /// The logical type (string, list, set, ...) the value type belongs to.
    pub fn kind(&self) -> TypeKind {
        self.value_type.kind()
    }

    /// The key's bytes (decompressed if the key was stored LZF-compressed).
    pub fn key_bytes(&self) -> Result<std::borrow::Cow<'a, [u8]>> {
        self.key.to_cow().map_err(|e| self.rebase(e))
    }

    fn reader(&self) -> Reader<'a> {
        Reader::new(self.value, self.value_offset)
    }

    fn rebase(&self, e: crate::Error) -> crate::Error {
        match self.key.to_cow() {
            Ok(k) => e.with_key(&k),
            Err(_) => e,
        }
    }

    fn run<S: Structure<'a>>(&self, s: &mut S) -> Result<()> {
        let mut r = self.reader();
        walk(&mut r, self.value_type, s).map_err(|e| self.rebase(e))
    }

    /// Decodes the value, handing its content to `visitor`.
    pub fn visit<V: ValueVisitor>(&self, visitor: &mut V) -> Result<()> {
        self.visit_with(&mut Scratch::new(), visitor)
    }

    /// As [`Entry::visit`], reusing `scratch` for decompressed data.
    pub fn visit_with<V: ValueVisitor>(&self, scratch: &mut Scratch, visitor: &mut V) -> Result<()> {
        let mut decoder = Decoder {
            file: self.file,
            base: self.file_base,
            scratch,
            visitor,
        };
        self.run(&mut decoder)
    }

    /// Element count, element sizes and blob sizes, in one pass.
    pub fn stats(&self) -> Result<ValueStats> {
        self.stats_with(&mut Scratch::new())
    }

    /// As [`Entry::stats`], reusing `scratch` for decompressed data.
    pub fn stats_with(&self, scratch: &mut Scratch) -> Result<ValueStats> {
        let mut stats = ValueStats::default();
        self.visit_with(scratch, &mut stats)?;
        Ok(stats)
    }

    /// The string value, undecoded, for string keys.
    pub fn string(&self) -> Result<Option<RdbString<'a>>> {
        if self.value_type != ValueType::String {
            return Ok(None);
        }
        let mut r = self.reader();
        r.string("string value").map(Some).map_err(|e| self.rebase(e))
    }

    /// Stream metadata, groups, PELs and consumers, for stream keys.
    pub fn stream(&self) -> Result<Option<StreamValue<'a>>> {
        let Some(version) = self.value_type.stream_version() else {
            return Ok(None);
        };
        let mut r = self.reader();
        StreamValue::read(&mut r, version, true)
            .map(Some)
            .map_err(|e| self.rebase(e))
    }

    /// The module id and opcode stream, for module keys.
    pub fn module(&self) -> Result<Option<ModuleValue<'a>>> {
        struct Grab<'a>(Option<ModuleValue<'a>>);
        impl<'a> Structure<'a> for Grab<'a> {
            fn module(&mut self, m: ModuleValue<'a>) -> Result<()> {
                self.0 = Some(m);
                Ok(())
            }
        }
        if self.value_type != ValueType::Module2 {
            return Ok(None);
        }
        let mut grab = Grab(None);
        self.run(&mut grab)?;
        Ok(grab.0)
    }

    /// The module type for module keys, read from the first bytes only.
    pub fn module_id(&self) -> Option<ModuleId> {
        if self.value_type != ValueType::Module2 {
            return None;
        }
        self.reader().length("module id").ok().map(ModuleId)
    }

    /// Dialect and version of the file this entry came from.
    pub fn format(&self) -> Format {
        self.format
    }
}

impl KeyMeta<'_> {
    pub(crate) fn read<'a>(r: &mut Reader<'a>) -> Result<KeyMeta<'a>> {
        let at = r.pos();
        let classes = r.count("key metadata class count", 5)?;
        if !(1..=7).contains(&classes) {
            return Err(r.err_at(
                at,
                ErrorKind::BadValue(format!("key metadata class count {classes} (expected 1-7)")),
            ));
        }
        let start = r.pos();
        for _ in 0..classes {
            r.take(4, "key metadata class spec")?;
            crate::module::skip_opcodes(r)?;
        }
        Ok(KeyMeta {
            classes,
            bytes: r.since(start),
        })
    }
}
