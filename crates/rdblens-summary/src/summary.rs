//! The summary of one or more files: per-file information plus every
//! accumulator. Mergeable and serializable, so shards of a cluster can be
//! analysed on their own hosts and merged.

use crate::acc::empty::{is_dropped_on_load, EmptyCollections};
use std::collections::BTreeMap;

use rdblens_memory::{Encoding, Profile};
use rdblens_parser::TypeKind;
use serde::{Deserialize, Serialize};

use crate::acc::counter::{merge_map, Counter};
use crate::acc::groups::Groups;
use crate::acc::hist::Histogram;
use crate::acc::registry::{CheckContext, KeyAccumulator, KeyInput};
use crate::acc::sizes::ValueSizes;
use crate::acc::Accumulate;
use crate::checker::{CheckError, Checked, Checker};
use crate::facts::KeyFacts;
use crate::keyshape::KeyShape;
use crate::settings::{join_differences, Difference, Settings};
use crate::shard::ShardStats;
use crate::used_memory::{UsedMemory, UsedMemorySums};

pub use crate::acc::SUMMARY_VERSION;

/// LZF use across string values and blobs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compression {
    /// Keys whose value holds at least one LZF-compressed string or blob.
    pub compressed_values: u64,
    /// Bytes those compressed strings and blobs take in the file.
    pub stored_bytes: u64,
    /// Bytes the same strings and blobs take once decompressed.
    pub uncompressed_bytes: u64,
}

/// Damage found while decoding a value; the walk goes on past it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Damage {
    /// Byte offset in the file where the damage was found.
    pub offset: u64,
    /// The parser's error: what is wrong, at which offset, in which key.
    pub message: String,
}

