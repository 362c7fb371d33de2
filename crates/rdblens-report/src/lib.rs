//! Renders an analysis [`Summary`](rdblens_analysis::Summary) for people
//! (terminal tables with histogram bars, comfy-table) or for programs (one
//! versioned JSON schema, documented in docs/json-schema.md). The
//! `findings` section renders the design-rule audit (rdblens-audit).

pub mod diff;
mod findings;
pub mod format;
pub mod json;
mod options;
pub mod shards;
pub mod table;

pub use json::SCHEMA_VERSION;
pub use options::{ReportOptions, Section, SortBy, AUTO_BARS};

/// The JSON report as a string (pretty-printed).
pub fn to_json(summary: &rdblens_analysis::Summary, opts: &ReportOptions) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&json::build(summary, opts))
}

/// The table report.
pub fn to_table(summary: &rdblens_analysis::Summary, opts: &ReportOptions) -> String {
    table::render(summary, opts)
}
