//! The HTML report: one self-contained page (stylesheet, script and data
//! inline, no request leaves it) rendered from the typed report model
//! ([`ReportJson`]) or diff model ([`DiffJson`]), the same values the JSON
//! document serializes, so it shows exactly what `--format json` says and
//! a renamed field fails to compile here. Tables are rendered here and
//! readable without JavaScript or in print; the script only adds the
//! charts (namespace treemap, zoomable expiry timeline), sorting and
//! filtering. A page is written to its writer section by section as it
//! renders, never built whole in memory.

#![forbid(unsafe_code)]
// A failure that can happen is an error, never a panic: no unwrap, expect
// or panic! outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod diff;
mod escape;
mod names;
mod page;
mod plans;
mod report;
mod sizes;

pub use page::CSP;

use std::io::{self, Write};

use rdblens_report::diff::DiffJson;
use rdblens_report::{AuditWhen, ReportJson, ReportOptions};
use rdblens_summary::Summary;

/// Writes the page of a report model (`report` and `merge`) to `out` as
/// it renders.
pub fn write_report(model: &ReportJson<'_>, out: &mut dyn Write) -> io::Result<()> {
    report::page(model)?.write(out)
}

/// Writes the page of a diff model (`diff`) to `out` as it renders.
pub fn write_diff(model: &DiffJson<'_>, out: &mut dyn Write) -> io::Result<()> {
    diff::page(model)?.write(out)
}

/// The page of a report model, as a string (for tests and callers that
/// keep it; the binary writes it with [`write_report`]).
pub fn report_page(model: &ReportJson<'_>) -> io::Result<String> {
    let mut out = Vec::new();
    write_report(model, &mut out)?;
    String::from_utf8(out).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// The page for `report` and `merge` of `summary`, as a string.
pub fn report(summary: &Summary, opts: &ReportOptions) -> io::Result<String> {
    report_page(&ReportJson::build(summary, opts, AuditWhen::Shown))
}

/// The page for `diff` of two summaries, as a string.
pub fn diff(old: &Summary, new: &Summary, opts: &ReportOptions) -> io::Result<String> {
    let mut out = Vec::new();
    write_diff(&rdblens_report::diff::build(old, new, opts), &mut out)?;
    String::from_utf8(out).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}
