//! Object URLs as inputs, against a real S3-compatible server on loopback
//! (`s3s-fs`, crates.io, version 0.14.0: `.ci/run` installs it): one
//! object and a prefix or glob of generated shards give the JSON of the
//! same local files (the input names aside); wrong credentials and a
//! missing object are named errors (exit 3); a shard that is not a dump
//! leaves the others in the report, named as not read (exit 3); a body
//! cut short is resumed from the last byte received, and a throttling
//! answer (503 SlowDown) retried, through a small proxy in front of the
//! server. Every request goes to 127.0.0.1.

mod support;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::{root, RdbBuilder, ALL_TYPES};

const ACCESS_KEY: &str = "rdblens-test";
const SECRET_KEY: &str = "rdblens-test-secret";
const BUCKET: &str = "dumps";

/// The `s3s-fs` binary (`RDBLENS_S3S_FS`, else cargo's bin directory, else
/// `PATH`), or the skip of `test` (a failure under CI).
fn s3s_fs(test: &str) -> Option<PathBuf> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("s3s-fs"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let found = std::env::var_os("RDBLENS_S3S_FS")
        .map(PathBuf::from)
        .or_else(|| cargo_home.map(|h| h.join("bin/s3s-fs")).filter(|p| p.exists()))
        .or_else(|| on_path.into_iter().find(|p| p.exists()));
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but s3s-fs is not installed (.ci/run installs it: cargo install s3s-fs --locked --version 0.14.0 --features binary)"
        );
        eprintln!(
            "SKIPPED {test}: s3s-fs not found (cargo install s3s-fs --locked --version 0.14.0 --features binary, or set RDBLENS_S3S_FS)"
        );
    }
    found
}

/// An `s3s-fs` server on a free loopback port, serving the buckets under a
/// temporary directory (one folder per bucket); stopped when dropped.
struct Store {
    child: Child,
    port: u16,
    root: tempfile::TempDir,
}

impl Store {
    /// A store for `test`, or its skip when s3s-fs is not installed.
    fn for_test(test: &str) -> Option<Store> {
        s3s_fs(test).map(|bin| Store::start(&bin))
    }

    fn start(bin: &Path) -> Store {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join(BUCKET)).unwrap();
        let port = free_port();
        let child = Command::new(bin)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--access-key", ACCESS_KEY, "--secret-key", SECRET_KEY])
            .arg(root.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "s3s-fs did not listen on port {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Store { child, port, root }
    }

