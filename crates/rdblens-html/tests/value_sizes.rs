//! The page's value-size table (section `bigkeys`) shows the JSON report's
//! `value_sizes` figures, on an all-types fixture.

use rdblens_engine::analyze_bytes;
use rdblens_report::{AuditWhen, ReportJson, ReportOptions};
use rdblens_summary::{Options, Summary};
use serde_json::Value;

const ALL_TYPES: &str = "fixtures/rdb/redis-7.4.5/all-types.rdb";

fn summary() -> Summary {
    let path = format!("{}/../../{ALL_TYPES}", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read(&path).expect("the fixture reads"); // ok: unit test
    let opts = Options {
        threads: 1,
        ..Options::default()
    };
    analyze_bytes(&data, ALL_TYPES, &opts).expect("the fixture analyses") // ok: unit test
}

/// The table's rows, from its `<tbody>` to `</tbody>`.
fn table<'p>(page: &'p str, id: &str) -> &'p str {
    let start = page
        .find(&format!("<table id=\"{id}\""))
        .expect("the table is in the page"); // ok: unit test
    let rest = &page[start..];
    &rest[..rest.find("</table>").expect("the table ends")] // ok: unit test
}

#[test]
fn value_sizes_table_shows_the_json_figures() {
    let s = summary();
    let opts = ReportOptions::default();
    let model = ReportJson::build(&s, &opts, AuditWhen::Shown);
    let doc: Value = serde_json::from_str(&rdblens_report::json::render(&model).expect("serializes")) // ok: unit test
        .expect("parses"); // ok: unit test
    let page = rdblens_html::report_page(&model).expect("renders"); // ok: unit test

    let hash = doc["value_sizes"]
        .as_array()
        .and_then(|a| a.iter().find(|v| v["type"] == "hash"))
        .expect("hash keys in the fixture"); // ok: unit test
    assert_eq!(hash["keys"], 38);
    assert_eq!(hash["memory"]["p90"], 28_672);
    assert_eq!(hash["length"]["max"], 1_000);

    // In the bigkeys section, after the top keys.
    let bigkeys = &page[page.find("<section id=\"bigkeys\">").expect("bigkeys")..]; // ok: unit test
    let bigkeys = &bigkeys[..bigkeys.find("</section>").expect("ends")]; // ok: unit test
    assert!(bigkeys.contains("<h3>Value sizes per type (p50 / p90 / p99 within 1/64, max exact)</h3>"));
    let rows = table(bigkeys, "value-sizes");
    assert!(rows.starts_with(
        "<table id=\"value-sizes\" class=\"data\"><thead><tr><th>type</th><th class=\"n\">keys</th><th>figure</th><th class=\"n\">p50</th><th class=\"n\">p90</th><th class=\"n\">p99</th><th class=\"n\">max</th></tr></thead>"
    ), "{rows}");
    // The hash memory row: p90 28,672 bytes as the JSON has it; then its
    // element counts, as counts.
    assert!(rows.contains(
        "<tr><td>hash</td><td class=\"n\" data-v=\"38\">38</td><td>memory</td><td class=\"n\" data-v=\"120\">120 B</td><td class=\"n\" data-v=\"28672\">28.0 KiB</td><td class=\"n\" data-v=\"64304\">62.8 KiB</td><td class=\"n\" data-v=\"64304\">62.8 KiB</td></tr>"
    ), "{rows}");
    assert!(rows.contains(
        "<tr><td></td><td></td><td>elements</td><td class=\"n\" data-v=\"3\">3</td><td class=\"n\" data-v=\"512\">512</td><td class=\"n\" data-v=\"1000\">1,000</td><td class=\"n\" data-v=\"1000\">1,000</td></tr>"
    ), "{rows}");
    // One row per figure: three per collection type, two for strings
    // (no largest element).
    let types = doc["value_sizes"].as_array().map_or(0, Vec::len);
    let strings = usize::from(
        doc["value_sizes"]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v["type"] == "string")),
    );
    assert_eq!(rows.matches("<tr>").count(), 1 + 3 * types - strings);
}
