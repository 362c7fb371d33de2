//! What the audit reports: findings (one rule broken by one key,
//! namespace, window, slot or database), and per-rule summaries that
//! carry the count of what the caps left out.

use rdblens_analysis::rules::{RuleId, Severity};
use rdblens_analysis::KeyName;
use serde::Serialize;

/// A number as measured: exact integers stay integers in JSON.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize)]
#[serde(untagged)]
pub enum Num {
    Int(u64),
    Real(f64),
}

/// What a measure or threshold counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Bytes,
    Elements,
    Keys,
    /// Offending bytes or characters.
    Count,
    /// A fraction of a whole, 0..=1.
    Share,
    /// A compression ratio (uncompressed / stored).
    Ratio,
    Seconds,
    Milliseconds,
    /// An LFU counter (0-255, logarithmic).
    LfuCounter,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Quantity {
    pub value: Num,
    pub unit: Unit,
}

impl Quantity {
    pub fn int(value: u64, unit: Unit) -> Self {
        Quantity {
            value: Num::Int(value),
            unit,
        }
    }

    pub fn real(value: f64, unit: Unit) -> Self {
        Quantity {
            value: Num::Real(value),
            unit,
        }
    }

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
        db: u64,
        #[serde(flatten)]
        key: KeyName,
    },
    /// A namespace (first segment of the key names); `(no namespace)` for
    /// keys without the separator.
    Namespace {
        namespace: String,
    },
    /// Keys expiring in `[start_ms, end_ms)`.
    Window {
        start_ms: i64,
        end_ms: i64,
    },
    /// A cluster slot, with the hash tag holding most of its memory.
    Slot {
        slot: u16,
        hash_tag: Option<String>,
    },
    Database {
        db: u64,
    },
    /// The whole keyspace.
    Global,
}

/// A key named as an example.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KeyRef {
    pub db: u64,
    #[serde(flatten)]
    pub key: KeyName,
}

/// One rule broken by one scope.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    pub rule: RuleId,
    pub severity: Severity,
    pub scope: Scope,
    /// One line: what was found.
    pub message: String,
    pub measured: Quantity,
    pub threshold: Option<Quantity>,
    /// Keys concerned.
    pub keys: u64,
    /// Their estimated memory (MEMORY USAGE).
    pub memory: u64,
    /// Memory a fix would give back, where the rule implies one.
    pub savings: Option<u64>,
    /// A redis.conf directive that fixes it, e.g. `hash-max-listpack-entries 600`.
    pub config: Option<String>,
    pub advice: String,
    /// Example keys of a grouped finding, and how many more there are.
    pub examples: Vec<KeyRef>,
    pub more_keys: u64,
    /// Sort key after severity: bytes at stake.
    #[serde(skip)]
    pub impact: u64,
}

/// Findings per severity, including those the caps left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub info: u64,
    pub warn: u64,
    pub crit: u64,
}

impl Counts {
    pub fn add(&mut self, s: Severity, n: u64) {
        match s {
            Severity::Info => self.info += n,
            Severity::Warn => self.warn += n,
            Severity::Crit => self.crit += n,
        }
    }

    pub fn merge(&mut self, o: &Counts) {
        self.info += o.info;
        self.warn += o.warn;
        self.crit += o.crit;
    }

    pub fn total(&self) -> u64 {
        self.info + self.warn + self.crit
    }

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
    pub namespace: String,
    pub keys: u64,
    pub memory: u64,
}

/// A config change and what it would fix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConfigSuggestion {
    /// As a redis.conf line.
    pub directive: String,
    pub keys: u64,
    pub savings: u64,
}

/// One rule: what it found in total, including what the cap left out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleSummary {
    pub rule: RuleId,
    pub enabled: bool,
    /// The thresholds in force, as `name = value` pairs.
    pub thresholds: String,
    pub counts: Counts,
    /// Findings listed (at most the rule's cap).
    pub listed: usize,
    /// Findings not listed because of the cap.
    pub omitted: u64,
    /// Keys concerned, listed or not.
    pub keys: u64,
    pub memory: u64,
    pub savings: Option<u64>,
    pub advice: String,
    /// Why the rule could not be fully evaluated, if so.
    pub note: Option<String>,
    /// Where the hits are, most keys first (up to 5).
    pub namespaces: Vec<NamespaceCount>,
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
