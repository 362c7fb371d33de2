//! Shape of a Redis radix tree (`src/rax.c`) holding a set of keys, computed
//! from the keys in sorted order with a stack as deep as the longest key.
//!
//! A rax has a node for the root, for every key, for every position where
//! keys branch, and for every child of a branching node; a run of
//! single-child positions in between is one compressed node. A node takes a
//! 4-byte header, its characters, padding to pointer alignment, one child
//! pointer per character (one in total if compressed) and a value pointer if
//! it ends a key (`raxNodeCurrentLength`). This canonical shape reproduced
//! XINFO's `radix-tree-nodes` and every stream checked (memory-model.md §3.1).

use crate::alloc::usable_size;

/// Size of a rax node with `chars` characters.
fn node_size(chars: u64, compressed: bool, key: bool) -> u64 {
    let padding = (8 - ((chars + 4) % 8)) & 7;
    let children = if compressed { 8 } else { 8 * chars };
    4 + chars + padding + children + if key { 8 } else { 0 }
}

#[derive(Clone, Copy)]
struct Frame {
    depth: u64,
    key: bool,
    children: u64,
    first_gap: u64,
}

impl Frame {
    fn new(depth: u64, key: bool) -> Frame {
        Frame {
            depth,
            key,
            children: 0,
            first_gap: 0,
        }
    }
}

/// Accumulates the node count and sizes of a rax whose keys are pushed in
/// ascending order. Out-of-order keys do not panic; they just make the shape
/// approximate. A key node holds a value pointer unless the rax was made
/// with [`Rax::keys_only`] (`raxInsert` with a NULL value sets `isnull` and
/// allocates no pointer: rax.c `raxReallocForData`, `raxNodeCurrentLength`).
pub(crate) struct Rax {
    quantum: u64,
    /// Key nodes carry a value pointer.
    values: bool,
    prev: Vec<u8>,
    started: bool,
    stack: Vec<Frame>,
    /// Keys pushed (duplicates ignored): `rax->numele`.
    pub elements: u64,
    /// `rax->numnodes`.
    pub nodes: u64,
    /// Sum of the node allocations (usable sizes).
    pub allocated: u64,
}

impl Rax {
    pub fn new(quantum: u64) -> Rax {
        Rax {
            quantum,
            values: true,
            prev: Vec::new(),
            started: false,
            stack: vec![Frame::new(0, false)],
            elements: 0,
            nodes: 0,
            allocated: 0,
        }
    }

    /// A rax whose keys carry no value (Redis 8.4's `pel_by_time`).
    pub fn keys_only(quantum: u64) -> Rax {
        Rax {
            values: false,
            ..Rax::new(quantum)
        }
    }

    pub fn push(&mut self, key: &[u8]) {
        if self.started && key == self.prev.as_slice() {
            return;
        }
        let lcp = if self.started {
            self.prev.iter().zip(key).take_while(|(a, b)| a == b).count() as u64
        } else {
            0
        };
        self.unwind(lcp);
        let len = key.len() as u64;
        match self.stack.last_mut() {
            // Only reachable with unsorted input or the empty key first.
            Some(top) if top.depth == len => top.key = true,
            _ => self.stack.push(Frame::new(len, true)),
        }
        self.prev.clear();
        self.prev.extend_from_slice(key);
        self.started = true;
        self.elements += 1;
    }

    /// Closes the tree; returns it for chaining.
    pub fn finish(mut self) -> Rax {
        self.unwind(0);
        if let Some(root) = self.stack.pop() {
            self.close(&root);
        }
        self
    }

