//! Test support: the fixture root, the binary, and a tiny RDB writer for
//! inputs the shipped fixtures do not have (many namespaces, damaged values).
#![allow(dead_code)]

use std::path::PathBuf;

use assert_cmd::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub const ALL_TYPES: &str = "fixtures/rdb/redis-7.4.5/all-types.rdb";

/// A real program a test drives: the path in `env` if set, else the first
/// of `paths` that exists. When it is missing, a failure under CI (`CI`
/// set: `.ci/run` installs `package`), else a SKIPPED line for `test`.
pub fn real_program(env: &str, paths: &[&str], package: &str, test: &str) -> Option<PathBuf> {
    let found = std::env::var_os(env)
        .map(PathBuf::from)
        .or_else(|| paths.iter().map(PathBuf::from).find(|p| p.exists()));
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but {package} is not installed (.ci/run installs the Debian package)"
        );
        eprintln!(
            "SKIPPED {test}: {package} not found (install the Debian package `{package}`, or set {env})"
        );
    }
    found
}

/// Headless Chromium (`RDBLENS_CHROMIUM`, or Debian's), or the skip of `test`.
pub fn chromium(test: &str) -> Option<PathBuf> {
    real_program(
        "RDBLENS_CHROMIUM",
        &["/usr/bin/chromium", "/usr/bin/chromium-browser"],
        "chromium",
        test,
    )
}

/// Chromium with no way out: headless, a private profile, every host name
/// unresolvable and a proxy that does not exist (the page's CSP forbids
/// requests anyway; these make sure none could succeed).
pub fn headless_chromium(bin: &std::path::Path, profile: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(bin);
    cmd.args([
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=127.0.0.1:9",
        "--virtual-time-budget=5000",
    ]);
    cmd.arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

/// promtool (`RDBLENS_PROMTOOL`, or Debian's `prometheus` package), or the skip of `test`.
pub fn promtool(test: &str) -> Option<PathBuf> {
    real_program(
        "RDBLENS_PROMTOOL",
        &["/usr/bin/promtool", "/usr/local/bin/promtool"],
        "prometheus",
        test,
    )
}

/// `rdblens` run from the workspace root (fixture paths are relative, so
/// outputs name them the same way on every machine).
pub fn rdblens() -> Command {
    let mut cmd = Command::cargo_bin("rdblens").unwrap();
    cmd.current_dir(root());
    cmd
}

/// Writes a `REDIS0010` file (checksum disabled) key by key.
pub struct RdbBuilder {
    data: Vec<u8>,
}

fn length(out: &mut Vec<u8>, n: usize) {
    if n < 64 {
        out.push(n as u8);
    } else if n < 16384 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

fn string(out: &mut Vec<u8>, s: &[u8]) {
    length(out, s.len());
    out.extend_from_slice(s);
}

impl RdbBuilder {
    pub fn new() -> Self {
        let mut data = b"REDIS0010".to_vec();
        data.push(0xfa); // aux
        string(&mut data, b"redis-ver");
        string(&mut data, b"7.0.15");
        data.push(0xfa);
        string(&mut data, b"ctime");
        string(&mut data, b"1700000000");
        data.extend_from_slice(&[0xfe, 0]); // select db 0
        RdbBuilder { data }
    }

    pub fn string(mut self, key: &[u8], value: &[u8], expiry_ms: Option<i64>) -> Self {
        if let Some(ms) = expiry_ms {
            self.data.push(0xfc);
            self.data.extend_from_slice(&ms.to_le_bytes());
        }
        self.data.push(0);
        string(&mut self.data, key);
        string(&mut self.data, value);
        self
    }

    /// Redis Enterprise's RAM_LRU opcode (107) with `value`, before the next key.
    pub fn ram_lru(mut self, value: usize) -> Self {
        self.data.push(107);
        length(&mut self.data, value);
        self
    }

    /// Keys from here on go to database `db`.
    pub fn select(mut self, db: usize) -> Self {
        self.data.push(0xfe);
        length(&mut self.data, db);
        self
    }

    /// A hash_listpack (type 16) whose blob is not a listpack: the walk
    /// finds its end, decoding it fails.
    pub fn damaged_hash(mut self, key: &[u8]) -> Self {
        self.data.push(16);
        string(&mut self.data, key);
        string(&mut self.data, b"this is not a listpack");
        self
    }

    /// A collection stored with no element (a count of 0), as old server
    /// bugs wrote them: `kind` 1 list, 2 set, 4 hash, 5 zset_2.
    pub fn empty_collection(mut self, kind: u8, key: &[u8]) -> Self {
        self.data.push(kind);
        string(&mut self.data, key);
        length(&mut self.data, 0);
        self
    }

    pub fn finish(mut self) -> Vec<u8> {
        self.data.push(0xff);
        self.data.extend_from_slice(&[0; 8]);
        self.data
    }
}

/// A Python 3 that imports `module` (`RDBLENS_PYTHON`, or `python3` on the
/// PATH), or the skip of `test`: a failure under CI (`CI` set: `.ci/run`
/// installs `package` from PyPI).
pub fn python_with(module: &str, package: &str, test: &str) -> Option<PathBuf> {
    let python = std::env::var_os("RDBLENS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("python3"));
    let imports = std::process::Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if imports {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but {} cannot import {module} (.ci/run installs `{package}` with pip)",
        python.display()
    );
    eprintln!(
        "SKIPPED {test}: {} cannot import {module} (python3 -m pip install {package}, or set RDBLENS_PYTHON)",
        python.display()
    );
    None
}

/// A Java runtime (`java` on the PATH, as Debian's `openjdk-17-jre-headless`
/// puts it), or the skip of `test`; a failure under CI.
pub fn java(test: &str) -> Option<PathBuf> {
    let runs = std::process::Command::new("java")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    if runs {
        return Some(PathBuf::from("java"));
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but `java` does not run (.ci/run installs openjdk-17-jre-headless)"
    );
    eprintln!("SKIPPED {test}: no `java` (install the Debian package openjdk-17-jre-headless)");
    None
}
