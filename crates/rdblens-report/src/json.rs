//! The JSON report: one documented, versioned schema (docs/json-schema.md).
//! Field names are stable; integers are exact; keys are `key` when valid
//! UTF-8 and `key_hex` otherwise.

use rdblens_analysis::acc::counter::Counter;
use rdblens_analysis::acc::expiry::ExpiryCluster;
use rdblens_analysis::acc::names::NameProblem;
use rdblens_analysis::acc::prefix::PrefixNode;
use rdblens_analysis::acc::top::KeyRecord;
use rdblens_analysis::acc::ttl::TTL_BUCKETS;
use rdblens_analysis::{FileInfo, KeyName, Summary};
use serde::Serialize;

use crate::options::{ReportOptions, Section};

/// Bumped on any incompatible change of the JSON layout.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
pub struct Group<'s> {
    pub name: String,
    #[serde(flatten)]
    pub counter: &'s Counter,
}

#[derive(Serialize)]
pub struct HistogramBar {
    pub from: u64,
    pub keys: u64,
}

#[derive(Serialize)]
pub struct KeyNamesJson {
    pub keys: u64,
    pub min: Option<u64>,
    pub max: Option<u64>,
    pub mean: Option<f64>,
    pub p50: Option<u64>,
    pub p90: Option<u64>,
    pub p99: Option<u64>,
    pub histogram: Vec<HistogramBar>,
    pub problems: Vec<ProblemJson>,
}

#[derive(Serialize)]
pub struct ProblemJson {
    pub id: NameProblem,
    pub keys: u64,
    pub memory: u64,
    pub examples: Vec<KeyName>,
}

#[derive(Serialize)]
pub struct PrefixJson {
    pub prefix: KeyName,
    #[serde(flatten)]
    pub totals: Counter,
    pub ttl: Vec<TtlBucketJson>,
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
}

#[derive(Serialize)]
pub struct FoldedJson {
    /// Distinct prefixes folded (estimated from the kept sample).
    pub prefixes: u64,
    #[serde(flatten)]
    pub totals: Counter,
}

#[derive(Serialize)]
pub struct TtlBucketJson {
    pub bucket: &'static str,
    pub keys: u64,
    pub memory: u64,
}

#[derive(Serialize)]
pub struct ExpiryJson {
    pub bucket_ms: i64,
    /// `--expiry-window` (unix ms, end exclusive), when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<[i64; 2]>,
    pub stored_resolution_ms: i64,
    pub expiring_keys: u64,
    pub expiring_memory: u64,
    pub histogram: Vec<ExpiryBar>,
    pub clusters: Vec<ExpiryCluster>,
}

#[derive(Serialize)]
pub struct ExpiryBar {
    pub start_ms: i64,
    pub keys: u64,
    pub memory: u64,
}

#[derive(Serialize, Clone, Copy)]
pub struct SlotJson {
    pub slot: usize,
    pub keys: u64,
    pub memory: u64,
}

#[derive(Serialize)]
pub struct TagJson {
    pub tag: KeyName,
    pub keys: u64,
    pub memory: u64,
}

#[derive(Serialize)]
pub struct SlotsJson {
    pub slots_used: usize,
    pub keys_with_hash_tag: u64,
    pub most_keys: Vec<SlotJson>,
    pub most_memory: Vec<SlotJson>,
    pub hash_tags: Vec<TagJson>,
}

#[derive(Serialize)]
pub struct TopJson<'s> {
    pub by_memory: &'s [KeyRecord],
    pub by_serialized: &'s [KeyRecord],
    pub by_elements: &'s [KeyRecord],
}

#[derive(Serialize)]
pub struct LimitJson {
    pub limit: String,
    pub threshold: u64,
    pub over_keys: u64,
    pub over_memory: u64,
    pub over_savings: u64,
    pub over_by_small_margin: u64,
    pub near_keys: u64,
    pub near_memory: u64,
    pub over_examples: Vec<KeyRecord>,
}

/// The whole JSON document; sections not asked for are omitted.
#[derive(Serialize)]
pub struct ReportJson<'s> {
    pub schema_version: u32,
    pub tool: &'static str,
    pub tool_version: &'static str,
    /// The files, without their per-shard figures (those are in `shards`).
    pub files: Vec<FileInfo>,
    pub now_ms: i64,
    pub totals: &'s Counter,
    pub databases: Vec<Group<'s>>,
    pub types: Vec<Group<'s>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<crate::shards::ShardsJson<'s>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encodings: Option<Vec<Group<'s>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdb_types: Option<Vec<Group<'s>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<Vec<LimitJson>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_keys: Option<TopJson<'s>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_keys_per_type: Option<std::collections::BTreeMap<&'s str, TopJson<'s>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_names: Option<KeyNamesJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefixes: Option<PrefixesJson<'s>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<Vec<TtlBucketJson>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiry: Option<ExpiryJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slots: Option<SlotsJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<&'s rdblens_analysis::acc::access::Access>,
    /// Design-rule findings, most severe first (docs/audit.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<Vec<rdblens_audit::Finding>>,
    /// Per-rule totals of the audit, including what the caps left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditJson>,
    /// Split plans for the big keys and sprawling namespaces (docs/advisor.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plans: Option<rdblens_advice::Plans>,
    pub compression: &'s rdblens_analysis::Compression,
    pub damaged_keys: u64,
    pub damage: &'s [rdblens_analysis::Damage],
}

/// The audit's totals (section `findings`).
#[derive(Serialize)]
pub struct AuditJson {
    /// Findings per severity, listed or not (what `--fail-on` looks at).
    pub counts: rdblens_audit::Counts,
    /// Every rule in catalogue order.
    pub rules: Vec<rdblens_audit::RuleSummary>,
}

