//! Shared by the savings tests: estimates for the fixtures that carry a
//! real server's measurement in their meta.json.

use std::path::Path;

use rdblens_engine::analyze_bytes;
use rdblens_summary::rules::RuleId;
use rdblens_summary::Options;
use serde_json::Value;

/// The fixtures with a `savings` measurement.
pub const SAVINGS_FIXTURES: [&str; 4] = ["encoding", "sprawl", "expired", "cold"];

/// (rule, estimated bytes, real bytes) for `dir/name.rdb`, analysed with the
/// quantum and `--set` overrides its meta.json records.
pub fn estimate_and_real(dir: &Path, name: &str) -> (RuleId, f64, f64) {
    let path = dir.join(format!("{name}.rdb"));
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(path.with_extension("meta.json")).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    let s = &meta["savings"];
    let rule = RuleId::parse(s["rule"].as_str().unwrap_or_default())
        .unwrap_or_else(|| panic!("{name}: no savings rule in the meta.json"));
    let real = s["real_bytes"].as_u64().unwrap_or_default() as f64;
    let sets: Vec<String> = meta["set"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
        .unwrap_or_default();
    let opts = Options {
        rules: rdblens_audit::load(None, &[], &sets).unwrap_or_else(|e| panic!("{e}")),
        quantum: meta["jemalloc_quantum"].as_u64(),
        ..Options::default()
    };
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let summary = analyze_bytes(&data, name, &opts).unwrap_or_else(|e| panic!("{e}"));
    let audit = rdblens_audit::audit(&summary);
    let est = audit
        .rules
        .iter()
        .find(|r| r.rule == rule)
        .and_then(|r| r.savings)
        .unwrap_or_default() as f64;
    (rule, est, real)
}

/// Checks every savings fixture in `dir`; the error must be within 15%.
pub fn check_savings(dir: &Path) {
    for name in SAVINGS_FIXTURES {
        let (rule, est, real) = estimate_and_real(dir, name);
        let err = (est - real) / real;
        println!(
            "{name}: {rule} estimated {est} real {real} error {:+.1}%",
            err * 100.0
        );
        assert!(err.abs() <= 0.15, "{name}: {rule} estimated {est}, real {real}");
    }
}
