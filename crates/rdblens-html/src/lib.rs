//! The HTML report: one self-contained page (stylesheet, script and data
//! inline, no request leaves it) rendered from the JSON report document,
//! so it shows exactly what `--format json` says. Tables are rendered
//! here and readable without JavaScript or in print; the script only adds
//! the charts (namespace treemap, zoomable expiry timeline), sorting and
//! filtering.

mod diff;
mod escape;
mod page;
mod plans;
mod report;

pub use page::CSP;

use rdblens_analysis::Summary;
use rdblens_report::ReportOptions;

/// The page for `report` and `merge`.
pub fn report(summary: &Summary, opts: &ReportOptions) -> serde_json::Result<String> {
    let doc: serde_json::Value = serde_json::from_str(&rdblens_report::to_json(summary, opts)?)?;
    let fine = doc
        .get("expiry")
        .map(|e| report::fine_expiry(&summary.keys.expiry, e))
        .unwrap_or_default();
    Ok(report::page(&doc, fine).render())
}

/// The page for `diff`.
pub fn diff(old: &Summary, new: &Summary, opts: &ReportOptions) -> serde_json::Result<String> {
    let doc: serde_json::Value = serde_json::from_str(&rdblens_report::diff::to_json(old, new, opts)?)?;
    Ok(diff::page(&doc).render())
}
