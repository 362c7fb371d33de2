//! `report --format info-keysizes` and `compare-info` against the answers
//! of a real Redis 8 server (redis/redis PR 13592's head, which added
//! `INFO keysizes`; fixtures/keysizes/README.md): the output equals the
//! server's `INFO keysizes` byte for byte (its `\r\n` line ends as `\n`),
//! and the comparison names exactly the bins where the server's running
//! histograms went wrong.

mod support;

use std::collections::BTreeMap;

use support::{rdblens, root};

const FIXTURES: [&str; 3] = ["mixed", "edits", "deleted"];

fn fixture(name: &str) -> String {
    format!("fixtures/keysizes/{name}")
}

/// A saved answer with `\r\n` line ends made `\n`.
fn answer(file: &str) -> String {
    std::fs::read_to_string(root().join(fixture(file)))
        .unwrap()
        .replace("\r\n", "\n")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = rdblens().current_dir(root()).args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn keysizes(args: &[&str]) -> String {
    let mut all = vec!["report", "-q", "--format", "info-keysizes"];
    all.extend(args);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn output_is_the_servers_answer_after_a_reload_byte_for_byte() {
    for name in FIXTURES {
        let rdb = fixture(&format!("{name}.rdb"));
        let expected = answer(&format!("{name}.reloaded.info"));
        assert_eq!(keysizes(&[&rdb]), expected, "{name}");
    }
    // Written out, so a change in the fixtures shows here too.
    assert_eq!(
        keysizes(&[&fixture("mixed.rdb")]),
        "# Keysizes\n\
         db0_distrib_strings_sizes:1=3,2=4,4=7,8=8,16=20,32=10,64=3,128=2,256=3,512=2,1K=2,4K=1,8K=1,32K=1,64K=2,512K=1,1M=1,2M=1\n\
         db0_distrib_lists_items:1=1,2=2,4=3,8=2,16=1,64=2,128=2,512=2,4K=1\n\
         db0_distrib_sets_items:1=2,2=4,4=6,8=4,16=2,64=4,128=4,512=4,4K=2\n\
         db0_distrib_zsets_items:1=1,2=2,4=3,8=2,16=1,64=2,128=2,512=2,4K=1\n\
         db0_distrib_hashes_items:1=1,2=3,4=3,8=2,16=1,64=2,128=3,512=2,4K=1\n\
         db1_distrib_strings_sizes:1=1,8=1,256=1\n\
         db1_distrib_lists_items:32=1\n\
         db3_distrib_hashes_items:2=1,4=1,512=1\n\
         db15_distrib_zsets_items:2=1\n"
    );
    // Every key deleted: the header alone, as the server answers.
    assert_eq!(keysizes(&[&fixture("deleted.rdb")]), "# Keysizes\n");
}

#[test]
fn compare_info_finds_no_difference_with_the_reloaded_server() {
    for (name, bins) in [("mixed", 62), ("edits", 136), ("deleted", 0)] {
        let rdb = fixture(&format!("{name}.rdb"));
        let info = fixture(&format!("{name}.reloaded.info"));
        let (code, out, err) = run(&["compare-info", "-q", &rdb, &info]);
        assert_eq!(code, 0, "{name}: {out}{err}");
        assert!(
            out.starts_with(&format!("the same: {bins} bins compared, every one equal\n")),
            "{out}"
        );
    }
}

/// The answers right after SAVE differ where the server at that commit
/// missed a change (fixtures/keysizes/README.md): a HyperLogLog made
/// dense by PFADD stays in its sparse bin, and SETRANGE on a new key
/// counts it twice. compare-info names exactly those bins.
#[test]
fn compare_info_names_the_bins_the_running_server_got_wrong() {
    let (code, out, _) = run(&[
        "compare-info",
        "-q",
        &fixture("mixed.rdb"),
        &fixture("mixed.info"),
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "line                               bin           dump         server    dump-server\n\
         db0_distrib_strings_sizes           16             20             21             -1\n\
         db0_distrib_strings_sizes           8K              1              0             +1\n\
         different: 2 of 62 bins compared differ\n\
         note: the dump's empty strings (3) are not compared: the server's INFO has no bin 0 \
         (Redis 8.0's first format counts them nowhere; --zero-bin compares them)\n"
    );
    let (code, out, _) = run(&[
        "compare-info",
        "-q",
        &fixture("edits.rdb"),
        &fixture("edits.info"),
    ]);
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[1],
        "db0_distrib_strings_sizes         128K              1              2             -1"
    );
    assert_eq!(lines[2], "different: 1 of 136 bins compared differ");
    let (code, _, _) = run(&[
        "compare-info",
        "-q",
        &fixture("deleted.rdb"),
        &fixture("deleted.info"),
    ]);
    assert_eq!(code, 0);
}

fn temp_file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn compare_info_lists_every_doctored_bin() {
    let dir = tempfile::tempdir().unwrap();
    let doctored = std::fs::read_to_string(root().join(fixture("mixed.reloaded.info")))
        .unwrap()
        // A count changed, a bin added, a line dropped, a database added.
        .replace(
            "db1_distrib_strings_sizes:1=1,8=1,256=1",
            "db1_distrib_strings_sizes:1=4,8=1,256=1,2K=7",
        )
        .replace("db3_distrib_hashes_items:2=1,4=1,512=1\r\n", "")
        .replace("db15_", "db14_");
    // A whole INFO: other sections are skipped.
    let whole =
        format!("# Server\r\nredis_version:255.255.255\r\n\r\n{doctored}\r\n# Keyspace\r\ndb0:keys=1\r\n");
    let info = temp_file(&dir, "doctored.info", whole.as_bytes());
    let (code, out, _) = run(&["compare-info", "-q", &fixture("mixed.rdb"), &info]);
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().skip(1).take(7).collect();
    assert_eq!(
        lines,
        [
            "db1_distrib_strings_sizes            1              1              4             -3",
            "db1_distrib_strings_sizes           2K              0              7             -7",
            "db3_distrib_hashes_items             2              1              0             +1",
            "db3_distrib_hashes_items             4              1              0             +1",
            "db3_distrib_hashes_items           512              1              0             +1",
            "db14_distrib_zsets_items             2              0              1             -1",
            "db15_distrib_zsets_items             2              1              0             +1",
        ]
    );
    assert!(out.contains("different: 7 of 64 bins compared differ\n"), "{out}");
}

#[test]
fn zero_bin_counts_empty_strings_as_later_releases_do() {
    let out = keysizes(&["--zero-bin", &fixture("mixed.rdb")]);
    assert!(out.contains("\ndb0_distrib_strings_sizes:0=3,1=3,2=4,"), "{out}");
    assert_eq!(out.matches("0=").count(), 1, "{out}");
    // A server's text with a bin 0 has it compared.
    let dir = tempfile::tempdir().unwrap();
    let info = answer("mixed.reloaded.info").replace("sizes:1=3,", "sizes:0=2,1=3,");
    let info = temp_file(&dir, "zero.info", info.as_bytes());
    let (code, out, _) = run(&["compare-info", "-q", &fixture("mixed.rdb"), &info]);
    assert_eq!(code, 1);
    assert!(
        out.contains("db0_distrib_strings_sizes            0              3              2             +1\n"),
        "{out}"
    );
    assert!(!out.contains("note:"), "{out}");
    // --zero-bin compares the dump's empty strings with a text without any.
    let plain = fixture("mixed.reloaded.info");
    let (code, out, _) = run(&["compare-info", "-q", "--zero-bin", &fixture("mixed.rdb"), &plain]);
    assert_eq!(code, 1);
    assert!(out.contains("different: 1 of 63 bins compared differ\n"), "{out}");
}

/// A saved INFO as the server writes it, parsed back: db -> line -> bins.
fn parse(text: &str) -> BTreeMap<String, BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (field, bins) = line.split_once(':').unwrap();
        let m: &mut BTreeMap<String, u64> = out.entry(field.to_string()).or_default();
        for bin in bins.split(',') {
            let (label, n) = bin.split_once('=').unwrap();
            *m.entry(label.to_string()).or_default() += n.parse::<u64>().unwrap();
        }
    }
    out
}

