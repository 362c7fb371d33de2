//! Which jemalloc build wrote a dump, from the `used-mem` it records.
//!
//! The bundled jemalloc of source builds, Docker images and most clouds has
//! an 8-byte quantum; distribution packages linking the system libjemalloc
//! (Debian's `redis-server`) a 16-byte one (memory-model.md §2). Nothing in
//! the file names the build, but `used-mem` (aux field: `used_memory` when
//! the dump was written) is what the server's allocations added up to. The
//! model predicts that sum under both quanta: every key's `MEMORY USAGE`,
//! what it leaves out (keyspace entries, expires entries, rounding of
//! `sizeof`-counted structs) and the keyspace bucket arrays, plus the
//! server's own baseline. The build whose prediction fits, when the other
//! one does not, is the answer (memory-model.md §2.1).

use crate::dict::presized;
use crate::profile::Profile;
use crate::rules::{Era, Rules};

/// `used_memory` of an idle server with no keys: 0.82-1.12 MB across the
/// fixtures' `empty` dumps (Redis 3.2-8.4, Valkey 8.1-9.1).
pub const BASELINE: u64 = 950_000;

/// How far `used-mem` may fall below a prediction and still fit it: the
/// idle server's spread around [`BASELINE`] (0.82-1.12 MB across releases)
/// and the model's error (0.3 % of the prediction; measured 0.05 % or less
/// on Redis 7.0, docs/memory-model-accuracy.md). A server never holds less
/// than its keys.
const BELOW_FIXED: u64 = 200_000;
const BELOW_RATE: f64 = 0.003;
/// How far above: what used-mem holds besides the keys when the dump is
/// written, measured on Redis 7.0.15 (Debian's build and a source build,
/// 10 k-1 M keys, `benches/check_allocator.py`): 0-8 kB for SAVE, 25 kB for
/// BGSAVE, 80-90 kB for `redis-cli --rdb` (the replica client and the first
/// block of the replication backlog), 0.4-1.1 MB for SAVE through the busy
/// connection that just filled the server (its query and reply buffers);
/// plus the baseline's spread and the model's error as below, and an
/// unfinished rehash of the keyspace tables (`rehash_slack` of
/// [`Evidence`]). More than this (a full replication backlog, many
/// clients' buffers, Lua scripts) leaves both builds' predictions under
/// used-mem: the nearer one is taken, and said to be only that.
const ABOVE_FIXED: u64 = 1_300_000;
const ABOVE_RATE: f64 = 0.003;
/// Where `used-mem` fits both builds (or neither), the nearer prediction is
/// taken when its distance to `used-mem` is at most this share of the
/// other's, and shorter by more than the margin below a prediction
/// (`BELOW_FIXED`, `BELOW_RATE`); else the evidence is unclear.
const MAX_NEAR_SHARE: f64 = 2.0 / 3.0;

/// How the quantum was chosen. Serialized as [`Basis::as_str`] spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// `--jemalloc-quantum` was given.
    Flag,
    /// `used-mem` fits one build's prediction and not the other's.
    UsedMem,
    /// `used-mem` fits both builds' predictions, or neither: the build
    /// whose prediction is nearer to it (the report shows both).
    Nearer,
    /// No evidence (no `used-mem`, another target than the writer): the
    /// default, bundled jemalloc.
    Unclear,
}

impl Basis {
    /// Lower-case name for reports: `flag`, `used-mem`, `nearer` or `unclear`.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Flag => "flag",
            Basis::UsedMem => "used-mem",
            Basis::Nearer => "nearer",
            Basis::Unclear => "unclear",
        }
    }
}

impl std::fmt::Display for Basis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The allocator the estimates assume, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// jemalloc quantum assumed, in bytes: 8 (bundled) or 16 (system).
    pub quantum: u64,
    /// What the choice rests on.
    pub basis: Basis,
    /// One sentence: "used-mem matches within 0.12 % (quantum 8 would be
    /// 2.41 % off)", or why the evidence is unclear.
    pub reason: String,
    /// `used_memory` predicted for quantum 8 and 16 by the evidence, when
    /// it was summed (from a sample of the keys on big dumps).
    pub predicted: Option<[u64; 2]>,
}

