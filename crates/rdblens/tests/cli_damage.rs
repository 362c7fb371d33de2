//! Damaged, truncated, foreign and too-new inputs, command by command: the
//! exact message and exit code of every path, `--strict`, `--skip-unknown`,
//! checksum warnings, unknown modules, gzip-compressed dumps.

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};

use rdblens_parser::crc64;
use serde_json::Value;
use support::{rdblens, root, RdbBuilder, ALL_TYPES};

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str], file: &Path) -> Out {
    let out = rdblens().args(args).arg(file).output().unwrap();
    Out {
        code: out.status.code().unwrap(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// Writes `data` as `name` in a fresh temporary directory.
fn write(dir: &tempfile::TempDir, name: &str, data: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, data).unwrap();
    path
}

fn raw(s: &[u8]) -> Vec<u8> {
    assert!(s.len() < 64);
    [&[s.len() as u8][..], s].concat()
}

/// `magic`, a `redis-ver` AUX, SELECTDB 0, a string key `a` = `1` (the sound
/// part), `body`, EOF and a valid CRC-64. The body starts at byte 33.
fn rdb(magic: &[u8], body: &[u8]) -> Vec<u8> {
    let mut out = magic.to_vec();
    out.push(0xfa);
    out.extend([raw(b"redis-ver"), raw(b"8.8.0")].concat());
    out.extend_from_slice(&[0xfe, 0x00, 0x00]);
    out.extend([raw(b"a"), raw(b"1")].concat());
    assert_eq!(out.len(), 33);
    out.extend_from_slice(body);
    out.push(0xff);
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// A module type id: 9 characters of the module charset and an encoding version.
fn module_id(name: &[u8; 9], encver: u64) -> u64 {
    const CHARSET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let id = name.iter().fold(0u64, |v, c| {
        (v << 6) | CHARSET.iter().position(|x| x == c).unwrap() as u64
    });
    (id << 10) | encver
}

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap()
}

/// The document validates against docs/report.schema.json.
fn assert_schema_valid(doc: &Value) {
    let text = std::fs::read_to_string(root().join("docs/report.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

fn all_types() -> Vec<u8> {
    std::fs::read(root().join(ALL_TYPES)).unwrap()
}

// ---- truncation and --strict -------------------------------------------------

#[test]
fn strict_turns_a_truncated_file_into_an_error_before_any_output() {
    let dir = tempfile::tempdir().unwrap();
    let cut = write(&dir, "cut.rdb", &all_types()[..600_000]);
    let out = run(&["report", "--strict"], &cut);
    assert_eq!(out.code, 3);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        format!(
            "rdblens: {}: --strict: incomplete: unexpected end of input while reading string value: needed \
             1048576 bytes, 460260 remain at byte offset 139740 in key \"str:big:1mb-random\"\n",
            cut.display()
        )
    );
    // Nothing is written to -o either.
    let report = dir.path().join("report.txt");
    let out = rdblens()
        .args(["report", "--strict", "-o"])
        .arg(&report)
        .arg(&cut)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(!report.exists());
    // A sound file passes --strict unchanged.
    let out = run(
        &["report", "--strict", "--section", "bigkeys"],
        &root().join(ALL_TYPES),
    );
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
}

// ---- checksum mismatch -------------------------------------------------------------

#[test]
fn a_checksum_mismatch_is_a_warning_line_in_the_report_and_a_failure_in_check() {
    let mut data = all_types();
    data[1000] ^= 0x01;
    let eof = data.len() - 9;
    let computed = crc64(&data[..=eof]);
    let warning = format!(
        "checksum mismatch: the file stores 0xcbadfd70b6e27532 (after the EOF byte at offset {eof}), \
         its bytes hash to 0x{computed:016x}: the file is damaged and some figures may be wrong"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "flipped.rdb", &data);
    // Both checksums and where the stored one is, as `check` says.
    let stderr = format!("rdblens: {}: {warning}\n", file.display());

    let out = run(&["keys", "-q"], &file);
    assert_eq!((out.code, out.stderr.as_str()), (3, stderr.as_str()));

    let out = run(&["report", "--section", "bigkeys"], &file);
    assert_eq!(out.code, 3);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[0].ends_with("checksum mismatch, 227 keys, estimated for redis-7.4.5"));
    assert_eq!(lines[1], format!("WARNING: {warning}"));
    assert_eq!(out.stderr, stderr);

    let out = run(&["report", "--format", "json"], &file);
    assert_eq!(out.code, 3);
    let doc = json(&out.stdout);
    assert_eq!(doc["files"][0]["checksum"], "mismatch");
    assert_eq!(doc["files"][0]["warnings"], serde_json::json!([warning]));
    // The same facts, typed, for programs.
    assert_eq!(
        doc["files"][0]["checksum_mismatch"],
        serde_json::json!({"stored": 0xcbadfd70b6e27532u64, "computed": computed, "eof_offset": eof})
    );
    assert_schema_valid(&doc);
    assert_eq!(out.stderr, stderr);

    let out = run(&["report", "--strict"], &file);
    assert_eq!((out.code, out.stdout.as_str()), (3, ""));
    assert_eq!(
        out.stderr,
        format!("rdblens: {}: --strict: {warning}\n", file.display())
    );

    let out = run(&["check"], &file);
    assert_eq!(out.code, 3);
    assert!(out.stdout.contains("keys: 227\n") && !out.stdout.contains("\nok\n"));
    assert_eq!(
        out.stderr,
        format!(
            "rdblens: {}: checksum mismatch: the file stores 0xcbadfd70b6e27532, its bytes hash to \
             0x{computed:016x} (EOF at byte offset {eof})\n",
            file.display()
        )
    );
    // A sound file's JSON has no warnings at all.
    let doc = json(&run(&["report", "--format", "json"], &root().join(ALL_TYPES)).stdout);
    assert!(doc["files"][0].get("warnings").is_none());
    assert!(doc["files"][0].get("checksum_mismatch").is_none());
}

// ---- values that do not decode ----------------------------------------------------

#[test]
fn a_value_that_does_not_decode_is_left_out_reported_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let data = RdbBuilder::new()
        .string(b"ok", b"1", None)
        .damaged_hash(b"broken")
        .finish();
    let file = write(&dir, "damaged.rdb", &data);
    let damage =
        "corrupt listpack: header says 1936287860 bytes, the blob has 22 at byte offset 62 in key \"broken\"";
    let out = run(&["report", "--section", "bigkeys"], &file);
    assert_eq!(out.code, 3);
    assert!(out
        .stdout
        .contains(&format!("\n1 keys could not be decoded; first: {damage}\n")));
    assert_eq!(
        out.stderr,
        format!("rdblens: 1 keys could not be decoded and are left out of the report; first: {damage}\n")
    );
    let out = run(&["report", "--strict"], &file);
    assert_eq!((out.code, out.stdout.as_str()), (3, ""));
    assert_eq!(
        out.stderr,
        format!(
            "rdblens: {}: --strict: 1 keys could not be decoded; first: {damage}\n",
            file.display()
        )
    );
    let out = run(&["check"], &file);
    assert_eq!(out.code, 3);
    assert_eq!(out.stderr, format!("rdblens: {}: {damage}\n", file.display()));
}

// ---- versions, type bytes, opcodes and modules rdblens does not know ---------------

#[test]
fn a_newer_version_is_refused_with_a_hint_and_read_with_skip_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "v15.rdb", &rdb(b"REDIS0015", &[]));
    let refused = format!(
        "rdblens: {}: unsupported RDB version 15 in a Redis file (supported: Redis RDB 1-14 \
         (REDIS0001-REDIS0014), Valkey RDB 80-81 (VALKEY080, VALKEY081)) at byte offset 0; --skip-unknown \
         reads it as Redis RDB 14, up to the first type or opcode RDB 14 does not have\n",
        file.display()
    );
    for cmd in ["report", "keys", "check"] {
        let out = run(&[cmd], &file);
        assert_eq!((out.code, out.stdout.as_str()), (3, ""), "{cmd}");
        assert_eq!(out.stderr, refused, "{cmd}");
    }
    let warning =
        "Redis RDB version 15 is newer than any rdblens knows: read as RDB 14, up to the first type or \
                   opcode RDB 14 does not have";
    let out = run(&["report", "--skip-unknown", "--section", "bigkeys"], &file);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert_eq!(
        out.stdout.lines().nth(1),
        Some(format!("WARNING: {warning}").as_str())
    );
    let out = run(&["report", "--skip-unknown", "--format", "json"], &file);
    assert_eq!(
        json(&out.stdout)["files"][0]["warnings"],
        serde_json::json!([warning])
    );
    assert_eq!(json(&out.stdout)["totals"]["keys"], 1);
    assert_schema_valid(&json(&out.stdout));
    let out = run(&["keys", "--skip-unknown"], &file);
    assert_eq!(out.code, 0);
    assert!(out.stdout.lines().nth(1).unwrap().starts_with("0,string,a,"));
    let out = run(&["check", "--skip-unknown"], &file);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains(
        "format: Redis RDB 15 (REDIS0015)\nwarning: RDB 15 is newer than any rdblens knows: read as RDB 14 \
         (--skip-unknown)\n"
    ));
    assert!(out.stdout.ends_with("\nok\n"));
    // Versions older than any known, or in Valkey's reserved gap, get no
    // hint: nothing can read them.
    let old = write(&dir, "v79.rdb", &rdb(b"VALKEY079", &[]));
    for flags in [&["check"][..], &["check", "--skip-unknown"]] {
        let out = run(flags, &old);
        assert_eq!(out.code, 3);
        assert_eq!(
            out.stderr,
            format!(
                "rdblens: {}: unsupported RDB version 79 in a Valkey file (supported: Redis RDB 1-14 \
                 (REDIS0001-REDIS0014), Valkey RDB 80-81 (VALKEY080, VALKEY081)) at byte offset 0\n",
                old.display()
            )
        );
    }
}

