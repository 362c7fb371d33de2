//! Hashes: a listpack (ziplist up to 6.2) of field/value pairs when small,
//! else a hash table. Redis 7.4+ keeps small hashes with field TTLs as a
//! `listpackex`; Valkey 9 puts any hash with field TTLs in a hash table.
//!
//! A plain hash (RDB type 4) is loaded into a listpack until a field or
//! value over the value limit turns up, then converted; the table's final
//! size then depends on an incremental rehash, so it is an expectation
//! (memory-model.md §3.5).

use rdblens_parser::{NodeKind, ValueType};

use super::{sampled, Ctx, Value};
use crate::dict::{self, Event, Expectation};
use crate::encoding::Encoding;
use crate::rules::Era;
use crate::version::Family;
use crate::visitor::Facts;

pub(crate) fn estimate(facts: &Facts, ctx: &Ctx<'_>) -> Value {
    let r = ctx.rules;
    use ValueType::*;
    let ttl_layout = matches!(
        ctx.value_type,
        HashMetadata | HashMetadataPreGa | HashListpackEx | HashListpackExPreGa
    );
    if r.hash_ttl && r.family == Family::Redis && (ttl_layout || facts.ttl_fields > 0) {
        return with_field_ttls(facts, ctx);
    }
    plain(facts, ctx)
}

fn plain(facts: &Facts, ctx: &Ctx<'_>) -> Value {
    let r = ctx.rules;
    let l = ctx.limits;
    let n = facts.count;
    let computed = if r.listpack {
        facts.lp_bytes
    } else {
        facts.zl.bytes
    };
    let stored = |kind| facts.blob.filter(|(k, _)| *k == kind).map(|(_, b)| b);
    let compact = |bytes| Value::new(compact_encoding(ctx), blob_object(ctx, bytes));
    let small = n <= l.hash_max_listpack_entries;
    let converted = || {
        if r.presize_hash_convert {
            dict::presized(n) as f64
        } else {
            dict::grown_slots(n)
        }
    };
    let slots = match ctx.value_type {
        ValueType::HashListpack if small => {
            return compact(
                stored(NodeKind::Listpack)
                    .filter(|_| r.listpack)
                    .unwrap_or(computed),
            )
        }
        ValueType::HashZiplist if small => {
            return compact(
                stored(NodeKind::Ziplist)
                    .filter(|_| !r.listpack)
                    .unwrap_or(computed),
            )
        }
        // Zipmaps (≤ 2.4) are converted, checking value lengths too.
        ValueType::HashZipmap if small && facts.max_len <= l.hash_max_listpack_value => {
            return compact(computed)
        }
        ValueType::HashListpack | ValueType::HashZiplist | ValueType::HashZipmap => converted(),
        // Valkey 9 holds any hash with field TTLs in a table.
        _ if facts.ttl_fields > 0 => dict::presized(n) as f64,
        _ if !small => {
            if r.presize_plain_hash {
                dict::presized(n) as f64
            } else {
                dict::grown_slots(n)
            }
        }
        _ => match facts.first_long_pair {
            Some(i) => conversion_slots(i, n, r.presize_hash_convert),
            None => return compact(computed),
        },
    };
    table(facts, ctx, slots).with_compact(Some(blob_object(ctx, computed)))
}

