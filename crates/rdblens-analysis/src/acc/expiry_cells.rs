//! Exact keys and memory per expiry cell (1 s wide unless the data forces
//! coarser cells), in a layout whose size depends on the time the expiries
//! span, never on the number of keys.
//!
//! Cells are grouped 60 to a block (a block of 1 s cells is one minute). A
//! block stores each of its cells in 5 bytes: a `u8` key count and a `u32`
//! memory sum. A cell that outgrows that (more than 255 keys, or more than
//! 4 GiB) moves to the `heavy` map with 64-bit counts: the few seconds in
//! which hundreds of keys expire. Whether a cell is heavy depends only on its
//! totals, so the layout is a function of the set of expiries.
//!
//! The size is bounded by `cap`: when blocks and heavy cells together exceed it, every
//! cell widens to the next step of [`RESOLUTIONS_MS`]. Counts only grow as
//! keys are added or stores merged, so the final width is the finest at which
//! the final data fits, whatever the order of arrival or merging: results are
//! identical for any thread count and any split into shards.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::bounded::Mergeable;

/// Cell widths tried in turn, in ms.
pub const RESOLUTIONS_MS: [i64; 8] = [
    1_000,
    10_000,
    60_000,
    600_000,
    3_600_000,
    21_600_000,
    86_400_000,
    604_800_000,
];

/// Cells per block.
pub const CELLS: usize = 60;

/// Expiry times are clamped to +-2^60 ms (36 million years) so that cell
/// and block starts never overflow; a file's absurd expiries stay counted.
pub const TIME_LIMIT_MS: i64 = 1 << 60;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeysMemory {
    pub keys: u64,
    pub memory: u64,
}

