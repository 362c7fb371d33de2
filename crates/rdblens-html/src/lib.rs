//! The HTML report: one self-contained page (stylesheet, script and data
//! inline, no request leaves it) rendered from the JSON report document,
//! so it shows exactly what `--format json` says. Tables are rendered
//! here and readable without JavaScript or in print; the script only adds
//! the charts (namespace treemap, zoomable expiry timeline), sorting and
//! filtering.

#![forbid(unsafe_code)]
// A failure that can happen is an error, never a panic: no unwrap, expect
// or panic! outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod diff;
mod escape;
mod page;
mod plans;
mod report;
mod sizes;

pub use page::CSP;

use rdblens_report::{AuditWhen, ReportJson, ReportOptions};
use rdblens_summary::Summary;

/// The page for `report` and `merge`.
pub fn report(summary: &Summary, opts: &ReportOptions) -> serde_json::Result<String> {
    report_page(&ReportJson::build(summary, opts, AuditWhen::Shown))
}

/// The page of a report model, read from its JSON document.
pub fn report_page(model: &ReportJson<'_>) -> serde_json::Result<String> {
    let doc: serde_json::Value = serde_json::from_str(&rdblens_report::json::render(model)?)?;
    let fine = match (&model.expiry, doc.get("expiry")) {
        (Some(expiry), Some(e)) => report::fine_expiry(expiry.cells, e),
        _ => serde_json::Value::default(),
    };
    Ok(report::page(&doc, fine).render())
}

/// The page for `diff`.
pub fn diff(old: &Summary, new: &Summary, opts: &ReportOptions) -> serde_json::Result<String> {
    let doc: serde_json::Value = serde_json::from_str(&rdblens_report::diff::to_json(old, new, opts)?)?;
    Ok(diff::page(&doc).render())
}