#[test]
fn an_unknown_type_byte_or_opcode_stops_the_walk_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    // (file, magic, the unknown record, flags, message)
    type Case = (
        &'static str,
        &'static [u8],
        Vec<u8>,
        &'static [&'static str],
        &'static str,
    );
    let cases: [Case; 3] = [
        (
            "type30.rdb",
            b"REDIS0012",
            [vec![30], raw(b"k"), raw(b"v")].concat(),
            &[],
            "unknown value type byte 30 (0x1e) for Redis RDB version 12, which has types 0-7, 9-25: a \
             record's length cannot be found without its type, so the walk stops here at byte offset 33",
        ),
        (
            "type29.rdb",
            b"REDIS0015",
            [vec![29], raw(b"tpl"), vec![0; 4]].concat(),
            &["--skip-unknown"],
            "unknown value type byte 29 (0x1d) for Redis RDB version 15, which has types 0-7, 9-28: a \
             record's length cannot be found without its type, so the walk stops here at byte offset 33",
        ),
        (
            "opcode.rdb",
            b"REDIS0012",
            [vec![0xf3, 1], vec![0; 8]].concat(),
            &[],
            "unknown record opcode 243 (0xf3) for Redis RDB version 12, which has opcodes 0xf4-0xff (0xf3 is \
             KEY_META only from Redis RDB 13 on): a record's length cannot be found without its type, so the \
             walk stops here at byte offset 33",
        ),
    ];
    for (name, magic, body, flags, message) in cases {
        let file = write(&dir, name, &rdb(magic, &body));
        let out = run(&[&["report", "--section", "bigkeys"][..], flags].concat(), &file);
        assert_eq!(out.code, 3, "{name}");
        assert!(
            out.stdout.contains(&format!(
                "\nINCOMPLETE: the report covers only the part before byte offset 33: {message}\n"
            )),
            "{name}: {}",
            out.stdout
        );
        // The key before the damage is in the report.
        assert!(out.stdout.contains("; 1 keys, 0 with expiry;"), "{name}");
        assert_eq!(
            out.stderr,
            format!("rdblens: {}: incomplete: {message}\n", file.display()),
            "{name}"
        );
        let out = run(&[&["check"][..], flags].concat(), &file);
        assert_eq!(out.code, 3, "{name}");
        assert_eq!(
            out.stderr,
            format!("rdblens: {}: {message}\n", file.display()),
            "{name}"
        );
    }
}

