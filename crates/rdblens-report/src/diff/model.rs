//! The diff model: both summaries compared once, field by field; its
//! serialization is the diff document, and the tables read it.

use std::collections::{BTreeMap, BTreeSet};

use rdblens_summary::acc::bounded::BoundedMap;
use rdblens_summary::acc::counter::Counter;
use rdblens_summary::acc::expiry::{auto_width, ClusterRule, ExpiryCluster};
use rdblens_summary::acc::prefix::PrefixNode;
use rdblens_summary::acc::top::{KeyRecord, Metric, TopKeys, TopSet};
use rdblens_summary::{KeyName, Summary, UsedMemory};
use serde::Serialize;

use super::growth::{alert, GrowthAlert, GrowthLimits, GrowthWhat, Limit};
use crate::options::{ReportOptions, AUTO_BARS};

/// Bumped on any incompatible change of the diff document.
pub const DIFF_VERSION: u32 = 1;

/// Namespace levels compared (the first two; deeper levels are samples).
const NAMESPACE_LEVELS: usize = 2;

/// New minus old, per counter field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Delta {
    /// Keys.
    pub keys: i64,
    /// Keys with an expiry time.
    pub keys_with_expiry: i64,
    /// Estimated memory, bytes.
    pub memory: i64,
    /// The keyspace's own overhead (dict entries), bytes.
    pub keyspace_overhead: i64,
    /// Serialized size, bytes.
    pub serialized_bytes: i64,
    /// Elements of collections.
    pub elements: i64,
}

/// `new - old`, clamped to the range of an `i64`.
fn sub(new: u64, old: u64) -> i64 {
    (i128::from(new) - i128::from(old)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

impl Delta {
    /// `new - old`, field by field (clamped, never wrapping).
    pub fn between(old: &Counter, new: &Counter) -> Self {
        Delta {
            keys: sub(new.keys, old.keys),
            keys_with_expiry: sub(new.keys_with_expiry, old.keys_with_expiry),
            memory: sub(new.memory, old.memory),
            keyspace_overhead: sub(new.keyspace_overhead, old.keyspace_overhead),
            serialized_bytes: sub(new.serialized_bytes, old.serialized_bytes),
            elements: sub(new.elements, old.elements),
        }
    }
}

/// A group (database, type, encoding) in both summaries.
#[derive(Serialize)]
pub struct GroupDiff {
    /// The group's name (`0` for db0, `hash`, `hash listpack`...).
    pub name: String,
    /// Its figures in the old summary (zero when absent there).
    pub old: Counter,
    /// Its figures in the new summary (zero when absent there).
    pub new: Counter,
    /// New minus old.
    pub delta: Delta,
}

/// The totals in both summaries.
#[derive(Serialize)]
pub struct TotalsDiff {
    /// The old summary's totals.
    pub old: Counter,
    /// The new summary's totals.
    pub new: Counter,
    /// New minus old.
    pub delta: Delta,
}

/// The `used_memory` predicted for each side's servers once they have
/// loaded its files.
#[derive(Serialize)]
pub struct UsedMemoryDiff {
    /// The old side's prediction (summed over its files).
    pub old: u64,
    /// The new side's.
    pub new: u64,
    /// New minus old.
    pub delta: i64,
}

impl UsedMemoryDiff {
    /// Both sides' predictions, when every file of each has one.
    fn between(old: &Summary, new: &Summary) -> Option<UsedMemoryDiff> {
        let total = |s: &Summary| UsedMemory::total(s.files.iter().map(|f| f.used_memory.as_ref()));
        let (o, n) = (total(old)?.predicted, total(new)?.predicted);
        Some(UsedMemoryDiff {
            old: o,
            new: n,
            // Predictions are within 2^53 (the summary check): no overflow.
            delta: n as i64 - o as i64,
        })
    }
}

/// A namespace prefix in both summaries. A side is null when that side
/// folded the prefix away (more distinct prefixes than are kept), so its
/// figures are not known.
#[derive(Serialize)]
pub struct NamespaceDiff {
    /// The prefix's last segment (its parent is the row's level above).
    pub prefix: KeyName,
    /// 1 for the first segment (`cache`), 2 for the first two (`cache:page`).
    pub level: usize,
    /// Its figures in the old summary; null when folded there.
    pub old: Option<Counter>,
    /// Its figures in the new summary; null when folded there.
    pub new: Option<Counter>,
    /// New minus old, when both are known.
    pub delta: Option<Delta>,
}

/// A key of the new top lists that was absent from the old ones or smaller there.
#[derive(Serialize)]
pub struct BecameBig<'s> {
    /// `memory`, `serialized` or `elements`.
    pub metric: Metric,
    /// The key's value of the metric in the new summary.
    pub new_value: u64,
    /// Its value in the old top lists; null when it was in none of them.
    pub old_value: Option<u64>,
    /// When it was in none of them and the old list for its type was full:
    /// the smallest value that list held (the key was at most this big, if it
    /// existed). Null when that list was not full: the key was not in the
    /// old dump with this type (or the filters left it out).
    pub old_at_most: Option<u64>,
    /// The key as it is now.
    pub key: &'s KeyRecord,
}

/// How a key of the top lists changed between the two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyChangeKind {
    /// In the new top lists only: added (or, when `old_at_most` is set, at
    /// most that big before).
    Appeared,
    /// In the old top lists only: deleted (or, when `new_at_most` is set, at
    /// most that big now).
    Disappeared,
    /// In both, bigger now.
    Grew,
    /// In both, smaller now.
    Shrank,
}