    /// Closes every frame deeper than `depth` and attaches the last one to
    /// the frame at `depth`, creating that branching frame if needed.
    fn unwind(&mut self, depth: u64) {
        let mut last: Option<u64> = None;
        while self.stack.len() > 1 && self.stack.last().is_some_and(|f| f.depth > depth) {
            let Some(mut frame) = self.stack.pop() else { break };
            if let Some(child) = last {
                self.attach(&mut frame, child);
            }
            self.close(&frame);
            last = Some(frame.depth);
        }
        let Some(child) = last else { return };
        let mut top = match self.stack.pop() {
            Some(top) if top.depth < depth => {
                self.stack.push(top);
                Frame::new(depth, false)
            }
            Some(top) => top,
            None => Frame::new(0, false),
        };
        self.attach(&mut top, child);
        self.stack.push(top);
    }

    fn attach(&mut self, parent: &mut Frame, child_depth: u64) {
        let gap = child_depth.saturating_sub(parent.depth).max(1);
        parent.children += 1;
        if parent.children == 1 {
            parent.first_gap = gap;
            return;
        }
        // A branching node: each child whose subtree does not start right
        // below it begins with a compressed node of the skipped characters.
        if parent.children == 2 && parent.first_gap > 1 {
            self.emit(node_size(parent.first_gap - 1, true, false));
        }
        if gap > 1 {
            self.emit(node_size(gap - 1, true, false));
        }
    }

    fn close(&mut self, f: &Frame) {
        let value = f.key && self.values;
        let size = match f.children {
            0 => node_size(0, false, value),
            1 => node_size(f.first_gap, true, value),
            n => node_size(n, false, value),
        };
        self.emit(size);
    }

    fn emit(&mut self, size: u64) {
        self.nodes += 1;
        self.allocated += usable_size(size, self.quantum);
    }
}

/// Strides up to this one are sampled at every value; longer ones at
/// powers of two.
const EVERY_STRIDE_UP_TO: u64 = 16;
/// Offsets sampled per stride, where the stream is small enough.
const OFFSETS: u64 = 16;
/// Offsets are fewer on long streams, about this many IDs sampled per
/// stride over all of them (one offset at least: a whole pass).
const SAMPLED_PER_STRIDE: u64 = 1 << 16;

/// The ID of entry `k` of a node of `per_node` entries whose ID is `a`,
/// the next node's being `b`, as `XADD *` numbers entries: one after the
/// other in the same millisecond (`b` = `a` + `per_node` when the node's
/// entries share one), the last `b.seq` entries before `b` in `b`'s
/// millisecond, the others spread evenly over the milliseconds between,
/// numbered from 0 in each.
fn entry_id(a: (u64, u64), b: Option<(u64, u64)>, per_node: u64, k: u64) -> (u64, u64) {
    let Some(b) = b.filter(|b| b.0 > a.0) else {
        return (a.0, a.1 + k);
    };
    // The node's first entry is `a` itself.
    let tail = b.1.min(per_node - 1);
    if k >= per_node - tail {
        return (b.0, b.1 - (per_node - k));
    }
    let head = per_node - tail;
    let gap = b.0 - a.0;
    let ms = a.0 + ((gap as u128 * k as u128) / head as u128) as u64;
    if ms == a.0 {
        return (ms, a.1 + k);
    }
    // The first entry of the head in that millisecond.
    let first = ((ms - a.0) as u128 * head as u128).div_ceil(gap as u128) as u64;
    (ms, k - first)
}

