//! One error type for everything that can go wrong while reading a file.

use std::fmt;

/// Which server family wrote the file; decided by the magic, never guessed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// `REDIS` + 4 digits: Redis 1.x-8.x, Valkey 7.2-8.1.
    Redis,
    /// `VALKEY` + 3 digits: Valkey 9.0+.
    Valkey,
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dialect::Redis => "Redis",
            Dialect::Valkey => "Valkey",
        })
    }
}

/// What went wrong, without the where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended before a read could complete.
    #[error("unexpected end of input while reading {what}: needed {needed} bytes, {available} remain")]
    Truncated {
        /// What was being read (e.g. `"key"`, `"stream node listpack"`).
        what: &'static str,
        /// Bytes the read needed (for a count, at least count × the smallest item).
        needed: u64,
        /// Bytes that remained.
        available: u64,
    },
    /// The input does not start with an RDB magic; the text says what it looks like instead.
    #[error("not an RDB file: {0}")]
    NotRdb(String),
    /// The magic names a version this parser does not read.
    #[error("unsupported RDB version {version} in a {dialect} file (supported: {supported})")]
    UnsupportedVersion {
        /// Server family from the magic.
        dialect: Dialect,
        /// Version number from the magic.
        version: u32,
        /// The supported versions, for the message ([`crate::SUPPORTED`]).
        supported: &'static str,
    },
    /// A type byte (or, from 0xF0, a record opcode) the file's version does
    /// not have. Nothing after it can be read: only the type tells where a
    /// record ends.
    #[error("{}", crate::format::describe_unknown_byte(*.byte, *.dialect, *.version))]
    UnknownType {
        /// The byte at the start of the record.
        byte: u8,
        /// Dialect of the file.
        dialect: Dialect,
        /// Version of the file.
        version: u32,
    },
    /// A known value type whose length cannot be found (type 6, pre-GA modules): the type name and why.
    #[error("unsupported value type {0}: {1}")]
    UnsupportedType(&'static str, String),
    /// A length whose first byte is none of the valid encodings (`10xxxxxx` other than 0x80, 0x81).
    #[error("invalid length encoding byte 0x{0:02x}")]
    BadLength(u8),
    /// An integer or LZF string encoding (`11xxxxxx`) where the format allows
    /// only a plain length (counts, ids).
    #[error("a special string encoding (0x{0:02x}) where a plain length was expected")]
    UnexpectedSpecialEncoding(u8),
    /// A special string encoding other than INT8/16/32 and LZF.
    #[error("invalid string encoding 0x{0:02x}")]
    BadStringEncoding(u8),
    /// A declared length larger than `usize` on this platform.
    #[error("length {length} does not fit in memory on this platform")]
    LengthOverflow {
        /// The length as declared in the file.
        length: u64,
    },
    /// An LZF string that cannot be decompressed to its declared length.
    #[error("corrupt LZF data: {0}")]
    BadLzf(String),
    /// A ziplist whose header or entries are inconsistent.
    #[error("corrupt ziplist: {0}")]
    BadZiplist(String),
    /// A listpack whose header or elements are inconsistent.
    #[error("corrupt listpack: {0}")]
    BadListpack(String),
    /// An intset with a bad width, size or member order.
    #[error("corrupt intset: {0}")]
    BadIntset(String),
    /// A zipmap that is too short, lacks its end marker or has entries running past it.
    #[error("corrupt zipmap: {0}")]
    BadZipmap(String),
    /// A stream whose node keys or node listpack contents break the stream layout.
    #[error("corrupt stream: {0}")]
    BadStream(String),
    /// A module opcode stream (value, MODULE_AUX or KEY_META) with an unknown or misplaced opcode.
    #[error("corrupt module value: {0}")]
    BadModule(String),
    /// Any other value or record that breaks the format (bad score, flag, tag or count).
    #[error("corrupt value: {0}")]
    BadValue(String),
}

/// An error with its byte offset in the input and, when known, the key being read.
///
/// Boxed: every parsing function returns a `Result`, and an unboxed error
/// (~80 bytes) made each `Ok` travel through memory; a profile showed the
/// walker spending more time copying results than parsing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(Box<Inner>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Inner {
    offset: u64,
    blob_offset: Option<u64>,
    key: Option<Box<[u8]>>,
    kind: ErrorKind,
}

/// Result with the parser's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error at file offset `offset`, with no key yet.
    #[cold]
    pub fn new(offset: u64, kind: ErrorKind) -> Self {
        Error(Box::new(Inner {
            offset,
            blob_offset: None,
            key: None,
            kind,
        }))
    }

    /// Attaches the key unless a more precise one is already there.
    pub fn with_key(mut self, key: &[u8]) -> Self {
        if self.0.key.is_none() {
            self.0.key = Some(key.into());
        }
        self
    }

    pub(crate) fn with_blob_offset(mut self, pos: u64) -> Self {
        self.0.blob_offset = Some(pos);
        self
    }

    /// Byte offset in the input where the damage was found.
    pub fn offset(&self) -> u64 {
        self.0.offset
    }

    /// For damage inside an LZF-compressed blob: the offset within the
    /// decompressed bytes (the file offset then points at the compressed string).
    pub fn blob_offset(&self) -> Option<u64> {
        self.0.blob_offset
    }

    /// The key whose value was being read, if the damage is inside an entry.
    pub fn key(&self) -> Option<&[u8]> {
        self.0.key.as_deref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.0;
        write!(f, "{} at byte offset {}", e.kind, e.offset)?;
        if let Some(pos) = e.blob_offset {
            write!(f, " (byte {pos} of the decompressed blob)")?;
        }
        if let Some(key) = &e.key {
            write!(f, " in key \"{}\"", escape_bytes(key))?;
        }
        Ok(())
    }
}

// The kind is part of the Display text, so it is not repeated as a source.
impl std::error::Error for Error {}

/// Quotes bytes the way redis-cli does: printable ASCII as is, the rest as
/// `\xNN` or a C escape, so no control byte ever reaches a terminal.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}
