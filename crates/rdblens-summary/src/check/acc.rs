//! The checks of each accumulator of a summary's keys.

use super::{checked_sum, Checked, Checker};
use crate::acc::access::Access;
use crate::acc::counter::Counter;
use crate::acc::expiry::ExpiryHistogram;
use crate::acc::expiry_cells::KeysMemory;
use crate::acc::limits::Limits;
use crate::acc::names::KeyNames;
use crate::acc::prefix::{PrefixNode, Prefixes};
use crate::acc::rules::{NsTally, RuleHits, SprawlTally};
use crate::acc::slots::Slots;
use crate::acc::top::{Metric, TopSet};
use crate::acc::ttl::{Ttl, TtlBuckets};
use crate::settings::Settings;

/// Namespace levels a prefix tree can have (`--depth` 1-4).
const MAX_DEPTH: usize = 4;

pub(crate) fn settings(c: &mut Checker, s: &Settings) -> Checked {
    c.count("top", s.top as u64)?;
    // Any depth: the accumulators use it clamped to 1-4.
    c.count("prefix_depth", s.prefix_depth as u64)?;
    c.count("expiry_buckets", s.expiry_buckets as u64)
}

pub(crate) fn limits(c: &mut Checker, l: &Limits, top: usize, totals: &Counter) -> Checked {
    if l.examples != top {
        return Err(c.fail_at("examples", format!("{}, settings.top is {top}", l.examples)));
    }
    c.at("groups", |c| {
        for (name, g) in &l.groups {
            let n = &g.counts;
            c.at(name, |c| {
                c.at_most("over_keys", n.over_keys, "totals.keys", totals.keys)?;
                c.at_most("near_keys", n.near_keys, "totals.keys", totals.keys)?;
                c.at_most(
                    "over_by_small_margin",
                    n.over_by_small_margin,
                    "over_keys",
                    n.over_keys,
                )?;
                c.count("over_memory", n.over_memory)?;
                c.count("over_savings", n.over_savings)?;
                c.count("near_memory", n.near_memory)?;
                c.top_keys("over_examples", &g.over_examples, Metric::Memory)
            })?;
        }
        Ok(())
    })
}

