//! Writes the accuracy record of the memory model against every fixture
//! oracle, as the markdown of docs/memory-model-accuracy.md (tables only;
//! the prose around them lives in the doc).
//!
//!     cargo run -p rdblens-memory --example accuracy > tables.md
//!     cargo run -p rdblens-memory --example accuracy -- --keys   # per-key misses too

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;

use support::{FixtureResult, Stats};

fn pct(x: f64) -> String {
    format!("{:.2}%", 100.0 * x)
}

fn main() {
    let show_keys = std::env::args().any(|a| a == "--keys");
    let results: Vec<FixtureResult> = support::fixture_files().iter().map(|f| support::run(f)).collect();

    println!("## Summary per fixture\n");
    println!(
        "| fixture | profile | keys | estimated | exact | max abs error | total error | encodings right |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for r in &results {
        let mut s = Stats::default();
        let mut enc_ok = 0;
        for k in &r.keys {
            s.add(k);
            enc_ok += usize::from(k.encoding.as_str() == k.oracle_encoding);
        }
        let (max, total) = if s.estimated > 0 {
            (pct(s.max_abs_error), pct(s.total_error()))
        } else {
            ("–".into(), "–".into())
        };
        println!(
            "| {}/{} | {} q{} | {} | {} | {} | {} | {} | {}/{} |",
            r.folder,
            r.scenario,
            r.profile.name(),
            r.profile.quantum,
            s.keys,
            s.estimated,
            s.exact,
            max,
            total,
            enc_ok,
            s.keys
        );
    }

    println!("\n## Per fixture and encoding\n");
    for r in &results {
        if r.keys.is_empty() {
            continue;
        }
        let mut groups: BTreeMap<String, Stats> = BTreeMap::new();
        for k in &r.keys {
            let label = if k.is_module {
                format!("module ({})", k.kind)
            } else {
                format!("{}/{}", k.kind, k.oracle_encoding)
            };
            groups.entry(label).or_default().add(k);
        }
        println!(
            "### {}/{} ({} q{})\n",
            r.folder,
            r.scenario,
            r.profile.name(),
            r.profile.quantum
        );
        println!("| type/encoding | keys | estimated | exact | max abs error | total error |");
        println!("|---|---:|---:|---:|---:|---:|");
        for (label, s) in &groups {
            let (max, total) = if s.estimated > 0 {
                (pct(s.max_abs_error), pct(s.total_error()))
            } else {
                ("–".into(), "–".into())
            };
            println!(
                "| {label} | {} | {} | {} | {max} | {total} |",
                s.keys, s.estimated, s.exact
            );
        }
        println!();
        if show_keys {
            for k in &r.keys {
                let enc_bad = k.encoding.as_str() != k.oracle_encoding;
                if enc_bad || (!k.exact() && k.memory.is_some() && k.oracle_memory.is_some()) {
                    println!(
                        "    {} {} {}/{} est_enc={} mu={:?} est={:?} err={}",
                        k.label(),
                        k.rdb_type,
                        k.kind,
                        k.oracle_encoding,
                        k.encoding,
                        k.oracle_memory,
                        k.memory,
                        k.error().map(pct).unwrap_or_default()
                    );
                }
            }
            println!();
        }
    }
}
