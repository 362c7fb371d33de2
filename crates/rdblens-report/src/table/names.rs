//! How keys are stored and named: encodings and compact-encoding limits
//! (section `encodings`), key-name lengths and problems (`keys`), the
//! namespace tree (`prefixes`) and cluster slots and hash tags (`slots`).

use std::fmt::Write;

use comfy_table::{Cell, Table};
use rdblens_summary::acc::names::NameProblem;

use crate::cells::{bars_table, heading, key_text, key_text_within, right, table, MIN_TEXT_WIDTH};
use crate::format::{human_bytes, percent, thousands, utc};
use crate::model::{
    ExpiredJson, ExpiredNamespaceJson, Group, KeyNamesJson, KeysMemory, LimitJson, PrefixJson, PrefixesJson,
    ReportJson, SlotsJson,
};

/// Memory per type and encoding, then the keys over each limit.
pub(crate) fn encodings(
    out: &mut String,
    r: &ReportJson<'_>,
    encodings: &[Group<'_>],
    limits: &[LimitJson<'_>],
) {
    let opts = r.options;
    heading(out, "Encodings (after loading on the target server)");
    let mut t = table(opts, &["type encoding", "keys", "memory", "share of memory"]);
    for g in encodings {
        let c = g.counter;
        t.add_row(vec![
            Cell::new(&g.name),
            right(thousands(c.keys)),
            right(human_bytes(c.memory)),
            right(percent(c.memory, r.totals.memory)),
        ]);
    }
    let _ = writeln!(out, "{}", crate::cells::fitted(&mut t, opts));
    if limits.is_empty() {
        return;
    }
    heading(out, "Compact-encoding limits");
    let mut t = table(
        opts,
        &[
            "limit",
            "value",
            "keys over",
            "memory over",
            "compact would save",
            "over by <= 2x",
            "within 10% under",
        ],
    );
    for l in limits {
        let g = l.counts;
        t.add_row(vec![
            Cell::new(l.limit),
            right(g.threshold),
            right(thousands(g.over_keys)),
            right(human_bytes(g.over_memory)),
            right(human_bytes(g.over_savings)),
            right(thousands(g.over_by_small_margin)),
            right(thousands(g.near_keys)),
        ]);
    }
    let _ = writeln!(out, "{}", crate::cells::fitted(&mut t, opts));
}

/// A problem's id (as in the JSON) and what it counts, so that the two
/// length rows, which can hold the same keys, never read as a duplicate.
fn problem_label(id: NameProblem) -> String {
    let what = match id {
        NameProblem::KeyLong => "over 128 B",
        NameProblem::KeyOver30 => "over 30 B, info",
        NameProblem::KeyChars => "control/glob/quote bytes",
        NameProblem::KeyBraces => "braces, not a hash tag",
        NameProblem::KeyNoNamespace => "no separator",
        NameProblem::KeyNotUtf8 => "not UTF-8",
    };
    let id = serde_json::to_value(id)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    format!("{id} ({what})")
}

/// Name lengths as bars, then the names with a problem.
pub(crate) fn key_names(out: &mut String, r: &ReportJson<'_>, n: &KeyNamesJson) {
    let opts = r.options;
    heading(out, "Key names");
    let _ = writeln!(
        out,
        "length: min {} mean {:.1} p50 {} p90 {} p99 {} max {}",
        n.min.unwrap_or(0),
        n.mean.unwrap_or(0.0),
        n.p50.unwrap_or(0),
        n.p90.unwrap_or(0),
        n.p99.unwrap_or(0),
        n.max.unwrap_or(0)
    );
    let rows: Vec<(String, u64, String)> = n
        .histogram
        .iter()
        .map(|b| {
            let (from, to) = (b.from, if b.from < 2 { b.from } else { b.from * 2 - 1 });
            (
                if from == to {
                    format!("{from} B")
                } else {
                    format!("{from}-{to} B")
                },
                b.keys,
                String::new(),
            )
        })
        .collect();
    out.push_str(&bars_table(opts, "key length", &rows));
    if n.problems.is_empty() {
        return;
    }
    let mut t = table(opts, &["problem", "keys", "share", "memory", "examples"]);
    for p in &n.problems {
        let examples: Vec<String> = p
            .examples
            .iter()
            .take(3)
            .map(|k| crate::cells::key_text(opts, k.as_bytes()))
            .collect();
        t.add_row(vec![
            Cell::new(problem_label(p.id)),
            right(thousands(p.keys)),
            right(percent(p.keys, r.totals.keys)),
            right(human_bytes(p.memory)),
            Cell::new(examples.join(" ")),
        ]);
    }
    let _ = writeln!(out, "{}", crate::cells::fitted(&mut t, opts));
}

/// The `--top` heaviest namespaces with their three heaviest children.
pub(crate) fn prefixes(out: &mut String, r: &ReportJson<'_>, p: &PrefixesJson<'_>) {
    let total = r.totals.memory;
    heading(out, &format!("Namespaces (separator '{}')", p.separator));
    let mut t = table(
        r.options,
        &["prefix", "keys", "memory", "share of memory", "no ttl"],
    );
    for node in p.namespaces.iter().take(r.options.top) {
        let add = |t: &mut Table, indent: &str, n: &PrefixJson| {
            t.add_row(vec![
                Cell::new(format!(
                    "{indent}{}",
                    key_text_within(
                        r.options,
                        n.prefix.as_bytes(),
                        usize::from(MIN_TEXT_WIDTH) - indent.len()
                    )
                )),
                right(thousands(n.totals.keys)),
                right(human_bytes(n.totals.memory)),
                right(percent(n.totals.memory, total)),
                right(percent(n.ttl[0].keys, n.totals.keys)),
            ]);
        };
        add(&mut t, "", node);
        for child in node.children.iter().take(3) {
            add(&mut t, "  ", child);
        }
        if let Some(f) = &node.folded {
            t.add_row(vec![
                Cell::new(format!("  (+~{} more prefixes)", thousands(f.prefixes))),
                right(thousands(f.totals.keys)),
                right(human_bytes(f.totals.memory)),
                right(percent(f.totals.memory, total)),
                Cell::new(""),
            ]);
        }
    }
    if let Some(f) = &p.folded {
        t.add_row(vec![
            Cell::new(format!("(+~{} more namespaces)", thousands(f.prefixes))),
            right(thousands(f.totals.keys)),
            right(human_bytes(f.totals.memory)),
            right(percent(f.totals.memory, total)),
            Cell::new(""),
        ]);
    }
    let u = p.no_namespace;
    if u.keys > 0 {
        t.add_row(vec![
            Cell::new("(no namespace)"),
            right(thousands(u.keys)),
            right(human_bytes(u.memory)),
            right(percent(u.memory, total)),
            right(percent(u.keys.saturating_sub(u.keys_with_expiry), u.keys)),
        ]);
    }
    let _ = writeln!(out, "{}", crate::cells::fitted(&mut t, r.options));
    expired(out, r, &p.expired);
}

/// The keys already expired at the reference time, per namespace (only
/// when there are any): memory a reload frees.
fn expired(out: &mut String, r: &ReportJson<'_>, e: &ExpiredJson) {
    if e.total.keys == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "{} keys ({}) already expired at {} UTC are still in the dump: loading it (or the server's expiry) frees them.",
        thousands(e.total.keys),
        human_bytes(e.total.memory),
        utc(r.now_ms)
    );
    let mut t = table(r.options, &["prefix", "expired keys", "memory"]);
    let row = |t: &mut Table, label: String, m: KeysMemory| {
        t.add_row(vec![
            Cell::new(label),
            right(thousands(m.keys)),
            right(human_bytes(m.memory)),
        ]);
    };
    let name = |indent: &str, n: &ExpiredNamespaceJson| {
        format!(
            "{indent}{}",
            key_text_within(
                r.options,
                n.prefix.as_bytes(),
                usize::from(MIN_TEXT_WIDTH) - indent.len()
            )
        )
    };
    for n in e.namespaces.iter().take(r.options.top) {
        row(&mut t, name("", n), n.expired);
        for child in n.children.iter().take(3) {
            row(&mut t, name("  ", child), child.expired);
        }
    }
    if e.namespaces.len() > r.options.top {
        let rest = &e.namespaces[r.options.top..];
        let sum = rest.iter().fold(KeysMemory::default(), |a, n| KeysMemory {
            keys: a.keys + n.expired.keys,
            memory: a.memory + n.expired.memory,
        });
        row(&mut t, format!("(+{} more namespaces)", rest.len()), sum);
    }
    if e.folded.keys > 0 {
        row(&mut t, "(folded namespaces)".into(), e.folded);
    }
    if e.no_namespace.keys > 0 {
        row(&mut t, "(no namespace)".into(), e.no_namespace);
    }
    let _ = writeln!(out, "{}", crate::cells::fitted(&mut t, r.options));
}

/// The slots with the most memory, then the commonest hash tags.
pub(crate) fn slots(out: &mut String, r: &ReportJson<'_>, j: &SlotsJson) {
    let opts = r.options;
    heading(out, &format!("Cluster slots ({} of 16384 used)", j.slots_used));
    let mut t = table(opts, &["slot", "keys", "memory"]);
    for s in j.most_memory.iter().take(opts.top.min(10)) {
        t.add_row(vec![
            right(s.slot),
            right(thousands(s.keys)),
            right(human_bytes(s.memory)),
        ]);
    }
    let _ = writeln!(out, "{}", crate::cells::fitted(&mut t, opts));
    if !j.hash_tags.is_empty() {
        let mut t = table(opts, &["hash tag", "keys", "memory"]);
        for tag in j.hash_tags.iter().take(opts.top.min(10)) {
            t.add_row(vec![
                Cell::new(key_text(opts, tag.tag.as_bytes())),
                right(thousands(tag.keys)),
                right(human_bytes(tag.memory)),
            ]);
        }
        let _ = writeln!(out, "{}", crate::cells::fitted(&mut t, opts));
    }
}
