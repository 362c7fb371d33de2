//! Server URLs as inputs, against real `redis-server` processes on
//! loopback ports (docs/live.md): the snapshot a replica receives, disk-based
//! and diskless, gives the report of `redis-cli --rdb` of the same data;
//! passwords, ACL users, TLS with client certificates, Unix sockets; and
//! the faults: a replica connection killed mid-transfer, a server stopped
//! past the timeout, a wrong password, a port that speaks HTTP, a server
//! still loading, replication renamed away, a primary without --yes. Each
//! a clear error, the documented exit code, no output file, no hang.

#[path = "live_server/mod.rs"]
mod live_server;
mod support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use live_server::{mixed_data, redis_server, Server};
use serde_json::Value;

/// A fixed reference time, so that TTL figures of a live server and of
/// its file agree (the data's TTLs are in 2100).
const NOW: &str = "1800000000";
/// No run may take longer: a hang is a failure, not a stuck test.
const DEADLINE: Duration = Duration::from_secs(90);

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `rdblens ARGS` with `env`, standard input closed (not a terminal).
fn rdblens(args: &[&str], env: &[(&str, &str)]) -> Run {
    rdblens_with(args, env, |_| {})
}

/// [`rdblens`], calling `meanwhile` with the child's start time while it runs.
fn rdblens_with(args: &[&str], env: &[(&str, &str)], meanwhile: impl FnOnce(Instant)) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rdblens"));
    cmd.args(args)
        .env_remove("REDISCLI_AUTH")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        stderr.read_to_string(&mut s).unwrap();
        s
    });
    meanwhile(started);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("rdblens {args:?} hung for {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// The report JSON without what names or describes the input itself
/// (its path, aux fields, size): the rest is the data's.
fn data_part(json: &str) -> Value {
    let mut v: Value = serde_json::from_str(json).unwrap();
    let object = v.as_object_mut().unwrap();
    object.remove("files");
    object.remove("tool_version");
    // The per-shard table names each input by its path.
    object.remove("shards");
    // The server's own used_memory (an aux field) changes between saves.
    object.remove("used_memory");
    v
}

fn report_args<'a>(input: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "report",
        input,
        "--format",
        "json",
        "-o",
        out,
        "--now",
        NOW,
        "--jemalloc-quantum",
        "8",
        "--top",
        "5",
    ]
}

