//! The checks a summary passes before use: summaries are written on one
//! host and read on another, so a summary file is hostile input like a
//! dump. Lengths that must agree, counts that must add up, values within
//! [`MAX_COUNT`](crate::MAX_COUNT); the error names the JSON field (docs/cluster.md lists the
//! rules). Readers (tables, JSON, the audit, merges) rely on what passes.

use crate::acc::bounded::BoundedMap;
use crate::acc::counter::Counter;
use crate::acc::empty::{is_dropped_on_load, EMPTY_NAMED};
use crate::acc::hist::Histogram;
use crate::acc::top::{KeyRecord, Metric, TopKeys};
use crate::shard::ShardStats;
use crate::slot::SLOTS;
use crate::summary::{KeyStats, Summary, DAMAGE_KEPT, SUMMARY_VERSION};
use crate::used_memory::UsedMemory;
use rdblens_parser::TypeKind;

pub(crate) mod acc;

use crate::checker::Checked;
use crate::checker::{checked_sum, Checker};

/// The six figures of counters, summed field by field.
fn counter_sum<'a>(counters: impl IntoIterator<Item = &'a Counter>) -> Option<Counter> {
    counters.into_iter().try_fold(Counter::default(), |a, b| {
        Some(Counter {
            keys: a.keys.checked_add(b.keys)?,
            keys_with_expiry: a.keys_with_expiry.checked_add(b.keys_with_expiry)?,
            memory: a.memory.checked_add(b.memory)?,
            keyspace_overhead: a.keyspace_overhead.checked_add(b.keyspace_overhead)?,
            serialized_bytes: a.serialized_bytes.checked_add(b.serialized_bytes)?,
            elements: a.elements.checked_add(b.elements)?,
        })
    })
}

impl Checker {
    /// Every figure within the bound; no more keys with an expiry than keys.
    pub(crate) fn counter(&mut self, c: &Counter) -> Checked {
        self.count("keys", c.keys)?;
        self.count("keys_with_expiry", c.keys_with_expiry)?;
        self.count("memory", c.memory)?;
        self.count("keyspace_overhead", c.keyspace_overhead)?;
        self.count("serialized_bytes", c.serialized_bytes)?;
        self.count("elements", c.elements)?;
        self.at_most("keys_with_expiry", c.keys_with_expiry, "keys", c.keys)
    }

    /// Counters under `field` that must add up to `total` (named `total_name`).
    fn counters_add_up<'a>(
        &mut self,
        field: &str,
        parts: impl IntoIterator<Item = &'a Counter>,
        total_name: &str,
        total: &Counter,
    ) -> Checked {
        self.at(field, |c| {
            let sum = counter_sum(parts).ok_or_else(|| c.fail("adds up past 2^64"))?;
            for (name, s, t) in [
                ("keys", sum.keys, total.keys),
                ("keys_with_expiry", sum.keys_with_expiry, total.keys_with_expiry),
                ("memory", sum.memory, total.memory),
                (
                    "keyspace_overhead",
                    sum.keyspace_overhead,
                    total.keyspace_overhead,
                ),
                ("serialized_bytes", sum.serialized_bytes, total.serialized_bytes),
                ("elements", sum.elements, total.elements),
            ] {
                if s != t {
                    return Err(c.fail(format!("{name} add up to {s}, {total_name}.{name} is {t}")));
                }
            }
            Ok(())
        })
    }

    pub(crate) fn histogram(&mut self, field: &str, h: &Histogram) -> Checked {
        self.at(field, |c| h.check(c))
    }

    /// Records within the bound, at most `n`, in the list's own order.
    pub(crate) fn top_keys(&mut self, field: &str, t: &TopKeys, metric: Metric) -> Checked {
        self.at(field, |c| {
            if t.metric != metric {
                return Err(c.fail_at("metric", format!("{:?}, expected {metric:?}", t.metric)));
            }
            c.count("n", t.n as u64)?;
            if t.keys.len() > t.n {
                return Err(c.fail_at("keys", format!("{} records, more than n ({})", t.keys.len(), t.n)));
            }
            c.at("keys", |c| {
                for (i, r) in t.keys.iter().enumerate() {
                    c.at(format!("[{i}]"), |c| c.record(r))?;
                }
                if !t.is_sorted() {
                    return Err(c.fail("not in the list's order"));
                }
                Ok(())
            })
        })
    }

    pub(crate) fn record(&mut self, r: &KeyRecord) -> Checked {
        self.count("db", r.db)?;
        self.count("elements", r.elements)?;
        self.count("memory", r.memory)?;
        self.count("serialized_bytes", r.serialized_bytes)?;
        self.count("max_element_len", r.max_element_len)
    }

    /// At most `cap` names kept, nothing folded unless `folded`, and every
    /// value checked by `value`.
    pub(crate) fn bounded<V: crate::acc::bounded::Mergeable + PartialEq>(
        &mut self,
        field: &str,
        m: &BoundedMap<V>,
        mut value: impl FnMut(&mut Self, &V) -> Checked,
    ) -> Checked {
        self.at(field, |c| {
            if m.cap == 0 {
                return Err(c.fail_at("cap", "0"));
            }
            if m.entries.len() > m.cap {
                return Err(c.fail_at(
                    "entries",
                    format!("{} names, more than cap ({})", m.entries.len(), m.cap),
                ));
            }
            if !m.folded && m.other != V::default() {
                return Err(c.fail_at("other", "not empty, but folded is false"));
            }
            c.at("entries", |c| {
                for (name, v) in m.sorted() {
                    let shown = String::from_utf8_lossy(name.as_bytes()).into_owned();
                    c.at(format!("[{shown:?}]"), |c| value(c, v))?;
                }
                Ok(())
            })?;
            c.at("other", |c| value(c, &m.other))
        })
    }
}

