//! The `plans` section (docs/advisor.md): one row per split plan, its
//! details (key names, hash-tag variant, latency, migration) folded below.

use std::io::{self, Write};

use rdblens_advice::{Plan, PlanKind, Plans};
use rdblens_report::ReportJson;

use crate::escape::{html, key_text};
use crate::page::{bytes, count, part, section, Part};

fn saved(n: i64) -> String {
    if n < 0 {
        format!("costs {}", bytes(n.unsigned_abs()))
    } else {
        format!("saves {}", bytes(n as u64))
    }
}

/// The fullest bucket: at 99 % where a hash fills them, exact for ranges.
fn fullest(plan: &Plan) -> String {
    let max = count(plan.max_per_bucket);
    if plan.scheme.fills_by_hash() {
        format!("fullest {max} at 99 %")
    } else {
        // Ranges, parts and score ranges are cut to their size.
        format!("at most {max}")
    }
}

pub fn plans<'a>(m: &'a ReportJson<'a>) -> Option<Part<'a>> {
    let p = m.plans.as_ref()?;
    Some(part("plans", "Split plans", move |w| {
        section(
            w,
            "plans",
            "Split plans",
            "For every big key at warn or crit and every sprawling namespace: buckets, key names, memory before and after on the target server (the memory model's estimate: used_memory, what the host sees, and the keys' MEMORY USAGE), migration steps (docs/advisor.md).",
            |w| plans_body(p, w),
        )
    }))
}

fn plans_body(p: &Plans, w: &mut dyn Write) -> io::Result<()> {
    let total = &p.total;
    write!(
        w,
        "<p class=\"facts\">{} plans for {}, jemalloc quantum {}: used_memory {} → {}, {} <span class=\"muted\">(what the host sees; the keys' MEMORY USAGE {} → {}, {})</span></p><ul class=\"findings\">",
        count(p.plans.len() as u64),
        html(&p.target),
        p.jemalloc_quantum,
        bytes(total.used_memory_before),
        bytes(total.used_memory_after),
        saved(total.saved),
        bytes(total.memory_before),
        bytes(total.memory_after),
        saved(total.memory_usage_saved)
    )?;
    for plan in &p.plans {
        plan_item(plan, w)?;
    }
    w.write_all(b"</ul>")?;
    if p.plans.is_empty() {
        w.write_all(b"<p>No big key at warn or crit and no small-key sprawl: nothing to split.</p>")?;
    }
    Ok(())
}

fn plan_item(plan: &Plan, w: &mut dyn Write) -> io::Result<()> {
    let what = match (plan.kind, &plan.key) {
        (PlanKind::Key, Some(key)) => format!("<code class=\"scope\">{}</code>", html(&key_text(key))),
        (PlanKind::Key, None) => "<code class=\"scope\">?</code>".to_string(),
        (PlanKind::Namespace, _) => {
            format!("namespace <code class=\"scope\">{}</code>", html(&plan.namespace))
        }
    };
    let steps: String = plan
        .migration
        .iter()
        .map(|m| format!("<li>{}</li>", html(m)))
        .collect();
    let note = plan
        .note
        .as_ref()
        .map(|n| format!("<p class=\"advice\">{}</p>", html(n)))
        .unwrap_or_default();
    let alternative = plan
        .alternative
        .as_ref()
        .map(|a| format!("<p class=\"advice\">Or: {}</p>", html(a)))
        .unwrap_or_default();
    write!(
        w,
        "<li><details><summary><span class=\"pill {sev}\">{sev}</span> {what} {type_} → {scheme}: {n} keys <code>{pattern}</code>, {enc}, used_memory {before} → {after} <span class=\"muted\">{saved}</span></summary>\
         <p>{by}; ~{per} per key ({max}) under {limit} {limit_v}, {headroom:.0}% growth headroom.</p>\
         <p>used_memory (what the host sees): {before} → {after}, {saved}. The keys' MEMORY USAGE (what the server reports per key): {usage_before} → {usage_after}, {usage_saved}.</p>{note}{alternative}\
         <p>Hash tag: <code>{tag}</code>: {tag_cost}</p><p>{latency}</p><ol>{steps}</ol></details></li>",
        sev = html(plan.severity.name()),
        type_ = html(&format!("{} {}", plan.type_name, plan.encoding_before)),
        scheme = html(plan.scheme.name()),
        n = count(plan.buckets),
        pattern = html(&plan.key_pattern),
        enc = html(&plan.encoding_after),
        before = bytes(plan.used_memory_before),
        after = bytes(plan.used_memory_after),
        saved = saved(plan.saved),
        usage_before = bytes(plan.memory_before),
        usage_after = bytes(plan.memory_after),
        usage_saved = saved(plan.memory_usage_saved),
        by = html(&plan.bucket_by),
        per = count(plan.per_bucket),
        max = fullest(plan),
        limit = html(&plan.limit.name),
        limit_v = count(plan.limit.value),
        headroom = plan.headroom * 100.0,
        tag = html(&plan.hash_tag_pattern),
        tag_cost = html(&plan.hash_tag_cost),
        latency = html(&plan.latency),
    )
}