    /// Stores `bytes` as `key` in the bucket (s3s-fs serves the files of
    /// its root directory: a bucket is a folder, a key a path in it).
    fn put(&self, key: &str, bytes: &[u8]) {
        let path = self.root.path().join(BUCKET).join(key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The bytes of a part when an object is read in parts (8 MiB).
const PART: usize = 8 << 20;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `rdblens ARGS` in `dir` against the S3 endpoint on `port` with
/// `secret`: (exit code, stdout, stderr). Nothing of the machine's AWS
/// set-up is read (a temporary HOME, no profile), and the instance
/// metadata endpoint is a closed loopback port.
fn rdblens_s3(dir: &Path, port: u16, secret: &str, args: &[&str]) -> (i32, String, String) {
    rdblens_s3_with(dir, port, secret, args, &[])
}

/// [`rdblens_s3`] with `env` set besides.
fn rdblens_s3_with(
    dir: &Path,
    port: u16,
    secret: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rdblens"));
    cmd.env_remove("RDBLENS_OBJECT_PARTS");
    cmd.envs(env.iter().copied());
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("AWS_") {
            cmd.env_remove(key);
        }
    }
    let out = cmd
        .current_dir(dir)
        .args(args)
        .env("HOME", home.path())
        .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", secret)
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_METADATA_ENDPOINT", "http://127.0.0.1:9")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `rdblens ARGS` on local files in `dir`: (exit code, stdout).
fn rdblens_local(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rdblens"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap())
}

/// A generated shard: `keys` strings of its own (some with a TTL) in two
/// databases, so every shard's figures differ.
fn shard(n: usize, keys: usize) -> Vec<u8> {
    let mut rdb = RdbBuilder::new();
    for k in 0..keys {
        let key = format!("user:{n}:{k}");
        let value = "v".repeat(10 + (n * 7 + k) % 90);
        let ttl = (k % 3 == 0).then_some(1_700_000_000_000 + (n * 1000 + k) as i64 * 60_000);
        rdb = rdb.string(key.as_bytes(), value.as_bytes(), ttl);
    }
    rdb = rdb.select(1);
    for k in 0..n + 1 {
        rdb = rdb.string(format!("session:{n}:{k}").as_bytes(), b"x", None);
    }
    rdb.finish()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// Twelve generated shards, every third gzip-compressed, stored under
/// `set/` and written to `dir` under the same names; their names in key order.
fn shard_set(store: &Store, dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for n in 0..12 {
        let plain = shard(n, 40 + n * 5);
        let (name, bytes) = if n % 3 == 1 {
            (format!("shard-{n:02}.rdb.gz"), gzip(&plain))
        } else {
            (format!("shard-{n:02}.rdb"), plain)
        };
        store.put(&format!("set/{name}"), &bytes);
        std::fs::write(dir.join(&name), &bytes).unwrap();
        names.push(name);
    }
    names
}

#[test]
fn one_object_gives_the_local_files_report() {
    let Some(store) = Store::for_test("one_object_gives_the_local_files_report") else {
        return;
    };
    let dump = std::fs::read(root().join(ALL_TYPES)).unwrap();
    store.put("backups/all-types.rdb", &dump);
    let url = format!("s3://{BUCKET}/backups/all-types.rdb");
    let (code, json, err) = rdblens_s3(
        &root(),
        store.port,
        SECRET_KEY,
        &["report", "--format", "json", &url],
    );
    assert_eq!((code, err.as_str()), (0, ""));
    let (local_code, local) = rdblens_local(&root(), &["report", "--format", "json", ALL_TYPES]);
    assert_eq!(local_code, 0);
    assert!(json.contains(&format!("\"path\": \"{url}\"")));
    assert_eq!(json.replace(&url, ALL_TYPES), local);
    // `advise` takes it too.
    let (code, plans, err) = rdblens_s3(
        &root(),
        store.port,
        SECRET_KEY,
        &["advise", "--format", "json", &url],
    );
    assert_eq!((code, err.as_str()), (0, ""));
    let (_, local) = rdblens_local(&root(), &["advise", "--format", "json", ALL_TYPES]);
    assert_eq!(plans.replace(&url, ALL_TYPES), local);
}

/// `keys` of one object with the build given reads it as it arrives, with
/// no copy on disk (a temporary directory that does not exist): the local
/// file's rows; without the build, copied to disk first, the same rows.
#[test]
fn keys_of_one_object_are_the_local_files_rows() {
    let Some(store) = Store::for_test("keys_of_one_object_are_the_local_files_rows") else {
        return;
    };
    let dump = std::fs::read(root().join(ALL_TYPES)).unwrap();
    store.put("backups/all-types.rdb", &dump);
    let url = format!("s3://{BUCKET}/backups/all-types.rdb");
    for args in [&["--jemalloc-quantum", "16"][..], &["--format", "jsonl"]] {
        let env: &[(&str, &str)] = match args[0] {
            "--jemalloc-quantum" => &[("TMPDIR", "/nonexistent/tmp")],
            _ => &[],
        };
        let mut all = vec!["keys", url.as_str(), "-q"];
        all.extend_from_slice(args);
        let (code, rows, err) = rdblens_s3_with(&root(), store.port, SECRET_KEY, &all, env);
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
        all[1] = ALL_TYPES;
        let (local_code, local) = rdblens_local(&root(), &all);
        assert_eq!(local_code, 0);
        assert!(rows.lines().count() > 50, "{args:?}");
        assert_eq!(rows, local, "{args:?}");
    }
}

/// A plain HTTP server on loopback (python3's `http.server`), as a
/// presigned URL is read: a GET of the URL as it is, nothing added.
#[test]
fn an_http_url_is_one_object() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join(ALL_TYPES), dir.path().join("all-types.rdb")).unwrap();
    let port = free_port();
    let mut server = Command::new("python3")
        .args([
            "-m",
            "http.server",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--directory",
        ])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "http.server did not listen on port {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let url = format!("http://127.0.0.1:{port}/all-types.rdb?X-Amz-Signature=0123");
    let (code, json, err) = rdblens_s3(&root(), port, SECRET_KEY, &["report", "--format", "json", &url]);
    let missing = format!("http://127.0.0.1:{port}/nothing.rdb");
    let (missing_code, _, missing_err) = rdblens_s3(&root(), port, SECRET_KEY, &["report", &missing]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!((code, err.as_str()), (0, ""));
    let (_, local) = rdblens_local(&root(), &["report", "--format", "json", ALL_TYPES]);
    assert_eq!(json.replace(&url, ALL_TYPES), local);
    assert_eq!(missing_code, 3);
    assert_eq!(
        missing_err,
        format!("rdblens: {missing}: cannot open: no such object\n")
    );
}

#[test]
fn a_prefix_or_glob_is_a_fleet_of_shards() {
    let Some(store) = Store::for_test("a_prefix_or_glob_is_a_fleet_of_shards") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let names = shard_set(&store, dir.path());
    let prefix = format!("s3://{BUCKET}/set/");
    // Three at a time: the window of shards waiting to merge is full at times.
    let (code, json, err) = rdblens_s3(
        dir.path(),
        store.port,
        SECRET_KEY,
        &["report", "--format", "json", "--jobs", "3", &prefix],
    );
    assert_eq!((code, err.as_str()), (0, ""));
    let mut args = vec!["report", "--format", "json"];
    args.extend(names.iter().map(String::as_str));
    let (local_code, local) = rdblens_local(dir.path(), &args);
    assert_eq!(local_code, 0);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let paths: Vec<&str> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    let urls: Vec<String> = names.iter().map(|n| format!("{prefix}{n}")).collect();
    assert_eq!(paths, urls);
    assert_eq!(json.replace(&format!("\"{prefix}"), "\""), local);

    let glob = format!("s3://{BUCKET}/set/*.rdb.gz");
    let (code, json, err) = rdblens_s3(
        dir.path(),
        store.port,
        SECRET_KEY,
        &["report", "--format", "json", &glob],
    );
    assert_eq!((code, err.as_str()), (0, ""));
    let gz: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| n.ends_with(".gz"))
        .collect();
    assert_eq!(
        gz,
        [
            "shard-01.rdb.gz",
            "shard-04.rdb.gz",
            "shard-07.rdb.gz",
            "shard-10.rdb.gz"
        ]
    );
    let (_, local) = rdblens_local(dir.path(), &[&["report", "--format", "json"][..], &gz].concat());
    assert_eq!(json.replace(&format!("\"{prefix}"), "\""), local);

    // `keys` of the prefix: every shard's records, in key order.
    let (code, csv, err) = rdblens_s3(dir.path(), store.port, SECRET_KEY, &["keys", &prefix]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (_, local) = rdblens_local(
        dir.path(),
        &[
            &["keys"][..],
            &names.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
    );
    assert_eq!(csv.replace(&prefix, ""), local);
    // Parquet is one file per dump: a prefix of several is refused.
    #[cfg(feature = "parquet")]
    {
        let args = ["keys", "--format", "parquet", "-o", "keys.parquet", &prefix];
        let (code, out, err) = rdblens_s3(dir.path(), store.port, SECRET_KEY, &args);
        assert_eq!((code, out.as_str()), (3, ""));
        assert_eq!(
            err,
            "rdblens: --format parquet takes one input per dump, and the object prefixes or globs hold 12 objects: name each object\n"
        );
        assert!(!dir.path().join("keys.parquet").exists());
    }
}

#[test]
fn a_shard_that_cannot_be_read_leaves_the_others_in_the_report() {
    let Some(store) = Store::for_test("a_shard_that_cannot_be_read_leaves_the_others_in_the_report") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for n in 0..4 {
        let bytes = shard(n, 30);
        store.put(&format!("mixed/shard-{n}.rdb"), &bytes);
        std::fs::write(dir.path().join(format!("shard-{n}.rdb")), &bytes).unwrap();
    }
    store.put("mixed/shard-2b.rdb", b"not a dump\n");
    let prefix = format!("s3://{BUCKET}/mixed/");
    let (code, json, err) = rdblens_s3(
        dir.path(),
        store.port,
        SECRET_KEY,
        &["report", "--format", "json", &prefix],
    );
    let why = "not read: not an RDB file: it starts with text \"not a dump\\n\", expected the magic REDIS00NN or VALKEYNNN at byte offset 0";
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains(&format!(
            "rdblens: s3://dumps/mixed/shard-2b.rdb: incomplete: {why}\n"
        )),
        "{err}"
    );
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let files: Vec<(&str, Option<&str>)> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["incomplete"]["message"].as_str()))
        .collect();
    assert_eq!(
        files,
        [
            ("s3://dumps/mixed/shard-0.rdb", None),
            ("s3://dumps/mixed/shard-1.rdb", None),
            ("s3://dumps/mixed/shard-2.rdb", None),
            ("s3://dumps/mixed/shard-2b.rdb", Some(why)),
            ("s3://dumps/mixed/shard-3.rdb", None),
        ]
    );
    // The tables name it in its place, once.
    let (code, table, _) = rdblens_s3(dir.path(), store.port, SECRET_KEY, &["report", &prefix]);
    assert_eq!(code, 3);
    let lines: Vec<&str> = table.lines().filter(|l| l.contains("shard-2b.rdb")).collect();
    assert_eq!(
        lines[0],
        format!(
            "s3://dumps/mixed/shard-2b.rdb: NOT READ: {}",
            &why["not read: ".len()..]
        )
    );
    assert!(!table.contains("INCOMPLETE"), "{table}");
    // The document is one the schema allows.
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("docs/report.schema.json")).unwrap())
            .unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The four sound shards' figures are whole.
    let (_, local) = rdblens_local(
        dir.path(),
        &[
            "report",
            "--format",
            "json",
            "shard-0.rdb",
            "shard-1.rdb",
            "shard-2.rdb",
            "shard-3.rdb",
        ],
    );
    let local: serde_json::Value = serde_json::from_str(&local).unwrap();
    for section in [
        "totals",
        "databases",
        "types",
        "top_keys",
        "prefixes",
        "ttl",
        "expiry",
    ] {
        assert_eq!(report[section], local[section], "{section}");
    }
}

