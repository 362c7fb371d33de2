//! The JSON renderer: the report model serialized as it is, pretty-printed
//! (the schema is the model's, docs/json-schema.md).

use crate::model::ReportJson;

/// The JSON document of a report model.
pub fn render(report: &ReportJson<'_>) -> serde_json::Result<String> {
    serde_json::to_string_pretty(report)
}

/// Writes the JSON document of a report model, and a final newline, to
/// `out` as it is serialized (the same bytes as [`render`]), so a long
/// report is never held whole in memory.
pub fn write(report: &ReportJson<'_>, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    out.write_all(b"\n")
}
