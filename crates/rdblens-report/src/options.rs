//! What a report shows and how: sections, rows, expiry buckets and
//! window, table width, order, and the server split plans are priced for.

use crate::section::Section;
use rdblens_summary::acc::expiry::{auto_width, ClusterRule, ExpiryHistogram};

/// Which big-key table comes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortBy {
    /// Estimated memory.
    Memory,
    /// Serialized size.
    Serialized,
    /// Element count.
    Elements,
}

/// What to render and how.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// Sections shown (those of [`Section::ALL`] in that order, then plans).
    pub sections: Vec<Section>,
    /// Rows per top list in tables.
    pub top: usize,
    /// Expiry histogram width; `None` = chosen from the spread.
    pub bucket_ms: Option<i64>,
    /// Expiry window shown (`--expiry-window FROM..TO`, unix ms, end
    /// exclusive); `None` = every expiry.
    pub expiry_window: Option<(i64, i64)>,
    /// Terminal width for tables; `None` = not a terminal (plain, unwrapped).
    pub width: Option<u16>,
    /// How expiry clusters are found.
    pub cluster_rule: ClusterRule,
    /// Which big-key table comes first.
    pub sort: SortBy,
    /// The server split plans are priced for; `None`: the first file's
    /// profile with the default quantum and limits.
    pub target: Option<rdblens_memory::Profile>,
    /// The caps of the Prometheus metrics, and the analysis time they show.
    pub metrics: MetricsOptions,
    /// `diff --fail-on-growth`: the limits growth alerts are checked against.
    pub growth: Option<crate::diff::growth::GrowthLimits>,
    /// `--format info-keysizes --zero-bin`: empty strings in a bin `0`.
    pub keysizes_zero_bin: bool,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            sections: Section::ALL.to_vec(),
            top: 20,
            bucket_ms: None,
            expiry_window: None,
            width: None,
            cluster_rule: ClusterRule::default(),
            sort: SortBy::Memory,
            target: None,
            metrics: MetricsOptions::default(),
            growth: None,
            keysizes_zero_bin: false,
        }
    }
}

/// The caps of the metrics output, and the one figure of the run the model
/// does not hold.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricsOptions {
    /// Namespaces (first level) with their own series; the others are
    /// summed in `key_group="overflow"`. Databases, types and encodings are
    /// capped at the same number.
    pub key_groups: usize,
    /// Big keys listed (by estimated memory).
    pub big_keys: usize,
    /// How long the analysis took, when the caller measured it.
    pub analysis_seconds: Option<f64>,
}

impl Default for MetricsOptions {
    fn default() -> Self {
        MetricsOptions {
            key_groups: 100,
            big_keys: 20,
            analysis_seconds: None,
        }
    }
}

/// Bars drawn in an auto-width expiry histogram at most.
pub const AUTO_BARS: i64 = 60;

impl ReportOptions {
    /// The split plans for `s` (section `plans`).
    pub fn plans(&self, s: &rdblens_summary::Summary, audit: &rdblens_audit::Audit) -> rdblens_advice::Plans {
        let target = self
            .target
            .clone()
            .unwrap_or_else(|| rdblens_advice::target_for(s, None, &[]));
        rdblens_advice::plans(s, audit, &target)
    }

    /// The expiry histogram's width: `bucket_ms`, or chosen so that the
    /// window shown takes at most [`AUTO_BARS`] bars; never finer than the
    /// summary keeps.
    pub fn expiry_bucket_ms(&self, h: &ExpiryHistogram) -> i64 {
        let (from, to) = self.expiry_range();
        self.bucket_ms
            .unwrap_or_else(|| auto_width(h, AUTO_BARS, from, to))
            .max(h.width_ms())
    }

    /// The expiry window shown, `[from, to)` in unix ms.
    pub fn expiry_range(&self) -> (i64, i64) {
        self.expiry_window.unwrap_or((i64::MIN, i64::MAX))
    }

    /// Whether a window `[start, end)` overlaps the expiry window shown.
    pub fn in_expiry_window(&self, start: i64, end: i64) -> bool {
        let (from, to) = self.expiry_range();
        start < to && end > from
    }
}