#[test]
fn wrong_credentials_and_missing_objects_are_named() {
    let Some(store) = Store::for_test("wrong_credentials_and_missing_objects_are_named") else {
        return;
    };
    store.put("a.rdb", &std::fs::read(root().join(ALL_TYPES)).unwrap());
    let (code, out, err) = rdblens_s3(
        &root(),
        store.port,
        "not-the-secret",
        &["report", "s3://dumps/a.rdb"],
    );
    assert_eq!((code, out.as_str()), (3, ""));
    assert!(
        err.starts_with(
            "rdblens: s3://dumps/a.rdb: cannot open: access denied (check the credentials: environment \
             variables, profile, instance or workload identity): "
        ) && err.contains("403 Forbidden"),
        "{err}"
    );
    let (code, out, err) = rdblens_s3(&root(), store.port, SECRET_KEY, &["report", "s3://dumps/b.rdb"]);
    assert_eq!((code, out.as_str()), (3, ""));
    assert_eq!(err, "rdblens: s3://dumps/b.rdb: cannot open: no such object\n");
    let (code, _, err) = rdblens_s3(&root(), store.port, SECRET_KEY, &["check", "s3://dumps/b.rdb"]);
    assert_eq!(code, 3);
    assert_eq!(err, "rdblens: s3://dumps/b.rdb: cannot open: no such object\n");
    let (code, out, err) = rdblens_s3(&root(), store.port, SECRET_KEY, &["report", "s3://dumps/none/"]);
    assert_eq!((code, out.as_str()), (3, ""));
    assert_eq!(
        err,
        "rdblens: s3://dumps/none/: no object under it (an empty prefix, or a pattern that matches no object)\n"
    );
}

