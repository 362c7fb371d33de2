//! `rdblens report` and the design-rule audit: the findings section in
//! tables and JSON, `--rules`, `--set`, `--config` (lazyfree-lazy-expire)
//! and the `--fail-on` exit codes.

mod support;

use predicates::prelude::*;
use predicates::str::contains;
use serde_json::Value;
use support::{rdblens, ALL_TYPES};

const CLEAN: &str = "fixtures/rules/clean.rdb";
const BIGKEYS: &str = "fixtures/rules/bigkeys.rdb";
const HASHTAG: &str = "fixtures/rules/hashtag.rdb";

fn report_json(args: &[&str]) -> Value {
    let out = rdblens()
        .arg("report")
        .args(args)
        .args(["--format", "json", "--section", "findings"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap_or(Value::Null)
}

fn rule<'v>(j: &'v Value, id: &str) -> &'v Value {
    j["audit"]["rules"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["rule"] == id))
        .unwrap_or(&Value::Null)
}

#[test]
fn findings_in_json() {
    let j = report_json(&[BIGKEYS]);
    let f = &j["findings"];
    assert_eq!(f[0]["rule"], "big-collection");
    assert_eq!(f[0]["severity"], "crit");
    assert_eq!(f[0]["scope"]["kind"], "key");
    assert_eq!(f[0]["scope"]["key"], "big:set:members");
    assert_eq!(
        f[0]["measured"],
        serde_json::json!({"value": 12000, "unit": "elements"})
    );
    assert_eq!(
        f[0]["threshold"],
        serde_json::json!({"value": 10000, "unit": "elements"})
    );
    assert!(f[0]["advice"].as_str().is_some_and(|a| !a.is_empty()));
    assert_eq!(j["audit"]["counts"]["crit"], 1);
    assert_eq!(j["audit"]["rules"].as_array().map(Vec::len), Some(21));
    // Without the section, neither field.
    let out = rdblens()
        .args(["report", BIGKEYS, "--format", "json", "--section", "ttl"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let j: Value = serde_json::from_slice(&out).unwrap_or(Value::Null);
    assert!(j.get("findings").is_none() && j.get("audit").is_none());
}

#[test]
fn findings_in_the_table() {
    rdblens()
        .args(["report", HASHTAG, "--section", "findings"])
        .assert()
        .success()
        .stdout(contains("== Findings (0 crit, 1 warn, 1 info) =="))
        .stdout(contains("slot 6905 {shop42}"))
        .stdout(contains("== Rules =="))
        .stdout(contains("- hashtag-skew: Spread the keys"));
    rdblens()
        .args(["report", CLEAN, "--section", "findings"])
        .assert()
        .success()
        .stdout(contains("no findings"));
}

#[test]
fn rules_file_and_set_flags() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "cap = 1\n[big-string]\nwarn = \"20KiB\"\n[key-chars]\nenabled = false\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let rules = rules.to_string_lossy().to_string();
    let j = report_json(&[ALL_TYPES, "--rules", &rules, "--set", "big-string.cap=5"]);
    let big = rule(&j, "big-string");
    assert_eq!(
        (big["listed"].as_u64(), big["counts"]["warn"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(rule(&j, "key-chars")["enabled"], false);
    let miss = rule(&j, "encoding-miss");
    assert_eq!(
        (miss["listed"].as_u64(), miss["omitted"].as_u64()),
        (Some(1), Some(16))
    );
    let findings = j["findings"].as_array().map(Vec::len).unwrap_or_default();
    assert!(findings <= 21 + 4, "{findings}");
}

#[test]
fn fail_on_exit_codes() {
    rdblens()
        .args(["report", CLEAN, "--fail-on", "warn", "--section", "findings"])
        .assert()
        .code(0);
    rdblens()
        .args(["report", BIGKEYS, "--fail-on", "warn", "--section", "findings"])
        .assert()
        .code(1)
        .stderr(contains(
            "--fail-on warn: the audit found 1 crit and 8 warn findings",
        ));
    rdblens()
        .args(["report", BIGKEYS, "--fail-on", "crit", "--section", "ttl"])
        .assert()
        .code(1);
    rdblens()
        .args(["report", HASHTAG, "--fail-on", "crit"])
        .assert()
        .code(0);
    // Whatever the output, the gate reads the audit the run made.
    for output in [
        ["--format", "json"],
        ["--format", "html"],
        ["--summary-only", "--quiet"],
    ] {
        rdblens()
            .args(["report", BIGKEYS, "--fail-on", "crit", "--section", "ttl"])
            .args(output)
            .assert()
            .code(1)
            .stderr(contains(
                "--fail-on crit: the audit found 1 crit and 8 warn findings",
            ));
    }
    // Raising the threshold clears the gate; disabling the rule too.
    rdblens()
        .args([
            "report",
            BIGKEYS,
            "--fail-on",
            "crit",
            "--set",
            "big-collection.crit=20000",
        ])
        .assert()
        .code(0);
    // A severity override can make a finding fail the gate.
    rdblens()
        .args([
            "report",
            HASHTAG,
            "--fail-on",
            "crit",
            "--set",
            "hashtag-skew.severity=crit",
        ])
        .assert()
        .code(1);
}

#[test]
fn lazyfree_from_the_redis_conf() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let conf = dir.path().join("redis.conf");
    std::fs::write(&conf, "lazyfree-lazy-expire yes\nhash-max-listpack-entries 512\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let conf = conf.to_string_lossy().to_string();
    let j = report_json(&[BIGKEYS, "--config", &conf]);
    let sev: Vec<_> = j["findings"]
        .as_array()
        .map(|f| {
            f.iter()
                .filter(|f| f["rule"] == "bigkey-expiry")
                .map(|f| f["severity"].clone())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(sev, vec!["info", "info"]);
}

#[test]
fn bad_rule_settings_are_usage_errors() {
    for (args, message) in [
        (
            &["--set", "big-strng.warn=1"][..],
            "unknown rule 'big-strng' (did you mean 'big-string'?)",
        ),
        (
            &["--set", "big-string.wrn=1"][..],
            "rule 'big-string': unknown field `wrn`",
        ),
        (&["--set", "big-string.warn=lots"][..], "\"lots\" is not a size"),
        (&["--set", "big-string"][..], "expected rule.field=value"),
        (
            &["--rules", "/nonexistent/rules.toml"][..],
            "cannot read rules file",
        ),
    ] {
        rdblens()
            .args(["report", CLEAN])
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(message));
    }
}

/// Every kind of scope, quantity and rule summary, against the schema
/// (tests/schema.rs covers the corpus; these dumps have the other scopes).
#[test]
fn the_rule_fixtures_validate_against_the_schema() {
    let text = std::fs::read_to_string(support::root().join("docs/report.schema.json")).unwrap_or_default();
    let schema: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let v = jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{e}"));
    let mut kinds = std::collections::BTreeSet::new();
    for name in [
        "bigkeys", "clean", "cold", "encoding", "expired", "expiry", "hashtag", "sprawl",
    ] {
        let path = format!("fixtures/rules/{name}.rdb");
        let doc = report_json(&[&path, "--set", "small-key-sprawl.min-keys=1000", "--top", "3"]);
        let errors: Vec<String> = v
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        for f in doc["findings"].as_array().into_iter().flatten() {
            kinds.insert(f["scope"]["kind"].as_str().unwrap_or_default().to_string());
        }
    }
    let kinds: Vec<_> = kinds.iter().map(String::as_str).collect();
    assert_eq!(kinds, ["global", "key", "namespace", "slot", "window"]);
    // A broken finding is refused.
    let mut doc = report_json(&[HASHTAG]);
    doc["findings"][0]["scope"]["slot"] = Value::from(99_999);
    assert!(!v.is_valid(&doc));
}

/// Expiry times are whatever the file says: the extremes of i64 must not
/// overflow the histogram, the cluster detector or the audit's windows.
#[test]
fn extreme_expiry_times_do_not_panic() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("extreme.rdb");
    let data = support::RdbBuilder::new()
        .string(b"a:max", b"1", Some(i64::MAX))
        .string(b"a:min", b"1", Some(i64::MIN))
        .string(b"a:zero", b"1", Some(0))
        .finish();
    std::fs::write(&path, data).unwrap_or_else(|e| panic!("{e}"));
    let path = path.to_string_lossy().to_string();
    for bucket in ["auto", "1s"] {
        rdblens()
            .args(["report", &path, "--bucket", bucket])
            .args([
                "--set",
                "expiry-cluster.second-keys=0",
                "--set",
                "expiry-cluster.second-share=0",
            ])
            .assert()
            .code(0)
            .stdout(contains("expired-in-snapshot"));
    }
}

/// A dump without hash tags whose five biggest keys each share a slot with
/// a small key: five hashtag-skew warnings, each naming its big key and
/// pointing to the split plan; no advice about hash tags anywhere.
#[test]
fn slot_skew_without_hash_tags_blames_the_big_keys() {
    use rdblens_summary::slot::key_slot;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("big-keys.rdb");
    let mut rdb = support::RdbBuilder::new();
    let small: Vec<Vec<u8>> = (0..300).map(|i| format!("user:{i}").into_bytes()).collect();
    let mut big_names = Vec::new();
    for neighbour in small.iter().take(5) {
        // A `feed:N` name in the same slot as the small key.
        let slot = key_slot(neighbour);
        let name = (0..)
            .map(|n| format!("feed:{n}"))
            .find(|k| key_slot(k.as_bytes()) == slot)
            .unwrap_or_default();
        rdb = rdb.string(name.as_bytes(), &vec![b'x'; 20_000], None);
        big_names.push((slot, name));
    }
    for k in &small {
        rdb = rdb.string(k, b"v", None);
    }
    std::fs::write(&path, rdb.finish()).unwrap_or_else(|e| panic!("{e}"));
    let path = path.to_string_lossy().to_string();
    let j = report_json(&[&path]);
    let mut skew: Vec<(u64, String, String)> = j["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["rule"] == "hashtag-skew")
        .map(|f| {
            assert_eq!(f["scope"]["hash_tag"], Value::Null);
            assert_eq!(f["keys"], 2);
            assert_eq!(
                f["advice"],
                "One big key makes this slot hot, not a hash tag: split it into buckets without a hash tag, which spread over the slots (`rdblens advise` gives its split plan); one slot lives on one shard, which runs hot and full."
            );
            (
                f["scope"]["slot"].as_u64().unwrap_or(0),
                f["examples"][0]["key"].as_str().unwrap_or("").to_string(),
                f["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    skew.sort();
    big_names.sort();
    let named: Vec<(u64, String)> = skew.iter().map(|(s, k, _)| (*s, k.clone())).collect();
    let expected: Vec<(u64, String)> = big_names
        .iter()
        .map(|(s, k)| (u64::from(*s), k.clone()))
        .collect();
    assert_eq!(named, expected);
    for (_, key, message) in &skew {
        assert!(
            message.contains(&format!("; the key {key} alone holds "))
                && message.ends_with(", a big key, not a hash tag"),
            "{message}"
        );
    }
    assert_eq!(
        rule(&j, "hashtag-skew")["advice"],
        "One big key makes this slot hot, not a hash tag: split it into buckets without a hash tag, which spread over the slots (`rdblens advise` gives its split plan); one slot lives on one shard, which runs hot and full."
    );
    // The plans the advice points to: one per big key.
    let out = rdblens()
        .args(["advise", &path, "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let plans: Value = serde_json::from_slice(&out).unwrap_or(Value::Null);
    let text = plans.to_string();
    for (_, key) in &big_names {
        assert!(text.contains(&format!("\"{key}\"")), "no plan for {key}: {text}");
    }
    // The table names no hash-tag advice.
    rdblens()
        .args(["report", &path, "--section", "findings"])
        .assert()
        .success()
        .stdout(contains("hashtag-skew").and(contains("Spread").not()));
}
