//! `rdblens diff`: what changed between two summaries (yesterday's and
//! today's snapshot, of one dump or of a whole cluster): growth and
//! shrinkage per database, type, encoding and namespace, keys that became
//! big, and expiry clusters that were not there before. As JSON
//! (docs/json-schema.md, "The diff document") or tables.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use comfy_table::Cell;
use rdblens_analysis::acc::bounded::BoundedMap;
use rdblens_analysis::acc::counter::Counter;
use rdblens_analysis::acc::expiry::{auto_width, ClusterRule, ExpiryCluster};
use rdblens_analysis::acc::prefix::PrefixNode;
use rdblens_analysis::acc::top::{KeyRecord, Metric, TopKeys, TopSet};
use rdblens_analysis::{KeyName, Summary};
use serde::Serialize;

use crate::format::{duration, human_bytes, short_key, thousands, utc};
use crate::options::AUTO_BARS;
use crate::table::{heading, right, table};
use crate::ReportOptions;

/// Bumped on any incompatible change of the diff document.
pub const DIFF_VERSION: u32 = 1;

/// Namespace levels compared (the first two; deeper levels are samples).
const NAMESPACE_LEVELS: usize = 2;

/// New minus old, per counter field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Delta {
    pub keys: i64,
    pub keys_with_expiry: i64,
    pub memory: i64,
    pub keyspace_overhead: i64,
    pub serialized_bytes: i64,
    pub elements: i64,
}

