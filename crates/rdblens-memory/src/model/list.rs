//! Lists: a quicklist of listpack (7.0+) or ziplist nodes; from 7.2 a list
//! whose single packed node fits the node limit is a plain listpack. Before
//! 3.2 lists were a ziplist or a linked list.

use rdblens_parser::ValueType;

use super::{sampled, Ctx, Value};
use crate::encoding::Encoding;
use crate::rules::Era;
use crate::visitor::Facts;

/// Pre-3.2 defaults of list-max-ziplist-entries / -value.
const OLD_ZIPLIST_ENTRIES: u64 = 512;
const OLD_ZIPLIST_VALUE: u64 = 64;

pub(crate) fn estimate(facts: &Facts, ctx: &Ctx<'_>) -> Value {
    let r = ctx.rules;
    if !r.quicklist {
        return before_quicklists(facts, ctx);
    }
    let list = &facts.list;
    // 7.2+: listTypeTryConvertQuicklist after loading. Plain lists of type 10
    // are rebuilt without that call and stay quicklists.
    if r.list_listpack && ctx.value_type != ValueType::ListZiplist && list.nodes == 1 {
        if let Some((true, bytes, elements)) = list.first {
            let fill = ctx.limits.list_max_listpack_size;
            let fits = if fill < 0 {
                !crate::quicklist::exceeds_limit(fill, bytes, 1)
            } else {
                elements <= fill.max(1) as u64
            };
            if fits {
                let size = match r.era {
                    Era::Kvobj => bytes,
                    _ => r.blob(bytes),
                };
                return Value::new(Encoding::Listpack, (ctx.header + size) as f64);
            }
        }
    }
    let object = match r.era {
        Era::Kvobj => {
            // Tracked sizes: the quicklist and node structs by allocation,
            // the node listpacks as requested.
            let nodes = list.bytes_raw as f64 + list.compressed_delta as f64;
            (ctx.header + r.quicklist_struct + list.nodes * r.j(40)) as f64 + nodes
        }
        _ => {
            let node_bytes = match r.era {
                Era::Legacy => list.bytes_raw,
                _ => list.bytes_rounded,
            };
            let node_bytes = node_bytes as f64 + list.compressed_delta as f64;
            let elesize = (list.nodes * r.ql_node) as f64 + node_bytes;
            let asize = (ctx.header + r.quicklist_struct) as f64;
            if r.ql_per_element {
                sampled(asize, elesize, list.elements, list.elements)
            } else {
                sampled(asize, elesize, list.nodes, list.nodes)
            }
        }
    };
    Value::new(Encoding::Quicklist, object)
}

/// Redis < 3.2: one ziplist if small enough, else a linked list of string
/// objects (`MEMORY USAGE` did not exist yet; this is the 4.0-style count).
fn before_quicklists(facts: &Facts, ctx: &Ctx<'_>) -> Value {
    let ziplist = (ctx.header + facts.zl.bytes) as f64;
    if facts.count <= OLD_ZIPLIST_ENTRIES && facts.max_len <= OLD_ZIPLIST_VALUE {
        return Value::new(Encoding::Ziplist, ziplist);
    }
    // list struct 48, per element a 24-byte listNode, a 16-byte robj, its sds.
    let object = ctx.header + 48 + facts.count * (24 + 16) + facts.member_alloc;
    Value::new(Encoding::Linkedlist, object as f64).with_compact(Some(ziplist))
}
