//! The summary's settings contract, in one place: everything that shapes
//! the accumulators. Two summaries merge only when [`Settings::differences`]
//! is empty, and [`Summary::merge`](crate::Summary::merge) itself refuses
//! otherwise, so no caller can fold a summary made with other filters, another
//! target server or other limits into one made without them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::filter::{KeyFilter, SizeRange, TtlFilter};
use crate::keyname::KeyName;
use crate::rules::RuleConfig;

/// Settings that shape the accumulators; summaries merge only when they agree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Keys kept per top list (`--top`).
    pub top: usize,
    /// Namespace separator byte (`--separator`).
    pub separator: u8,
    /// Namespace levels aggregated (`--depth`).
    pub prefix_depth: usize,
    /// Reference time for TTLs, unix ms.
    pub now_ms: i64,
    /// Blocks of expiry cells kept before the cells widen ([`Options::expiry_buckets`](crate::Options::expiry_buckets)).
    pub expiry_buckets: usize,
    /// Design-rule thresholds the per-key rules were evaluated with.
    pub rules: RuleConfig,
    /// The filters and model options. A summary file keeps them beside the
    /// summary (its `shaping`, the layout of summary_version 5), so they
    /// are not serialized here; [`SummaryFile`](crate::SummaryFile) moves
    /// them in and out.
    #[serde(skip)]
    pub shaping: Shaping,
}

/// Options besides the accumulators' own sizes that change what the
/// accumulators hold: the key filters, the target server and its limits,
/// `--now`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shaping {
    /// `--db`, sorted.
    pub dbs: Vec<u64>,
    /// `--type`, by type name, sorted.
    pub types: Vec<String>,
    /// `--match`.
    pub pattern: Option<KeyName>,
    /// `--prefix`.
    pub prefix: Option<KeyName>,
    /// `--target` (the profile name), when given.
    pub target: Option<String>,
    /// `--jemalloc-quantum`, when given.
    pub jemalloc_quantum: Option<u64>,
    /// Encoding limits set by `--config` and `--limit`: redis.conf name
    /// (listpack spelling) -> value, the last setting of each.
    pub limits: BTreeMap<String, String>,
    /// `--now` in ms, when given (otherwise each file's own snapshot time).
    pub now_ms: Option<i64>,
    /// `--regex`, `--exclude`, the size and TTL filters, one line each
    /// (absent when none was given, so older summaries read the same).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_filters: Vec<String>,
}

/// One setting of the contract, by the command-line flag that sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Setting {
    /// `--db`: the databases analysed.
    Db,
    /// `--type`: the types analysed.
    Type,
    /// `--match`: the glob keys must match.
    Match,
    /// `--prefix`: the prefix keys must start with.
    Prefix,
    /// `--target`: the server profile estimated for.
    Target,
    /// `--jemalloc-quantum`.
    JemallocQuantum,
    /// Encoding limits set by `--config` and `--limit`.
    EncodingLimits,
    /// `--regex`, `--exclude` and the size and TTL filters.
    KeyFilters,
    /// `--now`: each file's own snapshot time when absent.
    Now,
    /// `--top`: keys kept per top list.
    Top,
    /// `--separator`: the namespace separator.
    Separator,
    /// `--depth`: namespace levels aggregated.
    Depth,
    /// Expiry blocks kept (set by the caller, no flag).
    ExpiryBlocks,
    /// Design-rule settings (`--rules`, `--set`, `--config`).
    Rules,
}

/// A setting that differs between two summaries, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The setting that differs.
    pub setting: Setting,
    /// `--top 20 vs 3`.
    pub text: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Differences as one line: `--top 20 vs 3; --depth 2 vs 3`.
