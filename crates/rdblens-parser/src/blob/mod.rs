//! The compact encodings Redis embeds inside RDB strings: listpack, ziplist,
//! intset and zipmap. Each decoder borrows the blob and validates its header
//! against the blob's real size before walking it.

mod intset;
mod listpack;
mod ziplist;
mod zipmap;

pub use intset::{Intset, IntsetIter};
pub use listpack::{Listpack, ListpackIter};
pub use ziplist::{Ziplist, ZiplistIter};
pub use zipmap::{Zipmap, ZipmapIter};

use crate::error::ErrorKind;

/// An error inside a blob, at a position relative to the blob's first byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobError {
    /// Offset of the fault from the blob's first byte.
    pub pos: usize,
    /// What is wrong there.
    pub kind: ErrorKind,
}

/// Result of decoding inside a blob; the caller adds the blob's file offset and key.
pub type BlobResult<T> = Result<T, BlobError>;

/// Which embedded format a blob holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlobKind {
    /// Listpack (Redis 5+ streams, 7.0+ small hashes, zsets, sets and list nodes).
    Listpack,
    /// Ziplist (Redis 2.4-6.2 small lists, hashes, zsets and quicklist v1 nodes).
    Ziplist,
    /// Intset (small sets of integers).
    Intset,
    /// Zipmap (Redis 2.4 small hashes).
    Zipmap,
}

impl BlobKind {
    /// Lower-case name of the encoding, as Redis' `OBJECT ENCODING` spells it.
    pub fn name(self) -> &'static str {
        match self {
            BlobKind::Listpack => "listpack",
            BlobKind::Ziplist => "ziplist",
            BlobKind::Intset => "intset",
            BlobKind::Zipmap => "zipmap",
        }
    }
}

pub(crate) fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

pub(crate) fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// Reads `n` bytes at `at` as a little-endian signed integer, sign-extended.
pub(crate) fn le_signed(b: &[u8], at: usize, n: usize) -> i64 {
    let mut v: u64 = 0;
    for i in (0..n).rev() {
        v = (v << 8) | u64::from(b[at + i]);
    }
    let shift = 64 - 8 * n as u32;
    ((v << shift) as i64) >> shift
}
