//! The report's sections as data: what the table and the JSON both show,
//! computed once (expiries rebucketed, clusters found, slots ranked).

use rdblens_summary::acc::bounded::BoundedMap;
use rdblens_summary::acc::counter::Counter;
use rdblens_summary::acc::expiry::{ExpiryCluster, ExpiryHistogram};
use rdblens_summary::acc::hist::Histogram;
use rdblens_summary::acc::limits::LimitCounts;
use rdblens_summary::acc::names::NameProblem;
use rdblens_summary::acc::prefix::{PrefixNode, Prefixes};
use rdblens_summary::acc::top::{SharedRecord, TopSet};
use rdblens_summary::acc::ttl::{TtlBuckets, TTL_BUCKETS};
use rdblens_summary::{KeyName, KeyStats, Summary};
use serde::Serialize;

use crate::options::ReportOptions;

/// One bar of a key-length histogram.
#[derive(Serialize)]
pub struct HistogramBar {
    /// The bar's lower bound (a power of two, or 0).
    pub from: u64,
    /// Keys in the bar.
    pub keys: u64,
}

/// Key-name lengths and problems (section `keys`).
#[derive(Serialize)]
pub struct KeyNamesJson {
    /// Keys measured.
    pub keys: u64,
    /// Shortest name, in bytes.
    pub min: Option<u64>,
    /// Longest name, in bytes.
    pub max: Option<u64>,
    /// Mean length.
    pub mean: Option<f64>,
    /// Median length.
    pub p50: Option<u64>,
    /// 90th percentile of the length.
    pub p90: Option<u64>,
    /// 99th percentile of the length.
    pub p99: Option<u64>,
    /// Lengths in power-of-two groups ([`length_bars`]).
    pub histogram: Vec<HistogramBar>,
    /// Names with a problem (too long, odd characters, no namespace...), per problem.
    pub problems: Vec<ProblemJson>,
}

/// One kind of key-name problem.
#[derive(Serialize)]
pub struct ProblemJson {
    /// Which problem.
    pub id: NameProblem,
    /// Keys with it.
    pub keys: u64,
    /// Their memory.
    pub memory: u64,
    /// A few of those keys.
    pub examples: Vec<KeyName>,
}

/// A namespace prefix and the levels below it.
#[derive(Serialize)]
pub struct PrefixJson {
    /// The prefix's segment (without the separator).
    pub prefix: KeyName,
    /// Figures of every key under it.
    #[serde(flatten)]
    pub totals: Counter,
    /// Their time to live, bucket by bucket.
    pub ttl: Vec<TtlBucketJson>,
    /// The next level, heaviest first.
    pub children: Vec<PrefixJson>,
    /// Children folded for bounded memory (present when the level had too many distinct prefixes).
    pub folded: Option<FoldedJson>,
}

/// The namespace tree (section `prefixes`).
#[derive(Serialize)]
pub struct PrefixesJson<'s> {
    /// The separator namespaces were split on (one ASCII character).
    pub separator: String,
    /// Levels aggregated (`--depth`).
    pub depth: usize,
    /// First-level namespaces, heaviest first.
    pub namespaces: Vec<PrefixJson>,
    /// First-level namespaces folded for bounded memory (null when none were).
    pub folded: Option<FoldedJson>,
    /// Keys whose name has no separator.
    pub no_namespace: &'s Counter,
    /// Keys already expired at the reference time but still in the dump:
    /// memory that loading the dump (or the server's expiry) frees.
    pub expired: ExpiredJson,
}

/// Keys and their memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KeysMemory {
    /// Keys.
    pub keys: u64,
    /// Their estimated memory, bytes.
    pub memory: u64,
}

/// The keys of a namespace already expired at the reference time.
#[derive(Serialize)]
pub struct ExpiredNamespaceJson {
    /// The namespace (its whole path, as a prefix node's).
    pub prefix: KeyName,
    /// Its expired keys and their memory.
    #[serde(flatten)]
    pub expired: KeysMemory,
    /// The next level's namespaces with expired keys, most memory first.
    pub children: Vec<ExpiredNamespaceJson>,
}

/// Keys already expired at the reference time, per namespace.
#[derive(Serialize)]
pub struct ExpiredJson {
    /// All of them.
    #[serde(flatten)]
    pub total: KeysMemory,
    /// First-level namespaces with expired keys, most memory first.
    pub namespaces: Vec<ExpiredNamespaceJson>,
    /// Those of the first-level namespaces folded for bounded memory.
    pub folded: KeysMemory,
    /// Those without a namespace.
    pub no_namespace: KeysMemory,
}