/// What the proxy does to the connection it breaks.
#[derive(Clone, Copy)]
enum Fault {
    /// Forwards this many bytes of the answer, then closes both sides.
    CutAfter(usize),
    /// Answers 503 SlowDown without asking the server.
    SlowDown,
}

/// A TCP proxy on a free loopback port in front of `upstream`, breaking
/// the first connection as `fault` says; the requests it saw (their head
/// lines) and the length of the broken connection's answer head are kept.
struct Proxy {
    port: u16,
    requests: Arc<Mutex<Vec<u8>>>,
    first_head: Arc<Mutex<Option<usize>>>,
}

impl Proxy {
    fn start(upstream: u16, fault: Fault) -> Proxy {
        Proxy::breaking(upstream, fault, 0)
    }

    /// [`Proxy::start`] breaking connection number `broken` (0: the first).
    fn breaking(upstream: u16, fault: Fault, broken: usize) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let first_head = Arc::new(Mutex::new(None));
        let (seen, head) = (Arc::clone(&requests), Arc::clone(&first_head));
        std::thread::spawn(move || {
            for (n, client) in listener.incoming().enumerate() {
                let Ok(client) = client else { return };
                let (seen, head) = (Arc::clone(&seen), Arc::clone(&head));
                let fault = (n == broken).then_some(fault);
                std::thread::spawn(move || serve(client, upstream, fault, seen, head));
            }
        });
        Proxy {
            port,
            requests,
            first_head,
        }
    }

    /// The request lines and Range headers seen, in order.
    fn seen(&self) -> Vec<String> {
        let text = String::from_utf8(self.requests.lock().unwrap().clone()).unwrap();
        text.lines()
            .filter(|l| l.starts_with("GET ") || l.to_ascii_lowercase().starts_with("range:"))
            .map(|l| l.to_ascii_lowercase())
            .collect()
    }
}

