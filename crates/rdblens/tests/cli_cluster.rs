//! Several dumps of one cluster: the combined report and its `shards`
//! section, summaries merged on another host (`report --summary-only`,
//! `merge`), and `diff` between two snapshots.

mod support;

use std::path::{Path, PathBuf};

use predicates::str::contains;
use rdblens_summary::slot::key_slot;
use serde_json::Value;
use support::{rdblens, RdbBuilder, ALL_TYPES};

const VALKEY: &str = "fixtures/rdb/valkey-9.1.2/all-types.rdb";

/// One key name per slot, `k:<n>` with the smallest such n.
fn key_per_slot() -> Vec<String> {
    let mut keys = vec![String::new(); 16384];
    let mut missing = keys.len();
    let mut n = 0u64;
    while missing > 0 {
        let k = format!("k:{n}");
        let slot = usize::from(key_slot(k.as_bytes()));
        if keys[slot].is_empty() {
            keys[slot] = k;
            missing -= 1;
        }
        n += 1;
    }
    keys
}

/// Three shards of a cluster, each owning a third of the slots (the
/// default `redis-cli --cluster create` split), with one key per slot; the
/// second shard's values are four times bigger and it has a big key.
fn three_shards(dir: &Path) -> Vec<PathBuf> {
    let keys = key_per_slot();
    let ranges = [(0usize, 5460usize), (5461, 10922), (10923, 16383)];
    ranges
        .iter()
        .enumerate()
        .map(|(i, &(from, to))| {
            let value = vec![b'v'; if i == 1 { 64 } else { 16 }];
            let mut b = RdbBuilder::new();
            for (slot, key) in keys.iter().enumerate().take(to + 1).skip(from) {
                let expiry = (slot % 4 == 0).then_some(1_700_000_500_000);
                b = b.string(key.as_bytes(), &value, expiry);
            }
            if i == 1 {
                b = b.string(b"k:{big}", &vec![b'x'; 100_000], None);
            }
            let path = dir.join(format!("node-{}.rdb", i + 1));
            std::fs::write(&path, b.finish()).unwrap();
            path
        })
        .collect()
}

fn run(args: &[&str]) -> std::process::Output {
    rdblens().args(args).output().unwrap()
}

fn stdout_ok(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&stdout_ok(args)).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn shards_section_breaks_the_cluster_down_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let files = three_shards(dir.path());
    let [a, b, c] = [s(&files[0]), s(&files[1]), s(&files[2])];
    let doc = json(&["report", a, b, c, "--format", "json", "--section", "shards"]);
    let sh = &doc["shards"];
    let rows = sh["shards"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let ranges: Vec<&str> = rows.iter().map(|r| r["slot_ranges"].as_str().unwrap()).collect();
    assert_eq!(ranges, ["0-5460", "5461-10922", "10923-16383"]);
    let keys: Vec<u64> = rows.iter().map(|r| r["keys"].as_u64().unwrap()).collect();
    // The big key's tag "big" hashes into the second shard's range.
    assert_eq!(keys, [5461, 5462 + 1, 5461]);
    let slots: Vec<u64> = rows.iter().map(|r| r["slots_used"].as_u64().unwrap()).collect();
    assert_eq!(slots, [5461, 5462, 5461]);
    assert_eq!(rows[0]["keys_with_expiry"], 1366);
    assert_eq!(rows[1]["biggest_key"]["key"], "k:{big}");
    assert_eq!(rows[0]["path"], a);
    assert_eq!(sh["overlapping_slots"], "");
    assert_eq!(sh["overlapping_slots_count"], 0);
    let imb = &sh["imbalance"];
    assert_eq!(imb["heaviest_by_memory"], b);
    assert_eq!(imb["heaviest_by_keys"], b);
    let mem: Vec<f64> = rows
        .iter()
        .map(|r| r["memory"].as_u64().unwrap() as f64)
        .collect();
    let expected = mem[1] / (mem.iter().sum::<f64>() / 3.0);
    assert!((imb["memory_max_over_mean"].as_f64().unwrap() - expected).abs() < 1e-9);
    assert!(imb["memory_max_over_mean"].as_f64().unwrap() > 1.4);
    let shares: f64 = rows.iter().map(|r| r["memory_share"].as_f64().unwrap()).sum();
    assert!((shares - 1.0).abs() < 1e-9);
    // The same table.
    let t = stdout_ok(&["report", a, b, c, "--section", "shards"]);
    assert!(t.contains("== Shards (3 files) =="), "{t}");
    assert!(t.contains("| 5461-10922 "), "{t}");
    assert!(t.contains("\"k:{big}\" (112.1 KiB)"), "{t}");
    assert!(
        t.contains(&format!(
            "imbalance: memory max/mean {:.2} (heaviest: {b})",
            expected
        )),
        "{t}"
    );
    assert!(!t.contains("more than one file"), "{t}");
    // A copy of a shard overlaps it (the same file twice is refused).
    let copy = dir.path().join("node-1-copy.rdb");
    std::fs::copy(a, &copy).unwrap();
    let t = stdout_ok(&["report", a, b, s(&copy), "--section", "shards"]);
    assert!(
        t.contains("5,461 slots hold keys in more than one file: 0-5460"),
        "{t}"
    );
}

