//! Rule hits gathered key by key: per rule, counts and memory per
//! severity, the capped list of violating keys (ordered by severity, then
//! impact, then db and key, so the kept set is the same for any split of
//! the keys), a bounded per-namespace breakdown, and for small-key-sprawl
//! what each namespace's small strings would cost as hash fields.

use std::cmp::{Ordering, Reverse};
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::bounded::{BoundedMap, Mergeable};
use super::groups::Groups;
use super::top::TopBy;
use super::Accumulate;
use crate::facts::KeyFacts;
use crate::keyname::KeyName;
use crate::keyshape::KeyShape;
use rdblens_memory::Shape;

use crate::rules::{evaluate_shaped, listpack, Enabled, Hit, RuleConfig, RuleId, Severity};

/// Namespaces kept exactly per rule (bottom-k beyond).
const NAMESPACES_PER_RULE: usize = 256;
/// Namespaces kept exactly for small-key-sprawl: sprawl is about the few
/// namespaces with millions of keys, which must not be folded away.
const SPRAWL_NAMESPACES: usize = 4096;

/// The namespace a key is grouped under: its first segment. Keys without
/// the separator go under the separator itself, which no first segment
/// can be.
pub fn namespace_of(key: &[u8], separator: u8) -> &[u8] {
    match key.iter().position(|&b| b == separator) {
        Some(i) => &key[..i],
        None => std::slice::from_ref(&SEPARATOR_MARKS[usize::from(separator)]),
    }
}

/// Every byte value, so [`namespace_of`] can return the separator as a slice.
static SEPARATOR_MARKS: [u8; 256] = {
    let mut a = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        a[i] = i as u8;
        i += 1;
    }
    a
};

/// One listed violating key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyHit {
    /// The hit's severity (before any override from the settings).
    pub severity: Severity,
    /// Order within the rule: bytes at stake, or the LFU counter for hot-key.
    pub impact: u64,
    /// Database number.
    pub db: u64,
    /// The key's name (serialized as `key`, or `key_hex` when not UTF-8).
    #[serde(flatten)]
    pub key: KeyName,
    /// Type name (serialized as `type`): `string`, `hash`..., `module:<name>`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Encoding on the target server (`listpack`, `hashtable`...).
    pub encoding: String,
    /// The measure the threshold applies to (unit per rule, see docs/audit.md).
    pub measured: u64,
    /// The threshold passed; 0 for rules without one.
    pub threshold: u64,
    /// A second measure where one is not enough (compressible: stored bytes); 0 otherwise.
    pub extra: u64,
    /// What was measured: the config limit (encoding-miss), the rule that made the key big (bigkey-expiry), `idle` or `lfu` (cold-key).
    pub detail: Option<String>,
    /// Estimated `MEMORY USAGE` of the key, bytes.
    pub memory: u64,
    /// Memory a fix would give back, bytes, where the rule implies one.
    pub savings: Option<u64>,
    /// Absolute expiry time, unix ms; `None` without a TTL.
    pub expiry_ms: Option<i64>,
    /// The value's shape, kept for the big-key rules only (big-string,
    /// big-collection, big-value-bytes), whose keys get split plans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    /// What deleting the key frees from `used_memory`
    /// ([`KeyFacts::adds_to_used_memory`]), kept with the shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_memory: Option<u64>,
}

/// Rules whose listed keys keep their [`Shape`].
pub const SHAPED_RULES: [RuleId; 3] = [RuleId::BigString, RuleId::BigCollection, RuleId::BigValueBytes];

impl KeyHit {
    fn new(f: &KeyFacts<'_>, h: &Hit) -> Self {
        KeyHit {
            severity: h.severity,
            impact: h.impact,
            db: f.db,
            key: KeyName::new(f.key),
            type_name: f.type_name(),
            encoding: f.encoding.as_str().to_string(),
            measured: h.measured,
            threshold: h.threshold,
            extra: h.extra,
            detail: h.detail.map(str::to_string),
            memory: f.memory,
            savings: h.savings,
            expiry_ms: f.expiry_ms,
            shape: SHAPED_RULES.contains(&h.rule).then(|| f.shape.clone()),
            used_memory: SHAPED_RULES.contains(&h.rule).then(|| f.adds_to_used_memory()),
        }
    }