#[test]
fn values_of_unknown_modules_are_reported_not_errors() {
    let mut value = vec![0x81];
    value.extend_from_slice(&module_id(b"mymodule1", 3).to_be_bytes());
    value.extend_from_slice(&[0x02, 0x05, 0x05]); // UINT 5, then a STRING
    value.extend(raw(b"hello"));
    value.push(0x04); // DOUBLE
    value.extend_from_slice(&1.5f64.to_le_bytes());
    value.push(0x00); // EOF
    let body = [vec![7], raw(b"mod:key"), value.clone()].concat();
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "module.rdb", &rdb(b"REDIS0011", &body));

    let out = run(&["report", "--format", "json"], &file);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let doc = json(&out.stdout);
    let module = doc["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "module:mymodule1")
        .expect("the module type is in the report");
    assert_eq!(module["keys"], 1);
    // No memory model for a module nobody knows: its serialized size stands in.
    assert_eq!(module["serialized_bytes"], value.len());
    assert_eq!(module["memory"], value.len());

    let out = run(&["keys"], &file);
    assert_eq!(out.code, 0);
    let row = out.stdout.lines().find(|l| l.contains("mod:key")).unwrap();
    assert!(row.contains(",mymodule1,"), "{row}");
    let out = run(&["check"], &file);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("  module_2: 1\n"), "{}", out.stdout);

    // Type 6 (Redis 4.0 release candidates) records no length: the walk
    // stops there, and the message names the module.
    let mut old = vec![6];
    old.extend(raw(b"old:mod"));
    old.push(0x81);
    old.extend_from_slice(&module_id(b"hellotype", 0).to_be_bytes());
    old.extend_from_slice(&[0x02, 0x05, 0x00]);
    let file = write(&dir, "module6.rdb", &rdb(b"REDIS0008", &old));
    let out = run(&["check"], &file);
    assert_eq!(out.code, 3);
    assert_eq!(
        out.stderr,
        format!(
            "rdblens: {}: unsupported value type module (type 6): a value of module hellotype (encoding \
             version 0), as only Redis 4.0 release candidates wrote them: its length is not recorded, so the \
             walk stops here at byte offset 42 in key \"old:mod\"\n",
            file.display()
        )
    );
}

