//! Plans for one big key: hash buckets (hash, set, sorted set), index
//! ranges (list), parts (string) or several streams, priced from the
//! shape the analysis kept for the key.

use rdblens_audit::text;
use rdblens_memory::{
    keyspace_overhead, price_range, Encoding, Family, Limit, Profile, ServerVersion, Shape,
};
use rdblens_parser::TypeKind;
use rdblens_summary::acc::rules::{namespace_of, KeyHit};
use rdblens_summary::rules::{RuleConfig, RuleId, Severity};
use rdblens_summary::{KeyName, Summary};

use crate::plan::{BucketLimit, Plan, PlanKind, Scheme};
use crate::sizing::{self, digit_groups, expected_price, fullest, GROWTH};
use crate::tables::{self, Keys};
use crate::{migrate, zsets};

/// The listed hit that kept the key's shape.
fn find_hit<'s>(summary: &'s Summary, db: u64, key: &[u8], rules: &[RuleId]) -> Option<&'s KeyHit> {
    rules.iter().find_map(|rule| {
        summary.keys.rules.rules.get(rule).and_then(|t| {
            t.listed
                .items
                .iter()
                .find(|h| h.db == db && h.key.as_bytes() == key && h.shape.is_some())
        })
    })
}

/// The kind of a type name a plan can be made for (not modules or arrays).
fn kind_of(type_name: &str) -> Option<TypeKind> {
    TypeKind::from_name(type_name).filter(|k| !matches!(k, TypeKind::Module | TypeKind::Array))
}

/// The non-empty text between the first `{` and the next `}`, if any.
pub(crate) fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let close = key[open + 1..].iter().position(|&b| b == b'}')?;
    (close > 0).then(|| &key[open + 1..open + 1 + close])
}

/// Everything the pricing of one split needs.
pub(crate) struct Split<'a> {
    target: &'a Profile,
    kind: TypeKind,
    pub(crate) shape: Shape,
    /// Length of the bucket name without its number.
    stem_len: u64,
    ttl: bool,
}

/// What a set of new keys costs, summed.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cost {
    /// Their `MEMORY USAGE`.
    pub usage: u64,
    /// The keyspace overhead `MEMORY USAGE` leaves out.
    pub keyspace: u64,
    /// What creating them adds to `used_memory` (the keyspace bucket
    /// arrays aside, which a few keys more or less do not resize).
    pub used: u64,
}

impl Split<'_> {
    /// A bucket of `part` elements spread like the whole (by a hash).
    pub(crate) fn estimate(&self, part: u64, key_len: u64) -> rdblens_memory::Estimate {
        self.estimate_range(None, part, key_len)
    }

    /// A bucket of `part` elements from rank `start` of a sorted set (the
    /// lowest score 0), priced with the set's bytes along its order; any
    /// other bucket where `start` is `None`.
    pub(crate) fn estimate_range(
        &self,
        start: Option<u64>,
        part: u64,
        key_len: u64,
    ) -> rdblens_memory::Estimate {
        let mut e = price_range(
            self.target,
            self.kind,
            &self.shape,
            start,
            part,
            key_len,
            self.ttl,
        );
        if self.kind == TypeKind::Set && e.encoding == Encoding::Hashtable {
            let old = unfinished_rehash(self.target, part);
            e.memory = e.memory.map(|m| m + old);
        }
        e
    }

    pub(crate) fn encoding(&self, part: u64) -> Encoding {
        self.estimate(part, self.stem_len + 1).encoding
    }

    /// Expected cost of `buckets` hash-spread buckets, with names `extra`
    /// bytes longer than the stem plus the bucket number.
    fn spread(&self, buckets: u64, extra: u64) -> Cost {
        let (mut usage, mut used) = (0.0, 0.0);
        let mut keyspace = 0;
        for (d, n) in digit_groups(buckets) {
            let key_len = self.stem_len + extra + d;
            let count = self.shape.count;
            usage +=
                n as f64 * expected_price(count, buckets, |k| self.estimate(k, key_len).memory.unwrap_or(0));
            used += n as f64
                * expected_price(count, buckets, |k| {
                    self.estimate(k, key_len).adds_to_used_memory()
                });
            keyspace += n * keyspace_overhead(self.target, key_len, self.ttl);
        }
        Cost {
            usage: usage.round() as u64,
            keyspace,
            used: used.round() as u64,
        }
    }

    /// Cost of consecutive ranges of `size` elements (the last one
    /// shorter), with names `extra` bytes longer than the stem. A sorted
    /// set's ranges are priced each with its own bytes where the walk kept
    /// them (`Shape::zset_rank`); every other full range costs the same.
    pub(crate) fn ranges(&self, buckets: u64, size: u64, extra: u64) -> Cost {
        let count = self.shape.count;
        let ranked = self.kind == TypeKind::ZSet && self.shape.zset_rank().is_some();
        let mut cost = Cost::default();
        let mut start = 0u64;
        for (d, n) in digit_groups(buckets) {
            let key_len = self.stem_len + extra + d;
            let full = self.estimate(size, key_len);
            for i in 0..n {
                let first = start + i * size;
                let part = size.min(count.saturating_sub(first));
                let e = if ranked {
                    self.estimate_range(Some(first), part, key_len)
                } else if part == size {
                    full.clone()
                } else {
                    self.estimate(part, key_len)
                };
                cost.usage += e.memory.unwrap_or(0);
                cost.used += e.adds_to_used_memory();
            }
            start += n * size;
            cost.keyspace += n * keyspace_overhead(self.target, key_len, self.ttl);
        }
        cost
    }
}

