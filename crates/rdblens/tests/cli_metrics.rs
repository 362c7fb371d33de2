//! `rdblens report --format prometheus` (docs/monitoring.md): the exact
//! output on a fixture, label escaping of hostile key names, the bound on
//! the number of series, the atomic `-o` and the metrics of a failed run,
//! and `promtool check metrics` on every fixture and on a multi-file report.
//!
//! The promtool checks need `promtool` (Debian package `prometheus`;
//! `.ci/run` installs it, `RDBLENS_PROMTOOL` names another). Without it
//! they say so and pass, except under CI (`CI` set), where they fail.

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};

use support::{rdblens, root, RdbBuilder, ALL_TYPES};

const NOW: &str = "1800000000";

/// `promtool check metrics` on `text`: its complaints, if any.
fn check_metrics(promtool: &Path, text: &str) -> Result<(), String> {
    let mut child = Process::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    // promtool prints lint problems and exits non-zero for them too.
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() && said.trim().is_empty() {
        Ok(())
    } else {
        Err(said)
    }
}

/// The metrics of `args`, which must exit with `code`.
fn metrics(args: &[&str], code: i32) -> String {
    let out = rdblens()
        .args(["report", "--format", "prometheus", "-q", "--now", NOW])
        .args(args)
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// The sample lines (not `#` lines) whose metric name is `name`.
fn series<'t>(text: &'t str, name: &str) -> Vec<&'t str> {
    text.lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('{'))
        })
        .collect()
}

fn sample_lines(text: &str) -> usize {
    text.lines().filter(|l| !l.starts_with('#')).count()
}

#[test]
fn metrics_of_all_types() {
    let text = metrics(&[ALL_TYPES], 0);
    // The run's duration and the version change: everything else is fixed.
    let duration = series(&text, "rdblens_analysis_duration_seconds");
    assert_eq!(duration.len(), 1);
    let seconds: f64 = duration[0].rsplit(' ').next().unwrap().parse().unwrap();
    assert!(seconds > 0.0 && seconds < 600.0, "{}", duration[0]);
    let stable: String = text
        .lines()
        .map(|l| {
            if l.starts_with("rdblens_analysis_duration_seconds ") {
                "rdblens_analysis_duration_seconds [seconds]".to_string()
            } else if l.starts_with("rdblens_build_info{") {
                "rdblens_build_info{version=\"[version]\"} 1".to_string()
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect();
    insta::assert_snapshot!(stable);
    // The figures are the JSON report's.
    for line in [
        "rdblens_analysis_success 1",
        "rdblens_analysis_timestamp_seconds 1800000000",
        "rdblens_snapshot_timestamp_seconds{file=\"fixtures/rdb/redis-7.4.5/all-types.rdb\"} 1795292217",
        "rdblens_snapshot_age_seconds{file=\"fixtures/rdb/redis-7.4.5/all-types.rdb\"} 4707783",
        "rdblens_keys 227",
        "rdblens_memory_bytes 3341542",
        "rdblens_db_keys{db=\"15\"} 2",
        "rdblens_type_expiring_keys{type=\"string\"} 74",
        "rdblens_key_group_memory_usage_bytes{key_group=\"str\"} 2667072",
        "rdblens_key_group_keys{key_group=\"no_namespace\"} 8",
        "rdblens_big_key_memory_bytes{db=\"0\",key=\"str:big:1mb-lzf\",type=\"string\"} 1310784",
        "rdblens_findings{rule=\"big-string\",severity=\"warn\"} 3",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
    }
    let json = rdblens()
        .args(["report", "--format", "json", "-q", "--now", NOW, ALL_TYPES])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(json["totals"]["memory"], 3341542);
    assert_eq!(
        json["used_memory"]["predicted"].as_u64().map(|p| p.to_string()),
        series(&text, "rdblens_used_memory_predicted_bytes")[0]
            .rsplit(' ')
            .next()
            .map(str::to_string)
    );
    // Every family has its HELP and TYPE lines, right before its samples.
    let mut families = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if let Some(rest) = l.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert_eq!(kind, "gauge");
            assert!(lines[i - 1].starts_with(&format!("# HELP {name} ")));
            assert!(lines[i + 1].starts_with(name));
            families.push(name);
        }
    }
    assert_eq!(families.len(), 32, "{families:?}");
}

#[test]
fn hostile_key_names_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("hostile.rdb");
    let long = vec![b'k'; 5000];
    let data = RdbBuilder::new()
        .string(b"quote\"d:1", &[b'x'; 4000], None)
        .string(b"back\\slash:1", &[b'x'; 3000], None)
        .string(b"new\nline:1", &[b'x'; 2000], None)
        .string(b"\xff\xfebin:1", &[b'x'; 1000], None)
        .string(&long, &[b'x'; 500], None)
        .string(b"overflow:1", b"v", None)
        .finish();
    std::fs::write(&dump, data).unwrap();
    let text = metrics(&[dump.to_str().unwrap()], 0);
    let big = series(&text, "rdblens_big_key_memory_bytes");
    let keys: Vec<&str> = big
        .iter()
        .map(|l| {
            l.split("key=\"")
                .nth(1)
                .unwrap()
                .split("\",type=")
                .next()
                .unwrap()
        })
        .collect();
    // The 5,000-byte name (its memory counts it) is cut to 200 bytes.
    assert_eq!(keys[0], format!("{}... (5000 bytes)", "k".repeat(200)));
    assert_eq!(
        keys[1..5],
        [
            // As the key is, with `"` and `\` escaped.
            "quote\\\"d:1",
            "back\\\\slash:1",
            // A control character or bytes that are not UTF-8: as redis-cli
            // quotes the key (`\n`, `\xff`), its backslashes escaped.
            "new\\\\nline:1",
            "\\\\xff\\\\xfebin:1",
        ]
    );
    // A namespace named like the overflow group keeps its own series.
    assert!(
        text.contains("rdblens_key_group_keys{key_group=\"overflow:\"} 1\n"),
        "{text}"
    );
    assert!(!text.contains("key_group=\"overflow\""));
    // No raw line feed inside a label: every line is a comment or a sample.
    for l in text.lines() {
        assert!(l.starts_with("# ") || l.starts_with("rdblens_"), "{l:?}");
    }
    if let Some(promtool) = support::promtool("hostile_key_names_are_escaped") {
        check_metrics(&promtool, &text).unwrap();
    }
}

