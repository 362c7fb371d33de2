//! Inputs the way operators have them: `-`, pipes, FIFOs and process
//! substitution; gzip and zstd detected on streams as on files; inputs
//! that cannot be read as given (standard input twice, one file twice).

mod support;

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use support::{rdblens, root, ALL_TYPES};

fn fixture() -> Vec<u8> {
    fs::read(root().join(ALL_TYPES)).unwrap()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

fn zstd(data: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
}

/// `rdblens ARGS` with `stdin` piped in; (exit code, stdout, stderr).
fn piped(args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdblens"))
        .current_dir(root())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    (
        out.status.code().unwrap(),
        out.stdout,
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn keys_of_the_fixture() -> Vec<u8> {
    rdblens().args(["keys", ALL_TYPES]).output().unwrap().stdout
}

#[test]
fn standard_input_is_read_plain_gzip_or_zstd() {
    let expected = keys_of_the_fixture();
    let records = csv::Reader::from_reader(&expected[..]).records().count();
    assert_eq!(records, 227);
    for (how, data) in [
        ("plain", fixture()),
        ("gzip", gzip(&fixture())),
        ("zstd", zstd(&fixture())),
    ] {
        let (code, out, err) = piped(&["keys", "-"], &data);
        assert_eq!((code, err.as_str()), (0, ""), "{how}");
        assert_eq!(out, expected, "{how}");
    }
    let (code, out, _) = piped(&["report", "-", "--format", "json"], &fixture());
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["files"][0]["path"], "standard input");
    assert_eq!(doc["files"][0]["keys"], 227);
    assert_eq!(doc["files"][0]["size"], 1_231_235);
    let (code, out, _) = piped(&["check", "-"], &zstd(&fixture()));
    assert_eq!(code, 0);
    assert!(String::from_utf8(out).unwrap().starts_with(
        "file: standard input (zstd, 1231235 bytes decompressed)\nformat: Redis RDB 12 (REDIS0012)\n"
    ));
    let (code, out, _) = piped(&["check", "-"], &fixture());
    assert_eq!(code, 0);
    assert!(String::from_utf8(out)
        .unwrap()
        .starts_with("file: standard input (1231235 bytes received)\n"));
}

#[test]
fn zstd_files_of_one_or_several_frames_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let data = fixture();
    let one = dir.path().join("dump.rdb.zst");
    fs::write(&one, zstd(&data)).unwrap();
    // `pzstd` and `cat a.zst b.zst` make several frames: one stream.
    let several = dir.path().join("parts.rdb.zst");
    let (a, b) = data.split_at(500_000);
    fs::write(&several, [zstd(a), zstd(b)].concat()).unwrap();
    for file in [&one, &several] {
        let out = rdblens().args(["keys", file.to_str().unwrap()]).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(out.stdout, keys_of_the_fixture());
    }
}

#[test]
fn a_cut_zstd_stream_reports_its_sound_part() {
    let z = zstd(&fixture());
    let (code, out, err) = piped(&["report", "-", "--section", "keys"], &z[..z.len() / 2]);
    assert_eq!(code, 3);
    assert!(String::from_utf8(out)
        .unwrap()
        .contains("INCOMPLETE: the report covers only the part before"));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("rdblens: standard input: the zstd stream is damaged or cut short after "),
        "{err}"
    );
    assert!(lines[0].ends_with(": reading those"), "{err}");
    assert!(
        lines[1].starts_with("rdblens: standard input: incomplete: unexpected end of input"),
        "{err}"
    );
}

/// How long a run on a FIFO or pipe may take before the test fails instead
/// of hanging (a few hundred milliseconds when it works, in a debug build).
const STREAM_DEADLINE: Duration = Duration::from_secs(60);

#[test]
fn fifos_and_process_substitution_are_streams() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("dump.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // The writer blocks until a reader opens the FIFO: if rdblens never does,
    // the deadline below fails the test (the blocked thread is left behind).
    let (written, writer_done) = mpsc::channel();
    {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let _ = written.send(fs::write(&fifo, gzip(&fixture())));
        });
    }
    let out = rdblens()
        .args(["keys", fifo.to_str().unwrap()])
        .timeout(STREAM_DEADLINE)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{} (no exit code: killed after {STREAM_DEADLINE:?})",
        String::from_utf8_lossy(&out.stderr)
    );
    match writer_done.recv_timeout(STREAM_DEADLINE) {
        Ok(result) => result.unwrap(),
        Err(e) => panic!("the FIFO's writer did not finish: {e}"),
    }
    assert_eq!(out.stdout, keys_of_the_fixture());
    // bash's <(...) is a /dev/fd path to a pipe; `exec` so that the deadline
    // kills rdblens itself.
    let out = assert_cmd::Command::new("bash")
        .current_dir(root())
        .arg("-c")
        .arg(format!(
            "exec {} report <(cat {ALL_TYPES}) --section keys --format json",
            env!("CARGO_BIN_EXE_rdblens")
        ))
        .timeout(STREAM_DEADLINE)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{} (no exit code: killed after {STREAM_DEADLINE:?})",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["files"][0]["keys"], 227);
}

#[test]
fn inputs_that_cannot_be_read_as_given_are_usage_errors() {
    let (code, out, err) = piped(&["report", "-", "-"], &fixture());
    assert_eq!((code, out.len()), (2, 0));
    assert_eq!(
        err,
        "rdblens: standard input (-) is given more than once: it can be read only once\n"
    );
    let (code, _, err) = piped(&["diff", "-", "-"], &fixture());
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "rdblens: standard input (-) is given more than once: it can be read only once\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("link.rdb");
    std::os::unix::fs::symlink(root().join(ALL_TYPES), &link).unwrap();
    rdblens()
        .args(["report", ALL_TYPES, link.to_str().unwrap()])
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "rdblens: {ALL_TYPES} and {} are the same file: its keys would be counted twice\n",
            link.display()
        ));
    // A diff of a file with itself says why it is empty.
    rdblens()
        .args(["diff", ALL_TYPES, ALL_TYPES, "--format", "json"])
        .assert()
        .success()
        .stderr(format!(
            "rdblens: note: {ALL_TYPES} and {ALL_TYPES} are the same file: nothing can have changed\n"
        ));
    assert!(Path::new(ALL_TYPES).is_relative());
}
