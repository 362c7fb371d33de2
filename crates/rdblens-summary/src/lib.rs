//! The data contract of rdblens: what a dump's analysis produces and
//! every crate above the engine reads.
//!
//! [`KeyFacts`] are what the engine learns of one key; the mergeable
//! accumulators ([`acc`], gathered in [`Accumulators`]) fold them; a
//! [`Summary`] holds the folded figures of one dump or of several merged
//! (the shards of a cluster). Every accumulator merges associatively and
//! commutatively, so a summary is the same for any thread count and any
//! order of shards. Memory stays bounded whatever the dump's size: top-N
//! lists, histograms with bounded buckets, bottom-k maps for namespaces and
//! hash tags.
//!
//! Also here: the design-rule catalogue and its settings ([`rules`]), the
//! [`Options`] a run is made with and the [`Settings`] a summary records of
//! them, the checks a summary passes before use ([`Summary::check`]) and the
//! summary file ([`SummaryFile`]). The engine (`rdblens-engine`) produces
//! summaries; audit, advice, report and HTML read them and depend on this
//! crate only, so the engine can change without touching them.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
// A failure that can happen is an error, never a panic: no unwrap, expect
// or panic! outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod acc;
mod check;
mod checker;
mod facts;
mod filter;
mod keyname;
pub mod keyshape;
mod limits;
pub mod namespace;
mod options;
pub mod rules;
mod settings;
pub mod shard;
pub mod slot;
mod summary;
mod summary_file;
mod used_memory;

pub use checker::{CheckError, MAX_COUNT};
pub use facts::KeyFacts;
pub use filter::{glob_match, KeyFilter, SizeBy, SizeRange, TtlFilter};
pub use keyname::KeyName;
pub use limits::{check_limits, LimitCheck};
pub use options::{Accumulators, Hook, Notes, Options, Progress};
pub use settings::{join_differences, Difference, Setting, Settings, Shaping};
pub use shard::ShardStats;
pub use summary::{
    aux_used_mem, AccuracyInfo, AllocatorInfo, Checksum, ChecksumMismatch, Compression, Damage, FileInfo,
    KeyStats, MergeError, Summary, DAMAGE_KEPT, SUMMARY_VERSION,
};
pub use summary_file::{Merger, SummaryError, SummaryFile, FORMAT, MAX_SUMMARY_BYTES};
pub use used_memory::{UsedMemory, UsedMemorySums};
