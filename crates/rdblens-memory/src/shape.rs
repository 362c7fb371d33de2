//! A value's shape: the sums its estimate was made of (element count,
//! longest element, listpack and allocation sums, quicklist nodes, stream
//! parts), kept so that the same elements can be priced again split over
//! several smaller keys (the split advisor, rdblens-advice). A part of `k`
//! of the value's `count` elements gets `k / count` of every sum: the
//! elements are assumed alike, which is what bucketing by a hash of the
//! member makes true on average.

use rdblens_parser::{TypeKind, ValueType};
use serde::{Deserialize, Serialize};

use crate::compact::LP_EMPTY;
use crate::model::{self, Ctx};
use crate::rank::RankProfile;
use crate::rules::Rules;
use crate::stream_facts::StreamFacts;
use crate::visitor::{Facts, ListFacts, StringFacts};
use crate::{Estimate, Profile};

/// The sums of one value (see the module comment). Strings keep only their
/// length; every other field is 0 for them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Members, pairs, list elements or stream entries; a string's length.
    pub count: u64,
    /// Longest member, field or value.
    pub max_len: u64,
    /// Bytes of the listpack entries that would hold every element (hash:
    /// field and value; zset: member and score), header excluded.
    pub listpack_entries: u64,
    /// Every member is an integer (intset candidate); false for an empty value.
    pub all_int: bool,
    /// Widest intset element width the integer members need, in bytes (2, 4 or 8).
    pub int_width: u64,
    /// The target's per-member allocations (set, zset, old lists), summed, in bytes.
    pub member_alloc: u64,
    /// The target's per-pair allocations (hash field and value), summed, in bytes.
    pub pair_alloc: u64,
    /// Valkey 9 skiplist nodes, expected bytes (rounded).
    pub zsl_nodes: u64,
    /// A string that loads as an `int` object.
    pub string_int: bool,
    /// Number of quicklist nodes.
    pub list_nodes: u64,
    /// Bytes of the quicklist nodes, each rounded up to its allocation size.
    pub list_bytes_rounded: u64,
    /// Bytes of the quicklist nodes as requested from the allocator.
    pub list_bytes_raw: u64,
    /// Bytes of the stream's node listpacks, as stored.
    pub stream_lp_raw: u64,
    /// Bytes of the stream's node listpacks, each rounded up to its allocation size.
    pub stream_lp_rounded: u64,
    /// The stream's rax of nodes as `streamRadixTreeMemoryUsage()` counts it
    /// (Redis up to 8.0, Valkey 8.0).
    pub stream_tree_usage: u64,
    /// The stream's rax of nodes as allocated (Redis 8.4, Valkey 8.1+).
    pub stream_tree_allocated: u64,
    /// Bytes the consumer groups add, as the target counts them.
    pub stream_groups: u64,
    /// The stream's nodes (listpacks), the keys of its rax.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stream_nodes: u64,
    /// How a big sorted set's or stream's parts are shaped, where the walk
    /// measured it (boxed: every other value has none, and a shape is
    /// moved and cloned with each key's facts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Box<PartProfiles>>,
}

/// What prices a part of a sorted set or a stream beyond a share of the
/// whole's sums.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartProfiles {
    /// The raxes of the stream's entry IDs sampled s nodes' worth apart,
    /// `[s, elements, nodes, allocated]` summed over the offsets sampled
    /// (`rax::strides`): how the rax of a part of the stream, whose node
    /// IDs lie further apart, is shaped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stream_strides: Vec<[u64; 4]>,
    /// A sorted set's listpack entry bytes along its order, lowest scores
    /// first (empty unless the walk met its members in score order).
    #[serde(default, skip_serializing_if = "RankProfile::is_empty")]
    pub zset_rank: RankProfile,
}