    fn rank(&self) -> (Reverse<Severity>, Reverse<u64>, u64, &[u8]) {
        (
            Reverse(self.severity),
            Reverse(self.impact),
            self.db,
            self.key.as_bytes(),
        )
    }
}

impl Ord for KeyHit {
    fn cmp(&self, o: &Self) -> Ordering {
        // The rank decides; the rest only makes the order total (the same
        // key can come twice when dumps of one server are merged).
        self.rank()
            .cmp(&o.rank())
            .then_with(|| {
                (self.measured, self.threshold, self.extra).cmp(&(o.measured, o.threshold, o.extra))
            })
            .then_with(|| (&self.detail, self.memory, self.savings).cmp(&(&o.detail, o.memory, o.savings)))
            .then_with(|| {
                (&self.type_name, &self.encoding, self.expiry_ms).cmp(&(
                    &o.type_name,
                    &o.encoding,
                    o.expiry_ms,
                ))
            })
    }
}

impl PartialOrd for KeyHit {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Hits of one rule in one namespace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NsTally {
    /// Listed keys of the rule in the namespace.
    pub keys: u64,
    /// Their estimated memory, bytes.
    pub memory: u64,
    /// Their savings estimates summed, bytes.
    pub savings: u64,
}

impl Mergeable for NsTally {
    fn merge_from(&mut self, o: &Self) {
        self.keys = self.keys.saturating_add(o.keys);
        self.memory = self.memory.saturating_add(o.memory);
        self.savings = self.savings.saturating_add(o.savings);
    }
}

/// Hits of one rule with one `detail` (a config limit, a cause).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetailTally {
    /// Listed keys of the rule with this detail.
    pub keys: u64,
    /// Their estimated memory, bytes.
    pub memory: u64,
    /// Their savings estimates summed, bytes.
    pub savings: u64,
    /// Hits with a savings estimate (encoding-miss: within the margin).
    pub fixable_keys: u64,
    /// Largest measure among those (the config value that would fix all).
    pub fixable_max_measured: u64,
}

/// Everything gathered for one rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuleTally {
    /// Keys per severity (info, warn, crit), listed or not.
    pub keys: [u64; 3],
    /// Their memory (MEMORY USAGE) per severity.
    pub memory: [u64; 3],
    /// Sum of the savings estimates.
    pub savings: u64,
    /// Keys with a savings estimate.
    pub with_savings: u64,
    /// Keys that are counted but never listed (key-long's statistics level).
    pub unlisted: u64,
    /// The listed keys, most severe then largest impact first; at most the rule's cap.
    pub listed: TopBy<KeyHit>,
    /// Listed keys per namespace ([`namespace_of`]).
    pub namespaces: BoundedMap<NsTally>,
    /// Listed keys per `detail`; empty for rules without one.
    pub details: Groups<DetailTally>,
}

impl RuleTally {
    fn new(cap: usize) -> Self {
        RuleTally {
            keys: [0; 3],
            memory: [0; 3],
            savings: 0,
            with_savings: 0,
            unlisted: 0,
            listed: TopBy::new(cap),
            namespaces: BoundedMap::new(NAMESPACES_PER_RULE),
            details: Groups::default(),
        }
    }

    /// Hits at any severity, listed or not (a long key is both a warn and an info hit of key-long).
    pub fn total_keys(&self) -> u64 {
        self.keys.iter().fold(0, |a, &b| a.saturating_add(b))
    }

    /// Their estimated memory, bytes.
    pub fn total_memory(&self) -> u64 {
        self.memory.iter().fold(0, |a, &b| a.saturating_add(b))
    }

