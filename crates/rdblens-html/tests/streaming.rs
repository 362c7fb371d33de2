//! The page goes to its writer as it renders, section by section and row
//! by row, never built whole first: no single write holds more than the
//! largest fixed part of the page (the script), however long the page,
//! and a failing writer stops the page with its error.

use std::io::{self, Write};

use rdblens_engine::analyze_bytes;
use rdblens_report::{AuditWhen, ReportJson, ReportOptions, Section};
use rdblens_summary::{Options, Summary};

const ALL_TYPES: &str = "fixtures/rdb/redis-7.4.5/all-types.rdb";

/// The largest part of the page that is written as it is: the script.
const SCRIPT_BYTES: usize = include_str!("../src/assets/page.js").len();

fn summary() -> Summary {
    let path = format!("{}/../../{ALL_TYPES}", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read(&path).expect("the fixture reads"); // ok: test
    let opts = Options {
        threads: 1,
        ..Options::default()
    };
    analyze_bytes(&data, ALL_TYPES, &opts).expect("the fixture analyses") // ok: test
}

/// Keeps what is written and the size of each write.
#[derive(Default)]
struct Recorder {
    bytes: Vec<u8>,
    writes: Vec<usize>,
}

impl Write for Recorder {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes.extend_from_slice(buf);
        self.writes.push(buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Accepts `left` bytes, then fails.
struct FullDisk {
    left: usize,
}

impl Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "no space left on the test's disk",
            ));
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn every_section() -> ReportOptions {
    ReportOptions {
        sections: Section::ALL.iter().copied().chain([Section::Plans]).collect(),
        ..ReportOptions::default()
    }
}

#[test]
fn the_page_is_written_as_it_renders() {
    let s = summary();
    let opts = every_section();
    let model = ReportJson::build(&s, &opts, AuditWhen::Shown);
    let mut out = Recorder::default();
    rdblens_html::write_report(&model, &mut out).expect("renders"); // ok: test
    let page = String::from_utf8(out.bytes).expect("UTF-8"); // ok: test
                                                             // The same page as the string form, many times the script's size...
    assert_eq!(page, rdblens_html::report_page(&model).expect("renders")); // ok: test
    assert!(page.len() > 4 * SCRIPT_BYTES, "{} bytes", page.len());
    assert!(page.ends_with("</html>\n"));
    // ...written in pieces none bigger than the script: rows, not sections.
    let largest = out.writes.iter().copied().max().unwrap_or(0);
    assert_eq!(largest, SCRIPT_BYTES, "the largest write is the script");
    let rows = page.matches("<tr").count();
    assert!(
        out.writes.len() > rows,
        "{} writes for {rows} rows",
        out.writes.len()
    );
}

#[test]
fn a_failing_writer_stops_the_page_with_its_error() {
    let s = summary();
    let opts = every_section();
    let model = ReportJson::build(&s, &opts, AuditWhen::Shown);
    for left in [0, 100, 30_000, 60_000] {
        let err = rdblens_html::write_report(&model, &mut FullDisk { left }).expect_err("the disk fills"); // ok: test
        assert_eq!(err.kind(), io::ErrorKind::StorageFull, "{left}: {err}");
        assert_eq!(err.to_string(), "no space left on the test's disk");
    }
}

#[test]
fn the_diff_page_is_written_as_it_renders() {
    let (old, new) = (summary(), summary());
    let opts = ReportOptions::default();
    let model = rdblens_report::diff::build(&old, &new, &opts);
    let mut out = Recorder::default();
    rdblens_html::write_diff(&model, &mut out).expect("renders"); // ok: test
    let page = String::from_utf8(out.bytes).expect("UTF-8"); // ok: test
    assert_eq!(page, rdblens_html::diff(&old, &new, &opts).expect("renders")); // ok: test
    assert_eq!(out.writes.iter().copied().max(), Some(SCRIPT_BYTES));
    assert!(page.contains("<section id=\"key-changes\">"));
    let err = rdblens_html::write_diff(&model, &mut FullDisk { left: 20_000 }).expect_err("the disk fills"); // ok: test
    assert_eq!(err.kind(), io::ErrorKind::StorageFull);
}
