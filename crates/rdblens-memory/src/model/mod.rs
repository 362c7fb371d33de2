//! From the facts of one value to `MEMORY USAGE`: the per-type estimators
//! compute the value object (`objectComputeSize()`, or the tracked size on
//! Redis 8.4), this module adds the per-key part each version counts
//! (memory-model.md §1.2) and what it leaves out (§6).

pub(crate) mod hash;
pub(crate) mod keyspace;
pub(crate) mod list;
pub(crate) mod set;
pub(crate) mod stream;
pub(crate) mod string;
pub(crate) mod zset;

use rdblens_parser::{TypeKind, ValueType};

use crate::encoding::Encoding;
use crate::limits::Limits;
use crate::rules::{Era, Rules};
use crate::sds;
use crate::visitor::Facts;

/// What the estimators need besides the facts.
pub(crate) struct Ctx<'a> {
    pub rules: &'a Rules,
    pub limits: &'a Limits,
    pub value_type: ValueType,
    pub key_len: u64,
    pub ttl: bool,
    /// The object header the value is counted from: the 16-byte robj in
    /// the dictEntry eras and on Valkey 8.1, the kvobj (robj, expire, key)
    /// on Redis 8.4, the robj allocation with its key on Valkey 9.
    pub header: u64,
}

/// A value as the target would hold it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Value {
    pub encoding: Encoding,
    /// The value object, header included; `None` when unknowable (modules).
    pub object: Option<f64>,
    /// The object if the value were in the compact encoding instead.
    pub compact: Option<f64>,
}

impl Value {
    pub fn new(encoding: Encoding, object: f64) -> Value {
        Value {
            encoding,
            object: Some(object),
            compact: None,
        }
    }

    pub fn with_compact(mut self, compact: Option<f64>) -> Value {
        self.compact = compact;
        self
    }
}

/// `asize += (double)elesize/samples*count;` on a `size_t asize`, as
/// `objectComputeSize()` averages sampled elements. With every element
/// sampled the average times the count can land a hair under the sum, and
/// the conversion back to `size_t` truncates, so the server may report one
/// byte less than the exact sum; replaying the same double arithmetic gives
/// the same byte. Inputs that are already expectations are not truncated.
pub(crate) fn sampled(asize: f64, elesize: f64, samples: u64, count: u64) -> f64 {
    if samples == 0 {
        return asize;
    }
    let v = asize + elesize / samples as f64 * count as f64;
    if asize.fract() == 0.0 && elesize.fract() == 0.0 {
        v.trunc()
    } else {
        v
    }
}

/// The object header for the target (see [`Ctx::header`]).
pub(crate) fn object_header(rules: &Rules, key_len: u64, ttl: bool) -> u64 {
    match rules.era {
        Era::Legacy | Era::Dict => 16,
        Era::Kvobj => kvobj_header(rules, key_len, ttl),
        Era::ValkeyObject if rules.vk_robj_counts_key => {
            // createUnembeddedObjectWithKeyAndExpire: robj, expire (kept
            // for long keys too), 1-byte header size, key sds.
            let expire = ttl || key_len >= 128;
            rules.j(16 + if expire { 8 } else { 0 } + 1 + sds::embedded(key_len, true))
        }
        Era::ValkeyObject => 16,
    }
}

/// Redis 8.4 `kvobjCreate`: robj, optional expire, 1-byte header size, key
/// sds. The size counted is the request, not rounded; when the allocation
/// has room for an expire anyway, the expire field is added (8 bytes more).
pub(crate) fn kvobj_header(rules: &Rules, key_len: u64, ttl: bool) -> u64 {
    let expire = ttl || key_len >= 128;
    let base = 16 + if expire { 8 } else { 0 } + 1 + sds::embedded(key_len, true);
    if !expire && rules.j(base) >= base + 8 {
        base + 8
    } else {
        base
    }
}

/// Estimates the value object.
pub(crate) fn value(facts: &Facts, ctx: &Ctx<'_>) -> Value {
    if facts.module {
        // A module reports what its mem_usage callback says, or nothing.
        return Value {
            encoding: Encoding::Raw,
            object: None,
            compact: None,
        };
    }
    match ctx.value_type.kind() {
        TypeKind::String => string::estimate(facts, ctx),
        TypeKind::List => list::estimate(facts, ctx),
        TypeKind::Set => set::estimate(facts, ctx),
        TypeKind::ZSet => zset::estimate(facts, ctx),
        TypeKind::Hash if ctx.value_type == ValueType::ValkeyPathHash => unknown(),
        TypeKind::Hash => hash::estimate(facts, ctx),
        TypeKind::Stream => stream::estimate(facts, ctx),
        TypeKind::Module => Value {
            encoding: Encoding::Raw,
            object: None,
            compact: None,
        },
        // Redis 8.8 arrays: no model yet.
        TypeKind::Array => unknown(),
    }
}

