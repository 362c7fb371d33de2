//! docs/monitoring.md end to end: `report --format prometheus -o` into a
//! textfile directory, a real node_exporter serving it and a real
//! Prometheus scraping that on loopback; Prometheus's HTTP query API then
//! answers the JSON report's figures (total memory, keys per type, the top
//! namespace's memory), and every query of the Grafana dashboard
//! (examples/grafana/rdblens-dashboard.json) answers from the scraped
//! metrics of a report and a diff.
//!
//! Needs `prometheus` and `prometheus-node-exporter` (Debian packages;
//! `.ci/run` installs them, `RDBLENS_PROMETHEUS` and
//! `RDBLENS_NODE_EXPORTER` name others). Without them the test says so and
//! passes, except under CI (`CI` set), where it fails.

mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{rdblens, ALL_TYPES};

const VALKEY: &str = "fixtures/rdb/valkey-9.1.2/all-types.rdb";
/// A dump with LFU counters: its report has the hot-and-big metrics.
const LFU: &str = "fixtures/rdb/redis-7.4.5/lfu.rdb";

fn binary(var: &str, candidates: &[&str]) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .or_else(|| candidates.iter().map(PathBuf::from).find(|p| p.exists()))
}

/// A child process killed when the test ends, passed or not.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `bin`; its standard error goes to `dir/NAME.log` (NAME: the
/// program's file name), which a test may read.
fn start(bin: &Path, args: &[String], dir: &Path) -> Running {
    let name = bin.file_name().unwrap().to_string_lossy().into_owned();
    let log = std::fs::File::create(dir.join(format!("{name}.log"))).unwrap();
    let child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    Running(child)
}

/// A loopback port free a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Prometheus's answer to an instant query, when it has one.
fn query(port: u16, promql: &str) -> Option<Vec<Value>> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    let request = format!(
        "GET /api/v1/query?query={} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
        percent_encode(promql)
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let body = response.split_once("\r\n\r\n")?.1;
    let doc: Value = serde_json::from_str(body).ok()?;
    let result = doc["data"]["result"].as_array()?.clone();
    (!result.is_empty()).then_some(result)
}

/// The one value of `promql`, waiting (up to a minute) for the first scrape.
fn value(port: u16, promql: &str) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(result) = query(port, promql) {
            assert_eq!(result.len(), 1, "{promql}: {result:?}");
            return result[0]["value"][1].as_str().unwrap().parse().unwrap();
        }
        assert!(Instant::now() < deadline, "no answer to {promql} in a minute");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// `prometheus` and `prometheus-node-exporter`, or `None` (said on
/// standard error) when they are not installed outside CI.
fn tools(test: &str) -> Option<(PathBuf, PathBuf)> {
    let prometheus = binary("RDBLENS_PROMETHEUS", &["/usr/bin/prometheus"]);
    let exporter = binary(
        "RDBLENS_NODE_EXPORTER",
        &["/usr/bin/prometheus-node-exporter", "/usr/bin/node_exporter"],
    );
    let (Some(prometheus), Some(exporter)) = (prometheus, exporter) else {
        if std::env::var_os("CI").is_some() {
            panic!("CI is set but prometheus or prometheus-node-exporter is not installed (.ci/run installs the Debian packages)");
        }
        eprintln!("SKIPPED {test}: prometheus or prometheus-node-exporter not found (install the Debian packages, or set RDBLENS_PROMETHEUS and RDBLENS_NODE_EXPORTER)");
        return None;
    };
    Some((prometheus, exporter))
}

/// node_exporter serving `textfiles` and Prometheus scraping it every
/// second, both on loopback; stopped when dropped.
struct Monitoring {
    _exporter: Running,
    _prometheus: Running,
    /// Prometheus's port.
    port: u16,
}

impl Monitoring {
    fn start(prometheus: &Path, exporter: &Path, dir: &Path, textfiles: &Path) -> Monitoring {
        let exporter_port = free_port();
        let exporter = start(
            exporter,
            &[
                format!("--web.listen-address=127.0.0.1:{exporter_port}"),
                "--collector.disable-defaults".into(),
                "--collector.textfile".into(),
                format!("--collector.textfile.directory={}", textfiles.display()),
            ],
            dir,
        );
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:{exporter_port}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let prometheus = start(
            prometheus,
            &[
                format!("--config.file={}", config.display()),
                format!("--storage.tsdb.path={}", dir.join("tsdb").display()),
                format!("--web.listen-address=127.0.0.1:{port}"),
            ],
            dir,
        );
        Monitoring {
            _exporter: exporter,
            _prometheus: prometheus,
            port,
        }
    }
}