/// The report of `redis-cli --rdb` of `server`'s data (in its directory).
fn report_of_redis_cli_rdb(server: &Server) -> Value {
    let file = server.dir.path().join("by-redis-cli.rdb");
    server.rdb_by_redis_cli(&file);
    let out = server.dir.path().join("file.json");
    let run = rdblens(&report_args(file.to_str().unwrap(), out.to_str().unwrap()), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    data_part(&std::fs::read_to_string(out).unwrap())
}

/// The entries of `dir` (to see that nothing was left behind).
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The number in `text` right before `suffix` (` keepalives`).
fn number_before(text: &str, suffix: &str) -> u64 {
    let at = text
        .find(suffix)
        .unwrap_or_else(|| panic!("no `{suffix}` in {text}"));
    let digits: String = text[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().unwrap()
}

#[test]
fn a_disk_based_snapshot_reports_as_redis_cli_rdb_and_is_saved() {
    let Some(bin) = redis_server("a_disk_based_snapshot_reports_as_redis_cli_rdb_and_is_saved") else {
        return;
    };
    let server = Server::start(&bin, &["--repl-diskless-sync", "no"]);
    server.load(&mixed_data(2000));
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("live.json");
    let saved = work.path().join("saved.rdb");
    let url = server.url();
    let mut args = report_args(&url, out.to_str().unwrap());
    args.extend(["--yes", "--save", saved.to_str().unwrap()]);
    let run = rdblens(&args, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("{url}: snapshot by PSYNC ("))
            && run.stderr.contains(" bytes saved to disk first)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("is a primary: a snapshot makes it fork"),
        "{}",
        run.stderr
    );
    let live = std::fs::read_to_string(&out).unwrap();
    assert_eq!(data_part(&live), report_of_redis_cli_rdb(&server));
    let v: Value = serde_json::from_str(&live).unwrap();
    assert_eq!(v["files"][0]["path"], url.as_str());
    assert_eq!(v["totals"]["keys"], 2002);
    // The saved copy is the whole snapshot: its report is the same, and
    // its size is the length the server announced.
    let announced = number_before(&run.stderr, " bytes saved to disk first");
    assert_eq!(std::fs::metadata(&saved).unwrap().len(), announced);
    let again = work.path().join("saved.json");
    let run = rdblens(
        &report_args(saved.to_str().unwrap(), again.to_str().unwrap()),
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        data_part(&std::fs::read_to_string(again).unwrap()),
        data_part(&live)
    );
    assert_eq!(entries(work.path()), ["live.json", "saved.json", "saved.rdb"]);
}

#[test]
fn a_diskless_snapshot_after_keepalives_reports_as_redis_cli_rdb() {
    let Some(bin) = redis_server("a_diskless_snapshot_after_keepalives_reports_as_redis_cli_rdb") else {
        return;
    };
    // The server waits 3 s for more replicas before it saves, sending a
    // `\n` keepalive each second meanwhile.
    let server = Server::start(
        &bin,
        &["--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "3"],
    );
    server.load(&mixed_data(2000));
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("live.json");
    let url = server.url();
    let mut args = report_args(&url, out.to_str().unwrap());
    args.push("--yes");
    let run = rdblens(&args, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("snapshot by PSYNC (diskless, streamed as it is saved)"),
        "{}",
        run.stderr
    );
    assert!(number_before(&run.stderr, " keepalives") >= 2, "{}", run.stderr);
    let live = std::fs::read_to_string(&out).unwrap();
    // redis-cli waits out the same delay.
    assert_eq!(data_part(&live), report_of_redis_cli_rdb(&server));
    // Nothing announced a listening port: no replica is left listed.
    let info = server.cli(&["INFO", "replication"]);
    assert!(info.contains("connected_slaves:0"), "{info}");
}

#[test]
fn keys_advise_and_check_read_a_server_too() {
    let Some(bin) = redis_server("keys_advise_and_check_read_a_server_too") else {
        return;
    };
    let server = Server::start(&bin, &["--repl-diskless-sync", "no"]);
    server.load(&mixed_data(300));
    let file = server.dir.path().join("by-redis-cli.rdb");
    server.rdb_by_redis_cli(&file);
    let url = server.url();
    let live = rdblens(&["keys", &url, "--yes", "--quiet", "--now", NOW], &[]);
    assert_eq!(live.code, 0, "{}", live.stderr);
    let of_file = rdblens(&["keys", file.to_str().unwrap(), "--now", NOW], &[]);
    assert_eq!(of_file.code, 0, "{}", of_file.stderr);
    assert_eq!(live.stdout.lines().count(), 303);
    assert_eq!(live.stdout, of_file.stdout);
    // With the build given, read as it arrives (no temporary directory to
    // copy it to): the same rows.
    let q16 = ["--jemalloc-quantum", "16", "--format", "jsonl", "--now", NOW];
    let args = [&["keys", url.as_str(), "--yes", "--quiet"][..], &q16].concat();
    let streamed = rdblens(&args, &[("TMPDIR", "/nonexistent/tmp")]);
    assert_eq!(streamed.code, 0, "{}", streamed.stderr);
    let of_file = rdblens(&[&["keys", file.to_str().unwrap()][..], &q16].concat(), &[]);
    assert_eq!(streamed.stdout.lines().count(), 302);
    assert_eq!(streamed.stdout, of_file.stdout);
    let check = rdblens(&["check", &url, "--yes"], &[]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert!(check.stdout.contains("keys: 302"), "{}", check.stdout);
    let advise = rdblens(&["advise", &url, "--yes", "--format", "json"], &[]);
    assert_eq!(advise.code, 0, "{}", advise.stderr);
    let of_file = rdblens(&["advise", file.to_str().unwrap(), "--format", "json"], &[]);
    assert_eq!(advise.stdout, of_file.stdout);
    // A --save that cannot be written: exit 4, no report.
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("r.json");
    let run = rdblens(
        &[
            "report",
            &url,
            "--yes",
            "--save",
            "/dev/full",
            "-o",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("cannot write /dev/full: No space left on device (os error 28)"),
        "{}",
        run.stderr
    );
    assert!(entries(work.path()).is_empty());
}

#[test]
fn a_primary_needs_yes_without_a_terminal() {
    let Some(bin) = redis_server("a_primary_needs_yes_without_a_terminal") else {
        return;
    };
    let server = Server::start(&bin, &[]);
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("r.json");
    let run = rdblens(&report_args(&server.url(), out.to_str().unwrap()), &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("not going ahead without --yes (standard input is not a terminal to ask on)"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("used_memory "), "{}", run.stderr);
    assert!(entries(work.path()).is_empty());
    // Nothing was asked of the server: no fork happened.
    let info = server.cli(&["INFO", "stats"]);
    assert!(info.contains("sync_full:0"), "{info}");
}

#[test]
fn passwords_from_the_url_or_rediscli_auth_and_a_wrong_one() {
    let Some(bin) = redis_server("passwords_from_the_url_or_rediscli_auth_and_a_wrong_one") else {
        return;
    };
    let server = Server::start_in(
        &bin,
        tempfile::tempdir().unwrap(),
        &["--requirepass", "s3cret", "--repl-diskless-sync", "no"],
        &["--no-auth-warning", "-a", "s3cret"],
    );
    server.load(&mixed_data(50));
    let plain = server.url();
    let with_password = format!("redis://:s3cret@127.0.0.1:{}", server.port);
    let ok = rdblens(&["check", &with_password, "--yes"], &[]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(!ok.stderr.contains("s3cret") && !ok.stdout.contains("s3cret"));
    let ok = rdblens(&["check", &plain, "--yes"], &[("REDISCLI_AUTH", "s3cret")]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("r.json");
    let wrong = format!("redis://:nope@127.0.0.1:{}", server.port);
    let run = rdblens(&report_args(&wrong, out.to_str().unwrap()), &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "rdblens: redis://127.0.0.1:{}: cannot open: authentication failed: WRONGPASS",
            server.port
        )),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("nope"), "{}", run.stderr);
    let run = rdblens(&report_args(&plain, out.to_str().unwrap()), &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("authentication failed: NOAUTH Authentication required. (the server needs a password: give it in the URL or in REDISCLI_AUTH)"),
        "{}",
        run.stderr
    );
    assert!(entries(work.path()).is_empty());
}

#[test]
fn an_acl_user_with_the_documented_permissions_and_one_without() {
    let Some(bin) = redis_server("an_acl_user_with_the_documented_permissions_and_one_without") else {
        return;
    };
    let server = Server::start(&bin, &["--repl-diskless-sync", "no"]);
    server.load(&mixed_data(50));
    server.cli(&[
        "ACL",
        "SETUSER",
        "snap",
        "on",
        ">pw",
        "+psync",
        "+replconf",
        "+ping",
    ]);
    server.cli(&[
        "ACL",
        "SETUSER",
        "nosync",
        "on",
        ">pw",
        "+ping",
        "+info",
        "+replconf",
    ]);
    server.cli(&["ACL", "SETUSER", "noreplconf", "on", ">pw", "+ping", "+psync"]);
    let url = |user: &str| format!("redis://{user}:pw@127.0.0.1:{}", server.port);
    let ok = rdblens(&["check", &url("snap"), "--yes"], &[]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    // Without +info its role cannot be told: the fork warning says so.
    assert!(ok.stderr.contains("INFO is refused (NOPERM"), "{}", ok.stderr);
    let run = rdblens(&["check", &url("nosync"), "--yes"], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("the user may not run PSYNC (NOPERM")
            && run
                .stderr
                .contains("replication needs +psync +replconf +ping (docs/live.md)"),
        "{}",
        run.stderr
    );
    let run = rdblens(&["check", &url("noreplconf"), "--yes"], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("the user may not run REPLCONF (NOPERM"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_unix_socket() {
    let Some(bin) = redis_server("a_unix_socket") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("redis.sock");
    let server = Server::start_in(
        &bin,
        dir,
        &[
            "--unixsocket",
            socket.to_str().unwrap(),
            "--repl-diskless-sync",
            "no",
        ],
        &[],
    );
    server.load(&mixed_data(20));
    let url = format!("unix://{}", socket.display());
    let run = rdblens(&["check", &url, "--yes"], &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("keys: 22"), "{}", run.stdout);
}

#[test]
fn replication_renamed_away_advises_via_dump() {
    let Some(bin) = redis_server("replication_renamed_away_advises_via_dump") else {
        return;
    };
    let server = Server::start(
        &bin,
        &["--rename-command", "SYNC", "", "--rename-command", "PSYNC", ""],
    );
    let run = rdblens(&["check", &server.url(), "--yes"], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("the server refuses replication (PSYNC: ERR unknown command 'PSYNC'")
            && run.stderr.contains("; SYNC: ERR unknown command 'SYNC'")
            && run.stderr.contains("use --via dump"),
        "{}",
        run.stderr
    );
}

/// A server holding 2,000 keys that it sends to a replica diskless, at
/// once, 2 ms a key: the transfer takes 4 s, long enough to cut or stop.
fn slow_diskless_server(test: &str) -> Option<Server> {
    let bin = redis_server(test)?;
    let server = Server::start(
        &bin,
        &[
            "--repl-diskless-sync",
            "yes",
            "--repl-diskless-sync-delay",
            "0",
            "--rdb-key-save-delay",
            "2000",
        ],
    );
    server.load(&mixed_data(2000));
    Some(server)
}

#[test]
fn a_replica_connection_killed_mid_transfer_leaves_no_output() {
    let Some(server) = slow_diskless_server("a_replica_connection_killed_mid_transfer_leaves_no_output")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("r.json");
    let saved = work.path().join("saved.rdb");
    let url = server.url();
    let mut args = report_args(&url, out.to_str().unwrap());
    args.extend(["--yes", "--save", saved.to_str().unwrap()]);
    let run = rdblens_with(&args, &[], |_| {
        std::thread::sleep(Duration::from_millis(1500));
        let killed = server.cli(&["CLIENT", "KILL", "TYPE", "replica"]);
        assert_eq!(killed.trim(), "1", "{killed}");
    });
    assert_eq!(run.code, 3, "{}", run.stderr);
    let received = number_before(&run.stderr, " bytes of the snapshot: the transfer was cut");
    assert!(received > 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("rdblens: {url}: the connection closed after ")),
        "{}",
        run.stderr
    );
    assert!(entries(work.path()).is_empty(), "{:?}", entries(work.path()));
    assert!(run.stdout.is_empty());
}

#[test]
fn a_server_stopped_past_the_timeout_fails_without_hanging() {
    let Some(server) = slow_diskless_server("a_server_stopped_past_the_timeout_fails_without_hanging") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("r.json");
    let url = server.url();
    // Stopped mid-transfer.
    let mut args = report_args(&url, out.to_str().unwrap());
    args.extend(["--yes", "--timeout", "2"]);
    let run = rdblens_with(&args, &[], |_| {
        std::thread::sleep(Duration::from_millis(1500));
        server.signal("STOP");
    });
    server.signal("CONT");
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("no byte of the snapshot for 2 s after ")
            && run.stderr.contains("the server stopped sending"),
        "{}",
        run.stderr
    );
    assert!(entries(work.path()).is_empty());
    // Stopped before the first reply.
    server.signal("STOP");
    let started = Instant::now();
    let run = rdblens(&["check", &url, "--yes", "--timeout", "1"], &[]);
    server.signal("CONT");
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        run.stderr
            .contains("no answer for 1 s waiting for the reply to INFO (--timeout)"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_port_that_speaks_http_is_not_a_redis_server() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let http = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut request = [0u8; 256];
        let _ = conn.read(&mut request);
        conn.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .unwrap();
    });
    let url = format!("redis://127.0.0.1:{port}");
    let run = rdblens(&["check", &url, "--yes", "--timeout", "5"], &[]);
    http.join().unwrap();
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "rdblens: {url}: cannot open: not a Redis server: to INFO, it answered `HTTP/1.1 400 Bad Request`"
        )),
        "{}",
        run.stderr
    );
    // Nothing listens: refused at once.
    let closed = format!("redis://127.0.0.1:{}", live_server::free_port());
    let run = rdblens(&["check", &closed, "--yes"], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("cannot connect: Connection refused"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_server_still_loading_says_so() {
    let Some(bin) = redis_server("a_server_still_loading_says_so") else {
        return;
    };
    // A dump to load, then a restart that loads it at 2 ms per key.
    let first = Server::start(&bin, &[]);
    first.load(&mixed_data(3000));
    first.cli(&["SAVE"]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(first.dir.path().join("dump.rdb"), dir.path().join("dump.rdb")).unwrap();
    drop(first);
    // Events (connections) are served every 1 KiB loaded, not 2 MiB.
    let server = Server::start_in(
        &bin,
        dir,
        &[
            "--key-load-delay",
            "2000",
            "--loading-process-events-interval-bytes",
            "1024",
        ],
        &[],
    );
    assert!(server.cli_output(&["PING"]).contains("LOADING"));
    let run = rdblens(&["check", &server.url(), "--yes"], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "LOADING Redis is loading the dataset in memory: try again when the server has loaded its data"
        ),
        "{}",
        run.stderr
    );
}

/// The openssl program the TLS test found.
static OPENSSL: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// `openssl ARGS` in `dir`, which must succeed.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new(OPENSSL.get().unwrap())
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a server certificate for 127.0.0.1 (and the name cache.test)
/// and a client certificate, both signed by the CA, in `dir`.
fn make_certificates(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-subj",
            "/CN=rdblens test CA",
        ],
    );
    for (name, ext) in [
        ("server", "subjectAltName=IP:127.0.0.1,DNS:cache.test\n"),
        ("client", "extendedKeyUsage=clientAuth\n"),
    ] {
        std::fs::write(dir.join(format!("{name}.ext")), ext).unwrap();
        openssl(
            dir,
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
                "-subj",
                &format!("/CN={name}"),
            ],
        );
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-out",
                &format!("{name}.crt"),
                "-extfile",
                &format!("{name}.ext"),
            ],
        );
    }
}

#[test]
fn tls_with_a_ca_and_client_certificates() {
    let Some(bin) = redis_server("tls_with_a_ca_and_client_certificates") else {
        return;
    };
    let Some(openssl) = support::real_program(
        "RDBLENS_OPENSSL",
        &["/usr/bin/openssl"],
        "openssl",
        "tls_with_a_ca_and_client_certificates",
    ) else {
        return;
    };
    let _ = OPENSSL.set(openssl);
    let certs = tempfile::tempdir().unwrap();
    make_certificates(certs.path());
    let file = |name: &str| certs.path().join(name).to_str().unwrap().to_string();
    let (ca, cert, key) = (file("ca.crt"), file("client.crt"), file("client.key"));
    let server = Server::start_in(
        &bin,
        tempfile::tempdir().unwrap(),
        &[
            "--tls-port",
            "--tls-cert-file",
            &file("server.crt"),
            "--tls-key-file",
            &file("server.key"),
            "--tls-ca-cert-file",
            &ca,
            "--tls-auth-clients",
            "yes",
            "--repl-diskless-sync",
            "no",
        ],
        &["--tls", "--cacert", &ca, "--cert", &cert, "--key", &key],
    );
    server.load(&mixed_data(40));
    let url = format!("rediss://127.0.0.1:{}", server.port);
    let ok = rdblens(
        &[
            "check",
            &url,
            "--yes",
            "--tls-ca",
            &ca,
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
        ],
        &[],
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(ok.stdout.contains("keys: 42"), "{}", ok.stdout);
    // The certificate names cache.test too: checked by that name (SNI).
    let ok = rdblens(
        &[
            "check",
            &url,
            "--yes",
            "--tls-ca",
            &ca,
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
            "--tls-sni",
            "cache.test",
        ],
        &[],
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    let run = rdblens(
        &[
            "check",
            &url,
            "--yes",
            "--tls-ca",
            &ca,
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
            "--tls-sni",
            "other.test",
        ],
        &[],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("TLS: the TLS handshake failed: invalid peer certificate: certificate not valid for name \"other.test\""), "{}", run.stderr);
    // Not the system's CAs.
    let run = rdblens(
        &["check", &url, "--yes", "--tls-cert", &cert, "--tls-key", &key],
        &[],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("invalid peer certificate: UnknownIssuer"),
        "{}",
        run.stderr
    );
    // --tls-insecure takes the certificate unchecked.
    let ok = rdblens(
        &[
            "check",
            &url,
            "--yes",
            "--tls-insecure",
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
        ],
        &[],
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    // No client certificate: the server hangs up.
    let run = rdblens(&["check", &url, "--yes", "--tls-ca", &ca], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "rdblens: {url}: cannot open: waiting for the reply to INFO: received fatal alert: CertificateRequired: \
             the server wants a client certificate (--tls-cert and --tls-key)\n"
        )),
        "{}",
        run.stderr
    );
}

/// Removes every `expiry_ms` of `v` (a DUMP walk's expiries are the
/// server's PTTL as of the read, off by up to a millisecond or so), after
/// checking that each is within `slack_ms` of `reference`'s.
fn drop_expiry_ms(v: &mut Value, reference: &mut Value, slack_ms: i64) {
    match (v, reference) {
        (Value::Object(a), Value::Object(b)) => {
            if let (Some(x), Some(y)) = (a.remove("expiry_ms"), b.remove("expiry_ms")) {
                match (x.as_i64(), y.as_i64()) {
                    (Some(x), Some(y)) => assert!((x - y).abs() <= slack_ms, "expiry_ms {x} vs {y}"),
                    _ => assert_eq!(x, y),
                }
            }
            for (k, x) in a.iter_mut() {
                if let Some(y) = b.get_mut(k) {
                    drop_expiry_ms(x, y, slack_ms);
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (x, y) in a.iter_mut().zip(b.iter_mut()) {
                drop_expiry_ms(x, y, slack_ms);
            }
        }
        _ => {}
    }
}

#[test]
fn via_dump_reads_a_server_whose_replication_is_renamed_away() {
    let Some(bin) = redis_server("via_dump_reads_a_server_whose_replication_is_renamed_away") else {
        return;
    };
    let server = Server::start(
        &bin,
        &["--rename-command", "SYNC", "", "--rename-command", "PSYNC", ""],
    );
    server.load(&mixed_data(1500));
    // The file to compare with: the server's own save.
    server.cli(&["SAVE"]);
    let file = server.dir.path().join("dump.rdb");
    let work = tempfile::tempdir().unwrap();
    let (live_json, file_json) = (work.path().join("live.json"), work.path().join("file.json"));
    let url = server.url();
    let mut args = report_args(&url, live_json.to_str().unwrap());
    args.extend(["--via", "dump"]);
    let run = rdblens(&args, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let walk_line = "a DUMP walk, not a point-in-time snapshot: 1502 keys read over ";
    assert!(
        run.stderr.contains(&format!("rdblens: {url}: {walk_line}")),
        "{}",
        run.stderr
    );
    // No fork, so no question on a primary.
    assert!(!run.stderr.contains("is a primary"), "{}", run.stderr);
    let of_file = rdblens(
        &report_args(file.to_str().unwrap(), file_json.to_str().unwrap()),
        &[],
    );
    assert_eq!(of_file.code, 0, "{}", of_file.stderr);
    let live_text = std::fs::read_to_string(&live_json).unwrap();
    let live: Value = serde_json::from_str(&live_text).unwrap();
    let warnings = live["files"][0]["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].as_str().unwrap().starts_with(walk_line),
        "{warnings:?}"
    );
    assert_eq!(live["files"][0]["checksum"], "valid");
    assert!(
        warnings[0]
            .as_str()
            .unwrap()
            .ends_with("; idle times by OBJECT IDLETIME"),
        "{warnings:?}"
    );
    let mut live = data_part(&live_text);
    let mut of_file = data_part(&std::fs::read_to_string(&file_json).unwrap());
    drop_expiry_ms(&mut live, &mut of_file, 1000);
    drop_idle_seconds(&mut live, 1502);
    drop_idle_seconds(&mut of_file, 0);
    assert_eq!(live, of_file);
}

/// Removes the idle times of `v` (the access and hot-and-big sections,
/// each key's `idle_seconds`), after checking that `keys` keys carry one: a DUMP walk
/// reads them on a server that keeps them, its save (under noeviction)
/// writes none.
fn drop_idle_seconds(v: &mut Value, keys: u64) {
    let access = v.as_object_mut().unwrap().remove("access").unwrap();
    assert_eq!(access["idle_seconds"]["count"], keys, "{access}");
    assert_eq!(access["lfu_freq"]["count"], 0, "{access}");
    // The hot-and-big section is there when the keys carry idle times.
    match v.as_object_mut().unwrap().remove("hot_and_big") {
        Some(heat) => assert_eq!(heat["keys_with_access"], keys, "{heat}"),
        None => assert_eq!(keys, 0),
    }
    fn walk(v: &mut Value) {
        match v {
            Value::Object(o) => {
                if let Some(idle) = o.get_mut("idle_seconds") {
                    *idle = Value::Null;
                }
                o.values_mut().for_each(walk);
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(v);
}

#[test]
fn via_dump_measures_big_keys_paces_itself_and_names_missing_permissions() {
    let Some(bin) = redis_server("via_dump_measures_big_keys_paces_itself_and_names_missing_permissions")
    else {
        return;
    };
    let server = Server::start(&bin, &[]);
    server.load(&mixed_data(50));
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("live.json");
    let url = server.url();
    // The size guard: the 100,000-byte string and the 600-field hash are
    // measured, not read.
    let mut args = report_args(&url, out.to_str().unwrap());
    args.extend(["--via", "dump", "--max-dump", "10000"]);
    let run = rdblens(&args, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let live: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(live["totals"]["keys"], 50);
    let warnings: Vec<&str> = live["files"][0]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    let mut measured = warnings[1..].to_vec();
    measured.sort();
    assert!(
        measured[0].starts_with("blob:big: not read (MEMORY USAGE ")
            && measured[0].ends_with(
                " bytes is above --max-dump 10000): a string, length 100000; left out of every figure"
            ),
        "{measured:?}"
    );
    assert!(
        measured[1].starts_with("hash:big: not read (MEMORY USAGE ")
            && measured[1].contains("a hash, length 600;"),
        "{measured:?}"
    );
    // --rate 400: one SCAN, 4 commands per key (TYPE, PTTL, MEMORY USAGE,
    // OBJECT IDLETIME), one DUMP per key read and one length command per
    // key measured.
    let started = Instant::now();
    let run = rdblens(
        &[
            "check",
            &url,
            "--via",
            "dump",
            "--rate",
            "400",
            "--max-dump",
            "10000",
        ],
        &[],
    );
    let commands = 1 + 4 * 52 + 50 + 2;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(" with {commands} commands ")),
        "{}",
        run.stderr
    );
    assert!(started.elapsed() >= Duration::from_secs_f64(commands as f64 / 400.0 - 0.05));
    // A user without +dump.
    server.cli(&[
        "ACL", "SETUSER", "nodump", "on", ">pw", "%R~*", "+scan", "+type", "+pttl", "+memory", "+info",
    ]);
    let nodump = format!("redis://nodump:pw@127.0.0.1:{}", server.port);
    let run = rdblens(&["check", &nodump, "--via", "dump"], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("the user may not run DUMP (NOPERM")
            && run
                .stderr
                .contains("--via dump needs +scan +type +pttl +dump +memory"),
        "{}",
        run.stderr
    );
    // --rate belongs to --via dump.
    let run = rdblens(&["check", &url, "--rate", "5"], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--rate paces a DUMP walk: give it with --via dump"),
        "{}",
        run.stderr
    );
}

/// `OBJECT SUBCOMMAND key` for each of `keys`, as numbers.
fn object_figures(server: &Server, subcommand: &str, keys: &[String]) -> BTreeMap<String, u64> {
    keys.iter()
        .map(|k| {
            let answer = server.cli(&["OBJECT", subcommand, k]);
            let n = answer
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("OBJECT {subcommand} {k}: {answer}"));
            (k.clone(), n)
        })
        .collect()
}

/// A `--via dump` report of `url` with every key in the access lists.
fn walk_report(url: &str, out: &Path) -> (Run, Value) {
    let out_text = out.to_str().unwrap();
    let mut args = report_args(url, out_text);
    let top = args.iter().position(|&a| a == "--top").unwrap();
    args[top + 1] = "100";
    args.extend(["--via", "dump"]);
    let run = rdblens(&args, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    (run, report)
}

/// `(key, figure)` of a top list (`access.hottest`, `access.coldest`).
fn listed(report: &Value, list: &str, figure: &str) -> Vec<(String, u64)> {
    report["access"][list]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["key"].as_str().unwrap().to_string(),
                k[figure].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The buckets of a histogram of values below 1024 (counted exactly).
fn exact_buckets(values: impl Iterator<Item = u64>) -> Value {
    let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(v, n)| (v.to_string(), Value::from(n)))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

#[test]
fn via_dump_carries_the_lfu_counters_object_freq_gives() {
    let Some(bin) = redis_server("via_dump_carries_the_lfu_counters_object_freq_gives") else {
        return;
    };
    // lfu-log-factor 0: every read adds one to the counter; decay-time 0:
    // counters never decay, so they stay as read until the walk.
    let server = Server::start(
        &bin,
        &[
            "--maxmemory-policy",
            "allkeys-lfu",
            "--lfu-log-factor",
            "0",
            "--lfu-decay-time",
            "0",
        ],
    );
    let keys: Vec<String> = (0..30).map(|i| format!("hot:{i:02}")).collect();
    let mut commands = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        commands.push(vec!["SET".to_string(), k.clone(), "v".repeat(i + 1)]);
        for _ in 0..3 * i {
            commands.push(vec!["GET".to_string(), k.clone()]);
        }
    }
    server.load(&commands);
    let url = server.url();
    let work = tempfile::tempdir().unwrap();
    // Each walk is checked against OBJECT FREQ as of just before it (its
    // DUMPs then count as reads).
    let check = |url: &str, out: &str, commands: u64| {
        let freqs = object_figures(&server, "FREQ", &keys);
        let (run, report) = walk_report(url, &work.path().join(out));
        assert!(
            run.stderr.contains(" 30 keys read over ")
                && run.stderr.contains(&format!(" with {commands} commands "))
                && run.stderr.ends_with("; LFU counters by OBJECT FREQ\n"),
            "{}",
            run.stderr
        );
        let histogram = &report["access"]["lfu_freq"];
        assert_eq!(histogram["buckets"], exact_buckets(freqs.values().copied()));
        assert_eq!(histogram["count"], 30);
        assert_eq!(histogram["sum"], freqs.values().sum::<u64>());
        assert_eq!(report["access"]["idle_seconds"]["count"], 0);
        let mut hottest: Vec<(String, u64)> = freqs.clone().into_iter().collect();
        hottest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        assert_eq!(listed(&report, "hottest", "lfu_freq"), hottest);
        freqs
    };
    // CONFIG GET maxmemory-policy says LFU: SCAN, 4 commands per key, DUMP.
    let freqs = check(&url, "lfu.json", 1 + 4 * 30 + 30);
    // A new key starts at 5; each of the 3i reads added one.
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(freqs[k], 5 + 3 * i as u64, "{k}");
    }
    // The documented walk user, without CONFIG: OBJECT FREQ on the first
    // key tells (one more command), then the same.
    server.cli(&[
        "ACL", "SETUSER", "walker", "on", ">pw", "%R~*", "+scan", "+type", "+pttl", "+memory", "+dump",
        "+info", "+object",
    ]);
    let walker = format!("redis://walker:pw@127.0.0.1:{}", server.port);
    let again = check(&walker, "walker.json", 1 + 1 + 4 * 30 + 30);
    // The first walk's DUMPs were reads: every counter grew by one.
    for k in &keys {
        assert_eq!(again[k], freqs[k] + 1, "{k}");
    }
    // CONFIG allowed, OBJECT not: the walk goes on without, and says so once.
    server.cli(&[
        "ACL",
        "SETUSER",
        "noobject",
        "on",
        ">pw",
        "%R~*",
        "+scan",
        "+type",
        "+pttl",
        "+memory",
        "+dump",
        "+info",
        "+config|get",
    ]);
    let noobject = format!("redis://noobject:pw@127.0.0.1:{}", server.port);
    let (run, report) = walk_report(&noobject, &work.path().join("noobject.json"));
    let unread = "; idle times and LFU counters not read: the user may not run OBJECT FREQ \
                  (NOPERM this user has no permissions to run the 'object|freq' command)";
    assert_eq!(run.stderr.matches(unread).count(), 1, "{}", run.stderr);
    assert_eq!(report["totals"]["keys"], 30);
    assert_eq!(report["access"]["lfu_freq"]["count"], 0);
    let warnings = report["files"][0]["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].as_str().unwrap().ends_with(unread), "{warnings:?}");
}

#[test]
fn via_dump_carries_idle_times_within_the_walk_of_object_idletime() {
    let Some(bin) = redis_server("via_dump_carries_idle_times_within_the_walk_of_object_idletime") else {
        return;
    };
    let server = Server::start(&bin, &["--maxmemory-policy", "allkeys-lru"]);
    let cold: Vec<String> = (0..10).map(|i| format!("cold:{i}")).collect();
    let warm: Vec<String> = (0..10).map(|i| format!("warm:{i}")).collect();
    let set = |k: &String| vec!["SET".to_string(), k.clone(), "v".to_string()];
    server.load(&cold.iter().chain(&warm).map(set).collect::<Vec<_>>());
    // The LRU clock counts whole seconds: after 3 s the cold keys are idle
    // 2 s or more; the warm ones are read again.
    std::thread::sleep(Duration::from_secs(3));
    let get = |k: &String| vec!["GET".to_string(), k.clone()];
    server.load(&warm.iter().map(get).collect::<Vec<_>>());
    let all: Vec<String> = cold.iter().chain(&warm).cloned().collect();
    let before = object_figures(&server, "IDLETIME", &all);
    let started = Instant::now();
    let work = tempfile::tempdir().unwrap();
    let (run, report) = walk_report(&server.url(), &work.path().join("lru.json"));
    let walk_seconds = started.elapsed().as_secs() + 1;
    assert!(
        run.stderr.ends_with("; idle times by OBJECT IDLETIME\n"),
        "{}",
        run.stderr
    );
    assert_eq!(report["access"]["idle_seconds"]["count"], 20);
    assert_eq!(report["access"]["lfu_freq"]["count"], 0);
    let coldest = listed(&report, "coldest", "idle_seconds");
    assert_eq!(coldest.len(), 20);
    for (key, idle) in &coldest {
        let was = before[key];
        assert!(
            (was..=was + walk_seconds).contains(idle),
            "{key}: idle {idle} s in the walk, {was} s by OBJECT IDLETIME before it"
        );
    }
    // The cold keys lead the list.
    let mut first: Vec<&str> = coldest[..10].iter().map(|(k, _)| k.as_str()).collect();
    first.sort();
    assert_eq!(first, cold.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(coldest[9].1 >= 2 && coldest[10].1 < coldest[9].1, "{coldest:?}");
    // A user without +object or +config: OBJECT FREQ's refusal is NOPERM,
    // the walk goes on without.
    server.cli(&[
        "ACL", "SETUSER", "plain", "on", ">pw", "%R~*", "+scan", "+type", "+pttl", "+memory", "+dump",
    ]);
    let plain = format!("redis://plain:pw@127.0.0.1:{}", server.port);
    let (run, report) = walk_report(&plain, &work.path().join("plain.json"));
    assert!(
        run.stderr.contains(
            "; idle times and LFU counters not read: the user may not run OBJECT FREQ (NOPERM this user \
             has no permissions to run the 'object|freq' command)\n"
        ),
        "{}",
        run.stderr
    );
    // SCAN, the probe, 3 commands per key, DUMP.
    assert!(run.stderr.contains(" with 82 commands "), "{}", run.stderr);
    assert_eq!(report["totals"]["keys"], 20);
    assert_eq!(report["access"]["idle_seconds"]["count"], 0);
}

/// The cluster hash slot of `key` (CRC16/XMODEM of its hash tag or whole
/// name, modulo 16,384).
fn key_slot(key: &str) -> u16 {
    let bytes = key.as_bytes();
    let tagged = bytes.iter().position(|&b| b == b'{').and_then(|open| {
        let close = bytes[open + 1..].iter().position(|&b| b == b'}')?;
        (close > 0).then(|| &bytes[open + 1..open + 1 + close])
    });
    let mut crc: u16 = 0;
    for &b in tagged.unwrap_or(bytes) {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc % 16384
}

/// What rdblens judges a shard by in `node`'s `CLUSTER SHARDS`: for each
/// shard that serves slots, the ports of its nodes with role `replica` and
/// health `online` (the nodes rdblens reads; a shard without one is read
/// from its primary). And the reply as JSON, for a failure's message.
fn online_replicas_by_shard(node: &Server) -> (Vec<Vec<u16>>, String) {
    let text = node.cli(&["--json", "CLUSTER", "SHARDS"]);
    let reply: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("CLUSTER SHARDS --json: {e}: {text}"));
    let shards = reply
        .as_array()
        .unwrap()
        .iter()
        .filter(|shard| shard["slots"].as_array().is_some_and(|s| !s.is_empty()))
        .map(|shard| {
            shard["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|n| n["role"] == "replica" && n["health"] == "online")
                .map(|n| u16::try_from(n["port"].as_u64().unwrap()).unwrap())
                .collect()
        })
        .collect();
    (shards, text)
}

/// `INFO` field `name` of `server`.
fn info_field(server: &Server, name: &str) -> String {
    let info = server.cli(&["INFO"]);
    let line = info
        .lines()
        .find(|l| l.starts_with(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in INFO"));
    line.trim_end()[name.len() + 1..].to_string()
}

#[test]
fn a_cluster_node_stands_for_its_cluster_read_from_replicas() {
    let Some(bin) = redis_server("a_cluster_node_stands_for_its_cluster_read_from_replicas") else {
        return;
    };
    let nodes: Vec<Server> = (0..6)
        .map(|_| {
            Server::start(
                &bin,
                &["--cluster-enabled", "yes", "--repl-diskless-sync-delay", "0"],
            )
        })
        .collect();
    let addresses: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
    let mut create = vec!["--cluster", "create"];
    create.extend(addresses.iter().map(String::as_str));
    create.extend(["--cluster-replicas", "1", "--cluster-yes"]);
    let out = nodes[0].cli_output(&create);
    assert!(out.contains("[OK] All 16384 slots covered."), "{out}");
    // Until every node agrees and every replica has its data set.
    let started = Instant::now();
    loop {
        let ready = nodes
            .iter()
            .all(|n| info_field(n, "role") == "master" || info_field(n, "master_link_status") == "up")
            && nodes
                .iter()
                .all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"));
        if ready {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the cluster did not settle"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let primaries: Vec<&Server> = nodes
        .iter()
        .filter(|n| info_field(n, "role") == "master")
        .collect();
    let mut replicas: Vec<u16> = nodes
        .iter()
        .filter(|n| info_field(n, "role") == "slave")
        .map(|n| n.port)
        .collect();
    replicas.sort();
    assert_eq!((primaries.len(), replicas.len()), (3, 3));
    // Each key sent to the primary that serves its slot.
    let owner = |slot: u16| -> &Server {
        primaries
            .iter()
            .find(|p| {
                let nodes = p.cli(&["CLUSTER", "NODES"]);
                let mine = nodes.lines().find(|l| l.contains("myself")).unwrap();
                mine.split(' ').skip(8).any(|range| {
                    let (a, b) = range.split_once('-').unwrap_or((range, range));
                    (a.parse::<u16>().unwrap()..=b.parse::<u16>().unwrap()).contains(&slot)
                })
            })
            .unwrap()
    };
    let mut per_primary: Vec<Vec<Vec<String>>> = vec![Vec::new(); 3];
    let mut slot_owner = std::collections::HashMap::new();
    for command in mixed_data(600) {
        let slot = key_slot(&command[1]);
        let port = *slot_owner.entry(slot).or_insert_with(|| owner(slot).port);
        let i = primaries.iter().position(|p| p.port == port).unwrap();
        per_primary[i].push(command);
    }
    for (p, commands) in primaries.iter().zip(&per_primary) {
        p.load(commands);
    }
    // The replicas have it all.
    let started = Instant::now();
    while primaries.iter().any(|p| {
        info_field(p, "master_repl_offset")
            != info_field(p, "slave0")
                .split("offset=")
                .nth(1)
                .unwrap()
                .split(',')
                .next()
                .unwrap()
    }) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "replicas did not catch up"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Until the node asked lists each shard's replica in its CLUSTER SHARDS
    // with role `replica` and health `online`: what rdblens picks a replica
    // by. A node learns another's role and replication offset only from
    // that node's own cluster-bus messages, seconds apart (up to half the
    // node timeout): a replica it has not heard from since CLUSTER
    // REPLICATE is still a master without slots there (`online`, as every
    // master is) and its shard has no replica, so rdblens reads the primary
    // at once (no replica to wait for); one whose offset it last heard as 0
    // is `loading`. Six `online`s in the reply do not tell the two apart.
    let started = Instant::now();
    loop {
        let (shards, reply) = online_replicas_by_shard(primaries[0]);
        let mut online: Vec<u16> = shards.concat();
        online.sort();
        if shards.len() == 3 && shards.iter().all(|s| !s.is_empty()) && online == replicas {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "after 30 s, CLUSTER SHARDS of the node asked (port {}) still does not list replicas \
             {replicas:?} as online, one in each of the 3 shards with slots: {reply}",
            primaries[0].port
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let full_syncs: Vec<String> = primaries.iter().map(|p| info_field(p, "sync_full")).collect();
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("cluster.json");
    let url = primaries[0].url();
    // A primary's URL; no --yes: only replicas are read.
    let run = rdblens(&report_args(&url, out.to_str().unwrap()), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "rdblens: {url}: a cluster of 3 shards, all 16384 slots served; reading "
        )),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.matches(" (replica)").count(), 3, "{}", run.stderr);
    // No primary forked for rdblens.
    let after: Vec<String> = primaries.iter().map(|p| info_field(p, "sync_full")).collect();
    assert_eq!(after, full_syncs);
    let live_text = std::fs::read_to_string(&out).unwrap();
    let live: Value = serde_json::from_str(&live_text).unwrap();
    let mut shard_ports: Vec<u16> = live["shards"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["path"]
                .as_str()
                .unwrap()
                .rsplit(':')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    shard_ports.sort();
    assert_eq!(shard_ports, replicas);
    assert_eq!(live["totals"]["keys"], 602);
    // The same as the primaries' snapshots by redis-cli, in one run.
    let files: Vec<String> = primaries
        .iter()
        .map(|p| {
            let file = p.dir.path().join("by-redis-cli.rdb");
            p.rdb_by_redis_cli(&file);
            file.to_str().unwrap().to_string()
        })
        .collect();
    let file_json = work.path().join("files.json");
    let mut args = report_args(&files[0], file_json.to_str().unwrap());
    args.insert(2, &files[1]);
    args.insert(3, &files[2]);
    let run = rdblens(&args, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let of_files = data_part(&std::fs::read_to_string(&file_json).unwrap());
    assert_eq!(data_part(&live_text), of_files);
    // Key by key from the replicas (READONLY): the same keys and figures
    // (expiries as of the walk).
    let walked = work.path().join("walked.json");
    let mut args = report_args(&url, walked.to_str().unwrap());
    args.extend(["--via", "dump"]);
    let run = rdblens(&args, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr
            .matches("a DUMP walk, not a point-in-time snapshot: ")
            .count(),
        3,
        "{}",
        run.stderr
    );
    let mut walked = data_part(&std::fs::read_to_string(&walked).unwrap());
    let mut of_files = of_files;
    drop_expiry_ms(&mut walked, &mut of_files, 1000);
    drop_idle_seconds(&mut walked, 602);
    drop_idle_seconds(&mut of_files, 0);
    assert_eq!(walked, of_files);
    // Slots nobody serves: refused, with where.
    let first = primaries.iter().find(|p| owner(0).port == p.port).unwrap();
    first.cli(&["CLUSTER", "DELSLOTSRANGE", "0", "99"]);
    let run = rdblens(&["check", &first.url()], &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("a cluster whose shards serve no node for slots 0-99: its data would be incomplete"),
        "{}",
        run.stderr
    );
}
