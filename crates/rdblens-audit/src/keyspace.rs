//! Rules judged from the summary's aggregates: namespaces without expiries,
//! cold namespaces, numbered databases, slot skew, and small-key sprawl.

use rdblens_summary::acc::rules::{namespace_of, RuleTally};
use rdblens_summary::rules::{RuleId, Severity};
use rdblens_summary::slot::key_slot;
use rdblens_summary::KeyName;
use std::cmp::Reverse;

use crate::advice::advice;
use crate::finding::{Finding, Quantity, Scope, Unit};
use crate::outcome::{key_ref, Ctx, Outcome};
use crate::{sprawl, text};

fn finding(rule: RuleId, scope: Scope, message: String, measured: Quantity) -> Finding {
    Finding {
        rule,
        severity: Severity::Info,
        scope,
        message,
        measured,
        threshold: None,
        keys: 0,
        memory: 0,
        savings: None,
        config: None,
        advice: advice(rule).to_string(),
        examples: Vec::new(),
        more_keys: 0,
        impact: 0,
    }
}

fn namespace_scope(ns: &[u8], separator: u8) -> Scope {
    Scope::Namespace {
        namespace: text::namespace(ns, separator),
    }
}

/// Keys in a namespace (first segment), from the prefix tree.
fn namespace_keys(ctx: &Ctx<'_>, ns: &[u8]) -> Option<u64> {
    let p = &ctx.summary.keys.prefixes;
    if ns == [ctx.separator] {
        return Some(p.unprefixed.keys);
    }
    p.root.entries.get(ns).map(|n| n.totals.keys)
}

pub(crate) fn no_ttl(ctx: &Ctx<'_>) -> Outcome {
    let k = &ctx.summary.keys;
    let c = &ctx.cfg.no_ttl;
    let root = &k.prefixes.root;
    let mut groups: Vec<(Vec<u8>, u64, u64, u64, u64)> = root
        .sorted()
        .map(|(ns, n)| {
            let (keys, memory) = (n.totals.keys, n.totals.memory);
            (
                ns.as_bytes().to_vec(),
                n.ttl.keys[0],
                n.ttl.memory[0],
                keys,
                memory,
            )
        })
        .collect();
    // Keys without a namespace: the global no-expiry totals minus every
    // namespace's (the prefix tree keeps no TTL buckets for them).
    let u = &k.prefixes.unprefixed;
    let prefixed_memory: u64 =
        root.entries.values().map(|n| n.ttl.memory[0]).sum::<u64>() + root.other.ttl.memory[0];
    groups.push((
        vec![ctx.separator],
        u.keys.saturating_sub(u.keys_with_expiry),
        k.ttl.buckets.memory[0].saturating_sub(prefixed_memory),
        u.keys,
        u.memory,
    ));
    let mut out = Outcome::default();
    for (ns, no_ttl, memory, keys, ns_memory) in groups {
        let share = no_ttl as f64 / keys.max(1) as f64;
        if no_ttl == 0 || no_ttl < c.min_keys || share <= c.min_share {
            continue;
        }
        let name = text::namespace(&ns, ctx.separator);
        let message = format!(
            "{} of {} keys ({}) in {name} have no expiry, holding {} ({} of the namespace's memory)",
            text::count(no_ttl),
            text::count(keys),
            text::percent(share),
            text::bytes(memory),
            text::percent(memory as f64 / ns_memory.max(1) as f64)
        );
        out.keys += no_ttl;
        out.memory += memory;
        out.findings.push(Finding {
            threshold: Some(Quantity::real(c.min_share, Unit::Share)),
            keys: no_ttl,
            memory,
            impact: memory,
            ..finding(
                RuleId::NoTtl,
                namespace_scope(&ns, ctx.separator),
                message,
                Quantity::share(no_ttl, keys),
            )
        });
    }
    if root.is_folded() {
        out.note = Some("namespaces beyond the prefix tree's cap were folded and are not judged".into());
    }
    out.counts.add(Severity::Info, out.findings.len() as u64);
    out
}