/// The old bucket array a set's table still holds after `members` SADDs
/// (8 bytes a slot), where its last doubling has not finished rehashing.
/// A table doubles when an add finds it full, and each later SADD moves
/// one non-empty bucket of the old array to the new one (dict.c
/// `_dictRehashStep`); of an old array of s slots holding s members, about
/// s·(1 - 1/e) buckets are non-empty. `MEMORY USAGE` counts both arrays,
/// and so does `used_memory`. (A hash grown by HSET looks its field up
/// first, a second step per command: its rehash ends before the hash
/// reaches the next doubling.) Tables of Valkey 8.1+ rehash differently:
/// nothing is added there.
fn unfinished_rehash(target: &Profile, members: u64) -> u64 {
    if target.family == Family::Valkey && target.version >= ServerVersion::new(8, 1, 0) {
        return 0;
    }
    // The table's size once `members` were added one by one (4 at least),
    // and the array it doubled from.
    let size = members.max(4).next_power_of_two();
    let old = size / 2;
    if old < 4 || members <= old {
        return 0;
    }
    let steps = members - old - 1;
    let non_empty = old as f64 * (1.0 - (1.0 - 1.0 / old as f64).powf(old as f64));
    if (steps as f64) < non_empty {
        8 * old
    } else {
        0
    }
}

/// The compact limit a bucket of this shape can stay under, or why none.
pub(crate) fn compact_limit(split: &Split<'_>) -> Result<BucketLimit, String> {
    let l = &split.target.limits;
    let s = &split.shape;
    let target = split.target.name();
    let long = |name: &str, value: u64| {
        format!(
            "an element of {} is longer than {name} ({value}): no bucket can be compact; N is chosen for the element count only (big-collection)",
            text::bytes(s.max_len)
        )
    };
    let limit = |name: &str, value: u64| BucketLimit {
        name: name.to_string(),
        value,
    };
    let candidate = match split.kind {
        TypeKind::Hash if s.max_len > l.hash_max_listpack_value => {
            return Err(long(
                Limit::HashMaxListpackValue.name(),
                l.hash_max_listpack_value,
            ))
        }
        TypeKind::Hash => limit(Limit::HashMaxListpackEntries.name(), l.hash_max_listpack_entries),
        TypeKind::Set if s.all_int => limit(Limit::SetMaxIntsetEntries.name(), l.set_max_intset_entries),
        TypeKind::Set if s.max_len > l.set_max_listpack_value => {
            return Err(long(Limit::SetMaxListpackValue.name(), l.set_max_listpack_value))
        }
        TypeKind::Set => limit(Limit::SetMaxListpackEntries.name(), l.set_max_listpack_entries),
        TypeKind::ZSet if s.max_len > l.zset_max_listpack_value => {
            return Err(long(
                Limit::ZsetMaxListpackValue.name(),
                l.zset_max_listpack_value,
            ))
        }
        TypeKind::ZSet => limit(Limit::ZsetMaxListpackEntries.name(), l.zset_max_listpack_entries),
        _ => return Err(String::new()),
    };
    // The model decides whether the target has that encoding at all
    // (set listpacks arrived in 7.2).
    let probe = candidate.value.min(s.count).max(1);
    if split.encoding(probe).is_compact() {
        Ok(candidate)
    } else {
        Err(format!(
            "{target} has no compact encoding for sets of strings (set listpacks arrived in 7.2): the buckets stay hash tables; N is chosen for the element count only (big-collection)"
        ))
    }
}

