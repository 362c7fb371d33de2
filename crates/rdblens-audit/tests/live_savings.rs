//! The savings estimates against a real server, measured now: runs
//! fixtures/generator/rules.py (which loads the data both ways into a
//! private redis-server on 127.0.0.1 and records what it used) into a
//! temporary folder, then compares the audit's estimates for the dumps it
//! wrote. Without python3 or a redis-server 7.0+ on the PATH, or with
//! RDBLENS_SKIP_LIVE set, it says why and passes, except under CI (`CI`
//! set), where it fails: `.ci/run` installs both.

use std::path::PathBuf;
use std::process::Command;

mod support;

fn available(cmd: &str, arg: &str) -> Option<String> {
    let out = Command::new(cmd).arg(arg).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Why the test cannot run here, if it cannot.
fn missing_part() -> Option<String> {
    if std::env::var_os("RDBLENS_SKIP_LIVE").is_some() {
        return Some("RDBLENS_SKIP_LIVE is set".into());
    }
    let Some(server) = available("redis-server", "--version") else {
        return Some("no redis-server on the PATH (apt-get install -y redis-server)".into());
    };
    if !["v=7.", "v=8."].iter().any(|v| server.contains(v)) {
        return Some(format!(
            "rules.py needs redis-server 7.0 or newer, found {server}"
        ));
    }
    if available("python3", "--version").is_none() {
        return Some("no python3 on the PATH (apt-get install -y python3)".into());
    }
    None
}

#[test]
fn savings_measured_now_on_a_real_server() {
    if let Some(why) = missing_part() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but the live test cannot run: {why} (.ci/run installs redis-server and python3)"
        );
        println!("SKIPPED savings_measured_now_on_a_real_server: {why}");
        return;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/generator/rules.py");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rules");
    let mut cmd = Command::new("python3");
    cmd.arg(&script).arg("--out").arg(&out).arg("--force");
    for name in support::SAVINGS_FIXTURES {
        cmd.args(["--only", name]);
    }
    let run = cmd.output().unwrap_or_else(|e| panic!("python3 rules.py: {e}"));
    assert!(
        run.status.success(),
        "rules.py failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    support::check_savings(&out);
}