pub(crate) fn cold_keys(t: &RuleTally, ctx: &Ctx<'_>) -> Outcome {
    let c = &ctx.cfg.cold_key;
    let mut out = Outcome::from_tally(t, ctx.separator);
    let by_idle = t.details.get("idle").is_some();
    let (threshold, cause) = if by_idle {
        (
            Quantity::int(c.idle.0, Unit::Seconds),
            format!("idle for more than {}", text::duration_secs(c.idle.0)),
        )
    } else {
        (
            Quantity::int(u64::from(c.lfu_max), Unit::LfuCounter),
            format!("with an LFU counter of at most {}", c.lfu_max),
        )
    };
    let mut groups: Vec<(Option<&[u8]>, _)> = t
        .namespaces
        .sorted()
        .map(|(ns, n)| (Some(ns.as_bytes()), *n))
        .collect();
    if t.namespaces.other.keys > 0 {
        groups.push((None, t.namespaces.other));
    }
    for (ns, n) in groups {
        let examples: Vec<_> = t
            .listed
            .items
            .iter()
            .filter(|h| ns.is_some_and(|ns| namespace_of(h.key.as_bytes(), ctx.separator) == ns))
            .take(5)
            .map(|h| key_ref(h.db, &h.key))
            .collect();
        let (scope, which) = match ns {
            Some(ns) => (
                namespace_scope(ns, ctx.separator),
                namespace_keys(ctx, ns)
                    .map(|total| {
                        format!(
                            " of {} keys ({})",
                            text::count(total),
                            text::percent(n.keys as f64 / total.max(1) as f64)
                        )
                    })
                    .unwrap_or_else(|| " keys".into()),
            ),
            None => (Scope::Global, " keys in namespaces not kept apart".to_string()),
        };
        let message = format!(
            "{}{which} {cause}, holding {}",
            text::count(n.keys),
            text::bytes(n.savings)
        );
        out.findings.push(Finding {
            threshold: Some(threshold),
            keys: n.keys,
            memory: n.memory,
            savings: Some(n.savings),
            more_keys: n.keys.saturating_sub(examples.len() as u64),
            examples,
            impact: n.savings,
            ..finding(RuleId::ColdKey, scope, message, Quantity::int(n.keys, Unit::Keys))
        });
    }
    out.counts.add(Severity::Info, out.findings.len() as u64);
    out
}

pub(crate) fn multi_db(ctx: &Ctx<'_>) -> Outcome {
    let mut out = Outcome::default();
    for (&db, c) in &ctx.summary.keys.databases {
        if db == 0 || c.keys == 0 {
            continue;
        }
        out.keys += c.keys;
        out.memory += c.memory;
        out.findings.push(Finding {
            keys: c.keys,
            memory: c.memory,
            impact: c.memory,
            ..finding(
                RuleId::MultiDb,
                Scope::Database { db },
                format!(
                    "database {db} holds {} keys ({})",
                    text::count(c.keys),
                    text::bytes(c.memory)
                ),
                Quantity::int(c.keys, Unit::Keys),
            )
        });
    }
    out.counts.add(Severity::Info, out.findings.len() as u64);
    out
}

/// Why a skewed slot holds its memory.
enum SlotCause {
    /// One key holds more than half of it.
    BigKey(BigKey),
    /// The keys of one hash tag hold more than half of it.
    HashTag,
    /// No key in it has a hash tag (CRC16 spreads such keys evenly), and
    /// no single key kept by name holds half of it: a few big keys; the
    /// biggest kept, if any.
    BigKeys(Option<BigKey>),
    /// A hash tag is there (or may be: past the tags kept), but neither it
    /// nor one key holds half of it.
    Mixed,
}

/// A key by name and memory.
struct BigKey {
    db: u64,
    key: KeyName,
    memory: u64,
}

/// The biggest key in `slot` among those the summary keeps by name: the
/// top lists by memory (all keys and per type) and the keys the big-key
/// rules list. A key holding over half of a skewed slot (> 0.5% of all
/// memory) is among them unless more than `--top` such keys exist and
/// the big-key rules do not list it.
fn biggest_key_in(ctx: &Ctx<'_>, slot: u16) -> Option<BigKey> {
    let k = &ctx.summary.keys;
    let top = k
        .top
        .by_memory
        .keys
        .iter()
        .chain(k.top.per_type.values().flat_map(|lists| lists[0].keys.iter()))
        .map(|r| (r.db, &r.key, r.memory));
    let listed = BIG_KEY_RULES
        .iter()
        .filter_map(|r| k.rules.rules.get(r))
        .flat_map(|t| t.listed.items.iter())
        .map(|h| (h.db, &h.key, h.memory));
    top.chain(listed)
        .filter(|(_, key, _)| key_slot(key.as_bytes()) == slot)
        // Ties to the first key in (db, key) order.
        .min_by(|a, b| (Reverse(a.2), a.0, a.1).cmp(&(Reverse(b.2), b.0, b.1)))
        .map(|(db, key, memory)| BigKey {
            db,
            key: key.clone(),
            memory,
        })
}