impl Choice {
    /// The quantum given with `--jemalloc-quantum`.
    pub fn flag(quantum: u64) -> Choice {
        Choice {
            quantum,
            basis: Basis::Flag,
            reason: "--jemalloc-quantum given".into(),
            predicted: None,
        }
    }

    /// The default (quantum 8, bundled jemalloc) when there is no evidence; `reason` says why.
    pub fn unclear(reason: impl Into<String>) -> Choice {
        Choice {
            quantum: 8,
            basis: Basis::Unclear,
            reason: reason.into(),
            predicted: None,
        }
    }

    /// "bundled jemalloc" (quantum 8) or "system jemalloc" (quantum 16).
    pub fn allocator(&self) -> &'static str {
        allocator_name(self.quantum)
    }

    /// The header line's words: "assumed: system jemalloc, quantum 16:
    /// used-mem matches within 0.12 %".
    pub fn describe(&self) -> String {
        let head = format!("assumed: {}, quantum {}", self.allocator(), self.quantum);
        match self.basis {
            Basis::Unclear => format!(
                "{head} (evidence unclear: {}; pass --jemalloc-quantum 16 for a distribution package \
                 linking the system libjemalloc)",
                self.reason
            ),
            Basis::Nearer => format!(
                "{head}, the nearer of two ({}; pass --jemalloc-quantum 8 or 16 if you know the build)",
                self.reason
            ),
            _ => format!("{head}: {}", self.reason),
        }
    }
}

/// "system jemalloc" for quantum 16, "bundled jemalloc" for any other.
pub fn allocator_name(quantum: u64) -> &'static str {
    if quantum == 16 {
        "system jemalloc"
    } else {
        "bundled jemalloc"
    }
}

/// The model's prediction of `used_memory` under both builds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Evidence {
    /// The dump's `used-mem`.
    pub used_mem: u64,
    /// Predicted `used_memory` in bytes for quantum 8, baseline included.
    pub predicted_q8: f64,
    /// Predicted `used_memory` in bytes for quantum 16, baseline included.
    pub predicted_q16: f64,
    /// Bytes an unfinished rehash of the keyspace tables could add (the
    /// smaller table of each, kept while the bigger one fills).
    pub rehash_slack: f64,
    /// Standard deviation of the predictions when they were summed over a
    /// sample of the keys (0 when every key was estimated): both margins
    /// widen by three of it, so a sample never decides what the whole file
    /// might not.
    pub sampling_sd: f64,
}

impl Evidence {
    /// How far `used_mem` is from a prediction, as a fraction of it
    /// (positive: the server held more).
    fn off(&self, predicted: f64) -> f64 {
        (self.used_mem as f64 - predicted) / predicted.max(1.0)
    }

    /// The widest gap above a prediction that still fits.
    fn margin_above(&self, predicted: f64) -> f64 {
        ABOVE_FIXED as f64 + ABOVE_RATE * predicted + self.rehash_slack + 3.0 * self.sampling_sd
    }

    /// The widest gap below a prediction that still fits: a server never
    /// holds less than its keys, so only the model's error and the
    /// baseline's spread.
    fn margin_below(&self, predicted: f64) -> f64 {
        BELOW_FIXED as f64 + BELOW_RATE * predicted + 3.0 * self.sampling_sd
    }

    fn fits(&self, predicted: f64) -> bool {
        let diff = self.used_mem as f64 - predicted;
        -self.margin_below(predicted) <= diff && diff <= self.margin_above(predicted)
    }

