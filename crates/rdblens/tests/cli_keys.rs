//! `rdblens keys`: columns, file order, filters, formats, binary keys,
//! exit codes and error messages.

mod support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use predicates::str::contains;
use rdblens_parser::Rdb;
use serde_json::Value;
use support::{rdblens, root, RdbBuilder, ALL_TYPES};

const HEADER: &str = "database,type,key,size_in_bytes,encoding,num_elements,len_largest_element,expiry,\
                      expiry_ms,ttl_ms,serialized_bytes,rdb_type,module,idle_seconds,lfu_freq,slot,key_escaped";

/// The CSV records (header first) of `keys` with `args`.
fn csv_rows(args: &[&str]) -> Vec<csv::StringRecord> {
    let out = rdblens()
        .arg("keys")
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let mut reader = csv::ReaderBuilder::new().has_headers(false).from_reader(&out[..]);
    reader.records().map(|r| r.unwrap()).collect()
}

fn jsonl(args: &[&str]) -> Vec<Value> {
    let out = rdblens()
        .arg("keys")
        .args(args)
        .args(["--format", "jsonl"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    out.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

/// The key column of CSV `text` with plain keys (no quoting), header skipped.
fn key_column(text: &str) -> Vec<&str> {
    text.lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap())
        .collect()
}

fn row<'r>(rows: &'r [csv::StringRecord], key: &str) -> &'r csv::StringRecord {
    rows.iter()
        .find(|r| &r[2] == key)
        .unwrap_or_else(|| panic!("no row for {key}"))
}

#[test]
fn csv_starts_with_the_rdb_tools_columns() {
    let rows = csv_rows(&[ALL_TYPES]);
    assert_eq!(rows[0].iter().collect::<Vec<_>>().join(","), HEADER);
    assert!(HEADER
        .starts_with("database,type,key,size_in_bytes,encoding,num_elements,len_largest_element,expiry,"));
    assert_eq!(rows.len(), 1 + 227);
    let r = row(&rows, "hash:limit:entries:over");
    assert_eq!(&r[0], "0");
    assert_eq!(&r[1], "hash");
    assert_eq!(&r[4], "hashtable");
    assert_eq!(&r[5], "513");
    assert_eq!(&r[11], "hash");
    // rdb-tools' type name for zsets.
    assert_eq!(&row(&rows, "leaderboard:global")[1], "sortedset");
    // Strings: length as elements and as largest element.
    let s = row(&rows, "str:embstr");
    assert_eq!((&s[1], &s[5], &s[6]), ("string", "11", "11"));
    // No expiry: empty fields.
    assert_eq!((&s[7], &s[8], &s[9]), ("", "", ""));
}

#[test]
fn records_come_in_file_order() {
    let data = std::fs::read(root().join(ALL_TYPES)).unwrap();
    let expected: Vec<(u64, Vec<u8>)> = Rdb::new(&data)
        .unwrap()
        .entries()
        .map(|e| {
            let e = e.unwrap();
            (e.db, e.key_bytes().unwrap().into_owned())
        })
        .collect();
    for threads in ["1", "3"] {
        let got: Vec<(u64, Vec<u8>)> = jsonl(&[ALL_TYPES, "--threads", threads])
            .iter()
            .map(|v| {
                (
                    v["database"].as_u64().unwrap(),
                    v["key"].as_str().unwrap().as_bytes().to_vec(),
                )
            })
            .collect();
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(&expected) {
            let plain = std::str::from_utf8(&e.1).is_ok_and(|k| !k.chars().any(char::is_control));
            if plain {
                assert_eq!(g, e);
            }
        }
    }
}