#[test]
fn shards_add_up_bin_by_bin() {
    let mixed = parse(&answer("mixed.reloaded.info"));
    let edits = parse(&answer("edits.reloaded.info"));
    let mut sum = mixed.clone();
    for (field, bins) in edits {
        for (label, n) in bins {
            *sum.entry(field.clone()).or_default().entry(label).or_default() += n;
        }
    }
    let (a, b) = (fixture("mixed.rdb"), fixture("edits.rdb"));
    let together = keysizes(&[&a, &b]);
    assert_eq!(parse(&together), sum);
    // Summaries made apart, merged.
    let dir = tempfile::tempdir().unwrap();
    let mut summaries = Vec::new();
    for (i, rdb) in [&a, &b].into_iter().enumerate() {
        let path = dir.path().join(format!("{i}.json"));
        let (code, _, err) = run(&[
            "report",
            "-q",
            "--summary-only",
            rdb,
            "-o",
            path.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        summaries.push(path.to_str().unwrap().to_string());
    }
    let (code, merged, err) = run(&["merge", "--format", "info-keysizes", &summaries[0], &summaries[1]]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(merged, together);
    // compare-info reads a summary file as the dump.
    let (code, out, _) = run(&["compare-info", &summaries[0], &fixture("mixed.reloaded.info")]);
    assert_eq!(code, 0, "{out}");
}

/// The 8.x dumps of fixtures/rdb (no INFO keysizes was saved with them):
/// the histograms built from the server's own lengths in the oracle
/// (`count`: STRLEN, LLEN, SCARD, ZCARD, HLEN) in the server's format.
#[test]
fn redis_8_dumps_histograms_are_the_oracles_lengths() {
    for server in ["redis-8.0.6", "redis-8.4.0"] {
        let dump = format!("fixtures/rdb/{server}/all-types.rdb");
        let oracle = std::fs::read_to_string(root().join(dump.replace(".rdb", ".oracle.jsonl"))).unwrap();
        let names = [
            ("string", "distrib_strings_sizes"),
            ("list", "distrib_lists_items"),
            ("set", "distrib_sets_items"),
            ("zset", "distrib_zsets_items"),
            ("hash", "distrib_hashes_items"),
        ];
        // (db, type's place, bin) -> keys
        let mut bins: BTreeMap<(u64, usize, u32), u64> = BTreeMap::new();
        for line in oracle.lines() {
            let k: serde_json::Value = serde_json::from_str(line).unwrap();
            let Some(place) = names.iter().position(|(t, _)| k["type"] == *t) else {
                continue;
            };
            let count = k["count"].as_u64().unwrap();
            if count > 0 {
                *bins
                    .entry((k["db"].as_u64().unwrap(), place, count.ilog2()))
                    .or_default() += 1;
            }
        }
        let mut expected = String::from("# Keysizes\n");
        let mut current = None;
        for (&(db, place, bin), n) in &bins {
            let label = format!("{}{}", 1u64 << (bin % 10), ["", "K", "M", "G"][bin as usize / 10]);
            if current == Some((db, place)) {
                expected.push_str(&format!(",{label}={n}"));
            } else {
                if current.is_some() {
                    expected.push('\n');
                }
                expected.push_str(&format!("db{db}_{}:{label}={n}", names[place].1));
                current = Some((db, place));
            }
        }
        expected.push('\n');
        assert!(bins.len() > 20, "{server}: {bins:?}");
        assert_eq!(keysizes(&[&dump]), expected, "{server}");
    }
}

#[test]
fn hostile_info_texts_are_refused_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[u8], &str); 14] = [
        (b"", "empty: no # Keysizes header and no field"),
        (b"# Server\r\nredis_version:8.0.0\r\n", "no # Keysizes section"),
        (
            b"# Keysizes\r\ndb0_distrib_strings_sizes\r\n",
            "line 2: `db0_distrib_strings_sizes` is not a NAME:VALUE field",
        ),
        (
            b"# Keysizes\r\nkeys:1=2\r\n",
            "line 2: field `keys` is not dbN_NAME",
        ),
        (
            b"# Keysizes\r\ndbX_distrib_sets_items:1=2\r\n",
            "line 2: field `dbX_distrib_sets_items` is not dbN_NAME",
        ),
        (
            b"# Keysizes\r\ndb99999999999999999999999_distrib_sets_items:1=2\r\n",
            "line 2: field `db9999999999999999999999",
        ),
        (
            b"# Keysizes\n\ndb0_distrib_sets_items:1=2,3=1\n",
            "line 3: db0_distrib_sets_items: `3` is not a bin",
        ),
        (
            b"# Keysizes\ndb0_distrib_sets_items:1=2,1=1\n",
            "line 2: db0_distrib_sets_items: bin 1 is given twice",
        ),
        (
            b"# Keysizes\ndb0_distrib_sets_items:1=2\ndb0_distrib_sets_items:2=2\n",
            "line 3: db0_distrib_sets_items is given twice",
        ),
        (
            b"# Keysizes\ndb0_distrib_sets_items:1=-2\n",
            "line 2: db0_distrib_sets_items: bin 1: count `-2` is not a whole number",
        ),
        (
            b"# Keysizes\ndb0_distrib_sets_items:1=99999999999999999999999\n",
            "line 2: db0_distrib_sets_items: bin 1: count `99999999999999999999999` is not a whole number",
        ),
        (
            b"# Keysizes\ndb0_distrib_sets_items:1=0\n",
            "line 2: db0_distrib_sets_items: bin 1 has 0 keys",
        ),
        (
            b"# Keysizes\ndb0_distrib_sets_items:16E=1\n",
            "line 2: db0_distrib_sets_items: `16E` is not a bin",
        ),
        (
            b"# Keysizes\ndb0_distrib_lists_items:1=1\n\xff\xfe:1=1\n",
            "line 3: not UTF-8 text (byte 1 of the line)",
        ),
    ];
    for (i, (text, message)) in cases.iter().enumerate() {
        let info = temp_file(&dir, &format!("{i}.info"), text);
        let (code, out, err) = run(&["compare-info", "-q", &fixture("mixed.rdb"), &info]);
        assert_eq!(code, 3, "{message}: {err}");
        assert_eq!(out, "", "{message}");
        assert!(
            err.contains(&format!("{info}: not an INFO keysizes text: {message}")),
            "{message}: {err}"
        );
    }
    // Past the cap: refused without reading on.
    let big = temp_file(&dir, "big.info", &vec![b'#'; (4 << 20) + 1]);
    let (code, _, err) = run(&["compare-info", "-q", &fixture("mixed.rdb"), &big]);
    assert_eq!(code, 3);
    assert!(
        err.contains("more than any INFO (4194304 bytes at most)"),
        "{err}"
    );
    // A missing file, named.
    let (code, _, err) = run(&["compare-info", "-q", &fixture("mixed.rdb"), "no-such.info"]);
    assert_eq!(code, 3);
    assert!(err.contains("no-such.info: cannot open"), "{err}");
    // A field of a later release is not compared, and said so.
    let later = temp_file(
        &dir,
        "later.info",
        answer("deleted.reloaded.info")
            .replace("# Keysizes\n", "# Keysizes\ndb0_distrib_new_things:1=1\n")
            .as_bytes(),
    );
    let (code, _, err) = run(&["compare-info", "-q", &fixture("deleted.rdb"), &later]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("line 2: db0_distrib_new_things is not one of the five histograms: not compared"),
        "{err}"
    );
}