fn serve(
    mut client: TcpStream,
    upstream: u16,
    fault: Option<Fault>,
    seen: Arc<Mutex<Vec<u8>>>,
    head: Arc<Mutex<Option<usize>>>,
) {
    if let Some(Fault::SlowDown) = fault {
        let mut request = Vec::new();
        let mut byte = [0u8; 1];
        while !request.ends_with(b"\r\n\r\n") && client.read(&mut byte).unwrap_or(0) == 1 {
            request.push(byte[0]);
        }
        seen.lock().unwrap().extend_from_slice(&request);
        let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
        let answer = format!(
            "HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = client.write_all(answer.as_bytes());
        let _ = client.shutdown(Shutdown::Both);
        return;
    }
    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return;
    };
    let (mut from_client, mut to_server) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = from_client.read(&mut buf) {
            // Kept before it is sent: the answer comes after it.
            seen.lock().unwrap().extend_from_slice(&buf[..n]);
            if to_server.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to_server.shutdown(Shutdown::Write);
    });
    let (mut from_server, mut to_client) = (server, client);
    let limit = match fault {
        Some(Fault::CutAfter(bytes)) => bytes,
        _ => usize::MAX,
    };
    let (mut sent, mut answer) = (0usize, Vec::new());
    let mut buf = [0u8; 8192];
    while sent < limit {
        let Ok(n @ 1..) = from_server.read(&mut buf) else {
            break;
        };
        let n = n.min(limit - sent);
        // Only the broken connection's head is kept.
        if fault.is_some() && answer.len() < 4096 {
            answer.extend_from_slice(&buf[..n]);
            if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
                head.lock().unwrap().get_or_insert(end + 4);
            }
        }
        if to_client.write_all(&buf[..n]).is_err() {
            break;
        }
        sent += n;
    }
    let _ = to_client.shutdown(Shutdown::Both);
    let _ = from_server.shutdown(Shutdown::Both);
}

#[test]
fn a_cut_connection_is_resumed_from_the_last_byte() {
    let Some(store) = Store::for_test("a_cut_connection_is_resumed_from_the_last_byte") else {
        return;
    };
    let dump = std::fs::read(root().join(ALL_TYPES)).unwrap();
    store.put("a.rdb", &dump);
    let cut = 300_000;
    let proxy = Proxy::start(store.port, Fault::CutAfter(cut));
    let (code, json, err) = rdblens_s3(
        &root(),
        proxy.port,
        SECRET_KEY,
        &["report", "--format", "json", "s3://dumps/a.rdb"],
    );
    assert_eq!(code, 0, "{err}");
    let (_, local) = rdblens_local(&root(), &["report", "--format", "json", ALL_TYPES]);
    assert_eq!(json.replace("s3://dumps/a.rdb", ALL_TYPES), local);
    let received = cut - proxy.first_head.lock().unwrap().unwrap();
    let seen = proxy.seen();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        seen[0].starts_with("get /dumps/a.rdb http/1.1") && seen[1].starts_with("get /dumps/a.rdb http/1.1")
    );
    assert!(
        seen[2].starts_with(&format!("range: bytes={received}-")),
        "{seen:?} {received}"
    );
}

