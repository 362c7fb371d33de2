//! The savings estimates against a real server, measured now: runs
//! fixtures/generator/rules.py (which loads the data both ways into a
//! private redis-server on 127.0.0.1 and records what it used) into a
//! temporary folder, then compares the audit's estimates for the dumps it
//! wrote. Skips, saying why, without python3 or a redis-server 7.0+ on the
//! PATH, or when RDBLENS_SKIP_LIVE is set.

use std::path::PathBuf;
use std::process::Command;

mod support;

fn available(cmd: &str, arg: &str) -> Option<String> {
    let out = Command::new(cmd).arg(arg).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn savings_measured_now_on_a_real_server() {
    if std::env::var_os("RDBLENS_SKIP_LIVE").is_some() {
        println!("skipped: RDBLENS_SKIP_LIVE is set");
        return;
    }
    let Some(server) = available("redis-server", "--version") else {
        println!("skipped: no redis-server on the PATH (apt-get install -y redis-server)");
        return;
    };
    if !["v=7.", "v=8."].iter().any(|v| server.contains(v)) {
        println!("skipped: rules.py needs redis-server 7.0 or newer, found {server}");
        return;
    }
    if available("python3", "--version").is_none() {
        println!("skipped: no python3 on the PATH");
        return;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/generator/rules.py");
    let out = std::env::temp_dir().join(format!("rdblens-live-savings-{}", std::process::id()));
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
    let _ = std::fs::remove_dir_all(&out);
}