/// A key whose memory changed, as the two sides' top lists by memory show
/// it. Summaries keep only the top keys, so a key that left one side's
/// lists may still be there, smaller than that list's smallest key.
#[derive(Serialize)]
pub struct KeyChange<'s> {
    /// What happened to it.
    pub change: KeyChangeKind,
    /// Database number.
    pub db: u64,
    /// The key (`key`, or `key_hex` when not UTF-8).
    #[serde(flatten)]
    pub key: &'s KeyName,
    /// Its type (on the side that lists it, the new one when both do).
    #[serde(rename = "type")]
    pub type_name: &'s str,
    /// Its estimated memory in the old summary; null when not in its top lists.
    pub old_memory: Option<u64>,
    /// Its estimated memory in the new summary; null when not in its top lists.
    pub new_memory: Option<u64>,
    /// When `old_memory` is null and the old list for the key's type was
    /// full: the smallest memory that list held (the key was at most this
    /// big before, if it existed). Null: it was not in the old dump.
    pub old_at_most: Option<u64>,
    /// The same for `new_memory` and the new lists: null means it is gone.
    pub new_at_most: Option<u64>,
    /// `new_memory - old_memory`, an absent side counting 0.
    pub delta: i64,
}

/// The keys that changed most by memory, at most `--top` of each kind.
#[derive(Serialize)]
pub struct KeyChanges<'s> {
    /// Keys added, biggest first.
    pub appeared: Vec<KeyChange<'s>>,
    /// Keys deleted, biggest first.
    pub disappeared: Vec<KeyChange<'s>>,
    /// Keys in both that grew, most growth first.
    pub grew: Vec<KeyChange<'s>>,
    /// Keys in both that shrank, most shrinkage first.
    pub shrank: Vec<KeyChange<'s>>,
}

/// One side, as given.
#[derive(Serialize)]
pub struct SideJson<'s> {
    /// Its files (paths or labels), in order.
    pub files: Vec<&'s str>,
    /// Reference time of the side's TTLs (its first file's snapshot time, or `--now`).
    pub now_ms: i64,
}

/// Expiry clusters of the new side that the old one did not have.
#[derive(Serialize)]
pub struct ExpiryDiff {
    /// Bucket width both sides were compared at.
    pub bucket_ms: i64,
    /// Clusters found in the old side.
    pub old_clusters: usize,
    /// Clusters of the new side that overlap no cluster of the old one.
    pub new_clusters: Vec<ExpiryCluster>,
}

