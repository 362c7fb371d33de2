//! What evaluating one rule gives, before the cap and the severity
//! override are applied.

use rdblens_summary::acc::rules::RuleTally;
use rdblens_summary::rules::RuleConfig;
use rdblens_summary::Summary;

use crate::finding::{ConfigSuggestion, Counts, Finding, KeyRef, NamespaceCount};
use crate::text;

/// The audit's view of a summary.
pub(crate) struct Ctx<'s> {
    pub summary: &'s Summary,
    pub cfg: &'s RuleConfig,
    pub separator: u8,
}

#[derive(Default)]
pub(crate) struct Outcome {
    pub findings: Vec<Finding>,
    /// Every finding per severity, listed or not.
    pub counts: Counts,
    /// Findings left out already (by the workers' caps).
    pub omitted: u64,
    pub keys: u64,
    pub memory: u64,
    pub savings: Option<u64>,
    pub note: Option<String>,
    pub namespaces: Vec<NamespaceCount>,
    pub config: Vec<ConfigSuggestion>,
    /// The rule's advice when its findings call for other than the
    /// default (hashtag-skew caused by big keys).
    pub advice: Option<String>,
}

impl Outcome {
    /// Totals, namespaces and config suggestions of a per-key tally.
    pub fn from_tally(t: &RuleTally, separator: u8) -> Outcome {
        let mut namespaces: Vec<NamespaceCount> = t
            .namespaces
            .sorted()
            .map(|(ns, n)| NamespaceCount {
                namespace: text::namespace(ns.as_bytes(), separator),
                keys: n.keys,
                memory: n.memory,
            })
            .collect();
        namespaces.sort_by(|a, b| b.keys.cmp(&a.keys).then_with(|| a.namespace.cmp(&b.namespace)));
        namespaces.truncate(5);
        Outcome {
            keys: t.total_keys(),
            memory: t.total_memory(),
            savings: (t.with_savings > 0).then_some(t.savings),
            namespaces,
            ..Outcome::default()
        }
    }
}

pub(crate) fn key_ref(db: u64, key: &rdblens_summary::KeyName) -> KeyRef {
    KeyRef { db, key: key.clone() }
}
