//! The report model: everything a report shows, built once from a summary
//! and rendered as it is by every renderer. Its serialization is the JSON
//! document (one documented, versioned schema, docs/json-schema.md: field
//! names are stable, integers exact, keys `key` when valid UTF-8 and
//! `key_hex` otherwise); the tables and the HTML page read the same
//! values, so they cannot disagree with it. The design-rule audit runs
//! here, once per model, and the model keeps it for a `--fail-on` gate.

mod sections;
mod shards;
mod sizes;

use rdblens_audit::{Audit, Counts, Finding, RuleSummary};
use rdblens_summary::acc::access::Access;
use rdblens_summary::acc::counter::Counter;
use rdblens_summary::acc::empty::EmptyCollections;
use rdblens_summary::{Compression, Damage, FileInfo, Summary, UsedMemory};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

pub use sections::{
    length_bars, ExpiredJson, ExpiredNamespaceJson, ExpiryBar, ExpiryJson, FoldedJson, HistogramBar,
    KeyNamesJson, KeysMemory, LimitJson, PrefixJson, PrefixesJson, ProblemJson, SlotJson, SlotsJson, TagJson,
    TopJson, TtlBucketJson,
};
pub use shards::{ImbalanceJson, ShardJson, ShardsJson};
pub use sizes::{Percentiles, ValueSizesJson};

use crate::options::ReportOptions;
use crate::section::{BuildContext, RegisteredModels, Section};

/// Bumped on any incompatible change of the JSON layout.
pub const SCHEMA_VERSION: u32 = 1;

/// A group of keys (a database, a type, an encoding) and its figures.
#[derive(Serialize)]
pub struct Group<'s> {
    /// The group's name (`0` for db0, `hash`, `hash listpack`...).
    pub name: String,
    /// Its figures.
    #[serde(flatten)]
    pub counter: &'s Counter,
}

/// When building a model runs the audit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditWhen {
    /// Only when a section shows it (`findings`, `plans`).
    Shown,
    /// Always, for a `--fail-on` gate that reads it from the model.
    Always,
}

/// The whole report; sections not asked for are `None` (omitted from the JSON).
#[derive(Serialize)]
pub struct ReportJson<'s> {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// `rdblens`.
    pub tool: &'static str,
    /// The version of rdblens that wrote it.
    pub tool_version: &'static str,
    /// The files, without their per-shard figures (those are in `shards`).
    pub files: Vec<FileInfo>,
    /// The time TTLs are relative to (unix ms).
    pub now_ms: i64,
    /// Figures of every key.
    pub totals: &'s Counter,
    /// `used_memory` predicted once the target server (one per file) has
    /// loaded the keys, summed over the files; absent unless every file
    /// has a prediction (no key filter, a whole walk, no damaged value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_memory: Option<UsedMemory>,
    /// Per database, by number.
    pub databases: Vec<Group<'s>>,
    /// Per type.
    pub types: Vec<Group<'s>>,
    /// Per file (section `shards`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<ShardsJson<'s>>,
    /// Per type and encoding on the target server (section `encodings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encodings: Option<Vec<Group<'s>>>,
    /// Per on-disk type (section `encodings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdb_types: Option<Vec<Group<'s>>>,
    /// Keys over or near the compact-encoding limits (section `encodings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<Vec<LimitJson<'s>>>,
    /// The biggest keys (section `bigkeys`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_keys: Option<TopJson<'s>>,
    /// The biggest keys of each type (section `bigkeys`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_keys_per_type: Option<std::collections::BTreeMap<&'s str, TopJson<'s>>>,
    /// p50/p90/p99/max of memory, length and largest element per type
    /// (section `bigkeys`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_sizes: Option<Vec<ValueSizesJson>>,
    /// Key-name lengths and problems (section `keys`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_names: Option<KeyNamesJson>,
    /// The namespace tree (section `prefixes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefixes: Option<PrefixesJson<'s>>,
    /// Time to live (section `ttl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<Vec<TtlBucketJson>>,
    /// Expiry times and clusters (section `expiry`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiry: Option<ExpiryJson<'s>>,
    /// Cluster slots and hash tags (section `slots`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slots: Option<SlotsJson>,
    /// Idle times and access frequencies (section `access`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<&'s Access>,
    /// The sections defined in their own file (`section/`): `hot_and_big`.
    #[serde(flatten)]
    pub registered: RegisteredModels<'s>,
    /// `findings` (design-rule findings, most severe first, docs/audit.md)
    /// and `audit` (per-rule totals, including what the caps left out),
    /// when the section `findings` is shown.
    #[serde(flatten)]
    audit: AuditRun,
    /// Split plans for the big keys and sprawling namespaces (section
    /// `plans`, docs/advisor.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plans: Option<rdblens_advice::Plans>,
    /// How many values were compressed, and how much.
    pub compression: &'s Compression,
    /// Lists, sets, sorted sets and hashes with no element: a server drops
    /// them on load, so they are in no other figure.
    #[serde(rename = "empty_collections")]
    pub empty: &'s EmptyCollections,
    /// Keys whose value could not be decoded.
    pub damaged_keys: u64,
    /// The first few of them.
    pub damage: &'s [Damage],
    /// How the renderers lay it out (terminal width, rows, order).
    #[serde(skip)]
    pub options: &'s ReportOptions,
}

