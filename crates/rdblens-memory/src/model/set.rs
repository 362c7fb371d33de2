//! Sets: an intset when every member is an integer and there are few, a
//! listpack (7.2+) when there are few short members, else a hash table
//! presized to the member count.

use rdblens_parser::{NodeKind, ValueType};

use super::{sampled, Ctx, Value};
use crate::compact::INTSET_HEADER;
use crate::dict;
use crate::encoding::Encoding;
use crate::rules::Era;
use crate::visitor::Facts;

pub(crate) fn estimate(facts: &Facts, ctx: &Ctx<'_>) -> Value {
    let r = ctx.rules;
    let l = ctx.limits;
    let n = facts.count;
    let intset_bytes = INTSET_HEADER + n * facts.int_width;
    let stored = |kind| facts.blob.filter(|(k, _)| *k == kind).map(|(_, bytes)| bytes);

    let compact = match ctx.value_type {
        ValueType::SetIntset if n <= l.set_max_intset_entries => {
            Some((Encoding::Intset, stored(NodeKind::Intset).unwrap_or(intset_bytes)))
        }
        ValueType::SetListpack if r.set_listpack && n <= l.set_max_listpack_entries => Some((
            Encoding::Listpack,
            stored(NodeKind::Listpack).unwrap_or(facts.lp_bytes),
        )),
        ValueType::SetIntset | ValueType::SetListpack if !r.set_listpack => {
            // Only a target without set listpacks re-decides a stored listpack.
            (facts.all_int && n <= l.set_max_intset_entries).then_some((Encoding::Intset, intset_bytes))
        }
        ValueType::SetIntset | ValueType::SetListpack => None,
        _ if facts.all_int && n <= l.set_max_intset_entries => Some((Encoding::Intset, intset_bytes)),
        _ if r.set_listpack
            && n <= l.set_max_listpack_entries
            && facts.max_len <= l.set_max_listpack_value =>
        {
            Some((Encoding::Listpack, facts.lp_bytes))
        }
        _ => None,
    };
    if let Some((encoding, bytes)) = compact {
        return Value::new(encoding, blob_object(ctx, bytes));
    }

    // Every load path presizes the table to the member count.
    let slots = dict::presized(n) as f64;
    let object = match r.era {
        Era::Legacy | Era::Dict => {
            let asize = (ctx.header + r.dict) as f64 + 8.0 * slots;
            let entries = if r.vk_set_novalue {
                novalue_entries(n)
            } else {
                (24 * n) as f64
            };
            sampled(asize, facts.member_alloc as f64 + entries, n, n)
        }
        Era::Kvobj => (ctx.header + 56 + 24 * n + facts.member_alloc) as f64 + 8.0 * slots,
        Era::ValkeyObject => {
            let asize = ctx.header as f64 + dict::vk_table_bytes(n, r.vk_hashtable);
            sampled(asize, facts.member_alloc as f64, n, n)
        }
    };
    // The compact alternative: an intset if it could be one, else a listpack.
    let alternative = if facts.all_int {
        Some(intset_bytes)
    } else if r.listpack {
        Some(facts.lp_bytes)
    } else {
        None
    };
    Value::new(Encoding::Hashtable, object).with_compact(alternative.map(|b| blob_object(ctx, b)))
}

/// The entries of a set's presized `no_value` table of `n` members (Redis
/// 7.2+, Valkey 7.2+): a member alone in its bucket needs none, each
/// chained one takes 16 bytes. Expected chained members: `n` less the
/// expected non-empty buckets.
pub(crate) fn novalue_entries(n: u64) -> f64 {
    let slots = dict::presized(n) as f64;
    16.0 * (n as f64 - slots * (1.0 - (1.0 - 1.0 / slots).powf(n as f64)))
}

/// An object holding one intset or listpack of `bytes`.
fn blob_object(ctx: &Ctx<'_>, bytes: u64) -> f64 {
    let r = ctx.rules;
    let size = match r.era {
        Era::Kvobj => bytes,
        _ => r.blob(bytes),
    };
    (ctx.header + size) as f64
}