/// A dump of `namespaces` namespaces of one key each, and as many big keys
/// with long names.
fn sprawling_dump(dir: &Path, namespaces: usize) -> PathBuf {
    let mut b = RdbBuilder::new();
    for i in 0..namespaces {
        let key = format!("ns{i:05}:{}", "x".repeat(300));
        b = b.string(key.as_bytes(), &vec![b'v'; 100 + i], None);
    }
    let path = dir.join("sprawl.rdb");
    std::fs::write(&path, b.finish()).unwrap();
    path
}

#[test]
fn the_number_of_series_is_bounded_whatever_the_key_names() {
    let dir = tempfile::tempdir().unwrap();
    let dump = sprawling_dump(dir.path(), 5000);
    let dump = dump.to_str().unwrap();
    let text = metrics(&[dump, "--top", "5000"], 0);
    // 100 namespaces of their own and the overflow, twice (keys, memory);
    // 20 big keys, twice (memory, elements).
    let groups = series(&text, "rdblens_key_group_keys");
    assert_eq!(groups.len(), 101);
    // Heaviest first, ties by name.
    assert_eq!(groups[0], "rdblens_key_group_keys{key_group=\"ns04000\"} 1");
    assert_eq!(groups[100], "rdblens_key_group_keys{key_group=\"overflow\"} 4900");
    assert_eq!(series(&text, "rdblens_key_group_memory_usage_bytes").len(), 101);
    assert_eq!(series(&text, "rdblens_big_key_memory_bytes").len(), 20);
    // 5,000 namespaces: past the bounded count of the namespace tree, the
    // number is its estimate.
    assert_eq!(series(&text, "rdblens_key_groups"), ["rdblens_key_groups 4972"]);
    let all = sample_lines(&text);
    assert!(all <= 1000, "{all} series");
    assert_eq!(all, 332, "{text}");
    // The caps are the flags.
    let text = metrics(&[dump, "--metrics-groups", "3", "--metrics-keys", "2"], 0);
    assert_eq!(
        series(&text, "rdblens_key_group_keys")[3],
        "rdblens_key_group_keys{key_group=\"overflow\"} 4997"
    );
    assert_eq!(series(&text, "rdblens_big_key_elements").len(), 2);
    if let Some(promtool) = support::promtool("the_number_of_series_is_bounded_whatever_the_key_names") {
        check_metrics(&promtool, &text).unwrap();
    }
}