impl Shape {
    /// The sorted set's bytes along its order (empty when not measured).
    pub fn zset_rank(&self) -> Option<&RankProfile> {
        self.parts
            .as_ref()
            .map(|p| &p.zset_rank)
            .filter(|r| !r.is_empty())
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Shape {
    pub(crate) fn of(facts: &Facts, kind: TypeKind) -> Shape {
        let compact = match (kind, facts.blob) {
            // A stored listpack the target keeps: its entries were not summed.
            (_, Some((rdblens_parser::NodeKind::Listpack, bytes))) if facts.lp_bytes == LP_EMPTY => bytes,
            _ => facts.lp_bytes,
        };
        let stream = facts.stream.as_ref();
        let strides = stream.map_or(&[][..], |s| &s.strides[..]);
        let parts = (!strides.is_empty() || !facts.zset_rank.is_empty()).then(|| {
            Box::new(PartProfiles {
                stream_strides: strides.to_vec(),
                zset_rank: facts.zset_rank.clone(),
            })
        });
        let stream = stream.cloned().unwrap_or_default();
        Shape {
            count: match facts.string {
                Some(s) => s.len,
                None => facts.count,
            },
            max_len: facts.max_len,
            listpack_entries: compact.saturating_sub(LP_EMPTY),
            all_int: facts.all_int && facts.count > 0,
            int_width: facts.int_width,
            member_alloc: facts.member_alloc,
            pair_alloc: facts.pair_alloc,
            zsl_nodes: facts.zsl_nodes.round() as u64,
            string_int: facts.string.is_some_and(|s| s.int),
            list_nodes: facts.list.nodes,
            list_bytes_rounded: facts.list.bytes_rounded,
            list_bytes_raw: facts.list.bytes_raw,
            stream_lp_raw: stream.lp_raw,
            stream_lp_rounded: stream.lp_rounded,
            stream_tree_usage: stream.tree_usage,
            stream_tree_allocated: stream.tree_allocated,
            stream_groups: stream.groups,
            stream_nodes: stream.nodes,
            parts,
        }
    }
}

/// Share `k / n` of a sum, rounded.
fn share(sum: u64, k: u64, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    ((sum as u128 * k as u128 + n as u128 / 2) / n as u128) as u64
}

/// What `profile`'s server would hold for a key named with `key_len` bytes
/// holding `part` of the `shape`'s `count` elements (a string: `part`
/// bytes), built with ordinary write commands (HSET, SADD, ZADD, RPUSH,
/// SET): the encoding follows the target's limits as if the part had been
/// loaded from a dump. Module and array values have no model (`memory` is
/// `None`). The part is spread like the whole (buckets by a hash); see
/// [`price_range`] for consecutive members of a sorted set.
pub fn price_part(
    profile: &Profile,
    kind: TypeKind,
    shape: &Shape,
    part: u64,
    key_len: u64,
    ttl: bool,
) -> Estimate {
    price_range(profile, kind, shape, None, part, key_len, ttl)
}

/// [`price_part`] for the `part` members of a sorted set from rank `start`
/// (0 = the lowest score) when `start` is given: their listpack bytes come
/// from the set's [`RankProfile`] where the walk kept one.
pub fn price_range(
    profile: &Profile,
    kind: TypeKind,
    shape: &Shape,
    start: Option<u64>,
    part: u64,
    key_len: u64,
    ttl: bool,
) -> Estimate {
    let rules = Rules::for_profile(profile);
    let n = shape.count;
    let s = |sum| share(sum, part, n);
    let entries = match (kind, start) {
        (TypeKind::ZSet, Some(start)) => shape.zset_rank().and_then(|r| r.range_bytes(start, part)),
        _ => None,
    }
    .unwrap_or_else(|| s(shape.listpack_entries));
    let mut facts = Facts {
        count: part,
        max_len: shape.max_len,
        lp_bytes: LP_EMPTY + entries,
        lpex_bytes: LP_EMPTY,
        all_int: shape.all_int,
        int_width: shape.int_width.max(2),
        member_alloc: s(shape.member_alloc),
        zsl_nodes: share(shape.zsl_nodes, part, n) as f64,
        pair_alloc: s(shape.pair_alloc),
        ..Facts::default()
    };
    // Targets before 7.0: the ziplist is about as long as the listpack
    // (one prevlen byte instead of one back-length byte per entry).
    facts.zl.bytes = crate::compact::ZL_EMPTY + entries;
    let value_type = match kind {
        TypeKind::String => {
            facts.string = Some(StringFacts {
                len: part,
                int: shape.string_int,
                small_int: false,
            });
            ValueType::String
        }
        TypeKind::List => {
            let nodes = s(shape.list_nodes).max(1);
            facts.list = ListFacts {
                nodes,
                bytes_rounded: s(shape.list_bytes_rounded),
                bytes_raw: s(shape.list_bytes_raw),
                elements: part,
                // Several nodes: no single-node listpack conversion.
                first: None,
                compressed_delta: 0,
            };
            ValueType::ListQuicklist2
        }
        TypeKind::Set => ValueType::Set,
        TypeKind::ZSet => ValueType::ZSet2,
        TypeKind::Hash => {
            if shape.max_len > profile.limits.hash_max_listpack_value {
                // Built with HSET: converted at the first long pair.
                facts.first_long_pair = Some(0);
            }
            ValueType::Hash
        }
        TypeKind::Stream => {
            let lp_raw = s(shape.stream_lp_raw);
            let lp_rounded = part_listpacks(profile, shape, part, lp_raw);
            let groups = s(shape.stream_groups);
            // The rax of the part's node IDs: shaped like the sample of the
            // whole's IDs as far apart, or a share of the whole's.
            let (tree_usage, tree_nodes_allocated) = match part_tree(shape, part, lp_raw) {
                Some(tree) => (tree.usage(), tree.allocated),
                None => {
                    let all = s(shape.stream_tree_allocated);
                    (
                        s(shape.stream_tree_usage),
                        all.saturating_sub(crate::usable_size(32, profile.quantum)),
                    )
                }
            };
            let tree_allocated = crate::usable_size(32, profile.quantum) + tree_nodes_allocated;
            facts.stream = Some(StreamFacts {
                lp_raw,
                lp_rounded,
                tree_usage,
                tree_allocated,
                groups,
                // What the part allocates where MEMORY USAGE counts its
                // rax roughly (Redis up to 8.0): the struct, the rax (its
                // 24-byte struct and nodes), the node listpacks (the
                // consumer groups as counted).
                allocated: match rules.era {
                    crate::rules::Era::Legacy | crate::rules::Era::Dict => {
                        rules.j(rules.stream_struct.max(40))
                            + rules.j(24)
                            + tree_nodes_allocated
                            + lp_rounded
                            + groups
                    }
                    _ => 0,
                },
                ..StreamFacts::default()
            });
            ValueType::StreamListpacks3
        }
        TypeKind::Module | TypeKind::Array => {
            facts.module = true;
            ValueType::Module2
        }
    };
    let ctx = Ctx {
        rules: &rules,
        limits: &profile.limits,
        value_type,
        key_len,
        ttl,
        header: model::object_header(&rules, key_len, ttl),
    };
    let value = model::value(&facts, &ctx);
    Estimate {
        encoding: value.encoding,
        memory: value.object.map(|o| model::memory_usage(o, &ctx)),
        compact_memory: value.compact.map(|o| model::memory_usage(o, &ctx)),
        keyspace_overhead: model::keyspace::overhead(&ctx),
        bucket_share: model::keyspace::bucket_share(&ctx),
        allocator_slack: model::allocator_slack(&facts, value.encoding, &ctx),
        usage_overcount: model::usage_overcount(&facts, value.encoding, &ctx),
        shape: Shape::default(),
    }
}

/// `STREAM_LISTPACK_MAX_PRE_ALLOCATE` (t_stream.c): XADD opens a stream's
/// newest node as a listpack allocated at 4,096 bytes and shrinks it to
/// fit only when the next node opens, so a stream built by XADD (a part of
/// a split) keeps that allocation in its last node, where one loaded from
/// a dump has every node at its size. Redis 7.0+ and Valkey.
const STREAM_NODE_PREALLOC: u64 = 4096;
/// `stream-node-max-entries` and `stream-node-max-bytes`, their defaults.
const STREAM_NODE_ENTRIES: u64 = 100;
const STREAM_NODE_BYTES: u64 = 4096;

/// Entries a node of a stream built by XADD holds, for entries of the
/// size of a part of `part` entries in `lp_raw` bytes of listpacks: a node
/// is full at `stream-node-max-entries`, or before at `stream-node-max-bytes`.
fn node_entries(part: u64, lp_raw: u64) -> u64 {
    let per_entry = lp_raw as f64 / part.max(1) as f64;
    ((STREAM_NODE_BYTES as f64 / per_entry) as u64).clamp(1, STREAM_NODE_ENTRIES)
}

/// The rax of a stream part's node IDs.
#[derive(Debug, PartialEq)]
struct PartTree {
    keys: u64,
    nodes: u64,
    /// Its nodes' allocations (usable sizes), the `rax` struct aside.
    allocated: u64,
}

impl PartTree {
    /// `streamRadixTreeMemoryUsage()`, as `rax::stream_tree_usage`.
    fn usage(&self) -> u64 {
        16 * self.keys + (4 + 240) * self.nodes
    }
}

/// The rax of a part of `part` entries (`lp_raw` bytes of listpacks) of the
/// stream: `part / node_entries` keys, shaped per key as the whole's entry
/// IDs sampled s nodes' worth apart, where s (interpolated between the
/// strides sampled, in log2) is how many of the whole's nodes lie between
/// two of the part's node IDs. `None` without the strides (summaries of
/// older releases).
fn part_tree(shape: &Shape, part: u64, lp_raw: u64) -> Option<PartTree> {
    let rows = shape.parts.as_ref().map_or(&[][..], |p| &p.stream_strides[..]);
    if rows.is_empty() || part == 0 || shape.stream_nodes == 0 {
        return None;
    }
    let per_node = node_entries(part, lp_raw);
    let keys = part.div_ceil(per_node);
    let stride = (per_node as f64 * shape.stream_nodes as f64 / part as f64).max(1.0);
    let per_key = |row: &[u64; 4]| {
        let elements = row[1].max(1) as f64;
        (row[2] as f64 / elements, row[3] as f64 / elements)
    };
    let below = rows
        .iter()
        .rev()
        .find(|r| r[0] as f64 <= stride)
        .unwrap_or(&rows[0]);
    let above = rows.iter().find(|r| r[0] as f64 >= stride).unwrap_or(below);
    let (lo, hi) = (per_key(below), per_key(above));
    let t = if above[0] > below[0] {
        (stride.log2() - (below[0] as f64).log2()) / ((above[0] as f64).log2() - (below[0] as f64).log2())
    } else {
        0.0
    };
    let nodes = lo.0 + (hi.0 - lo.0) * t;
    let allocated = lo.1 + (hi.1 - lo.1) * t;
    Some(PartTree {
        keys,
        nodes: (nodes * keys as f64).round() as u64,
        allocated: (allocated * keys as f64).round() as u64,
    })
}

/// The node listpacks of a stream part of `part` entries (`lp_raw` bytes
/// of listpacks) built by XADD, as allocated: every node but the last is
/// full and shrunk to fit (`lpShrinkToFit` when the next one opens), at
/// the whole's allocated bytes a full node; the last node keeps the
/// allocation it opened with, `STREAM_NODE_PREALLOC` (Redis 7.0+, Valkey),
/// unless its entries outgrew it.
fn part_listpacks(profile: &Profile, shape: &Shape, part: u64, lp_raw: u64) -> u64 {
    if part == 0 || lp_raw == 0 {
        return 0;
    }
    let per_node = node_entries(part, lp_raw);
    let full = (part - 1) / per_node;
    let last = part - full * per_node;
    let rounded_per_entry = shape.stream_lp_rounded as f64 / shape.count.max(1) as f64;
    let full_bytes = (rounded_per_entry * (full * per_node) as f64).round() as u64;
    let last_raw = (lp_raw as f64 / part as f64 * last as f64).round() as u64;
    let last_allocated = crate::usable_size(last_raw, profile.quantum);
    let preallocates =
        profile.family == crate::Family::Valkey || profile.version >= crate::ServerVersion::new(7, 0, 0);
    full_bytes
        + if preallocates {
            last_allocated.max(STREAM_NODE_PREALLOC)
        } else {
            last_allocated
        }
}

/// What a key named with `key_len` bytes costs the keyspace beyond
/// `MEMORY USAGE` on `profile`'s server (memory-model.md §6).
pub fn keyspace_overhead(profile: &Profile, key_len: u64, ttl: bool) -> u64 {
    let rules = Rules::for_profile(profile);
    let ctx = Ctx {
        rules: &rules,
        limits: &profile.limits,
        value_type: ValueType::String,
        key_len,
        ttl,
        header: model::object_header(&rules, key_len, ttl),
    };
    model::keyspace::overhead(&ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Family, ServerVersion};

    fn redis70() -> Profile {
        Profile::new(Family::Redis, ServerVersion::new(7, 0, 15), 8)
    }

    #[test]
    fn a_part_within_the_limits_is_compact() {
        // 1,000 integer members of width 2: 100 of them are an intset of
        // 8 + 200 bytes (rounded to 224) plus a 16-byte robj, a 4-byte key
        // "s:17" (sdshdr8: 8 bytes) and the 24-byte entry.
        let shape = Shape {
            count: 1000,
            max_len: 3,
            all_int: true,
            int_width: 2,
            ..Shape::default()
        };
        let e = price_part(&redis70(), TypeKind::Set, &shape, 100, 4, false);
        assert_eq!(e.encoding, crate::Encoding::Intset);
        assert_eq!(e.memory, Some(16 + 224 + 8 + 24));
        let e = price_part(&redis70(), TypeKind::Set, &shape, 600, 4, false);
        assert_eq!(e.encoding, crate::Encoding::Hashtable);
    }

    #[test]
    fn long_members_keep_a_hash_in_a_table() {
        let shape = Shape {
            count: 1000,
            max_len: 100,
            listpack_entries: 1000 * 110,
            pair_alloc: 1000 * 160,
            ..Shape::default()
        };
        let e = price_part(&redis70(), TypeKind::Hash, &shape, 10, 4, false);
        assert_eq!(e.encoding, crate::Encoding::Hashtable);
        let short = Shape { max_len: 60, ..shape };
        let e = price_part(&redis70(), TypeKind::Hash, &short, 10, 4, false);
        assert_eq!(e.encoding, crate::Encoding::Listpack);
        // 7 + 1,100 entry bytes -> 1,280; robj 16, key 8, entry 24.
        assert_eq!(e.memory, Some(1280 + 16 + 8 + 24));
    }

    #[test]
    fn a_stream_part_keeps_its_open_node_preallocated() {
        // A whole of 1,000 entries of 25 bytes whose nodes of 100 entries
        // take 2,560 bytes each (2,500 rounded on quantum 16). A part of
        // 550: five full nodes at that, the last of 50 opened at 4,096.
        let q16 = Profile::new(Family::Redis, ServerVersion::new(7, 0, 15), 16);
        let whole = Shape {
            count: 1000,
            stream_lp_raw: 25_000,
            stream_lp_rounded: 25_600,
            ..Shape::default()
        };
        assert_eq!(part_listpacks(&q16, &whole, 550, 550 * 25), 5 * 2560 + 4096);
        // 500 entries: the fifth node is the open one.
        assert_eq!(part_listpacks(&q16, &whole, 500, 500 * 25), 4 * 2560 + 4096);
        // Entries of 100 bytes: nodes cut at 4,096 bytes (40 entries); an
        // open node of 30 holds 3,000 bytes, still in its 4,096.
        let wide = Shape {
            count: 1000,
            stream_lp_raw: 100_000,
            stream_lp_rounded: 102_400,
            ..Shape::default()
        };
        assert_eq!(part_listpacks(&q16, &wide, 550, 550 * 100), 13 * 4096 + 4096);
        // Before 7.0 no node is preallocated: the last one at its size
        // (1,250 bytes: 1,280).
        let old = Profile::new(Family::Redis, ServerVersion::new(6, 2, 14), 16);
        assert_eq!(part_listpacks(&old, &whole, 550, 550 * 25), 5 * 2560 + 1280);
    }

    #[test]
    fn string_parts_are_raw_strings() {
        let shape = Shape {
            count: 100_000,
            ..Shape::default()
        };
        let e = price_part(&redis70(), TypeKind::String, &shape, 8192, 10, false);
        assert_eq!(e.encoding, crate::Encoding::Raw);
        // sdshdr16 (5 + 8192 + 1) -> 10,240; robj 16; key sds 16; entry 24.
        assert_eq!(e.memory, Some(10_240 + 16 + 16 + 24));
    }
}
