//! The rules of docs/design-rules.md: ids, severities, and which part of
//! the analysis evaluates each one.

use serde::{Deserialize, Serialize};

/// How serious a finding is. Ordered: `Info < Warn < Crit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// Against the guideline.
    Warn,
    /// An operational hazard: blocking, memory blow-up, avalanche.
    Crit,
}

impl Severity {
    /// Every severity, lowest first.
    pub const ALL: [Severity; 3] = [Severity::Info, Severity::Warn, Severity::Crit];

    /// The name in rules files and reports: `info`, `warn` or `crit`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Crit => "crit",
        }
    }

    /// The severity named `s` (surrounding whitespace ignored); `None` for any other text.
    pub fn parse(s: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|v| v.name() == s.trim())
    }

    /// Index into per-severity arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

macro_rules! rule_ids {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, $per_key:expr;)*) => {
        /// A rule of the catalogue, named as in design-rules.md.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum RuleId {
            $($(#[$doc])* #[serde(rename = $name)] $variant,)*
        }

        impl RuleId {
            /// Every rule, in catalogue order.
            pub const ALL: &'static [RuleId] = &[$(RuleId::$variant),*];

            /// The id as written in design-rules.md, rules files and reports.
            pub fn name(self) -> &'static str {
                match self {
                    $(RuleId::$variant => $name,)*
                }
            }

            /// Whether the analysis workers evaluate the rule key by key
            /// (the summary keeps no per-key data), as opposed to the audit
            /// evaluating it from the summary's aggregates.
            pub fn per_key(self) -> bool {
                match self {
                    $(RuleId::$variant => $per_key,)*
                }
            }
        }
    };
}

rule_ids! {
    /// Key name length.
    KeyLong = "key-long", true;
    /// Control bytes, quotes, backslash, glob characters or parentheses in a key.
    KeyChars = "key-chars", true;
    /// Braces that are not one deliberate, non-empty hash tag.
    KeyBraces = "key-braces", true;
    /// Keys without a namespace separator (a share of all keys).
    KeyNoNamespace = "key-no-namespace", true;
    /// One cluster slot (usually one hash tag) holding a disproportionate share of memory.
    HashtagSkew = "hashtag-skew", false;
    /// String value length.
    BigString = "big-string", true;
    /// Elements in a hash, list, set, sorted set or stream.
    BigCollection = "big-collection", true;
    /// Total payload of one collection key.
    BigValueBytes = "big-value-bytes", true;
    /// One element or field value inside a collection.
    BigMember = "big-member", true;
    /// A collection that lost its compact encoding.
    EncodingMiss = "encoding-miss", true;
    /// A string stored LZF-compressed with a good ratio.
    Compressible = "compressible", true;
    /// A sorted set used for ranking past its threshold.
    BigSortedSet = "big-sorted-set", true;
    /// A list past its threshold (a queue whose consumers fall behind).
    BigListQueue = "big-list-queue", true;
    /// Keys without an expiry, per namespace.
    NoTtl = "no-ttl", false;
    /// Many keys expiring in one short window.
    ExpiryCluster = "expiry-cluster", false;
    /// A big key with an expiry (deleted synchronously on expiry).
    BigkeyExpiry = "bigkey-expiry", true;
    /// Keys whose expiry lies before the snapshot time.
    ExpiredInSnapshot = "expired-in-snapshot", true;
    /// Keys idle for long, or with an LFU counter at its floor, per namespace.
    ColdKey = "cold-key", true;
    /// Keys in a database other than 0.
    MultiDb = "multi-db", false;
    /// A namespace of very many small string keys.
    SmallKeySprawl = "small-key-sprawl", true;
    /// The keys with the highest LFU counters.
    HotKey = "hot-key", true;
}

impl RuleId {
    /// The rule named `s` as in design-rules.md (surrounding whitespace ignored); `None` for an unknown name.
    pub fn parse(s: &str) -> Option<RuleId> {
        let s = s.trim();
        RuleId::ALL.iter().copied().find(|r| r.name() == s)
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(RuleId::ALL.len(), 21);
        for &r in RuleId::ALL {
            assert_eq!(RuleId::parse(r.name()), Some(r));
            let json = serde_json::to_string(&r).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", r.name()));
        }
        assert_eq!(RuleId::parse("nope"), None);
        assert!(Severity::Info < Severity::Warn && Severity::Warn < Severity::Crit);
        assert_eq!(Severity::parse("crit"), Some(Severity::Crit));
    }
}