#[test]
fn databases_are_capped_like_namespaces() {
    // 300 databases, from a hostile or odd dump.
    let mut b = RdbBuilder::new();
    for db in 0..300 {
        b = b
            .select(db)
            .string(format!("k{db}").as_bytes(), &vec![b'v'; 10 + db], None);
    }
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dbs.rdb");
    std::fs::write(&dump, b.finish()).unwrap();
    let text = metrics(&[dump.to_str().unwrap(), "--metrics-groups", "10"], 0);
    let dbs = series(&text, "rdblens_db_keys");
    assert_eq!(dbs.len(), 11);
    assert_eq!(dbs[10], "rdblens_db_keys{db=\"overflow\"} 290");
    assert_eq!(series(&text, "rdblens_db_memory_bytes").len(), 11);
    // The overflow row holds what the kept rows do not.
    let sum = |name: &str| -> u64 {
        series(&text, name)
            .iter()
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(sum("rdblens_db_memory_bytes"), sum("rdblens_memory_bytes"));
    assert_eq!(sum("rdblens_key_group_keys"), 300);
    if let Some(promtool) = support::promtool("databases_are_capped_like_namespaces") {
        check_metrics(&promtool, &text).unwrap();
    }
}

#[test]
fn output_file_is_replaced_whole_and_a_failed_run_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rdblens.prom");
    std::fs::write(&out, "old").unwrap();
    rdblens()
        .args(["report", "--format", "prometheus", "-q", ALL_TYPES, "-o"])
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("\nrdblens_keys 227\n"));
    // Only the output in the directory: no temporary file left.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // A dump that cannot be read: the failure replaces the last figures.
    let missing = dir.path().join("missing.rdb");
    rdblens()
        .args(["report", "--format", "prometheus", "-q", "--now", NOW])
        .arg(&missing)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(3)
        .stderr(predicates::str::contains("missing.rdb: cannot open"));
    let text = std::fs::read_to_string(&out).unwrap();
    let samples: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        samples[..2],
        [
            "rdblens_analysis_success 0",
            "rdblens_analysis_timestamp_seconds 1800000000"
        ]
    );
    assert!(samples[2].starts_with("rdblens_analysis_duration_seconds "));
    assert_eq!(samples.len(), 3);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // A truncated dump: the figures of what could be read, and success 0.
    let data = std::fs::read(root().join(ALL_TYPES)).unwrap();
    let cut = dir.path().join("cut.rdb");
    std::fs::write(&cut, &data[..data.len() / 2]).unwrap();
    let text = metrics(&[cut.to_str().unwrap()], 3);
    assert!(text.starts_with("# HELP rdblens_analysis_success 1 when every file was read whole"));
    assert_eq!(
        series(&text, "rdblens_analysis_success"),
        ["rdblens_analysis_success 0"]
    );
    assert_eq!(series(&text, "rdblens_file_damaged").len(), 1);
    assert!(series(&text, "rdblens_file_damaged")[0].ends_with(" 1"));
    // The format has no summary.
    rdblens()
        .args(["report", "--format", "prometheus", "--summary-only", ALL_TYPES])
        .assert()
        .code(2);
}

/// Every dump under `dir`, sorted.
fn dumps(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            dumps(&p, out);
        } else if p.extension().is_some_and(|e| e == "rdb") {
            out.push(p);
        }
    }
}