#[test]
fn prometheus_scraping_node_exporter_answers_the_json_figures() {
    let Some((prometheus, exporter)) = tools("prometheus_scraping_node_exporter_answers_the_json_figures")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let textfiles = dir.path().join("node-exporter");
    std::fs::create_dir(&textfiles).unwrap();
    rdblens()
        .args(["report", "--format", "prometheus", "-q", ALL_TYPES, VALKEY, "-o"])
        .arg(textfiles.join("rdblens.prom"))
        .assert()
        .success();
    let json = rdblens()
        .args(["report", "--format", "json", "-q", ALL_TYPES, VALKEY])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: Value = serde_json::from_slice(&json).unwrap();

    let monitoring = Monitoring::start(&prometheus, &exporter, dir.path(), &textfiles);
    let prometheus_port = monitoring.port;

    // node_exporter read the file without complaint.
    assert_eq!(value(prometheus_port, "node_textfile_scrape_error"), 0.0);
    assert_eq!(value(prometheus_port, "rdblens_analysis_success"), 1.0);
    let totals = &json["totals"];
    assert_eq!(
        value(prometheus_port, "rdblens_memory_bytes"),
        totals["memory"].as_u64().unwrap() as f64
    );
    assert_eq!(
        value(prometheus_port, "rdblens_keys"),
        totals["keys"].as_u64().unwrap() as f64
    );
    for t in json["types"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        assert_eq!(
            value(prometheus_port, &format!("rdblens_type_keys{{type=\"{name}\"}}")),
            t["keys"].as_u64().unwrap() as f64,
            "{name}"
        );
    }
    let top = &json["prefixes"]["namespaces"][0];
    assert_eq!(top["prefix"]["key"], "str");
    // The heaviest namespace is the JSON's first, with its memory.
    let heaviest = "topk(1, rdblens_key_group_memory_usage_bytes)";
    assert_eq!(
        value(prometheus_port, heaviest),
        top["memory"].as_u64().unwrap() as f64
    );
    assert_eq!(
        value(
            prometheus_port,
            "rdblens_key_group_memory_usage_bytes{key_group=\"str\"}"
        ),
        top["memory"].as_u64().unwrap() as f64
    );
}

const DASHBOARD: &str = "examples/grafana/rdblens-dashboard.json";
const GROWTH_BEFORE: &str = "fixtures/growth/before.rdb";
const GROWTH_AFTER: &str = "fixtures/growth/after.rdb";
/// Limits the growth fixtures pass: total memory, three namespaces (`queue`,
/// `cache`, `cache:page`) and one key (`queue:jobs`).
const GROWTH_LIMITS: &str = "total=10%,namespace=50%,key=50KiB";

/// The dashboard as a JSON document.
fn dashboard() -> Value {
    let text = std::fs::read_to_string(support::root().join(DASHBOARD)).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{DASHBOARD}: {e}"))
}

/// Every panel of the dashboard, those inside rows included.
fn panels(dashboard: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    let mut stack: Vec<&Value> = dashboard["panels"].as_array().unwrap().iter().collect();
    while let Some(p) = stack.pop() {
        if let Some(inner) = p["panels"].as_array() {
            stack.extend(inner);
        }
        out.push(p);
    }
    out
}

/// `(panel title, refId, expr)` of every panel target.
fn exprs(dashboard: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for p in panels(dashboard) {
        for t in p["targets"].as_array().into_iter().flatten() {
            let expr = t["expr"]
                .as_str()
                .unwrap_or_else(|| panic!("a target of {} has no expr", p["title"]));
            out.push((
                p["title"].as_str().unwrap().to_string(),
                t["refId"].as_str().unwrap().to_string(),
                expr.to_string(),
            ));
        }
    }
    out
}

/// `expr` as Grafana would send it with every variable set to All and the
/// time macros to fixed values; fails on a variable the dashboard does
/// not define.
fn substituted(expr: &str) -> String {
    let mut text = expr.to_string();
    for (variable, value) in [
        ("${instance}", ".*"),
        ("$instance", ".*"),
        ("${file}", ".*"),
        ("$file", ".*"),
        ("${db}", ".*"),
        ("$db", ".*"),
        ("$__rate_interval", "1m"),
        ("$__range", "1h"),
        ("$__interval", "1s"),
    ] {
        text = text.replace(variable, value);
    }
    assert!(!text.contains('$'), "an unknown variable in {expr}");
    text
}

/// The `rdblens_*` names `text` mentions.
fn metric_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("rdblens_") {
        let name: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[at + name.len()..];
        names.push(name);
    }
    names
}

/// The families `metrics` (the text format) declares.
fn families(metrics: &str) -> Vec<String> {
    metrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect()
}

