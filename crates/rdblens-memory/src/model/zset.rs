//! Sorted sets: a listpack (ziplist up to 6.2) of member/score pairs when
//! small, else a skiplist plus a member→score table. Skiplist node levels
//! are random and not in the file, so their cost is the expectation.

use rdblens_parser::{NodeKind, ValueType};

use super::{sampled, Ctx, Value};
use crate::dict;
use crate::encoding::Encoding;
use crate::rules::{Era, Rules};
use crate::visitor::Facts;

/// `zslGetAllocSize()` of Valkey 9: the zskiplist with its 32-level header
/// node inline (32 + 31 levels of 16 bytes), counted unrounded.
const VK9_ZSKIPLIST: u64 = 32 + 31 * 16;

pub(crate) fn estimate(facts: &Facts, ctx: &Ctx<'_>) -> Value {
    let r = ctx.rules;
    let l = ctx.limits;
    let n = facts.count;
    let small = n <= l.zset_max_listpack_entries;
    // The compact blob the target would hold, if the value fits one.
    let compact_bytes = compact_bytes(facts, r.listpack, facts.blob);
    let fits = match ctx.value_type {
        // Stored blobs are only checked for their entry count.
        ValueType::ZSetListpack | ValueType::ZSetZiplist => small,
        _ => small && facts.max_len <= l.zset_max_listpack_value,
    };
    let compact_encoding = if r.listpack {
        Encoding::Listpack
    } else {
        Encoding::Ziplist
    };
    if fits {
        return Value::new(compact_encoding, blob_object(ctx, compact_bytes));
    }

    let slots = match ctx.value_type {
        ValueType::ZSetListpack | ValueType::ZSetZiplist if !r.presize_zset_convert => dict::grown_slots(n),
        ValueType::ZSet | ValueType::ZSet2 if !r.presize_plain_zset => dict::grown_slots(n),
        _ => dict::presized(n) as f64,
    };
    let object = skiplist(facts, ctx, slots);
    Value::new(Encoding::Skiplist, object).with_compact(Some(blob_object(ctx, compact_bytes)))
}

/// The skiplist object with a member table of `slots` buckets.
fn skiplist(facts: &Facts, ctx: &Ctx<'_>, slots: f64) -> f64 {
    let r = ctx.rules;
    let n = facts.count;
    let nf = n as f64;
    let header = ctx.header as f64;
    // zslCreateNode: ele, score, backward, then 16 bytes per level.
    let node = r.expected_zsl_node(24);
    let zsl_header = r.j(24 + 16 * r.zsl_max_level) as f64;
    match r.era {
        Era::Legacy | Era::Dict => {
            let structs = if r.zset_structs_counted {
                // zset, zskiplist, dict structs and the 32/64-level header node.
                (16 + 32 + r.dict) as f64 + zsl_header
            } else {
                // 4.0 counts the zset struct and the buckets only.
                16.0
            };
            let asize = header + structs + 8.0 * slots;
            let elesize = facts.member_alloc as f64 + (24 * n) as f64 + nf * node;
            sampled(asize, elesize, n, n)
        }
        Era::Kvobj => {
            header
                + (16 + r.j(40) + r.j(24 + 16 * 32) + 56 + 24 * n) as f64
                + 8.0 * slots
                + nf * node
                + facts.member_alloc as f64
        }
        Era::ValkeyObject if r.vk_zsl_embedded => {
            let asize = header + (16 + VK9_ZSKIPLIST) as f64 + dict::vk_table_bytes(n, r.vk_hashtable);
            sampled(asize, facts.zsl_nodes, n, n)
        }
        Era::ValkeyObject => {
            let asize = header + (16 + 32) as f64 + dict::vk_table_bytes(n, r.vk_hashtable) + zsl_header;
            sampled(asize, facts.member_alloc as f64 + nf * node, n, n)
        }
    }
}

/// Bytes of the compact blob: the stored one when the target keeps it
/// as is, else the one rebuilt from the elements.
fn compact_bytes(facts: &Facts, listpack: bool, stored: Option<(NodeKind, u64)>) -> u64 {
    match (stored, listpack) {
        (Some((NodeKind::Listpack, bytes)), true) | (Some((NodeKind::Ziplist, bytes)), false) => bytes,
        (_, true) => facts.lp_bytes,
        (_, false) => facts.zl.bytes,
    }
}

fn blob_object(ctx: &Ctx<'_>, bytes: u64) -> f64 {
    let r: &Rules = ctx.rules;
    let size = match r.era {
        Era::Kvobj => bytes,
        _ => r.blob(bytes),
    };
    (ctx.header + size) as f64
}