/// Declares [`KeyStats`] (the figures every report shows, then the
/// registered optional accumulators, then the damage) and [`Accumulators`]
/// (a flag per optional accumulator) from the registry's list
/// (`acc::optional_accumulators!`), with what runs over every optional
/// accumulator: set-up, fold, finish, merge and check.
macro_rules! declare_key_stats {
    ($( $(#[$doc:meta])* $field:ident : $ty:ty, )*) => {
        /// Everything gathered from the keys.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        pub struct KeyStats {
            /// Every key the filters admitted whose value decoded, summed.
            pub totals: Counter,
            /// Sums per database number.
            pub databases: BTreeMap<u64, Counter>,
            /// Sums by type name: `string`, `hash`..., `module:<name>` for module values.
            pub types: Groups<Counter>,
            /// By "type encoding", e.g. "hash listpack" (encoding after load on the target server).
            pub encodings: Groups<Counter>,
            /// By on-disk type name, e.g. "hash_listpack".
            pub rdb_types: Groups<Counter>,
            /// Element counts per type.
            pub elements: Groups<Histogram>,
            /// Value sizes per type, for percentiles (absent from summaries of
            /// versions before it: empty there).
            #[serde(default)]
            pub value_sizes: Groups<ValueSizes>,
            /// LZF compression across the keys' strings and blobs.
            pub compression: Compression,
            /// What the keys add to `used_memory` (absent from summaries of
            /// versions before it: zero there, and their files carry no prediction).
            #[serde(default)]
            pub used_memory: UsedMemorySums,
            $( $(#[$doc])* pub $field: $ty, )*
            /// Lists, sets, sorted sets and hashes with no element, which a server
            /// drops on load: counted here and in no other figure (absent from
            /// summaries of versions before it: none there).
            #[serde(default)]
            pub empty: EmptyCollections,
            /// The accumulators this run fed; the others stay empty. Not written
            /// to summaries (a summary is always made with all of them).
            #[serde(skip)]
            pub kept: Accumulators,
            /// Keys whose value could not be decoded.
            pub damaged_keys: u64,
            /// The first [`DAMAGE_KEPT`] of those keys' damage records, by offset.
            pub damage: Vec<Damage>,
        }

        /// Which of the optional accumulators a run feeds. The totals,
        /// databases, types, encodings, element counts, value sizes,
        /// compression and empty collections are always kept (every report
        /// shows them); each of the others serves some report sections
        /// only, and costs per key (together a fifth to a third of a
        /// report's cycles), so a run that shows fewer sections can leave
        /// them empty. Summaries, merges, audits and HTML pages need
        /// [`Accumulators::ALL`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Accumulators {
            $( $(#[$doc])* pub $field: bool, )*
        }

        impl Accumulators {
            /// Every accumulator: what a summary holds.
            pub const ALL: Accumulators = Accumulators { $( $field: true, )* };

            /// None of the optional ones (the always-kept figures only).
            pub const NONE: Accumulators = Accumulators { $( $field: false, )* };

            /// Each flag of `self` and `o` joined by `op`.
            pub(crate) fn zip(self, o: Accumulators, op: fn(bool, bool) -> bool) -> Accumulators {
                Accumulators { $( $field: op(self.$field, o.$field), )* }
            }

            /// Whether a kept accumulator reads element lengths: the limit
            /// checks, the rules (payload, longest element), and every list
            /// of key records (each shows its key's longest element).
            /// Without, the compact blobs the target keeps as stored need no
            /// walk, only their header's count
            /// (`Estimator::counting_by_header`).
            pub fn read_lengths(&self) -> bool {
                false $( || (self.$field && <$ty as KeyAccumulator>::READS_LENGTHS) )*
            }

            /// Whether a kept accumulator keeps lists of key records
            /// `--top` long (the big keys, the limits' examples, the
            /// access and heat lists): held in memory and printed whole.
            pub fn keep_top_lists(&self) -> bool {
                false $( || (self.$field && <$ty as KeyAccumulator>::KEEPS_TOP_LISTS) )*
            }
        }

        impl KeyStats {
            /// Empty statistics, sized and shaped by `s`.
            pub fn new(s: &Settings) -> Self {
                KeyStats {
                    totals: Counter::default(),
                    databases: BTreeMap::new(),
                    types: Groups::default(),
                    encodings: Groups::default(),
                    rdb_types: Groups::default(),
                    elements: Groups::default(),
                    value_sizes: Groups::default(),
                    compression: Compression::default(),
                    used_memory: UsedMemorySums::default(),
                    $( $field: <$ty as KeyAccumulator>::new(s), )*
                    empty: EmptyCollections::default(),
                    kept: Accumulators::ALL,
                    damaged_keys: 0,
                    damage: Vec::new(),
                }
            }

            /// Folds a key into the optional accumulators `kept` names.
            #[inline]
            fn add_kept(&mut self, key: &mut KeyInput<'_, '_>) {
                let kept = self.kept;
                $( if kept.$field { self.$field.add_key(key); } )*
            }

            /// Completes what the optional accumulators buffer.
            fn finish_kept(&mut self) {
                $( Accumulate::finish(&mut self.$field); )*
            }

            /// Folds in another worker's or file's statistics; counts add up saturating.
            pub fn merge(&mut self, mut o: KeyStats) {
                self.kept = self.kept.both(o.kept);
                self.merge_always(&mut o);
                $( Accumulate::merge(&mut self.$field, o.$field); )*
                self.empty.merge(o.empty);
                self.damaged_keys = self.damaged_keys.saturating_add(o.damaged_keys);
                self.damage.extend(o.damage);
                self.damage.sort_by_key(|d| d.offset);
                self.damage.truncate(DAMAGE_KEPT);
            }

            /// Checks the optional accumulators this run kept (the others
            /// stay empty; a summary read from a file has them all).
            pub(crate) fn check_kept(&self, c: &mut Checker, ctx: &CheckContext<'_>) -> Checked {
                $( if self.kept.$field {
                    c.at(stringify!($field), |c| self.$field.check(c, ctx))?;
                } )*
                Ok(())
            }
        }
    };
}

crate::acc::optional_accumulators!(declare_key_stats);

/// Damage records kept (the first by offset).
pub const DAMAGE_KEPT: usize = 10;

impl KeyStats {
    /// Expiry clusters at their own resolution, namespaces named from the
    /// prefix tree (docs/expiry-clusters.md).
    pub fn expiry_clusters(
        &self,
        rule: crate::acc::expiry::ClusterRule,
    ) -> Vec<crate::acc::expiry::ExpiryCluster> {
        crate::acc::expiry::detect_clusters(&self.expiry, rule, &self.prefixes.names())
    }

    /// Folds one decoded key into every accumulator; call [`KeyStats::finish`] after the last.
    pub fn add(&mut self, f: &KeyFacts<'_>) {
        if is_dropped_on_load(f.kind, f.elements) {
            // Not a key the server would have: named apart, counted nowhere else.
            return self.add_empty(f);
        }
        self.totals.add(f);
        self.databases.entry(f.db).or_default().add(f);
        // Names are static for all but module types: no allocation per key.
        match &f.module {
            None => self.types.slot_static(f.kind.name()).add(f),
            Some(_) => self.types.slot(&f.type_name()).add(f),
        }
        match type_encoding_name(f.kind, f.encoding) {
            Some(name) => self.encodings.slot_static(name).add(f),
            None => self
                .encodings
                .slot(&format!("{} {}", f.kind.name(), f.encoding.as_str()))
                .add(f),
        }
        self.rdb_types.slot_static(f.rdb_type).add(f);
        self.elements.slot_static(f.kind.name()).add(f.elements);
        self.value_sizes.slot_static(f.kind.name()).add(f);
        self.used_memory.add(f, self.ttl.now_ms);
        if f.lzf_stored_bytes > 0 {
            self.compression.compressed_values += 1;
            self.compression.stored_bytes += f.lzf_stored_bytes;
            self.compression.uncompressed_bytes += f.lzf_uncompressed_bytes;
        }
        // A key in several lists of key records is stored once; one pass
        // over the key's bytes serves every name check.
        let mut record = None;
        let shape = KeyShape::of(f.key, self.key_names.separator);
        self.add_kept(&mut KeyInput {
            facts: f,
            shape: &shape,
            record: &mut record,
        });
    }

    /// These statistics, feeding only the accumulators `kept` names.
    pub fn keeping(mut self, kept: Accumulators) -> Self {
        self.kept = kept;
        self
    }

    /// Rare (old server bugs): kept out of line, off the per-key path.
    #[cold]
    #[inline(never)]
    fn add_empty(&mut self, f: &KeyFacts<'_>) {
        self.empty.add(f);
    }

    /// Completes what `add` buffers (the expiry histogram's pending keys);
    /// call once the keys are added, before reading. Merging does it too.
    pub fn finish(&mut self) {
        self.finish_kept();
    }

    /// Counts a key whose value could not be decoded, keeping the first [`DAMAGE_KEPT`] records by offset.
    pub fn add_damage(&mut self, d: Damage) {
        self.damaged_keys += 1;
        self.damage.push(d);
        self.damage.sort_by_key(|d| d.offset);
        self.damage.truncate(DAMAGE_KEPT);
    }

    /// Merges the figures every report shows (`merge` does the rest).
    fn merge_always(&mut self, o: &mut KeyStats) {
        use std::mem::take;
        self.totals.merge(&o.totals);
        merge_map(&mut self.databases, take(&mut o.databases));
        self.types.merge_with(take(&mut o.types), |a, b| a.merge(&b));
        self.encodings
            .merge_with(take(&mut o.encodings), |a, b| a.merge(&b));
        self.rdb_types
            .merge_with(take(&mut o.rdb_types), |a, b| a.merge(&b));
        self.elements.merge_with(take(&mut o.elements), |a, b| a.merge(b));
        self.value_sizes
            .merge_with(take(&mut o.value_sizes), |a, b| a.merge(&b));
        // Saturating: summaries come from files; a total past the bound
        // is refused by the check after the merge (`Summary::merge`).
        let c = &mut self.compression;
        c.compressed_values = c
            .compressed_values
            .saturating_add(o.compression.compressed_values);
        c.stored_bytes = c.stored_bytes.saturating_add(o.compression.stored_bytes);
        c.uncompressed_bytes = c
            .uncompressed_bytes
            .saturating_add(o.compression.uncompressed_bytes);
        self.used_memory.merge(&o.used_memory);
    }
}

/// "type encoding" for the combinations servers produce.
fn type_encoding_name(kind: TypeKind, encoding: Encoding) -> Option<&'static str> {
    use Encoding as E;
    use TypeKind as K;
    Some(match (kind, encoding) {
        (K::String, E::Int) => "string int",
        (K::String, E::Embstr) => "string embstr",
        (K::String, E::Raw) => "string raw",
        (K::List, E::Listpack) => "list listpack",
        (K::List, E::Quicklist) => "list quicklist",
        (K::List, E::Ziplist) => "list ziplist",
        (K::List, E::Linkedlist) => "list linkedlist",
        (K::Set, E::Intset) => "set intset",
        (K::Set, E::Listpack) => "set listpack",
        (K::Set, E::Hashtable) => "set hashtable",
        (K::ZSet, E::Listpack) => "zset listpack",
        (K::ZSet, E::Ziplist) => "zset ziplist",
        (K::ZSet, E::Skiplist) => "zset skiplist",
        (K::Hash, E::Listpack) => "hash listpack",
        (K::Hash, E::ListpackEx) => "hash listpackex",
        (K::Hash, E::Ziplist) => "hash ziplist",
        (K::Hash, E::Zipmap) => "hash zipmap",
        (K::Hash, E::Hashtable) => "hash hashtable",
        (K::Stream, E::Stream) => "stream stream",
        (K::Stream, E::Unknown) => "stream unknown",
        (K::Module, E::Raw) => "module raw",
        _ => return None,
    })
}

/// The allocator build the estimates assume (`rdblens_memory::allocator`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocatorInfo {
    /// `bundled jemalloc` or `system jemalloc`.
    pub allocator: String,
    /// jemalloc quantum: 8 or 16.
    pub quantum: u64,
    /// `flag` (`--jemalloc-quantum`), `used-mem` (detected: only one
    /// build's prediction fits the dump's used-mem), `nearer` (both fit,
    /// or neither: the build whose prediction is nearer) or `unclear` (no
    /// evidence: the default, bundled jemalloc, assumed).
    pub basis: rdblens_memory::allocator::Basis,
    /// Why, in one sentence.
    pub reason: String,
    /// The report's words: "assumed: system jemalloc, quantum 16: ...".
    pub description: String,
    /// `used_memory` the evidence predicts with quantum 8 and with 16,
    /// side by side, when it was summed (`used-mem` and `nearer`): from a
    /// sample of the keys on dumps of 64 MiB or more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_q8: Option<u64>,
    /// As `predicted_q8`, with quantum 16.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_q16: Option<u64>,
}

impl AllocatorInfo {
    /// The summary's record of an allocator choice.
    pub fn of(c: &rdblens_memory::allocator::Choice) -> Self {
        AllocatorInfo {
            allocator: c.allocator().to_string(),
            quantum: c.quantum,
            basis: c.basis,
            reason: c.reason.clone(),
            description: c.describe(),
            predicted_q8: c.predicted.map(|p| p[0]),
            predicted_q16: c.predicted.map(|p| p[1]),
        }
    }
}

/// The expected accuracy for the profile's release line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccuracyInfo {
    /// `redis-7.0`, `valkey-8.1`.
    pub line: String,
    /// `verified` (against a real server's fixture), `modelled` (from
    /// source only) or `encodings-only` (before Redis 4.0).
    pub level: rdblens_memory::AccuracyLevel,
    /// The fixtures that verify the line.
    pub fixtures: Vec<String>,
    /// One sentence for the report on what the estimates are worth.
    pub statement: String,
}

impl AccuracyInfo {
    /// The summary's record of a release line's accuracy.
    pub fn of(a: &rdblens_memory::Accuracy) -> Self {
        AccuracyInfo {
            line: a.line.clone(),
            level: a.level,
            fixtures: a.fixtures.iter().map(|f| f.to_string()).collect(),
            statement: a.statement.clone(),
        }
    }
}

/// Whether a file's bytes hash to the CRC-64 it ends with. Written to
/// summaries and reports as the lowercase name (`"valid"`...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Checksum {
    /// The stored checksum matches the file's bytes.
    Valid,
    /// The stored checksum does not match: the file is damaged.
    Mismatch,
    /// Written with `rdbchecksum no` (the stored checksum is zero).
    Disabled,
    /// RDB versions before 5 store none.
    Absent,
    /// The walk stopped before the end of the file.
    Unknown,
}

