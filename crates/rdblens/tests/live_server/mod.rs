//! Real `redis-server` processes for the live-source tests: each on a free
//! loopback port, in its own temporary directory, killed when dropped.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support;

/// Debian's redis-server (or `RDBLENS_REDIS_SERVER`), or the skip of `test`
/// (a failure under CI).
pub fn redis_server(test: &str) -> Option<PathBuf> {
    support::real_program(
        "RDBLENS_REDIS_SERVER",
        &["/usr/bin/redis-server", "/usr/local/bin/redis-server"],
        "redis-server",
        test,
    )
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct Server {
    child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
    cli: PathBuf,
    /// Arguments every redis-cli call needs (TLS, a password).
    cli_auth: Vec<String>,
}

impl Server {
    /// Starts `bin` with `args` (after the port, directory and no
    /// persistence), and waits until it answers PING (or LOADING).
    pub fn start(bin: &Path, args: &[&str]) -> Server {
        Server::start_in(bin, tempfile::tempdir().unwrap(), args, &[])
    }

    /// As [`Server::start`], in `dir`, with `cli_auth` for redis-cli.
    pub fn start_in(bin: &Path, dir: tempfile::TempDir, args: &[&str], cli_auth: &[&str]) -> Server {
        let port = free_port();
        let tls = args.contains(&"--tls-port");
        let mut cmd = Command::new(bin);
        if tls {
            cmd.args(["--port", "0", "--tls-port", &port.to_string()]);
        } else {
            cmd.args(["--port", &port.to_string()]);
        }
        cmd.args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .args(["--logfile", "server.log"])
            .args(args.iter().filter(|a| **a != "--tls-port"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd.spawn().unwrap();
        let cli = bin.with_file_name("redis-cli");
        let server = Server {
            child,
            port,
            dir,
            cli,
            cli_auth: cli_auth.iter().map(|s| s.to_string()).collect(),
        };
        let started = Instant::now();
        loop {
            let out = server.cli_output(&["PING"]);
            if out.contains("PONG") || out.contains("LOADING") {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "redis-server on port {port} did not start: {out}; log: {}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn cli_command(&self) -> Command {
        let mut cmd = Command::new(&self.cli);
        cmd.args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(&self.cli_auth)
            .env_remove("REDISCLI_AUTH");
        cmd
    }

    /// What `redis-cli ARGS` prints (standard output and error).
    pub fn cli_output(&self, args: &[&str]) -> String {
        let out = self.cli_command().args(args).output().unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// `redis-cli ARGS`, which must succeed without an error reply.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = self.cli_output(args);
        assert!(
            !out.starts_with("ERR") && !out.contains("(error)"),
            "redis-cli {args:?}: {out}"
        );
        out
    }

    /// Sends `commands` through `redis-cli --pipe`.
    pub fn load(&self, commands: &[Vec<String>]) {
        let mut text = Vec::new();
        for c in commands {
            write!(text, "*{}\r\n", c.len()).unwrap();
            for a in c {
                write!(text, "${}\r\n{a}\r\n", a.len()).unwrap();
            }
        }
        let mut child = self
            .cli_command()
            .arg("--pipe")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&text).unwrap();
        let out = child.wait_with_output().unwrap();
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(report.contains("errors: 0"), "{report}");
    }

    /// `redis-cli --rdb FILE`: the snapshot as redis-cli receives it.
    pub fn rdb_by_redis_cli(&self, file: &Path) {
        let out = self.cli_command().arg("--rdb").arg(file).output().unwrap();
        assert!(
            out.status.success(),
            "redis-cli --rdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Sends `signal` (`STOP`, `CONT`) to the server.
    pub fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{signal}"), &self.pid().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{signal}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A stopped server must be woken to die of SIGKILL's cleanup.
        let _ = Command::new("kill")
            .args(["-CONT", &self.pid().to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A mixed data set: strings, lists, hashes, sets, sorted sets, some with
/// TTLs far in the future (so figures as of a fixed `--now` are stable).
pub fn mixed_data(keys: usize) -> Vec<Vec<String>> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut out = Vec::new();
    for i in 0..keys {
        let n = i.to_string();
        let value = "v".repeat(10 + i % 90);
        match i % 5 {
            0 => out.push(s(&["SET", &format!("user:{n}"), &value])),
            1 => out.push(s(&["RPUSH", &format!("queue:{n}"), "a", "b", &value])),
            2 => out.push(s(&["HSET", &format!("session:{n}"), "f1", &value, "f2", "x"])),
            3 => out.push(s(&["SADD", &format!("tags:{n}"), "x", "y", &n])),
            _ => out.push(s(&["ZADD", &format!("rank:{n}"), "1", "a", "2.5", &value])),
        }
        if i % 3 == 0 {
            let key = out.last().unwrap()[1].clone();
            // 2100-01-01 plus i seconds.
            out.push(s(&["EXPIREAT", &key, &(4102444800 + i as u64).to_string()]));
        }
    }
    // Big ones for the top lists.
    out.push(s(&["SET", "blob:big", &"z".repeat(100_000)]));
    let mut big_hash = s(&["HSET", "hash:big"]);
    for j in 0..600 {
        big_hash.push(format!("field{j}"));
        big_hash.push("y".repeat(20));
    }
    out.push(big_hash);
    out
}
