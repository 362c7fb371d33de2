//! The plans as plain text: one block per plan, then the totals per
//! namespace (used by `rdblens advise` and the report's `plans` section).

use std::fmt::Write;

use rdblens_audit::text::{bytes, count};

use crate::{Plan, PlanKind, Plans, Totals};

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
        "  scheme     {}: {} keys {}, {}",
        p.scheme.name(),
        count(p.buckets),
        p.key_pattern,
        p.bucket_by
    );
    let _ = writeln!(
        out,
        "  buckets    ~{} each (fullest ~{}) under {} {}: {}, {:.0}% growth headroom",
        count(p.per_bucket),
        count(p.max_per_bucket),
        p.limit.name,
        count(p.limit.value),
        p.encoding_after,
        p.headroom * 100.0
    );
    let _ = writeln!(
        out,
        "  memory     {} -> {} (keyspace {} -> {}): {}",
        bytes(p.memory_before),
        bytes(p.memory_after),
        bytes(p.keyspace_before),
        bytes(p.keyspace_after),
        saves(p.saved)
    );
    let _ = writeln!(out, "  hash tag   {}: {}", p.hash_tag_pattern, p.hash_tag_cost);
    if let Some(note) = &p.note {
        let _ = writeln!(out, "  note       {note}");
    }
    let _ = writeln!(out, "  latency    {}", p.latency);
    for (i, step) in p.migration.iter().enumerate() {
        let label = if i == 0 { "migration" } else { "" };
        let _ = writeln!(out, "  {label:<10} {}. {step}", i + 1);
    }
}

fn totals_line(out: &mut String, t: &Totals) {
    let _ = writeln!(
        out,
        "  {:<24} {:>5} {:>12} {:>12} {:>12}",
        t.namespace.as_deref().unwrap_or("(all)"),
        count(t.plans),
        bytes(t.memory_before + t.keyspace_before),
        bytes(t.memory_after + t.keyspace_after),
        signed(t.saved)
    );
}

/// All plans, then the totals.
pub fn render(plans: &Plans) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Split plans for {} ({} plans; memory after is the memory model's estimate for that server)",
        plans.target,
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
        "\nMemory saved if every plan were applied (keyspace overhead included):"
    );
    let _ = writeln!(
        out,
        "  {:<24} {:>5} {:>12} {:>12} {:>12}",
        "namespace", "plans", "before", "after", "saved"
    );
    for t in &plans.namespaces {
        totals_line(&mut out, t);
    }
    totals_line(&mut out, &plans.total);
    out
}
