//! The findings section: rule violations grouped by rule, the first
//! few listed and the rest folded, with each rule's scope and settings.

use serde_json::Value;

use crate::escape::{html, key_text};
use crate::page::{arr, bytes, count, s, section, u};

/// Findings listed per rule before the rest are folded.
const FINDINGS_SHOWN: usize = 5;

pub(super) fn findings(d: &Value) -> Option<String> {
    let findings = d.get("findings")?.as_array()?;
    let audit = d.get("audit");
    let counts = audit.map(|a| &a["counts"]).unwrap_or(&Value::Null);
    let mut out = format!(
        "<p class=\"facts\"><span class=\"pill crit\">{} crit</span> <span class=\"pill warn\">{} warn</span> <span class=\"pill info\">{} info</span></p>",
        count(u(counts, "crit")),
        count(u(counts, "warn")),
        count(u(counts, "info"))
    );
    // Rules in the order of their most severe finding (findings come most
    // severe first); warn and crit rules open, info rules folded.
    let mut rules: Vec<&str> = Vec::new();
    for f in findings {
        if !rules.contains(&s(f, "rule")) {
            rules.push(s(f, "rule"));
        }
    }
    let any = !rules.is_empty();
    for rule in rules {
        let of_rule: Vec<&Value> = findings.iter().filter(|f| s(f, "rule") == rule).collect();
        let Some(first) = of_rule.first() else { continue };
        let summary = audit
            .and_then(|a| arr(a, "rules").iter().find(|r| s(r, "rule") == rule))
            .cloned()
            .unwrap_or(Value::Null);
        let worst = s(first, "severity");
        let advice = if s(&summary, "advice").is_empty() {
            s(first, "advice")
        } else {
            s(&summary, "advice")
        };
        out.push_str(&format!(
            "<details class=\"rule print-open\"{}><summary><span class=\"pill {worst}\">{worst}</span> <b>{}</b> <span class=\"muted\">{} finding{}{}</span></summary>",
            if worst == "info" { "" } else { " open" },
            html(rule),
            of_rule.len(),
            if of_rule.len() == 1 { "" } else { "s" },
            if u(&summary, "omitted") > 0 {
                format!(", {} more not listed", count(u(&summary, "omitted")))
            } else {
                String::new()
            }
        ));
        if !advice.is_empty() {
            out.push_str(&format!("<p class=\"advice\">{}</p>", html(advice)));
        }
        out.push_str("<ul class=\"findings\">");
        for (n, f) in of_rule.iter().enumerate() {
            if n == FINDINGS_SHOWN {
                out.push_str(&format!(
                    "</ul><details class=\"more print-open\"><summary>{} more</summary><ul class=\"findings\">",
                    of_rule.len() - n
                ));
            }
            let mut extra = Vec::new();
            if u(f, "keys") > 0 {
                extra.push(format!("{} keys", count(u(f, "keys"))));
            }
            if u(f, "memory") > 0 {
                extra.push(bytes(u(f, "memory")));
            }
            if let Some(sv) = f.get("savings").and_then(Value::as_u64) {
                extra.push(format!("saves ~{}", bytes(sv)));
            }
            let examples: Vec<String> = arr(f, "examples")
                .iter()
                .take(5)
                .map(|e| format!("<code>{}</code>", html(&key_text(e))))
                .collect();
            let config = f
                .get("config")
                .filter(|c| !c.is_null())
                .map(|c| format!("<div class=\"config\">{}</div>", html(&config_text(c))))
                .unwrap_or_default();
            out.push_str(&format!(
                "<li><span class=\"pill {sev}\">{sev}</span> {scope}{msg} <span class=\"muted\">{extra}</span>{ex}{config}</li>",
                sev = html(s(f, "severity")),
                scope = scope_html(&f["scope"]),
                msg = html(s(f, "message")),
                extra = html(&extra.join(" · ")),
                ex = if examples.is_empty() { String::new() } else { format!("<div class=\"examples\">{}</div>", examples.join(" ")) },
            ));
        }
        out.push_str(if of_rule.len() > FINDINGS_SHOWN {
            "</ul></details></details>"
        } else {
            "</ul></details>"
        });
    }
    if !any {
        out.push_str("<p>No rule found anything.</p>");
    }
    Some(section(
        "findings",
        "Findings",
        "The design-rule audit (docs/audit.md), grouped by rule, most severe first, with what to do about them.",
        &out,
    ))
}

/// The key a finding is about, before its message.
fn scope_html(scope: &Value) -> String {
    match s(scope, "kind") {
        "key" => format!("<code class=\"scope\">{}</code> ", html(&key_text(scope))),
        // The messages of the other scopes name what they are about.
        _ => String::new(),
    }
}

/// A finding's configuration advice, whatever its shape (text or a list of directives).
fn config_text(c: &Value) -> String {
    match c {
        Value::String(t) => t.clone(),
        Value::Array(items) => items.iter().map(config_text).collect::<Vec<_>>().join("; "),
        other => other.to_string(),
    }
}
