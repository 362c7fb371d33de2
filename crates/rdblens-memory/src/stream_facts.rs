//! What a stream's estimate needs, collected as the value is decoded:
//! node listpacks indexed by a rax of master IDs, plus consumer groups with
//! their PELs and consumers. Listpacks are kept exactly as stored; the rax
//! is rebuilt, so its shape comes from the IDs.
//!
//! Redis ≤ 8.0 and Valkey 8.0 count each rax with the rough
//! `streamRadixTreeMemoryUsage()`; Valkey 8.1+ and Redis 8.4 count real
//! allocations. Redis 8.4 reports the stream's own `alloc_size` counter,
//! read from its t_stream.c and rax.c (see `groups_84`). The stream's
//! estimate from these figures is in `model/stream.rs`.

use rdblens_parser::{PendingEntry, RdbString, StreamId, StreamValue};

use crate::rax::{allocated_usage, stream_tree_usage, Rax};
use crate::rules::{Era, Rules};

/// A stream reduced to what its estimate needs.
#[derive(Clone, Debug, Default)]
pub(crate) struct StreamFacts {
    /// Sum of listpack sizes, as stored / rounded.
    pub lp_raw: u64,
    pub lp_rounded: u64,
    /// The main rax, as each era counts it.
    pub tree_usage: u64,
    pub tree_allocated: u64,
    /// Everything the consumer groups add, as the target counts it.
    pub groups: u64,
    /// Redis ≤ 8.0 and Valkey 8.0: what the stream really allocates
    /// besides its object header (struct, raxes, listpacks, groups), where
    /// `MEMORY USAGE` counts the raxes roughly; for `used_memory`. Later
    /// releases count allocations: 0 there.
    pub allocated: u64,
    /// Nodes (listpacks) of the stream: its rax's keys.
    pub nodes: u64,
    /// The raxes of the entry IDs sampled at strides of s nodes
    /// (`rax::strides`), to shape the rax of a part of the stream.
    pub strides: Vec<[u64; 4]>,
}

impl StreamFacts {
    pub fn collect(rules: &Rules, s: &StreamValue<'_>) -> StreamFacts {
        let mut facts = StreamFacts::default();
        let mut tree = Rax::new(rules.q);
        let mut keys = Vec::new();
        // Nodes come in rax order (the writer iterated the rax). A node
        // that fails to parse ends the walk; the decoder reports the error.
        for node in s.nodes() {
            let Ok(node) = node else { break };
            let len = node.listpack.len() as u64;
            facts.lp_raw += len;
            facts.lp_rounded += rules.j(len);
            tree.push(&id_key(node.master_id));
            keys.push((node.master_id.ms, node.master_id.seq));
        }
        let tree = tree.finish();
        facts.nodes = tree.elements;
        // Sorted already unless the writer was not a rax walk.
        if !keys.is_sorted() {
            keys.sort_unstable();
        }
        keys.dedup();
        facts.strides = crate::rax::strides(&keys, s.length, rules.q);
        facts.tree_usage = stream_tree_usage(&tree);
        facts.tree_allocated = allocated_usage(&tree);
        facts.groups = match rules.era {
            Era::Kvobj => groups_84(rules, s),
            Era::ValkeyObject => groups_allocated(rules, s),
            Era::Legacy | Era::Dict => groups_estimated(rules, s),
        };
        if matches!(rules.era, Era::Legacy | Era::Dict) {
            // sizeof(stream): 40 bytes before 7.0 (which MEMORY USAGE
            // left out before 6.2), 80 from 7.0.
            facts.allocated = rules.j(rules.stream_struct.max(40))
                + legacy_rax(rules, &tree)
                + facts.lp_rounded
                + groups_legacy(rules, s);
        }
        facts
    }

    /// Allocations minus what `MEMORY USAGE` counts for the value, header
    /// aside (the rough rax figure of Redis ≤ 8.0 is most of it, either
    /// way); 0 where it counts allocations.
    pub fn allocation_gap(&self, rules: &Rules) -> i64 {
        match rules.era {
            Era::Legacy | Era::Dict => {
                let lps = if rules.stream_lp_rounded {
                    self.lp_rounded
                } else {
                    self.lp_raw
                };
                let counted = rules.stream_struct + self.tree_usage + lps + self.groups;
                self.allocated as i64 - counted as i64
            }
            Era::Kvobj | Era::ValkeyObject => 0,
        }
    }
}

/// A rax as Redis ≤ 8.0 allocates it: its 24-byte struct (head, numele,
/// numnodes) and its nodes.
fn legacy_rax(rules: &Rules, rax: &Rax) -> u64 {
    rules.j(24) + rax.allocated
}

/// Redis ≤ 8.0, Valkey 8.0: the consumer groups as allocated on load
/// (t_stream.c `streamCreateCG`, `streamCreateNACK`,
/// `streamCreateConsumer`): the `cgroups` rax by name, per group its
/// struct, PEL rax with a 24-byte NACK per entry and consumers rax, per
/// consumer its struct, name sds and PEL rax (pointing at the group's
/// NACKs).
fn groups_legacy(rules: &Rules, s: &StreamValue<'_>) -> u64 {
    if s.groups.is_empty() {
        return 0;
    }
    let mut total = legacy_rax(rules, &name_rax(rules, s.groups.iter().map(|g| &g.name)));
    for g in &s.groups {
        let pel = id_rax(rules, g.pending.iter().map(|p| p.id));
        let consumers = name_rax(rules, g.consumers.iter().map(|c| &c.name));
        total += rules.j(rules.stream_cg) + legacy_rax(rules, &pel) + legacy_rax(rules, &consumers);
        total += rules.j(24) * pel.elements;
        for c in &g.consumers {
            let cpel = id_rax(rules, c.pending.iter().copied());
            let name = crate::sds::request(c.name.len() as u64, rules.sds_tight);
            total += rules.j(rules.stream_consumer) + rules.j(name) + legacy_rax(rules, &cpel);
        }
    }
    total
}

