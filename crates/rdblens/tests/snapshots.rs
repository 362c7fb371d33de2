//! Snapshots (insta) of the outputs on shipped fixtures. Outputs are
//! deterministic: plain tables (stdout is not a terminal), relative fixture
//! paths, a fixed `--now`, and results that do not depend on thread count.
//! The sections are listed explicitly so that new sections do not churn
//! these snapshots. Review changes with `cargo insta review` (or rerun with
//! `INSTA_UPDATE=always` and read the diff).

mod support;

use serde_json::Value;
use support::{rdblens, ALL_TYPES};

const SECTIONS: &str = "bigkeys,encodings,ttl,expiry,keys,prefixes,slots,access";
const NOW: &str = "1800000000";

fn stdout(args: &[&str]) -> String {
    let out = rdblens()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn report_table_all_types() {
    insta::assert_snapshot!(stdout(&[
        "report",
        ALL_TYPES,
        "--now",
        NOW,
        "--section",
        SECTIONS
    ]));
}

#[test]
fn report_table_valkey_sorted_by_elements() {
    insta::assert_snapshot!(stdout(&[
        "report",
        "fixtures/rdb/valkey-9.1.2/all-types.rdb",
        "--now",
        NOW,
        "--top",
        "5",
        "--sort",
        "elements",
        "--section",
        "bigkeys,encodings",
    ]));
}

#[test]
fn report_table_lru_and_lfu() {
    insta::assert_snapshot!(stdout(&[
        "report",
        "fixtures/rdb/redis-6.2.14/lru.rdb",
        "fixtures/rdb/redis-6.2.14/lfu.rdb",
        "--now",
        NOW,
        "--top",
        "5",
        "--section",
        "access,ttl",
    ]));
}

fn json(args: &[&str]) -> String {
    let mut all = vec!["report", "--now", NOW, "--format", "json"];
    all.extend_from_slice(args);
    let mut doc: Value = serde_json::from_str(&stdout(&all)).unwrap();
    // The version changes with every release; the rest must not.
    doc["tool_version"] = Value::String("[version]".into());
    serde_json::to_string_pretty(&doc).unwrap()
}

/// Every section but the namespace tree (its own snapshot, on fewer keys:
/// it is ten TTL buckets per node).
#[test]
fn report_json_all_types() {
    insta::assert_snapshot!(json(&[
        ALL_TYPES,
        "--top",
        "2",
        "--section",
        "bigkeys,encodings,ttl,expiry,keys,slots,access",
    ]));
}

#[test]
fn report_json_prefixes() {
    insta::assert_snapshot!(json(&[ALL_TYPES, "--type", "list", "--section", "prefixes"]));
}

#[test]
fn keys_csv_all_types() {
    insta::assert_snapshot!(stdout(&["keys", ALL_TYPES, "--now", NOW]));
}

#[test]
fn keys_jsonl_valkey_db1() {
    insta::assert_snapshot!(stdout(&[
        "keys",
        "fixtures/rdb/valkey-9.1.2/all-types.rdb",
        "--format",
        "jsonl",
        "--db",
        "1",
        "--now",
        NOW,
    ]));
}

#[test]
fn check_all_types() {
    insta::assert_snapshot!(stdout(&["check", ALL_TYPES]));
}
