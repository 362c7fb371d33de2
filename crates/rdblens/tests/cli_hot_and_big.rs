//! Section `hot-and-big`: the hot and the cold keys of dumps that record
//! LFU counters or idle times, checked against the oracles the servers
//! wrote (`OBJECT FREQ` as saved: `rdb_freq`), in JSON, tables, HTML and
//! metrics, with the thresholds from the rules' settings.

mod support;

use serde_json::Value;
use support::{rdblens, root, ALL_TYPES};

fn output(args: &[&str]) -> Vec<u8> {
    rdblens()
        .arg("report")
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone()
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    serde_json::from_slice(&output(&all)).unwrap()
}

/// The oracle's records of `dump` (the `.oracle.jsonl` beside it).
fn oracle(dump: &str) -> Vec<Value> {
    let path = root().join(dump.replace(".rdb", ".oracle.jsonl"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn names(records: &Value) -> Vec<String> {
    records
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["key"].as_str().unwrap().to_string())
        .collect()
}

const LFU_DUMPS: [&str; 2] = [
    "fixtures/rdb/redis-7.4.5/lfu.rdb",
    "fixtures/rdb/redis-6.2.14/lfu.rdb",
];

#[test]
fn lfu_dumps_hot_and_cold_keys_are_the_oracles() {
    for dump in LFU_DUMPS {
        let keys = oracle(dump);
        let freq = |k: &Value| k["rdb_freq"].as_u64().unwrap();
        let hot: Vec<&Value> = keys.iter().filter(|k| freq(k) >= 20).collect();
        let cold = keys.iter().filter(|k| freq(k) == 0).count() as u64;
        let doc = json(&[dump, "--section", "hot-and-big"]);
        let h = &doc["hot_and_big"];
        assert_eq!(h["keys_with_access"], keys.len() as u64, "{dump}");
        assert_eq!(h["hot"]["keys"], hot.len() as u64, "{dump}");
        assert_eq!(h["cold"]["keys"], cold, "{dump}");
        assert_eq!(h["thresholds"]["hot_min_lfu"], 20);
        assert_eq!(h["thresholds"]["cold_max_lfu"], 0);
        // The biggest hot keys, in the order of the server's MEMORY USAGE.
        let mut by_usage = hot.clone();
        by_usage.sort_by_key(|k| std::cmp::Reverse(k["memory_usage"].as_u64().unwrap()));
        let expected: Vec<String> = by_usage[..5]
            .iter()
            .map(|k| k["key"].as_str().unwrap().to_string())
            .collect();
        let listed = names(&h["hot"]["biggest"]);
        assert_eq!(listed.len(), 20, "{dump}: --top 20");
        assert_eq!(listed[..5], expected[..], "{dump}");
        for k in h["hot"]["biggest"].as_array().unwrap() {
            assert!(k["lfu_freq"].as_u64().unwrap() >= 20, "{dump}: {k}");
        }
    }
}

#[test]
fn thresholds_come_from_the_rules_settings() {
    let dump = LFU_DUMPS[0];
    let keys = oracle(dump);
    let over = |n: u64| {
        keys.iter()
            .filter(|k| k["rdb_freq"].as_u64().unwrap() >= n)
            .count() as u64
    };
    let upto = |n: u64| {
        keys.iter()
            .filter(|k| k["rdb_freq"].as_u64().unwrap() <= n)
            .count() as u64
    };
    let doc = json(&[
        dump,
        "--section",
        "hot-and-big",
        "--set",
        "hot-key.min-lfu=200",
        "--set",
        "cold-key.lfu-max=10",
        "--top",
        "3",
    ]);
    let h = &doc["hot_and_big"];
    assert_eq!(h["hot"]["keys"], over(200));
    assert_eq!(h["cold"]["keys"], upto(10));
    assert_eq!(h["thresholds"]["hot_min_lfu"], 200);
    assert_eq!(h["hot"]["biggest"].as_array().unwrap().len(), 3);
    assert!(
        over(200) > 3 && over(200) < over(20),
        "the fixture tells the thresholds apart"
    );
}

/// The cold-key rule's dump: 1,000 keys made idle for 40 days (RESTORE
/// IDLETIME) beside 1,000 read just before the save, under allkeys-lru.
#[test]
fn lru_dump_cold_keys_are_the_idle_ones() {
    let dump = "fixtures/rules/cold.rdb";
    let doc = json(&[dump, "--section", "hot-and-big"]);
    let h = &doc["hot_and_big"];
    assert_eq!(h["keys_with_access"], 2000);
    assert_eq!(h["cold"]["keys"], 1000);
    assert_eq!(h["hot"]["keys"], 1000);
    assert!(names(&h["cold"]["biggest"])
        .iter()
        .all(|k| k.starts_with("archive:doc:")));
    assert!(names(&h["hot"]["biggest"])
        .iter()
        .all(|k| k.starts_with("hot:doc:")));
    // The cold keys' memory is the memory of the archive:doc keys alone.
    let archive = json(&[dump, "--section", "bigkeys", "--match", "archive:doc:*"]);
    assert_eq!(archive["totals"]["keys"], 1000);
    assert_eq!(h["cold"]["memory"], archive["totals"]["memory"]);

    let text = String::from_utf8(output(&[dump, "--section", "hot-and-big"])).unwrap();
    assert!(
        text.contains("== Hot and big ==\nOf the 2,000 keys whose dump records an idle time or LFU counter")
    );
    assert!(text.contains("== Biggest cold keys =="));
    assert!(text.contains("1,000 cold keys hold"));
    assert!(text.contains("idle 40.0d"));
}

#[test]
fn html_and_metrics_show_the_section() {
    let dump = LFU_DUMPS[0];
    let doc = json(&[dump]);
    let hot = doc["hot_and_big"]["hot"]["keys"].as_u64().unwrap();
    let page = String::from_utf8(output(&[dump, "--format", "html"])).unwrap();
    assert!(page.contains("<section id=\"hot-and-big\"><h2>Hot and big</h2>"));
    assert!(page.contains("href=\"#hot-and-big\""), "in the navigation bar");
    let table = page.split("<table id=\"big-hot-keys\"").nth(1).unwrap();
    let table = table.split("</table>").next().unwrap();
    assert_eq!(table.matches("<tr>").count(), 1 + 20, "header and --top rows");
    assert!(table.contains("<td class=\"key\"><code>&quot;list:compressed&quot;</code></td><td>list</td>"));
    assert!(table.contains("<td>LFU 232</td>"));

    let metrics = String::from_utf8(output(&[dump, "--format", "prometheus"])).unwrap();
    assert!(metrics.contains(&format!("rdblens_heat_keys{{group=\"hot\"}} {hot}\n")));
    let memory = doc["hot_and_big"]["cold"]["memory"].as_u64().unwrap();
    assert!(metrics.contains(&format!("rdblens_heat_memory_bytes{{group=\"cold\"}} {memory}\n")));
    let big = metrics
        .lines()
        .filter(|l| l.starts_with("rdblens_heat_big_key_memory_bytes{group=\"hot\""))
        .count();
    assert_eq!(big, 20, "--metrics-keys 20 by default");
}

/// Most dumps record neither idle times nor counters (no LRU or LFU
/// maxmemory-policy): no field, no heading, no metric.
#[test]
fn dumps_without_access_have_no_section() {
    let doc = json(&[ALL_TYPES]);
    assert!(doc.get("hot_and_big").is_none());
    let text = String::from_utf8(output(&[ALL_TYPES])).unwrap();
    assert!(!text.contains("Hot and big"));
    let metrics = String::from_utf8(output(&[ALL_TYPES, "--format", "prometheus"])).unwrap();
    assert!(!metrics.contains("rdblens_heat_"));
}

/// A summary file is hostile input: a listed key the thresholds do not
/// put in its group, or thresholds other than the settings', is refused
/// with the field's path.
#[test]
fn summary_files_with_a_wrong_group_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("s.json");
    rdblens()
        .args(["report", LFU_DUMPS[0], "--summary-only", "-o"])
        .arg(&summary)
        .assert()
        .success();
    let good: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    type Damage = fn(&mut Value);
    let cases: [(&str, Damage, &str); 2] = [
        (
            "listed",
            |d| d["summary"]["keys"]["heat"]["hot"]["biggest"]["keys"][0]["lfu_freq"] = 1.into(),
            "summary.keys.heat.hot.biggest.keys[0]: not a hot key by the settings' thresholds",
        ),
        (
            "rule",
            |d| d["summary"]["keys"]["heat"]["rule"]["hot_min_lfu"] = 3.into(),
            "summary.keys.heat.rule: HeatRule { hot_min_lfu: 3,",
        ),
    ];
    for (name, damage, message) in cases {
        let mut doc = good.clone();
        damage(&mut doc);
        let bad = dir.path().join(format!("{name}.json"));
        std::fs::write(&bad, serde_json::to_vec(&doc).unwrap()).unwrap();
        rdblens()
            .arg("merge")
            .arg(&bad)
            .assert()
            .code(3)
            .stdout("")
            .stderr(predicates::str::contains(message));
    }
}

/// Its lists are held in memory as the big keys' are: `--top` is capped.
#[test]
fn top_is_capped_as_for_other_key_lists() {
    rdblens()
        .args([
            "report",
            LFU_DUMPS[0],
            "--section",
            "hot-and-big",
            "--top",
            "10001",
        ])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicates::str::contains(
            "--top 10001 is above the maximum of 10000: top lists are held in memory",
        ));
}
