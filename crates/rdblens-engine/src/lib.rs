//! The rdblens analysis engine: where a dump's bytes come from and how
//! they are walked.
//!
//! [`analyze_bytes`] walks a mapped dump once: rayon workers take turns at
//! the walker, which only finds entry boundaries, and each decodes the
//! batch it walked, estimates memory ([`rdblens_memory`]) and folds the
//! key's facts into its own accumulators. [`analyze_stream`] does the same
//! for bytes that arrive through a `Read` (a pipe, a decompressor, a
//! socket), with no copy on disk; [`Input`] is the seam both sit behind,
//! and [`analyze_files`] runs several inputs (the shards of a cluster) as
//! one analysis. The allocator build a dump came from is found during the
//! same pass (`allocator.rs`, `early.rs`).
//!
//! [`map_keys_in_order`] walks the same way but hands one record per key to
//! the caller, in file order (for per-key exports). Both take an optional
//! [`Progress`](rdblens_summary::Progress) hook in the
//! [`Options`](rdblens_summary::Options), told how many bytes have been walked.
//!
//! What the engine produces, the [`Summary`](rdblens_summary::Summary) and
//! everything in it, is defined by the `rdblens-summary` crate: the crates
//! that read summaries depend on that contract, not on this engine.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
// A failure that can happen is an error, never a panic: no unwrap, expect
// or panic! outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod allocator;
mod early;
mod error;
mod files;
mod mainpass;
mod measure;
mod ordered;
mod pipeline;
mod release;
mod spans;
mod streaming;
mod walker;

pub use error::AnalysisError;
pub use files::{analyze_files, plan_lanes, resolve_threads, FileError, Input};
pub use mainpass::{analyze_bytes, analyze_file};
pub use measure::key_facts;
pub use ordered::{
    map_file_keys_in_order, map_file_keys_in_order_rewindable, map_keys_in_order,
    map_keys_in_order_rewindable, Again, InOrder, KeyItem,
};
pub use pipeline::profile_for;
pub use streaming::{analyze_stream, stream_keys_in_order, stream_needs_evidence, walk_stream, StreamEnd};
