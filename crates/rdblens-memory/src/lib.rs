//! Offline estimates of what a key costs a Redis or Valkey server.
//!
//! For each key of an RDB file, [`estimate`] predicts what
//! `MEMORY USAGE key SAMPLES 0` would report on a chosen target server right
//! after loading that file, the `OBJECT ENCODING` the value would get, and
//! the per-key keyspace overhead `MEMORY USAGE` leaves out. The model is the
//! one in `memory-model.md`: the target's load-time encoding decisions
//! (driven by its config [`Limits`]), its struct sizes, which allocations it
//! rounds through jemalloc size classes (quantum 8 or 16, see [`Profile`]),
//! and how its `objectComputeSize()` averages samples.
//!
//! Deterministic parts are reproduced byte for byte: strings, listpacks,
//! ziplists, intsets, quicklists, streams and presized dict tables (Redis
//! 4.0+ and Valkey 8.0+; docs/memory-model-accuracy.md has the per-fixture
//! record). What the server decides at random is an expectation: skiplist
//! node levels, how far an incremental rehash got, and bucket collisions in
//! Valkey's tables.
//!
//! Each call streams the value once through a [`rdblens_parser::ValueVisitor`]
//! that keeps sums and counts, never the elements, so memory per call is
//! constant (a stream's PEL IDs excepted) and calls are independent: run
//! them from as many threads as there are [`Scratch`] buffers.
//!
//! ```no_run
//! use rdblens_memory::{estimate, Profile};
//! use rdblens_parser::{RdbFile, Scratch};
//!
//! let file = RdbFile::open("dump.rdb")?;
//! let rdb = file.rdb()?;
//! let target = Profile::parse_target("redis-7.2")?;
//! let mut scratch = Scratch::new();
//! for entry in rdb.entries() {
//!     let entry = entry?;
//!     let e = estimate(&entry, &target, &mut scratch)?;
//!     println!("{:?} {} {:?}", entry.key_bytes()?, e.encoding, e.memory);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]
// A failure that can happen is an error, never a panic: no unwrap, expect
// or panic! outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod accuracy;
mod alloc;
pub mod allocator;
mod compact;
mod costs;
mod dict;
mod encoding;
mod limits;
mod model;
mod profile;
mod quicklist;
mod rank;
mod rax;
mod rules;
mod score;
mod sds;
mod shape;
mod stream_facts;
mod version;
mod visitor;

pub use alloc::usable_size;

/// Sizes of single listpack entries (listpack.c), for pricing a listpack
/// that does not exist yet (the audit's small-key-sprawl rule).
pub mod listpack_entry {
    use crate::compact::{lp_int_entry, lp_packed, Packed};

    /// A string entry of `len` bytes: encoding, data and back-length.
    pub fn string(len: u64) -> u64 {
        lp_packed(Packed::Str(len))
    }

    /// An integer entry.
    pub fn int(v: i64) -> u64 {
        lp_int_entry(v)
    }
}
pub use accuracy::{verified_fixtures, Accuracy, AccuracyLevel};
pub use encoding::Encoding;
pub use limits::{Limit, Limits};
pub use profile::{Profile, ServerRelease};
pub use rank::RankProfile;
pub use shape::{keyspace_overhead, price_part, price_range, PartProfiles, Shape};
pub use version::{Family, ServerVersion};

use rdblens_parser::{Entry, Result, Scratch, Tee, ValueVisitor};

/// The estimate for one key on one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// What `OBJECT ENCODING` says after the target loads the value.
    pub encoding: Encoding,
    /// `MEMORY USAGE key SAMPLES 0`; `None` for module values, whose size
    /// only the module knows.
    pub memory: Option<u64>,
    /// When the value is not in a compact encoding (hashtable, skiplist,
    /// linkedlist): `MEMORY USAGE` if it were one listpack (ziplist before
    /// 7.0) or intset, for "memory a compact encoding would save".
    pub compact_memory: Option<u64>,
    /// What `MEMORY USAGE` leaves out: the key's share of the bucket arrays,
    /// allocator rounding of the key and entry it does not count, and the
    /// expires-table entry of a key with a TTL (memory-model.md §6).
    pub keyspace_overhead: u64,
    /// The sums the estimate was made of, to price the value split over
    /// several keys ([`price_part`]).
    pub shape: Shape,
    /// The part of `keyspace_overhead` that is this key's guessed share of
    /// the keyspace bucket arrays, where a database's arrays are known
    /// exactly from its key count ([`allocator::keyspace_tables`]); 0 where
    /// the per-key shares stand for the arrays (Redis 8.2+, Valkey 8.1+).
    pub bucket_share: u64,
    /// Allocator rounding `MEMORY USAGE` leaves out inside the value: dict
    /// entries, quicklist nodes and dict structs it counts by `sizeof`
    /// (24 and 40 bytes are 32 and 48 on a quantum-16 build); for a
    /// stream up to Redis 8.0, how far its allocations exceed the rough
    /// figure `MEMORY USAGE` counts its raxes at, if they do.
    pub allocator_slack: u64,
    /// What `MEMORY USAGE` counts that the server does not allocate for
    /// the key: the robj of an integer the key shares, and, for a stream
    /// up to Redis 8.0, how far the rough figure of its raxes exceeds
    /// their allocations.
    pub usage_overcount: u64,
}