/// The raxes a stream's parts would have, sampled from the stream: for a
/// stride s (s = 1 to 16, then powers of two up to the node count), the
/// IDs of every (s·E)-th entry, E the entries a node, from up to 16
/// offsets spread over s·E, each offset's IDs one rax; returned as
/// `[s, elements, nodes, allocated]` summed over the offsets. A stream
/// split N ways by a hash has nodes of E entries whose first IDs are
/// about N·E of the whole's entries apart, at any entry: its rax takes
/// the shape of the sample at stride N, as rax.c branches where 16-byte
/// IDs part, and sparser IDs part higher up (a 10-node part of an 80-node
/// stream had 2.5 rax nodes a key where the stream had 1.7). The entries'
/// IDs are not decoded: [`entry_id`] numbers them from the node IDs
/// (`masters`, as `(ms, seq)`, sorted).
pub(crate) fn strides(masters: &[(u64, u64)], entries: u64, quantum: u64) -> Vec<[u64; 4]> {
    let nodes = masters.len() as u64;
    if nodes == 0 {
        return Vec::new();
    }
    let per_node = (entries as f64 / nodes as f64).round().max(1.0) as u64;
    let total = nodes * per_node;
    let id_at = |p: u64| {
        let (i, k) = ((p / per_node) as usize, p % per_node);
        let b = masters.get(i + 1).copied();
        entry_id(masters[i], b, per_node, k)
    };
    let mut out = Vec::new();
    let mut stride = 1u64;
    while stride <= nodes {
        let span = stride * per_node;
        let offsets = (SAMPLED_PER_STRIDE * stride / nodes).clamp(1, OFFSETS);
        let mut row = [stride, 0, 0, 0];
        for j in 0..offsets {
            let mut rax = Rax::new(quantum);
            let mut p = j * span / offsets;
            while p < total {
                let (ms, seq) = id_at(p);
                let mut key = [0u8; 16];
                key[..8].copy_from_slice(&ms.to_be_bytes());
                key[8..].copy_from_slice(&seq.to_be_bytes());
                rax.push(&key);
                p += span;
            }
            let rax = rax.finish();
            row[1] += rax.elements;
            row[2] += rax.nodes;
            row[3] += rax.allocated;
        }
        out.push(row);
        stride = if stride < EVERY_STRIDE_UP_TO {
            stride + 1
        } else {
            stride * 2
        };
    }
    out
}

/// `streamRadixTreeMemoryUsage()` of Redis ≤ 8.0 and Valkey 8.0: 16 bytes per
/// element plus a rough 4 + 30·8 bytes per node. Its first line sets
/// `sizeof(rax)`, but the next overwrites it, so the header is never counted.
pub(crate) fn stream_tree_usage(rax: &Rax) -> u64 {
    16 * rax.elements + (4 + 240) * rax.nodes
}

