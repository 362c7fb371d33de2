//! The `findings` section: the design-rule audit (rdblens-audit) as
//! tables: the findings grouped by rule (the first `--top` of each and a
//! row for the rest), most severe first, then one row per rule with what
//! the caps left out, and what to do.

use std::fmt::Write;

use comfy_table::Cell;
use rdblens_audit::{Audit, Finding, Scope};
use rdblens_summary::rules::RuleId;

use crate::cells::{cut_middle, heading, key_text, right, table, MIN_TEXT_WIDTH};
use crate::format::{duration, human_bytes, percent, short_key, thousands, utc};
use crate::options::ReportOptions;
use crate::words::{glue_figures, unbreakable};

/// Example keys shown per grouped finding.
const EXAMPLES: usize = 3;

/// Where a finding is, in a few words. On a narrow terminal a key name, a
/// namespace or a hash tag is cut in the middle so that the scope fits the
/// column's minimum width and stays one line (the JSON has them whole).
fn scope_text(s: &Scope, opts: &ReportOptions) -> String {
    let within = |prefix: String, name: String| {
        let room = usize::from(MIN_TEXT_WIDTH).saturating_sub(prefix.chars().count());
        format!("{prefix}{}", unbreakable(opts, cut_middle(opts, name, room)))
    };
    match s {
        Scope::Key { db, key } => within(format!("db{db} "), short_key(key.as_bytes())),
        // Keys without the separator: the marker says it all, and whole.
        Scope::Namespace { namespace } if narrow(opts) && namespace == "(no namespace)" => namespace.clone(),
        Scope::Namespace { namespace } => within("namespace ".into(), namespace.clone()),
        Scope::Window { start_ms, end_ms } => {
            format!(
                "{} UTC +{}",
                utc(*start_ms),
                duration(end_ms.saturating_sub(*start_ms))
            )
        }
        Scope::Slot { slot, hash_tag } => match hash_tag {
            Some(t) => within(format!("slot {slot} "), format!("{{{t}}}")),
            None => format!("slot {slot}"),
        },
        Scope::Database { db } => format!("db{db}"),
        Scope::Global => "keyspace".to_string(),
    }
}

/// A terminal under 120 columns: key names are cut (as `key_text` cuts
/// them) and each finding's rule and scope share a column.
fn narrow(opts: &ReportOptions) -> bool {
    opts.width.is_some_and(|w| w < 120)
}

fn finding_text(f: &Finding, opts: &ReportOptions) -> String {
    let mut t = glue_figures(opts, &f.message);
    if let Some(c) = &f.config {
        let _ = write!(t, "; config: {}", glue_figures(opts, c));
    }
    if !f.examples.is_empty() {
        let shown: Vec<String> = f
            .examples
            .iter()
            .take(EXAMPLES)
            .map(|k| key_text(opts, k.key.as_bytes()))
            .collect();
        let more = f.keys.saturating_sub(shown.len() as u64);
        let _ = write!(t, "; e.g. {}", shown.join(" "));
        if more > 0 {
            let _ = write!(t, " (+{} more)", thousands(more));
        }
    }
    t
}

fn bytes_or_dash(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), human_bytes)
}