/// The rules whose keys `rdblens advise` plans splits for.
const BIG_KEY_RULES: [RuleId; 3] = [RuleId::BigString, RuleId::BigCollection, RuleId::BigValueBytes];

/// Whether `rdblens advise` plans a split of this key: a big-key rule
/// lists it at warn or crit (docs/advisor.md).
fn has_split_plan(ctx: &Ctx<'_>, key: &BigKey) -> bool {
    BIG_KEY_RULES
        .iter()
        .filter_map(|r| ctx.summary.keys.rules.rules.get(r))
        .flat_map(|t| t.listed.items.iter())
        .any(|h| h.severity >= Severity::Warn && h.db == key.db && h.key == key.key)
}

pub(crate) fn hashtag_skew(ctx: &Ctx<'_>) -> Outcome {
    let c = &ctx.cfg.hashtag_skew;
    let slots = &ctx.summary.keys.slots;
    let total: u64 = slots.counts().iter().map(|c| c.memory).sum();
    let mean = total as f64 / slots.counts().len().max(1) as f64;
    let mut out = Outcome::default();
    let mut causes = Vec::new();
    let mut tags_to_blame = false;
    for (slot, count) in slots.counts().iter().enumerate() {
        let (memory, keys) = (count.memory, count.keys);
        let share = memory as f64 / total.max(1) as f64;
        if keys < c.min_keys || share <= c.memory_share || memory as f64 <= c.mean_factor * mean {
            continue;
        }
        let slot = slot as u16;
        // The tag that put most of this memory here, if any.
        let tag = slots
            .hash_tags
            .sorted()
            .filter(|(t, _)| key_slot(t.as_bytes()) == slot)
            .max_by(|a, b| a.1.memory.cmp(&b.1.memory).then_with(|| b.0.cmp(a.0)))
            .map(|(t, km)| (String::from_utf8_lossy(t.as_bytes()).into_owned(), *km));
        let of_slot = |part: u64| text::percent(part as f64 / memory.max(1) as f64);
        let cause = match (biggest_key_in(ctx, slot), &tag) {
            (Some(k), _) if k.memory.saturating_mul(2) > memory => SlotCause::BigKey(k),
            (_, Some((_, km))) if km.memory.saturating_mul(2) > memory => SlotCause::HashTag,
            // Past 4,096 hash tags the summary keeps a sample: a tag in this
            // slot may be among those left out.
            (biggest, None) if !slots.hash_tags.is_folded() => SlotCause::BigKeys(biggest),
            _ => SlotCause::Mixed,
        };
        let by_tag = tag
            .as_ref()
            .map(|(t, km)| {
                format!(
                    ", {} of them with hash tag {{{t}}} ({} of the slot)",
                    text::count(km.keys),
                    of_slot(km.memory)
                )
            })
            .unwrap_or_default();
        let why = match &cause {
            SlotCause::BigKey(k) => format!(
                "; the key {} alone holds {} ({} of the slot), a big key, not a hash tag",
                String::from_utf8_lossy(k.key.as_bytes()),
                text::bytes(k.memory),
                of_slot(k.memory)
            ),
            SlotCause::HashTag => String::new(),
            SlotCause::BigKeys(Some(k)) => format!(
                "; no key in it has a hash tag: its keys are big, the biggest, {}, holding {} ({} of the slot)",
                String::from_utf8_lossy(k.key.as_bytes()),
                text::bytes(k.memory),
                of_slot(k.memory)
            ),
            SlotCause::BigKeys(None) => "; no key in it has a hash tag: its keys are big".to_string(),
            SlotCause::Mixed if tag.is_some() => "; neither that hash tag nor one key holds half of it".to_string(),
            SlotCause::Mixed => {
                "; no single key holds half of it, and too many hash tags to tell whether one does".to_string()
            }
        };
        let message = format!(
            "slot {slot} holds {} keys and {} ({} of all memory, {:.0}x the mean slot){by_tag}{why}",
            text::count(keys),
            text::bytes(memory),
            text::percent(share),
            memory as f64 / mean.max(f64::MIN_POSITIVE)
        );
        let (advice, examples) = match &cause {
            SlotCause::BigKey(k) if has_split_plan(ctx, k) => {
                (BIG_KEY_PLANNED.to_string(), vec![key_ref(k.db, &k.key)])
            }
            SlotCause::BigKey(k) => (BIG_KEY.to_string(), vec![key_ref(k.db, &k.key)]),
            SlotCause::HashTag => (advice(RuleId::HashtagSkew).to_string(), Vec::new()),
            SlotCause::BigKeys(k) => (
                BIG_KEYS.to_string(),
                k.iter().map(|k| key_ref(k.db, &k.key)).collect(),
            ),
            SlotCause::Mixed => (EITHER.to_string(), Vec::new()),
        };
        tags_to_blame |= matches!(cause, SlotCause::HashTag | SlotCause::Mixed);
        causes.push(advice.clone());
        out.keys += keys;
        out.memory += memory;
        out.findings.push(Finding {
            severity: Severity::Warn,
            threshold: Some(Quantity::real(c.memory_share, Unit::Share)),
            keys,
            memory,
            impact: memory,
            more_keys: keys.saturating_sub(examples.len() as u64),
            examples,
            advice,
            ..finding(
                RuleId::HashtagSkew,
                Scope::Slot {
                    slot,
                    hash_tag: tag.map(|t| t.0),
                },
                message,
                Quantity::real(share, Unit::Share),
            )
        });
    }
    // The rule's advice fits its findings: theirs when they share one;
    // about big keys only when no hash tag is to blame; else both causes.
    causes.sort();
    causes.dedup();
    out.advice = match causes.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        _ if !tags_to_blame => Some(BIG_KEYS.to_string()),
        _ => Some(EITHER.to_string()),
    };
    out.counts.add(Severity::Warn, out.findings.len() as u64);
    out
}

