//! Absolute expiry times: exact keys and memory per cell ([`Cells`], 1 s
//! wide while the expiries' span fits the cap) and the namespaces per
//! window ([`NamespaceSketch`]). Both are functions of the set of expiring
//! keys, never of the order of arrival or merging: results are identical
//! for any thread count and any split into shards. Memory is bounded by the
//! cap and the sketch's fixed size, whatever the number of keys
//! (docs/expiry-clusters.md).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::bounded::stable_hash;
use super::expiry_cells::{align, clamp_time, Cells};
pub use super::expiry_cells::{KeysMemory, RESOLUTIONS_MS};
pub use super::expiry_clusters::{auto_width, detect_clusters, ActiveExpiry, ClusterRule, ExpiryCluster};
use super::expiry_codec::{from_base64, get_varint, put_varint, to_base64, unzigzag, zigzag};
use super::expiry_sketch::NamespaceSketch;
use super::Accumulate;
use crate::facts::KeyFacts;
use crate::keyshape::KeyShape;

/// Keys and memory by absolute expiry time, and the namespaces expiring in each window.
#[derive(Clone, Debug)]
pub struct ExpiryHistogram {
    /// Namespace separator byte.
    pub separator: u8,
    /// Namespace depth (`--depth`): a key's namespace is its name up to
    /// this many separators.
    pub depth: usize,
    /// Keys and memory per expiry cell.
    pub cells: Cells,
    /// Keys per (window, namespace), estimated.
    pub namespaces: NamespaceSketch,
    /// Keys with an expiry, expired ones included.
    pub expiring_keys: u64,
    /// Their estimated memory, bytes.
    pub expiring_memory: u64,
    /// Expiring keys not yet in their cells (complete only after
    /// [`Self::flush`], which `KeyStats::finish` and every merge call).
    /// Sorted by time and applied [`PENDING`] at a time, the updates walk
    /// the cells in order, one cache miss per block rather than per key.
    pending: Vec<Pending>,
}

/// Expiring keys buffered before they go into their cells (6 MiB).
const PENDING: usize = 1 << 18;

/// Keys added to the cells between two checks of the cap: the store
/// exceeds its cap by at most this many blocks.
const CHUNK: usize = 4096;

#[derive(Clone, Copy, Debug)]
struct Pending {
    expiry_ms: i64,
    memory: u64,
    /// [`stable_hash`] of the namespace.
    namespace: u64,
}

/// A key's namespace at `depth` (crate::namespace's rule: up to the
/// `depth`-th separator, or before a segment that is an id); empty for a
/// name without a separator.
pub fn namespace_at<'k>(key: &'k [u8], shape: &KeyShape, separator: u8, depth: usize) -> &'k [u8] {
    match shape.first_separator {
        None => &[],
        Some(first) if depth <= 1 => &key[..first],
        Some(_) => crate::namespace::namespace_at(key, separator, depth),
    }
}

impl ExpiryHistogram {
    /// Empty; `depth` at least 1, `cap` the blocks and heavy cells kept before the cells widen.
    pub fn new(separator: u8, depth: usize, cap: usize) -> Self {
        ExpiryHistogram {
            separator,
            depth: depth.max(1),
            cells: Cells::new(cap),
            namespaces: NamespaceSketch::default(),
            expiring_keys: 0,
            expiring_memory: 0,
            pending: Vec::new(),
        }
    }

    /// The width of the stored cells.
    pub fn width_ms(&self) -> i64 {
        self.cells.width_ms()
    }

    /// Blocks and heavy cells kept before the cells widen ([`Cells::cap`]).
    pub fn cap(&self) -> usize {
        self.cells.cap
    }

    /// Whether every key added is in its cell (readers need this).
    pub fn is_flushed(&self) -> bool {
        self.pending.is_empty()
    }