fn stdout_of(args: &[&str], code: i32) -> String {
    let out = rdblens()
        .args(args)
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// The metrics of the report and the diff the dashboard is shown over.
fn report_and_diff_metrics() -> (String, String) {
    let report = stdout_of(&["report", "--format", "prometheus", "-q", ALL_TYPES, LFU], 0);
    // The diff exits 1: figures grew past their limits.
    let diff = stdout_of(
        &[
            "diff",
            GROWTH_BEFORE,
            GROWTH_AFTER,
            "--format",
            "prometheus",
            "-q",
            "--fail-on-growth",
            GROWTH_LIMITS,
        ],
        1,
    );
    (report, diff)
}

#[test]
fn the_grafana_dashboard_queries_only_metrics_rdblens_writes() {
    let dash = dashboard();
    assert!(dash["schemaVersion"].as_u64().unwrap() >= 39);
    // Importable from the UI (the DS_PROMETHEUS input) and provisioned (the
    // datasource variable, which falls back to the default Prometheus).
    assert_eq!(dash["__inputs"][0]["name"], "DS_PROMETHEUS");
    assert_eq!(dash["__inputs"][0]["pluginId"], "prometheus");
    let variables = dash["templating"]["list"].as_array().unwrap();
    let names: Vec<&str> = variables.iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["datasource", "instance", "file", "db"]);
    assert_eq!(variables[0]["current"]["value"], "${DS_PROMETHEUS}");
    let mut ids: Vec<u64> = panels(&dash).iter().map(|p| p["id"].as_u64().unwrap()).collect();
    let count = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), count, "panel ids repeat");
    for p in panels(&dash).iter().filter(|p| p["type"] != "row") {
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        for t in p["targets"].as_array().unwrap() {
            assert_eq!(t["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        }
    }

    let (report, diff) = report_and_diff_metrics();
    let mut written = families(&report);
    written.extend(families(&diff));
    let mut queried: Vec<String> = Vec::new();
    for (title, _, expr) in exprs(&dash) {
        let names = metric_names(&substituted(&expr));
        assert!(!names.is_empty(), "{title}: {expr} reads no rdblens metric");
        queried.extend(names);
    }
    for v in &variables[1..] {
        queried.extend(metric_names(v["query"]["query"].as_str().unwrap()));
    }
    queried.sort();
    queried.dedup();
    let missing: Vec<&String> = queried.iter().filter(|n| !written.contains(n)).collect();
    assert!(
        missing.is_empty(),
        "the dashboard queries metrics rdblens does not write: {missing:?}"
    );
    // What the panels cover: freshness, memory, types, namespaces, big
    // keys, expiry and growth.
    for name in [
        "rdblens_analysis_success",
        "rdblens_analysis_timestamp_seconds",
        "rdblens_analysis_duration_seconds",
        "rdblens_used_memory_predicted_bytes",
        "rdblens_keys",
        "rdblens_type_keys",
        "rdblens_type_memory_bytes",
        "rdblens_key_group_memory_usage_bytes",
        "rdblens_key_group_keys",
        "rdblens_big_key_memory_bytes",
        "rdblens_expiry_clusters",
        "rdblens_growth_alert_change",
    ] {
        assert!(queried.iter().any(|q| q == name), "no panel shows {name}");
    }
}

/// Prometheus's answer to `promql`, waiting (up to half a minute) for one
/// that is not empty.
fn series(port: u16, promql: &str) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(result) = query(port, promql) {
            return result;
        }
        assert!(Instant::now() < deadline, "no series for {promql}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// `label` -> value of each series.
fn by_label(result: &[Value], label: &str) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = result
        .iter()
        .map(|s| {
            (
                s["metric"][label].as_str().unwrap_or_default().to_string(),
                s["value"][1].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_grafana_panel_answers_from_the_scraped_metrics() {
    let Some((prometheus, exporter)) = tools("every_grafana_panel_answers_from_the_scraped_metrics") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let textfiles = dir.path().join("node-exporter");
    std::fs::create_dir(&textfiles).unwrap();
    let (report, diff) = report_and_diff_metrics();
    std::fs::write(textfiles.join("rdblens.prom"), &report).unwrap();
    std::fs::write(textfiles.join("rdblens-diff.prom"), diff).unwrap();
    let json: Value = serde_json::from_str(&stdout_of(
        &["report", "--format", "json", "-q", ALL_TYPES, LFU],
        0,
    ))
    .unwrap();
    let monitoring = Monitoring::start(&prometheus, &exporter, dir.path(), &textfiles);
    let port = monitoring.port;
    // Both files scraped.
    assert_eq!(value(port, "rdblens_analysis_success"), 1.0);
    assert_eq!(value(port, "rdblens_growth_alerts"), 5.0);

    let dash = dashboard();
    let all = exprs(&dash);
    for (title, ref_id, expr) in &all {
        let promql = substituted(expr);
        let result = series(port, &promql);
        assert!(!result.is_empty(), "{title} ({ref_id}): {promql}");
    }
    // The report's file and the diff's share the directory without a
    // series both write (node_exporter logs each scrape that has one).
    let exporter_name = exporter.file_name().unwrap().to_string_lossy().into_owned();
    let log = std::fs::read_to_string(dir.path().join(format!("{exporter_name}.log"))).unwrap();
    assert!(!log.contains("level=error"), "{log}");
    let expr = |title: &str, ref_id: &str| -> String {
        let (_, _, e) = all
            .iter()
            .find(|(t, r, _)| t == title && r == ref_id)
            .unwrap_or_else(|| panic!("no panel {title} ({ref_id})"));
        substituted(e)
    };
    // The figures of the JSON report.
    let memory = "Memory: predicted used_memory and keys' MEMORY USAGE";
    assert_eq!(
        by_label(&series(port, &expr(memory, "B")), "instance")
            .iter()
            .map(|(_, v)| *v)
            .collect::<Vec<_>>(),
        [json["totals"]["memory"].as_u64().unwrap() as f64]
    );
    let mut used: Vec<(String, f64)> = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["used_memory"]["predicted"].as_u64().unwrap() as f64,
            )
        })
        .collect();
    used.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(by_label(&series(port, &expr(memory, "A")), "file"), used);
    let per_type = |field: &str| -> Vec<(String, f64)> {
        let mut rows: Vec<(String, f64)> = json["types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_string(),
                    t[field].as_u64().unwrap() as f64,
                )
            })
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows
    };
    assert_eq!(
        by_label(&series(port, &expr("Keys per type", "A")), "type"),
        per_type("keys")
    );
    assert_eq!(
        by_label(&series(port, &expr("Memory per type", "A")), "type"),
        per_type("memory")
    );
    let heaviest = &json["prefixes"]["namespaces"][0];
    let top = by_label(&series(port, &expr("Top namespaces by memory", "A")), "key_group");
    assert_eq!(top.len(), 10);
    assert!(
        top.contains(&(
            heaviest["prefix"]["key"].as_str().unwrap().to_string(),
            heaviest["memory"].as_u64().unwrap() as f64
        )),
        "{top:?}"
    );
    // The bounded top list (20), whole: 11 series (the two dumps share
    // key names; a key in both files is one series).
    let big = series(port, &expr("Biggest keys", "A"));
    let written = report
        .lines()
        .filter(|l| l.starts_with("rdblens_big_key_memory_bytes{"))
        .count();
    assert_eq!((big.len(), written), (11, 11));
    // Hot and big (the LFU dump): each group's keys and memory as the JSON
    // has them, and the biggest of both groups.
    let heat = &json["hot_and_big"];
    for (title, field) in [
        ("Hot and cold keys", "keys"),
        ("Hot and cold keys' memory", "memory"),
    ] {
        let got = by_label(&series(port, &expr(title, "A")), "group");
        let want = vec![
            ("cold".to_string(), heat["cold"][field].as_u64().unwrap() as f64),
            ("hot".to_string(), heat["hot"][field].as_u64().unwrap() as f64),
        ];
        assert_eq!(got, want, "{title}");
    }
    let listed =
        heat["hot"]["biggest"].as_array().unwrap().len() + heat["cold"]["biggest"].as_array().unwrap().len();
    assert_eq!(
        series(port, &expr("Biggest hot and cold keys", "A")).len(),
        listed
    );
    // The diff's alerts: the figures past the limits, by how much.
    let growth = series(port, &expr("Growth past the limits", "A"));
    let mut past: Vec<(String, String, f64)> = growth
        .iter()
        .map(|s| {
            (
                s["metric"]["what"].as_str().unwrap().to_string(),
                // An empty label (the total's name) is no label.
                s["metric"]["name"].as_str().unwrap_or_default().to_string(),
                s["value"][1].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect();
    past.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let diff_json: Value = serde_json::from_str(&stdout_of(
        &[
            "diff",
            GROWTH_BEFORE,
            GROWTH_AFTER,
            "--format",
            "json",
            "-q",
            "--fail-on-growth",
            GROWTH_LIMITS,
        ],
        1,
    ))
    .unwrap();
    let mut alerts: Vec<(String, String, f64)> = diff_json["growth_alerts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["what"].as_str().unwrap().to_string(),
                a["name"].as_str().unwrap_or_default().to_string(),
                a["change"].as_i64().unwrap() as f64,
            )
        })
        .collect();
    alerts.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(past, alerts);
}