#[test]
fn one_file_has_no_shards_table_but_json_has_its_row() {
    let t = stdout_ok(&["report", ALL_TYPES]);
    assert!(!t.contains("== Shards"));
    let doc = json(&["report", ALL_TYPES, "--format", "json", "--section", "shards"]);
    assert_eq!(doc["shards"]["shards"][0]["keys"], 227);
    assert_eq!(doc["shards"]["imbalance"]["keys_max_over_mean"], 1.0);
    // The per-file figures are in `shards`, not in `files`.
    assert!(doc["files"][0].get("shard").is_none());
}

#[test]
fn files_run_in_parallel_and_the_result_does_not_depend_on_threads() {
    let dir = tempfile::tempdir().unwrap();
    let files = three_shards(dir.path());
    let mut args = vec!["report", "--format", "json"];
    args.extend(files.iter().map(|f| s(f)));
    args.push(ALL_TYPES);
    let one = stdout_ok(&[&args[..], &["--threads", "1"]].concat());
    for threads in ["2", "3", "7"] {
        assert_eq!(
            one,
            stdout_ok(&[&args[..], &["--threads", threads]].concat()),
            "{threads} threads"
        );
    }
    let doc: Value = serde_json::from_str(&one).unwrap();
    let paths: Vec<&str> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [s(&files[0]), s(&files[1]), s(&files[2]), ALL_TYPES],
        "command-line order"
    );
}

#[test]
fn an_unreadable_file_among_several_fails_before_any_work() {
    rdblens()
        .args(["report", ALL_TYPES, "/nonexistent.rdb", VALKEY])
        .assert()
        .code(3)
        .stdout("")
        .stderr("rdblens: /nonexistent.rdb: cannot open: No such file or directory (os error 2)\n");
}

/// `report --summary-only` of each file, on its own "host".
fn summaries(dir: &Path, files: &[&str], extra: &[&str]) -> Vec<PathBuf> {
    files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let out = dir.join(format!("s{i}.json"));
            let mut args = vec!["report", f, "--format", "json", "--summary-only", "-o", s(&out)];
            args.extend_from_slice(extra);
            stdout_ok(&args);
            out
        })
        .collect()
}

