//! The design-rule catalogue (docs/design-rules.md, docs/audit.md): rule
//! ids and severities, per-rule settings with the catalogue's default
//! thresholds, and the per-key evaluation the analysis workers run. The
//! rules that need the whole keyspace (slots, namespaces, expiry windows,
//! databases) are judged later from the [`Summary`](crate::Summary) by the
//! `rdblens-audit` crate, which also turns every hit into a finding.

mod catalogue;
mod config;
mod eval;
pub mod listpack;
mod units;

pub use catalogue::{RuleId, Severity};
pub use config::*;
pub use eval::{evaluate, evaluate_shaped, Enabled, Hit};
pub use units::{ByteSize, Seconds};

#[cfg(test)]
mod tests;
