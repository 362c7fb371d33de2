//! Plans for a small-key-sprawl namespace: its small strings folded into
//! hashes of ~`bucket-fields` fields (the rule's setting, 100 by default),
//! the bucket chosen by a hash of the id, the id kept as the field.

use rdblens_audit::text;
use rdblens_memory::{keyspace_overhead, price_part, Limit, Profile, Shape};
use rdblens_parser::TypeKind;
use rdblens_summary::rules::{RuleId, Severity};
use rdblens_summary::Summary;

use crate::keys::Cost;
use crate::migrate;
use crate::plan::{BucketLimit, Plan, PlanKind, Scheme};
use crate::sizing::{self, digit_groups, expected_price, fullest};
use crate::tables::{self, Keys};

/// The infix between the namespace and the bucket number, so that bucket
/// names never collide with the keys being folded.
const INFIX: &str = ":b:";

pub(crate) fn plan(summary: &Summary, target: &Profile, namespace: &str, severity: Severity) -> Option<Plan> {
    let sep = summary.settings.separator;
    let (ns, t) = summary
        .keys
        .rules
        .sprawl
        .sorted()
        .find(|(ns, _)| text::namespace(ns.as_bytes(), sep) == namespace)?;
    let cfg = &summary.settings.rules.small_key_sprawl;
    let ns = ns.as_bytes();
    // Keys without the separator: their buckets need a name of their own.
    let stem = if ns == [sep] {
        "sprawl".to_string()
    } else {
        String::from_utf8_lossy(ns).into_owned()
    };
    let longest = t.max_field_len.max(t.max_value_len);
    // Fields and values longer than the value limit: the limit the buckets
    // need (as the audit's finding suggests), priced as if it were set.
    let mut target = target.clone();
    let note = (longest > target.limits.hash_max_listpack_value).then(|| {
        let note = format!(
            "ids or values up to {longest} bytes are longer than hash-max-listpack-value ({}): set hash-max-listpack-value {longest} so the buckets stay listpacks (priced with it)",
            target.limits.hash_max_listpack_value
        );
        target.limits.hash_max_listpack_value = longest;
        note
    });
    let fields = cfg.bucket_fields.max(1);
    let n = t.keys.div_ceil(fields).max(1);
    let shape = Shape {
        count: t.keys,
        max_len: longest,
        listpack_entries: t.entry_bytes,
        ..Shape::default()
    };
    let stem_len = (stem.len() + INFIX.len()) as u64;
    let spread = |extra: u64| {
        let (mut usage, mut used) = (0.0, 0.0);
        let mut keyspace = 0;
        for (d, count) in digit_groups(n) {
            let key_len = stem_len + extra + d;
            let estimate = |k| price_part(&target, TypeKind::Hash, &shape, k, key_len, false);
            usage += count as f64 * expected_price(t.keys, n, |k| estimate(k).memory.unwrap_or(0));
            used += count as f64 * expected_price(t.keys, n, |k| estimate(k).adds_to_used_memory());
            keyspace += count * keyspace_overhead(&target, key_len, false);
        }
        Cost {
            usage: usage.round() as u64,
            keyspace,
            used: used.round() as u64,
        }
    };
    let cost = spread(0);
    let tagged = spread(2);
    let limit = target.limits.hash_max_listpack_entries;
    let per_bucket = t.keys.div_ceil(n);
    let memory_before = t.memory.saturating_sub(t.keyspace);
    let pattern = format!("{stem}{INFIX}<0..{}>", n - 1);
    let encoding = price_part(&target, TypeKind::Hash, &shape, per_bucket, stem_len + 1, false).encoding;
    let mut plan = Plan {
        kind: PlanKind::Namespace,
        db: None,
        key: None,
        namespace: namespace.to_string(),
        rules: vec![RuleId::SmallKeySprawl],
        severity,
        type_name: "string".into(),
        encoding_before: "string".into(),
        scheme: Scheme::NamespaceHashes,
        buckets: n,
        hash_tag_pattern: format!("{{{stem}}}{INFIX}<0..{}>", n - 1),
        hash_tag_cost: format!(
            "the whole namespace in one slot: one shard would hold all {} and all its traffic; only worth it for multi-key commands across buckets",
            text::bytes(cost.used)
        ),
        key_pattern: pattern,
        bucket_by: format!(
            "CRC32 of the id (the key after '{}') modulo {n}; the id is the field (numeric ids: id mod {n} picks the bucket and id / {n} can be the field, a few bytes shorter)",
            sep as char
        ),
        elements: t.keys,
        per_bucket,
        max_per_bucket: fullest(t.keys, n),
        headroom: sizing::headroom(t.keys, n, limit),
        limit: BucketLimit {
            name: Limit::HashMaxListpackEntries.name().into(),
            value: limit,
        },
        encoding_after: encoding.as_str().to_string(),
        note,
        alternative: None,
        used_memory_before: t.used_memory,
        used_memory_after: cost.used,
        saved: 0,
        memory_before,
        memory_after: cost.usage,
        memory_usage_saved: 0,
        keyspace_before: t.keyspace,
        keyspace_after: cost.keyspace,
        hash_tag_used_memory_after: tagged.used,
        hash_tag_memory_after: tagged.usage,
        latency: format!(
            "GET/SET become HGET/HSET on a ~{}-field listpack: a key lookup plus a scan of ~{} entries (well under a microsecond more); MGET over many ids becomes pipelined HMGETs grouped by bucket",
            text::count(per_bucket),
            text::count(2 * per_bucket)
        ),
        migration: migrate::steps(Scheme::NamespaceHashes, "string", &stem, n, per_bucket, false),
        target: target.name(),
    };
    // The namespace's keys are taken to be in the database with the most
    // keys (the tally is per namespace, not per database).
    let now = summary
        .keys
        .databases
        .values()
        .max_by_key(|c| c.keys)
        .map_or(Keys::default(), |c| Keys {
            keys: c.keys,
            expiring: c.keys_with_expiry,
        });
    let removed = Keys {
        keys: t.keys,
        expiring: t.expiring,
    };
    let added = Keys { keys: n, expiring: 0 };
    let tables_freed = tables::freed(&target, now, removed, added);
    plan.settle_with_tables(tables_freed);
    plan.hash_tag_used_memory_after += tables_freed.min(0).unsigned_abs();
    Some(plan)
}