#[test]
fn merged_summaries_equal_one_run_over_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let shards = three_shards(dir.path());
    let files = [s(&shards[0]), s(&shards[1]), s(&shards[2]), ALL_TYPES, VALKEY];
    let parts = summaries(dir.path(), &files, &[]);
    let part_args: Vec<&str> = parts.iter().map(|p| s(p)).collect();

    // The summary itself: merge(summary(a), summary(b), ...) == summary(a, b, ...).
    let all = dir.path().join("all.json");
    stdout_ok(&[&["report", "--summary-only", "-o", s(&all)], &files[..]].concat());
    let merged = dir.path().join("merged.json");
    stdout_ok(&[&["merge", "--summary-only", "-o", s(&merged)], &part_args[..]].concat());
    let all_doc: Value = serde_json::from_slice(&std::fs::read(&all).unwrap()).unwrap();
    assert_eq!(all_doc["format"], "rdblens-summary");
    assert!(all_doc["summary_version"].is_u64());
    assert_eq!(
        all_doc,
        serde_json::from_slice::<Value>(&std::fs::read(&merged).unwrap()).unwrap()
    );
    assert_eq!(std::fs::read(&all).unwrap(), std::fs::read(&merged).unwrap());

    // Merging in steps (per rack, then the racks) gives the same.
    let rack = dir.path().join("rack.json");
    stdout_ok(&[
        "merge",
        part_args[0],
        part_args[1],
        part_args[2],
        "--summary-only",
        "-o",
        s(&rack),
    ]);
    let stepped = dir.path().join("stepped.json");
    stdout_ok(&[
        "merge",
        s(&rack),
        part_args[3],
        part_args[4],
        "--summary-only",
        "-o",
        s(&stepped),
    ]);
    assert_eq!(std::fs::read(&all).unwrap(), std::fs::read(&stepped).unwrap());

    // The reports, JSON and tables, with every section (audit included).
    for format in [
        &["--format", "json"][..],
        &[][..],
        &["--sort", "elements", "--bucket", "1h"][..],
    ] {
        let report = stdout_ok(&[&["report"], &files[..], format].concat());
        let merge = stdout_ok(&[&["merge"], &part_args[..], format].concat());
        assert_eq!(report, merge, "{format:?}");
    }
    // The summary is compact: one line.
    assert_eq!(std::fs::read_to_string(&all).unwrap().lines().count(), 1);
    // Summaries named *.gz are gzip-compressed, and read back as well.
    let gz = dir.path().join("s0.json.gz");
    stdout_ok(&["report", files[0], "--summary-only", "-o", s(&gz)]);
    assert_eq!(std::fs::read(&gz).unwrap()[..2], [0x1f, 0x8b]);
    let from_gz = stdout_ok(&[&["merge", s(&gz)], &part_args[1..], &["--format", "json"]].concat());
    assert_eq!(
        from_gz,
        stdout_ok(&[&["report"], &files[..], &["--format", "json"]].concat())
    );
    assert_eq!(
        json(&["diff", s(&gz), part_args[0], "--format", "json"])["totals"]["delta"]["keys"],
        0
    );
}

#[test]
fn merge_keeps_report_flags_and_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let parts = summaries(
        dir.path(),
        &[ALL_TYPES, VALKEY],
        &["--top", "5", "--type", "hash", "--set", "big-collection.warn=10"],
    );
    let (a, b) = (s(&parts[0]), s(&parts[1]));
    let report = stdout_ok(&[
        "report",
        ALL_TYPES,
        VALKEY,
        "--top",
        "5",
        "--type",
        "hash",
        "--set",
        "big-collection.warn=10",
        "--format",
        "json",
        "--section",
        "bigkeys,findings",
    ]);
    let merge = stdout_ok(&["merge", a, b, "--format", "json", "--section", "bigkeys,findings"]);
    assert_eq!(report, merge);
    let doc: Value = serde_json::from_str(&merge).unwrap();
    assert_eq!(doc["top_keys"]["by_memory"].as_array().unwrap().len(), 5);
    assert!(doc["top_keys"]["by_memory"]
        .as_array()
        .unwrap()
        .iter()
        .all(|k| k["type"] == "hash"));
    // --fail-on looks at the merged audit.
    rdblens()
        .args(["merge", a, b, "--fail-on", "warn"])
        .assert()
        .code(1)
        .stderr(contains("--fail-on warn: the audit found"));
    // -o writes the report.
    let out = dir.path().join("merged.txt");
    stdout_ok(&["merge", a, b, "-o", s(&out), "--top", "2"]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("== Shards (2 files) =="));
}

