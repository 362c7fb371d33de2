//! `rdblens advise`: the split plans alone, the same as the report's
//! `plans` section (docs/advisor.md).

mod support;

use serde_json::Value;
use support::rdblens;

const BIGKEYS: &str = "fixtures/rules/bigkeys.rdb";

fn json_of(out: &std::process::Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn advise_json_is_the_report_plans_section() {
    let advise = json_of(
        &rdblens()
            .args([
                "advise",
                "-q",
                "--format",
                "json",
                "--jemalloc-quantum",
                "16",
                BIGKEYS,
            ])
            .output()
            .unwrap(),
    );
    let report = json_of(
        &rdblens()
            .args([
                "report",
                "-q",
                "--format",
                "json",
                "--jemalloc-quantum",
                "16",
                "--section",
                "plans",
                BIGKEYS,
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(advise, report["plans"]);
    assert_eq!(advise["target"], "redis-7.0.15");
    let plans = advise["plans"].as_array().unwrap();
    assert_eq!(plans.len(), 5);
    let hash = plans.iter().find(|p| p["key"] == "big:hash:fields").unwrap();
    assert_eq!(hash["scheme"], "hash-buckets");
    assert_eq!(hash["buckets"], 17);
    assert_eq!(hash["key_pattern"], "big:hash:fields:<0..16>");
    // Both figures: the change of used_memory and the MEMORY USAGE sums.
    assert_eq!(hash["used_memory_before"], 353_712);
    assert_eq!(hash["used_memory_after"], 67_482);
    assert_eq!(hash["saved"], 353_712 - 67_482);
    assert_eq!(hash["memory_before"], 305_664);
    assert_eq!(hash["memory_after"], 66_386);
    assert_eq!(hash["memory_usage_saved"], 305_664 - 66_386);
    assert_eq!(advise["jemalloc_quantum"], 16);
    assert_eq!(advise["total"]["plans"], 5);
    assert_eq!(advise["total"]["saved"], 283_956);
}

#[test]
fn advise_prints_one_block_per_plan_and_the_totals() {
    let out = rdblens()
        .args(["advise", "-q", "--jemalloc-quantum", "16", BIGKEYS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("hash-buckets: 17 keys big:hash:fields:<0..16>, CRC32 of the field modulo 17"),
        "{text}"
    );
    assert!(text.contains("Never DEL it"), "{text}");
    assert!(text.contains("Memory saved if every plan were applied"), "{text}");
}

#[test]
fn advise_rejects_bad_rule_settings() {
    let out = rdblens()
        .args(["advise", "--set", "no-such-rule.warn=1", BIGKEYS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no-such-rule"),
        "{out:?}"
    );
}