    /// Puts the pending keys into their cells and the sketch, in time order.
    pub fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_unstable_by_key(|p| p.expiry_ms);
        for p in &pending {
            self.namespaces.add(p.expiry_ms, p.namespace);
        }
        let mut runs: Vec<(i64, u64, u64)> = Vec::with_capacity(CHUNK);
        for chunk in pending.chunks(CHUNK) {
            let width = self.width_ms();
            runs.clear();
            for p in chunk {
                let start = align(p.expiry_ms, width);
                match runs.last_mut() {
                    Some(r) if r.0 == start => {
                        r.1 += 1;
                        r.2 = r.2.saturating_add(p.memory);
                    }
                    _ => runs.push((start, 1, p.memory)),
                }
            }
            self.cells.add_sorted(&runs);
            self.cells.fit();
        }
        pending.clear();
        // The buffer is kept for the next keys.
        self.pending = pending;
    }

    /// Keys and memory per window of `width_ms` (at least the stored
    /// width) starting in `[from, to)`, in time order.
    pub fn rebucket_range(&self, width_ms: i64, from: i64, to: i64) -> BTreeMap<i64, KeysMemory> {
        debug_assert!(self.is_flushed());
        let width = width_ms.max(self.width_ms());
        self.cells.rebucket(width, from, to).into_iter().collect()
    }

    /// Keys and memory per window of `width_ms` (at least the stored width).
    pub fn rebucket(&self, width_ms: i64) -> BTreeMap<i64, KeysMemory> {
        self.rebucket_range(width_ms, i64::MIN, i64::MAX)
    }

    /// [`Accumulate::add`] for a key whose shape is known.
    pub fn add_shaped(&mut self, f: &KeyFacts<'_>, shape: &KeyShape) {
        let Some(t) = f.expiry_ms else { return };
        self.expiring_keys += 1;
        self.expiring_memory = self.expiring_memory.saturating_add(f.memory);
        let namespace = stable_hash(namespace_at(f.key, shape, self.separator, self.depth));
        self.pending.push(Pending {
            expiry_ms: clamp_time(t),
            memory: f.memory,
            namespace,
        });
        if self.pending.len() >= PENDING {
            self.flush();
        }
    }
}

impl Accumulate for ExpiryHistogram {
    fn add(&mut self, f: &KeyFacts<'_>) {
        if f.expiry_ms.is_some() {
            self.add_shaped(f, &KeyShape::of(f.key, self.separator))
        }
    }

    fn finish(&mut self) {
        self.flush();
    }

    fn merge(&mut self, mut other: Self) {
        self.flush();
        other.flush();
        let r = self.cells.resolution.max(other.cells.resolution);
        self.cells.coarsen_to(r);
        other.cells.coarsen_to(r);
        self.cells.merge(&other.cells);
        self.cells.fit();
        self.namespaces.merge(&other.namespaces);
        self.expiring_keys = self.expiring_keys.saturating_add(other.expiring_keys);
        self.expiring_memory = self.expiring_memory.saturating_add(other.expiring_memory);
    }
}

/// The serialized form. Cells as base64 of varints: for each non-empty
/// cell in time order, its index (start / width) minus the previous one's
/// (zigzag, the first from 0), its keys and its memory.
#[derive(Serialize, Deserialize, PartialEq)]
struct HistogramRepr {
    separator: u8,
    depth: usize,
    cap: usize,
    resolution: usize,
    expiring_keys: u64,
    expiring_memory: u64,
    cells: String,
    namespaces: NamespaceSketch,
}

impl ExpiryHistogram {
    fn repr(&self) -> HistogramRepr {
        if !self.is_flushed() {
            let mut flushed = self.clone();
            flushed.flush();
            return flushed.repr();
        }
        let width = self.width_ms();
        let mut bytes = Vec::new();
        let mut previous = 0i64;
        for (start, c) in self.cells.iter() {
            let index = start / width;
            put_varint(&mut bytes, zigzag(index - previous));
            put_varint(&mut bytes, c.keys);
            put_varint(&mut bytes, c.memory);
            previous = index;
        }
        HistogramRepr {
            separator: self.separator,
            depth: self.depth,
            cap: self.cells.cap,
            resolution: self.cells.resolution,
            expiring_keys: self.expiring_keys,
            expiring_memory: self.expiring_memory,
            cells: to_base64(&bytes),
            namespaces: self.namespaces.clone(),
        }
    }

