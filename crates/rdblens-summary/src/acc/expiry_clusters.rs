//! Expiry clusters: windows holding a heavy share of the expiring keys,
//! found at their own resolution from the exact cells, with the namespaces
//! they come from (from the sketch) and the figures an operator acts on.
//! The rule and the models are in docs/expiry-clusters.md.

use serde::{Deserialize, Serialize};

use super::bounded::Mergeable;
use super::expiry::ExpiryHistogram;
use super::expiry_cells::{align, KeysMemory};
use super::expiry_sketch::{NamespaceSketch, LEVELS_MS};
use crate::rules::ExpiryCluster as AuditThresholds;

/// Parameters of the detection rule (see docs/expiry-clusters.md).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterRule {
    /// Windows on each side that form the baseline.
    pub neighbours: i64,
    /// A window is a spike when it holds at least `factor` times the baseline...
    pub factor: f64,
    /// ...at least this many keys...
    pub min_keys: u64,
    /// ...and at least this share of all expiring keys.
    pub min_share: f64,
    /// The audit's expiry-cluster thresholds, for the jitter advice: the
    /// share (0-1) of all expiring keys a 1-second window may hold...
    pub second_share: f64,
    /// ...or this many keys, whichever is larger.
    pub second_keys: u64,
    /// The share (0-1) of all expiring keys a 1-minute window may hold...
    pub minute_share: f64,
    /// ...or this many keys, whichever is larger.
    pub minute_keys: u64,
}

impl Default for ClusterRule {
    fn default() -> Self {
        let audit = AuditThresholds::default();
        ClusterRule {
            neighbours: 30,
            factor: 10.0,
            min_keys: 20,
            min_share: 0.001,
            second_share: audit.second_share,
            second_keys: audit.second_keys,
            minute_share: audit.minute_share,
            minute_keys: audit.minute_keys,
        }
    }
}

/// How long the server's active expiry needs for a cluster (the model:
/// docs/expiry-clusters.md).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActiveExpiry {
    /// Seconds of back-to-back expire cycles (25% of a core at hz 10) while
    /// the cluster's keys are over 10% of the expiring keys.
    pub busy_seconds: f64,
    /// Seconds until the background sweep (20 keys per cycle, 10 cycles a
    /// second) has visited every expiring key and so the rest of the cluster.
    pub sweep_seconds: f64,
}

/// A window of expiries standing far above its surroundings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpiryCluster {
    /// Start of the cluster, unix ms.
    pub start_ms: i64,
    /// Exclusive.
    pub end_ms: i64,
    /// Width of the windows it was found at (1 s, 10 s, 1 min, 10 min, 1 h).
    pub resolution_ms: i64,
    /// Exact keys expiring in `[start_ms, end_ms)`.
    pub keys: u64,
    /// Their estimated memory, bytes.
    pub memory: u64,
    /// Share of all expiring keys.
    pub share: f64,
    /// Mean keys per window in the surrounding windows.
    pub baseline: f64,
    /// Namespaces the keys come from, most keys first: estimates, each at
    /// most `namespace_error` above the true count.
    pub namespaces: Vec<(String, u64)>,
    /// Keys not in a listed namespace.
    pub other_keys: u64,
    /// Most a listed namespace's estimate can exceed its true count, keys.
    pub namespace_error: u64,
    /// Keys of the busiest second (when the cells are 1 s wide).
    pub peak_keys_per_second: Option<u64>,
    /// What the server's active expiry needs for the cluster.
    pub active_expiry: ActiveExpiry,
    /// Uniform jitter (+- seconds) that brings the cluster under the audit's
    /// 1-second and 1-minute thresholds; 0 if it is under them already.
    pub jitter_seconds: u64,
}

/// Namespaces listed per cluster at most.
const NAMESPACES: usize = 10;

/// Widths clusters are looked for at, finest first.
pub const DETECT_MS: [i64; 5] = [1_000, 10_000, 60_000, 600_000, 3_600_000];