/// Index of the `expired` bucket in [`TTL_BUCKETS`].
const EXPIRED: usize = 1;

fn expired_of(b: &TtlBuckets) -> KeysMemory {
    KeysMemory {
        keys: b.keys[EXPIRED],
        memory: b.memory[EXPIRED],
    }
}

fn expired_nodes(map: &BoundedMap<PrefixNode>) -> Vec<ExpiredNamespaceJson> {
    let mut out: Vec<ExpiredNamespaceJson> = map
        .sorted()
        .filter(|(_, node)| node.ttl.keys[EXPIRED] > 0)
        .map(|(name, node)| ExpiredNamespaceJson {
            prefix: name.clone(),
            expired: expired_of(&node.ttl),
            children: node.children.as_deref().map(expired_nodes).unwrap_or_default(),
        })
        .collect();
    out.sort_by(|a, b| {
        b.expired
            .memory
            .cmp(&a.expired.memory)
            .then_with(|| a.prefix.cmp(&b.prefix))
    });
    out
}

fn expired(p: &Prefixes) -> ExpiredJson {
    let folded = expired_of(&p.root.other.ttl);
    let no_namespace = expired_of(&p.unprefixed_ttl);
    // The first level and the keys without a namespace: every key once.
    let parts = p.root.entries.values().map(|n| expired_of(&n.ttl));
    let total = parts
        .chain([folded, no_namespace])
        .fold(KeysMemory::default(), |a, b| KeysMemory {
            keys: a.keys.saturating_add(b.keys),
            memory: a.memory.saturating_add(b.memory),
        });
    ExpiredJson {
        total,
        namespaces: expired_nodes(&p.root),
        folded,
        no_namespace,
    }
}

/// Prefixes folded together to bound memory.
#[derive(Serialize)]
pub struct FoldedJson {
    /// Distinct prefixes folded (estimated from the kept sample, at most the keys folded).
    pub prefixes: u64,
    /// Figures of all their keys.
    #[serde(flatten)]
    pub totals: Counter,
}

/// One time-to-live bucket.
#[derive(Serialize)]
pub struct TtlBucketJson {
    /// Its name (`no expiry`, `expired`, `< 1m`...).
    pub bucket: &'static str,
    /// Keys in it.
    pub keys: u64,
    /// Their memory.
    pub memory: u64,
}

/// When keys expire (section `expiry`).
#[derive(Serialize)]
pub struct ExpiryJson<'s> {
    /// Width of the histogram's bars.
    pub bucket_ms: i64,
    /// `--expiry-window` (unix ms, end exclusive), when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<[i64; 2]>,
    /// The finest width the summary kept.
    pub stored_resolution_ms: i64,
    /// Keys with an expiry time.
    pub expiring_keys: u64,
    /// Their memory.
    pub expiring_memory: u64,
    /// Bars of `bucket_ms` in the window, in time order (empty bars left out).
    pub histogram: Vec<ExpiryBar>,
    /// Clusters overlapping the window, as detected on the stored cells.
    pub clusters: Vec<ExpiryCluster>,
    /// The stored cells (for renderers that draw finer timelines).
    #[serde(skip)]
    pub cells: &'s ExpiryHistogram,
}

/// One bar of the expiry histogram.
#[derive(Serialize)]
pub struct ExpiryBar {
    /// Start of the bar, unix ms.
    pub start_ms: i64,
    /// Keys expiring in it.
    pub keys: u64,
    /// Their memory.
    pub memory: u64,
}

/// One cluster slot.
#[derive(Serialize, Clone, Copy)]
pub struct SlotJson {
    /// The slot number (0-16383).
    pub slot: usize,
    /// Keys in it.
    pub keys: u64,
    /// Their memory.
    pub memory: u64,
}

/// One hash tag.
#[derive(Serialize)]
pub struct TagJson {
    /// The tag (between the braces).
    pub tag: KeyName,
    /// Keys with it.
    pub keys: u64,
    /// Their memory.
    pub memory: u64,
}

