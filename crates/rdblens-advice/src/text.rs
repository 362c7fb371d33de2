//! The plans as plain text: one block per plan, then the totals per
//! namespace (used by `rdblens advise` and the report's `plans` section).

use std::fmt::Write;

use rdblens_audit::text::{bytes, count};

use crate::plan::{Plan, PlanKind, Plans, Totals};

fn signed(n: i64) -> String {
    if n < 0 {
        format!("-{}", bytes(n.unsigned_abs()))
    } else {
        bytes(n as u64)
    }
}

fn saves(n: i64) -> String {
    if n < 0 {
        format!("costs {} more", bytes(n.unsigned_abs()))
    } else {
        format!("saves {}", bytes(n as u64))
    }
}

fn scope(p: &Plan) -> String {
    match (&p.key, p.db) {
        (Some(key), Some(db)) => {
            let name = String::from_utf8_lossy(key.as_bytes());
            format!("db{db} {name}")
        }
        _ => format!("namespace {}", p.namespace),
    }
}

/// The fullest bucket: at 99 % for hash-filled buckets, exact for ranges.
fn fullest(p: &Plan) -> String {
    if p.scheme.fills_by_hash() {
        format!("fullest {} at 99%", count(p.max_per_bucket))
    } else {
        format!("at most {}", count(p.max_per_bucket))
    }
}

fn block(out: &mut String, p: &Plan) {
    let rules: Vec<&str> = p.rules.iter().map(|r| r.name()).collect();
    let _ = writeln!(
        out,
        "{} {} ({} {}, {} {}; {})",
        p.severity,
        scope(p),
        p.type_name,
        p.encoding_before,
        count(p.elements),
        if p.type_name == "string" && p.kind == PlanKind::Key {
            "bytes"
        } else if p.kind == PlanKind::Namespace {
            "keys"
        } else {
            "elements"
        },
        rules.join(", ")
    );
    let _ = writeln!(
        out,
        "  scheme       {}: {} keys {}, {}",
        p.scheme.name(),
        count(p.buckets),
        p.key_pattern,
        p.bucket_by
    );
    let _ = writeln!(
        out,
        "  buckets      ~{} each ({}) under {} {}: {}, {:.0}% growth headroom",
        count(p.per_bucket),
        fullest(p),
        p.limit.name,
        count(p.limit.value),
        p.encoding_after,
        p.headroom * 100.0
    );
    let _ = writeln!(
        out,
        "  used_memory  {} -> {}: {} (what the server's used_memory changes by)",
        bytes(p.used_memory_before),
        bytes(p.used_memory_after),
        saves(p.saved)
    );
    let _ = writeln!(
        out,
        "  MEMORY USAGE {} -> {}: {} (the keys' MEMORY USAGE, summed)",
        bytes(p.memory_before),
        bytes(p.memory_after),
        saves(p.memory_usage_saved)
    );
    let _ = writeln!(out, "  hash tag     {}: {}", p.hash_tag_pattern, p.hash_tag_cost);
    if let Some(note) = &p.note {
        let _ = writeln!(out, "  note         {note}");
    }
    if let Some(alternative) = &p.alternative {
        let _ = writeln!(out, "  alternative  {alternative}");
    }
    let _ = writeln!(out, "  latency      {}", p.latency);
    for (i, step) in p.migration.iter().enumerate() {
        let label = if i == 0 { "migration" } else { "" };
        let _ = writeln!(out, "  {label:<12} {}. {step}", i + 1);
    }
}

fn totals_line(out: &mut String, t: &Totals) {
    let _ = writeln!(
        out,
        "  {:<24} {:>5} {:>12} {:>12} {:>12} {:>13}",
        t.namespace.as_deref().unwrap_or("(all)"),
        count(t.plans),
        bytes(t.used_memory_before),
        bytes(t.used_memory_after),
        signed(t.saved),
        signed(t.memory_usage_saved)
    );
}

/// All plans, then the totals.
pub fn render(plans: &Plans) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Split plans for {}, jemalloc quantum {} ({} plans; the memory model's figures for that server: used_memory is what the host sees change, MEMORY USAGE what the server reports per key)",
        plans.target,
        plans.jemalloc_quantum,
        plans.plans.len()
    );
    if plans.plans.is_empty() {
        let _ = writeln!(
            out,
            "  no big key at warn or crit and no small-key sprawl: nothing to split"
        );
        return out;
    }
    for p in &plans.plans {
        out.push('\n');
        block(&mut out, p);
    }
    let _ = writeln!(
        out,
        "\nMemory saved if every plan were applied (used_memory before, after, saved; the MEMORY USAGE sums' saving):"
    );
    let _ = writeln!(
        out,
        "  {:<24} {:>5} {:>12} {:>12} {:>12} {:>13}",
        "namespace", "plans", "before", "after", "saved", "MEMORY USAGE"
    );
    for t in &plans.namespaces {
        totals_line(&mut out, t);
    }
    totals_line(&mut out, &plans.total);
    out
}