/// Block totals with prefix sums: sums over long ranges and the windows
/// holding many keys without walking every cell (a million 1 s cells).
pub struct CellIndex<'h> {
    h: &'h ExpiryHistogram,
    blocks: Vec<(i64, KeysMemory)>,
    /// `prefix[i]`: keys of the blocks before `i`.
    prefix: Vec<u64>,
}

impl<'h> CellIndex<'h> {
    /// Block totals of `h` and their prefix sums.
    pub fn new(h: &'h ExpiryHistogram) -> Self {
        let blocks = h.cells.block_totals();
        let mut prefix = Vec::with_capacity(blocks.len() + 1);
        prefix.push(0);
        for (_, b) in &blocks {
            prefix.push(prefix[prefix.len() - 1] + b.keys);
        }
        CellIndex { h, blocks, prefix }
    }

    fn block_index(&self, t: i64) -> usize {
        self.blocks.partition_point(|(b, _)| *b < t)
    }

    /// Keys expiring in `[from, to)`.
    pub fn sum_keys(&self, from: i64, to: i64) -> u64 {
        let block_ms = self.h.cells.block_ms();
        let first_full = align(from, block_ms)
            + if from.rem_euclid(block_ms) == 0 {
                0
            } else {
                block_ms
            };
        let last_full = align(to, block_ms);
        if first_full >= last_full {
            return self.h.cells.sum(from, to).keys;
        }
        let (a, b) = (self.block_index(first_full), self.block_index(last_full));
        self.prefix[b] - self.prefix[a]
            + self.h.cells.sum(from, first_full).keys
            + self.h.cells.sum(last_full, to).keys
    }

    /// Every aligned window of `width` (a multiple of the cell width)
    /// holding at least `floor` keys, in time order.
    pub fn windows_at_least(&self, width: i64, floor: u64) -> Vec<(i64, KeysMemory)> {
        let block_ms = self.h.cells.block_ms();
        let mut out: Vec<(i64, KeysMemory)> = Vec::new();
        let push = |out: &mut Vec<(i64, KeysMemory)>, start: i64, c: KeysMemory| match out.last_mut() {
            Some((s, km)) if *s == start => km.merge_from(&c),
            _ => out.push((start, c)),
        };
        if width >= block_ms {
            for &(b, c) in &self.blocks {
                push(&mut out, align(b, width), c);
            }
        } else {
            // A window inside a block holds no more than its block.
            for &(b, _) in self.blocks.iter().filter(|(_, c)| c.keys >= floor) {
                for (start, c) in self.h.cells.range(b, b + block_ms) {
                    push(&mut out, align(start, width), c);
                }
            }
        }
        out.retain(|(_, c)| c.keys >= floor);
        out
    }
}