/// The whole document.
#[derive(Serialize)]
pub struct DiffJson<'s> {
    /// [`DIFF_VERSION`].
    pub diff_version: u32,
    /// `rdblens`.
    pub tool: &'static str,
    /// The version of rdblens that wrote it.
    pub tool_version: &'static str,
    /// The old side.
    pub old: SideJson<'s>,
    /// The new side.
    pub new: SideJson<'s>,
    /// Totals of both sides.
    pub totals: TotalsDiff,
    /// `used_memory` predicted for both sides; absent unless every file
    /// of both has a prediction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_memory: Option<UsedMemoryDiff>,
    /// Per database, by number.
    pub databases: Vec<GroupDiff>,
    /// Per type, by name.
    pub types: Vec<GroupDiff>,
    /// Per type and encoding, by name.
    pub encodings: Vec<GroupDiff>,
    /// Prefixes whose figures changed, largest memory change first.
    pub namespaces: Vec<NamespaceDiff>,
    /// Keys of the new top lists that were smaller or absent before, by
    /// metric, biggest first.
    pub became_big: Vec<BecameBig<'s>>,
    /// Keys that appeared, disappeared, grew or shrank most, by memory.
    pub key_changes: KeyChanges<'s>,
    /// Expiry clusters that are new.
    pub expiry: ExpiryDiff,
    /// With `--fail-on-growth`: every figure that grew by more than its
    /// limit (empty when none did); absent without the flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub growth_alerts: Option<Vec<GrowthAlert>>,
}

fn groups<K: Ord + ToString>(old: &BTreeMap<K, Counter>, new: &BTreeMap<K, Counter>) -> Vec<GroupDiff> {
    let names: BTreeSet<&K> = old.keys().chain(new.keys()).collect();
    names
        .into_iter()
        .map(|k| {
            let o = old.get(k).copied().unwrap_or_default();
            let n = new.get(k).copied().unwrap_or_default();
            GroupDiff {
                name: k.to_string(),
                old: o,
                new: n,
                delta: Delta::between(&o, &n),
            }
        })
        .collect()
}

/// Where a prefix stands in one summary.
fn lookup(root: &BoundedMap<PrefixNode>, path: &[KeyName]) -> Option<Counter> {
    let mut map = root;
    for (i, name) in path.iter().enumerate() {
        match map.entries.get(name) {
            Some(node) if i + 1 == path.len() => return Some(node.totals),
            Some(node) => match node.children.as_deref() {
                Some(children) => map = children,
                None => return Some(Counter::default()),
            },
            // Folded: it may be among the folded prefixes; else it is not there.
            None => return (!map.is_folded()).then(Counter::default),
        }
    }
    None
}

/// The same keys, memory and bytes (the keyspace overhead alone follows the
/// size of the main dict, which other namespaces change).
fn unchanged(o: &Counter, n: &Counter) -> bool {
    (
        o.keys,
        o.keys_with_expiry,
        o.memory,
        o.serialized_bytes,
        o.elements,
    ) == (
        n.keys,
        n.keys_with_expiry,
        n.memory,
        n.serialized_bytes,
        n.elements,
    )
}

fn prefix_paths(root: &BoundedMap<PrefixNode>, into: &mut BTreeSet<Vec<KeyName>>) {
    fn walk(map: &BoundedMap<PrefixNode>, path: &mut Vec<KeyName>, into: &mut BTreeSet<Vec<KeyName>>) {
        for (name, node) in map.sorted() {
            path.push(name.clone());
            into.insert(path.clone());
            if path.len() < NAMESPACE_LEVELS {
                if let Some(children) = node.children.as_deref() {
                    walk(children, path, into);
                }
            }
            path.pop();
        }
    }
    walk(root, &mut Vec::new(), into);
}

/// Every prefix of levels 1 and 2 in either summary, with its figures on
/// each side (`None` where that side folded it away).
pub(super) fn namespace_pairs(
    old: &Summary,
    new: &Summary,
) -> Vec<(Vec<KeyName>, Option<Counter>, Option<Counter>)> {
    let (o, n) = (&old.keys.prefixes.root, &new.keys.prefixes.root);
    let mut paths = BTreeSet::new();
    prefix_paths(o, &mut paths);
    prefix_paths(n, &mut paths);
    paths
        .into_iter()
        .map(|path| {
            let (old, new) = (lookup(o, &path), lookup(n, &path));
            (path, old, new)
        })
        .collect()
}