/// Redis 7.4+ hashes written with field TTLs (types 24/25, or any hash
/// whose fields carry TTLs): a `listpackex` if small, else a table whose
/// fields carry their expire metadata.
fn with_field_ttls(facts: &Facts, ctx: &Ctx<'_>) -> Value {
    let r = ctx.rules;
    let n = facts.count;
    let small = n <= ctx.limits.hash_max_listpack_entries;
    let listpackex = |bytes: u64| {
        let object = match r.era {
            // The listpackEx struct (24) and the listpack, tracked unrounded.
            Era::Kvobj => ctx.header + 24 + bytes,
            _ => ctx.header + r.j(32) + r.j(bytes),
        };
        object as f64
    };
    let slots = match ctx.value_type {
        ValueType::HashListpackEx | ValueType::HashListpackExPreGa => {
            let stored = facts.blob.map(|(_, b)| b).unwrap_or(facts.lpex_bytes);
            if small {
                return Value::new(Encoding::ListpackEx, listpackex(stored));
            }
            dict::presized(n) as f64
        }
        // Converted while still empty, then grown by every add.
        _ if !small => dict::grown_slots(n),
        _ => match facts.first_long_pair {
            Some(i) => dict::memoized((Expectation::ConvertedWithTtls, i, n), || {
                let rest = n - i - 1;
                let events = [Event::Expand(i)]
                    .into_iter()
                    .chain(adds(i))
                    .chain((rest > 4).then_some(Event::Expand(rest)))
                    .chain(adds(rest + 1));
                dict::expected_slots(events)
            }),
            None => return Value::new(Encoding::ListpackEx, listpackex(facts.lpex_bytes)),
        },
    };
    table(facts, ctx, slots).with_compact(Some(listpackex(facts.lpex_bytes)))
}

/// Slots after the load-time conversion of a plain hash at pair `i`: the
/// listpack's `i` pairs (plus pair `i`) go into a table presized to `i`
/// (7.0+) or grown from empty, which is re-expanded to the remaining count
/// if that exceeds 4, and the rest are added.
fn conversion_slots(i: u64, n: u64, presize_first: bool) -> f64 {
    dict::memoized(
        (
            Expectation::Converted {
                presized: presize_first,
            },
            i,
            n,
        ),
        || {
            let rest = n.saturating_sub(i + 1);
            let events = presize_first
                .then_some(Event::Expand(i))
                .into_iter()
                .chain(adds(i + 1))
                .chain((rest > 4).then_some(Event::Expand(rest)))
                .chain(adds(rest));
            dict::expected_slots(events)
        },
    )
}

fn adds(n: u64) -> impl Iterator<Item = Event> {
    (0..n).map(|_| Event::Add)
}

/// The hash table object with `slots` buckets.
fn table(facts: &Facts, ctx: &Ctx<'_>, slots: f64) -> Value {
    let r = ctx.rules;
    let n = facts.count;
    let header = ctx.header as f64;
    let object = match r.era {
        Era::Legacy | Era::Dict => {
            let asize = header + r.dict as f64 + 8.0 * slots;
            sampled(asize, (facts.pair_alloc + 24 * n) as f64, n, n)
        }
        Era::Kvobj => header + (56 + 24 * n + facts.pair_alloc) as f64 + 8.0 * slots,
        Era::ValkeyObject => {
            let asize = header + dict::vk_table_bytes(n, r.vk_hashtable + r.vk_hash_meta);
            sampled(asize, facts.pair_alloc as f64, n, n) + volatile_set(ctx, facts.ttl_fields) as f64
        }
    };
    Value::new(Encoding::Hashtable, object)
}

/// Valkey 9 tracks fields with TTLs in a "volatile set": one field is a
/// tagged pointer, up to 127 a pointer vector (8-byte header, 8 per field);
/// larger sets become time buckets in a rax, approximated as a vector.
fn volatile_set(ctx: &Ctx<'_>, fields: u64) -> u64 {
    if fields <= 1 {
        0
    } else {
        ctx.rules.j(8 + 8 * fields)
    }
}

fn compact_encoding(ctx: &Ctx<'_>) -> Encoding {
    if ctx.rules.listpack {
        Encoding::Listpack
    } else {
        Encoding::Ziplist
    }
}

fn blob_object(ctx: &Ctx<'_>, bytes: u64) -> f64 {
    let r = ctx.rules;
    let size = match r.era {
        Era::Kvobj => bytes,
        _ => r.blob(bytes),
    };
    (ctx.header + size) as f64
}