/// Finds clusters at every width of [`DETECT_MS`] not finer than the
/// stored cells, finest first. At width `w` a window is a spike when its
/// keys, less those of clusters already found at finer widths, are at
/// least `min_keys`, `min_share` of the expiring keys, and `factor` times
/// the mean of the `neighbours` windows on each side (the window itself
/// excluded, a mean below 1 taken as 1); adjacent spikes join. `names` are
/// the candidate namespaces (the prefix tree's names down to the depth).
pub fn detect_clusters(h: &ExpiryHistogram, rule: ClusterRule, names: &[Vec<u8>]) -> Vec<ExpiryCluster> {
    let total = h.expiring_keys;
    if total == 0 {
        return Vec::new();
    }
    let floor = rule
        .min_keys
        .max((rule.min_share * total as f64).ceil() as u64)
        .max(1);
    let index = CellIndex::new(h);
    let mut found: Vec<ExpiryCluster> = Vec::new();
    for width in DETECT_MS {
        if width < h.width_ms() {
            continue;
        }
        let mut spikes: Vec<(i64, KeysMemory, f64)> = Vec::new();
        let reach = rule.neighbours.saturating_mul(width);
        for (start, km) in index.windows_at_least(width, floor) {
            let end = start.saturating_add(width);
            let inside: u64 = found
                .iter()
                .filter(|c| c.start_ms < end && c.end_ms > start)
                .map(|c| index.sum_keys(c.start_ms.max(start), c.end_ms.min(end)))
                .sum();
            let residual = km.keys.saturating_sub(inside);
            let around = index.sum_keys(start.saturating_sub(reach), end.saturating_add(reach)) - km.keys;
            let baseline = around as f64 / (2 * rule.neighbours.max(1)) as f64;
            if residual >= floor && residual as f64 >= rule.factor * baseline.max(1.0) {
                spikes.push((start, km, baseline));
            }
        }
        let first_new = found.len();
        for (start, km, baseline) in spikes {
            // Clusters of finer widths never join this width's.
            let joinable = found.len() > first_new;
            match found.last_mut() {
                Some(c) if joinable && c.end_ms == start => {
                    c.end_ms = c.end_ms.saturating_add(width);
                    c.keys += km.keys;
                    c.memory = c.memory.saturating_add(km.memory);
                    c.baseline = c.baseline.max(baseline);
                }
                _ => found.push(ExpiryCluster {
                    start_ms: start,
                    end_ms: start.saturating_add(width),
                    resolution_ms: width,
                    keys: km.keys,
                    memory: km.memory,
                    share: 0.0,
                    baseline,
                    namespaces: Vec::new(),
                    other_keys: 0,
                    namespace_error: 0,
                    peak_keys_per_second: None,
                    active_expiry: ActiveExpiry {
                        busy_seconds: 0.0,
                        sweep_seconds: 0.0,
                    },
                    jitter_seconds: 0,
                }),
            }
        }
        for c in &mut found[first_new..] {
            describe(h, rule, names, c);
        }
    }
    found.sort_by_key(|c| c.start_ms);
    found
}

/// Fills in the share, namespaces and operator figures of `c`.
fn describe(h: &ExpiryHistogram, rule: ClusterRule, names: &[Vec<u8>], c: &mut ExpiryCluster) {
    let total = h.expiring_keys;
    c.share = c.keys as f64 / total.max(1) as f64;
    let (mut ns, error) = namespaces_in(h, c.start_ms, c.end_ms, names);
    c.namespace_error = error;
    for n in &mut ns {
        n.1 = n.1.min(c.keys);
    }
    ns.truncate(NAMESPACES);
    c.other_keys = c.keys.saturating_sub(ns.iter().map(|(_, k)| k).sum());
    c.namespaces = ns;
    if h.width_ms() == 1_000 {
        c.peak_keys_per_second = h.cells.range(c.start_ms, c.end_ms).map(|(_, km)| km.keys).max();
    }
    c.active_expiry = active_expiry(c.keys, total);
    c.jitter_seconds = jitter_seconds(c.keys, total, rule);
}

/// Estimated keys per candidate namespace in `[start, end)` (whole
/// seconds), those above the error bound, most keys first; and the bound.
/// The window is summed from the sketch of the coarsest width that tiles it.
pub fn namespaces_in(
    h: &ExpiryHistogram,
    start: i64,
    end: i64,
    names: &[Vec<u8>],
) -> (Vec<(String, u64)>, u64) {
    let level = (0..LEVELS_MS.len())
        .rev()
        .find(|&l| start.rem_euclid(LEVELS_MS[l]) == 0 && end.rem_euclid(LEVELS_MS[l]) == 0)
        .unwrap_or(0);
    let width = LEVELS_MS[level];
    let windows = ((end - start) / width).max(1) as u64;
    let error = NamespaceSketch::error_bound(h.expiring_keys).saturating_mul(windows);
    let mut ns: Vec<(String, u64)> = Vec::new();
    for name in names {
        let hash = super::bounded::stable_hash(name);
        let mut keys = 0u64;
        let mut w = align(start, width);
        while w < end {
            keys += h.namespaces.estimate(level, w, hash);
            w = w.saturating_add(width);
        }
        // Below the error bound an estimate cannot tell a namespace from noise.
        if keys > error {
            let label = if name.is_empty() {
                "(no namespace)".to_string()
            } else {
                String::from_utf8_lossy(name).into_owned()
            };
            ns.push((label, keys));
        }
    }
    ns.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    (ns, error)
}