    fn add(&mut self, f: &KeyFacts<'_>, h: &Hit, separator: u8) {
        let s = h.severity.index();
        self.keys[s] += 1;
        self.memory[s] += f.memory;
        if let Some(saved) = h.savings {
            self.savings += saved;
            self.with_savings += 1;
        }
        if !h.listed {
            // Statistics only: counted above, kept out of the breakdowns.
            self.unlisted += 1;
            return;
        }
        let ns = self.namespaces.slot(namespace_of(f.key, separator));
        ns.keys += 1;
        ns.memory += f.memory;
        ns.savings += h.savings.unwrap_or(0);
        if let Some(d) = h.detail {
            let t = self.details.slot_static(d);
            t.keys += 1;
            t.memory += f.memory;
            if let Some(saved) = h.savings {
                t.savings += saved;
                t.fixable_keys += 1;
                t.fixable_max_measured = t.fixable_max_measured.max(h.measured);
            }
        }
        let rank = (Reverse(h.severity), Reverse(h.impact), f.db, f.key);
        if self.listed.admits(|last| rank.cmp(&last.rank())) {
            self.listed.insert(KeyHit::new(f, h));
        }
    }

    fn merge(&mut self, o: RuleTally) {
        for i in 0..3 {
            self.keys[i] = self.keys[i].saturating_add(o.keys[i]);
            self.memory[i] = self.memory[i].saturating_add(o.memory[i]);
        }
        self.savings = self.savings.saturating_add(o.savings);
        self.with_savings = self.with_savings.saturating_add(o.with_savings);
        self.unlisted = self.unlisted.saturating_add(o.unlisted);
        self.listed.merge(o.listed);
        self.namespaces.merge(o.namespaces);
        self.details.merge_with(o.details, |mine, t| {
            mine.keys = mine.keys.saturating_add(t.keys);
            mine.memory = mine.memory.saturating_add(t.memory);
            mine.savings = mine.savings.saturating_add(t.savings);
            mine.fixable_keys = mine.fixable_keys.saturating_add(t.fixable_keys);
            mine.fixable_max_measured = mine.fixable_max_measured.max(t.fixable_max_measured);
        });
    }
}

/// Small string keys of one namespace, and what they would take as fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SprawlTally {
    /// Small string keys in the namespace.
    pub keys: u64,
    /// What the keys hold now: MEMORY USAGE plus keyspace overhead.
    pub memory: u64,
    /// The keyspace overhead part of `memory`.
    #[serde(default)]
    pub keyspace: u64,
    /// What deleting the keys frees from `used_memory`: `memory` less the
    /// keyspace bucket arrays' share (they do not shrink) and the objects
    /// of shared integers 0-9999 (never freed), plus allocator rounding.
    #[serde(default)]
    pub used_memory: u64,
    /// Of the keys, those with a TTL.
    #[serde(default)]
    pub expiring: u64,
    /// Listpack entries for every (rest of the key, value) pair.
    pub entry_bytes: u64,
    /// Longest field (the key after the namespace and separator), bytes.
    pub max_field_len: u64,
    /// Longest value, bytes.
    pub max_value_len: u64,
}

impl Mergeable for SprawlTally {
    fn merge_from(&mut self, o: &Self) {
        self.keys = self.keys.saturating_add(o.keys);
        self.memory = self.memory.saturating_add(o.memory);
        self.keyspace = self.keyspace.saturating_add(o.keyspace);
        self.used_memory = self.used_memory.saturating_add(o.used_memory);
        self.expiring = self.expiring.saturating_add(o.expiring);
        self.entry_bytes = self.entry_bytes.saturating_add(o.entry_bytes);
        self.max_field_len = self.max_field_len.max(o.max_field_len);
        self.max_value_len = self.max_value_len.max(o.max_value_len);
    }
}

