//! The whole table report of an all-types dump in an 80-column terminal,
//! as a snapshot (insta): every line fits, and no word, number, unit or
//! rule name is broken across lines (read the snapshot when it changes).

use rdblens_engine::analyze_bytes;
use rdblens_report::ReportOptions;
use rdblens_summary::Options;

const ALL_TYPES: &str = "fixtures/rdb/redis-7.4.5/all-types.rdb";

#[test]
fn all_types_at_80_columns() {
    let path = format!("{}/../../{ALL_TYPES}", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read(&path).expect("the fixture reads"); // ok: unit test
    let analysis = Options {
        threads: 1,
        ..Options::default()
    };
    let summary = analyze_bytes(&data, ALL_TYPES, &analysis).expect("the fixture analyses"); // ok: unit test
    let opts = ReportOptions {
        width: Some(80),
        ..ReportOptions::default()
    };
    let text = rdblens_report::to_table(&summary, &opts);
    let wide: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.chars().count() > 80)
        .collect();
    assert!(wide.is_empty(), "{} lines over 80 columns: {wide:#?}", wide.len());
    insta::assert_snapshot!(text);
}

#[test]
fn long_namespaces_and_hash_tags_are_cut_in_the_middle() {
    let path = format!("{}/../../{ALL_TYPES}", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read(&path).expect("the fixture reads"); // ok: unit test
    let mut summary = analyze_bytes(&data, ALL_TYPES, &Options::default()).expect("analyses"); // ok: unit test
                                                                                               // A heavy namespace with a long name, and a long hash tag.
    for i in 0..50 {
        let key = format!("tenant-with-a-rather-long-name:{{a-very-long-hash-tag-name}}:{i}");
        let facts = rdblens_summary::KeyFacts::synthetic(key.as_bytes(), None, 1 << 20);
        summary.keys.add(&facts);
    }
    summary.keys.finish();
    let narrow = ReportOptions {
        width: Some(80),
        ..ReportOptions::default()
    };
    let text = rdblens_report::to_table(&summary, &narrow);
    assert!(text.lines().all(|l| l.chars().count() <= 80));
    // 22 characters, an indented child 2 fewer: the column stays as narrow.
    assert!(text.contains("│ \"tenant-wi…-long-name\" ┆   50 ┆"), "{text}");
    assert!(text.contains("│   \"tenant-w…tag-name}\" ┆   50 ┆"), "{text}");
    assert!(text.contains("│ \"a-very-lo…h-tag-name\" ┆   50 ┆"), "{text}");
    // Piped, the names are whole.
    let piped = rdblens_report::to_table(&summary, &ReportOptions::default());
    assert!(piped.contains("\"tenant-with-a-rather-long-name\""));
}