fn namespaces(old: &Summary, new: &Summary) -> Vec<NamespaceDiff> {
    let mut rows: Vec<NamespaceDiff> = namespace_pairs(old, new)
        .into_iter()
        .filter_map(|(path, old, new)| {
            if old.zip(new).is_some_and(|(o, n)| unchanged(&o, &n)) {
                return None;
            }
            Some(NamespaceDiff {
                level: path.len(),
                prefix: path.last()?.clone(),
                old,
                new,
                delta: old.zip(new).map(|(o, n)| Delta::between(&o, &n)),
            })
        })
        .collect();
    // Largest memory change first; unknown changes last.
    rows.sort_by(|a, b| {
        let size = |r: &NamespaceDiff| r.delta.map(|d| d.memory.unsigned_abs());
        size(b)
            .cmp(&size(a))
            .then(a.level.cmp(&b.level))
            .then_with(|| a.prefix.cmp(&b.prefix))
    });
    rows
}

fn metric_value(metric: Metric, r: &KeyRecord) -> u64 {
    match metric {
        Metric::Serialized => r.serialized_bytes,
        Metric::Elements => r.elements,
        _ => r.memory,
    }
}

/// The lists of `top` ranked by `metric`: overall, and per type by name.
fn lists(top: &TopSet, metric: Metric) -> (&TopKeys, BTreeMap<&str, &TopKeys>) {
    let pick = |t: &'_ [TopKeys; 3]| -> usize {
        match metric {
            Metric::Serialized => 1,
            Metric::Elements => 2,
            _ => 0,
        }
        .min(t.len() - 1)
    };
    let overall = match metric {
        Metric::Serialized => &top.by_serialized,
        Metric::Elements => &top.by_elements,
        _ => &top.by_memory,
    };
    let per_type = top.per_type.iter().map(|(name, t)| (name, &t[pick(t)])).collect();
    (overall, per_type)
}

/// The per-type list name of a key record (`module:X` keys are in `module`).
fn kind_of(r: &KeyRecord) -> &str {
    r.type_name.split(':').next().unwrap_or(&r.type_name)
}

fn became_big<'s>(old: &Summary, new: &'s Summary) -> Vec<BecameBig<'s>> {
    let mut out = Vec::new();
    for metric in [Metric::Memory, Metric::Serialized, Metric::Elements] {
        let (old_all, old_per_type) = lists(&old.keys.top, metric);
        let mut before: BTreeMap<(u64, &KeyName), u64> = BTreeMap::new();
        for list in std::iter::once(old_all).chain(old_per_type.values().copied()) {
            for r in &list.keys {
                before.insert((r.db, &r.key), metric_value(metric, r));
            }
        }
        let (new_all, new_per_type) = lists(&new.keys.top, metric);
        let mut seen = BTreeSet::new();
        let mut rows = Vec::new();
        for r in std::iter::once(new_all)
            .chain(new_per_type.values().copied())
            .flat_map(|l| &l.keys)
        {
            if !seen.insert((r.db, &r.key)) {
                continue;
            }
            let value = metric_value(metric, r);
            let old_value = before.get(&(r.db, &r.key)).copied();
            if old_value.is_some_and(|v| v >= value) {
                continue;
            }
            let old_at_most = match old_value {
                Some(_) => None,
                None => old_per_type
                    .get(kind_of(r))
                    .filter(|l| l.keys.len() >= l.n && l.n > 0)
                    .and_then(|l| l.keys.last())
                    .map(|last| metric_value(metric, last)),
            };
            // Below the old lists' threshold: it may have been as big before.
            if old_at_most.is_some_and(|v| v >= value) {
                continue;
            }
            rows.push(BecameBig {
                metric,
                new_value: value,
                old_value,
                old_at_most,
                key: r,
            });
        }
        rows.sort_by(|a, b| {
            b.new_value
                .cmp(&a.new_value)
                .then(a.key.db.cmp(&b.key.db))
                .then_with(|| a.key.key.cmp(&b.key.key))
        });
        out.extend(rows);
    }
    out
}