// ---- resource limits ------------------------------------------------------------------

#[test]
fn lengths_beyond_the_file_fail_at_once_naming_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "string64.rdb",
            [vec![0], raw(b"big"), vec![0x81], vec![0xff; 8], b"abc".to_vec()].concat(),
            "unexpected end of input while reading string value: needed 18446744073709551615 bytes, 12 remain \
             at byte offset 47 in key \"big\"",
        ),
        (
            "count32.rdb",
            [vec![1], raw(b"list"), vec![0x80, 0xff, 0xff, 0xff, 0xff], raw(b"x")].concat(),
            "unexpected end of input while reading collection size: needed 4294967295 bytes, 11 remain at byte \
             offset 39 in key \"list\"",
        ),
        (
            "lzf.rdb",
            // An LZF string that claims 2^40 bytes from 4 compressed ones.
            [vec![0], raw(b"z"), vec![0xc3, 0x04, 0x81], (1u64 << 40).to_be_bytes().to_vec(), vec![0; 4]].concat(),
            "corrupt LZF data: declared uncompressed length 1099511627776 is impossible for 4 compressed bytes \
             at byte offset 38 in key \"z\"",
        ),
    ];
    for (name, body, message) in cases {
        let file = write(&dir, name, &rdb(b"REDIS0011", &body));
        let started = std::time::Instant::now();
        let out = run(&["check"], &file);
        assert_eq!(out.code, 3, "{name}");
        assert_eq!(
            out.stderr,
            format!("rdblens: {}: {message}\n", file.display()),
            "{name}"
        );
        let out = run(&["report", "--section", "bigkeys"], &file);
        assert_eq!(out.code, 3, "{name}");
        assert_eq!(
            out.stderr,
            format!("rdblens: {}: incomplete: {message}\n", file.display()),
            "{name}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{name}");
    }
}

// ---- not RDB at all, and gzip -----------------------------------------------------------