/// Hash-filled buckets needed to keep the fullest one's bytes under
/// big-value-bytes' warn level after the same growth (elements assumed
/// alike: the warn level in elements of the value's average size).
fn hash_buckets_for_bytes(shape: &Shape, cfg: &RuleConfig) -> u64 {
    if shape.listpack_entries == 0 {
        return 2;
    }
    let per_element = shape.listpack_entries as f64 / shape.count.max(1) as f64;
    let limit = (cfg.big_value_bytes.warn.0 as f64 / per_element).floor().max(1.0) as u64;
    sizing::buckets_for(shape.count, limit)
}

/// Consecutive ranges needed to keep each one's bytes under
/// big-value-bytes' warn level with the same growth allowance (ranges are
/// filled to their size: no spread).
fn buckets_for_bytes(shape: &Shape, cfg: &RuleConfig) -> u64 {
    let bytes = shape.listpack_entries as f64 * (1.0 + GROWTH);
    (bytes / cfg.big_value_bytes.warn.0.max(1) as f64).ceil() as u64
}

pub(crate) fn plan(
    summary: &Summary,
    target: &Profile,
    (db, key): (u64, &[u8]),
    rules: &[RuleId],
    severity: Severity,
) -> Option<Plan> {
    let hit = find_hit(summary, db, key, rules)?;
    let shape = hit.shape.clone()?;
    let kind = kind_of(&hit.type_name)?;
    let cfg = &summary.settings.rules;
    let ttl = hit.expiry_ms.is_some();
    let key_len = key.len() as u64;
    let name = String::from_utf8_lossy(key).into_owned();
    let split = Split {
        target,
        kind,
        shape,
        stem_len: key_len + 1,
        ttl,
    };
    let tagged = hash_tag(key);
    let (mut plan, tagged_cost) = match kind {
        TypeKind::String => strings(&split, cfg, &name),
        TypeKind::List => lists(&split, cfg, &name),
        TypeKind::ZSet => zsets::score_ranges(&split, cfg, &name),
        _ => buckets(&split, cfg, &name),
    };
    plan.db = Some(db);
    plan.key = Some(KeyName::new(key));
    plan.namespace = text::namespace(
        namespace_of(key, summary.settings.separator),
        summary.settings.separator,
    );
    plan.rules = rules.to_vec();
    plan.severity = severity;
    plan.type_name = hit.type_name.clone();
    plan.encoding_before = hit.encoding.clone();
    plan.memory_before = hit.memory;
    plan.keyspace_before = keyspace_overhead(target, key_len, ttl);
    // Summaries keep what deleting the key frees; a hit without it (none
    // should be) is priced as its MEMORY USAGE plus keyspace overhead.
    plan.used_memory_before = hit
        .used_memory
        .unwrap_or(plan.memory_before + plan.keyspace_before);
    let now = summary.keys.databases.get(&db).map_or(Keys::default(), |c| Keys {
        keys: c.keys,
        expiring: c.keys_with_expiry,
    });
    let (removed, added) = (
        Keys {
            keys: 1,
            expiring: u64::from(ttl),
        },
        Keys {
            keys: plan.buckets,
            expiring: if ttl { plan.buckets } else { 0 },
        },
    );
    let tables_freed = tables::freed(target, now, removed, added);
    plan.settle_with_tables(tables_freed);
    // The hash-tag variant makes as many keys: the same tables.
    let tagged_used = tagged_cost.used + tables_freed.min(0).unsigned_abs();
    if kind == TypeKind::ZSet {
        plan.alternative = zsets::trimmed(&split, &plan, &name, key_len);
    }
    plan.target = target.name();
    plan.migration = migrate::steps(
        plan.scheme,
        &hit.type_name,
        &name,
        plan.buckets,
        plan.per_bucket,
        ttl,
    );
    match tagged {
        Some(tag) => {
            plan.hash_tag_pattern = plan.key_pattern.clone();
            plan.hash_tag_memory_after = plan.memory_after;
            plan.hash_tag_used_memory_after = plan.used_memory_after;
            plan.hash_tag_cost = format!(
                "the key's hash tag {{{}}} already keeps every bucket in its slot: one shard holds all of them, as it holds the key today",
                String::from_utf8_lossy(tag)
            );
        }
        None => {
            plan.hash_tag_pattern = format!("{{{name}}}{}", &plan.key_pattern[name.len()..]);
            plan.hash_tag_memory_after = tagged_cost.usage;
            plan.hash_tag_used_memory_after = tagged_used;
            plan.hash_tag_cost = format!(
                "every bucket in one slot, so one shard keeps all {} and all the key's traffic (no spread over the cluster); it buys multi-key commands across buckets (MGET, MULTI, Lua); names are 2 bytes longer: {} more",
                text::bytes(plan.used_memory_after),
                text::bytes(tagged_used.saturating_sub(plan.used_memory_after))
            );
        }
    }
    Some(plan)
}

