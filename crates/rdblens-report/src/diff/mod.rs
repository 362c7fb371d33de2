//! `rdblens diff`: what changed between two summaries (yesterday's and
//! today's snapshot, of one dump or of a whole cluster): growth and
//! shrinkage per database, type, encoding and namespace, keys that became
//! big, the keys that appeared, disappeared, grew or shrank most, and
//! expiry clusters that were not there before. As JSON (docs/json-schema.md,
//! "The diff document") or tables.

pub(crate) mod growth;
mod model;
mod table;

pub use growth::{Amount, GrowthAlert, GrowthLimits, GrowthWhat, Limit};
pub use model::{
    build, growth_alerts, BecameBig, Delta, DiffJson, ExpiryDiff, GroupDiff, KeyChange, KeyChangeKind,
    KeyChanges, NamespaceDiff, SideJson, TotalsDiff, DIFF_VERSION,
};
pub use table::{signed_bytes, signed_count, to_table};

use rdblens_summary::Summary;

use crate::options::ReportOptions;

/// The diff as the JSON document (pretty-printed).
pub fn to_json(old: &Summary, new: &Summary, opts: &ReportOptions) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&build(old, new, opts))
}
