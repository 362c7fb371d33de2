//! The `plans` section (docs/advisor.md): one row per split plan, its
//! details (key names, hash-tag variant, latency, migration) folded below.

use serde_json::Value;

use crate::escape::{html, key_text};
use crate::page::{arr, bytes, count, i, s, section, u};

fn saved(n: i64) -> String {
    if n < 0 {
        format!("costs {}", bytes(n.unsigned_abs()))
    } else {
        format!("saves {}", bytes(n as u64))
    }
}

/// The fullest bucket: at 99 % where a hash fills them, exact for ranges.
fn fullest(plan: &Value) -> String {
    let max = count(u(plan, "max_per_bucket"));
    match s(plan, "scheme") {
        "hash-buckets" | "stream-split" | "namespace-hashes" => format!("fullest {max} at 99 %"),
        // Ranges, parts and score ranges are cut to their size.
        _ => format!("at most {max}"),
    }
}

pub fn plans(d: &Value) -> Option<String> {
    let p = d.get("plans")?;
    let plans = arr(p, "plans");
    let total = &p["total"];
    let mut out = format!(
        "<p class=\"facts\">{} plans for {}, jemalloc quantum {}: used_memory {} → {}, {} <span class=\"muted\">(what the host sees; the keys' MEMORY USAGE {} → {}, {})</span></p><ul class=\"findings\">",
        count(plans.len() as u64),
        html(s(p, "target")),
        u(p, "jemalloc_quantum"),
        bytes(u(total, "used_memory_before")),
        bytes(u(total, "used_memory_after")),
        saved(i(total, "saved")),
        bytes(u(total, "memory_before")),
        bytes(u(total, "memory_after")),
        saved(i(total, "memory_usage_saved"))
    );
    for plan in plans {
        let what = if s(plan, "kind") == "key" {
            format!("<code class=\"scope\">{}</code>", html(&key_text(plan)))
        } else {
            format!(
                "namespace <code class=\"scope\">{}</code>",
                html(s(plan, "namespace"))
            )
        };
        let steps: String = arr(plan, "migration")
            .iter()
            .filter_map(Value::as_str)
            .map(|m| format!("<li>{}</li>", html(m)))
            .collect();
        let note = plan
            .get("note")
            .and_then(Value::as_str)
            .map(|n| format!("<p class=\"advice\">{}</p>", html(n)))
            .unwrap_or_default();
        let alternative = plan
            .get("alternative")
            .and_then(Value::as_str)
            .map(|a| format!("<p class=\"advice\">Or: {}</p>", html(a)))
            .unwrap_or_default();
        out.push_str(&format!(
            "<li><details><summary><span class=\"pill {sev}\">{sev}</span> {what} {type_} → {scheme}: {n} keys <code>{pattern}</code>, {enc}, used_memory {before} → {after} <span class=\"muted\">{saved}</span></summary>\
             <p>{by}; ~{per} per key ({max}) under {limit} {limit_v}, {headroom:.0}% growth headroom.</p>\
             <p>used_memory (what the host sees): {before} → {after}, {saved}. The keys' MEMORY USAGE (what the server reports per key): {usage_before} → {usage_after}, {usage_saved}.</p>{note}{alternative}\
             <p>Hash tag: <code>{tag}</code>: {tag_cost}</p><p>{latency}</p><ol>{steps}</ol></details></li>",
            sev = html(s(plan, "severity")),
            type_ = html(&format!("{} {}", s(plan, "type"), s(plan, "encoding_before"))),
            scheme = html(s(plan, "scheme")),
            n = count(u(plan, "buckets")),
            pattern = html(s(plan, "key_pattern")),
            enc = html(s(plan, "encoding_after")),
            before = bytes(u(plan, "used_memory_before")),
            after = bytes(u(plan, "used_memory_after")),
            saved = saved(i(plan, "saved")),
            usage_before = bytes(u(plan, "memory_before")),
            usage_after = bytes(u(plan, "memory_after")),
            usage_saved = saved(i(plan, "memory_usage_saved")),
            by = html(s(plan, "bucket_by")),
            per = count(u(plan, "per_bucket")),
            max = fullest(plan),
            limit = html(s(&plan["limit"], "name")),
            limit_v = count(u(&plan["limit"], "value")),
            headroom = plan["headroom"].as_f64().unwrap_or(0.0) * 100.0,
            tag = html(s(plan, "hash_tag_pattern")),
            tag_cost = html(s(plan, "hash_tag_cost")),
            latency = html(s(plan, "latency")),
        ));
    }
    out.push_str("</ul>");
    if plans.is_empty() {
        out.push_str("<p>No big key at warn or crit and no small-key sprawl: nothing to split.</p>");
    }
    Some(section(
        "plans",
        "Split plans",
        "For every big key at warn or crit and every sprawling namespace: buckets, key names, memory before and after on the target server (the memory model's estimate: used_memory, what the host sees, and the keys' MEMORY USAGE), migration steps (docs/advisor.md).",
        &out,
    ))
}
