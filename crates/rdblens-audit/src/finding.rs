//! What the audit reports: findings (one rule broken by one key,
//! namespace, window, slot or database), and per-rule summaries that
//! carry the count of what the caps left out.

use rdblens_summary::rules::{RuleId, Severity};
use rdblens_summary::KeyName;
use serde::Serialize;

/// A number as measured: exact integers stay integers in JSON.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize)]
#[serde(untagged)]
pub enum Num {
    /// An exact count or size.
    Int(u64),
    /// A share, ratio or other value that is not a whole number.
    Real(f64),
}

/// What a measure or threshold counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Bytes of memory or of a key name or element.
    Bytes,
    /// Elements of one value: members, pairs, list elements or stream entries.
    Elements,
    /// A count of keys.
    Keys,
    /// Offending bytes or characters.
    Count,
    /// A fraction of a whole, 0..=1.
    Share,
    /// A compression ratio (uncompressed / stored).
    Ratio,
    /// A duration in seconds (e.g. a key's idle time).
    Seconds,
    /// A duration in milliseconds (e.g. how long before the snapshot a key expired).
    Milliseconds,
    /// An LFU counter (0-255, logarithmic).
    LfuCounter,
}

/// A measure or threshold with what it counts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Quantity {
    /// The amount, exact or fractional.
    pub value: Num,
    /// What it counts.
    pub unit: Unit,
}

impl Quantity {
    /// A whole number of `unit`.
    pub fn int(value: u64, unit: Unit) -> Self {
        Quantity {
            value: Num::Int(value),
            unit,
        }
    }

    /// A fractional number of `unit`.
    pub fn real(value: f64, unit: Unit) -> Self {
        Quantity {
            value: Num::Real(value),
            unit,
        }
    }

    /// `part / whole` as a [`Unit::Share`] (0 when `whole` is 0).
    pub fn share(part: u64, whole: u64) -> Self {
        Quantity::real(part as f64 / whole.max(1) as f64, Unit::Share)
    }
}

/// What a finding is about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Scope {
    /// One key.
    Key {
        /// Database number.
        db: u64,
        /// The key's name.
        #[serde(flatten)]
        key: KeyName,
    },
    /// A namespace (first segment of the key names); `(no namespace)` for
    /// keys without the separator.
    Namespace {
        /// The namespace as text (invalid UTF-8 replaced), or `(no namespace)`.
        namespace: String,
    },
    /// Keys expiring in `[start_ms, end_ms)`.
    Window {
        /// Start of the window, unix milliseconds (inclusive).
        start_ms: i64,
        /// End of the window, unix milliseconds (exclusive).
        end_ms: i64,
    },
    /// A cluster slot, with the hash tag holding most of its memory.
    Slot {
        /// Slot number (0-16383).
        slot: u16,
        /// The hash tag (without braces) whose keys hold the most memory in
        /// the slot; `None` when no key there has one.
        hash_tag: Option<String>,
    },
    /// A numbered database other than 0 that holds keys.
    Database {
        /// Database number.
        db: u64,
    },
    /// The whole keyspace.
    Global,
}

/// A key named as an example.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KeyRef {
    /// Database number.
    pub db: u64,
    /// The key's name.
    #[serde(flatten)]
    pub key: KeyName,
}

/// One rule broken by one scope.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// The rule broken.
    pub rule: RuleId,
    /// Severity after the rule's override, if any.
    pub severity: Severity,
    /// What the finding is about.
    pub scope: Scope,
    /// One line: what was found.
    pub message: String,
    /// What was measured against the threshold.
    pub measured: Quantity,
    /// The limit the measure broke; `None` for rules that report without one.
    pub threshold: Option<Quantity>,
    /// Keys concerned.
    pub keys: u64,
    /// Their estimated memory (MEMORY USAGE).
    pub memory: u64,
    /// Memory a fix would give back, where the rule implies one.
    pub savings: Option<u64>,
    /// A redis.conf directive that fixes it, e.g. `hash-max-listpack-entries 600`.
    pub config: Option<String>,
    /// What to do about it.
    pub advice: String,
    /// Example keys of a grouped finding, and how many more there are.
    pub examples: Vec<KeyRef>,
    /// Keys concerned beyond `examples`.
    pub more_keys: u64,
    /// Sort key after severity: bytes at stake.
    #[serde(skip)]
    pub impact: u64,
}

