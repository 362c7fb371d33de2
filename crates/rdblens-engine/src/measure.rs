//! How a key's facts are measured: one decoding pass of its value
//! ([`Measure`], a [`ValueVisitor`]) beside the memory model's estimate,
//! for one target or for two at once (the two allocator builds a stream
//! cannot go back to choose between).

use rdblens_memory::{Estimate, Estimator};
use rdblens_parser::{
    BlobSummary, Element, Entry, NodeInfo, RdbString, Result, Scratch, TypeKind, ValueStats, ValueVisitor,
};
use rdblens_summary::slot::key_slot;
use rdblens_summary::{check_limits, KeyFacts};

/// Value measurements beyond [`ValueStats`] that limit checks need.
#[derive(Clone, Copy, Default)]
pub(crate) struct Measure {
    pub stats: ValueStats,
    /// Every member is a canonical integer (intset-eligible sets).
    pub all_int: bool,
    pub seen_member: bool,
    /// Whether `all_int` matters (sets only): saves an integer parse per
    /// element of every other type.
    pub want_int: bool,
    /// Blobs the target keeps as stored may be counted by their header
    /// (`Estimator::counting_by_header`): no lengths, no `all_int`.
    pub header_counts: bool,
    /// The integer of a string value the file stores as one.
    pub int_value: Option<i64>,
}

impl Measure {
    /// Empty measurements for `entry`'s value.
    pub(crate) fn for_entry(entry: &Entry<'_>) -> Self {
        Measure {
            want_int: entry.kind() == TypeKind::Set,
            ..Measure::default()
        }
    }
}

impl ValueVisitor for Measure {
    fn string(&mut self, value: RdbString<'_>) {
        if let RdbString::Int(v) = value {
            self.int_value = Some(v);
        }
        self.stats.string(value)
    }
    fn node(&mut self, node: &NodeInfo) {
        self.stats.node(node)
    }
    fn member(&mut self, member: Element<'_>) {
        if self.want_int {
            if !self.seen_member {
                self.all_int = true;
                self.seen_member = true;
            }
            self.all_int = self.all_int && member.as_int().is_some();
        }
        self.stats.member(member)
    }
    fn scored(&mut self, member: Element<'_>, score: f64) {
        self.stats.scored(member, score)
    }
    fn summary_only(&self) -> bool {
        true
    }
    fn counts_by_header(&self) -> bool {
        self.header_counts
    }
    fn header_suffices(&self, _node: &rdblens_parser::NodeInfo) -> bool {
        self.header_counts
    }
    fn summary(&mut self, summary: &BlobSummary) {
        if self.want_int && summary.elements > 0 {
            self.all_int = summary.all_int && (self.all_int || !self.seen_member);
            self.seen_member = true;
        }
        self.stats.summary(summary)
    }
    fn field(&mut self, field: Element<'_>, value: Element<'_>, expire_ms: Option<i64>) {
        self.stats.field(field, value, expire_ms)
    }
    fn stream(&mut self, stream: &rdblens_parser::StreamValue<'_>) {
        self.stats.stream(stream)
    }
    fn stream_entry(&mut self, id: rdblens_parser::StreamId, pairs: &[(Element<'_>, Element<'_>)]) {
        self.stats.stream_entry(id, pairs)
    }
    fn module(&mut self, module: &rdblens_parser::ModuleValue<'_>) {
        self.stats.module(module)
    }
    fn array_item(&mut self, index: u64, item: rdblens_parser::ArrayItem<'_>) {
        self.stats.array_item(index, item)
    }
}

/// Computes the facts of one entry. `key` is the entry's key bytes.
pub fn key_facts<'k>(
    entry: &Entry<'_>,
    key: &'k [u8],
    estimator: &Estimator<'_>,
    scratch: &mut Scratch,
) -> Result<KeyFacts<'k>> {
    let mut measure = Measure {
        header_counts: estimator.counts_by_header(),
        ..Measure::for_entry(entry)
    };
    let estimate = estimator.estimate_with(entry, scratch, &mut measure)?;
    Ok(facts_of(entry, key, estimator.profile(), estimate, measure))
}