/// The audit of one model, and whether the report shows it.
struct AuditRun {
    audit: Option<Audit>,
    shown: bool,
}

/// The audit's totals (section `findings`), as the JSON has them.
#[derive(Serialize)]
struct AuditJson<'a> {
    /// Findings per severity, listed or not (what `--fail-on` looks at).
    counts: &'a Counts,
    /// Every rule in catalogue order.
    rules: &'a [RuleSummary],
}

impl Serialize for AuditRun {
    /// Two fields of the report, `findings` then `audit`, or none.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let shown = self.audit.as_ref().filter(|_| self.shown);
        let mut map = serializer.serialize_map(None)?;
        if let Some(a) = shown {
            map.serialize_entry::<str, [Finding]>("findings", &a.findings)?;
            map.serialize_entry(
                "audit",
                &AuditJson {
                    counts: &a.counts,
                    rules: &a.rules,
                },
            )?;
        }
        map.end()
    }
}

/// Runs the audit: the one place the report crate does.
fn run_audit(s: &Summary) -> Audit {
    #[cfg(test)]
    AUDITS_RUN.with(|n| n.set(n.get() + 1));
    rdblens_audit::audit(s)
}

#[cfg(test)]
thread_local! {
    /// Audits run on this thread (tests show that a report runs one).
    pub(crate) static AUDITS_RUN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn groups<'c, K: ToString>(map: impl IntoIterator<Item = (K, &'c Counter)>) -> Vec<Group<'c>> {
    map.into_iter()
        .map(|(k, c)| Group {
            name: k.to_string(),
            counter: c,
        })
        .collect()
}

impl<'s> ReportJson<'s> {
    /// The model of the sections `opts` asks for. The audit runs once, when
    /// a section shows it or `when` is [`AuditWhen::Always`].
    pub fn build(s: &'s Summary, opts: &'s ReportOptions, when: AuditWhen) -> Self {
        let k = &s.keys;
        let on = |sec: Section| opts.sections.contains(&sec);
        let needed = on(Section::Findings) || on(Section::Plans) || when == AuditWhen::Always;
        let audit = needed.then(|| run_audit(s));
        let plans = on(Section::Plans)
            .then(|| audit.as_ref().map(|a| opts.plans(s, a)))
            .flatten();
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
            used_memory: UsedMemory::total(s.files.iter().map(|f| f.used_memory.as_ref())),
            databases: groups(&k.databases),
            types: groups(&k.types),
            shards: on(Section::Shards).then(|| shards::build(s)),
            encodings: on(Section::Encodings).then(|| groups(&k.encodings)),
            rdb_types: on(Section::Encodings).then(|| groups(&k.rdb_types)),
            limits: on(Section::Encodings).then(|| sections::limits(k)),
            top_keys: on(Section::Bigkeys).then(|| sections::top(&k.top)),
            top_keys_per_type: on(Section::Bigkeys).then(|| {
                k.top
                    .per_type
                    .iter()
                    .map(|(t, [m, ser, el])| {
                        let lists = TopJson {
                            by_memory: &m.keys,
                            by_serialized: &ser.keys,
                            by_elements: &el.keys,
                        };
                        (t, lists)
                    })
                    .collect()
            }),
            value_sizes: on(Section::Bigkeys).then(|| sizes::build(k)),
            key_names: on(Section::Keys).then(|| sections::key_names(k)),
            prefixes: on(Section::Prefixes).then(|| sections::prefixes(s)),
            ttl: on(Section::Ttl).then(|| sections::ttl(&k.ttl.buckets.keys, &k.ttl.buckets.memory)),
            expiry: on(Section::Expiry).then(|| sections::expiry(k, opts)),
            slots: on(Section::Slots).then(|| sections::slots(k, opts.top)),
            access: on(Section::Access).then_some(&k.access),
            registered: RegisteredModels::build(s, &opts.sections, &BuildContext { top: opts.top }),
            audit: AuditRun {
                audit,
                shown: on(Section::Findings),
            },
            plans,
            compression: &k.compression,
            empty: &k.empty,
            damaged_keys: k.damaged_keys,
            damage: &k.damage,
            options: opts,
        }
    }

    /// The audit, when it ran (see [`AuditWhen`]).
    pub fn audit(&self) -> Option<&Audit> {
        self.audit.audit.as_ref()
    }

    /// The audit when the section `findings` shows it.
    pub fn findings(&self) -> Option<&Audit> {
        self.audit.audit.as_ref().filter(|_| self.audit.shown)
    }

    /// The audit, for a `--fail-on` gate once the report is rendered.
    pub fn into_audit(self) -> Option<Audit> {
        self.audit.audit
    }
}