fn sub(new: u64, old: u64) -> i64 {
    (i128::from(new) - i128::from(old)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

impl Delta {
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
    pub name: String,
    pub old: Counter,
    pub new: Counter,
    pub delta: Delta,
}

/// The totals in both summaries.
#[derive(Serialize)]
pub struct TotalsDiff {
    pub old: Counter,
    pub new: Counter,
    pub delta: Delta,
}

/// A namespace prefix in both summaries. A side is null when that side
/// folded the prefix away (more distinct prefixes than are kept), so its
/// figures are not known.
#[derive(Serialize)]
pub struct NamespaceDiff {
    pub prefix: KeyName,
    /// 1 for the first segment (`user`), 2 for the first two (`user:42`).
    pub level: usize,
    pub old: Option<Counter>,
    pub new: Option<Counter>,
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

/// One side, as given.
#[derive(Serialize)]
pub struct SideJson<'s> {
    pub files: Vec<&'s str>,
    /// Reference time of the side's TTLs (its first file's snapshot time, or `--now`).
    pub now_ms: i64,
}

#[derive(Serialize)]
pub struct ExpiryDiff {
    /// Bucket width both sides were compared at.
    pub bucket_ms: i64,
    pub old_clusters: usize,
    /// Clusters of the new side that overlap no cluster of the old one.
    pub new_clusters: Vec<ExpiryCluster>,
}

/// The whole document.
#[derive(Serialize)]
pub struct DiffJson<'s> {
    pub diff_version: u32,
    pub tool: &'static str,
    pub tool_version: &'static str,
    pub old: SideJson<'s>,
    pub new: SideJson<'s>,
    pub totals: TotalsDiff,
    pub databases: Vec<GroupDiff>,
    pub types: Vec<GroupDiff>,
    pub encodings: Vec<GroupDiff>,
    /// Prefixes whose figures changed, largest memory change first.
    pub namespaces: Vec<NamespaceDiff>,
    pub became_big: Vec<BecameBig<'s>>,
    pub expiry: ExpiryDiff,
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

fn namespaces(old: &Summary, new: &Summary) -> Vec<NamespaceDiff> {
    let (o, n) = (&old.keys.prefixes.root, &new.keys.prefixes.root);
    let mut paths = BTreeSet::new();
    prefix_paths(o, &mut paths);
    prefix_paths(n, &mut paths);
    let mut rows: Vec<NamespaceDiff> = paths
        .into_iter()
        .filter_map(|path| {
            let (old, new) = (lookup(o, &path), lookup(n, &path));
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
    let per_type = top
        .per_type
        .iter()
        .map(|(name, t)| (name.as_str(), &t[pick(t)]))
        .collect();
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

fn expiry(old: &Summary, new: &Summary, opts: &ReportOptions) -> ExpiryDiff {
    let (o, n) = (&old.keys.expiry, &new.keys.expiry);
    let width = opts
        .bucket_ms
        .unwrap_or_else(|| auto_width(n, AUTO_BARS, i64::MIN, i64::MAX))
        .max(o.width_ms())
        .max(n.width_ms());
    let rule: ClusterRule = opts.cluster_rule;
    let before = old.keys.expiry_clusters(rule);
    let new_clusters = new
        .keys
        .expiry_clusters(rule)
        .into_iter()
        .filter(|c| {
            !before
                .iter()
                .any(|b| b.start_ms < c.end_ms && c.start_ms < b.end_ms)
        })
        .collect();
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
        databases: groups(&ok.databases, &nk.databases),
        types: groups(&ok.types.to_map(), &nk.types.to_map()),
        encodings: groups(&ok.encodings.to_map(), &nk.encodings.to_map()),
        namespaces: namespaces(old, new),
        became_big: became_big(old, new),
        expiry: expiry(old, new, opts),
    }
}

pub fn to_json(old: &Summary, new: &Summary, opts: &ReportOptions) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&build(old, new, opts))
}

/// `+1.5 KiB`, `-512 B`, `0 B`.
pub fn signed_bytes(d: i64) -> String {
    match d {
        0 => "0 B".into(),
        d if d > 0 => format!("+{}", human_bytes(d.unsigned_abs())),
        d => format!("-{}", human_bytes(d.unsigned_abs())),
    }
}

/// `+1,234`, `-5`, `0`.
pub fn signed_count(d: i64) -> String {
    match d {
        0 => "0".into(),
        d if d > 0 => format!("+{}", thousands(d.unsigned_abs())),
        d => format!("-{}", thousands(d.unsigned_abs())),
    }
}

/// Change relative to the old value: `+12.5%`, `new`, `-`.
fn change(old: u64, delta: i64) -> String {
    if delta == 0 {
        return "-".into();
    }
    if old == 0 {
        return "new".into();
    }
    format!("{:+.1}%", delta as f64 * 100.0 / old as f64)
}

/// Columns of a table of groups before and after.
fn old_new_header(label: &str) -> [&str; 8] {
    [
        label,
        "keys old",
        "keys new",
        "change",
        "memory old",
        "memory new",
        "change",
        "",
    ]
}

fn group_table(out: &mut String, opts: &ReportOptions, title: &str, label: &str, rows: &[GroupDiff]) {
    heading(out, title);
    let mut t = table(opts, &old_new_header(label));
    for r in rows {
        t.add_row(vec![
            Cell::new(&r.name),
            right(thousands(r.old.keys)),
            right(thousands(r.new.keys)),
            right(signed_count(r.delta.keys)),
            right(human_bytes(r.old.memory)),
            right(human_bytes(r.new.memory)),
            right(signed_bytes(r.delta.memory)),
            right(change(r.old.memory, r.delta.memory)),
        ]);
    }
    let _ = writeln!(out, "{t}");
}

fn files_line(s: &SideJson<'_>) -> String {
    let mut names: Vec<&str> = s.files.iter().take(3).copied().collect();
    if s.files.len() > 3 {
        names.push("...");
    }
    let files = match s.files.len() {
        1 => String::new(),
        n => format!("{n} files, "),
    };
    format!("{} ({files}snapshot {} UTC)", names.join(", "), utc(s.now_ms))
}

/// The diff as tables.
pub fn to_table(old: &Summary, new: &Summary, opts: &ReportOptions) -> String {
    let d = build(old, new, opts);
    let mut out = String::new();
    let _ = writeln!(out, "old: {}", files_line(&d.old));
    let _ = writeln!(out, "new: {}", files_line(&d.new));
    let t0 = &d.totals;
    let _ = writeln!(
        out,
        "keys {} -> {} ({}), estimated memory {} -> {} ({}), serialized {} -> {} ({})",
        thousands(t0.old.keys),
        thousands(t0.new.keys),
        signed_count(t0.delta.keys),
        human_bytes(t0.old.memory),
        human_bytes(t0.new.memory),
        signed_bytes(t0.delta.memory),
        human_bytes(t0.old.serialized_bytes),
        human_bytes(t0.new.serialized_bytes),
        signed_bytes(t0.delta.serialized_bytes)
    );
    group_table(&mut out, opts, "Databases", "db", &d.databases);
    group_table(&mut out, opts, "Types", "type", &d.types);
    group_table(&mut out, opts, "Encodings", "type encoding", &d.encodings);

    heading(&mut out, "Namespaces: largest changes");
    if d.namespaces.is_empty() {
        let _ = writeln!(out, "no namespace changed");
    } else {
        let mut t = table(opts, &old_new_header("prefix"));
        let unknown = || "?".to_string();
        for r in d.namespaces.iter().take(opts.top) {
            let indent = if r.level > 1 { "  " } else { "" };
            t.add_row(vec![
                Cell::new(format!("{indent}{}", short_key(r.prefix.as_bytes()))),
                right(r.old.map_or_else(unknown, |c| thousands(c.keys))),
                right(r.new.map_or_else(unknown, |c| thousands(c.keys))),
                right(r.delta.map_or_else(unknown, |x| signed_count(x.keys))),
                right(r.old.map_or_else(unknown, |c| human_bytes(c.memory))),
                right(r.new.map_or_else(unknown, |c| human_bytes(c.memory))),
                right(r.delta.map_or_else(unknown, |x| signed_bytes(x.memory))),
                right(match (r.old, r.delta) {
                    (Some(o), Some(x)) => change(o.memory, x.memory),
                    _ => unknown(),
                }),
            ]);
        }
        let _ = writeln!(out, "{t}");
        if d.namespaces.len() > opts.top {
            let _ = writeln!(
                out,
                "(+{} more changed prefixes in the JSON output)",
                thousands((d.namespaces.len() - opts.top) as u64)
            );
        }
    }

    heading(&mut out, "Keys that became big");
    if d.became_big.is_empty() {
        let _ = writeln!(out, "none: every key of the new top lists was as big before");
    } else {
        let mut t = table(opts, &["by", "db", "key", "type", "old", "new"]);
        let show = |metric: Metric, v: u64| match metric {
            Metric::Elements => thousands(v),
            _ => human_bytes(v),
        };
        for metric in [Metric::Memory, Metric::Serialized, Metric::Elements] {
            for r in d.became_big.iter().filter(|r| r.metric == metric).take(opts.top) {
                let old = match (r.old_value, r.old_at_most) {
                    (Some(v), _) => show(metric, v),
                    (None, Some(v)) => format!("<= {}", show(metric, v)),
                    (None, None) => "absent".into(),
                };
                t.add_row(vec![
                    Cell::new(match metric {
                        Metric::Serialized => "serialized",
                        Metric::Elements => "elements",
                        _ => "memory",
                    }),
                    right(r.key.db),
                    Cell::new(short_key(r.key.key.as_bytes())),
                    Cell::new(&r.key.type_name),
                    right(old),
                    right(show(metric, r.new_value)),
                ]);
            }
        }
        let _ = writeln!(out, "{t}");
    }

    heading(
        &mut out,
        &format!("New expiry clusters ({} buckets)", duration(d.expiry.bucket_ms)),
    );
    if d.expiry.new_clusters.is_empty() {
        let _ = writeln!(
            out,
            "none ({} clusters in the old snapshot)",
            d.expiry.old_clusters
        );
    } else {
        let mut t = table(opts, &["from (UTC)", "to", "keys", "memory", "namespaces"]);
        for c in &d.expiry.new_clusters {
            let ns: Vec<String> = c
                .namespaces
                .iter()
                .take(3)
                .map(|(n, k)| format!("{n} ({k})"))
                .collect();
            t.add_row(vec![
                Cell::new(utc(c.start_ms)),
                Cell::new(utc(c.end_ms)),
                right(thousands(c.keys)),
                right(human_bytes(c.memory)),
                Cell::new(ns.join(", ")),
            ]);
        }
        let _ = writeln!(out, "{t}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_formats() {
        assert_eq!(signed_bytes(0), "0 B");
        assert_eq!(signed_bytes(2048), "+2.0 KiB");
        assert_eq!(signed_bytes(-10), "-10 B");
        assert_eq!(signed_count(-1234), "-1,234");
        assert_eq!(change(200, 50), "+25.0%");
        assert_eq!(change(0, 5), "new");
        assert_eq!(change(5, 0), "-");
        assert_eq!(sub(0, u64::MAX), i64::MIN);
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