/// Cluster slots and hash tags (section `slots`).
#[derive(Serialize)]
pub struct SlotsJson {
    /// Slots holding keys.
    pub slots_used: usize,
    /// Keys with a hash tag.
    pub keys_with_hash_tag: u64,
    /// The `--top` slots with the most keys.
    pub most_keys: Vec<SlotJson>,
    /// The `--top` slots with the most memory.
    pub most_memory: Vec<SlotJson>,
    /// The `--top` hash tags with the most keys.
    pub hash_tags: Vec<TagJson>,
}

/// The three top lists of one scope.
#[derive(Serialize)]
pub struct TopJson<'s> {
    /// By estimated memory.
    pub by_memory: &'s [SharedRecord],
    /// By serialized size.
    pub by_serialized: &'s [SharedRecord],
    /// By element count.
    pub by_elements: &'s [SharedRecord],
}

/// Keys over or near one compact-encoding limit.
#[derive(Serialize)]
pub struct LimitJson<'s> {
    /// The limit's config name.
    pub limit: &'s str,
    /// Its value on the target server and the keys' figures: `threshold`,
    /// `over_keys`, `over_memory`, `over_savings` (what a compact encoding
    /// would save on them), `over_by_small_margin` (over by at most 2x),
    /// `near_keys` (within 10% under it), `near_memory`.
    #[serde(flatten)]
    pub counts: &'s LimitCounts,
    /// The biggest keys over it.
    pub over_examples: &'s [SharedRecord],
}

/// Bars for a distribution: (bucket lower bound, count), merging buckets so
/// that at most ~24 bars are drawn.
pub fn length_bars(h: &Histogram) -> Vec<(u64, u64)> {
    let mut bars: Vec<(u64, u64)> = Vec::new();
    for (b, n) in h.buckets() {
        // Power-of-two groups: 0, 1, 2-3, 4-7, ...
        let group = if b == 0 {
            0
        } else {
            1u64 << (63 - b.leading_zeros())
        };
        match bars.last_mut() {
            Some(last) if last.0 == group => last.1 += n,
            _ => bars.push((group, n)),
        }
    }
    bars
}

/// The ten time-to-live buckets.
pub(crate) fn ttl(keys: &[u64; 10], memory: &[u64; 10]) -> Vec<TtlBucketJson> {
    (0..10)
        .map(|i| TtlBucketJson {
            bucket: TTL_BUCKETS[i],
            keys: keys[i],
            memory: memory[i],
        })
        .collect()
}

/// Prefix nodes, heaviest (by memory) first.
fn prefix_nodes(map: &BoundedMap<PrefixNode>) -> (Vec<PrefixJson>, Option<FoldedJson>) {
    let mut out: Vec<PrefixJson> = map
        .sorted()
        .map(|(name, node)| {
            let (children, folded) = node.children.as_deref().map(prefix_nodes).unwrap_or_default();
            PrefixJson {
                prefix: name.clone(),
                totals: node.totals,
                ttl: ttl(&node.ttl.keys, &node.ttl.memory),
                children,
                folded,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.totals
            .memory
            .cmp(&a.totals.memory)
            .then_with(|| a.prefix.cmp(&b.prefix))
    });
    // Every folded prefix has a key: the sample's estimate can exceed the
    // keys folded (15,000 one-key prefixes estimated as 16,260), never the truth.
    let folded = map.is_folded().then_some(FoldedJson {
        prefixes: map.folded_names_estimate().min(map.other.totals.keys),
        totals: map.other.totals,
    });
    (out, folded)
}

pub(crate) fn prefixes(s: &Summary) -> PrefixesJson<'_> {
    let (namespaces, folded) = prefix_nodes(&s.keys.prefixes.root);
    PrefixesJson {
        separator: char::from(s.settings.separator).to_string(),
        depth: s.settings.prefix_depth,
        namespaces,
        folded,
        no_namespace: &s.keys.prefixes.unprefixed,
        expired: expired(&s.keys.prefixes),
    }
}

pub(crate) fn top(t: &TopSet) -> TopJson<'_> {
    TopJson {
        by_memory: &t.by_memory.keys,
        by_serialized: &t.by_serialized.keys,
        by_elements: &t.by_elements.keys,
    }
}

pub(crate) fn limits(k: &KeyStats) -> Vec<LimitJson<'_>> {
    k.limits
        .groups
        .iter()
        .map(|(name, g)| LimitJson {
            limit: name,
            counts: &g.counts,
            over_examples: &g.over_examples.keys,
        })
        .collect()
}