impl Summary {
    /// Checks that the summary is one rdblens could have written: what
    /// every summary read from a file passes before use (and every merge's
    /// result). The error names the field, as a JSON path from `summary`.
    pub fn check(&self) -> Checked {
        let mut c = Checker::new("summary");
        if self.summary_version != SUMMARY_VERSION {
            return Err(c.fail_at(
                "summary_version",
                format!("{}, expected {SUMMARY_VERSION}", self.summary_version),
            ));
        }
        c.at("settings", |c| acc::settings(c, &self.settings))?;
        if self.files.is_empty() {
            return Err(c.fail_at("files", "no files"));
        }
        c.at("files", |c| {
            for (i, f) in self.files.iter().enumerate() {
                c.at(format!("[{i}]"), |c| {
                    c.count("size", f.size)?;
                    c.count("keys", f.keys)?;
                    c.count("functions", f.functions)?;
                    c.count("module_aux", f.module_aux)?;
                    if let Some(u) = &f.used_memory {
                        c.at("used_memory", |c| used_memory(c, u))?;
                    }
                    match &f.shard {
                        Some(s) => c.at("shard", |c| shard(c, s)),
                        None => Ok(()),
                    }
                })?;
            }
            Ok(())
        })?;
        c.at("keys", |c| key_stats(c, self))?;
        // Each file's own figures add up to the whole (summaries written
        // before files had them have none).
        let shards: Option<Vec<&Counter>> = self
            .files
            .iter()
            .map(|f| f.shard.as_ref().map(|s| &s.totals))
            .collect();
        match shards {
            Some(shards) => c.counters_add_up("files", shards, "keys.totals", &self.keys.totals),
            None => Ok(()),
        }
    }
}

/// A file's `used_memory` prediction: parts within the bound that add up
/// to it.
fn used_memory(c: &mut Checker, u: &UsedMemory) -> Checked {
    c.count("predicted", u.predicted)?;
    c.count("values", u.values)?;
    c.count("keyspace", u.keyspace)?;
    c.count("value_rounding", u.value_rounding)?;
    c.count("usage_overcount", u.usage_overcount)?;
    c.count("baseline", u.baseline)?;
    c.count("unestimated_keys", u.unestimated_keys)?;
    c.count("expired_keys", u.expired_keys)?;
    // Each part is at most 2^53: the sum cannot overflow.
    let parts = (u.values + u.keyspace + u.value_rounding + u.baseline).saturating_sub(u.usage_overcount);
    if parts != u.predicted {
        return Err(c.fail_at(
            "predicted",
            format!(
                "{}, but values + keyspace + value_rounding + baseline - usage_overcount is {parts}",
                u.predicted
            ),
        ));
    }
    Ok(())
}