/// Server cycles per second (`hz`). This and the next three are the Redis
/// defaults the active-expiry model uses (expire.c, Redis 6-7).
pub const HZ: f64 = 10.0;
/// Keys an expire cycle samples per loop (`ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP`).
pub const KEYS_PER_LOOP: f64 = 20.0;
/// Share of expired keys among those sampled above which a cycle repeats
/// (`ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE`, 10%).
pub const ACCEPTABLE_STALE: f64 = 0.10;
/// Share of a core the slow expire cycle may use (`ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC`, 25%).
pub const SLOW_CYCLE_CPU: f64 = 0.25;
/// Assumed cost of deleting one expired small key, in seconds.
pub const DELETE_SECONDS: f64 = 1e-6;

/// The model of docs/expiry-clusters.md: `keys` expire at once among
/// `expiring` keys with an expiry.
pub fn active_expiry(keys: u64, expiring: u64) -> ActiveExpiry {
    let (k, e) = (keys as f64, expiring.max(keys) as f64);
    // Cycles repeat while over 10% of the sampled keys are expired: the
    // cluster's keys over 10% of what is left.
    let busy_keys = ((k - ACCEPTABLE_STALE * e) / (1.0 - ACCEPTABLE_STALE)).clamp(0.0, k);
    let left = k - busy_keys;
    ActiveExpiry {
        busy_seconds: busy_keys * DELETE_SECONDS / SLOW_CYCLE_CPU,
        sweep_seconds: if left >= 1.0 {
            (e - busy_keys) / (KEYS_PER_LOOP * HZ)
        } else {
            0.0
        },
    }
}

/// The +- jitter (seconds, whole minutes from one minute up) after which
/// `keys` spread evenly stay under the audit's thresholds.
pub fn jitter_seconds(keys: u64, expiring: u64, rule: ClusterRule) -> u64 {
    let e = expiring as f64;
    let per_second = (rule.second_share * e).max(rule.second_keys as f64).max(1.0);
    let per_minute = (rule.minute_share * e).max(rule.minute_keys as f64).max(1.0);
    let k = keys as f64;
    if k <= per_second {
        return 0;
    }
    // Spread over 2J seconds: K / 2J per second, 60 K / 2J per minute.
    let j = (k / (2.0 * per_second)).max(30.0 * k / per_minute).ceil() as u64;
    if j >= 60 {
        j.div_ceil(60) * 60
    } else {
        j
    }
}

/// A display width for the histogram: the finest standard width (1 s, 1 min,
/// 1 h, 1 d, 7 d) at which the expiries in `[from, to)` fall into at most
/// `max_buckets` non-empty buckets.
pub fn auto_width(h: &ExpiryHistogram, max_buckets: i64, from: i64, to: i64) -> i64 {
    let widths = [1_000, 60_000, 3_600_000, 86_400_000, 604_800_000];
    widths
        .into_iter()
        .filter(|&w| w >= h.width_ms())
        .find(|&w| count_windows(h, w, from, to, max_buckets) <= max_buckets)
        .unwrap_or(604_800_000.max(h.width_ms()))
}

/// Non-empty windows of `width` in `[from, to)`, counting stops past `limit`.
fn count_windows(h: &ExpiryHistogram, width: i64, from: i64, to: i64, limit: i64) -> i64 {
    if width % h.cells.block_ms() == 0 {
        // Whole blocks per window: counted from the block totals.
        return h.cells.rebucket(width, from, to).len() as i64;
    }
    let mut n = 0;
    let mut last = None;
    for (start, _) in h.cells.range(from, to) {
        let w = align(start, width);
        if last != Some(w) {
            last = Some(w);
            n += 1;
            if n > limit {
                break;
            }
        }
    }
    n
}