fn groups<'c, K: ToString>(map: impl IntoIterator<Item = (K, &'c Counter)>) -> Vec<Group<'c>> {
    map.into_iter()
        .map(|(k, c)| Group {
            name: k.to_string(),
            counter: c,
        })
        .collect()
}

pub(crate) fn ttl_json(keys: &[u64; 10], memory: &[u64; 10]) -> Vec<TtlBucketJson> {
    (0..10)
        .map(|i| TtlBucketJson {
            bucket: TTL_BUCKETS[i],
            keys: keys[i],
            memory: memory[i],
        })
        .collect()
}

/// Prefix nodes, heaviest (by memory) first.
pub(crate) fn prefixes_json(
    map: &rdblens_analysis::acc::bounded::BoundedMap<PrefixNode>,
) -> (Vec<PrefixJson>, Option<FoldedJson>) {
    let mut out: Vec<PrefixJson> = map
        .sorted()
        .map(|(name, node)| {
            let (children, folded) = node.children.as_deref().map(prefixes_json).unwrap_or_default();
            PrefixJson {
                prefix: name.clone(),
                totals: node.totals,
                ttl: ttl_json(&node.ttl.keys, &node.ttl.memory),
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
    let folded = map.is_folded().then_some(FoldedJson {
        prefixes: map.folded_names_estimate(),
        totals: map.other.totals,
    });
    (out, folded)
}

pub fn build<'s>(s: &'s Summary, opts: &ReportOptions) -> ReportJson<'s> {
    let k = &s.keys;
    let on = |sec: Section| opts.sections.contains(&sec);
    let top = |t: &'s rdblens_analysis::acc::top::TopSet| TopJson {
        by_memory: &t.by_memory.keys,
        by_serialized: &t.by_serialized.keys,
        by_elements: &t.by_elements.keys,
    };
    let lengths = &k.key_names.lengths;
    let width = opts.expiry_bucket_ms(&k.expiry);
    let audit = (on(Section::Findings) || on(Section::Plans)).then(|| rdblens_audit::audit(s));
    let plans = on(Section::Plans)
        .then(|| audit.as_ref().map(|a| opts.plans(s, a)))
        .flatten();
    let audit = audit.filter(|_| on(Section::Findings));
    ReportJson {
        schema_version: SCHEMA_VERSION,
        tool: "rdblens",
        tool_version: env!("CARGO_PKG_VERSION"),
        files: s
            .files
            .iter()
            .map(|f| FileInfo {
                shard: None,
                ..f.clone()
            })
            .collect(),
        now_ms: s.settings.now_ms,
        totals: &k.totals,
        databases: groups(&k.databases),
        types: groups(&k.types),
        shards: on(Section::Shards).then(|| crate::shards::build(s)),
        encodings: on(Section::Encodings).then(|| groups(&k.encodings)),
        rdb_types: on(Section::Encodings).then(|| groups(&k.rdb_types)),
        limits: on(Section::Encodings).then(|| {
            k.limits
                .groups
                .iter()
                .map(|(name, g)| LimitJson {
                    limit: name.clone(),
                    threshold: g.threshold,
                    over_keys: g.over_keys,
                    over_memory: g.over_memory,
                    over_savings: g.over_savings,
                    over_by_small_margin: g.over_by_small_margin,
                    near_keys: g.near_keys,
                    near_memory: g.near_memory,
                    over_examples: g.over_examples.keys.clone(),
                })
                .collect()
        }),
        top_keys: on(Section::Bigkeys).then(|| top(&k.top)),
        top_keys_per_type: on(Section::Bigkeys).then(|| {
            k.top
                .per_type
                .iter()
                .map(|(t, [m, ser, el])| {
                    (
                        t.as_str(),
                        TopJson {
                            by_memory: &m.keys,
                            by_serialized: &ser.keys,
                            by_elements: &el.keys,
                        },
                    )
                })
                .collect()
        }),
        key_names: on(Section::Keys).then(|| KeyNamesJson {
            keys: lengths.count,
            min: lengths.min,
            max: lengths.max,
            mean: lengths.mean(),
            p50: lengths.quantile(0.5),
            p90: lengths.quantile(0.9),
            p99: lengths.quantile(0.99),
            histogram: crate::table::length_bars(lengths)
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
        }),
        prefixes: on(Section::Prefixes).then(|| {
            let (namespaces, folded) = prefixes_json(&k.prefixes.root);
            PrefixesJson {
                separator: char::from(s.settings.separator).to_string(),
                depth: s.settings.prefix_depth,
                namespaces,
                folded,
                no_namespace: &k.prefixes.unprefixed,
            }
        }),
        ttl: on(Section::Ttl).then(|| ttl_json(&k.ttl.buckets.keys, &k.ttl.buckets.memory)),
        expiry: on(Section::Expiry).then(|| ExpiryJson {
            bucket_ms: width,
            window: opts.expiry_window.map(|(from, to)| [from, to]),
            stored_resolution_ms: k.expiry.width_ms(),
            expiring_keys: k.expiry.expiring_keys,
            expiring_memory: k.expiry.expiring_memory,
            histogram: k
                .expiry
                .rebucket_range(width, opts.expiry_range().0, opts.expiry_range().1)
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
        }),
        slots: on(Section::Slots).then(|| slots_json(k, opts.top)),
        access: on(Section::Access).then_some(&k.access),
        findings: audit.as_ref().map(|a| a.findings.clone()),
        audit: audit.map(|a| AuditJson {
            counts: a.counts,
            rules: a.rules,
        }),
        plans,
        compression: &k.compression,
        damaged_keys: k.damaged_keys,
        damage: &k.damage,
    }
}

fn slots_json(k: &rdblens_analysis::KeyStats, n: usize) -> SlotsJson {
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