/// Every key of a side's top lists by memory (overall and per type), with
/// the smallest memory of each full per-type list.
struct MemoryLists<'s> {
    keys: BTreeMap<(u64, &'s KeyName), &'s KeyRecord>,
    full_at: BTreeMap<&'s str, u64>,
}

impl<'s> MemoryLists<'s> {
    fn of(s: &'s Summary) -> Self {
        let (overall, per_type) = lists(&s.keys.top, Metric::Memory);
        let mut keys = BTreeMap::new();
        for list in std::iter::once(overall).chain(per_type.values().copied()) {
            for r in &list.keys {
                keys.insert((r.db, &r.key), &**r);
            }
        }
        let full_at = per_type
            .into_iter()
            .filter(|(_, l)| l.n > 0 && l.keys.len() >= l.n)
            .filter_map(|(name, l)| Some((name, l.keys.last()?.memory)))
            .collect();
        MemoryLists { keys, full_at }
    }

    /// How big a key absent from these lists may be: `None` when its
    /// type's list is not full (then the key is not there at all).
    fn at_most(&self, r: &KeyRecord) -> Option<u64> {
        self.full_at.get(kind_of(r)).copied()
    }
}

/// Every key of the two sides' top lists by memory that changed, biggest
/// change first in each list (all of them: the diff shows the first `--top`).
pub(super) fn key_changes<'s>(old: &'s Summary, new: &'s Summary) -> KeyChanges<'s> {
    let (o, n) = (MemoryLists::of(old), MemoryLists::of(new));
    let mut out = KeyChanges {
        appeared: Vec::new(),
        disappeared: Vec::new(),
        grew: Vec::new(),
        shrank: Vec::new(),
    };
    let change = |kind, r: &'s KeyRecord, old_memory: Option<u64>, new_memory: Option<u64>| KeyChange {
        change: kind,
        db: r.db,
        key: &r.key,
        type_name: &r.type_name,
        old_memory,
        new_memory,
        old_at_most: None,
        new_at_most: None,
        delta: sub(new_memory.unwrap_or(0), old_memory.unwrap_or(0)),
    };
    for (id, &r) in &n.keys {
        match o.keys.get(id) {
            Some(before) if before.memory < r.memory => out.grew.push(change(
                KeyChangeKind::Grew,
                r,
                Some(before.memory),
                Some(r.memory),
            )),
            Some(before) if before.memory > r.memory => out.shrank.push(change(
                KeyChangeKind::Shrank,
                r,
                Some(before.memory),
                Some(r.memory),
            )),
            Some(_) => {}
            None => {
                let at_most = o.at_most(r);
                // No bigger than the old list's smallest: it may have been there as big.
                if at_most.is_none_or(|v| v < r.memory) {
                    out.appeared.push(KeyChange {
                        old_at_most: at_most,
                        ..change(KeyChangeKind::Appeared, r, None, Some(r.memory))
                    });
                }
            }
        }
    }
    for (id, &r) in &o.keys {
        if n.keys.contains_key(id) {
            continue;
        }
        let at_most = n.at_most(r);
        if at_most.is_none_or(|v| v < r.memory) {
            out.disappeared.push(KeyChange {
                new_at_most: at_most,
                ..change(KeyChangeKind::Disappeared, r, Some(r.memory), None)
            });
        }
    }
    // Biggest change first; ties in (db, key) order.
    for list in [
        &mut out.appeared,
        &mut out.disappeared,
        &mut out.grew,
        &mut out.shrank,
    ] {
        list.sort_by(|a, b| {
            b.delta
                .unsigned_abs()
                .cmp(&a.delta.unsigned_abs())
                .then(a.db.cmp(&b.db))
                .then_with(|| a.key.cmp(b.key))
        });
    }
    out
}