    /// Quantum 16 if only its prediction fits `used_mem`, 8 if only that
    /// one does; else (both fit: a small dump, or values both builds round
    /// alike; neither fits: more memory outside the keys than allowed, or
    /// another version wrote it) the build whose prediction is nearer,
    /// with both predictions in the reason.
    pub fn decide(&self) -> Choice {
        let fit8 = self.fits(self.predicted_q8);
        let fit16 = self.fits(self.predicted_q16);
        let pct = |x: f64| format!("{:.2} %", 100.0 * x.abs());
        let (o8, o16) = (self.off(self.predicted_q8), self.off(self.predicted_q16));
        let predicted = Some([
            self.predicted_q8.round() as u64,
            self.predicted_q16.round() as u64,
        ]);
        if fit8 != fit16 {
            let (q, mine, other) = if fit16 { (16, o16, o8) } else { (8, o8, o16) };
            return Choice {
                quantum: q,
                basis: Basis::UsedMem,
                reason: format!(
                    "used-mem matches within {} (quantum {} would be {} off)",
                    pct(mine),
                    24 - q,
                    pct(other)
                ),
                predicted,
            };
        }
        let gap = |p: f64| (self.used_mem as f64 - p).abs();
        let (g8, g16) = (gap(self.predicted_q8), gap(self.predicted_q16));
        let q = if g16 < g8 { 16 } else { 8 };
        let (near, far) = if q == 16 {
            (self.predicted_q16, self.predicted_q8)
        } else {
            (self.predicted_q8, self.predicted_q16)
        };
        let signed = |p: f64| {
            let d = self.used_mem as f64 - p;
            format!("{}{}", if d < 0.0 { "-" } else { "+" }, decimal_size(d.abs()))
        };
        let distances = format!(
            "used-mem {} is {} from quantum {q}'s prediction {} and {} from quantum {}'s {}",
            decimal_size(self.used_mem as f64),
            signed(near),
            decimal_size(near),
            signed(far),
            24 - q,
            decimal_size(far),
        );
        // Nearer only where it is clearly so: by more than the
        // predictions' own uncertainty (the baseline's spread, the model's
        // error), and by a fair share. The fixtures' dumps hold 0.8 MB
        // besides their keys (modules, functions, the filling client)
        // where the two builds differ by 40 kB: which of two distances
        // that alike is the smaller says nothing.
        if gap(far) - gap(near) < self.margin_below(near) || gap(near) > MAX_NEAR_SHARE * gap(far) {
            return Choice {
                predicted,
                ..Choice::unclear(format!("{distances}: neither is clearly nearer"))
            };
        }
        let why = if fit8 {
            format!(
                "the two differ by {}, and used-mem may hold up to {} besides the keys",
                decimal_size((self.predicted_q16 - self.predicted_q8).abs()),
                decimal_size(self.margin_above(self.predicted_q8.max(self.predicted_q16)))
            )
        } else {
            "it fits neither".to_string()
        };
        Choice {
            quantum: q,
            basis: Basis::Nearer,
            reason: format!("{distances}; {why}"),
            predicted,
        }
    }
}

/// Bytes as "1.2 MB" (decimal, as `used-mem` is read); under 0.05 MB as
/// "12.3 kB", where "0.0 MB" would say the two builds do not differ.
fn decimal_size(bytes: f64) -> String {
    if bytes.abs() < 50_000.0 {
        format!("{:.1} kB", bytes / 1e3)
    } else {
        format!("{:.1} MB", bytes / 1e6)
    }
}

