//! Keys per (expiry window, namespace) as a Count-Min sketch, one per window
//! width of [`LEVELS_MS`]: which namespaces an expiry cluster comes from.
//!
//! A Count-Min sketch is a table of counters; a key adds one to a counter in
//! each of [`ROWS`] rows, chosen by a hash of its (window, namespace); the
//! estimate of a pair is the smallest of its counters. Counters only add up,
//! so two sketches merge by adding their tables and the result is the same
//! for any thread count and any split of the keys into shards. An estimate
//! is never below the true count, and exceeds it by at most `e * N / WIDTH`
//! (N: all expiring keys) with probability at least `1 - e^-ROWS` (98%).
//! The size is fixed: `LEVELS_MS.len() * ROWS * WIDTH` counters (768 KiB),
//! whatever the number of keys, windows or namespaces.

use serde::{Deserialize, Serialize};

use super::expiry_cells::align;

/// Window widths with a sketch; a window of another width is summed from
/// the coarsest of these that tiles it.
pub const LEVELS_MS: [i64; 3] = [1_000, 60_000, 3_600_000];
/// Rows per level (a key adds one counter in each).
pub const ROWS: usize = 4;
/// Counters per row.
pub const WIDTH: usize = 1 << 14;
const WIDTH_BITS: u32 = 14;

/// Fixed seed (the hash must be the same on every host and build).
const SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// Keys per (expiry window, namespace hash), as Count-Min sketches (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceSketch {
    /// `[level][row][column]`, flattened.
    counters: Vec<u32>,
}

impl Default for NamespaceSketch {
    fn default() -> Self {
        NamespaceSketch {
            counters: vec![0; LEVELS_MS.len() * ROWS * WIDTH],
        }
    }
}

/// splitmix64's finaliser.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The columns of (window, namespace) in the rows: 14-bit slices of one
/// 64-bit hash (one mix per key and level, not per row).
fn columns(window: i64, namespace: u64) -> [usize; ROWS] {
    let x = mix((window as u64).wrapping_mul(0xff51_afd7_ed55_8ccd) ^ namespace ^ SEED);
    std::array::from_fn(|row| ((x >> (row as u32 * WIDTH_BITS)) as usize) & (WIDTH - 1))
}

impl NamespaceSketch {
    /// One key of namespace hash `namespace` expiring at `t` (clamped ms).
    pub fn add(&mut self, t: i64, namespace: u64) {
        for (level, &width) in LEVELS_MS.iter().enumerate() {
            let table = &mut self.counters[level * ROWS * WIDTH..(level + 1) * ROWS * WIDTH];
            for (row, column) in columns(align(t, width), namespace).into_iter().enumerate() {
                let c = &mut table[row * WIDTH + column];
                *c = c.saturating_add(1);
            }
        }
    }

    /// Estimated keys of `namespace` in the window of `LEVELS_MS[level]`
    /// starting at `start`.
    pub fn estimate(&self, level: usize, start: i64, namespace: u64) -> u64 {
        columns(start, namespace)
            .into_iter()
            .enumerate()
            .map(|(row, column)| u64::from(self.counters[(level * ROWS + row) * WIDTH + column]))
            .min()
            .unwrap_or(0)
    }

    /// The error bound of an estimate (see the module docs) for `n` keys.
    pub fn error_bound(n: u64) -> u64 {
        (std::f64::consts::E * n as f64 / WIDTH as f64).ceil() as u64
    }

    /// Adds `other`'s counters in, saturating.
    pub fn merge(&mut self, other: &NamespaceSketch) {
        for (a, b) in self.counters.iter_mut().zip(&other.counters) {
            // Saturating adds of non-negative numbers: min(sum, MAX) in any order.
            *a = a.saturating_add(*b);
        }
    }

    /// The counters of every row of every level.
    pub fn rows(&self) -> impl Iterator<Item = &[u32]> {
        self.counters.chunks(WIDTH)
    }

    /// Bytes the counters take in memory (768 KiB).
    pub fn bytes(&self) -> usize {
        self.counters.len() * 4
    }

    /// The counters as little-endian bytes (for summaries).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.counters.len() * 4);
        for block in self.counters.chunks(ZERO_BLOCK.len()) {
            // Mostly zero: whole blocks at once.
            if block == &ZERO_BLOCK[..block.len()] {
                out.resize(out.len() + block.len() * 4, 0);
                continue;
            }
            for c in block {
                out.extend_from_slice(&c.to_le_bytes());
            }
        }
        out
    }

    /// The inverse of [`Self::to_bytes`]; `None` if the length is wrong.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != LEVELS_MS.len() * ROWS * WIDTH * 4 {
            return None;
        }
        let mut counters = Vec::with_capacity(bytes.len() / 4);
        for block in bytes.chunks(ZERO_BLOCK.len() * 4) {
            if block == &ZERO_BYTES[..block.len()] {
                counters.resize(counters.len() + block.len() / 4, 0);
                continue;
            }
            for c in block.chunks_exact(4) {
                counters.push(u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
            }
        }
        Some(NamespaceSketch { counters })
    }
}

/// Counters handled at once when all zero (most are).
/// (Small blocks: the few non-zero counters are spread evenly.)
const ZERO_BLOCK: [u32; 16] = [0; 16];
const ZERO_BYTES: [u8; 64] = [0; 64];

/// Serialized as a compact string, not a million numbers.
impl Serialize for NamespaceSketch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::expiry_codec::to_base64(&self.to_bytes()))
    }
}

impl<'de> Deserialize<'de> for NamespaceSketch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = super::expiry_codec::from_base64(&text)
            .ok_or_else(|| serde::de::Error::custom("expiry namespace sketch: not base64"))?;
        NamespaceSketch::from_bytes(&bytes).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "expiry namespace sketch: {} bytes, expected {}",
                bytes.len(),
                LEVELS_MS.len() * ROWS * WIDTH * 4
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_never_undercount_and_merge_is_addition() {
        let mut whole = NamespaceSketch::default();
        let (mut a, mut b) = (NamespaceSketch::default(), NamespaceSketch::default());
        for i in 0..50_000i64 {
            let t = 1_000 * (i % 977);
            let ns = (i % 13) as u64;
            whole.add(t, ns);
            if i % 3 == 0 {
                a.add(t, ns)
            } else {
                b.add(t, ns)
            }
        }
        a.merge(&b);
        assert_eq!(a, whole);
        // Second 5 holds keys i with i % 977 == 5; of namespace 5: i % 13 == 5.
        let truth = (0..50_000i64).filter(|i| i % 977 == 5 && i % 13 == 5).count() as u64;
        let est = whole.estimate(0, 5_000, 5);
        assert!(
            est >= truth && est <= truth + NamespaceSketch::error_bound(50_000),
            "{est} vs {truth}"
        );
        let back = NamespaceSketch::from_bytes(&whole.to_bytes()).unwrap(); // ok: unit test
        assert_eq!(back, whole);
    }
}