/// Renders an audit.
pub(crate) fn render(out: &mut String, a: &Audit, opts: &ReportOptions) {
    let c = &a.counts;
    heading(
        out,
        &format!(
            "Findings ({} crit, {} warn, {} info)",
            thousands(c.crit),
            thousands(c.warn),
            thousands(c.info)
        ),
    );
    if a.findings.is_empty() {
        let _ = writeln!(out, "no findings");
    } else {
        // On a narrow terminal the rule and the scope share a column, one
        // line each: beside them, the finding has room for its longest
        // words (config directives) whole.
        let stacked = narrow(opts);
        let header: &[&str] = if stacked {
            &["severity", "rule / scope", "finding", "memory", "savings"]
        } else {
            &["severity", "rule", "scope", "finding", "memory", "savings"]
        };
        let mut t = table(opts, header);
        let where_cells = |rule: RuleId, scope: String| {
            if stacked {
                vec![Cell::new(format!("{}\n{scope}", rule.name()))]
            } else {
                vec![Cell::new(rule.name()), Cell::new(scope)]
            }
        };
        // Grouped by rule, the rule of the most severe finding first; each
        // rule's first `--top` findings, then one row for the rest (a dump
        // can have tens of thousands of warnings: the JSON lists them all).
        let mut order: Vec<RuleId> = Vec::new();
        for f in &a.findings {
            if !order.contains(&f.rule) {
                order.push(f.rule);
            }
        }
        for rule in order {
            let findings: Vec<&Finding> = a.findings.iter().filter(|f| f.rule == rule).collect();
            let shown = &findings[..findings.len().min(opts.top.max(1))];
            for f in shown {
                let mut row = vec![Cell::new(f.severity.name())];
                row.extend(where_cells(f.rule, scope_text(&f.scope, opts)));
                row.extend([
                    Cell::new(finding_text(f, opts)),
                    right(human_bytes(f.memory)),
                    right(bytes_or_dash(f.savings)),
                ]);
                t.add_row(row);
            }
            let summary = a.rules.iter().find(|r| r.rule == rule);
            let omitted = summary.map_or(0, |r| r.omitted);
            let rest = (findings.len() - shown.len()) as u64 + omitted;
            if rest > 0 {
                let shown_keys: u64 = shown.iter().map(|f| f.keys).sum();
                let shown_memory: u64 = shown.iter().map(|f| f.memory).sum();
                let keys = summary.map_or(0, |r| r.keys).saturating_sub(shown_keys);
                let memory = summary.map_or(0, |r| r.memory).saturating_sub(shown_memory);
                let mut row = vec![Cell::new("")];
                if stacked {
                    row.push(Cell::new(rule.name()));
                } else {
                    row.extend(where_cells(rule, String::new()));
                }
                row.extend([
                    Cell::new(format!(
                        "and {} more {} ({} {})",
                        thousands(rest),
                        if rest == 1 { "finding" } else { "findings" },
                        thousands(keys),
                        if keys == 1 { "key" } else { "keys" }
                    )),
                    right(human_bytes(memory)),
                    Cell::new(""),
                ]);
                t.add_row(row);
            }
        }
        let _ = writeln!(out, "{}", crate::cells::fitted(&mut t, opts));
    }
    rules(out, a, opts);
}

fn rules(out: &mut String, a: &Audit, opts: &ReportOptions) {
    heading(out, "Rules");
    let mut t = table(
        opts,
        &[
            "rule",
            "findings",
            "listed",
            "not listed",
            "keys",
            "memory",
            "savings",
            "thresholds",
        ],
    );
    for r in &a.rules {
        let findings = if r.enabled {
            thousands(r.counts.total())
        } else {
            "off".to_string()
        };
        t.add_row(vec![
            Cell::new(r.rule.name()),
            right(findings),
            right(r.listed),
            right(thousands(r.omitted)),
            right(thousands(r.keys)),
            right(human_bytes(r.memory)),
            right(bytes_or_dash(r.savings)),
            Cell::new(&r.thresholds),
        ]);
    }
    let _ = writeln!(out, "{}", crate::cells::fitted(&mut t, opts));
    let acted: Vec<_> = a
        .rules
        .iter()
        .filter(|r| r.counts.total() > 0 || r.note.is_some())
        .collect();
    if acted.is_empty() {
        return;
    }
    heading(out, "What to do");
    for r in acted {
        if r.counts.total() > 0 {
            let _ = writeln!(out, "- {}: {}", r.rule.name(), r.advice);
        }
        for s in &r.config {
            let _ = writeln!(
                out,
                "  config `{}` makes {} keys compact again, saving {}",
                s.directive,
                thousands(s.keys),
                human_bytes(s.savings)
            );
        }
        if let Some(n) = &r.note {
            let _ = writeln!(out, "  note ({}): {n}", r.rule.name());
        }
        if !r.namespaces.is_empty() && r.counts.total() > 1 {
            let ns: Vec<String> = r
                .namespaces
                .iter()
                .map(|n| {
                    format!(
                        "{} {} ({})",
                        n.namespace,
                        thousands(n.keys),
                        percent(n.keys, r.keys)
                    )
                })
                .collect();
            let _ = writeln!(out, "  where: {}", ns.join(", "));
        }
    }
}