impl Estimate {
    /// What the key adds to `used_memory` besides the keyspace bucket
    /// arrays (which [`allocator::keyspace_tables`] counts per database):
    /// its `MEMORY USAGE` (0 for module values), what the keyspace spends
    /// beyond it but the bucket share, plus the allocations inside the
    /// value that `MEMORY USAGE` leaves out, less what it counts that is
    /// not allocated for the key.
    pub fn adds_to_used_memory(&self) -> u64 {
        let beyond = self.keyspace_overhead.saturating_sub(self.bucket_share) + self.allocator_slack;
        (self.memory.unwrap_or(0) + beyond).saturating_sub(self.usage_overcount)
    }
}

/// Estimates `entry` as `profile`'s server would hold it after loading it.
/// Fails only if the value's bytes are malformed (the parser's error).
pub fn estimate(entry: &Entry<'_>, profile: &Profile, scratch: &mut Scratch) -> Result<Estimate> {
    estimate_with(entry, profile, scratch, &mut NoVisitor)
}

struct NoVisitor;
impl ValueVisitor for NoVisitor {}

/// As [`estimate`], also feeding the decoded value to `also`, so a caller
/// that needs its own measurements does not decode the value a second time.
pub fn estimate_with<V: ValueVisitor>(
    entry: &Entry<'_>,
    profile: &Profile,
    scratch: &mut Scratch,
    also: &mut V,
) -> Result<Estimate> {
    Estimator::new(profile).estimate_with(entry, scratch, also)
}

/// Estimates keys for one target. The target's version rules are worked
/// out once here rather than for every key (they were 4% of a report).
pub struct Estimator<'p> {
    profile: &'p Profile,
    rules: rules::Rules,
    /// See [`Estimator::counting_by_header`].
    header_counts: bool,
}

impl<'p> Estimator<'p> {
    /// An estimator for `profile`'s server, its version rules worked out once.
    pub fn new(profile: &'p Profile) -> Self {
        Estimator {
            profile,
            rules: rules::Rules::for_profile(profile),
            header_counts: false,
        }
    }

    /// With `on`, a compact blob the target keeps as stored (a small hash,
    /// set or sorted set in the target's own encoding, a quicklist node) is
    /// counted by its header: its elements are not walked nor its LZF
    /// decompressed past the header (most of the decoding of a dump of
    /// many small collections: docs/performance.md). The estimate is
    /// unchanged (the model reads only the blob's count and size); the longest
    /// element of such a value is then not measured (the visitor `also`
    /// gets the count alone), nor is the blob checked past its header.
    pub fn counting_by_header(mut self, on: bool) -> Self {
        self.header_counts = on;
        self
    }

    /// Whether blobs kept as stored are counted by their header.
    pub fn counts_by_header(&self) -> bool {
        self.header_counts
    }

