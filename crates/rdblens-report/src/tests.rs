//! One model, rendered twice: the table and the JSON read the same figures,
//! and the audit runs once per model (counted by `model::AUDITS_RUN`).

use std::cell::Cell;

use rdblens_engine::analyze_bytes;
use rdblens_summary::{Options, Summary};
use serde_json::Value;

use crate::format::{human_bytes, quote_key, thousands};
use crate::model::{AuditWhen, ReportJson, AUDITS_RUN};
use crate::options::ReportOptions;
use crate::section::Section;
use crate::{json, table};

fn analyzed(name: &str) -> Summary {
    let path = format!("{}/../../fixtures/rules/{name}.rdb", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read(&path).expect("the fixture reads"); // ok: unit test
    let opts = Options {
        threads: 1,
        ..Options::default()
    };
    analyze_bytes(&data, name, &opts).expect("the fixture analyses") // ok: unit test
}

/// Two rule fixtures in one summary: expiry clusters, big keys, findings of
/// every severity, two shards.
fn summary() -> Summary {
    let mut s = analyzed("expiry");
    s.merge(analyzed("bigkeys")).expect("the summaries merge"); // ok: unit test
    s
}

fn audits_run() -> usize {
    AUDITS_RUN.with(Cell::get)
}

/// The lines after the heading `== title ==`.
fn after<'t>(text: &'t str, title: &str) -> impl Iterator<Item = &'t str> {
    let heading = format!("== {title} ==");
    text.lines().skip_while(move |l| *l != heading).skip(1)
}

fn u(v: &Value) -> u64 {
    v.as_u64().expect("a number") // ok: unit test
}

#[test]
fn table_and_json_of_one_model_agree() {
    let s = summary();
    let mut opts = ReportOptions::default();
    opts.sections.push(Section::Plans);
    let before = audits_run();
    let model = ReportJson::build(&s, &opts, AuditWhen::Shown);
    let text = table::render(&model);
    let doc: Value = serde_json::from_str(&json::render(&model).expect("serializes")).expect("parses"); // ok: unit test
    assert_eq!(
        audits_run() - before,
        1,
        "one audit for the findings, the plans and both renderers"
    );

    // Totals: 4,000 keys of `expiry` and 8 of `bigkeys`.
    let keys = u(&doc["totals"]["keys"]);
    let memory = u(&doc["totals"]["memory"]);
    assert_eq!(keys, 4_008);
    let overview = text
        .lines()
        .find(|l| l.starts_with("snapshot time"))
        .expect("overview"); // ok: unit test
    assert!(
        overview.contains(&format!("; {} keys, ", thousands(keys))),
        "{overview}"
    );
    assert!(
        overview.contains(&format!("estimated memory {} (", human_bytes(memory))),
        "{overview}"
    );

    // The biggest key: the first row of the first big-key table.
    let top = &doc["top_keys"]["by_memory"][0];
    let name = top["key"].as_str().expect("a UTF-8 key"); // ok: unit test
    let row = after(&text, "Biggest keys by estimated memory")
        .nth(2)
        .expect("a row"); // ok: unit test
    assert!(row.starts_with("|  1 |"), "{row}");
    assert!(row.contains(&quote_key(name.as_bytes())), "{row} lacks {name}");
    assert!(
        row.contains(&format!(" {} |", human_bytes(u(&top["memory"])))),
        "{row}"
    );

    // The first expiry cluster: the 1,200 flash-sale keys.
    let cluster = &doc["expiry"]["clusters"][0];
    assert_eq!(u(&cluster["keys"]), 1_200);
    let line = after(&text, "Expiry clusters").next().expect("a cluster"); // ok: unit test
    assert!(
        line.starts_with(&format!("{} keys, ", thousands(u(&cluster["keys"])))),
        "{line}"
    );
    assert!(line.contains(&human_bytes(u(&cluster["memory"]))), "{line}");

    // Findings: the counts in the heading, one table row per listed finding.
    let c = &doc["audit"]["counts"];
    let listed = doc["findings"].as_array().map_or(0, Vec::len);
    assert!(u(&c["crit"]) >= 1 && u(&c["warn"]) >= 2, "{c}");
    let title = format!(
        "Findings ({} crit, {} warn, {} info)",
        u(&c["crit"]),
        u(&c["warn"]),
        u(&c["info"])
    );
    let rows = after(&text, &title)
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .count();
    assert_eq!(rows, listed);
    assert!(listed >= 3);

    // Shards: one row per file, same share of memory.
    let shards = doc["shards"]["shards"].as_array().expect("shards"); // ok: unit test
    assert_eq!(shards.len(), 2);
    let rows: Vec<&str> = after(&text, "Shards (2 files)").skip(2).take(2).collect();
    for (row, shard) in rows.iter().zip(shards) {
        assert!(
            row.starts_with(&format!("| {}", shard["path"].as_str().unwrap_or("?"))),
            "{row}"
        );
        assert!(
            row.contains(&format!(" {} |", thousands(u(&shard["keys"])))),
            "{row}"
        );
    }
    // The plans come from the same audit.
    assert!(doc["plans"].is_object());
    assert_eq!(model.audit().map(|a| a.findings.len()), Some(listed));
}