#[test]
fn promtool_accepts_the_metrics_of_every_fixture() {
    let Some(promtool) = support::promtool("promtool_accepts_the_metrics_of_every_fixture") else {
        return;
    };
    let mut files = Vec::new();
    dumps(&root().join("fixtures/rdb"), &mut files);
    assert!(files.len() >= 40, "{} fixtures", files.len());
    let mut checked = 0;
    for file in &files {
        let out = rdblens()
            .args(["report", "--format", "prometheus", "-q"])
            .arg(file)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("\nrdblens_keys "), "{}: {text}", file.display());
        check_metrics(&promtool, &text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        checked += 1;
    }
    assert_eq!(checked, files.len());
    // A multi-file report: one series per file where the figure is a file's.
    let text = metrics(
        &[
            ALL_TYPES,
            "fixtures/rdb/valkey-9.1.2/all-types.rdb",
            "fixtures/html/hostile.rdb",
        ],
        0,
    );
    assert_eq!(series(&text, "rdblens_snapshot_age_seconds").len(), 3);
    assert_eq!(series(&text, "rdblens_file_memory_bytes").len(), 3);
    check_metrics(&promtool, &text).unwrap();

    // Two summaries merged: a key name in both files is one series (the
    // first, the bigger), so the output stays valid: of the 20 biggest keys
    // of the two all-types dumps, 12 names are distinct.
    let dir = tempfile::tempdir().unwrap();
    let mut summaries = Vec::new();
    for (i, dump) in [ALL_TYPES, "fixtures/rdb/valkey-9.1.2/all-types.rdb"]
        .into_iter()
        .enumerate()
    {
        let path = dir.path().join(format!("{i}.json"));
        rdblens()
            .args(["report", "--format", "json", "--summary-only", "-q", dump, "-o"])
            .arg(&path)
            .assert()
            .success();
        summaries.push(path);
    }
    let out = rdblens()
        .args(["merge", "--format", "prometheus"])
        .args(&summaries)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(series(&text, "rdblens_keys"), ["rdblens_keys 454"]);
    let big = series(&text, "rdblens_big_key_memory_bytes");
    assert_eq!(big.len(), 12);
    assert_eq!(
        big.iter()
            .filter(|l| l.contains("key=\"str:big:1mb-lzf\""))
            .count(),
        1
    );
    check_metrics(&promtool, &text).unwrap();
}

/// `diff --format prometheus` of a real server's snapshots before and after
/// growth (fixtures/growth): both sides' totals as the JSON diff gives
/// them, the alerts of `--fail-on-growth` counted and listed, the run
/// exiting 1 for them; promtool accepts it.
#[test]
fn diff_metrics_carry_the_growth_alerts() {
    let Some(promtool) = support::promtool("diff_metrics_carry_the_growth_alerts") else {
        return;
    };
    let (old, new) = ("fixtures/growth/before.rdb", "fixtures/growth/after.rdb");
    let limits = ["--fail-on-growth", "total=10%,keys=5%,namespace=50%,key=100KiB"];
    let run = |format: &str| {
        let out = rdblens()
            .args(["diff", old, new, "-q", "--format", format])
            .args(limits)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run("prometheus");
    check_metrics(&promtool, &text).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let totals = &doc["totals"];
    for (family, field) in [
        ("rdblens_diff_memory_bytes", "memory"),
        ("rdblens_diff_keys", "keys"),
    ] {
        assert_eq!(
            series(&text, family),
            [
                format!("{family}{{side=\"old\"}} {}", totals["old"][field]),
                format!("{family}{{side=\"new\"}} {}", totals["new"][field]),
            ]
        );
    }
    assert_eq!(
        series(&text, "rdblens_growth_alerts"),
        ["rdblens_growth_alerts 6"]
    );
    assert_eq!(
        series(&text, "rdblens_diff_new_expiry_clusters"),
        ["rdblens_diff_new_expiry_clusters 0"]
    );
    let changes = series(&text, "rdblens_growth_alert_change");
    assert_eq!(changes.len(), 6, "{text}");
    assert_eq!(
        changes[5],
        format!(
            "rdblens_growth_alert_change{{what=\"key\",name=\"queue:jobs\",db=\"0\",limit=\"100KiB\"}} {}",
            doc["growth_alerts"][5]["change"]
        )
    );
    assert!(changes[1].starts_with("rdblens_growth_alert_change{what=\"keys\",name=\"\",limit=\"5%\"} 200"));
}
