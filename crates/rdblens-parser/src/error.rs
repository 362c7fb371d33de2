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
    #[error("unexpected end of input while reading {what}: needed {needed} bytes, {available} remain")]
    Truncated {
        what: &'static str,
        needed: u64,
        available: u64,
    },
    #[error("not an RDB file: {0}")]
    NotRdb(String),
    #[error("unsupported RDB version {version} in a {dialect} file (supported: {supported})")]
    UnsupportedVersion {
        dialect: Dialect,
        version: u32,
        supported: &'static str,
    },
    /// A type byte (or, from 0xF0, a record opcode) the file's version does
    /// not have. Nothing after it can be read: only the type tells where a
    /// record ends.
    #[error("{}", crate::format::describe_unknown_byte(*.byte, *.dialect, *.version))]
    UnknownType {
        byte: u8,
        dialect: Dialect,
        version: u32,
    },
    #[error("unsupported value type {0}: {1}")]
    UnsupportedType(&'static str, String),
    #[error("invalid length encoding byte 0x{0:02x}")]
    BadLength(u8),
    #[error("a special string encoding (0x{0:02x}) where a plain length was expected")]
    UnexpectedSpecialEncoding(u8),
    #[error("invalid string encoding 0x{0:02x}")]
    BadStringEncoding(u8),
    #[error("length {length} does not fit in memory on this platform")]
    LengthOverflow { length: u64 },
    #[error("corrupt LZF data: {0}")]
    BadLzf(String),
    #[error("corrupt ziplist: {0}")]
    BadZiplist(String),
    #[error("corrupt listpack: {0}")]
    BadListpack(String),
    #[error("corrupt intset: {0}")]
    BadIntset(String),
    #[error("corrupt zipmap: {0}")]
    BadZipmap(String),
    #[error("corrupt stream: {0}")]
    BadStream(String),
    #[error("corrupt module value: {0}")]
    BadModule(String),
    #[error("corrupt value: {0}")]
    BadValue(String),
    #[error("checksum mismatch: the file stores 0x{stored:016x}, its bytes hash to 0x{computed:016x}")]
    ChecksumMismatch { stored: u64, computed: u64 },
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

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
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