#[test]
fn files_that_are_not_rdb_say_what_they_look_like() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 5] = [
        ("empty.rdb", b"", "not an RDB file: the file is empty at byte offset 0"),
        (
            "appendonly.aof",
            b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n",
            "not an RDB file: it looks like an AOF file (Redis commands), not an RDB snapshot at byte offset 0",
        ),
        (
            "zstd.rdb.zst",
            &[0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00],
            "(decompressed from zstd): not an RDB file: the file is empty at byte offset 0",
        ),
        (
            "notes.txt",
            b"hello\n",
            "not an RDB file: it starts with text \"hello\\n\", expected the magic REDIS00NN or VALKEYNNN at byte \
             offset 0",
        ),
        (
            "bytes.bin",
            &[0, 1, 2, 3],
            "not an RDB file: it starts with bytes [00, 01, 02, 03], expected the magic REDIS00NN or VALKEYNNN \
             at byte offset 0",
        ),
    ];
    for (name, data, message) in cases {
        let file = write(&dir, name, data);
        for cmd in ["report", "keys", "check"] {
            let out = run(&[cmd], &file);
            if name.ends_with(".zst") {
                // A stub zstd frame: decompressing it fails at once.
                if cmd == "check" {
                    continue;
                }
                assert_eq!(out.code, 3);
                let lines: Vec<&str> = out.stderr.lines().collect();
                assert!(lines[0].starts_with(&format!(
                    "rdblens: {}: the zstd stream is damaged or cut short after 0 decompressed bytes",
                    file.display()
                )));
                assert_eq!(lines[1], format!("rdblens: {} {message}", file.display()));
                continue;
            }
            assert_eq!((out.code, out.stdout.as_str()), (3, ""), "{cmd} {name}");
            assert_eq!(
                out.stderr,
                format!("rdblens: {}: {message}\n", file.display()),
                "{cmd} {name}"
            );
        }
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

#[test]
fn gzip_compressed_dumps_are_read_transparently() {
    let dir = tempfile::tempdir().unwrap();
    let data = all_types();
    let gz = gzip(&data);
    let file = write(&dir, "dump.rdb.gz", &gz);
    let out = run(&["report", "--format", "json"], &file);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let doc = json(&out.stdout);
    let plain = json(&run(&["report", "--format", "json"], &root().join(ALL_TYPES)).stdout);
    assert_eq!(doc["totals"], plain["totals"]);
    assert_eq!(doc["files"][0]["size"], data.len());
    let out = run(&["check"], &file);
    assert_eq!(out.code, 0);
    assert!(out.stdout.starts_with(&format!(
        "file: {} (gzip, {} bytes decompressed)\nformat: Redis RDB 12 (REDIS0012)\n",
        file.display(),
        data.len()
    )));
    let out = run(&["keys"], &file);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, run(&["keys"], &root().join(ALL_TYPES)).stdout);

    // A gzip stream cut short: the part it decompresses to is reported,
    // marked incomplete where the RDB data ends.
    let cut = write(&dir, "cut.rdb.gz", &gz[..gz.len() / 2]);
    let out = run(&["report", "--section", "bigkeys"], &cut);
    assert_eq!(out.code, 3);
    assert!(out
        .stdout
        .contains("\nINCOMPLETE: the report covers only the part before byte offset "));
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stderr);
    let prefix = format!("rdblens: {}: ", cut.display());
    assert!(lines[0].starts_with(&format!("{prefix}the gzip stream is damaged or cut short after ")));
    assert!(lines[0].ends_with(" decompressed bytes (incomplete deflate stream): reading those"));
    assert!(lines[1].starts_with(&format!(
        "{prefix}incomplete: unexpected end of input while reading "
    )));

    // Gzip around something that is not a dump says both.
    let text = write(&dir, "notes.gz", &gzip(b"hello\n"));
    let out = run(&["report"], &text);
    assert_eq!(out.code, 3);
    assert_eq!(
        out.stderr,
        format!(
            "rdblens: {} (decompressed from gzip): not an RDB file: it starts with text \"hello\\n\", expected \
             the magic REDIS00NN or VALKEYNNN at byte offset 0\n",
            text.display()
        )
    );
}

// ---- empty collections ------------------------------------------------------------

#[test]
fn empty_collections_are_named_and_counted_in_no_other_figure() {
    let data = RdbBuilder::new()
        .string(b"kept", b"v", None)
        .empty_collection(2, b"zz:set")
        .empty_collection(1, b"a:list")
        .empty_collection(4, b"m:hash")
        .empty_collection(5, b"b:zset")
        .finish();
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "empty.rdb", &data);

    let out = run(&["report", "--format", "json"], &file);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let doc = json(&out.stdout);
    // The server would load one key: the string.
    assert_eq!(doc["totals"]["keys"], 1);
    assert_eq!(doc["types"].as_array().unwrap().len(), 1);
    assert_eq!(
        doc["empty_collections"],
        serde_json::json!({
            "keys": 4,
            // The values as stored: a count of 0, one byte each.
            "serialized_bytes": 4,
            "named": [
                {"db": 0, "key": "a:list", "type": "list"},
                {"db": 0, "key": "b:zset", "type": "zset"},
                {"db": 0, "key": "m:hash", "type": "hash"},
                {"db": 0, "key": "zz:set", "type": "set"},
            ]
        })
    );
    assert_schema_valid(&doc);

    let out = run(&["report", "--section", "bigkeys"], &file);
    assert_eq!(out.code, 0);
    let line = out.stdout.lines().find(|l| l.starts_with("4 empty")).unwrap();
    assert_eq!(
        line,
        "4 empty collections (4 B serialized) left out of every figure: a server drops them on \
         load; db0 \"a:list\" (list), db0 \"b:zset\" (zset), db0 \"m:hash\" (hash), db0 \"zz:set\" (set)"
    );
    let out = run(&["report", "--format", "html"], &file);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains(
        "<li class=\"warn\">4 empty collections, left out of every figure: a server drops them on \
         load; db0 &quot;a:list&quot; (list), db0 &quot;b:zset&quot; (zset), db0 &quot;m:hash&quot; (hash), \
         db0 &quot;zz:set&quot; (set)</li>"
    ));
    // A dump without any has no such line and an empty record.
    let sound = json(&run(&["report", "--format", "json"], &root().join(ALL_TYPES)).stdout);
    assert_eq!(sound["empty_collections"]["keys"], 0);
}