/// The rule hits of a keyspace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RuleHits {
    /// Namespace separator, for the per-namespace breakdowns.
    pub separator: u8,
    /// Reference time for expired-in-snapshot (the snapshot's ctime unless `--now`).
    pub now_ms: i64,
    /// The rule settings the keys were evaluated with.
    pub config: RuleConfig,
    /// Tallies of the rules at least one key broke.
    pub rules: BTreeMap<RuleId, RuleTally>,
    /// small-key-sprawl, by namespace.
    pub sprawl: BoundedMap<SprawlTally>,
    /// Which rules are on, from `config` (derived once, not per key).
    #[serde(skip)]
    on: Option<Enabled>,
}

// `on` is derived state: equality is about the content.
impl PartialEq for RuleHits {
    fn eq(&self, o: &Self) -> bool {
        self.separator == o.separator
            && self.now_ms == o.now_ms
            && self.config == o.config
            && self.rules == o.rules
            && self.sprawl == o.sprawl
    }
}

impl RuleHits {
    /// Empty, evaluating with `config`.
    pub fn new(config: &RuleConfig, separator: u8, now_ms: i64) -> Self {
        RuleHits {
            separator,
            now_ms,
            config: config.clone(),
            rules: BTreeMap::new(),
            sprawl: BoundedMap::new(SPRAWL_NAMESPACES),
            on: Some(Enabled::new(config)),
        }
    }

    fn cap(config: &RuleConfig, rule: RuleId) -> usize {
        match rule {
            RuleId::HotKey => config.hot_key.top,
            _ => config.common(rule).cap,
        }
    }

    fn add_sprawl(&mut self, f: &KeyFacts<'_>, shape: &KeyShape) {
        let c = &self.config.small_key_sprawl;
        if !c.enabled || f.kind != rdblens_parser::TypeKind::String || f.elements >= c.max_value_bytes.0 {
            return;
        }
        let (ns, field) = match shape.first_separator {
            Some(i) => (&f.key[..i], &f.key[i + 1..]),
            None => (namespace_of(f.key, self.separator), f.key),
        };
        let value = if f.encoding == rdblens_memory::Encoding::Int {
            // Exact where the file stores the integer as one; otherwise
            // the widest of its digit count.
            f.int_value
                .map_or_else(|| listpack::int_entry_for_digits(f.elements), listpack::int_entry)
        } else {
            listpack::str_entry(f.elements)
        };
        let t = self.sprawl.slot(ns);
        t.keys += 1;
        t.memory += f.memory.saturating_add(f.keyspace_overhead);
        t.keyspace += f.keyspace_overhead;
        t.used_memory += f.adds_to_used_memory();
        t.expiring += u64::from(f.expiry_ms.is_some());
        t.entry_bytes += listpack::bytes_entry(field) + value;
        t.max_field_len = t.max_field_len.max(field.len() as u64);
        t.max_value_len = t.max_value_len.max(f.elements);
    }
}

impl RuleHits {
    /// [`Accumulate::add`] for a key whose shape is known.
    pub fn add_shaped(&mut self, f: &KeyFacts<'_>, shape: &KeyShape) {
        let on = *self.on.get_or_insert_with(|| Enabled::new(&self.config));
        let (config, rules, sep) = (&self.config, &mut self.rules, self.separator);
        evaluate_shaped(f, shape, config, &on, self.now_ms, |h| {
            rules
                .entry(h.rule)
                .or_insert_with(|| RuleTally::new(Self::cap(config, h.rule)))
                .add(f, &h, sep);
        });
        self.add_sprawl(f, shape);
    }
}

impl Accumulate for RuleHits {
    fn add(&mut self, f: &KeyFacts<'_>) {
        self.add_shaped(f, &KeyShape::of(f.key, self.separator))
    }

    fn finish(&mut self) {
        self.rules.values_mut().for_each(|t| t.listed.finish());
    }

    fn merge(&mut self, other: Self) {
        for (rule, t) in other.rules {
            match self.rules.get_mut(&rule) {
                Some(mine) => mine.merge(t),
                None => {
                    self.rules.insert(rule, t);
                }
            }
        }
        self.sprawl.merge(other.sprawl);
    }
}