/// The keyspace bucket arrays of one database of `keys` keys, `expires`
/// of them with a TTL, as loaded (tables presized from the RDB's resize
/// hints), and what an unfinished rehash could add.
pub fn keyspace_tables(profile: &Profile, keys: u64, expires: u64) -> (u64, u64) {
    let rules = Rules::for_profile(profile);
    let table = |n: u64| if n == 0 { 0 } else { 8 * presized(n) };
    match rules.era {
        Era::Legacy | Era::Dict => {
            let t = table(keys) + table(expires);
            (t, t / 2)
        }
        // Redis 8.2+ and Valkey 8.1+: the per-key shares the model
        // already adds stand for the tables.
        Era::Kvobj | Era::ValkeyObject => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(used: u64, p8: f64, p16: f64) -> Evidence {
        Evidence {
            used_mem: used,
            predicted_q8: p8,
            predicted_q16: p16,
            sampling_sd: 0.0,
            rehash_slack: 0.0,
        }
    }

    #[test]
    fn a_clear_fit_picks_that_build() {
        let c = evidence(2_419_000_000, 2_350_000_000.0, 2_418_000_000.0).decide();
        assert_eq!((c.quantum, c.basis), (16, Basis::UsedMem));
        assert_eq!(
            c.reason,
            "used-mem matches within 0.04 % (quantum 8 would be 2.94 % off)"
        );
        assert_eq!(
            c.describe(),
            "assumed: system jemalloc, quantum 16: used-mem matches within 0.04 % (quantum 8 would be \
             2.94 % off)"
        );
        let c = evidence(500_000_000, 499_000_000.0, 520_000_000.0).decide();
        assert_eq!((c.quantum, c.basis), (8, Basis::UsedMem));
    }

    #[test]
    fn where_both_or_neither_fit_the_nearer_is_taken_and_both_are_shown() {
        // 3,946 keys written by BGSAVE from Debian's build: the two builds
        // 0.45 MB apart, both fit, quantum 16's is clearly nearer.
        let c = evidence(5_893_088, 5_404_000.0, 5_854_233.0).decide();
        assert_eq!((c.quantum, c.basis), (16, Basis::Nearer));
        assert_eq!(c.predicted, Some([5_404_000, 5_854_233]));
        assert_eq!(
            c.reason,
            "used-mem 5.9 MB is +38.9 kB from quantum 16's prediction 5.9 MB and +0.5 MB from quantum 8's \
             5.4 MB; the two differ by 0.5 MB, and used-mem may hold up to 1.3 MB besides the keys"
        );
        assert_eq!(
            c.describe(),
            format!(
                "assumed: system jemalloc, quantum 16, the nearer of two ({}; pass --jemalloc-quantum 8 \
                 or 16 if you know the build)",
                c.reason
            )
        );
        // Nearer, but by less than the predictions' own uncertainty.
        let c = evidence(5_104_024, 4_900_000.0, 5_100_000.0).decide();
        assert_eq!((c.quantum, c.basis), (8, Basis::Unclear));
        // Below both: the nearer, said to fit neither.
        let c = evidence(1_300_000, 1_563_660.0, 2_000_000.0).decide();
        assert_eq!((c.quantum, c.basis), (8, Basis::Nearer));
        assert!(c.reason.ends_with("; it fits neither"), "{}", c.reason);
        // Far more memory than either prediction, or as much more than
        // both (a fixture: 0.8 MB of modules and functions besides keys
        // whose builds differ by 44 kB): unclear, both shown.
        for (used, p8, p16) in [
            (900_000_000, 500_000_000.0, 520_000_000.0),
            (5_040_064, 4_229_687.0, 4_273_554.0),
        ] {
            let c = evidence(used, p8, p16).decide();
            assert_eq!((c.quantum, c.basis), (8, Basis::Unclear));
            assert_eq!(c.predicted, Some([p8 as u64, p16 as u64]));
            assert!(c.reason.ends_with(": neither is clearly nearer"), "{}", c.reason);
        }
        assert_eq!(
            evidence(5_040_064, 4_229_687.0, 4_273_554.0).decide().reason,
            "used-mem 5.0 MB is +0.8 MB from quantum 16's prediction 4.3 MB and +0.8 MB from quantum 8's \
             4.2 MB: neither is clearly nearer"
        );
    }

    #[test]
    fn used_mem_below_a_prediction_rules_that_build_out() {
        // The 9,472-key cache-like dump written by BGSAVE from Redis 7.0.15
        // built from source (quantum 8): the two builds 0.61 MB apart.
        let c = evidence(9_412_448, 9_395_198.0, 10_005_083.0).decide();
        assert_eq!((c.quantum, c.basis), (8, Basis::UsedMem));
        // The same data by `redis-cli --rdb` from Debian's build (quantum
        // 16): both fit, quantum 16's is nearer.
        let c = evidence(10_099_368, 9_394_009.0, 10_005_083.0).decide();
        assert_eq!((c.quantum, c.basis), (16, Basis::Nearer));
        // 90,869 keys, the two builds 4.9 MB apart: quantum 8 is ruled out
        // from above.
        let c = evidence(81_415_160, 76_480_369.0, 81_330_000.0).decide();
        assert_eq!((c.quantum, c.basis), (16, Basis::UsedMem));
    }

    #[test]
    fn rehash_slack_widens_the_window_upward() {
        let mut e = evidence(1_032_000_000, 1_000_000_000.0, 1_030_000_000.0);
        assert_eq!((e.decide().quantum, e.decide().basis), (16, Basis::UsedMem));
        e.rehash_slack = 40_000_000.0;
        assert_eq!((e.decide().quantum, e.decide().basis), (16, Basis::Nearer));
    }
}
