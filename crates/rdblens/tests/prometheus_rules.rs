//! The example alert rules (examples/prometheus/rdblens-alerts.yml, in
//! docs/monitoring.md): `promtool check rules` accepts them and `promtool
//! test rules` passes their test series (rdblens-alerts.test.yml), and the
//! metrics they read are the ones `report --format prometheus` writes.
//!
//! Needs `promtool` (Debian package `prometheus`; `.ci/run` installs it,
//! `RDBLENS_PROMTOOL` names another). Without it the test says so and
//! passes, except under CI (`CI` set), where it fails.

mod support;

use std::path::PathBuf;
use std::process::Command;

use support::{rdblens, root, ALL_TYPES};

fn examples() -> PathBuf {
    root().join("examples/prometheus")
}

#[test]
fn example_alert_rules_pass_promtool() {
    let Some(promtool) = support::promtool("example_alert_rules_pass_promtool") else {
        return;
    };
    for (args, expected) in [
        (["check", "rules", "rdblens-alerts.yml"], "SUCCESS: 8 rules found"),
        (["test", "rules", "rdblens-alerts.test.yml"], "SUCCESS"),
    ] {
        let out = Command::new(&promtool)
            .args(args)
            .current_dir(examples())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "promtool {args:?}:\n{said}");
        assert!(said.contains(expected), "promtool {args:?}:\n{said}");
    }
}

#[test]
fn the_rules_read_metrics_that_rdblens_writes() {
    let rules = std::fs::read_to_string(examples().join("rdblens-alerts.yml")).unwrap();
    let out = rdblens()
        .args(["report", "--format", "prometheus", "-q", ALL_TYPES])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let mut metrics = String::from_utf8(out).unwrap();
    // The growth rule reads what `diff --format prometheus` writes.
    let diff = rdblens()
        .args(["diff", "--format", "prometheus", "-q"])
        .args(["fixtures/growth/before.rdb", "fixtures/growth/after.rdb"])
        .args(["--fail-on-growth", "total=10%"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    metrics.push_str(&String::from_utf8(diff).unwrap());
    let mut read = Vec::new();
    for word in rules.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if word.starts_with("rdblens_") && !read.contains(&word) {
            read.push(word);
        }
    }
    assert_eq!(read.len(), 7, "{read:?}");
    for name in read {
        assert!(
            metrics.contains(&format!("\n# TYPE {name} gauge\n")),
            "the rules read {name}, which the metrics do not have"
        );
    }
}
