//! Streams analysed as they arrive: `cat DUMP | rdblens report -` gives
//! the mapped file's JSON byte for byte (the input's name aside) on every
//! fixture; gzip, zstd, LZ4 and bzip2 copies, as files and through pipes,
//! too; a stream cut short gives the partial report, where it stops and
//! exit 3; nothing is written to the temporary directory. `check -`
//! reads a stream once too, and says what it says of the file.

mod support;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use support::root;

/// Every dump under fixtures/rdb, relative to the workspace root.
fn fixtures() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![root().join("fixtures/rdb")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rdb") {
                found.push(path.strip_prefix(root()).unwrap().to_path_buf());
            }
        }
    }
    found.sort();
    found
}

/// `rdblens ARGS` with `stdin` piped in and `env` set; (exit code, stdout,
/// stderr).
fn run(args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rdblens"));
    cmd.current_dir(root())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `report NAME --format json` with `name` replaced by `NAME` in the JSON.
fn report(name: &str, stdin: &[u8], env: &[(&str, &str)]) -> (i32, String, String) {
    let (code, out, err) = run(&["report", name, "--format", "json"], stdin, env);
    let shown = if name == "-" { "standard input" } else { name };
    (code, out.replace(&format!("\"{shown}\""), "\"NAME\""), err)
}

/// The evidence as on a big dump (the stream's one-pass fold for both
/// builds), and as on a small one (a stream held in memory).
const SIZES: [&[(&str, &str)]; 2] = [&[("RDBLENS_TEST_SAMPLE_EVIDENCE_FROM", "0")], &[]];

#[test]
fn every_fixture_piped_gives_the_files_json() {
    let files = fixtures();
    assert!(files.len() >= 50, "{} fixtures", files.len());
    for file in files {
        let name = file.to_str().unwrap();
        let data = std::fs::read(root().join(&file)).unwrap();
        for env in SIZES {
            let (code, mapped, err) = report(name, b"", env);
            assert!(code == 0 || code == 3, "{name}: {err}");
            let (piped_code, piped, piped_err) = report("-", &data, env);
            assert_eq!(piped_code, code, "{name} {env:?}: {piped_err}");
            assert!(piped == mapped, "{name} {env:?}: the piped JSON differs");
            let piped_err = without_both_builds_note(&piped_err);
            assert_eq!(piped_err.replace("standard input", name), err, "{name}");
        }
    }
}

/// How the note of a stream read for both allocator builds begins.
const BOTH_BUILDS: &str = "rdblens: note: standard input: read for both jemalloc builds";

/// `err` without the note of a stream read for both allocator builds
/// (a stream's own: [`a_stream_read_for_both_builds_says_so`]).
fn without_both_builds_note(err: &str) -> String {
    err.lines()
        .filter(|l| !(l.starts_with("rdblens: note: ") && l.contains(": read for both jemalloc builds (")))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// A stream read for both allocator builds (its evidence sampled as a big
/// dump's) says so on standard error, and how far; not with `--quiet`, nor
/// with the build given, nor as a file, nor a stream smaller than a
/// sampled dump.
#[test]
fn a_stream_read_for_both_builds_says_so() {
    let name = "fixtures/rdb/redis-7.0.15-debian/all-types.rdb";
    let data = std::fs::read(root().join(name)).unwrap();
    let big = &[("RDBLENS_TEST_SAMPLE_EVIDENCE_FROM", "0")][..];
    let (code, _, err) = run(&["report", "-", "--format", "json"], &data, big);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        format!("{BOTH_BUILDS} (quantum 8 and 16) to its end, where the evidence decided quantum 8\n")
    );
    for args in [
        &["report", "-", "--format", "json", "-q"][..],
        &["report", "-", "--format", "json", "--jemalloc-quantum", "8"],
        &["report", name, "--format", "json"],
    ] {
        let (code, _, err) = run(args, &data, big);
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
    }
    let (code, _, err) = run(&["report", "-", "--format", "json"], &data, &[]);
    assert_eq!((code, err.as_str()), (0, ""), "a small dump");

    // Compressed files are streams too: the first three notes by name, then a count.
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["report".to_string(), "--format".into(), "json".into()];
    for i in 1..=5 {
        let copy = dir.path().join(format!("{i}.rdb.gz"));
        std::fs::write(&copy, gzip(&data)).unwrap();
        args.push(copy.to_str().unwrap().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, err) = run(&args, b"", big);
    assert_eq!(code, 0, "{err}");
    let note = |i: u32| {
        let copy = dir.path().join(format!("{i}.rdb.gz"));
        format!(
            "rdblens: note: {}: read for both jemalloc builds (quantum 8 and 16) to its end, where the \
             evidence decided quantum 8\n",
            copy.display()
        )
    };
    let want = format!(
        "{}{}{}rdblens: note: and 2 more inputs read for both jemalloc builds\n",
        note(1),
        note(2),
        note(3)
    );
    assert_eq!(err, want);
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

fn zstd(data: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
}

fn lz4(data: &[u8]) -> Vec<u8> {
    // Blocks of 64 KiB, as `lz4 -B4` writes: a cut copy still decompresses to a part.
    let info = lz4_flex::frame::FrameInfo::new().block_size(lz4_flex::frame::BlockSize::Max64KB);
    let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

fn bzip2(data: &[u8]) -> Vec<u8> {
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// Compresses a dump.
type Compressor = fn(&[u8]) -> Vec<u8>;

const COMPRESSORS: [(&str, Compressor); 4] = [("gz", gzip), ("zst", zstd), ("lz4", lz4), ("bz2", bzip2)];

#[test]
fn compressed_copies_as_files_and_pipes_give_the_files_json() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        "fixtures/rdb/redis-7.4.5/all-types.rdb",
        "fixtures/rdb/valkey-8.1.1/all-types.rdb",
        "fixtures/rdb/redis-3.2.13/all-types.rdb",
    ];
    for file in files {
        let data = std::fs::read(root().join(file)).unwrap();
        for env in SIZES {
            let (code, mapped, _) = report(file, b"", env);
            assert_eq!(code, 0, "{file}");
            for (ext, compress) in COMPRESSORS {
                let packed = compress(&data);
                let copy = dir.path().join(format!("dump.rdb.{ext}"));
                std::fs::write(&copy, &packed).unwrap();
                let copy = copy.to_str().unwrap();
                let (code, json, err) = report(copy, b"", env);
                let err = without_both_builds_note(&err);
                assert_eq!((code, err.as_str()), (0, ""), "{file} .{ext}");
                assert!(json == mapped, "{file} .{ext}: the JSON differs");
                let (code, json, err) = report("-", &packed, env);
                let err = without_both_builds_note(&err);
                assert_eq!((code, err.as_str()), (0, ""), "{file} .{ext} piped");
                assert!(json == mapped, "{file} .{ext} piped: the JSON differs");
            }
        }
    }
}

/// The offset a report's stderr says the dump stops at.
fn stop_offset(err: &str) -> Option<u64> {
    let at = err.find("at byte offset ")? + "at byte offset ".len();
    err[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// A stream cut in the middle of a key (the writer killed) gives the
/// partial report, the offset it stops at and exit 3, as the cut file
/// does, at 20 places.
#[test]
fn a_stream_cut_short_reports_as_a_cut_file_does() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(root().join("fixtures/rdb/valkey-8.1.1/all-types.rdb")).unwrap();
    for i in 0..20u64 {
        let cut = 20 + ((i * 2_654_435_761) % (data.len() as u64 - 30)) as usize;
        let part = &data[..cut];
        let file = dir.path().join("cut.rdb");
        std::fs::write(&file, part).unwrap();
        let file = file.to_str().unwrap();
        for env in SIZES {
            let (code, mapped, err) = report(file, b"", env);
            let (piped_code, piped, piped_err) = report("-", part, env);
            assert_eq!((piped_code, code), (3, 3), "cut at {cut}: {piped_err}");
            assert!(piped == mapped, "cut at {cut}: the JSON differs");
            let offset = stop_offset(&piped_err).unwrap_or_else(|| panic!("no offset: {piped_err}"));
            assert!(offset <= cut as u64, "{offset} past {cut}");
            let piped_err = without_both_builds_note(&piped_err);
            assert_eq!(piped_err.replace("standard input", file), err);
        }
    }
}

/// A compressed stream cut short says after how many decompressed bytes
/// it broke, and the report covers the part before, up to where the RDB
/// data stops (exit 3); one with bytes flipped is caught by the
/// decompressor or, where it has no checksum to fail, by the RDB's.
#[test]
fn a_damaged_compressed_stream_says_where() {
    let data = std::fs::read(root().join("fixtures/rdb/valkey-8.1.1/all-types.rdb")).unwrap();
    let prefix = "rdblens: standard input: ";
    for (ext, compress) in COMPRESSORS {
        let packed = compress(&data);
        let (code, json, err) = report("-", &packed[..packed.len() / 2], &[]);
        assert_eq!(code, 3, ".{ext}: {err}");
        assert!(json.contains("\"incomplete\": {"), ".{ext}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, ".{ext}: {err}");
        let said = format!(
            "{prefix}the {} stream is damaged or cut short after ",
            ext_name(ext)
        );
        assert!(lines[0].starts_with(&said), ".{ext}: {err}");
        assert!(lines[0].ends_with(": reading those"), ".{ext}: {err}");
        assert!(
            lines[1].starts_with(&format!("{prefix}incomplete: ")),
            ".{ext}: {err}"
        );
        assert!(stop_offset(lines[1]).is_some(), ".{ext}: {err}");

        let mut flipped = packed.clone();
        let middle = flipped.len() / 2;
        for b in &mut flipped[middle..middle + 64] {
            *b ^= 0x5a;
        }
        let (code, _, err) = report("-", &flipped, &[]);
        assert_eq!(code, 3, ".{ext}: {err}");
        assert!(
            err.contains("stream is damaged or cut short after ") || err.contains("checksum mismatch"),
            ".{ext}: {err}"
        );
    }
}

fn ext_name(ext: &str) -> &'static str {
    match ext {
        "gz" => "gzip",
        "zst" => "zstd",
        "lz4" => "lz4",
        _ => "bzip2",
    }
}

/// Streams leave nothing in the temporary directory, and neither does a
/// compressed file.
#[test]
fn nothing_is_written_to_the_temporary_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(root().join("fixtures/rdb/redis-7.4.5/all-types.rdb")).unwrap();
    let gz = dir.path().join("dump.rdb.gz");
    std::fs::write(&gz, gzip(&data)).unwrap();
    let tmpdir = tmp.path().to_str().unwrap();
    // A temporary copy needs a temporary directory: with one that does
    // not exist, it could not be made.
    let (code, _, err) = report("-", &data, &[("TMPDIR", tmpdir)]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, _, err) = report(gz.to_str().unwrap(), b"", &[("TMPDIR", "/nonexistent/tmp")]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, _, err) = report("-", &zstd(&data), &[("TMPDIR", "/nonexistent/tmp")]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

/// A Valkey `rdbcompression lz4` file (an envelope, then the dump as one
/// LZ4 frame) is refused by name, as a file and through a pipe, with what
/// to do: never read as an RDB file damaged at some offset.
#[test]
fn a_valkey_compressed_file_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(root().join("fixtures/rdb/valkey-8.1.1/all-types.rdb")).unwrap();
    let vcs = [&b"VCS\x01\x01\x00\x00\x00"[..], &lz4(&data)].concat();
    let file = dir.path().join("dump.rdb");
    std::fs::write(&file, &vcs).unwrap();
    let file = file.to_str().unwrap();
    for (name, stdin) in [(file, &b""[..]), ("-", &vcs[..])] {
        let (code, out, err) = report(name, stdin, &[]);
        assert_eq!((code, out.as_str()), (3, ""), "{name}");
        let shown = if name == "-" { "standard input" } else { name };
        assert_eq!(
            err,
            format!(
                "rdblens: {shown}: a Valkey compressed RDB file (saved with `rdbcompression lz4`: an envelope \
                 around one LZ4 frame, Valkey 9.2+), which rdblens cannot read: decompress it with \
                 `valkey-check-rdb`, or have the server save with `rdbcompression yes`\n"
            )
        );
    }
}

/// Interrupted (Ctrl-C) while a stream is still arriving, `report -o`
/// leaves no output file, whole or partial, and no temporary one: the
/// output is written only once the stream is analysed.
#[test]
fn an_interrupt_while_streaming_leaves_no_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    let data = std::fs::read(root().join("fixtures/rdb/valkey-8.1.1/all-types.rdb")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdblens"))
        .current_dir(root())
        .args(["report", "-", "--format", "json", "-o", out.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // Half the dump, then the writer stalls.
    input.write_all(&data[..data.len() / 2]).unwrap();
    input.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: a live child's pid and a standard signal.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    drop(input);
    assert_eq!(status.code(), None, "ended by the signal");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// `check NAME` split into its first line (the file, its size) and the rest.
fn check(name: &str, stdin: &[u8], env: &[(&str, &str)]) -> (i32, String, String, String) {
    let (code, out, err) = run(&["check", name], stdin, env);
    let (first, rest) = out.split_once('\n').unwrap_or((&out, ""));
    (code, first.to_string(), rest.to_string(), err)
}

/// `check -` reads a pipe once as it arrives, with no temporary copy (a
/// TMPDIR that does not exist): the file's lines on every fixture, plain
/// and compressed, the first saying what came; cut short, the cut file's
/// error at the same offset.
#[test]
fn check_reads_a_stream_once_and_says_what_the_file_says() {
    let no_tmp = [("TMPDIR", "/nonexistent/tmp")];
    for file in fixtures() {
        let name = file.to_str().unwrap();
        let data = std::fs::read(root().join(&file)).unwrap();
        let (code, first, lines, err) = check(name, b"", &[]);
        assert_eq!(first, format!("file: {name} ({} bytes)", data.len()));
        let (piped_code, piped_first, piped_lines, piped_err) = check("-", &data, &no_tmp);
        assert_eq!(piped_code, code, "{name}: {piped_err}");
        assert_eq!(
            piped_first,
            format!("file: standard input ({} bytes received)", data.len())
        );
        assert_eq!(piped_lines, lines, "{name}");
        assert_eq!(
            piped_err.replace("rdblens: standard input: ", &format!("rdblens: {name}: ")),
            err
        );
    }
    let file = "fixtures/rdb/valkey-8.1.1/all-types.rdb";
    let data = std::fs::read(root().join(file)).unwrap();
    let (code, _, lines, _) = check(file, b"", &[]);
    assert_eq!(code, 0);
    assert!(
        lines.contains("\nchecksum: valid (crc64 0x") && lines.ends_with("\nok\n"),
        "{lines}"
    );
    for (ext, compress) in COMPRESSORS {
        let (code, first, piped_lines, err) = check("-", &compress(&data), &no_tmp);
        assert_eq!((code, err.as_str()), (0, ""), ".{ext}");
        let said = format!(
            "file: standard input ({}, {} bytes decompressed)",
            ext_name(ext),
            data.len()
        );
        assert_eq!(first, said);
        assert_eq!(piped_lines, lines, ".{ext}");
    }
    let dir = tempfile::tempdir().unwrap();
    for i in 0..20u64 {
        let cut = 20 + ((i * 2_654_435_761) % (data.len() as u64 - 30)) as usize;
        let part = dir.path().join("cut.rdb");
        std::fs::write(&part, &data[..cut]).unwrap();
        let part = part.to_str().unwrap();
        let (code, _, lines, err) = check(part, b"", &[]);
        let (piped_code, _, piped_lines, piped_err) = check("-", &data[..cut], &no_tmp);
        assert_eq!((piped_code, code), (3, 3), "cut at {cut}: {piped_err}");
        assert_eq!(piped_lines, lines, "cut at {cut}");
        assert!(stop_offset(&err).is_some() || err.contains("no EOF"), "{err}");
        assert_eq!(
            piped_err.replace("rdblens: standard input: ", &format!("rdblens: {part}: ")),
            err
        );
    }
}

/// `keys NAME ARGS` with `name` replaced by `NAME` in the rows (the
/// `file` column names no input here, but a warning might).
fn keys(name: &str, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut all = vec!["keys", name, "-q"];
    all.extend_from_slice(args);
    run(&all, stdin, env)
}

/// `keys -` with the build given (`--jemalloc-quantum`) reads the stream
/// as it arrives: the file's rows byte for byte, as CSV and JSON lines,
/// filtered or not, with no temporary directory to copy the stream into
/// (one that does not exist). Without the build, a dump whose `used-mem`
/// decides it is copied to disk first (a pass settles the build before
/// the first row): the file's rows too, and where no copy can be made,
/// an error that says so and what to do.
#[test]
fn keys_on_a_stream_with_the_build_given_needs_no_copy() {
    let no_tmp = [("TMPDIR", "/nonexistent/tmp")];
    let mut rows = 0;
    for file in [
        "fixtures/rdb/redis-7.0.15/all-types.rdb",
        "fixtures/rdb/redis-8.4.0/all-types.rdb",
        "fixtures/rdb/valkey-8.1.1/all-types.rdb",
    ] {
        let data = std::fs::read(root().join(file)).unwrap();
        for args in [
            &["--jemalloc-quantum", "16"][..],
            &["--jemalloc-quantum", "8", "--format", "jsonl"],
            &["--jemalloc-quantum", "16", "--match", "*:*", "--type", "hash"],
        ] {
            let (code, want, err) = keys(file, args, b"", &[]);
            assert_eq!((code, err.as_str()), (0, ""), "{file} {args:?}");
            let got = keys("-", args, &data, &no_tmp);
            assert_eq!(got, (0, want.clone(), String::new()), "{file} {args:?}");
            rows += want.lines().count();
        }
        // The build from used-mem: the stream copied to disk.
        let (code, want, _) = keys(file, &[], b"", &[]);
        assert_eq!(code, 0);
        assert_eq!(keys("-", &[], &data, &[]), (0, want, String::new()), "{file}");
    }
    assert!(rows > 300, "{rows} rows");
    let data = std::fs::read(root().join("fixtures/rdb/redis-7.0.15/all-types.rdb")).unwrap();
    let (code, out, err) = keys("-", &[], &data, &no_tmp);
    assert_eq!((code, out.as_str()), (3, ""), "{err}");
    assert!(
        err.contains("standard input: cannot open: cannot copy it to /nonexistent/tmp")
            && err.contains("pass --jemalloc-quantum 8 or 16 to read it as it arrives"),
        "{err}"
    );
}

/// A stream cut in a key gives the rows before the cut, where it stops
/// and exit 3, as the cut file does.
#[test]
fn keys_on_a_stream_cut_short_stops_where_the_cut_file_does() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read(root().join("fixtures/rdb/redis-7.4.5/all-types.rdb")).unwrap();
    let part = &data[..data.len() * 2 / 3];
    let cut = dir.path().join("cut.rdb");
    std::fs::write(&cut, part).unwrap();
    let args = ["--jemalloc-quantum", "16", "--format", "jsonl"];
    let (code, want, want_err) = keys(cut.to_str().unwrap(), &args, b"", &[]);
    let (got_code, got, err) = keys("-", &args, part, &[]);
    assert_eq!((code, got_code), (3, 3));
    assert_eq!(got, want);
    assert!(!got.is_empty());
    assert_eq!(stop_offset(&err), stop_offset(&want_err));
    assert!(stop_offset(&err).is_some(), "{err}");
}