pub(crate) fn key_names(k: &KeyStats) -> KeyNamesJson {
    let lengths = &k.key_names.lengths;
    KeyNamesJson {
        keys: lengths.count,
        min: lengths.min,
        max: lengths.max,
        mean: lengths.mean(),
        p50: lengths.quantile(0.5),
        p90: lengths.quantile(0.9),
        p99: lengths.quantile(0.99),
        histogram: length_bars(lengths)
            .into_iter()
            .map(|(from, keys)| HistogramBar { from, keys })
            .collect(),
        problems: k
            .key_names
            .problems
            .iter()
            .map(|(id, c)| ProblemJson {
                id: *id,
                keys: c.keys,
                memory: c.memory,
                examples: c.examples.keys.iter().map(|r| r.key.clone()).collect(),
            })
            .collect(),
    }
}

/// The histogram at the chosen width and the clusters, both limited to the
/// expiry window shown.
pub(crate) fn expiry<'s>(k: &'s KeyStats, opts: &ReportOptions) -> ExpiryJson<'s> {
    let width = opts.expiry_bucket_ms(&k.expiry);
    let (from, to) = opts.expiry_range();
    ExpiryJson {
        bucket_ms: width,
        window: opts.expiry_window.map(|(from, to)| [from, to]),
        stored_resolution_ms: k.expiry.width_ms(),
        expiring_keys: k.expiry.expiring_keys,
        expiring_memory: k.expiry.expiring_memory,
        histogram: k
            .expiry
            .rebucket_range(width, from, to)
            .into_iter()
            .map(|(start_ms, b)| ExpiryBar {
                start_ms,
                keys: b.keys,
                memory: b.memory,
            })
            .collect(),
        clusters: k
            .expiry_clusters(opts.cluster_rule)
            .into_iter()
            .filter(|c| opts.in_expiry_window(c.start_ms, c.end_ms))
            .collect(),
        cells: &k.expiry,
    }
}

/// The `n` busiest slots by keys and by memory, and the `n` commonest hash tags.
pub(crate) fn slots(k: &KeyStats, n: usize) -> SlotsJson {
    let slots = &k.slots;
    let mut rows: Vec<SlotJson> = slots
        .counts()
        .iter()
        .enumerate()
        .filter(|(_, c)| c.keys > 0)
        .map(|(i, c)| SlotJson {
            slot: i,
            keys: c.keys,
            memory: c.memory,
        })
        .collect();
    let used = rows.len();
    rows.sort_by(|a, b| b.keys.cmp(&a.keys).then(a.slot.cmp(&b.slot)));
    let most_keys: Vec<SlotJson> = rows.iter().take(n).copied().collect();
    rows.sort_by(|a, b| b.memory.cmp(&a.memory).then(a.slot.cmp(&b.slot)));
    rows.truncate(n);
    let mut tags: Vec<TagJson> = slots
        .hash_tags
        .sorted()
        .map(|(t, km)| TagJson {
            tag: t.clone(),
            keys: km.keys,
            memory: km.memory,
        })
        .collect();
    tags.sort_by(|a, b| b.keys.cmp(&a.keys).then_with(|| a.tag.cmp(&b.tag)));
    tags.truncate(n);
    SlotsJson {
        slots_used: used,
        keys_with_hash_tag: slots.keys_with_tag,
        most_keys,
        most_memory: rows,
        hash_tags: tags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One-key prefixes past the cap: the bottom-k estimate of the folded
    /// ones can exceed them, the count shown cannot.
    #[test]
    fn folded_prefixes_are_never_more_than_their_keys() {
        let mut worst = 0;
        for n in [100u64, 150, 200, 300, 500, 1000] {
            let mut map = BoundedMap::<PrefixNode>::new(64);
            for i in 0..n {
                map.slot(format!("rate:10.1.{}.{}", i / 250, i % 250).as_bytes())
                    .totals
                    .keys += 1;
            }
            let folded_keys = n - 64;
            worst = worst.max(map.folded_names_estimate() as i64 - folded_keys as i64);
            let (_, folded) = prefix_nodes(&map);
            let folded = folded.unwrap(); // ok: unit test
            assert_eq!(folded.totals.keys, folded_keys);
            assert!(
                folded.prefixes <= folded_keys,
                "{n}: {} folded of {folded_keys}",
                folded.prefixes
            );
        }
        // The estimate alone overshoots on some of these sets.
        assert!(worst > 0, "no set shows the overshoot ({worst})");
    }
}