fn unknown() -> Value {
    Value {
        encoding: Encoding::Unknown,
        object: None,
        compact: None,
    }
}

/// `MEMORY USAGE` for an object: the object plus, in the dictEntry eras,
/// the key sds and the entry (memory-model.md §1.2).
pub(crate) fn memory_usage(object: f64, ctx: &Ctx<'_>) -> u64 {
    let r = ctx.rules;
    let key_part = match r.era {
        Era::Legacy => r.key_sds(ctx.key_len) + 24,
        Era::Dict if r.vk_key_in_entry => {
            // Valkey 8.0 dictEntryEmbedded: value, next, header-offset byte
            // and the key sds copied in.
            r.j(17 + sds::request(ctx.key_len, true))
        }
        Era::Dict => r.key_sds(ctx.key_len) + 24 + if r.cluster { r.cluster_extra } else { 0 },
        Era::Kvobj | Era::ValkeyObject => 0,
    };
    let total = object + key_part as f64;
    if total <= 0.0 {
        0
    } else {
        total.round() as u64
    }
}

/// Allocator rounding `objectComputeSize()` leaves out in the dictEntry
/// eras: it counts dict entries (24), quicklist nodes and the quicklist
/// (40) and the dict struct (56) by `sizeof`, while the allocator hands out
/// its size class (32, 48 and 64 on a quantum-16 build; the same on q8);
/// plus [`allocation_gap`] where the value allocates more than it counts.
pub(crate) fn allocator_slack(facts: &Facts, encoding: crate::Encoding, ctx: &Ctx<'_>) -> u64 {
    let r = ctx.rules;
    if !matches!(r.era, Era::Legacy | Era::Dict) {
        return 0;
    }
    let round = |n: u64| r.j(n) - n;
    let rounding = match encoding {
        // Members in the bucket or 16-byte entries: `allocation_gap`.
        crate::Encoding::Hashtable if novalue_set_table(encoding, ctx) => round(r.dict),
        crate::Encoding::Hashtable | crate::Encoding::Skiplist if !r.vk_set_novalue => {
            facts.count * round(24) + round(r.dict)
        }
        crate::Encoding::Quicklist => (facts.list.nodes + 1) * round(r.ql_node),
        _ => 0,
    };
    rounding + allocation_gap(facts, encoding, ctx).max(0) as u64
}

/// What `MEMORY USAGE` counts inside the value that the server does not
/// allocate: [`allocation_gap`] where it is negative (strings:
/// `string::shared_overcount`).
pub(crate) fn usage_overcount(facts: &Facts, encoding: crate::Encoding, ctx: &Ctx<'_>) -> u64 {
    allocation_gap(facts, encoding, ctx).min(0).unsigned_abs()
}

/// What the value allocates minus what `MEMORY USAGE` counts for it,
/// where they differ by more than rounding: a stream up to Redis 8.0 (its
/// raxes counted roughly, either way), a set's table on Redis 7.2-8.0 and
/// Valkey 7.2 (a 24-byte entry counted per member, where only chained
/// members have one, of 16 bytes).
fn allocation_gap(facts: &Facts, encoding: crate::Encoding, ctx: &Ctx<'_>) -> i64 {
    if novalue_set_table(encoding, ctx) {
        let allocated = set::novalue_entries(facts.count).round() as i64;
        return allocated - (24 * facts.count) as i64;
    }
    facts.stream.as_ref().map_or(0, |s| s.allocation_gap(ctx.rules))
}

/// A set's table whose members sit in its buckets while `MEMORY USAGE`
/// counts an entry each (`Rules::set_novalue_uncounted`).
fn novalue_set_table(encoding: crate::Encoding, ctx: &Ctx<'_>) -> bool {
    encoding == crate::Encoding::Hashtable
        && ctx.rules.set_novalue_uncounted
        && ctx.value_type.kind() == rdblens_parser::TypeKind::Set
}