impl Checksum {
    /// The name written to summaries and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Checksum::Valid => "valid",
            Checksum::Mismatch => "mismatch",
            Checksum::Disabled => "disabled",
            Checksum::Absent => "absent",
            Checksum::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for Checksum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The two checksums of a damaged file, and where the stored one is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChecksumMismatch {
    /// The CRC-64 the file ends with.
    pub stored: u64,
    /// The CRC-64 of the file's bytes before it.
    pub computed: u64,
    /// The offset of the EOF opcode the stored checksum follows.
    pub eof_offset: u64,
}

impl std::fmt::Display for ChecksumMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "checksum mismatch: the file stores 0x{:016x} (after the EOF byte at offset {}), its bytes \
             hash to 0x{:016x}: the file is damaged and some figures may be wrong",
            self.stored, self.eof_offset, self.computed
        )
    }
}

/// What a file is, besides its keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileInfo {
    /// The file's path as given (`HOST:PATH` once merged with a same-named file from another host).
    pub path: String,
    /// File size in bytes.
    pub size: u64,
    /// `Redis` or `Valkey`: who wrote the file, from its header.
    pub dialect: String,
    /// RDB format version, from the header.
    pub rdb_version: u32,
    /// The file's aux fields (`redis-ver`, `ctime`, `used-mem`...), name to value.
    pub aux: BTreeMap<String, String>,
    /// Whether the file's bytes hash to the checksum it ends with.
    pub checksum: Checksum,
    /// The two checksums and where the stored one is, when they differ
    /// (absent in summaries written before rdblens recorded them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum_mismatch: Option<ChecksumMismatch>,
    /// The server release memory and encodings were estimated for
    /// (written as its name, `redis-7.2.4`).
    pub profile: rdblens_memory::ServerRelease,
    /// The allocator build the estimates assume, and why (absent in
    /// summaries written before rdblens detected it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocator: Option<AllocatorInfo>,
    /// What the estimates for the profile's release line are worth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<AccuracyInfo>,
    /// Key entries walked, before any filter (keys whose value is damaged included).
    pub keys: u64,
    /// Function library records (Redis 7 functions, pre-GA form included) in the file.
    pub functions: u64,
    /// Module aux records in the file.
    pub module_aux: u64,
    /// Why and where the walk stopped, when the file is damaged or truncated.
    pub incomplete: Option<Damage>,
    /// What is wrong with the file without stopping the walk: a checksum
    /// mismatch, a version newer than known read with `skip_unknown`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The file's own figures, for the per-shard breakdown of a combined report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardStats>,
    /// `used_memory` predicted for the target server once it has loaded
    /// the file; absent when key filters left keys out or the walk stopped
    /// early (and in summaries of versions before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_memory: Option<UsedMemory>,
}