#[test]
fn flags_that_do_not_fit_are_usage_errors() {
    let (code, _, err) = run(&[
        "diff",
        "--format",
        "info-keysizes",
        &fixture("mixed.rdb"),
        &fixture("edits.rdb"),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--format info-keysizes shows one snapshot"), "{err}");
    let (code, _, err) = run(&[
        "report",
        "--summary-only",
        "--format",
        "info-keysizes",
        &fixture("mixed.rdb"),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--summary-only writes JSON"), "{err}");
    let info = fixture("mixed.info");
    let (code, _, err) = run(&["compare-info", &fixture("mixed.rdb"), &info, "-o", &info]);
    assert_eq!(code, 2, "{err}");
}

/// A summary file is hostile input: histograms that count more keys than
/// the summary has, or a bin past the last, are refused, the field named.
#[test]
fn summary_files_with_impossible_histograms_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.json");
    let path = path.to_str().unwrap();
    let (code, _, err) = run(&[
        "report",
        "-q",
        "--summary-only",
        &fixture("mixed.rdb"),
        "-o",
        path,
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for (edit, message) in [
        (
            ("1", serde_json::json!(1_000_000)),
            "summary.keys.keysizes.dbs: 1000163, more than totals.keys (167)",
        ),
        (
            ("64", serde_json::json!(1)),
            "keysizes bin 64 is past the last (63)",
        ),
    ] {
        let mut doc = doc.clone();
        let (bin, value) = edit;
        doc["summary"]["keys"]["keysizes"]["dbs"]["0"]["lists"]["bins"][bin] = value;
        let hostile = temp_file(&dir, "hostile.json", doc.to_string().as_bytes());
        let (code, out, err) = run(&["merge", "--format", "info-keysizes", &hostile]);
        assert_eq!(code, 3, "{message}: {err}");
        assert_eq!(out, "");
        assert!(err.contains(message), "{message}: {err}");
    }
}