#[test]
fn merge_refuses_summaries_made_with_other_settings() {
    let dir = tempfile::tempdir().unwrap();
    let base = summaries(&dir.path().join("."), &[ALL_TYPES], &[]);
    let other_dir = dir.path().join("other");
    std::fs::create_dir(&other_dir).unwrap();
    for (extra, message) in [
        (&["--top", "5"][..], "--top 20 vs 5"),
        (&["--type", "hash"][..], "--type [] vs [\"hash\"]"),
        (&["--depth", "3"][..], "--depth 2 vs 3"),
        (
            &["--limit", "hash-max-listpack-entries=1024"][..],
            "encoding limits (--config, --limit) (defaults) vs hash-max-listpack-entries=1024",
        ),
        (&["--target", "valkey-8.1"][..], "--target (none) vs valkey-8.1"),
        (&["--set", "big-collection.warn=10"][..], "design-rule settings"),
    ] {
        let other = summaries(&other_dir, &[VALKEY], extra);
        rdblens()
            .args(["merge", s(&base[0]), s(&other[0])])
            .assert()
            .code(2)
            .stdout("")
            .stderr(contains(format!(
                "rdblens: {}: cannot merge: made with other settings than {}: ",
                other[0].display(),
                base[0].display()
            )))
            .stderr(contains(message));
    }
    // Another summary layout: a clear message, exit 2.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&base[0]).unwrap()).unwrap();
    doc["summary_version"] = Value::from(1);
    let old = dir.path().join("old.json");
    std::fs::write(&old, doc.to_string()).unwrap();
    rdblens()
        .args(["merge", s(&base[0]), s(&old)])
        .assert()
        .code(2)
        .stderr(contains("summary_version 1 (written by rdblens"))
        .stderr(contains("make every summary with the same rdblens version"));
    // A damaged summary (what crashed `merge` once): exit 3, the file and
    // the field named, for merge (tables and JSON) and diff alike.
    let damaged = |name: &str, edit: &dyn Fn(&mut Value)| {
        let mut doc: Value = serde_json::from_slice(&std::fs::read(&base[0]).unwrap()).unwrap();
        edit(&mut doc);
        let path = dir.path().join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    let no_records = damaged("no-records.json", &|d| {
        d["summary"]["keys"]["damaged_keys"] = 3.into()
    });
    let huge = damaged("huge.json", &|d| {
        d["summary"]["keys"]["totals"]["keys"] = (u64::MAX - 9).into()
    });
    let expiring = damaged("expiring.json", &|d| {
        d["summary"]["keys"]["prefixes"]["unprefixed"]["keys_with_expiry"] = (1u64 << 52).into()
    });
    for (file, message) in [
        (
            &no_records,
            "summary.keys.damage: 0 records, damaged_keys 3 (the first 10 are kept)",
        ),
        (
            &huge,
            "summary.keys.totals.keys: 18446744073709551606 is over the limit of summaries (2^53)",
        ),
        (
            &expiring,
            "summary.keys.prefixes.unprefixed.keys_with_expiry: 4503599627370496, more than keys",
        ),
    ] {
        let expected = format!(
            "rdblens: {}: damaged rdblens summary file: {message}",
            file.display()
        );
        for args in [
            &["merge", s(file), s(&base[0])][..],
            &["merge", s(&base[0]), s(file), "--format", "json"][..],
            &["merge", s(file), "--section", "slots"][..],
            &["diff", s(&base[0]), s(file)][..],
        ] {
            rdblens()
                .args(args)
                .assert()
                .code(3)
                .stdout("")
                .stderr(contains(expected.as_str()));
        }
    }
    // Not a summary (a report, a dump, a missing file): exit 3.
    let report = dir.path().join("report.json");
    stdout_ok(&["report", ALL_TYPES, "--format", "json", "-o", s(&report)]);
    rdblens()
        .args(["merge", s(&report)])
        .assert()
        .code(3)
        .stderr(contains("not an rdblens summary file"));
    rdblens()
        .args(["merge", ALL_TYPES])
        .assert()
        .code(3)
        .stderr(contains("not an rdblens summary file"));
    rdblens()
        .args(["merge", "/nonexistent.json"])
        .assert()
        .code(3)
        .stderr(contains("cannot read"));
    // Usage.
    rdblens()
        .args(["report", ALL_TYPES, "--summary-only", "--format", "table"])
        .assert()
        .code(2)
        .stderr(contains("--summary-only writes JSON"));
    rdblens()
        .arg("merge")
        .assert()
        .code(2)
        .stderr(contains("required arguments"));
}

#[test]
fn an_incomplete_shard_is_marked_after_merging_too() {
    let data = std::fs::read(support::root().join(ALL_TYPES)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.rdb");
    std::fs::write(&cut, &data[..600_000]).unwrap();
    let summary = dir.path().join("cut.json");
    // The summary is written; the exit code says the input was incomplete.
    rdblens()
        .args(["report", s(&cut), "--summary-only", "-o", s(&summary)])
        .assert()
        .code(3)
        .stderr(contains("incomplete"));
    let good = summaries(dir.path(), &[VALKEY], &[]);
    let merged = rdblens()
        .args(["merge", s(&summary), s(&good[0])])
        .assert()
        .code(3);
    let text = String::from_utf8(merged.get_output().stdout.clone()).unwrap();
    assert!(text.contains("INCOMPLETE: the report covers only the part before byte offset 139740"));
    let report = rdblens().args(["report", s(&cut), VALKEY]).assert().code(3);
    assert_eq!(report.get_output().stdout, merged.get_output().stdout);
}

/// A small keyspace, yesterday and today.
fn snapshots(dir: &Path) -> (PathBuf, PathBuf) {
    let mut old = RdbBuilder::new();
    let mut new = RdbBuilder::new();
    for i in 0..100 {
        old = old.string(format!("user:profile:{i}").as_bytes(), b"alice", None);
        new = new.string(format!("user:profile:{i}").as_bytes(), b"alice", None);
    }
    for i in 0..50 {
        new = new.string(format!("user:avatar:{i}").as_bytes(), b"bob", None);
    }
    for i in 0..50 {
        old = old.string(
            format!("cache:{i}").as_bytes(),
            &[b'c'; 100],
            Some(1_700_000_000_000 + i * 3_600_000),
        );
    }
    for i in 0..10 {
        new = new.string(
            format!("cache:{i}").as_bytes(),
            &[b'c'; 100],
            Some(1_700_000_000_000 + i * 3_600_000),
        );
    }
    // Today 40 sessions expire in the same second: a new cluster.
    for i in 0..40 {
        new = new.string(
            format!("session:{i}").as_bytes(),
            b"token",
            Some(1_800_000_000_000),
        );
    }
    // A key that grew, and a new big one.
    old = old.string(b"report:daily", &[b'r'; 1_000], None);
    new = new.string(b"report:daily", &[b'r'; 50_000], None);
    new = new.string(b"blob", &[b'b'; 200_000], None);
    let (o, n) = (dir.join("old.rdb"), dir.join("new.rdb"));
    std::fs::write(&o, old.finish()).unwrap();
    std::fs::write(&n, new.finish()).unwrap();
    (o, n)
}

fn counter_delta<'v>(rows: &'v Value, name: &str) -> &'v Value {
    &rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name || r["prefix"]["key"] == name)
        .unwrap_or_else(|| panic!("{name} not in {rows}"))["delta"]
}

