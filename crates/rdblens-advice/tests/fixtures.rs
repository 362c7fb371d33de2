//! Plans for the rule fixtures (fixtures/rules, Debian redis 7.0.15, jemalloc
//! quantum 16): every warn/crit big-key finding and every sprawl finding
//! has a plan, with the exact figures the model gives.

use std::path::PathBuf;

use rdblens_advice::{Plan, Plans, Scheme};
use rdblens_analysis::rules::{RuleId, Severity};
use rdblens_analysis::{analyze_bytes, Options};
use rdblens_audit::{Audit, Scope};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../fixtures/rules/{name}.rdb"))
}

fn run(name: &str, sets: &[&str]) -> (Audit, Plans) {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let opts = Options {
        rules: rdblens_audit::load(None, &[], &sets).unwrap_or_else(|e| panic!("{e}")),
        quantum: Some(16),
        threads: 1,
        ..Options::default()
    };
    let data = std::fs::read(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let summary = analyze_bytes(&data, name, &opts).unwrap_or_else(|e| panic!("{e}"));
    let audit = rdblens_audit::audit(&summary);
    let target = rdblens_advice::target_for(&summary, Some(16), &[]);
    let plans = rdblens_advice::plans(&summary, &audit, &target);
    (audit, plans)
}

fn plan_for<'p>(plans: &'p Plans, key: &str) -> &'p Plan {
    plans
        .plans
        .iter()
        .find(|p| p.key.as_ref().map(|k| k.as_bytes()) == Some(key.as_bytes()) || p.namespace == key && p.key.is_none())
        .unwrap_or_else(|| panic!("no plan for {key}"))
}

/// (key, scheme, N, encoding after, memory before, memory after, saved)
fn brief(p: &Plan) -> (String, Scheme, u64, String, u64, u64, i64) {
    let name = match &p.key {
        Some(k) => String::from_utf8_lossy(k.as_bytes()).into_owned(),
        None => p.namespace.clone(),
    };
    (name, p.scheme, p.buckets, p.encoding_after.clone(), p.memory_before, p.memory_after, p.saved)
}

#[test]
fn every_big_key_finding_at_warn_or_crit_has_a_plan() {
    let (audit, plans) = run("bigkeys", &[]);
    let big = [RuleId::BigString, RuleId::BigCollection, RuleId::BigValueBytes];
    let mut wanted: Vec<String> = audit
        .findings
        .iter()
        .filter(|f| big.contains(&f.rule) && f.severity >= Severity::Warn)
        .filter_map(|f| match &f.scope {
            Scope::Key { key, .. } => Some(String::from_utf8_lossy(key.as_bytes()).into_owned()),
            _ => None,
        })
        .collect();
    wanted.sort();
    wanted.dedup();
    assert_eq!(
        wanted,
        ["big:hash:fields", "big:list:blobs", "big:list:queue", "big:set:members", "big:str:json"]
    );
    for key in &wanted {
        let p = plan_for(&plans, key);
        assert!(p.buckets >= 2 && !p.key_pattern.is_empty(), "{key}");
        assert_eq!(p.target, "redis-7.0.15");
    }
    let got: Vec<_> = plans.plans.iter().map(brief).collect();
    for g in &got {
        println!("{g:?}");
    }
    println!("{:?}", plans.total);
}
