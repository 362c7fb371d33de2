//! Renders an analysis [`Summary`] for people (terminal tables with
//! histogram bars, comfy-table) or for programs (one versioned JSON schema,
//! documented in docs/json-schema.md). The `findings` section renders the
//! design-rule audit (rdblens-audit), the `plans` section the split plans
//! (rdblens-advice).
//!
//! A report is built once into a model ([`model::ReportJson`]: every
//! figure, list and cluster it shows, and the audit, run once), then
//! rendered by [`table`], [`json`] or [`prometheus`] (and by rdblens-html
//! from the same typed model);
//! the renderers read the model only, so they cannot disagree. The diff of
//! two summaries works the same way ([`diff`]).
//!
//! ```no_run
//! # fn show(summary: &rdblens_summary::Summary) -> serde_json::Result<()> {
//! use rdblens_report::{AuditWhen, ReportJson, ReportOptions};
//! let opts = ReportOptions::default();
//! let report = ReportJson::build(summary, &opts, AuditWhen::Always);
//! print!("{}", rdblens_report::table::render(&report));
//! let json = rdblens_report::json::render(&report)?;
//! let gate = report.audit().is_some_and(|a| a.fails(rdblens_audit::Severity::Crit));
//! # let _ = (json, gate);
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]
// A failure that can happen is an error, never a panic: no unwrap, expect
// or panic! outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod cells;
pub mod diff;
pub mod format;
pub mod json;
pub mod keysizes;
pub mod model;
mod options;
pub mod prometheus;
pub mod section;
pub mod table;
#[cfg(test)]
mod tests;
mod words;

use rdblens_summary::Summary;

pub use model::{AuditWhen, ReportJson, SCHEMA_VERSION};
pub use options::{ReportOptions, SortBy, AUTO_BARS};
pub use section::Section;

/// The JSON report as a string (pretty-printed).
pub fn to_json(summary: &Summary, opts: &ReportOptions) -> serde_json::Result<String> {
    json::render(&ReportJson::build(summary, opts, AuditWhen::Shown))
}

/// The table report.
pub fn to_table(summary: &Summary, opts: &ReportOptions) -> String {
    table::render(&ReportJson::build(summary, opts, AuditWhen::Shown))
}