impl KeyChanges<'_> {
    /// The first `top` of each list.
    fn truncate(&mut self, top: usize) {
        for list in [
            &mut self.appeared,
            &mut self.disappeared,
            &mut self.grew,
            &mut self.shrank,
        ] {
            list.truncate(top);
        }
    }
}

/// Every figure that grew by more than its limit: totals, then namespaces
/// (largest memory growth first), then keys (largest growth first). Keys are
/// checked against both sides' complete top lists by memory, not only the
/// `--top` rows the diff shows.
pub fn growth_alerts(
    old: &Summary,
    new: &Summary,
    limits: &GrowthLimits,
    rule: ClusterRule,
) -> Vec<GrowthAlert> {
    let mut out = Vec::new();
    let (o, n) = (&old.keys.totals, &new.keys.totals);
    if let Some(l) = limits.total.as_ref().filter(|l| l.crossed(o.memory, n.memory)) {
        out.push(alert(GrowthWhat::Total, None, l, o.memory, n.memory));
    }
    if let Some(l) = limits.keys.as_ref().filter(|l| l.crossed(o.keys, n.keys)) {
        out.push(alert(GrowthWhat::Keys, None, l, o.keys, n.keys));
    }
    // Namespaces by memory, then by keys: each a figure of both sides' prefix trees.
    let figures: [(Option<&Limit>, GrowthWhat, CounterFigure); 2] = [
        (limits.namespace.as_ref(), GrowthWhat::Namespace, |c| c.memory),
        (limits.namespace_keys.as_ref(), GrowthWhat::NamespaceKeys, |c| {
            c.keys
        }),
    ];
    // Both sides' prefix trees walked once, for whichever limits are given.
    let pairs = if figures.iter().any(|(l, _, _)| l.is_some()) {
        namespace_pairs(old, new)
    } else {
        Vec::new()
    };
    for (limit, what, figure) in figures {
        let Some(l) = limit else { continue };
        let mut rows: Vec<GrowthAlert> = pairs
            .iter()
            .filter_map(|(path, o, n)| {
                let (o, n) = (figure(o.as_ref()?), figure(n.as_ref()?));
                // A level-2 node's name is the whole prefix (`cache:page`).
                let name = path.last()?.as_bytes();
                l.crossed(o, n).then(|| alert(what, Some(name), l, o, n))
            })
            .collect();
        rows.sort_by(|a, b| b.change.cmp(&a.change).then_with(|| a.name.cmp(&b.name)));
        out.extend(rows);
    }
    if let Some(l) = &limits.key {
        let changes = key_changes(old, new);
        let old_of = |c: &KeyChange<'_>| c.old_memory.or(c.old_at_most).unwrap_or(0);
        // grew and appeared are each sorted by growth; merge them.
        let mut rows: Vec<GrowthAlert> = changes
            .grew
            .iter()
            .chain(&changes.appeared)
            .filter_map(|c| {
                let (o, n) = (old_of(c), c.new_memory?);
                l.crossed(o, n).then(|| GrowthAlert {
                    db: Some(c.db),
                    ..alert(GrowthWhat::Key, Some(c.key.as_bytes()), l, o, n)
                })
            })
            .collect();
        rows.sort_by(|a, b| {
            b.change
                .cmp(&a.change)
                .then(a.db.cmp(&b.db))
                .then_with(|| a.name.cmp(&b.name))
        });
        out.extend(rows);
    }
    if let Some(l) = &limits.expiry_clusters {
        let appeared = new_clusters(old, new, rule);
        if l.crossed(0, appeared.len() as u64) {
            out.extend(appeared.iter().map(|c| {
                let window = format!("{}/{}", iso_utc(c.start_ms), iso_utc(c.end_ms));
                alert(GrowthWhat::ExpiryCluster, Some(window.as_bytes()), l, 0, c.keys)
            }));
        }
    }
    out
}

/// One figure of a namespace's counter (its memory, its keys).
type CounterFigure = fn(&Counter) -> u64;

