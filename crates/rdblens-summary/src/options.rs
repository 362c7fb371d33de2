use std::fmt;
use std::sync::Arc;

use std::collections::BTreeMap;

use rdblens_memory::{Family, Limits, Profile, ServerVersion};

use crate::filter::KeyFilter;
use crate::keyname::KeyName;
use crate::rules::RuleConfig;
use crate::settings::{key_filters, Settings, Shaping};

/// A hook the analysis calls with what it tells (`T`), from any worker:
/// [`Progress`], [`Notes`]. Cheap to clone; never changes the result.
pub struct Hook<T>(Arc<dyn Fn(T) + Send + Sync>);

impl<T> Hook<T> {
    /// A hook calling `f` with each thing told.
    pub fn new(f: impl Fn(T) + Send + Sync + 'static) -> Self {
        Hook(Arc::new(f))
    }
}

// Derived, it would ask `T: Clone`.
impl<T> Clone for Hook<T> {
    fn clone(&self) -> Self {
        Hook(Arc::clone(&self.0))
    }
}

// A closure has no Debug; this keeps `Options` derivable.
impl<T> fmt::Debug for Hook<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Hook(..)")
    }
}

/// A progress hook: called by the walker with the bytes of the file walked
/// so far (every few MiB, and once more at the end).
pub type Progress = Hook<u64>;

impl Progress {
    /// Tells the hook that `bytes_done` bytes of the file have been walked.
    pub fn report(&self, bytes_done: u64) {
        (self.0)(bytes_done)
    }
}

/// A notes hook: told, per input, what the reader should know of how it
/// was read that the report does not say (a stream read for both
/// allocator builds until late: `--jemalloc-quantum` reads it faster).
/// The command line prints the notes on standard error.
pub type Notes = Hook<String>;

impl Notes {
    /// Tells the hook `note`.
    pub fn tell(&self, note: String) {
        (self.0)(note)
    }
}

/// Dumps smaller than this are estimated key by key for the allocator
/// evidence (exact), in a pass of their own (cheap at that size); the
/// default of [`Options::sample_evidence_from`].
pub(crate) const SAMPLE_EVIDENCE_FROM: usize = 64 << 20;

pub use crate::summary::Accumulators;

impl Accumulators {
    /// The accumulators kept in both.
    pub fn both(self, o: Accumulators) -> Accumulators {
        self.zip(o, |a, b| a && b)
    }

    /// The accumulators kept in either.
    pub fn either(self, o: Accumulators) -> Accumulators {
        self.zip(o, |a, b| a || b)
    }

    /// Whether every accumulator is kept.
    pub fn is_all(&self) -> bool {
        *self == Accumulators::ALL
    }
}

impl Default for Accumulators {
    fn default() -> Self {
        Accumulators::ALL
    }
}

/// How to analyse.
#[derive(Clone, Debug)]
pub struct Options {
    /// Worker threads; 0 = all cores. The result is the same for any value.
    pub threads: usize,
    /// Keys kept per top list.
    pub top: usize,
    /// Namespace separator.
    pub separator: u8,
    /// Namespace levels aggregated (1-4).
    pub prefix_depth: usize,
    /// Reference time for TTLs (unix ms); default the snapshot's `ctime`.
    pub now_ms: Option<i64>,
    /// Target server; default the one that wrote the file (aux `redis-ver`).
    pub profile: Option<Profile>,
    /// Allocator quantum override (8 or 16).
    pub quantum: Option<u64>,
    /// Encoding-limit overrides (redis.conf names and values).
    pub config: Vec<(String, String)>,
    /// Blocks of 60 expiry cells (plus heavy cells) kept before the cells
    /// widen (docs/expiry-clusters.md: some 400 bytes each).
    pub expiry_buckets: usize,
    /// Entries per batch handed to a worker.
    pub batch_entries: usize,
    /// Which keys to cover.
    pub filter: KeyFilter,
    /// Told how far the walk has got (for progress bars); never changes the result.
    pub progress: Option<Progress>,
    /// Told what the report does not say of how an input was read; never
    /// changes the result.
    pub notes: Option<Notes>,
    /// Design-rule settings for the per-key rules (kept in [`crate::Settings`]).
    pub rules: RuleConfig,
    /// Read files of a version newer than any known (Redis 15+, Valkey 82+)
    /// with the newest layout known, up to the first type byte or opcode it
    /// does not have (`--skip-unknown`); the file then carries a warning.
    pub skip_unknown: bool,
    /// Dumps of at least this many bytes sum the allocator evidence over a
    /// sample of keys, inside the main pass; smaller ones key by key, in a
    /// pass of their own (`allocator` module). 64 MiB; tests lower it.
    pub sample_evidence_from: usize,
    /// Tests only: the separate allocator pass of `keys` settles on this
    /// quantum once this many batches are walked, whatever the evidence
    /// says (a dump small enough for a test never settles early), so that
    /// the walk confirming it can be overturned.
    #[doc(hidden)]
    pub settle_evidence_after: Option<(u64, u64)>,
    /// Values whose records take at least this many bytes, decoded by the
    /// settling pass of `keys`, are not decoded again by the walk that
    /// confirms it (4 KiB: 0.96 of `keys` time on the collection-heavy dump
    /// against 64 KiB; smaller values are few in the sample). Tests vary it.
    #[doc(hidden)]
    pub known_values_from: u64,
    /// The accumulators fed ([`Accumulators::ALL`] by default).
    pub accumulators: Accumulators,
}

