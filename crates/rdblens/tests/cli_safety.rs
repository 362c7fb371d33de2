//! Data safety: an output that is an input is refused (exit 2) before
//! anything is opened for writing; outputs appear whole or not at all;
//! write errors name the output (exit 4); a dump truncated while it is
//! mapped is an error naming it (exit 3); `--threads` is bounded.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use support::{rdblens, root, ALL_TYPES};

/// A scratch directory with a copy of the all-types fixture as `dump.rdb`.
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump.rdb");
    fs::copy(root().join(ALL_TYPES), &dump).unwrap();
    (dir, dump)
}

fn fixture_bytes() -> Vec<u8> {
    fs::read(root().join(ALL_TYPES)).unwrap()
}

/// The file names in `dir`, sorted (no temporary file may be left behind).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn refusal(output: &Path, input: &Path) -> String {
    format!(
        "rdblens: --output {} is the same file as the input {}: refusing to overwrite an input\n",
        output.display(),
        input.display()
    )
}

#[test]
fn report_onto_its_own_input_is_refused_and_the_dump_kept() {
    let (dir, dump) = scratch();
    let d = dump.to_str().unwrap();
    for extra in [&[][..], &["--summary-only"][..], &["--format", "json"][..]] {
        rdblens()
            .args(["report", d, "-o", d])
            .args(extra)
            .assert()
            .code(2)
            .stdout("")
            .stderr(refusal(&dump, &dump));
    }
    assert_eq!(fs::read(&dump).unwrap(), fixture_bytes());
    assert_eq!(names(dir.path()), ["dump.rdb"]);
}