/// The `used-mem` AUX field: the writer's `used_memory` when it saved,
/// `None` when absent or not a number.
pub fn aux_used_mem(aux: &BTreeMap<String, String>) -> Option<u64> {
    aux.get("used-mem").and_then(|v| v.parse::<u64>().ok())
}

impl FileInfo {
    /// The writer's `used_memory` when it saved (the `used-mem` AUX field).
    pub fn used_mem(&self) -> Option<u64> {
        aux_used_mem(&self.aux)
    }

    /// What is wrong with the file's checksum, one sentence naming both
    /// checksums and the offset (summaries written before they were
    /// recorded say less); `None` unless it is a mismatch.
    pub fn checksum_problem(&self) -> Option<String> {
        (self.checksum == Checksum::Mismatch).then(|| match &self.checksum_mismatch {
            Some(m) => m.to_string(),
            None => "checksum mismatch: the file is damaged (`rdblens check` shows the values)".into(),
        })
    }

    /// With the per-shard figures of `keys`, this file's statistics.
    pub fn with_shard(mut self, keys: &KeyStats) -> Self {
        self.shard = Some(ShardStats::of(keys));
        self
    }

    /// With the `used_memory` `profile`'s server would hold after loading
    /// the keys of `keys`, every key of the file (no filter, a whole walk).
    pub fn with_used_memory(mut self, profile: &Profile, keys: &KeyStats) -> Self {
        self.used_memory = Some(UsedMemory::predict(profile, &keys.used_memory, &keys.databases));
        self
    }
}