#[test]
fn an_object_of_more_than_two_parts_can_be_read_in_ranged_parts() {
    let Some(store) = Store::for_test("an_object_of_more_than_two_parts_can_be_read_in_ranged_parts") else {
        return;
    };
    // About 18 MB: the first 8 MiB part from the first GET, then two
    // ranged parts, asked for at once (always: by default only when the
    // connection is slower than the analysis, which a loopback store is not).
    let dump = shard(3, 250_000);
    let size = dump.len();
    assert!(size > 2 * PART && size < 3 * PART, "{size}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.rdb"), &dump).unwrap();
    store.put("big.rdb", &dump);
    let url = format!("s3://{BUCKET}/big.rdb");
    let (_, local) = rdblens_local(dir.path(), &["report", "--format", "json", "big.rdb"]);
    let parts = [
        format!("range: bytes={}-{}", PART, 2 * PART - 1),
        format!("range: bytes={}-{}", 2 * PART, size - 1),
    ];
    // The ranges asked for through a proxy breaking the first connection
    // as `fault` says, sorted; the report must be the local file's.
    let ranges_through = |fault: Fault, broken: usize| {
        let proxy = Proxy::breaking(store.port, fault, broken);
        let (code, json, err) = rdblens_s3_with(
            dir.path(),
            proxy.port,
            SECRET_KEY,
            &["report", "--format", "json", &url],
            &[("RDBLENS_OBJECT_PARTS", "4")],
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(json.replace(&url, "big.rdb"), local);
        let mut ranges: Vec<String> = proxy
            .seen()
            .into_iter()
            .filter(|l| l.starts_with("range:"))
            .collect();
        ranges.sort();
        (ranges, proxy)
    };
    let (ranges, _) = ranges_through(Fault::CutAfter(usize::MAX), 0);
    let mut expected = parts.to_vec();
    expected.sort();
    assert_eq!(ranges, expected);
    // The first GET cut inside the first part: resumed from the byte after
    // the last one received, then the parts as before.
    let cut = 300_000;
    let (ranges, proxy) = ranges_through(Fault::CutAfter(cut), 0);
    let received = cut - proxy.first_head.lock().unwrap().unwrap();
    let resumed: Vec<&String> = ranges.iter().filter(|r| !parts.contains(r)).collect();
    assert_eq!(resumed.len(), 1, "{ranges:?}");
    assert!(
        resumed[0].starts_with(&format!("range: bytes={received}-")),
        "{ranges:?} {received}"
    );
    assert!(parts.iter().all(|p| ranges.contains(p)), "{ranges:?}");
    // A part's own connection (the second or the third) cut inside it:
    // that part resumed from the byte after the last one received, to its
    // end, and the report the same.
    for broken in [1, 2] {
        let (ranges, proxy) = ranges_through(Fault::CutAfter(cut), broken);
        let received = (cut - proxy.first_head.lock().unwrap().unwrap()) as u64;
        let resumed: Vec<&String> = ranges.iter().filter(|r| !parts.contains(r)).collect();
        let (part, rest) = (PART as u64, size as u64);
        let either = [
            format!("range: bytes={}-{}", part + received, 2 * part - 1),
            format!("range: bytes={}-{}", 2 * part + received, rest - 1),
        ];
        assert_eq!(resumed.len(), 1, "connection {broken}: {ranges:?}");
        assert!(
            either.contains(resumed[0]),
            "connection {broken}: {ranges:?} {either:?}"
        );
        assert_eq!(ranges.len(), 3, "connection {broken}: {ranges:?}");
    }
}

#[test]
fn a_throttled_request_is_retried() {
    let Some(store) = Store::for_test("a_throttled_request_is_retried") else {
        return;
    };
    store.put("a.rdb", &std::fs::read(root().join(ALL_TYPES)).unwrap());
    let proxy = Proxy::start(store.port, Fault::SlowDown);
    let (code, json, err) = rdblens_s3(
        &root(),
        proxy.port,
        SECRET_KEY,
        &["report", "--format", "json", "s3://dumps/a.rdb"],
    );
    assert_eq!((code, err.as_str()), (0, ""));
    let (_, local) = rdblens_local(&root(), &["report", "--format", "json", ALL_TYPES]);
    assert_eq!(json.replace("s3://dumps/a.rdb", ALL_TYPES), local);
    let seen = proxy.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen.iter().all(|l| l.starts_with("get /dumps/a.rdb http/1.1")),
        "{seen:?}"
    );
}

#[test]
fn a_parts_setting_rdblens_does_not_take_is_bad_usage() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = rdblens_s3_with(
        dir.path(),
        free_port(),
        SECRET_KEY,
        &["report", "s3://dumps/a.rdb"],
        &[("RDBLENS_OBJECT_PARTS", "many")],
    );
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "rdblens: s3://dumps/a.rdb: cannot open: RDBLENS_OBJECT_PARTS is `many`: give `auto`, `1` (one GET per \
         object) or the parts to read at once (2 to 64)\n"
    );
}