    /// The target the estimates are for.
    pub fn profile(&self) -> &'p Profile {
        self.profile
    }

    /// As [`estimate_with`] for this estimator's target.
    pub fn estimate_with<V: ValueVisitor>(
        &self,
        entry: &Entry<'_>,
        scratch: &mut Scratch,
        also: &mut V,
    ) -> Result<Estimate> {
        // Most keys of most dumps: no collector, no visit, no facts of
        // collections to set up (those were a fifth of a string key's cost).
        if let Some(s) = entry.string()? {
            also.string(s);
            let ctx = self.ctx(entry);
            let facts = visitor::StringFacts::of(s);
            let shape = Shape {
                count: facts.len,
                string_int: facts.int,
                ..Shape::default()
            };
            // RAM_LRU (Redis Enterprise) is written per key as IDLE is:
            // taken, by its name, for an LRU policy (no shared integers),
            // whatever its unpublished value means.
            let lru_or_lfu =
                entry.idle_seconds.is_some() || entry.lfu_freq.is_some() || entry.ram_lru.is_some();
            return Ok(Estimate {
                usage_overcount: model::string::shared_overcount(facts, &ctx, lru_or_lfu),
                ..self.finish(model::string::of(Some(facts), &ctx), None, &ctx, shape)
            });
        }
        let mut collector = self.collector(entry);
        entry.visit_with(scratch, &mut Tee(&mut collector, also))?;
        Ok(self.estimate_facts(entry, &collector.finish()))
    }

    /// Estimates `entry` for this estimator's target and for `other`'s in
    /// one decoding of the value (the allocator detection compares two
    /// builds of one release).
    pub fn estimate_pair(
        &self,
        other: &Estimator<'_>,
        entry: &Entry<'_>,
        scratch: &mut Scratch,
    ) -> Result<(Estimate, Estimate)> {
        self.estimate_pair_with(other, entry, scratch, &mut NoVisitor)
    }

    /// As [`Self::estimate_pair`], also feeding the decoded value to `also`
    /// (as [`Self::estimate_with`] does).
    pub fn estimate_pair_with<V: ValueVisitor>(
        &self,
        other: &Estimator<'_>,
        entry: &Entry<'_>,
        scratch: &mut Scratch,
        also: &mut V,
    ) -> Result<(Estimate, Estimate)> {
        if entry.string()?.is_some() {
            return Ok((
                self.estimate_with(entry, scratch, also)?,
                other.estimate_with(entry, scratch, &mut NoVisitor)?,
            ));
        }
        if self.same_target_but_allocator(other) {
            // One collector rounding both builds' allocations: the value's
            // elements are measured and packed once (the detection samples
            // every big value, so this is most of its decoding).
            let mut both = self.collector(entry).with_other_build(&other.rules);
            entry.visit_with(scratch, &mut Tee(&mut both, also))?;
            let (mine, theirs) = both.finish_both();
            return Ok((
                self.estimate_facts(entry, &mine),
                other.estimate_facts(entry, &theirs),
            ));
        }
        let mut mine = self.collector(entry);
        let mut theirs = other.collector(entry);
        entry.visit_with(scratch, &mut Tee(&mut mine, &mut Tee(&mut theirs, also)))?;
        Ok((
            self.estimate_facts(entry, &mine.finish()),
            other.estimate_facts(entry, &theirs.finish()),
        ))
    }

    /// Whether `other` estimates for the same target as this one, with the
    /// same way of counting blobs, but another allocator build: then only
    /// the allocator's rounding tells their collections apart.
    fn same_target_but_allocator(&self, other: &Estimator<'_>) -> bool {
        let theirs = Profile {
            quantum: self.profile.quantum,
            ..other.profile.clone()
        };
        self.header_counts == other.header_counts && *self.profile == theirs
    }

    fn collector(&self, entry: &Entry<'_>) -> visitor::Collector<'_> {
        visitor::Collector::new(
            &self.rules,
            &self.profile.limits,
            entry.value_type,
            entry.format().version,
        )
        .counting_by_header(self.header_counts)
    }

    fn estimate_facts(&self, entry: &Entry<'_>, facts: &visitor::Facts) -> Estimate {
        let ctx = self.ctx(entry);
        let shape = Shape::of(facts, entry.kind());
        self.finish(model::value(facts, &ctx), Some(facts), &ctx, shape)
    }

    fn ctx(&self, entry: &Entry<'_>) -> model::Ctx<'_> {
        let key_len = entry.key.len() as u64;
        let ttl = entry.expiry.is_some();
        model::Ctx {
            rules: &self.rules,
            limits: &self.profile.limits,
            value_type: entry.value_type,
            key_len,
            ttl,
            header: model::object_header(&self.rules, key_len, ttl),
        }
    }

    fn finish(
        &self,
        value: model::Value,
        facts: Option<&visitor::Facts>,
        ctx: &model::Ctx<'_>,
        shape: Shape,
    ) -> Estimate {
        Estimate {
            encoding: value.encoding,
            memory: value.object.map(|o| model::memory_usage(o, ctx)),
            compact_memory: value.compact.map(|o| model::memory_usage(o, ctx)),
            keyspace_overhead: model::keyspace::overhead(ctx),
            bucket_share: model::keyspace::bucket_share(ctx),
            allocator_slack: facts.map_or(0, |f| model::allocator_slack(f, value.encoding, ctx)),
            usage_overcount: facts.map_or(0, |f| model::usage_overcount(f, value.encoding, ctx)),
            shape,
        }
    }
}
