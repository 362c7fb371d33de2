//! Zero-copy parser for Redis and Valkey RDB snapshot files.
//!
//! The file is memory-mapped ([`RdbFile`]) or given as a slice ([`Rdb`]);
//! [`Rdb::records`] walks the top-level records and yields each key as an
//! [`Entry`] that borrows its key and raw value bytes from the input. Finding
//! where an entry ends costs no decompression and no allocation; decoding a
//! value happens only on request ([`Entry::visit`], [`Entry::stats`]) and
//! still borrows wherever the bytes are not LZF-compressed.
//!
//! Versions: Redis RDB 1-14 (Redis 1.0 to 8.8) and Valkey 80/81 (`VALKEY080`,
//! `VALKEY081`). Bytes whose meaning differs between the two (value types
//! 22/23, opcodes 242/243) are dispatched on the magic.
//!
//! Every length read from the file is checked against the bytes that remain
//! before it is used, so damaged or hostile input yields an [`Error`] with
//! the byte offset, the key and what was expected; never a panic or an
//! allocation larger than the input justifies.
//!
//! ```no_run
//! use rdblens_parser::{RdbFile, Record};
//! let file = RdbFile::open("dump.rdb")?;
//! let rdb = file.rdb()?;
//! for entry in rdb.entries() {
//!     let entry = entry?;
//!     let stats = entry.stats()?;
//!     println!("{:?} {} {}", entry.key_bytes()?, entry.value_type.name(), stats.elements);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// The only unsafe code is the memory map (`rdb.rs`), allowed there.
#![deny(unsafe_code)]
#![warn(missing_docs)]
// A failure that can happen is an error, never a panic: no unwrap, expect
// or panic! outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod blob;
mod checksum;
mod element;
mod entry;
mod error;
mod format;
mod lzf;
mod module;
mod rdb;
mod reader;
mod records;
mod stream;
mod string;
mod value;

pub use checksum::{crc64, Crc64Digest};
pub use element::{decimal_len, parse_canonical_int, Element};
pub use entry::{Entry, Expiry, ExpiryUnit, KeyMeta};
pub use error::{escape_bytes, Dialect, Error, ErrorKind, Result};
pub use format::{Format, TypeKind, ValueType, SUPPORTED};
pub use lzf::decompress as lzf_decompress;
pub use module::{ModuleId, ModuleItem, ModuleItems, ModuleValue};
pub use rdb::{ChecksumStatus, DbInfo, Metadata, Rdb, RdbFile};
pub use records::{Eof, ModuleAux, Record, Records};
pub use stream::{
    Consumer, ConsumerGroup, IdempotentProducer, PendingEntry, StreamId, StreamIdmp, StreamNode, StreamNodes,
    StreamValue,
};
pub use string::RdbString;
pub use value::decode::Scratch;
pub use value::{ArrayItem, BlobSummary, NodeInfo, NodeKind, Tee, ValueStats, ValueVisitor};
