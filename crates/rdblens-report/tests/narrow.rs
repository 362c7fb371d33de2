//! The whole table report of an all-types dump in an 80-column terminal,
//! as a snapshot (insta): every line fits, and no word, number, unit or
//! rule name is broken across lines (read the snapshot when it changes).

use rdblens_analysis::{analyze_bytes, Options};
use rdblens_report::ReportOptions;

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