impl Mergeable for KeysMemory {
    fn merge_from(&mut self, o: &Self) {
        self.keys = self.keys.saturating_add(o.keys);
        self.memory = self.memory.saturating_add(o.memory);
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Block {
    keys: [u8; CELLS],
    memory: [u32; CELLS],
}

impl Block {
    fn new() -> Box<Block> {
        Box::new(Block {
            keys: [0; CELLS],
            memory: [0; CELLS],
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cells {
    /// Most blocks kept (see the module docs).
    pub cap: usize,
    /// Index into [`RESOLUTIONS_MS`].
    pub resolution: usize,
    /// Block start (unix ms) -> light cells.
    blocks: BTreeMap<i64, Box<Block>>,
    /// Cell start -> totals of cells too large for a block.
    heavy: BTreeMap<i64, KeysMemory>,
}

/// `t` rounded down to a multiple of `width` (`t` within the time limit).
pub fn align(t: i64, width: i64) -> i64 {
    t.div_euclid(width) * width
}

pub fn clamp_time(t: i64) -> i64 {
    t.clamp(-TIME_LIMIT_MS, TIME_LIMIT_MS)
}

impl Cells {
    pub fn new(cap: usize) -> Self {
        Cells {
            cap: cap.max(16),
            resolution: 0,
            blocks: BTreeMap::new(),
            heavy: BTreeMap::new(),
        }
    }

    pub fn width_ms(&self) -> i64 {
        RESOLUTIONS_MS[self.resolution]
    }

    /// Keys and memory per block (heavy cells included), in time order.
    pub fn block_totals(&self) -> Vec<(i64, KeysMemory)> {
        let mut out: Vec<(i64, KeysMemory)> = self
            .blocks
            .iter()
            .map(|(&b, block)| {
                let keys = block.keys.iter().map(|&k| u64::from(k)).sum();
                let memory = block.memory.iter().map(|&m| u64::from(m)).sum();
                (b, KeysMemory { keys, memory })
            })
            .collect();
        let block_ms = self.block_ms();
        for (&start, c) in &self.heavy {
            // Every heavy cell's block exists (see `add`).
            if let Ok(i) = out.binary_search_by_key(&align(start, block_ms), |(b, _)| *b) {
                out[i].1.merge_from(c);
            }
        }
        out
    }

    pub fn block_ms(&self) -> i64 {
        self.width_ms() * CELLS as i64
    }

    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    pub fn heavy_cells(&self) -> usize {
        self.heavy.len()
    }

    /// Bytes the store holds, for the memory bound: a block and its B-tree
    /// slot, a heavy cell and its slot (upper estimates).
    pub fn approx_bytes(&self) -> usize {
        self.blocks.len() * (std::mem::size_of::<Block>() + 32) + self.heavy.len() * 48
    }

    fn over_cap(&self) -> bool {
        self.blocks.len() + self.heavy.len() > self.cap
    }

    /// Adds `keys` keys and `memory` bytes to the cell starting at `start`
    /// (a multiple of the width; within the time limit).
    pub fn add(&mut self, start: i64, keys: u64, memory: u64) {
        let block_ms = self.block_ms();
        let block_start = align(start, block_ms);
        let i = ((start - block_start) / self.width_ms()) as usize;
        let block = self.blocks.entry(block_start).or_insert_with(Block::new);
        Self::add_in(block, &mut self.heavy, start, i, keys, memory);
    }

    fn add_in(
        block: &mut Block,
        heavy: &mut BTreeMap<i64, KeysMemory>,
        start: i64,
        i: usize,
        keys: u64,
        memory: u64,
    ) {
        if !heavy.is_empty() {
            if let Some(h) = heavy.get_mut(&start) {
                h.merge_from(&KeysMemory { keys, memory });
                return;
            }
        }
        let k = u64::from(block.keys[i]).saturating_add(keys);
        let m = u64::from(block.memory[i]).saturating_add(memory);
        match (u8::try_from(k), u32::try_from(m)) {
            (Ok(k), Ok(m)) => {
                block.keys[i] = k;
                block.memory[i] = m;
            }
            _ => {
                block.keys[i] = 0;
                block.memory[i] = 0;
                heavy.insert(start, KeysMemory { keys: k, memory: m });
            }
        }
    }

    /// Adds runs of (cell start, keys, memory) sorted by start: one block
    /// lookup per block rather than per cell.
    pub fn add_sorted(&mut self, runs: &[(i64, u64, u64)]) {
        let width = self.width_ms();
        let block_ms = self.block_ms();
        let mut i = 0;
        while i < runs.len() {
            let block_start = align(runs[i].0, block_ms);
            let block = self.blocks.entry(block_start).or_insert_with(Block::new);
            while let Some(&(start, keys, memory)) = runs.get(i).filter(|r| r.0 < block_start + block_ms) {
                let cell = ((start - block_start) / width) as usize;
                Self::add_in(block, &mut self.heavy, start, cell, keys, memory);
                i += 1;
            }
        }
    }

    /// Widens cells until the store fits its cap (or the widest width).
    pub fn fit(&mut self) {
        while self.over_cap() && self.resolution + 1 < RESOLUTIONS_MS.len() {
            self.coarsen_to(self.resolution + 1);
        }
    }

    pub fn coarsen_to(&mut self, resolution: usize) {
        if resolution <= self.resolution {
            return;
        }
        let old = std::mem::replace(self, Cells::new(self.cap));
        self.resolution = resolution.min(RESOLUTIONS_MS.len() - 1);
        let width = self.width_ms();
        for (start, c) in old.iter() {
            self.add(align(start, width), c.keys, c.memory);
        }
    }

    /// Every non-empty cell in time order.
    pub fn iter(&self) -> impl Iterator<Item = (i64, KeysMemory)> + '_ {
        self.range(i64::MIN, i64::MAX)
    }

    /// Non-empty cells starting in `[from, to)`, in time order.
    pub fn range(&self, from: i64, to: i64) -> impl Iterator<Item = (i64, KeysMemory)> + '_ {
        let width = self.width_ms();
        let block_ms = self.block_ms();
        let first_block = align(clamp_time(from), block_ms);
        let light = self
            .blocks
            .range(first_block..)
            .take_while(move |(&b, _)| b < to)
            .flat_map(move |(&b, block)| {
                (0..CELLS).filter(move |&i| block.keys[i] > 0).map(move |i| {
                    let km = KeysMemory {
                        keys: u64::from(block.keys[i]),
                        memory: u64::from(block.memory[i]),
                    };
                    (b + i as i64 * width, km)
                })
            })
            .filter(move |(s, _)| *s >= from && *s < to);
        let heavy = self
            .heavy
            .range(from..)
            .take_while(move |(&s, _)| s < to)
            .map(|(&s, &km)| (s, km));
        MergeSorted {
            a: light.peekable(),
            b: heavy.peekable(),
        }
    }

    /// Keys and memory of the cells starting in `[from, to)`.
    pub fn sum(&self, from: i64, to: i64) -> KeysMemory {
        let mut out = KeysMemory::default();
        for (_, c) in self.range(from, to) {
            out.merge_from(&c);
        }
        out
    }

    /// Adds every cell of `other` (same resolution).
    pub fn merge(&mut self, other: &Cells) {
        debug_assert_eq!(self.resolution, other.resolution);
        let runs: Vec<(i64, u64, u64)> = other.iter().map(|(s, c)| (s, c.keys, c.memory)).collect();
        self.add_sorted(&runs);
    }
}

/// Two time-ordered cell streams in one (their starts never coincide: a
/// cell is light or heavy, not both).
struct MergeSorted<A: Iterator, B: Iterator> {
    a: std::iter::Peekable<A>,
    b: std::iter::Peekable<B>,
}

impl<A, B> Iterator for MergeSorted<A, B>
where
    A: Iterator<Item = (i64, KeysMemory)>,
    B: Iterator<Item = (i64, KeysMemory)>,
{
    type Item = (i64, KeysMemory);
    fn next(&mut self) -> Option<Self::Item> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) if y.0 < x.0 => self.b.next(),
            (Some(_), _) => self.a.next(),
            (None, _) => self.b.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn light_and_heavy_cells_are_exact_and_ordered() {
        let mut c = Cells::new(100);
        for _ in 0..300u64 {
            c.add(5_000, 1, 10);
        }
        c.add(3_000, 2, u64::from(u32::MAX) + 1);
        c.add(61_000, 1, 7);
        let cells: Vec<_> = c.iter().collect();
        assert_eq!(
            cells,
            vec![
                (
                    3_000,
                    KeysMemory {
                        keys: 2,
                        memory: u64::from(u32::MAX) + 1
                    }
                ),
                (
                    5_000,
                    KeysMemory {
                        keys: 300,
                        memory: 3_000
                    }
                ),
                (61_000, KeysMemory { keys: 1, memory: 7 }),
            ]
        );
        assert_eq!(c.heavy_cells(), 2);
        assert_eq!(c.sum(4_000, 62_000).keys, 301);
    }

    #[test]
    fn coarsens_to_the_same_width_whatever_the_order() {
        let times: Vec<i64> = (0..5_000i64).map(|i| (i * 7_919) % 3_000_000 * 1_000).collect();
        let mut a = Cells::new(20);
        for &t in &times {
            a.add(align(t, a.width_ms()), 1, 1);
            a.fit();
        }
        let mut b = Cells::new(20);
        for &t in times.iter().rev() {
            b.add(align(t, b.width_ms()), 1, 1);
            b.fit();
        }
        assert_eq!(a.resolution, b.resolution);
        assert!(a.resolution > 0);
        assert_eq!(a, b);
    }
}