#[test]
fn diff_shows_growth_big_keys_and_new_expiry_clusters() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = snapshots(dir.path());
    let doc = json(&["diff", s(&old), s(&new), "--format", "json"]);
    assert_eq!(doc["diff_version"], 1);
    assert_eq!(doc["old"]["files"][0], s(&old));
    assert_eq!(doc["totals"]["old"]["keys"], 151);
    assert_eq!(doc["totals"]["new"]["keys"], 202);
    assert_eq!(doc["totals"]["delta"]["keys"], 51);
    // Each side's predicted used_memory, as its own report has it.
    let predicted = |f: &str| json(&["report", f, "--format", "json"])["used_memory"]["predicted"].as_i64();
    let (po, pn) = (predicted(s(&old)).unwrap(), predicted(s(&new)).unwrap());
    assert_eq!(doc["used_memory"]["old"].as_i64(), Some(po));
    assert_eq!(doc["used_memory"]["new"].as_i64(), Some(pn));
    assert_eq!(doc["used_memory"]["delta"].as_i64(), Some(pn - po));
    assert!(pn - po > 48_000, "{po} -> {pn}");
    assert_eq!(counter_delta(&doc["types"], "string")["keys"], 51);
    assert_eq!(counter_delta(&doc["databases"], "0")["keys"], 51);
    let ns = &doc["namespaces"];
    assert_eq!(counter_delta(ns, "user")["keys"], 50);
    assert_eq!(counter_delta(ns, "cache")["keys"], -40);
    assert_eq!(counter_delta(ns, "session")["keys"], 40);
    assert!(counter_delta(ns, "report")["memory"].as_i64().unwrap() > 48_000);
    // Level 2 under user: user:avatar is new.
    let avatar = ns
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["prefix"]["key"] == "user:avatar")
        .unwrap();
    assert_eq!(
        (
            avatar["level"].as_u64(),
            avatar["old"]["keys"].as_u64(),
            avatar["new"]["keys"].as_u64()
        ),
        (Some(2), Some(0), Some(50))
    );
    // Unchanged prefixes are left out.
    assert!(ns
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["prefix"]["key"] != "user:profile"));
    let big: Vec<(&str, &str, Option<u64>)> = doc["became_big"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "memory")
        .map(|r| {
            (
                r["key"]["key"].as_str().unwrap(),
                r["key"]["type"].as_str().unwrap(),
                r["old_value"].as_u64(),
            )
        })
        .collect();
    assert_eq!(big[0].0, "blob");
    assert_eq!(big[0].2, None);
    let daily = big.iter().find(|r| r.0 == "report:daily").unwrap();
    assert!(daily.2.unwrap() > 1_000 && daily.2.unwrap() < 2_000, "{daily:?}");
    let clusters = doc["expiry"]["new_clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1, "{}", doc["expiry"]);
    assert_eq!(clusters[0]["keys"], 40);
    assert_eq!(clusters[0]["start_ms"], 1_800_000_000_000i64);

    // Summaries give the same diff as dumps, and the reverse diff shrinks.
    let parts = summaries(dir.path(), &[s(&old), s(&new)], &[]);
    assert_eq!(doc, json(&["diff", s(&parts[0]), s(&new), "--format", "json"]));
    assert_eq!(
        doc,
        json(&["diff", s(&parts[0]), s(&parts[1]), "--format", "json"])
    );
    let back = json(&["diff", s(&new), s(&old), "--format", "json"]);
    assert_eq!(back["totals"]["delta"]["keys"], -51);
    assert!(back["expiry"]["new_clusters"].as_array().unwrap().is_empty());

    let t = stdout_ok(&["diff", s(&old), s(&new)]);
    assert!(t.contains("predicted used_memory once loaded "), "{t}");
    for heading in [
        "== Types ==",
        "== Encodings ==",
        "== Namespaces: largest changes ==",
        "== Keys that became big ==",
        "== New expiry clusters (1s buckets) ==",
    ] {
        assert!(t.contains(heading), "{heading} in {t}");
    }
    assert!(t.contains("keys 151 -> 202 (+51)"), "{t}");
    assert!(t.contains("| \"blob\""), "{t}");
    assert!(t.contains("| 2027-01-15 08:00:00 "), "{t}");
}