pub(crate) fn top_set(c: &mut Checker, t: &TopSet) -> Checked {
    c.top_keys("by_memory", &t.by_memory, Metric::Memory)?;
    c.top_keys("by_serialized", &t.by_serialized, Metric::Serialized)?;
    c.top_keys("by_elements", &t.by_elements, Metric::Elements)?;
    c.at("per_type", |c| {
        for (name, lists) in &t.per_type {
            c.at(name, |c| {
                let metrics = [Metric::Memory, Metric::Serialized, Metric::Elements];
                for (i, (list, metric)) in lists.iter().zip(metrics).enumerate() {
                    c.top_keys(&format!("[{i}]"), list, metric)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    })
}

pub(crate) fn key_names(c: &mut Checker, k: &KeyNames, s: &Settings, totals: &Counter) -> Checked {
    if k.separator != s.separator {
        return Err(c.fail_at(
            "separator",
            format!("{}, settings.separator is {}", k.separator, s.separator),
        ));
    }
    c.histogram("lengths", &k.lengths)?;
    if k.lengths.count != totals.keys {
        return Err(c.fail_at(
            "lengths",
            format!("{} key names, totals.keys is {}", k.lengths.count, totals.keys),
        ));
    }
    c.at("problems", |c| {
        for (p, n) in &k.problems {
            let name = serde_json::to_value(p)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string));
            c.at(name.unwrap_or_default(), |c| {
                c.at_most("keys", n.keys, "totals.keys", totals.keys)?;
                c.count("memory", n.memory)?;
                c.top_keys("examples", &n.examples, Metric::KeyOrder)
            })?;
        }
        Ok(())
    })
}

pub(crate) fn prefixes(c: &mut Checker, p: &Prefixes, s: &Settings, totals: &Counter) -> Checked {
    if p.separator != s.separator {
        return Err(c.fail_at(
            "separator",
            format!("{}, settings.separator is {}", p.separator, s.separator),
        ));
    }
    let depth = s.prefix_depth.clamp(1, MAX_DEPTH);
    if p.depth != depth {
        return Err(c.fail_at("depth", format!("{}, settings.prefix_depth is {depth}", p.depth)));
    }
    c.at("unprefixed", |c| c.counter(&p.unprefixed))?;
    c.at("unprefixed_ttl", |c| {
        ttl_buckets(c, &p.unprefixed_ttl, &p.unprefixed)
    })?;
    c.bounded("root", &p.root, |c, node| prefix_node(c, node, 1, depth))?;
    let parts = p.root.entries.values().chain([&p.root.other]).map(|n| &n.totals);
    c.counters_add_up("root", parts.chain([&p.unprefixed]), "totals", totals)
}

/// A node `level` deep (1: a first segment): its keys are its TTL
/// buckets' keys, its children's at most its own.
fn prefix_node(c: &mut Checker, n: &PrefixNode, level: usize, depth: usize) -> Checked {
    c.at("totals", |c| c.counter(&n.totals))?;
    c.at("ttl", |c| ttl_buckets(c, &n.ttl, &n.totals))?;
    let Some(children) = &n.children else {
        return Ok(());
    };
    if level >= depth {
        return Err(c.fail_at("children", format!("deeper than the depth ({depth})")));
    }
    c.bounded("children", children, |c, child| {
        prefix_node(c, child, level + 1, depth)
    })?;
    let keys = checked_sum(
        children
            .entries
            .values()
            .chain([&children.other])
            .map(|n| n.totals.keys),
    );
    match keys {
        Some(k) if k <= n.totals.keys => Ok(()),
        _ => Err(c.fail_at(
            "children",
            format!("hold more keys than the prefix ({})", n.totals.keys),
        )),
    }
}

/// Keys and memory per TTL bucket, adding up to `totals`.
fn ttl_buckets(c: &mut Checker, b: &TtlBuckets, totals: &Counter) -> Checked {
    for (i, (&k, &m)) in b.keys.iter().zip(&b.memory).enumerate() {
        c.at("keys", |c| c.count(&format!("[{i}]"), k))?;
        c.at("memory", |c| c.count(&format!("[{i}]"), m))?;
    }
    c.sum_is("keys", checked_sum(b.keys), "totals.keys", totals.keys)?;
    c.sum_is("memory", checked_sum(b.memory), "totals.memory", totals.memory)?;
    // The first bucket holds the keys without an expiry.
    let expiring = totals.keys - totals.keys_with_expiry;
    if b.keys[0] != expiring {
        return Err(c.fail_at(
            "keys[0]",
            format!("{} keys without expiry, totals say {expiring}", b.keys[0]),
        ));
    }
    Ok(())
}

pub(crate) fn ttl(c: &mut Checker, t: &Ttl, totals: &Counter) -> Checked {
    c.at("buckets", |c| ttl_buckets(c, &t.buckets, totals))
}

pub(crate) fn expiry(c: &mut Checker, e: &ExpiryHistogram, s: &Settings, totals: &Counter) -> Checked {
    if e.separator != s.separator {
        return Err(c.fail_at(
            "separator",
            format!("{}, settings.separator is {}", e.separator, s.separator),
        ));
    }
    let depth = s.prefix_depth.clamp(1, MAX_DEPTH);
    if e.depth != depth {
        return Err(c.fail_at("depth", format!("{}, settings.prefix_depth is {depth}", e.depth)));
    }
    if e.cap() != s.expiry_buckets.max(16) {
        return Err(c.fail_at(
            "cap",
            format!("{}, settings.expiry_buckets is {}", e.cap(), s.expiry_buckets),
        ));
    }
    if !e.is_flushed() {
        return Err(c.fail("keys not yet in their cells (KeyStats::finish was not called)"));
    }
    if e.expiring_keys != totals.keys_with_expiry {
        return Err(c.fail_at(
            "expiring_keys",
            format!(
                "{}, totals.keys_with_expiry is {}",
                e.expiring_keys, totals.keys_with_expiry
            ),
        ));
    }
    c.at_most(
        "expiring_memory",
        e.expiring_memory,
        "totals.memory",
        totals.memory,
    )?;
    let mut cells = Some(0u64);
    for (_, km) in e.cells.iter() {
        cells = cells.and_then(|s| s.checked_add(km.keys));
    }
    c.sum_is("cells", cells, "expiring_keys", e.expiring_keys)?;
    // Every key adds one to a counter of each row; a counter stops at
    // u32::MAX, so a row holding one adds up to less.
    for (i, row) in e.namespaces.rows().enumerate() {
        let sum: u64 = row.iter().map(|&n| u64::from(n)).sum();
        let saturated = row.contains(&u32::MAX);
        if sum > e.expiring_keys || (sum < e.expiring_keys && !saturated) {
            return Err(c.fail_at(
                "namespaces",
                format!("row {i} counts {sum} keys, expiring_keys is {}", e.expiring_keys),
            ));
        }
    }
    Ok(())
}

fn keys_memory(c: &mut Checker, km: &KeysMemory) -> Checked {
    c.count("keys", km.keys)?;
    c.count("memory", km.memory)
}

pub(crate) fn slots(c: &mut Checker, s: &Slots, totals: &Counter) -> Checked {
    let counts = s.counts();
    c.sum_is(
        "keys",
        checked_sum(counts.iter().map(|s| s.keys)),
        "totals.keys",
        totals.keys,
    )?;
    c.sum_is(
        "memory",
        checked_sum(counts.iter().map(|s| s.memory)),
        "totals.memory",
        totals.memory,
    )?;
    c.at_most("keys_with_tag", s.keys_with_tag, "totals.keys", totals.keys)?;
    c.bounded("hash_tags", &s.hash_tags, keys_memory)?;
    let tagged = checked_sum(
        s.hash_tags
            .entries
            .values()
            .chain([&s.hash_tags.other])
            .map(|t| t.keys),
    );
    c.sum_is("hash_tags", tagged, "keys_with_tag", s.keys_with_tag)
}

pub(crate) fn access(c: &mut Checker, a: &Access, totals: &Counter) -> Checked {
    c.histogram("idle_seconds", &a.idle_seconds)?;
    c.at_most("idle_seconds", a.idle_seconds.count, "totals.keys", totals.keys)?;
    c.histogram("lfu_freq", &a.lfu_freq)?;
    c.at_most("lfu_freq", a.lfu_freq.count, "totals.keys", totals.keys)?;
    c.at_most("ram_lru_keys", a.ram_lru_keys, "totals.keys", totals.keys)?;
    if let Some(max) = a.lfu_freq.max.filter(|&m| m > u64::from(u8::MAX)) {
        return Err(c.fail_at("lfu_freq.max", format!("{max}: an LFU counter is at most 255")));
    }
    c.top_keys("coldest", &a.coldest, Metric::Idle)?;
    c.top_keys("hottest", &a.hottest, Metric::Freq)
}

pub(crate) fn rules(c: &mut Checker, r: &RuleHits, s: &Settings, totals: &Counter) -> Checked {
    if r.config != s.rules {
        return Err(c.fail_at("config", "differs from settings.rules"));
    }
    if r.separator != s.separator {
        return Err(c.fail_at(
            "separator",
            format!("{}, settings.separator is {}", r.separator, s.separator),
        ));
    }
    c.at("rules", |c| {
        for (id, t) in &r.rules {
            c.at(id.name(), |c| {
                for i in 0..3 {
                    c.at("keys", |c| c.count(&format!("[{i}]"), t.keys[i]))?;
                    c.at("memory", |c| c.count(&format!("[{i}]"), t.memory[i]))?;
                }
                let keys = t.total_keys();
                c.count("savings", t.savings)?;
                c.at_most("with_savings", t.with_savings, "the rule's keys", keys)?;
                c.at_most("unlisted", t.unlisted, "the rule's keys", keys)?;
                c.at("listed", |c| {
                    c.count("n", t.listed.n as u64)?;
                    if t.listed.items.len() > t.listed.n {
                        return Err(c.fail_at("items", format!("more than n ({})", t.listed.n)));
                    }
                    if !t.listed.is_sorted() {
                        return Err(c.fail_at("items", "not in the list's order"));
                    }
                    for (i, h) in t.listed.items.iter().enumerate() {
                        c.at(format!("items[{i}]"), |c| {
                            c.count("db", h.db)?;
                            c.count("memory", h.memory)
                        })?;
                    }
                    Ok(())
                })?;
                c.bounded("namespaces", &t.namespaces, ns_tally)?;
                c.at("details", |c| {
                    for (name, d) in &t.details {
                        c.at(name, |c| {
                            c.at_most("keys", d.keys, "the rule's keys", keys)?;
                            c.count("memory", d.memory)?;
                            c.count("savings", d.savings)?;
                            c.at_most("fixable_keys", d.fixable_keys, "keys", d.keys)
                        })?;
                    }
                    Ok(())
                })
            })?;
        }
        Ok(())
    })?;
    c.bounded("sprawl", &r.sprawl, |c, t| sprawl(c, t, totals))
}

fn ns_tally(c: &mut Checker, t: &NsTally) -> Checked {
    c.count("keys", t.keys)?;
    c.count("memory", t.memory)?;
    c.count("savings", t.savings)
}

fn sprawl(c: &mut Checker, t: &SprawlTally, totals: &Counter) -> Checked {
    c.at_most("keys", t.keys, "totals.keys", totals.keys)?;
    c.count("memory", t.memory)?;
    c.at_most("keyspace", t.keyspace, "memory", t.memory)?;
    c.count("entry_bytes", t.entry_bytes)?;
    c.count("max_field_len", t.max_field_len)?;
    c.count("max_value_len", t.max_value_len)
}