#[test]
fn keys_onto_its_input_through_a_hard_link_or_a_symlink_is_refused() {
    let (dir, dump) = scratch();
    let hard = dir.path().join("hard.rdb");
    let soft = dir.path().join("soft.rdb");
    fs::hard_link(&dump, &hard).unwrap();
    std::os::unix::fs::symlink(&dump, &soft).unwrap();
    for out in [&dump, &hard, &soft] {
        rdblens()
            .args(["keys", dump.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .assert()
            .code(2)
            .stdout("")
            .stderr(refusal(out, &dump));
    }
    // The input given through the link, the output as the file itself.
    rdblens()
        .args(["keys", soft.to_str().unwrap(), "-o", dump.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(refusal(&dump, &soft));
    assert_eq!(fs::read(&dump).unwrap(), fixture_bytes());
    assert!(fs::symlink_metadata(&soft).unwrap().file_type().is_symlink());
}

#[test]
fn diff_and_merge_and_config_inputs_are_protected_too() {
    let (dir, dump) = scratch();
    let d = dump.to_str().unwrap();
    rdblens()
        .args(["diff", ALL_TYPES, d, "-o", d])
        .assert()
        .code(2)
        .stderr(refusal(&dump, &dump));
    rdblens()
        .args(["advise", d, "-o", d])
        .assert()
        .code(2)
        .stderr(refusal(&dump, &dump));
    let conf = dir.path().join("redis.conf");
    fs::write(&conf, "hash-max-listpack-entries 128\n").unwrap();
    let c = conf.to_str().unwrap();
    rdblens()
        .args(["report", ALL_TYPES, "--config", c, "-o", c])
        .assert()
        .code(2)
        .stderr(refusal(&conf, &conf));
    let summary = dir.path().join("s.json");
    let s = summary.to_str().unwrap();
    rdblens()
        .args(["report", ALL_TYPES, "--summary-only", "-q", "-o", s])
        .assert()
        .success();
    let before = fs::read(&summary).unwrap();
    rdblens()
        .args(["merge", s, "-o", s])
        .assert()
        .code(2)
        .stderr(refusal(&summary, &summary));
    assert_eq!(fs::read(&summary).unwrap(), before);
    assert_eq!(
        fs::read_to_string(&conf).unwrap(),
        "hash-max-listpack-entries 128\n"
    );
}

#[test]
fn a_failed_run_leaves_the_previous_output_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.txt");
    fs::write(&out, "yesterday's report\n").unwrap();
    let cut = dir.path().join("cut.rdb");
    fs::write(&cut, &fixture_bytes()[..200_000]).unwrap();
    // --strict fails after the analysis, before the report is written.
    rdblens()
        .args([
            "report",
            cut.to_str().unwrap(),
            "--strict",
            "-o",
            out.to_str().unwrap(),
        ])
        .assert()
        .code(3);
    assert_eq!(fs::read_to_string(&out).unwrap(), "yesterday's report\n");
    assert_eq!(names(dir.path()), ["cut.rdb", "report.txt"]);
    // A successful run replaces it through a symlink, which stays a link.
    let link = dir.path().join("latest.txt");
    std::os::unix::fs::symlink(&out, &link).unwrap();
    rdblens()
        .args([
            "report",
            ALL_TYPES,
            "--section",
            "keys",
            "-o",
            link.to_str().unwrap(),
        ])
        .assert()
        .success()
        .stdout("");
    assert!(fs::read_to_string(&out)
        .unwrap()
        .contains("227 keys, 83 with expiry"));
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(names(dir.path()), ["cut.rdb", "latest.txt", "report.txt"]);
}

#[cfg(unix)]
#[test]
fn new_outputs_get_the_usual_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // 0666 less the umask, as `>` gives, not the 0600 of a temporary file;
    // each umask set for the run, whatever the one the tests run under.
    for (umask, expected) in [("022", 0o644), ("002", 0o664), ("077", 0o600)] {
        let out = dir.path().join(format!("keys-{umask}.csv"));
        let run = std::process::Command::new("sh")
            .current_dir(root())
            .arg("-c")
            .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_rdblens"))
            .args(["keys", ALL_TYPES, "-o", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(
            run.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let mode = fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, expected, "umask {umask}: mode {mode:o}");
    }
}

const FULL: &str = "No space left on device (os error 28)";

#[test]
fn a_full_disk_is_a_write_error_naming_the_output() {
    for cmd in [
        &["report", ALL_TYPES][..],
        &["report", ALL_TYPES, "--summary-only"],
        &["keys", ALL_TYPES],
        &["keys", ALL_TYPES, "--format", "jsonl"],
        &["diff", ALL_TYPES, "fixtures/rules/clean.rdb"],
    ] {
        rdblens()
            .args(cmd)
            .args(["-o", "/dev/full"])
            .assert()
            .code(4)
            .stderr(format!("rdblens: cannot write /dev/full: {FULL}\n"));
    }
}

#[test]
fn standard_output_on_a_full_device_is_a_write_error() {
    for cmd in [
        &["report", ALL_TYPES][..],
        &["keys", ALL_TYPES],
        &["check", ALL_TYPES],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rdblens"))
            .current_dir(root())
            .args(cmd)
            .stdout(Stdio::from(fs::File::create("/dev/full").unwrap()))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(4), "{cmd:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("rdblens: cannot write standard output: {FULL}\n"),
            "{cmd:?}"
        );
    }
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    for cmd in [&["keys", ALL_TYPES][..], &["report", ALL_TYPES]] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rdblens"))
            .current_dir(root())
            .args(cmd)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away at once
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{cmd:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{cmd:?}");
    }
}

/// Debug builds truncate the input right after mapping it when
/// `RDBLENS_TEST_SHRINK_AFTER_MAP` is set (what another process truncating
/// the dump mid-run does, without a race). Release builds ignore the
/// variable: it must never cut a user's dump.
#[test]
fn a_dump_truncated_while_mapped_is_an_error_naming_it() {
    for cmd in ["report", "keys", "check"] {
        let (_dir, dump) = scratch();
        let run = rdblens()
            .args([cmd, dump.to_str().unwrap()])
            .env("RDBLENS_TEST_SHRINK_AFTER_MAP", "1")
            .assert();
        if cfg!(debug_assertions) {
            run.code(3).stdout("").stderr(format!(
                "rdblens: {}: the file shrank while it was being read (truncated or rewritten by another \
                 process); the report would be wrong: stopping\n",
                dump.display()
            ));
        } else {
            run.success();
            assert_eq!(fs::read(&dump).unwrap(), fixture_bytes(), "{cmd}");
        }
    }
}

#[test]
fn thread_counts_beyond_eight_per_core_are_refused() {
    let cores = std::thread::available_parallelism().unwrap().get();
    for cmd in ["report", "keys"] {
        rdblens()
            .args([cmd, ALL_TYPES, "--threads", "100000"])
            .assert()
            .code(2)
            .stdout("")
            .stderr(format!(
                "rdblens: --threads 100000: at most {} (8 per core, {cores} cores here); 0 means one per core\n",
                8 * cores
            ));
    }
    let at_most = (8 * cores).to_string();
    rdblens()
        .args(["keys", ALL_TYPES, "--threads", &at_most, "--match", "str:embstr"])
        .assert()
        .success();
}

/// An output that cannot be written (its directory missing, or a
/// directory given as the file) is found before any input is read: the
/// input here is not a dump nor a summary at all, so a run that read it
/// first would fail on it (exit 3) instead of naming the output (exit 4).
#[test]
fn an_unwritable_output_is_refused_before_any_input_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.rdb");
    fs::write(&junk, b"this is neither a dump nor a summary").unwrap();
    let j = junk.to_str().unwrap();
    let missing = dir.path().join("no-such-dir").join("out.txt");
    let runs: [&[&str]; 5] = [
        &["report", j],
        &["keys", j],
        &["advise", j],
        &["diff", j, j],
        &["merge", j],
    ];
    for args in runs {
        rdblens()
            .args(args)
            .arg("-o")
            .arg(&missing)
            .assert()
            .code(4)
            .stdout("")
            .stderr(format!(
                "rdblens: cannot write {}: No such file or directory (os error 2)\n",
                missing.display()
            ));
        rdblens()
            .args(args)
            .arg("-o")
            .arg(dir.path())
            .assert()
            .code(4)
            .stdout("")
            .stderr(format!(
                "rdblens: cannot write {}: Is a directory (os error 21)\n",
                dir.path().display()
            ));
    }
    // Nothing left behind, and the junk input untouched.
    assert_eq!(names(dir.path()), ["junk.rdb"]);
    assert_eq!(fs::read(&junk).unwrap(), b"this is neither a dump nor a summary");
}
