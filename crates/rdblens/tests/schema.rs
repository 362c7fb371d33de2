//! Real `report --format json` outputs validated against
//! docs/report.schema.json: every fixture family, every section, damaged
//! and binary-key inputs, and hand-broken documents the schema must refuse.

mod support;

use serde_json::{json, Value};
use support::{rdblens, root, RdbBuilder};

fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("docs/report.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft202012::new(&schema).unwrap()
}

fn report_json(args: &[&str]) -> Value {
    let out = rdblens()
        .arg("report")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(3),
        "{out:?}"
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn assert_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

#[test]
fn every_fixture_family_validates() {
    let v = validator();
    for dir in std::fs::read_dir(root().join("fixtures/rdb")).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for scenario in ["all-types", "lru", "lfu", "empty"] {
            let file = dir.join(format!("{scenario}.rdb"));
            if !file.exists() {
                continue;
            }
            let path = file.to_str().unwrap();
            let doc = report_json(&[path, "--top", "3"]);
            assert_valid(&v, &doc, path);
        }
    }
}

#[test]
fn options_that_shape_the_document_validate() {
    let v = validator();
    let f = "fixtures/rdb/redis-7.4.5/all-types.rdb";
    for args in [
        vec![f, "--section", "bigkeys"],
        vec![
            f,
            "--section",
            "ttl,expiry",
            "--bucket",
            "1h",
            "--now",
            "1800000000",
        ],
        vec![f, "--depth", "1", "--separator", "_"],
        // Keys expired at the snapshot, in namespaces and without one.
        vec!["fixtures/namespaces/ids.rdb", "--section", "prefixes"],
        vec![f, "--top", "0"],
        vec![f, "--section", "composition"],
        vec![f, "--section", "composition", "--separator", "_", "--top", "2"],
        vec![f, "--type", "hash", "--db", "0", "--match", "*:*"],
        vec![f, "--target", "valkey-8.1", "--jemalloc-quantum", "16"],
        vec![f, "fixtures/rdb/redis-7.2.4/all-types.rdb"],
        vec!["fixtures/rules/bigkeys.rdb", "--section", "findings,plans"],
        // A sorted set's score ranges and trimmed alternative.
        vec![
            "fixtures/rules/bigkeys.rdb",
            "--section",
            "plans",
            "--set",
            "big-collection.warn=1000",
        ],
        vec![
            "fixtures/rules/sprawl.rdb",
            "--section",
            "plans",
            "--set",
            "small-key-sprawl.min-keys=1000",
        ],
    ] {
        assert_valid(&v, &report_json(&args), &args.join(" "));
    }
}

#[test]
fn incomplete_and_damaged_inputs_validate() {
    let v = validator();
    let data = std::fs::read(root().join("fixtures/rdb/redis-7.4.5/all-types.rdb")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.rdb");
    std::fs::write(&cut, &data[..data.len() / 2]).unwrap();
    let doc = report_json(&[cut.to_str().unwrap()]);
    assert!(doc["files"][0]["incomplete"]["offset"].is_u64());
    assert_valid(&v, &doc, "truncated");
}

/// The schema is strict: documents that break it are refused.
#[test]
fn the_schema_refuses_what_the_documentation_does_not_allow() {
    let v = validator();
    let good = report_json(&["fixtures/rdb/redis-7.4.5/all-types.rdb", "--top", "2"]);
    assert_valid(&v, &good, "good");
    type Break = fn(&mut Value);
    let broken: [(&str, Break); 6] = [
        ("unknown top-level field", |d| d["surprise"] = json!(1)),
        ("schema version", |d| d["schema_version"] = json!(2)),
        ("negative count", |d| d["totals"]["keys"] = json!(-1)),
        ("both key and key_hex", |d| {
            d["top_keys"]["by_memory"][0]["key_hex"] = json!("00")
        }),
        ("unknown checksum status", |d| {
            d["files"][0]["checksum"] = json!("fine")
        }),
        ("missing field in a group", |d| {
            d["types"][0].as_object_mut().unwrap().remove("memory");
        }),
    ];
    for (what, breaks) in broken {
        let mut doc = good.clone();
        breaks(&mut doc);
        assert!(!v.is_valid(&doc), "accepted a document with: {what}");
    }
}

/// Plans carry both figures (used_memory and MEMORY USAGE) and the
/// quantum they were priced with; the schema requires every one.
#[test]
fn plans_need_both_memory_figures() {
    let v = validator();
    let good = report_json(&[
        "fixtures/rules/bigkeys.rdb",
        "--section",
        "plans",
        "--jemalloc-quantum",
        "16",
    ]);
    assert_valid(&v, &good, "plans");
    assert_eq!(good["plans"]["jemalloc_quantum"], 16);
    for field in [
        "used_memory_before",
        "used_memory_after",
        "memory_usage_saved",
        "hash_tag_used_memory_after",
    ] {
        let mut doc = good.clone();
        doc["plans"]["plans"][0].as_object_mut().unwrap().remove(field);
        assert!(!v.is_valid(&doc), "accepted a plan without {field}");
    }
    for field in ["used_memory_before", "used_memory_after", "memory_usage_saved"] {
        let mut doc = good.clone();
        doc["plans"]["total"].as_object_mut().unwrap().remove(field);
        assert!(!v.is_valid(&doc), "accepted totals without {field}");
    }
    let mut doc = good.clone();
    doc["plans"]["jemalloc_quantum"] = json!(12);
    assert!(!v.is_valid(&doc), "accepted quantum 12");
}

#[test]
fn binary_key_names_use_key_hex() {
    let doc = report_json(&["fixtures/rdb/redis-7.4.5/all-types.rdb", "--section", "keys"]);
    let problems = doc["key_names"]["problems"].as_array().unwrap();
    let not_utf8 = problems.iter().find(|p| p["id"] == "key-not-utf8").unwrap();
    let hex: Vec<&str> = not_utf8["examples"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["key_hex"].as_str())
        .collect();
    // "bin:\xff\xfe\x00\x01key"
    assert!(hex.contains(&"62696e3afffe00016b6579"), "{hex:?}");
}

#[test]
fn folded_namespaces_and_damaged_values_validate() {
    let v = validator();
    // 100 second-level prefixes under one namespace: more than are kept
    // (names of letters: ids would all be counted in `ns`).
    let mut b = RdbBuilder::new();
    for i in 0..100u8 {
        let name = [b'a' + i / 26, b'a' + i % 26];
        let key = format!("ns:{}:x", String::from_utf8_lossy(&name));
        b = b.string(key.as_bytes(), b"v", Some(1_700_000_100_000 + i64::from(i)));
    }
    // And more first-level namespaces than are kept.
    for i in 0..600 {
        b = b.string(format!("top{i}:x").as_bytes(), b"v", None);
    }
    let data = b.string(b"plain", b"v", None).damaged_hash(b"broken").finish();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("many.rdb");
    std::fs::write(&file, data).unwrap();
    let doc = report_json(&[file.to_str().unwrap()]);
    assert!(
        doc["prefixes"]["namespaces"][0]["folded"]["prefixes"]
            .as_u64()
            .unwrap()
            > 0,
        "{}",
        doc["prefixes"]
    );
    assert!(doc["prefixes"]["folded"]["prefixes"].as_u64().unwrap() > 0);
    assert_eq!(doc["prefixes"]["no_namespace"]["keys"], 1);
    assert_eq!(doc["damaged_keys"], 1);
    assert_valid(&v, &doc, "folded + damaged");
}