/// A file's own figures.
fn shard(c: &mut Checker, s: &ShardStats) -> Checked {
    c.at("totals", |c| c.counter(&s.totals))?;
    if let Some(b) = &s.biggest {
        c.at("biggest", |c| c.record(b))?;
    }
    let mut next = 0u32;
    for (i, &[from, to]) in s.slot_ranges.iter().enumerate() {
        if u32::from(from) < next || from > to || usize::from(to) >= SLOTS {
            return Err(c.fail_at(
                format!("slot_ranges[{i}]"),
                format!(
                    "[{from}, {to}]: ranges are in order, apart, within 0-{}",
                    SLOTS - 1
                ),
            ));
        }
        next = u32::from(to) + 2;
    }
    Ok(())
}

fn key_stats(c: &mut Checker, s: &Summary) -> Checked {
    let k: &KeyStats = &s.keys;
    let totals = &k.totals;
    c.at("totals", |c| c.counter(totals))?;
    c.at("databases", |c| {
        for (db, v) in &k.databases {
            c.at(db, |c| c.counter(v))?;
        }
        Ok(())
    })?;
    c.counters_add_up("databases", k.databases.values(), "totals", totals)?;
    for (field, groups) in [
        ("types", &k.types),
        ("encodings", &k.encodings),
        ("rdb_types", &k.rdb_types),
    ] {
        c.at(field, |c| {
            for (name, v) in groups {
                c.at(name, |c| c.counter(v))?;
            }
            Ok(())
        })?;
        c.counters_add_up(field, groups.values(), "totals", totals)?;
    }
    c.at("elements", |c| {
        for (name, h) in &k.elements {
            c.histogram(name, h)?;
        }
        c.sum_is(
            "count",
            checked_sum(k.elements.values().map(|h| h.count)),
            "totals.keys",
            totals.keys,
        )?;
        let sum: Option<u128> = k.elements.values().try_fold(0u128, |a, h| a.checked_add(h.sum));
        if sum != Some(u128::from(totals.elements)) {
            return Err(c.fail(format!(
                "the element counts add up to {}, totals.elements is {}",
                sum.map_or("more than 2^128".into(), |s| s.to_string()),
                totals.elements
            )));
        }
        Ok(())
    })?;
    c.at("value_sizes", |c| {
        for (name, v) in &k.value_sizes {
            c.at(name, |c| v.check(c))?;
        }
        let keys = checked_sum(k.value_sizes.values().map(|v| v.memory.count));
        c.sum_is("memory.count", keys, "totals.keys", totals.keys)
    })?;
    c.at("compression", |c| {
        let z = &k.compression;
        c.count("stored_bytes", z.stored_bytes)?;
        c.count("uncompressed_bytes", z.uncompressed_bytes)?;
        c.at_most(
            "compressed_values",
            z.compressed_values,
            "totals.keys",
            totals.keys,
        )
    })?;
    c.at("used_memory", |c| {
        let u = &k.used_memory;
        c.count("values", u.values)?;
        c.count("keyspace_entries", u.keyspace_entries)?;
        c.count("value_rounding", u.value_rounding)?;
        c.count("usage_overcount", u.usage_overcount)?;
        c.at_most("unestimated_keys", u.unestimated_keys, "totals.keys", totals.keys)?;
        c.at_most("expired_keys", u.expired_keys, "totals.keys", totals.keys)
    })?;
    k.check_kept(
        c,
        &crate::acc::registry::CheckContext {
            settings: &s.settings,
            totals,
        },
    )?;
    c.at("empty", |c| {
        let e = &k.empty;
        c.count("keys", e.keys)?;
        c.count("serialized_bytes", e.serialized_bytes)?;
        c.first_kept("named", e.named.len(), "keys", e.keys, EMPTY_NAMED)?;
        if !e.named.is_sorted() {
            return Err(c.fail_at("named", "not in database and name order"));
        }
        let collection =
            |name: &str| TypeKind::from_name(name).is_some_and(|kind| is_dropped_on_load(kind, 0));
        match e.named.iter().find(|k| !collection(&k.type_name)) {
            Some(k) => Err(c.fail_at("named", format!("type {:?} is not a collection", k.type_name))),
            None => Ok(()),
        }
    })?;
    c.count("damaged_keys", k.damaged_keys)?;
    c.first_kept(
        "damage",
        k.damage.len(),
        "damaged_keys",
        k.damaged_keys,
        DAMAGE_KEPT,
    )?;
    if !k.damage.is_sorted_by_key(|d| d.offset) {
        return Err(c.fail_at("damage", "not in offset order"));
    }
    Ok(())
}
