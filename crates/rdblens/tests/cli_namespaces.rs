//! Namespaces whose second segment is an id (`rate:<IPv4>:n`,
//! `user:<id>:profile`, `sess:<UUID>`) are counted in their first segment,
//! in the namespace tree, the expiry clusters and the diff alike, on a dump
//! Debian's redis-server 7.0.15 wrote (fixtures/namespaces/generate.py).

mod support;

use serde_json::{json, Value};
use support::{rdblens, ALL_TYPES};

const IDS: &str = "fixtures/namespaces/ids.rdb";

fn run_json(args: &[&str]) -> Value {
    let out = rdblens()
        .args(args)
        .args(["--format", "json", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `[prefix, keys, [[child, keys]...]]` per first-level namespace.
fn rows(prefixes: &Value) -> Value {
    let name = |n: &Value| n["prefix"]["key"].clone();
    Value::Array(
        prefixes["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let children: Vec<Value> = n["children"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| json!([name(c), c["keys"]]))
                    .collect();
                json!([name(n), n["keys"], children])
            })
            .collect(),
    )
}

#[test]
fn id_segments_are_counted_in_their_parent_namespace() {
    let expected = json!([
        ["rate", 3020, []],
        ["sess", 1050, []],
        ["user", 500, []],
        ["cache", 20, [["cache:page", 20]]],
    ]);
    for depth in ["1", "2", "4"] {
        let doc = run_json(&["report", IDS, "--section", "prefixes", "--depth", depth]);
        let p = &doc["prefixes"];
        if depth == "1" {
            assert_eq!(
                rows(p),
                json!([
                    ["rate", 3020, []],
                    ["sess", 1050, []],
                    ["user", 500, []],
                    ["cache", 20, []]
                ])
            );
        } else {
            assert_eq!(rows(p), expected, "--depth {depth}");
        }
        assert_eq!(p["folded"], Value::Null);
        assert_eq!(p["no_namespace"]["keys"], 10);
    }
}

#[test]
fn the_expiry_cluster_of_the_rate_keys_is_named_rate() {
    for depth in ["1", "2", "3"] {
        let doc = run_json(&["report", IDS, "--section", "expiry", "--depth", depth]);
        let clusters = doc["expiry"]["clusters"].as_array().unwrap();
        let cluster = clusters
            .iter()
            .find(|c| c["start_ms"] == 1_893_456_000_000i64)
            .expect("the cluster at 2030-01-01T00:00:00Z");
        // 3,000 rate keys and one session key that expires in that second.
        assert_eq!(cluster["keys"], 3001);
        assert_eq!(cluster["namespaces"], json!([["rate", 3000]]), "--depth {depth}");
        assert_eq!(cluster["other_keys"], 1);
    }
}

#[test]
fn the_html_and_the_diff_name_the_parent_namespaces() {
    let out = rdblens()
        .args(["report", IDS, "--format", "html", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let html = String::from_utf8(out.stdout).unwrap();
    assert!(
        !html.contains("rate:10."),
        "an address as a namespace in the HTML"
    );
    assert!(
        !html.contains("more under rate"),
        "rate's children folded in the HTML"
    );

    let diff = run_json(&["diff", ALL_TYPES, IDS]);
    let rows: Vec<(String, u64)> = diff["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["prefix"]["key"].as_str().unwrap().to_string(),
                r["level"].as_u64().unwrap(),
            )
        })
        .collect();
    for (name, level) in [
        ("rate", 1),
        ("sess", 1),
        ("user", 1),
        ("cache", 1),
        ("cache:page", 2),
    ] {
        assert!(
            rows.contains(&(name.to_string(), level)),
            "{name} missing from {rows:?}"
        );
    }
    assert!(
        rows.iter().all(|(name, _)| !name.starts_with("rate:")
            && !name.starts_with("sess:")
            && !name.starts_with("user:")),
        "{rows:?}"
    );
    let rate = diff["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["prefix"]["key"] == "rate")
        .unwrap();
    assert_eq!(rate["new"]["keys"], 3020);
    assert_eq!(rate["old"]["keys"], 0);
}
