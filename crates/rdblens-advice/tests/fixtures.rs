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
        .find(|p| {
            p.key.as_ref().map(|k| k.as_bytes()) == Some(key.as_bytes())
                || p.namespace == key && p.key.is_none()
        })
        .unwrap_or_else(|| panic!("no plan for {key}"))
}

/// (key, scheme, N, encoding after, memory before, memory after, saved)
fn brief(p: &Plan) -> (String, Scheme, u64, String, u64, u64, i64) {
    let name = match &p.key {
        Some(k) => String::from_utf8_lossy(k.as_bytes()).into_owned(),
        None => p.namespace.clone(),
    };
    (
        name,
        p.scheme,
        p.buckets,
        p.encoding_after.clone(),
        p.memory_before,
        p.memory_after,
        p.saved,
    )
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
        [
            "big:hash:fields",
            "big:list:blobs",
            "big:list:queue",
            "big:set:members",
            "big:str:json"
        ]
    );
    for key in &wanted {
        let p = plan_for(&plans, key);
        assert!(p.buckets >= 2 && !p.key_pattern.is_empty(), "{key}");
        assert_eq!(p.target, "redis-7.0.15");
    }
    let got: Vec<_> = plans.plans.iter().map(brief).collect();
    let hashtable = || "hashtable".to_string();
    assert_eq!(
        got,
        vec![
            // 12,000 string members: no set listpack on 7.0, so hash-table
            // buckets sized for big-collection (5,000) only.
            (
                s("big:set:members"),
                Scheme::HashBuckets,
                4,
                hashtable(),
                515_200,
                515_586,
                -443
            ),
            // 1,100 elements of ~1 KiB: big by bytes, two ranges.
            (
                s("big:list:blobs"),
                Scheme::ListRanges,
                2,
                s("quicklist"),
                1_293_840,
                1_293_968,
                -147
            ),
            // 6,000 short fields: 17 listpacks of ~353 fields.
            (
                s("big:hash:fields"),
                Scheme::HashBuckets,
                17,
                s("listpack"),
                305_664,
                66_386,
                238_286
            ),
            (
                s("big:list:queue"),
                Scheme::ListRanges,
                2,
                s("quicklist"),
                53_624,
                53_792,
                -187
            ),
            (
                s("big:str:json"),
                Scheme::StringParts,
                3,
                s("raw"),
                20_536,
                21_672,
                -1_260
            ),
        ]
    );
    let set = plan_for(&plans, "big:set:members");
    assert!(set
        .note
        .as_deref()
        .unwrap_or_default()
        .contains("no compact encoding for sets of strings"));
    let hash = plan_for(&plans, "big:hash:fields");
    assert_eq!(
        (
            hash.limit.name.as_str(),
            hash.limit.value,
            hash.per_bucket,
            hash.max_per_bucket
        ),
        ("hash-max-listpack-entries", 512, 353, 413)
    );
    assert_eq!(hash.key_pattern, "big:hash:fields:<0..16>");
    assert_eq!(hash.hash_tag_pattern, "{big:hash:fields}:<0..16>");
    assert!(hash
        .migration
        .iter()
        .any(|m| m.contains("UNLINK") && m.contains("Never DEL")));
    assert_eq!(
        (plans.total.plans, plans.total.saved),
        (5, plans.plans.iter().map(|p| p.saved).sum::<i64>())
    );
    assert_eq!(plans.total.saved, 236_249);
}

#[test]
fn the_sprawl_finding_has_a_plan_close_to_the_measured_savings() {
    let (audit, plans) = run("sprawl", &[]);
    assert!(audit.findings.iter().all(|f| f.rule != RuleId::SmallKeySprawl));
    assert!(plans.plans.is_empty());
    let (audit, plans) = run("sprawl", &["small-key-sprawl.min-keys=1000"]);
    assert!(audit.findings.iter().any(|f| f.rule == RuleId::SmallKeySprawl));
    let p = plan_for(&plans, "sess");
    assert_eq!(
        brief(p),
        (
            s("sess"),
            Scheme::NamespaceHashes,
            100,
            s("listpack"),
            880_000,
            261_496,
            806_604
        )
    );
    assert_eq!((p.keyspace_before, p.keyspace_after), (190_000, 1_900));
    assert_eq!(p.key_pattern, "sess:b:<0..99>");
    assert_eq!((p.per_bucket, p.limit.value), (100, 512));
    assert_eq!(plans.namespaces.len(), 1);
    assert_eq!(plans.namespaces[0].saved, 806_604);
    // fixtures/rules/sprawl.meta.json: used_memory of the 10,000 keys minus
    // that of 100 hashes of ~100 fields, on the real server.
    let real = 827_728.0;
    let err = (p.saved as f64 - real) / real;
    assert!(
        err.abs() < 0.05,
        "saved {} real {real} error {:+.2}%",
        p.saved,
        err * 100.0
    );
}

fn s(v: &str) -> String {
    v.to_string()
}
