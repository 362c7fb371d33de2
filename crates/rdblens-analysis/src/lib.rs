//! Parallel analysis of RDB snapshots.
//!
//! [`analyze_bytes`] walks a mapped dump once: rayon workers take turns at
//! the walker, which only finds entry boundaries, and each decodes the
//! batch it walked, estimates memory ([`rdblens_memory`]) and folds
//! [`KeyFacts`] into its own accumulators. Every accumulator merges associatively and commutatively,
//! so the [`Summary`] is the same for any thread count, and summaries of
//! several files (the shards of a cluster) merge into one.
//!
//! Memory stays bounded whatever the file size: top-N lists, histograms with
//! bounded buckets, and bottom-k maps for namespaces and hash tags.
//!
//! [`map_keys_in_order`] walks the same way but hands one record per key to
//! the caller, in file order (for per-key exports). Both take an optional
//! [`Progress`] hook in [`Options`], told how many bytes have been walked.
//!
//! The per-key half of the design-rule audit runs in the same workers:
//! [`rules`] holds the catalogue and its settings ([`Options::rules`]),
//! [`acc::rules`] the hits, which the `rdblens-audit` crate turns into
//! findings.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
// A failure that can happen is an error, never a panic: no unwrap, expect
// or panic! outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod acc;
mod allocator;
mod check;
mod early;
mod error;
mod facts;
mod files;
mod filter;
mod keyname;
pub mod keyshape;
mod limits;
mod mainpass;
pub mod namespace;
mod options;
mod ordered;
mod pipeline;
mod release;
pub mod rules;
mod settings;
pub mod shard;
pub mod slot;
mod spans;
mod streaming;
mod summary;
mod summary_file;
mod used_memory;
mod walker;

pub use check::{CheckError, MAX_COUNT};
pub use error::AnalysisError;
pub use facts::{key_facts, KeyFacts};
pub use files::{analyze_files, plan_lanes, resolve_threads, FileError, Input};
pub use filter::{glob_match, KeyFilter, SizeBy, SizeRange, TtlFilter};
pub use keyname::KeyName;
pub use limits::LimitCheck;
pub use mainpass::{analyze_bytes, analyze_file};
pub use options::{Accumulators, Options, Progress};
pub use ordered::{
    map_file_keys_in_order, map_file_keys_in_order_rewindable, map_keys_in_order,
    map_keys_in_order_rewindable, Again, InOrder, KeyItem,
};
pub use pipeline::profile_for;
pub use settings::{join_differences, Difference, Setting, Settings, Shaping};
pub use shard::ShardStats;
pub use streaming::{analyze_stream, walk_stream, StreamEnd};
pub use summary::{
    AccuracyInfo, AllocatorInfo, Checksum, ChecksumMismatch, Compression, Damage, FileInfo, KeyStats,
    MergeError, Summary, DAMAGE_KEPT, SUMMARY_VERSION,
};
pub use summary_file::{Merger, SummaryError, SummaryFile, FORMAT, MAX_SUMMARY_BYTES};
pub use used_memory::{UsedMemory, UsedMemorySums};