/// The result of an analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Layout version the summary was written with ([`SUMMARY_VERSION`] for this build).
    pub summary_version: u32,
    /// The settings every file was analysed with.
    pub settings: Settings,
    /// The files analysed, in the order they were analysed or merged.
    pub files: Vec<FileInfo>,
    /// The keys of all the files together.
    pub keys: KeyStats,
}

impl Summary {
    /// Merges another summary made with the same settings (the whole
    /// contract of [`Settings::differences`]: a summary made with other
    /// filters, another target or other limits is refused). Counts add up
    /// saturating, and the result passes [`Summary::check`]: a total past
    /// the bound of summaries ([`MAX_COUNT`](crate::MAX_COUNT)) is an error
    /// naming the field, never a wrapped figure. After a settings error the
    /// summary is unchanged; after an invalid result it holds that result
    /// (drop it).
    pub fn merge(&mut self, other: Summary) -> Result<(), MergeError> {
        let differences = self.settings.differences(&other.settings);
        if !differences.is_empty() {
            return Err(MergeError::Settings(differences));
        }
        self.files.extend(other.files);
        self.keys.merge(other.keys);
        self.check().map_err(MergeError::Invalid)
    }
}

/// Why two summaries cannot be merged.
#[derive(Debug)]
pub enum MergeError {
    /// They were made with other settings (a usage problem).
    Settings(Vec<Difference>),
    /// The merged summary is not valid: a total past the bound, or an
    /// input that was not checked.
    Invalid(CheckError),
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::Settings(d) => write!(
                f,
                "summaries were made with different settings: {}",
                join_differences(d)
            ),
            MergeError::Invalid(e) => write!(f, "the merged summary: {e}"),
        }
    }
}

impl std::error::Error for MergeError {}
