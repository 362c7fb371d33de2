//! Quicklist node rules (`src/quicklist.c`): how full a node may get, and
//! which nodes a target with `list-compress-depth` > 0 keeps LZF-compressed.

use std::collections::VecDeque;

/// `optimization_level[]`: node size limits for fill -1 .. -5.
pub(crate) fn size_limit(fill: i64) -> u64 {
    const LEVELS: [u64; 5] = [4096, 8192, 16384, 32768, 65536];
    let i = fill.unsigned_abs().saturating_sub(1).min(4) as usize;
    LEVELS[i]
}

/// Nodes with a count limit may not grow past this (`SIZE_SAFETY_LIMIT`).
pub(crate) const SIZE_SAFETY_LIMIT: u64 = 8192;

/// `quicklistNodeExceedsLimit()` (7.0+).
pub(crate) fn exceeds_limit(fill: i64, new_sz: u64, new_count: u64) -> bool {
    if fill < 0 {
        new_sz > size_limit(fill)
    } else {
        // fill 0 still allows one entry per node.
        let count_limit = fill.max(1) as u64;
        new_sz > SIZE_SAFETY_LIMIT || new_count > count_limit
    }
}

/// Nodes smaller than this are never compressed (`MIN_COMPRESS_BYTES`).
pub(crate) const MIN_COMPRESS_BYTES: u64 = 48;

/// Tracks what compressing the interior nodes would change: every node
/// except the first and last `depth` is held as LZF (`__quicklistCompress`).
/// The list's length is only known at the end, so the first `depth` nodes'
/// changes are summed apart and the last `depth` kept in a ring.
pub(crate) struct Compression {
    depth: u64,
    seen: u64,
    all: i64,
    head: i64,
    tail: VecDeque<i64>,
    tail_sum: i64,
}

impl Compression {
    pub fn new(depth: u64) -> Compression {
        Compression {
            depth,
            seen: 0,
            all: 0,
            head: 0,
            tail: VecDeque::new(),
            tail_sum: 0,
        }
    }

    /// Records a node whose size changes by `delta` when compressed (0 when
    /// it would stay uncompressed or its compressed size is unknown).
    pub fn node(&mut self, delta: i64) {
        self.all += delta;
        if self.seen < self.depth {
            self.head += delta;
        }
        self.tail.push_back(delta);
        self.tail_sum += delta;
        if self.tail.len() as u64 > self.depth {
            self.tail_sum -= self.tail.pop_front().unwrap_or(0);
        }
        self.seen += 1;
    }

    /// Total change over the interior nodes.
    pub fn interior(&self) -> i64 {
        if self.depth == 0 || self.seen <= 2 * self.depth {
            0
        } else {
            self.all - self.head - self.tail_sum
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_limits() {
        assert!(!exceeds_limit(-2, 8192, 1000));
        assert!(exceeds_limit(-2, 8193, 1));
        assert!(exceeds_limit(-1, 4097, 1));
        assert!(!exceeds_limit(-9, 65536, 1), "levels past -5 use 64 KiB");
        assert!(exceeds_limit(3, 100, 4));
        assert!(!exceeds_limit(0, 100, 1));
        assert!(exceeds_limit(0, 100, 2));
        assert!(exceeds_limit(128, 8193, 2));
    }

    #[test]
    fn only_interior_nodes_compress() {
        let mut c = Compression::new(1);
        for d in [-1, -10, -100, -1000] {
            c.node(d);
        }
        assert_eq!(c.interior(), -110);
        let mut c = Compression::new(2);
        for d in [-1, -10, -100, -1000] {
            c.node(d);
        }
        assert_eq!(c.interior(), 0);
        assert_eq!(Compression::new(0).interior(), 0);
    }
}
