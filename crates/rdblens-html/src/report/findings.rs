//! The findings section: rule violations grouped by rule, the first
//! few listed and the rest folded, with each rule's scope and settings.

use std::io::{self, Write};

use rdblens_audit::{Audit, Finding, Scope, Severity};
use rdblens_report::ReportJson;

use crate::escape::{html, key_text};
use crate::page::{bytes, count, part, section, Part};

/// Findings listed per rule before the rest are folded.
const FINDINGS_SHOWN: usize = 5;

pub(super) fn findings<'a>(m: &'a ReportJson<'a>) -> Option<Part<'a>> {
    let audit = m.findings()?;
    Some(part("findings", "Findings", move |w| {
        section(
            w,
            "findings",
            "Findings",
            "The design-rule audit (docs/audit.md), grouped by rule, most severe first, with what to do about them.",
            |w| findings_body(audit, w),
        )
    }))
}

fn findings_body(audit: &Audit, w: &mut dyn Write) -> io::Result<()> {
    let counts = &audit.counts;
    write!(
        w,
        "<p class=\"facts\"><span class=\"pill crit\">{} crit</span> <span class=\"pill warn\">{} warn</span> <span class=\"pill info\">{} info</span></p>",
        count(counts.crit),
        count(counts.warn),
        count(counts.info)
    )?;
    // Rules in the order of their most severe finding (findings come most
    // severe first); warn and crit rules open, info rules folded.
    let mut rules = Vec::new();
    for f in &audit.findings {
        if !rules.contains(&f.rule) {
            rules.push(f.rule);
        }
    }
    if rules.is_empty() {
        return w.write_all(b"<p>No rule found anything.</p>");
    }
    for rule in rules {
        let of_rule: Vec<&Finding> = audit.findings.iter().filter(|f| f.rule == rule).collect();
        let Some(first) = of_rule.first() else { continue };
        let summary = audit.rules.iter().find(|r| r.rule == rule);
        let worst = first.severity.name();
        let advice = match summary.map(|s| s.advice.as_str()) {
            Some(a) if !a.is_empty() => a,
            _ => first.advice.as_str(),
        };
        let omitted = summary.map_or(0, |s| s.omitted);
        write!(
            w,
            "<details class=\"rule print-open\"{}><summary><span class=\"pill {worst}\">{worst}</span> <b>{}</b> <span class=\"muted\">{} finding{}{}</span></summary>",
            if first.severity == Severity::Info { "" } else { " open" },
            html(rule.name()),
            of_rule.len(),
            if of_rule.len() == 1 { "" } else { "s" },
            if omitted > 0 {
                format!(", {} more not listed", count(omitted))
            } else {
                String::new()
            }
        )?;
        if !advice.is_empty() {
            write!(w, "<p class=\"advice\">{}</p>", html(advice))?;
        }
        w.write_all(b"<ul class=\"findings\">")?;
        for (n, f) in of_rule.iter().enumerate() {
            if n == FINDINGS_SHOWN {
                write!(
                    w,
                    "</ul><details class=\"more print-open\"><summary>{} more</summary><ul class=\"findings\">",
                    of_rule.len() - n
                )?;
            }
            finding(f, w)?;
        }
        w.write_all(if of_rule.len() > FINDINGS_SHOWN {
            b"</ul></details></details>"
        } else {
            b"</ul></details>"
        })?;
    }
    Ok(())
}

/// One finding as a list item.
fn finding(f: &Finding, w: &mut dyn Write) -> io::Result<()> {
    let mut extra = Vec::new();
    if f.keys > 0 {
        extra.push(format!("{} keys", count(f.keys)));
    }
    if f.memory > 0 {
        extra.push(bytes(f.memory));
    }
    if let Some(saves) = f.savings {
        extra.push(format!("saves ~{}", bytes(saves)));
    }
    let examples: Vec<String> = f
        .examples
        .iter()
        .take(5)
        .map(|e| format!("<code>{}</code>", html(&key_text(&e.key))))
        .collect();
    let config = f
        .config
        .as_ref()
        .map(|c| format!("<div class=\"config\">{}</div>", html(c)))
        .unwrap_or_default();
    write!(
        w,
        "<li><span class=\"pill {sev}\">{sev}</span> {scope}{msg} <span class=\"muted\">{extra}</span>{ex}{config}</li>",
        sev = html(f.severity.name()),
        scope = scope_html(&f.scope),
        msg = html(&f.message),
        extra = html(&extra.join(" · ")),
        ex = if examples.is_empty() {
            String::new()
        } else {
            format!("<div class=\"examples\">{}</div>", examples.join(" "))
        },
    )
}

/// The key a finding is about, before its message.
fn scope_html(scope: &Scope) -> String {
    match scope {
        Scope::Key { key, .. } => format!("<code class=\"scope\">{}</code> ", html(&key_text(key))),
        // The messages of the other scopes name what they are about.
        Scope::Namespace { .. }
        | Scope::Window { .. }
        | Scope::Slot { .. }
        | Scope::Database { .. }
        | Scope::Global => String::new(),
    }
}