/// A plan with the fields every scheme fills left empty.
pub(crate) fn blank(scheme: Scheme) -> Plan {
    Plan {
        kind: PlanKind::Key,
        db: None,
        key: None,
        namespace: String::new(),
        rules: Vec::new(),
        severity: Severity::Warn,
        type_name: String::new(),
        encoding_before: String::new(),
        scheme,
        buckets: 0,
        key_pattern: String::new(),
        bucket_by: String::new(),
        hash_tag_pattern: String::new(),
        hash_tag_cost: String::new(),
        elements: 0,
        per_bucket: 0,
        max_per_bucket: 0,
        limit: BucketLimit {
            name: String::new(),
            value: 0,
        },
        headroom: 0.0,
        encoding_after: String::new(),
        note: None,
        alternative: None,
        used_memory_before: 0,
        used_memory_after: 0,
        saved: 0,
        memory_before: 0,
        memory_after: 0,
        memory_usage_saved: 0,
        keyspace_before: 0,
        keyspace_after: 0,
        hash_tag_used_memory_after: 0,
        hash_tag_memory_after: 0,
        latency: String::new(),
        migration: Vec::new(),
        target: String::new(),
    }
}

/// Hash, set, sorted set, stream: buckets by a hash of the member.
fn buckets(split: &Split<'_>, cfg: &RuleConfig, name: &str) -> (Plan, Cost) {
    let s = &split.shape;
    let scheme = if split.kind == TypeKind::Stream {
        Scheme::StreamSplit
    } else {
        Scheme::HashBuckets
    };
    let (limit, note) = match compact_limit(split) {
        Ok(limit) => (limit, None),
        Err(why) => (
            BucketLimit {
                name: "big-collection.warn".into(),
                value: cfg.big_collection.warn,
            },
            (!why.is_empty()).then_some(why),
        ),
    };
    let n = sizing::buckets_for(s.count, limit.value).max(hash_buckets_for_bytes(s, cfg));
    let cost = split.spread(n, 0);
    let tagged = split.spread(n, 2);
    let per_bucket = s.count.div_ceil(n);
    let max = fullest(s.count, n);
    let member = match split.kind {
        TypeKind::Hash => "field",
        TypeKind::Stream => "entity id of the entry",
        _ => "member",
    };
    let plan = Plan {
        buckets: n,
        key_pattern: format!("{name}:<0..{}>", n - 1),
        bucket_by: format!("CRC32 of the {member} modulo {n}"),
        elements: s.count,
        per_bucket,
        max_per_bucket: max,
        headroom: sizing::headroom(s.count, n, limit.value),
        encoding_after: split.encoding(per_bucket).as_str().to_string(),
        limit,
        note,
        memory_after: cost.usage,
        keyspace_after: cost.keyspace,
        used_memory_after: cost.used,
        latency: latency(split.kind, s.count, per_bucket, n),
        ..blank(scheme)
    };
    (plan, tagged)
}

/// Lists: consecutive index (or time) ranges, filled one after another.
fn lists(split: &Split<'_>, cfg: &RuleConfig, name: &str) -> (Plan, Cost) {
    let s = &split.shape;
    let warn = cfg.big_collection.warn;
    let size = ((warn as f64 / (1.0 + GROWTH)) as u64).max(1);
    let by_bytes = buckets_for_bytes(s, cfg);
    let size = if by_bytes > s.count.div_ceil(size) {
        s.count.div_ceil(by_bytes).max(1)
    } else {
        size
    };
    let n = s.count.div_ceil(size).max(2);
    let size = size.min(s.count.div_ceil(n)).max(1);
    let cost = split.ranges(n, size, 0);
    let tagged = split.ranges(n, size, 2);
    let plan = Plan {
        buckets: n,
        key_pattern: format!("{name}:<0..{}>", n - 1),
        bucket_by: format!(
            "element index / {size} (or a time range, one key per hour or day), appending to the newest range"
        ),
        elements: s.count,
        per_bucket: size,
        max_per_bucket: size,
        // New elements open new ranges: a full range never grows.
        headroom: warn as f64 / size as f64 - 1.0,
        encoding_after: split.encoding(size).as_str().to_string(),
        limit: BucketLimit {
            name: "big-collection.warn".into(),
            value: warn,
        },
        note: None,
        memory_after: cost.usage,
        keyspace_after: cost.keyspace,
        used_memory_after: cost.used,
        latency: latency(TypeKind::List, s.count, size, n),
        ..blank(Scheme::ListRanges)
    };
    (plan, tagged)
}