/// Unix ms as an ISO 8601 UTC time, `2027-01-15T08:00:00Z`.
fn iso_utc(ms: i64) -> String {
    let (y, m, d, hh, mm, ss) = crate::format::civil(ms);
    format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
}

/// Expiry clusters of `new` that overlap none of `old`'s, earliest first.
fn new_clusters(old: &Summary, new: &Summary, rule: ClusterRule) -> Vec<ExpiryCluster> {
    let before = old.keys.expiry_clusters(rule);
    new.keys
        .expiry_clusters(rule)
        .into_iter()
        .filter(|c| {
            !before
                .iter()
                .any(|b| b.start_ms < c.end_ms && c.start_ms < b.end_ms)
        })
        .collect()
}

fn expiry(old: &Summary, new: &Summary, opts: &ReportOptions) -> ExpiryDiff {
    let (o, n) = (&old.keys.expiry, &new.keys.expiry);
    let width = opts
        .bucket_ms
        .unwrap_or_else(|| auto_width(n, AUTO_BARS, i64::MIN, i64::MAX))
        .max(o.width_ms())
        .max(n.width_ms());
    let rule: ClusterRule = opts.cluster_rule;
    let before = old.keys.expiry_clusters(rule);
    let new_clusters = new_clusters(old, new, rule);
    ExpiryDiff {
        bucket_ms: width,
        old_clusters: before.len(),
        new_clusters,
    }
}

fn side(s: &Summary) -> SideJson<'_> {
    SideJson {
        files: s.files.iter().map(|f| f.path.as_str()).collect(),
        now_ms: s.settings.now_ms,
    }
}

/// Compares two summaries. `opts.bucket_ms` and `opts.cluster_rule` choose
/// how expiry clusters are found.
pub fn build<'s>(old: &'s Summary, new: &'s Summary, opts: &ReportOptions) -> DiffJson<'s> {
    let (ok, nk) = (&old.keys, &new.keys);
    DiffJson {
        diff_version: DIFF_VERSION,
        tool: "rdblens",
        tool_version: env!("CARGO_PKG_VERSION"),
        old: side(old),
        new: side(new),
        totals: TotalsDiff {
            old: ok.totals,
            new: nk.totals,
            delta: Delta::between(&ok.totals, &nk.totals),
        },
        used_memory: UsedMemoryDiff::between(old, new),
        databases: groups(&ok.databases, &nk.databases),
        types: groups(&ok.types.to_map(), &nk.types.to_map()),
        encodings: groups(&ok.encodings.to_map(), &nk.encodings.to_map()),
        namespaces: namespaces(old, new),
        became_big: became_big(old, new),
        key_changes: {
            let mut changes = key_changes(old, new);
            changes.truncate(opts.top);
            changes
        },
        expiry: expiry(old, new, opts),
        growth_alerts: opts
            .growth
            .as_ref()
            .map(|l| growth_alerts(old, new, l, opts.cluster_rule)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamped_difference() {
        assert_eq!(sub(0, u64::MAX), i64::MIN);
        assert_eq!(sub(u64::MAX, 0), i64::MAX);
        assert_eq!(sub(5, 7), -2);
    }

    #[test]
    fn folded_prefixes_are_unknown_not_zero() {
        let names = ["a", "b", "c", "d", "e"].map(|n| KeyName::new(n.as_bytes()));
        let mut m = BoundedMap::<PrefixNode>::new(2);
        for n in &names {
            m.slot(n.as_bytes()).totals.keys += 1;
        }
        assert!(m.is_folded());
        let kept = m.entries.keys().next().unwrap().clone(); // ok: unit test
        assert_eq!(lookup(&m, &[kept]).map(|c| c.keys), Some(1));
        let folded = names
            .iter()
            .find(|n| !m.entries.contains_key(*n))
            .unwrap() // ok: unit test
            .clone();
        assert_eq!(lookup(&m, &[folded]), None);
        // Not folded: a missing prefix is not there at all.
        let small = BoundedMap::<PrefixNode>::new(8);
        assert_eq!(lookup(&small, &[names[0].clone()]), Some(Counter::default()));
    }
}