    fn from_repr(r: HistogramRepr) -> Result<Self, String> {
        if r.resolution >= RESOLUTIONS_MS.len() {
            return Err(format!("expiry resolution {} out of range", r.resolution));
        }
        let mut h = ExpiryHistogram::new(r.separator, r.depth, r.cap);
        h.cells.resolution = r.resolution;
        h.namespaces = r.namespaces;
        h.expiring_keys = r.expiring_keys;
        h.expiring_memory = r.expiring_memory;
        let bytes = from_base64(&r.cells).ok_or("expiry cells: not base64")?;
        let width = h.width_ms();
        let (mut pos, mut index, mut keys) = (0usize, 0i64, 0u64);
        let mut first = true;
        while pos < bytes.len() {
            let at = pos;
            let bad = || format!("expiry cells: bad cell at byte {at}");
            let delta = unzigzag(get_varint(&bytes, &mut pos).ok_or_else(bad)?);
            let k = get_varint(&bytes, &mut pos).ok_or_else(bad)?;
            let m = get_varint(&bytes, &mut pos).ok_or_else(bad)?;
            let next = index.checked_add(delta).ok_or_else(bad)?;
            let start = next
                .checked_mul(width)
                .filter(|s| clamp_time(*s) == *s)
                .ok_or_else(bad)?;
            if k == 0 || (!first && delta <= 0) {
                return Err(bad());
            }
            first = false;
            index = next;
            keys = keys.checked_add(k).ok_or_else(bad)?;
            h.cells.add(start, k, m);
        }
        if keys != h.expiring_keys {
            return Err(format!(
                "expiry cells hold {keys} keys, the summary says {} expiring keys",
                h.expiring_keys
            ));
        }
        h.cells.fit();
        Ok(h)
    }
}

// Equal content.
impl PartialEq for ExpiryHistogram {
    fn eq(&self, o: &Self) -> bool {
        self.repr() == o.repr()
    }
}

impl Serialize for ExpiryHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.repr().serialize(s)
    }
}

impl<'de> Deserialize<'de> for ExpiryHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ExpiryHistogram::from_repr(HistogramRepr::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_depths() {
        let ns = |key: &str, depth| {
            let shape = KeyShape::of(key.as_bytes(), b':');
            let name = namespace_at(key.as_bytes(), &shape, b':', depth).to_vec();
            String::from_utf8(name).unwrap() // ok: unit test
        };
        assert_eq!(ns("cache:page:1", 1), "cache");
        assert_eq!(ns("cache:page:1", 2), "cache:page");
        assert_eq!(ns("cache:page:1", 3), "cache:page");
        assert_eq!(ns("session:1", 2), "session");
        assert_eq!(ns("rate:10.1.118.134:5", 2), "rate");
        assert_eq!(ns("plain", 1), "");
    }

    #[test]
    fn summary_form_round_trips_and_rejects_bad_cells() {
        let mut h = ExpiryHistogram::new(b':', 1, 1000);
        for i in 0..10_000i64 {
            let key = format!("ns{}:{i}", i % 7);
            let f = KeyFacts::synthetic(
                key.as_bytes(),
                Some(1_900_000_000_000 + (i * 7_919) % 86_400_000),
                100 + i as u64,
            );
            h.add(&f);
        }
        h.flush();
        let text = serde_json::to_string(&h).unwrap(); // ok: unit test
        let back: ExpiryHistogram = serde_json::from_str(&text).unwrap(); // ok: unit test
        assert!(back == h);
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap(); // ok: unit test
        v["expiring_keys"] = 5.into();
        let e = serde_json::from_value::<ExpiryHistogram>(v.clone())
            .unwrap_err()
            .to_string();
        assert!(e.contains("the summary says 5 expiring keys"), "{e}");
        v["cells"] = "AAAA".into();
        let e = serde_json::from_value::<ExpiryHistogram>(v)
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad cell"), "{e}");
    }
}