/// Strings: parts under big-string's warn level.
fn strings(split: &Split<'_>, cfg: &RuleConfig, name: &str) -> (Plan, Cost) {
    let len = split.shape.count;
    let warn = cfg.big_string.warn.0;
    let size = ((warn as f64 / (1.0 + GROWTH)) as u64).max(1);
    let n = len.div_ceil(size).max(2);
    let size = size.min(len.div_ceil(n)).max(1);
    let cost = split.ranges(n, size, 0);
    let tagged = split.ranges(n, size, 2);
    let plan = Plan {
        buckets: n,
        key_pattern: format!("{name}:<0..{}>", n - 1),
        bucket_by: format!(
            "bytes [i*{size}, (i+1)*{size}) go to part i; read them back with MGET (or, for piecewise reads, HSET {name} <i> <part> and HGET the parts needed: one key, still big by bytes)"
        ),
        elements: len,
        per_bucket: size,
        max_per_bucket: size,
        headroom: warn as f64 / size as f64 - 1.0,
        encoding_after: split.encoding(size).as_str().to_string(),
        limit: BucketLimit {
            name: "big-string.warn".into(),
            value: warn,
        },
        note: None,
        memory_after: cost.usage,
        keyspace_after: cost.keyspace,
        used_memory_after: cost.used,
        latency: latency(TypeKind::String, len, size, n),
        ..blank(Scheme::StringParts)
    };
    (plan, tagged)
}

/// The per-command effect, in words.
fn latency(kind: TypeKind, count: u64, per_bucket: u64, buckets: u64) -> String {
    let (all, per, n) = (text::count(count), text::count(per_bucket), text::count(buckets));
    match kind {
        TypeKind::Hash => format!(
            "HGETALL, HSCAN, HKEYS and deleting now touch {all} fields at once; after, one bucket holds ~{per}: HGET/HSET/HDEL go to one bucket (O(1), or a scan of a small listpack), reading every field takes {n} HGETALLs (pipeline them)"
        ),
        TypeKind::Set => format!(
            "SMEMBERS, SSCAN and deleting now touch {all} members at once; after, ~{per} per bucket: SADD/SREM/SISMEMBER go to one bucket, SCARD is the sum of {n} SCARDs, SINTER/SUNION across buckets move to the client"
        ),
        TypeKind::Stream => format!(
            "XRANGE - + and deleting now touch {all} entries at once; after, ~{per} per stream: XADD goes to one stream, readers XREAD the {n} streams (one call, several keys)"
        ),
        TypeKind::List => format!(
            "LRANGE 0 -1, LREM, LINDEX far from the ends and deleting now walk {all} elements; after, ranges of {per}: LPUSH/RPUSH touch the newest range, LINDEX i goes to range i/{per}, LLEN is the sum of {n} LLENs"
        ),
        TypeKind::String => format!(
            "GET, SET and deleting now copy {} at once, blocking the thread and the link; after, {n} parts of {}: MGET them in batches (pipelined) and read only the parts needed",
            text::bytes(count),
            text::bytes(per_bucket)
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_grown_by_sadd_keeps_its_old_array_while_rehashing() {
        let redis70 = Profile::new(Family::Redis, ServerVersion::new(7, 0, 15), 16);
        // 770 members: doubled to 1,024 slots at the 513th, 257 steps
        // since, fewer than the ~324 non-empty old buckets: 512 slots left.
        assert_eq!(unfinished_rehash(&redis70, 770), 8 * 512);
        // 850: 337 steps, the rehash is done.
        assert_eq!(unfinished_rehash(&redis70, 850), 0);
        // 512 exactly: full, not doubled yet.
        assert_eq!(unfinished_rehash(&redis70, 512), 0);
        let valkey81 = Profile::new(Family::Valkey, ServerVersion::new(8, 1, 0), 8);
        assert_eq!(unfinished_rehash(&valkey81, 770), 0);
    }
}