#[test]
fn diff_usage_and_input_errors() {
    rdblens()
        .args(["diff", ALL_TYPES])
        .assert()
        .code(2)
        .stderr(contains("required"));
    rdblens()
        .args(["diff", ALL_TYPES, VALKEY, "--depth", "9"])
        .assert()
        .code(2)
        .stderr(contains("invalid value '9' for '--depth <DEPTH>': must be 1-4"));
    rdblens()
        .args(["diff", ALL_TYPES, "/nonexistent.rdb"])
        .assert()
        .code(3)
        .stderr(contains("/nonexistent.rdb: cannot open"));
    // Sides made with other settings: compared anyway, with a note.
    let dir = tempfile::tempdir().unwrap();
    let parts = summaries(dir.path(), &[ALL_TYPES], &["--top", "3"]);
    rdblens()
        .args(["diff", s(&parts[0]), VALKEY])
        .assert()
        .code(0)
        .stderr(contains(
            "note: the two sides were analysed with different settings (--top 3 vs 20)",
        ));
}

/// The allocator basis, the accuracy level and the target release are
/// typed in a summary: written as before (`used-mem`, `verified`,
/// `redis-7.4.5`), and a summary naming anything else is refused as
/// damaged (exit 3), at the field, rather than read back as some string.
#[test]
fn typed_status_in_a_summary_is_checked_when_read() {
    let dir = tempfile::tempdir().unwrap();
    let good = &summaries(dir.path(), &[ALL_TYPES], &[])[0];
    let text = std::fs::read_to_string(good).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let file = &doc["summary"]["files"][0];
    assert_eq!(file["profile"], "redis-7.4.5");
    assert_eq!(file["allocator"]["basis"], "unclear");
    assert_eq!(file["accuracy"]["level"], "verified");
    let table = stdout_ok(&["merge", s(good)]);
    assert!(table.contains("227 keys, estimated for redis-7.4.5\n"), "{table}");
    for (from, to, message) in [
        (
            "\"profile\":\"redis-7.4.5\"",
            "\"profile\":\"keydb-6.3\"",
            "summary.files[0].profile: target \"keydb-6.3\": unknown server \"keydb\" (expected redis or valkey)",
        ),
        (
            "\"basis\":\"unclear\"",
            "\"basis\":\"guessed\"",
            "summary.files[0].allocator.basis: unknown variant `guessed`, expected one of `flag`, `used-mem`, `nearer`, `unclear`",
        ),
        (
            "\"level\":\"verified\"",
            "\"level\":\"exact\"",
            "summary.files[0].accuracy.level: unknown variant `exact`, expected one of `verified`, `modelled`, `encodings-only`",
        ),
    ] {
        let compact = serde_json::to_string(&doc).unwrap();
        assert!(compact.contains(from), "{from}");
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, compact.replace(from, to)).unwrap();
        rdblens()
            .args(["merge", s(&bad)])
            .assert()
            .code(3)
            .stdout("")
            .stderr(contains(message));
    }
}