#[test]
fn size_in_bytes_is_the_memory_estimate_of_the_report() {
    let out = rdblens()
        .args(["report", ALL_TYPES, "--format", "json", "--section", "bigkeys"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    let rows = jsonl(&[ALL_TYPES]);
    for top in doc["top_keys"]["by_memory"].as_array().unwrap() {
        let r = rows
            .iter()
            .find(|r| r["key"] == top["key"] && r["database"] == top["db"])
            .unwrap();
        assert_eq!(r["size_in_bytes"], top["memory"]);
        assert_eq!(r["serialized_bytes"], top["serialized_bytes"]);
        assert_eq!(r["num_elements"], top["elements"]);
    }
    let total: u64 = rows.iter().map(|r| r["size_in_bytes"].as_u64().unwrap()).sum();
    assert_eq!(total, doc["totals"]["memory"].as_u64().unwrap());
}

#[test]
fn expiry_is_iso_utc_with_ms_and_ttl() {
    let rows = jsonl(&[ALL_TYPES, "--db", "1"]);
    let r = rows.iter().find(|r| r["key"] == "db1:hash").unwrap();
    assert_eq!(r["expiry"], "2030-03-17T17:46:40.123000");
    assert_eq!(r["expiry_ms"], 1_900_000_000_123i64);
    // The reference time is the snapshot's ctime (1795292217 s).
    assert_eq!(r["ttl_ms"], 1_900_000_000_123i64 - 1_795_292_217_000);
    let rows = jsonl(&[ALL_TYPES, "--db", "1", "--now", "1900000000"]);
    let r = rows.iter().find(|r| r["key"] == "db1:hash").unwrap();
    assert_eq!(r["ttl_ms"], 123);
    let rows = csv_rows(&[ALL_TYPES, "--match", "ttl:str*"]);
    assert!(
        rows[1..].iter().all(|r| r[7].len() >= 19 && &r[7][10..11] == "T"),
        "{rows:?}"
    );
}

#[test]
fn binary_keys_are_escaped_the_redis_cli_way() {
    let rows = csv_rows(&[ALL_TYPES, "--match", "bin:*"]);
    let keys: Vec<(&str, &str)> = rows[1..].iter().map(|r| (&r[2], &r[16])).collect();
    assert!(keys.contains(&(r"bin:\xff\xfe\x00\x01key", "true")), "{keys:?}");
    assert!(keys.contains(&(r"bin:\x80invalid-utf8", "true")), "{keys:?}");
    // UTF-8 names with control characters are escaped too (no raw tab,
    // newline or escape byte reaches a terminal or a line-based tool).
    let rows = csv_rows(&[ALL_TYPES, "--match", "key*"]);
    let names: Vec<(&str, &str)> = rows[1..].iter().map(|r| (&r[2], &r[16])).collect();
    assert!(
        names.contains(&(r"key\twith\ttabs\nand\nnewlines", "true")),
        "{names:?}"
    );
    assert!(names.contains(&("key with spaces", "false")));
    let raw = rdblens()
        .args(["keys", ALL_TYPES, "--match", "key*tabs*"])
        .assert()
        .success();
    let text = String::from_utf8(raw.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("0,string,key\\twith\\ttabs\\nand\\nnewlines,"),
        "{text}"
    );
}

#[test]
fn jsonl_has_the_same_fields_typed() {
    let rows = jsonl(&[ALL_TYPES]);
    assert_eq!(rows.len(), 227);
    let names: Vec<&String> = rows[0].as_object().unwrap().keys().collect();
    let mut expected: Vec<&str> = HEADER.split(',').collect();
    expected.sort_unstable();
    assert_eq!(names, expected, "same field names as the CSV columns");
    let m = rows.iter().find(|r| r["key"] == "mod:hellotype").unwrap();
    assert_eq!(
        (m["type"].as_str(), m["module"].as_str()),
        (Some("module"), Some("hellotype"))
    );
    assert!(rows.iter().all(|r| r["slot"].as_u64().unwrap() < 16384));
}

#[test]
fn lru_and_lfu_columns() {
    let lru = jsonl(&["fixtures/rdb/redis-7.4.5/lru.rdb"]);
    assert!(lru
        .iter()
        .all(|r| r["idle_seconds"].is_u64() && r["lfu_freq"].is_null()));
    let lfu = jsonl(&["fixtures/rdb/redis-7.4.5/lfu.rdb"]);
    assert!(lfu
        .iter()
        .all(|r| r["lfu_freq"].is_u64() && r["idle_seconds"].is_null()));
}

#[test]
fn filters_as_report() {
    assert_eq!(csv_rows(&[ALL_TYPES, "--db", "1"]).len(), 1 + 7);
    assert_eq!(csv_rows(&[ALL_TYPES, "--db", "1", "--db", "15"]).len(), 1 + 9);
    let zsets = csv_rows(&[ALL_TYPES, "--type", "zset"]);
    assert_eq!(zsets.len(), 1 + 12);
    assert!(zsets[1..].iter().all(|r| &r[1] == "sortedset"));
    assert_eq!(
        csv_rows(&[ALL_TYPES, "--type", "sortedset", "--type", "hash"]).len(),
        1 + 12 + 38
    );
    assert_eq!(csv_rows(&[ALL_TYPES, "--match", "user:*"]).len(), 1 + 24);
    assert_eq!(csv_rows(&[ALL_TYPES, "--prefix", "session:"]).len(), 1 + 30);
    // No match: the header alone.
    assert_eq!(csv_rows(&[ALL_TYPES, "--prefix", "nothing:"]).len(), 1);
    rdblens()
        .args(["keys", ALL_TYPES, "--type", "blob"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "rdblens: unknown type 'blob' (expected string, list, set, zset, hash, stream, module, array)\n",
        );
}

#[test]
fn model_flags_change_the_estimates() {
    let enc = |args: &[&str]| -> String {
        let mut all = vec![ALL_TYPES, "--match", "hash:limit:entries:over"];
        all.extend_from_slice(args);
        csv_rows(&all)[1][4].to_string()
    };
    assert_eq!(enc(&[]), "hashtable");
    assert_eq!(enc(&["--limit", "hash-max-listpack-entries=1024"]), "listpack");
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("redis.conf");
    std::fs::write(&conf, "hash-max-listpack-entries 2000\n").unwrap();
    assert_eq!(enc(&["--config", conf.to_str().unwrap()]), "listpack");
    let size = |args: &[&str]| -> u64 {
        let mut all = vec![ALL_TYPES, "--match", "str:big:1mb-random"];
        all.extend_from_slice(args);
        csv_rows(&all)[1][3].parse().unwrap()
    };
    assert_ne!(
        size(&["--target", "valkey-8.1"]),
        size(&["--target", "redis-6.2"])
    );
    assert!(size(&["--jemalloc-quantum", "16"]) >= size(&["--jemalloc-quantum", "8"]));
    rdblens()
        .args(["keys", ALL_TYPES, "--limit", "list-max-ziplist-entries=5"])
        .assert()
        .code(2)
        .stderr(contains("unknown limit 'list-max-ziplist-entries'"));
}

#[test]
fn output_and_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("keys.csv");
    rdblens()
        .args(["keys", ALL_TYPES, "--quiet", "-o"])
        .arg(&out)
        .assert()
        .success()
        .stdout("")
        .stderr("");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with(HEADER));
    rdblens()
        .args(["keys", ALL_TYPES, "--output", "/nonexistent/dir/k.csv"])
        .assert()
        .code(4)
        .stderr("rdblens: cannot write /nonexistent/dir/k.csv: No such file or directory (os error 2)\n");
}

#[test]
fn a_truncated_file_streams_the_keys_before_the_damage_and_exits_3() {
    let data = std::fs::read(root().join(ALL_TYPES)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.rdb");
    std::fs::write(&cut, &data[..600_000]).unwrap();
    let out = rdblens().arg("keys").arg(&cut).assert().code(3).stderr(format!(
        "rdblens: {}: incomplete: unexpected end of input while reading string value: needed 1048576 bytes, \
         460260 remain at byte offset 139740 in key \"str:big:1mb-random\"\n",
        cut.display()
    ));
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(reader.records().count(), 133);
}

#[test]
fn damaged_values_are_skipped_reported_and_exit_3() {
    let data = RdbBuilder::new()
        .string(b"before", b"1", None)
        .damaged_hash(b"broken")
        .string(b"after", b"2", Some(1_700_000_060_000))
        .finish();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("damaged.rdb");
    std::fs::write(&file, data).unwrap();
    let out = rdblens()
        .arg("keys")
        .arg(&file)
        .assert()
        .code(3)
        .stderr(contains(format!(
            "rdblens: {}: damaged key skipped: corrupt listpack",
            file.display()
        )))
        .stderr(contains("in key \"broken\""))
        .stderr(contains("at byte offset"));
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert_eq!(key_column(&text), ["before", "after"]);
    assert!(
        text.contains(",2023-11-14T22:14:20,1700000060000,60000,"),
        "{text}"
    );
}

/// Rows of many batches (2,048 keys a batch), whatever the threads,
/// each once and in file order; damaged keys among them, one the first
/// key of a batch.
#[test]
fn rows_of_many_batches_come_once_each_in_file_order() {
    let mut b = RdbBuilder::new();
    let mut expected = Vec::new();
    for i in 0..5_000 {
        if i == 3_000 || i == 4_096 {
            b = b.damaged_hash(format!("broken:{i}").as_bytes());
            continue;
        }
        let key = format!("key:{i:06}");
        b = b.string(key.as_bytes(), b"value", None);
        expected.push(key);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("batches.rdb");
    std::fs::write(&file, b.finish()).unwrap();
    for threads in ["1", "2", "3"] {
        let out = rdblens()
            .arg("keys")
            .arg(&file)
            .args(["--threads", threads, "-q"])
            .assert()
            .code(3);
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        assert_eq!(key_column(&text), expected, "threads {threads}");
    }
}

#[test]
fn not_rdb_and_unreadable_files_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("notes.txt");
    std::fs::write(&txt, "hello\n").unwrap();
    rdblens()
        .arg("keys")
        .arg(&txt)
        .assert()
        .code(3)
        .stdout("")
        .stderr(contains(format!("rdblens: {}: not an RDB file", txt.display())));
    rdblens()
        .args(["keys", "/nonexistent.rdb"])
        .assert()
        .code(3)
        .stderr("rdblens: /nonexistent.rdb: cannot open: No such file or directory (os error 2)\n");
}

#[test]
fn a_checksum_mismatch_exits_3_after_the_records() {
    let mut data = std::fs::read(root().join(ALL_TYPES)).unwrap();
    data[1000] ^= 0x01;
    let dir = tempfile::tempdir().unwrap();
    let flipped = dir.path().join("flipped.rdb");
    std::fs::write(&flipped, data).unwrap();
    let out = rdblens()
        .arg("keys")
        .arg(&flipped)
        .assert()
        .code(3)
        .stderr(contains("checksum mismatch"));
    // 227 records, a header, a final newline (the one key with newlines is escaped).
    assert_eq!(out.get_output().stdout.split(|&b| b == b'\n').count(), 229);
}

#[test]
fn usage_errors_exit_2() {
    rdblens()
        .arg("keys")
        .assert()
        .code(2)
        .stderr(contains("required arguments were not provided"));
    rdblens()
        .args(["keys", ALL_TYPES, "--format", "table"])
        .assert()
        .code(2)
        .stderr(contains("invalid value 'table'"));
    // Several files are read one after the other; a missing one is bad input.
    rdblens()
        .args(["keys", ALL_TYPES, "more.rdb"])
        .assert()
        .code(3)
        .stdout("")
        .stderr("rdblens: more.rdb: cannot open: No such file or directory (os error 2)\n");
    rdblens()
        .args(["keys", ALL_TYPES, "--target", "redis-x"])
        .assert()
        .code(2)
        .stderr(contains("--target"));
}

/// `rdblens keys big.rdb | head -1`: the closed pipe ends the walk quietly.
#[test]
fn a_closed_pipe_stops_quietly() {
    let mut b = RdbBuilder::new();
    for i in 0..50_000 {
        b = b.string(format!("key:{i:06}").as_bytes(), b"value", None);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("many.rdb");
    std::fs::write(&file, b.finish()).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("rdblens"))
        .arg("keys")
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first.trim_end(), HEADER);
    // The reader is dropped here: the pipe closes.
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