/// Findings per severity, including those the caps left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Findings of severity info.
    pub info: u64,
    /// Findings of severity warn.
    pub warn: u64,
    /// Findings of severity crit.
    pub crit: u64,
}

impl Counts {
    /// Counts `n` more findings of severity `s`.
    pub fn add(&mut self, s: Severity, n: u64) {
        match s {
            Severity::Info => self.info += n,
            Severity::Warn => self.warn += n,
            Severity::Crit => self.crit += n,
        }
    }

    /// Adds every count of `o`.
    pub fn merge(&mut self, o: &Counts) {
        self.info += o.info;
        self.warn += o.warn;
        self.crit += o.crit;
    }

    /// Findings of every severity.
    pub fn total(&self) -> u64 {
        self.info + self.warn + self.crit
    }

    /// The highest severity with a finding; `None` when there are none.
    pub fn max_severity(&self) -> Option<Severity> {
        [
            (self.crit, Severity::Crit),
            (self.warn, Severity::Warn),
            (self.info, Severity::Info),
        ]
        .into_iter()
        .find(|(n, _)| *n > 0)
        .map(|(_, s)| s)
    }

    /// Every count moved to one severity (a rule's severity override).
    pub fn all_at(&self, s: Severity) -> Counts {
        let mut c = Counts::default();
        c.add(s, self.total());
        c
    }
}

/// A namespace's share of a rule's hits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NamespaceCount {
    /// The namespace as text (invalid UTF-8 replaced), or `(no namespace)`.
    pub namespace: String,
    /// Keys of the namespace the rule hit.
    pub keys: u64,
    /// Their estimated memory (MEMORY USAGE), in bytes.
    pub memory: u64,
}

/// A config change and what it would fix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConfigSuggestion {
    /// As a redis.conf line.
    pub directive: String,
    /// Keys the change would fix.
    pub keys: u64,
    /// Bytes the change would give back.
    pub savings: u64,
}

/// One rule: what it found in total, including what the cap left out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleSummary {
    /// The rule this summary is for.
    pub rule: RuleId,
    /// False when the rules config turned the rule off.
    pub enabled: bool,
    /// The thresholds in force, as `name = value` pairs.
    pub thresholds: String,
    /// Findings per severity, listed or not.
    pub counts: Counts,
    /// Findings listed (at most the rule's cap).
    pub listed: usize,
    /// Findings not listed because of the cap.
    pub omitted: u64,
    /// Keys concerned, listed or not.
    pub keys: u64,
    /// Estimated memory of those keys (MEMORY USAGE), in bytes.
    pub memory: u64,
    /// Bytes a fix would give back; `None` when no hit implies a saving.
    pub savings: Option<u64>,
    /// What to do about the rule's hits.
    pub advice: String,
    /// Why the rule could not be fully evaluated, if so.
    pub note: Option<String>,
    /// Where the hits are, most keys first (up to 5).
    pub namespaces: Vec<NamespaceCount>,
    /// Config changes that would fix hits, with what each fixes.
    pub config: Vec<ConfigSuggestion>,
}

/// The audit of one summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Audit {
    /// Listed findings, most severe first, then by impact.
    pub findings: Vec<Finding>,
    /// Every rule, in catalogue order.
    pub rules: Vec<RuleSummary>,
    /// All findings per severity, including those not listed.
    pub counts: Counts,
}

impl Audit {
    /// The most severe finding, listed or not.
    pub fn max_severity(&self) -> Option<Severity> {
        self.counts.max_severity()
    }

    /// Whether a finding at or above `at` exists (`--fail-on`).
    pub fn fails(&self, at: Severity) -> bool {
        self.max_severity().is_some_and(|s| s >= at)
    }
}
