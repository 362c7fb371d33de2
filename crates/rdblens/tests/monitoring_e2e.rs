//! docs/monitoring.md end to end: `report --format prometheus -o` into a
//! textfile directory, a real node_exporter serving it and a real
//! Prometheus scraping that on loopback; Prometheus's HTTP query API then
//! answers the JSON report's figures (total memory, keys per type, the top
//! namespace's memory).
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

fn start(bin: &Path, args: &[String], dir: &Path) -> Running {
    let child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
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

#[test]
fn prometheus_scraping_node_exporter_answers_the_json_figures() {
    let prometheus = binary("RDBLENS_PROMETHEUS", &["/usr/bin/prometheus"]);
    let exporter = binary(
        "RDBLENS_NODE_EXPORTER",
        &["/usr/bin/prometheus-node-exporter", "/usr/bin/node_exporter"],
    );
    let (Some(prometheus), Some(exporter)) = (prometheus, exporter) else {
        if std::env::var_os("CI").is_some() {
            panic!("CI is set but prometheus or prometheus-node-exporter is not installed (.ci/run installs the Debian packages)");
        }
        eprintln!("SKIPPED prometheus_scraping_node_exporter_answers_the_json_figures: prometheus or prometheus-node-exporter not found (install the Debian packages, or set RDBLENS_PROMETHEUS and RDBLENS_NODE_EXPORTER)");
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

    let exporter_port = free_port();
    let _exporter = start(
        &exporter,
        &[
            format!("--web.listen-address=127.0.0.1:{exporter_port}"),
            "--collector.disable-defaults".into(),
            "--collector.textfile".into(),
            format!("--collector.textfile.directory={}", textfiles.display()),
        ],
        dir.path(),
    );
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:{exporter_port}']\n"
        ),
    )
    .unwrap();
    let prometheus_port = free_port();
    let _prometheus = start(
        &prometheus,
        &[
            format!("--config.file={}", config.display()),
            format!("--storage.tsdb.path={}", dir.path().join("tsdb").display()),
            format!("--web.listen-address=127.0.0.1:{prometheus_port}"),
        ],
        dir.path(),
    );

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