/// As [`key_facts`], also estimating the key for `other`'s target in the
/// same decoding: the facts, and both estimates (this target's, `other`'s).
pub(crate) fn key_facts_pair<'k>(
    entry: &Entry<'_>,
    key: &'k [u8],
    estimator: &Estimator<'_>,
    other: &Estimator<'_>,
    scratch: &mut Scratch,
) -> Result<(KeyFacts<'k>, Estimate, Estimate)> {
    let mut measure = Measure {
        header_counts: estimator.counts_by_header() && other.counts_by_header(),
        ..Measure::for_entry(entry)
    };
    let (mine, theirs) = estimator.estimate_pair_with(other, entry, scratch, &mut measure)?;
    let facts = facts_of(entry, key, estimator.profile(), mine.clone(), measure);
    Ok((facts, mine, theirs))
}

/// The facts of `entry` for two targets (`q8`'s and `q16`'s builds) from
/// one decoding, with what it adds to `used_memory` under each (its part
/// of the evidence; the estimates move into the facts, uncopied): a
/// stream, read once, folds every key for both builds until the evidence
/// decides between them.
pub(crate) fn key_facts_both<'k>(
    entry: &Entry<'_>,
    key: &'k [u8],
    q8: &Estimator<'_>,
    q16: &Estimator<'_>,
    scratch: &mut Scratch,
) -> Result<([KeyFacts<'k>; 2], [u64; 2])> {
    let mut measure = Measure {
        header_counts: q8.counts_by_header() && q16.counts_by_header(),
        ..Measure::for_entry(entry)
    };
    let (a8, a16) = q8.estimate_pair_with(q16, entry, scratch, &mut measure)?;
    let used = [a8.adds_to_used_memory(), a16.adds_to_used_memory()];
    let f8 = facts_of(entry, key, q8.profile(), a8, measure);
    let f16 = with_estimate(&f8, entry, q16.profile(), a16, measure);
    Ok(([f8, f16], used))
}

/// `facts` (of `entry`, for another build) with `estimate`, the estimate
/// for `profile`'s build: what facts_of would give, without working out
/// again what no build changes (the slot's hash, the type names).
fn with_estimate<'k>(
    facts: &KeyFacts<'k>,
    entry: &Entry<'_>,
    profile: &rdblens_memory::Profile,
    estimate: Estimate,
    measure: Measure,
) -> KeyFacts<'k> {
    let serialized_bytes = facts.serialized_bytes;
    let limit = if estimate.encoding == facts.encoding {
        facts.limit
    } else {
        check_limits(
            entry.kind(),
            estimate.encoding,
            &measure.stats,
            measure.all_int,
            profile,
        )
    };
    KeyFacts {
        encoding: estimate.encoding,
        memory: estimate.memory.unwrap_or(serialized_bytes),
        memory_estimated: estimate.memory.is_some(),
        compact_memory: estimate.compact_memory,
        keyspace_overhead: estimate.keyspace_overhead,
        bucket_share: estimate.bucket_share,
        value_rounding: estimate.allocator_slack,
        usage_overcount: estimate.usage_overcount,
        limit,
        shape: estimate.shape,
        ..facts.clone()
    }
}

/// The facts of `entry` from its estimate for `profile` and what its
/// decoding measured (here, or earlier: the allocator's settling pass).
pub(crate) fn facts_of<'k>(
    entry: &Entry<'_>,
    key: &'k [u8],
    profile: &rdblens_memory::Profile,
    estimate: Estimate,
    measure: Measure,
) -> KeyFacts<'k> {
    let stats = measure.stats;
    let serialized_bytes = entry.value.len() as u64;
    let limit = check_limits(entry.kind(), estimate.encoding, &stats, measure.all_int, profile);
    KeyFacts {
        db: entry.db,
        key,
        kind: entry.kind(),
        module: entry.module_id().map(|m| m.name()),
        rdb_type: entry.value_type.name(),
        encoding: estimate.encoding,
        elements: stats.elements,
        max_element_len: stats.max_element_len,
        payload_bytes: stats.payload_bytes,
        serialized_bytes,
        memory: estimate.memory.unwrap_or(serialized_bytes),
        memory_estimated: estimate.memory.is_some(),
        compact_memory: estimate.compact_memory,
        keyspace_overhead: estimate.keyspace_overhead,
        bucket_share: estimate.bucket_share,
        value_rounding: estimate.allocator_slack,
        usage_overcount: estimate.usage_overcount,
        expiry_ms: entry.expiry.map(|e| e.unix_ms),
        int_value: measure.int_value,
        idle_seconds: entry.idle_seconds,
        lfu_freq: entry.lfu_freq,
        ram_lru: entry.ram_lru,
        slot: key_slot(key),
        lzf_stored_bytes: stats.lzf_stored_bytes,
        lzf_uncompressed_bytes: stats.lzf_uncompressed_bytes,
        limit,
        shape: estimate.shape,
    }
}