/// hashtag-skew advice for a slot made hot by one big key with a split plan.
const BIG_KEY_PLANNED: &str = "One big key makes this slot hot, not a hash tag: split it into buckets without a hash tag, which spread over the slots (`rdblens advise` gives its split plan); one slot lives on one shard, which runs hot and full.";

/// ...by one big key the big-key rules do not list (so without a plan).
const BIG_KEY: &str = "One big key makes this slot hot, not a hash tag: split it into buckets without a hash tag, which spread over the slots (`rdblens advise` plans splits for the keys over the big-string, big-collection or big-value-bytes thresholds: lower them to get this key's); one slot lives on one shard, which runs hot and full.";

/// ...by big keys and no hash tag, no single key known to hold half of it
/// (and the rule's advice when its findings blame big keys in more ways).
const BIG_KEYS: &str = "Big keys make this slot hot, not a hash tag: split them into buckets without a hash tag, which spread over the slots (`rdblens advise` gives split plans for the keys over the big-string, big-collection or big-value-bytes thresholds); one slot lives on one shard, which runs hot and full.";

/// ...when a hash tag is there but neither it nor one key holds most of it.
const EITHER: &str = "A slot runs hot when a hash tag pins many keys to it (spread them over several tags, e.g. a shard suffix inside the braces) or when it holds a big key (split it: `rdblens advise` gives split plans); `rdblens keys --format csv` lists each key's slot.";

pub(crate) fn small_key_sprawl(ctx: &Ctx<'_>) -> Outcome {
    let c = &ctx.cfg.small_key_sprawl;
    let map = &ctx.summary.keys.rules.sprawl;
    let mut out = Outcome::default();
    for (ns, t) in map.sorted() {
        if t.keys <= c.min_keys {
            continue;
        }
        let ns = ns.as_bytes();
        let est = sprawl::estimate(t, ns.len() as u64, c.bucket_fields);
        // Listpack hashes need every field and value under the value limit
        // (64 bytes by default).
        let longest = t.max_value_len.max(t.max_field_len);
        let config = (longest > 64).then(|| format!("hash-max-listpack-value {longest}"));
        let message = format!(
            "{} string keys under {} in {}; as {} hashes of ~{} fields they would take {} instead of {}",
            text::count(t.keys),
            text::bytes(c.max_value_bytes.0),
            text::namespace(ns, ctx.separator),
            text::count(est.buckets),
            c.bucket_fields,
            text::bytes(est.bucketed),
            text::bytes(t.memory)
        );
        out.keys += t.keys;
        out.memory += t.memory;
        *out.savings.get_or_insert(0) += est.savings;
        out.findings.push(Finding {
            threshold: Some(Quantity::int(c.min_keys, Unit::Keys)),
            keys: t.keys,
            memory: t.memory,
            savings: Some(est.savings),
            config,
            impact: est.savings,
            ..finding(
                RuleId::SmallKeySprawl,
                namespace_scope(ns, ctx.separator),
                message,
                Quantity::int(t.keys, Unit::Keys),
            )
        });
    }
    if map.is_folded() {
        out.note = Some("namespaces beyond the sprawl map's cap were folded and are not judged".into());
    }
    out.counts.add(Severity::Info, out.findings.len() as u64);
    out
}