/// Real allocation of a rax (Valkey 8.1+, Redis 8.4): the 32-byte `rax`
/// struct plus its nodes.
pub(crate) fn allocated_usage(rax: &Rax) -> u64 {
    usable_size(32, rax.quantum) + rax.allocated
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(keys: &[&[u8]]) -> (u64, u64) {
        let mut r = Rax::new(8);
        for k in keys {
            r.push(k);
        }
        let r = r.finish();
        (r.nodes, r.allocated)
    }

    #[test]
    fn small_trees() {
        // Sizes as computed by the prototype's rax_node_sizes().
        assert_eq!(shape(&[]), (1, 8));
        assert_eq!(shape(&[b"g"]), (2, 32));
        assert_eq!(shape(&[b"a", b"ab", b"abc", b"b"]), (5, 24 + 24 + 24 + 16 + 16));
        assert_eq!(shape(&[b"alice", b"bob", b"carol"]), (7, 32 + 6 * 16));
        assert_eq!(shape(&[b"", b"x"]), (2, 24 + 16));
        assert_eq!(shape(&[b"g", b"g"]), (2, 32), "duplicates count once");
    }

    #[test]
    fn keys_without_values_have_no_value_pointer() {
        let mut r = Rax::keys_only(8);
        for k in [&b"alice"[..], b"bob", b"carol"] {
            r.push(k);
        }
        let r = r.finish();
        // Root (3 children: 4+3+1 padding+24 = 32), three compressed
        // children (4+4/2/4 chars, padded to 8, +8 child pointer = 16 each)
        // and three empty key nodes of 4 bytes (usable 8), no value pointers.
        assert_eq!((r.nodes, r.allocated), (7, 32 + 3 * 16 + 3 * 8));
    }

    /// IDs as `XADD *` gives them: `per_ms[i]` entries in millisecond
    /// `1_700_000_000_000 + gaps[..i]`, numbered from 0 in each.
    fn xadd_ids(per_ms: &[u64], gap: u64) -> Vec<(u64, u64)> {
        let mut ids = Vec::new();
        for (i, &n) in per_ms.iter().enumerate() {
            let ms = 1_700_000_000_000 + i as u64 * gap;
            ids.extend((0..n).map(|seq| (ms, seq)));
        }
        ids
    }

    #[test]
    fn entry_ids_are_numbered_as_xadd_numbers_them() {
        // Dense: 650 to 740 entries a millisecond, nodes of 100.
        let dense = xadd_ids(&[700, 650, 740, 700, 690, 720], 1);
        // Sparse: one entry every 10 ms.
        let sparse = xadd_ids(&[1; 1000], 10);
        for ids in [dense, sparse] {
            let masters: Vec<_> = ids.iter().step_by(100).copied().collect();
            for (p, &id) in ids.iter().enumerate().take(masters.len().saturating_sub(1) * 100) {
                let (i, k) = (p / 100, p as u64 % 100);
                assert_eq!(
                    entry_id(masters[i], Some(masters[i + 1]), 100, k),
                    id,
                    "entry {p}"
                );
            }
        }
        // A node whose next one starts 3 ms later, 37 entries into its
        // millisecond: the 37 before it there, the other 63 spread.
        let (a, b) = ((1000, 5), (1003, 37));
        assert_eq!(entry_id(a, Some(b), 100, 0), a);
        assert_eq!(entry_id(a, Some(b), 100, 63), (1003, 0));
        assert_eq!(entry_id(a, Some(b), 100, 99), (1003, 36));
        assert_eq!(entry_id(a, Some(b), 100, 20), (1000, 25));
        assert_eq!(entry_id(a, Some(b), 100, 21), (1001, 0));
        assert_eq!(entry_id(a, Some(b), 100, 62), (1002, 20));
    }

    #[test]
    fn sparser_samples_of_a_stream_have_more_rax_nodes_a_key() {
        // 8,000 entries, 700 a millisecond, nodes of 100: the stream's own
        // rax (stride 1, offset 0: the node IDs) has 80 keys; a sample of
        // every 11th node's worth of entries, as an 11-way split's parts
        // have them, more nodes a key.
        let ids = xadd_ids(&[700; 12], 1)[..8000].to_vec();
        let masters: Vec<_> = ids.iter().step_by(100).copied().collect();
        let rows = strides(&masters, 8000, 16);
        let strides_sampled: Vec<u64> = rows.iter().map(|r| r[0]).collect();
        assert_eq!(
            strides_sampled,
            [(1..=16).collect::<Vec<u64>>(), vec![32, 64]].concat()
        );
        // Stride 1: 16 offsets over each node's 100 entries, 80 keys each.
        assert_eq!(rows[0][1], 16 * 80);
        let per_key = |r: &[u64; 4]| r[2] as f64 / r[1] as f64;
        assert!(per_key(&rows[10]) > per_key(&rows[0]) * 1.2, "{rows:?}");
        // The node IDs alone: the rax the whole stream has.
        let mut whole = Rax::new(16);
        for &(ms, seq) in &masters {
            let mut key = [0u8; 16];
            key[..8].copy_from_slice(&ms.to_be_bytes());
            key[8..].copy_from_slice(&seq.to_be_bytes());
            whole.push(&key);
        }
        assert_eq!(whole.finish().elements, 80);
    }

    #[test]
    fn stream_ids_share_long_prefixes() {
        let ids: Vec<[u8; 16]> = (0u64..10)
            .map(|i| {
                let mut k = [0u8; 16];
                k[..8].copy_from_slice(&(1_700_000_000_000u64 + i * 100).to_be_bytes());
                k
            })
            .collect();
        let mut r = Rax::new(8);
        for k in &ids {
            r.push(k);
        }
        let r = r.finish();
        assert_eq!(r.elements, 10);
        assert!(r.nodes > 10);
    }
}