#[test]
fn the_audit_runs_once_and_only_when_needed() {
    let s = summary();
    let opts = ReportOptions {
        sections: vec![Section::Ttl],
        ..ReportOptions::default()
    };
    let before = audits_run();
    let model = ReportJson::build(&s, &opts, AuditWhen::Shown);
    let doc = json::render(&model).expect("serializes"); // ok: unit test
    table::render(&model);
    assert_eq!(audits_run(), before, "no section shows the audit");
    assert!(model.audit().is_none());
    assert!(!doc.contains("\"findings\"") && !doc.contains("\"audit\""));

    // For a `--fail-on` gate: run, kept, not shown.
    let model = ReportJson::build(&s, &opts, AuditWhen::Always);
    let doc = json::render(&model).expect("serializes"); // ok: unit test
    let text = table::render(&model);
    assert_eq!(audits_run(), before + 1);
    assert!(!doc.contains("\"findings\"") && !text.contains("== Findings"));
    let audit = model.into_audit().expect("the audit ran"); // ok: unit test
    assert!(audit.fails(rdblens_audit::Severity::Crit));
}

/// The whole report in an 80-column terminal: every table line fits, and
/// the figures of the JSON appear whole in the text (never cut by a wrap).
#[test]
fn every_table_fits_80_columns_with_figures_whole() {
    let s = summary();
    let mut opts = ReportOptions {
        width: Some(80),
        ..ReportOptions::default()
    };
    opts.sections.push(Section::Plans);
    let model = ReportJson::build(&s, &opts, AuditWhen::Shown);
    let text = table::render(&model);
    let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
    assert!(wide.is_empty(), "{} lines over 80 columns: {wide:#?}", wide.len());
    let doc: Value = serde_json::from_str(&json::render(&model).expect("serializes")).expect("parses"); // ok: unit test
    let types = doc["types"].as_array().cloned().unwrap_or_default();
    for t in &types {
        let memory = human_bytes(u(&t["memory"]));
        assert!(text.lines().any(|l| l.contains(&memory)), "{memory} cut:\n{text}");
    }
    // In the top list itself: each key's name, memory and elements on
    // one line of its table.
    let top: Vec<&str> = after(&text, "Biggest keys by estimated memory")
        .take_while(|l| !l.is_empty())
        .collect();
    let keys = doc["top_keys"]["by_memory"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(keys.len() >= 5, "the fixture has a top list");
    for k in keys.iter().take(5) {
        let memory = human_bytes(u(&k["memory"]));
        let elements = thousands(u(&k["elements"]));
        let key = k["key"].as_str().unwrap_or_default();
        assert!(
            top.iter()
                .any(|l| l.contains(&memory) && l.contains(&elements) && l.contains(key)),
            "{memory} {elements} {key} not whole on one line:\n{}",
            top.join("\n")
        );
    }
}

/// The diff in a 60-column terminal: its prose folded at spaces like the
/// report's, its tables fitted; no line over 60 columns, no word split.
#[test]
fn diff_fits_60_columns_without_splitting_words() {
    let old = analyzed("bigkeys");
    let new = summary();
    let opts = ReportOptions {
        width: Some(60),
        ..ReportOptions::default()
    };
    let text = crate::diff::to_table(&old, &new, &opts);
    let piped = crate::diff::to_table(&old, &new, &ReportOptions::default());
    let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 60).collect();
    assert!(wide.is_empty(), "{} lines over 60 columns: {wide:#?}", wide.len());
    // The prose folded at spaces, a figure with its unit, a date with its
    // time; piped, one line each.
    let prose: Vec<&str> = text.lines().take(6).collect();
    assert_eq!(
        prose,
        [
            "old: bigkeys (snapshot 2026-11-21 21:48:37 UTC)",
            "new: expiry, bigkeys (2 files, snapshot",
            "  2026-11-21 21:48:50 UTC)",
            "keys 8 -> 4,008 (+4,000), estimated memory 2.2 MiB ->",
            "  2.4 MiB (+220.3 KiB), serialized 196.5 KiB -> 204.3 KiB",
            "  (+7.8 KiB)",
        ]
    );
    assert_eq!(
        piped.lines().nth(2),
        Some("keys 8 -> 4,008 (+4,000), estimated memory 2.2 MiB -> 2.4 MiB (+220.3 KiB), serialized 196.5 KiB -> 204.3 KiB (+7.8 KiB)")
    );
    // No word split: every word of the narrow text is a word of the
    // piped one (table rules aside), and no line starts with a unit.
    let words = |s: &str| -> std::collections::BTreeSet<String> {
        s.lines()
            .filter(|l| !l.starts_with(['┌', '╞', '└']) && !l.starts_with("|--"))
            .flat_map(|l| l.split(|c: char| c.is_whitespace() || "│┆|".contains(c)))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let whole = words(&piped);
    let split: Vec<String> = words(&text).difference(&whole).cloned().collect();
    assert!(split.is_empty(), "words split: {split:?}\n{text}");
    for l in text.lines() {
        let first = l.split_whitespace().next().unwrap_or_default();
        assert!(
            !["B", "KiB", "MiB", "UTC", "UTC)", "KiB)", "MiB)"].contains(&first),
            "{l}"
        );
    }
    // Every table kept its first column (the group, the prefix, the key).
    for heading in [
        "Databases",
        "Types",
        "Namespaces: largest changes",
        "Keys that became big",
    ] {
        let header = after(&text, heading).nth(1).unwrap_or_default();
        let first = header.split('┆').next().unwrap_or_default();
        assert!(
            ["│ db", "│ type", "│ prefix", "│ by"]
                .iter()
                .any(|h| first.starts_with(h)),
            "{heading}: {header}"
        );
    }
}

#[test]
fn sections_feed_only_the_accumulators_they_read() {
    use rdblens_summary::Accumulators;
    // The default sections read everything between them but the `INFO
    // keysizes` histograms, which `--format info-keysizes` alone reads,
    // and the namespace composition, which its section (only when named)
    // alone reads.
    let default_set = Accumulators {
        keysizes: false,
        composition: false,
        ..Accumulators::ALL
    };
    assert_eq!(Section::accumulators_for(&Section::ALL), default_set);
    let composition = Section::accumulators_for(&[Section::Composition]);
    assert_eq!(
        composition,
        Accumulators {
            composition: true,
            ..Accumulators::NONE
        }
    );
    // The audit reads the top lists by memory (hashtag-skew's big key),
    // not the access lists or limit examples.
    let audit = Accumulators {
        top: true,
        rules: true,
        prefixes: true,
        ttl: true,
        expiry: true,
        slots: true,
        ..Accumulators::NONE
    };
    assert_eq!(Section::accumulators_for(&[Section::Plans]), audit);
    assert_eq!(Section::accumulators_for(&[Section::Findings]), audit);
    let two = Section::accumulators_for(&[Section::Bigkeys, Section::Ttl]);
    let want = Accumulators {
        top: true,
        ttl: true,
        ..Accumulators::NONE
    };
    assert_eq!(two, want);
    // Rule hits serve the audit alone.
    for s in Section::ALL.into_iter().filter(|s| *s != Section::Findings) {
        assert!(!s.accumulators().rules, "{}", s.name());
    }
}
