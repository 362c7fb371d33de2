//! The JSON renderer: the report model serialized as it is, pretty-printed
//! (the schema is the model's, docs/json-schema.md).

use crate::model::ReportJson;

/// The JSON document of a report model.
pub fn render(report: &ReportJson<'_>) -> serde_json::Result<String> {
    serde_json::to_string_pretty(report)
}