impl Options {
    /// The worker threads a pass starts: `threads`, or every core when 0.
    pub fn worker_threads(&self) -> usize {
        if self.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            self.threads
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threads: 0,
            top: 20,
            separator: b':',
            prefix_depth: 2,
            now_ms: None,
            profile: None,
            quantum: None,
            config: Vec::new(),
            expiry_buckets: 65_536,
            batch_entries: 2048,
            filter: KeyFilter::default(),
            progress: None,
            notes: None,
            rules: RuleConfig::default(),
            skip_unknown: false,
            sample_evidence_from: SAMPLE_EVIDENCE_FROM,
            settle_evidence_after: None,
            known_values_from: 4 * 1024,
            accumulators: Accumulators::ALL,
        }
    }
}

// How options become the settings a summary records: here, beside the
// options, so that the settings (which every accumulator is made from)
// do not depend on them.
impl Shaping {
    /// The shaping options of `opts`, normalized (sorted, deduplicated,
    /// encoding limits by their listpack name) so that equivalent command
    /// lines compare equal.
    pub fn of(opts: &Options) -> Self {
        let mut dbs = opts.filter.dbs.clone();
        dbs.sort_unstable();
        dbs.dedup();
        let mut types: Vec<String> = opts.filter.kinds.iter().map(|k| k.name().to_string()).collect();
        types.sort();
        types.dedup();
        let mut limits = BTreeMap::new();
        for (name, value) in &opts.config {
            // Only encoding limits change the estimates; other directives
            // (maxmemory-policy...) reach the audit through its settings.
            let mut scratch = Limits::defaults_for(Family::Redis, ServerVersion::new(7, 2, 0));
            if scratch.set(name, value) == Ok(true) {
                let name = name
                    .trim()
                    .to_ascii_lowercase()
                    .replace("-ziplist-", "-listpack-");
                limits.insert(name, value.trim().to_ascii_lowercase());
            }
        }
        Shaping {
            dbs,
            types,
            pattern: opts.filter.pattern.as_deref().map(KeyName::new),
            prefix: opts.filter.prefix.as_deref().map(KeyName::new),
            target: opts.profile.as_ref().map(|p| p.name()),
            jemalloc_quantum: opts.quantum,
            limits,
            now_ms: opts.now_ms,
            key_filters: key_filters(&opts.filter),
        }
    }
}

impl Settings {
    /// The settings `opts` gives a file whose reference time is `now_ms`.
    pub fn of(opts: &Options, now_ms: i64) -> Self {
        Settings {
            top: opts.top,
            separator: opts.separator,
            prefix_depth: opts.prefix_depth,
            now_ms,
            expiry_buckets: opts.expiry_buckets,
            rules: opts.rules.clone(),
            shaping: Shaping::of(opts),
        }
    }
}