#[cfg(test)]
mod tests {
    use rdblens_audit::{Counts, Quantity, Unit};
    use rdblens_summary::rules::Severity;
    use rdblens_summary::KeyName;

    use super::*;

    const LONG_KEY: &[u8] = b"session:0000d1a8d0c7b848e10081de3091854b:profile:avatar";

    /// One big-string finding on a key with a long name.
    fn audit() -> Audit {
        let finding = Finding {
            rule: RuleId::BigString,
            severity: Severity::Warn,
            scope: Scope::Key {
                db: 0,
                key: KeyName(LONG_KEY.into()),
            },
            message: "string of 20.0 KiB (threshold 10.0 KiB)".into(),
            measured: Quantity::int(20_480, Unit::Bytes),
            threshold: Some(Quantity::int(10_240, Unit::Bytes)),
            keys: 1,
            memory: 24_616,
            savings: None,
            config: None,
            advice: "split the value or compress it".into(),
            examples: Vec::new(),
            more_keys: 0,
            impact: 24_616,
        };
        Audit {
            findings: vec![finding],
            rules: Vec::new(),
            counts: Counts {
                warn: 1,
                ..Counts::default()
            },
        }
    }

    fn rendered(width: Option<u16>) -> String {
        let opts = ReportOptions {
            width,
            ..ReportOptions::default()
        };
        let mut out = String::new();
        render(&mut out, &audit(), &opts);
        out
    }

    /// At 80 columns a long key name in a scope is cut in the middle, the
    /// scope one line under the rule in their shared column; piped, the
    /// name is whole in a column of its own.
    #[test]
    fn a_long_key_scope_is_one_cut_line_at_80_columns() {
        let text = rendered(Some(80));
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        let cells =
            |l: &str| -> Vec<String> { l.split(['│', '┆']).map(|c| c.trim().to_string()).collect() };
        let header = text.lines().find(|l| l.contains("severity")).unwrap_or_default();
        assert_eq!(
            cells(header),
            ["", "severity", "rule / scope", "finding", "memory", "savings", ""],
            "{text}"
        );
        let row: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.contains("big-string"))
            .take_while(|l| l.starts_with('│'))
            .collect();
        assert_eq!(cells(row[0])[2], "big-string", "{text}");
        assert_eq!(cells(row[1])[2], "db0 \"session…e:avatar\"", "{text}");
        assert_eq!(cells(row[1])[2].chars().count(), usize::from(MIN_TEXT_WIDTH));
        // The finding folds onto further lines, the scope does not.
        assert_eq!(row.len(), 3, "{text}");
        assert_eq!(cells(row[2])[2], "", "{text}");

        let piped = rendered(None);
        assert!(
            piped.contains(
                "| warn     | big-string | db0 \"session:0000d1a8d0c7b848e10081de3091854b:profile:avatar\" |"
            ),
            "{piped}"
        );
    }

    /// Namespaces and hash tags are cut like key names; short ones whole.
    #[test]
    fn long_namespaces_and_hash_tags_are_cut_too() {
        let narrow = ReportOptions {
            width: Some(80),
            ..ReportOptions::default()
        };
        let ns = Scope::Namespace {
            namespace: "0000d1a8d0c7b848e10081de3091854b".into(),
        };
        assert_eq!(scope_text(&ns, &narrow), "namespace 0000d…91854b");
        let slot = Scope::Slot {
            slot: 5734,
            hash_tag: Some("tenant-0000d1a8d0c7b848".into()),
        };
        assert_eq!(scope_text(&slot, &narrow), "slot 5734 {tena…7b848}");
        let short = Scope::Namespace {
            namespace: "user".into(),
        };
        assert_eq!(scope_text(&short, &narrow), "namespace user");
        assert_eq!(
            scope_text(&ns, &ReportOptions::default()),
            "namespace 0000d1a8d0c7b848e10081de3091854b"
        );
    }
}
