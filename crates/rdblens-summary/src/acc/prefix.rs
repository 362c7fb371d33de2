//! Keys and memory per namespace prefix, as a bounded tree: every level keeps
//! at most a fixed number of children per node ([`BoundedMap`]), so a
//! keyspace of 100 million unique ids stays small; low-cardinality levels
//! (the namespaces themselves) are exact.

use serde::{Deserialize, Serialize};

use super::bounded::{BoundedMap, Mergeable};
use super::counter::Counter;
use super::ttl::{ttl_bucket, TtlBuckets};
use super::Accumulate;
use crate::facts::KeyFacts;
use crate::namespace::namespace_ends;

/// Children kept per node, by depth (root's children first).
const CAPS: [usize; 4] = [512, 64, 16, 8];

/// One namespace prefix: its keys, and the deeper prefixes under it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PrefixNode {
    /// Keys whose name starts with this prefix and a separator.
    pub totals: Counter,
    /// The same keys and their memory, by TTL bucket.
    pub ttl: TtlBuckets,
    /// Deeper prefixes, each named by the key up to its next separator
    /// (`cache:page` under `cache`; never an id: `user:42` is in `user`,
    /// crate::namespace); `None` at the last level or before one is seen.
    pub children: Option<Box<BoundedMap<PrefixNode>>>,
}

impl Mergeable for PrefixNode {
    fn merge_from(&mut self, other: &Self) {
        self.totals.merge(&other.totals);
        self.ttl.merge_from(&other.ttl);
        if let Some(theirs) = &other.children {
            match &mut self.children {
                Some(mine) => mine.merge((**theirs).clone()),
                None => self.children = Some(theirs.clone()),
            }
        }
    }
}

/// Keys and memory per namespace prefix, as a bounded tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prefixes {
    /// Namespace separator byte.
    pub separator: u8,
    /// Levels of the tree (1-4).
    pub depth: usize,
    /// Reference time for the TTL buckets, unix ms.
    pub now_ms: i64,
    /// Keys without any separator.
    pub unprefixed: Counter,
    /// The same keys and their memory, by TTL bucket.
    pub unprefixed_ttl: TtlBuckets,
    /// First-level prefixes (the bytes before the first separator), each with its deeper ones.
    pub root: BoundedMap<PrefixNode>,
}

impl Prefixes {
    /// Every kept prefix, down to the depth, and the empty name (keys
    /// without a separator): the candidate namespaces of expiry clusters.
    pub fn names(&self) -> Vec<Vec<u8>> {
        fn walk(map: &BoundedMap<PrefixNode>, out: &mut Vec<Vec<u8>>) {
            for (name, node) in map.sorted() {
                out.push(name.as_bytes().to_vec());
                if let Some(children) = &node.children {
                    walk(children, out);
                }
            }
        }
        let mut out = vec![Vec::new()];
        walk(&self.root, &mut out);
        out
    }

    /// An empty tree; `depth` is clamped to 1-4.
    pub fn new(separator: u8, depth: usize, now_ms: i64) -> Self {
        Prefixes {
            separator,
            depth: depth.clamp(1, CAPS.len()),
            now_ms,
            unprefixed: Counter::default(),
            unprefixed_ttl: TtlBuckets::default(),
            root: BoundedMap::new(CAPS[0]),
        }
    }
}

impl Accumulate for Prefixes {
    fn add(&mut self, f: &KeyFacts<'_>) {
        // Namespace ends, up to `depth` of them (crate::namespace's rule).
        let mut ends = namespace_ends(f.key, self.separator, self.depth);
        let bucket = ttl_bucket(f.expiry_ms, self.now_ms);
        let Some(first) = ends.next() else {
            self.unprefixed.add(f);
            self.unprefixed_ttl.add_at(bucket, f.memory);
            return;
        };
        let mut node = self.root.slot(&f.key[..first]);
        let mut level = 1;
        loop {
            node.totals.add(f);
            node.ttl.add_at(bucket, f.memory);
            let Some(end) = ends.next() else { break };
            let cap = CAPS[level];
            node = node
                .children
                .get_or_insert_with(|| Box::new(BoundedMap::new(cap)))
                .slot(&f.key[..end]);
            level += 1;
        }
    }

    fn merge(&mut self, other: Self) {
        self.unprefixed.merge(&other.unprefixed);
        self.unprefixed_ttl.merge_from(&other.unprefixed_ttl);
        self.root.merge(other.root);
    }
}