pub fn join_differences(differences: &[Difference]) -> String {
    differences
        .iter()
        .map(|d| d.text.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The filters beyond `--db`, `--type`, `--match`, `--prefix`, as text.
pub(crate) fn key_filters(f: &KeyFilter) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(r) = &f.regex {
        out.push(format!("--regex {}", r.as_str()));
    }
    for e in &f.exclude {
        out.push(format!("--exclude {}", String::from_utf8_lossy(e)));
    }
    if f.size != SizeRange::default() {
        out.push(format!("size {:?}", f.size));
    }
    if f.ttl != TtlFilter::Any {
        out.push(format!("ttl {:?}", f.ttl));
    }
    out
}

impl Shaping {
    fn differences(&self, other: &Shaping, out: &mut Vec<Difference>) {
        let name = |k: &Option<KeyName>| match k {
            None => "(none)".to_string(),
            Some(k) => format!("\"{}\"", rdblens_parser::escape_bytes(k.as_bytes())),
        };
        let or_none = |v: Option<String>| v.unwrap_or_else(|| "(none)".into());
        let mut push = |setting, text| out.push(Difference { setting, text });
        if self.dbs != other.dbs {
            push(Setting::Db, format!("--db {:?} vs {:?}", self.dbs, other.dbs));
        }
        if self.types != other.types {
            push(
                Setting::Type,
                format!("--type {:?} vs {:?}", self.types, other.types),
            );
        }
        if self.pattern != other.pattern {
            push(
                Setting::Match,
                format!("--match {} vs {}", name(&self.pattern), name(&other.pattern)),
            );
        }
        if self.prefix != other.prefix {
            push(
                Setting::Prefix,
                format!("--prefix {} vs {}", name(&self.prefix), name(&other.prefix)),
            );
        }
        if self.target != other.target {
            push(
                Setting::Target,
                format!(
                    "--target {} vs {}",
                    or_none(self.target.clone()),
                    or_none(other.target.clone())
                ),
            );
        }
        if self.jemalloc_quantum != other.jemalloc_quantum {
            push(
                Setting::JemallocQuantum,
                format!(
                    "--jemalloc-quantum {} vs {}",
                    or_none(self.jemalloc_quantum.map(|q| q.to_string())),
                    or_none(other.jemalloc_quantum.map(|q| q.to_string()))
                ),
            );
        }
        if self.limits != other.limits {
            let show = |m: &BTreeMap<String, String>| {
                let v: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
                if v.is_empty() {
                    "(defaults)".to_string()
                } else {
                    v.join(",")
                }
            };
            push(
                Setting::EncodingLimits,
                format!(
                    "encoding limits (--config, --limit) {} vs {}",
                    show(&self.limits),
                    show(&other.limits)
                ),
            );
        }
        if self.key_filters != other.key_filters {
            push(
                Setting::KeyFilters,
                format!("key filters {:?} vs {:?}", self.key_filters, other.key_filters),
            );
        }
        if self.now_ms != other.now_ms {
            push(
                Setting::Now,
                format!(
                    "--now {} vs {}",
                    or_none(self.now_ms.map(|n| n.to_string())),
                    or_none(other.now_ms.map(|n| n.to_string()))
                ),
            );
        }
    }
}

impl Settings {
    /// What differs from `other`, by command-line flag: the filters and
    /// model options first, then the accumulators' sizes and the rules.
    /// The reference time itself is not compared (each file's TTLs are
    /// relative to its own snapshot, so shards taken seconds apart still
    /// merge), `--now` is. Empty: they merge.
    pub fn differences(&self, other: &Settings) -> Vec<Difference> {
        let mut out = Vec::new();
        self.shaping.differences(&other.shaping, &mut out);
        let mut push = |setting, text| out.push(Difference { setting, text });
        if self.top != other.top {
            push(Setting::Top, format!("--top {} vs {}", self.top, other.top));
        }
        if self.separator != other.separator {
            push(
                Setting::Separator,
                format!(
                    "--separator '{}' vs '{}'",
                    char::from(self.separator),
                    char::from(other.separator)
                ),
            );
        }
        if self.prefix_depth != other.prefix_depth {
            push(
                Setting::Depth,
                format!("--depth {} vs {}", self.prefix_depth, other.prefix_depth),
            );
        }
        if self.expiry_buckets != other.expiry_buckets {
            push(
                Setting::ExpiryBlocks,
                format!(
                    "expiry blocks kept {} vs {}",
                    self.expiry_buckets, other.expiry_buckets
                ),
            );
        }
        if self.rules != other.rules {
            push(
                Setting::Rules,
                "design-rule settings (--rules, --set, --config) differ".into(),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Options;
    use rdblens_memory::{Family, ServerVersion};

    #[test]
    fn shaping_normalizes_what_does_not_matter() {
        let mut a = Options::default();
        a.filter.dbs = vec![3, 0, 3];
        a.config = vec![
            ("hash-max-ziplist-entries".into(), "1K".into()),
            ("maxmemory-policy".into(), "allkeys-lru".into()),
        ];
        let mut b = Options::default();
        b.filter.dbs = vec![0, 3];
        b.config = vec![("hash-max-listpack-entries".into(), "1k".into())];
        assert_eq!(Shaping::of(&a), Shaping::of(&b));
        b.now_ms = Some(5);
        b.top = 3;
        let d = Settings::of(&a, 1).differences(&Settings::of(&b, 2));
        let texts: Vec<String> = d.iter().map(ToString::to_string).collect();
        assert_eq!(texts, ["--now (none) vs 5", "--top 20 vs 3"]);
        assert_eq!(d[0].setting, Setting::Now);
        assert_eq!(join_differences(&d), "--now (none) vs 5; --top 20 vs 3");
    }

    #[test]
    fn filters_and_targets_are_part_of_the_contract() {
        let a = Options::default();
        let mut b = Options::default();
        b.filter.prefix = Some(b"user:".to_vec());
        b.filter.exclude = vec![b"tmp:*".to_vec()];
        b.profile = Some(rdblens_memory::Profile::new(
            Family::Redis,
            ServerVersion::new(6, 2, 0),
            8,
        ));
        let d = Settings::of(&a, 0).differences(&Settings::of(&b, 0));
        let settings: Vec<Setting> = d.iter().map(|d| d.setting).collect();
        assert_eq!(settings, [Setting::Prefix, Setting::Target, Setting::KeyFilters]);
        assert_eq!(d[0].text, "--prefix (none) vs \"user:\"");
        assert_eq!(d[2].text, "key filters [] vs [\"--exclude tmp:*\"]");
    }
}