/// Node keys and PEL keys: the ID as 16 big-endian bytes.
fn id_key(id: StreamId) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&id.ms.to_be_bytes());
    k[8..].copy_from_slice(&id.seq.to_be_bytes());
    k
}

/// A rax over IDs (sorted first; PELs are saved in order, but cheap to be sure).
fn id_rax(rules: &Rules, ids: impl Iterator<Item = StreamId>) -> Rax {
    let mut keys: Vec<[u8; 16]> = ids.map(id_key).collect();
    keys.sort_unstable();
    let mut rax = Rax::new(rules.q);
    for k in &keys {
        rax.push(k);
    }
    rax.finish()
}

/// A rax over names.
fn name_rax<'a>(rules: &Rules, names: impl Iterator<Item = &'a RdbString<'a>>) -> Rax {
    let mut keys: Vec<Vec<u8>> = names.filter_map(|n| n.to_vec().ok()).collect();
    keys.sort_unstable();
    let mut rax = Rax::new(rules.q);
    for k in &keys {
        rax.push(k);
    }
    rax.finish()
}

/// Redis ≤ 8.0, Valkey 8.0: per group the struct, its PEL (rough rax
/// usage plus a NACK each), per consumer the struct, name length and PEL.
fn groups_estimated(rules: &Rules, s: &StreamValue<'_>) -> u64 {
    let mut total = 0;
    for g in &s.groups {
        let pel = id_rax(rules, g.pending.iter().map(|p| p.id));
        total += rules.stream_cg + stream_tree_usage(&pel) + 24 * pel.elements;
        for c in &g.consumers {
            let cpel = id_rax(rules, c.pending.iter().copied());
            total += rules.stream_consumer + c.name.len() as u64 + stream_tree_usage(&cpel);
        }
    }
    total
}

/// Valkey 8.1+: the same parts with every rax counted by allocation.
fn groups_allocated(rules: &Rules, s: &StreamValue<'_>) -> u64 {
    let mut total = 0;
    for g in &s.groups {
        let pel = id_rax(rules, g.pending.iter().map(|p| p.id));
        total += 40 + allocated_usage(&pel) + 24 * pel.elements;
        for c in &g.consumers {
            let cpel = id_rax(rules, c.pending.iter().copied());
            total += 32 + c.name.len() as u64 + allocated_usage(&cpel);
        }
    }
    total
}

/// Redis 8.4: what the load path adds to `stream->alloc_size`, which
/// `kvobjAllocSize()` (object.c) returns for a stream. Each rax made with
/// `raxNewWithMetadata(0, &s->alloc_size)` counts its 32-byte struct and
/// every node (rax.c); the structs are counted by `zmalloc_usable`
/// (t_stream.c `streamCreateCG`, `streamCreateNACK`, `streamCreateConsumer`).
/// The `cgroups_ref` lists and their nodes come from adlist.c's plain
/// `zmalloc` and are not counted. memory-model.md §3.1 names the lines.
fn groups_84(rules: &Rules, s: &StreamValue<'_>) -> u64 {
    if s.groups.is_empty() {
        return 0;
    }
    // s->cgroups, made by the first streamCreateCG.
    let mut total = allocated_usage(&name_rax(rules, s.groups.iter().map(|g| &g.name)));
    let mut refs: Vec<[u8; 16]> = Vec::new();
    for g in &s.groups {
        let pel = id_rax(rules, g.pending.iter().map(|p| p.id));
        let by_time = pel_by_time_rax(rules, &g.pending);
        let consumers = name_rax(rules, g.consumers.iter().map(|c| &c.name));
        // streamCG (48 bytes) and its three raxes.
        total +=
            rules.j(48) + allocated_usage(&pel) + allocated_usage(&by_time) + allocated_usage(&consumers);
        // A streamNACK (32 bytes) per PEL entry.
        total += rules.j(32) * pel.elements;
        refs.extend(g.pending.iter().map(|p| id_key(p.id)));
        for c in &g.consumers {
            let cpel = id_rax(rules, c.pending.iter().copied());
            // streamConsumer (32 bytes), sdsdup'd name, its PEL rax.
            total += rules.j(32) + rules.sds_alloc_84(c.name.len() as u64) + allocated_usage(&cpel);
        }
    }
    if refs.is_empty() {
        // s->cgroups_ref is made by the first streamLinkCGroupToEntry.
        return total;
    }
    refs.sort_unstable();
    refs.dedup();
    let mut rax = Rax::new(rules.q);
    for k in &refs {
        rax.push(k);
    }
    total + allocated_usage(&rax.finish())
}

/// A group's `pel_by_time`: keys are delivery time, ms and seq as 24
/// big-endian bytes (`encodePelTimeKey`), inserted with a NULL value
/// (`raxInsertPelByTime`).
fn pel_by_time_rax(rules: &Rules, pending: &[PendingEntry]) -> Rax {
    let mut keys: Vec<[u8; 24]> = pending
        .iter()
        .map(|p| {
            let mut k = [0u8; 24];
            // The load path stores the signed ms time; the key is its bits.
            k[..8].copy_from_slice(&(p.delivery_time_ms as u64).to_be_bytes());
            k[8..].copy_from_slice(&id_key(p.id));
            k
        })
        .collect();
    keys.sort_unstable();
    let mut rax = Rax::keys_only(rules.q);
    for k in &keys {
        rax.push(k);
    }
    rax.finish()
}
