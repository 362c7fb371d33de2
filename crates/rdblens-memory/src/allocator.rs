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

/// What `used-mem` may hold besides the keys and the baseline, below the
/// prediction: baseline spread and model error (0.3 % of the prediction).
const BELOW_FIXED: u64 = 300_000;
const BELOW_RATE: f64 = 0.003;
/// Above the prediction: client query and output buffers, a replication
/// backlog (1 MB by default), Lua scripts and functions (8 MB), plus the
/// same 0.3 % model error, plus an unfinished rehash of the keyspace
/// tables (`rehash_slack` of [`Evidence`]).
const ABOVE_FIXED: u64 = 8_000_000;
const ABOVE_RATE: f64 = 0.003;

/// How the quantum was chosen. Serialized as [`Basis::as_str`] spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// `--jemalloc-quantum` was given.
    Flag,
    /// `used-mem` fits one build's prediction and not the other's.
    UsedMem,
    /// The evidence does not decide (small dump, no `used-mem`, another
    /// target than the writer): the default, bundled jemalloc.
    Unclear,
}

impl Basis {
    /// Lower-case name for reports: `flag`, `used-mem` or `unclear`.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Flag => "flag",
            Basis::UsedMem => "used-mem",
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
}

impl Choice {
    /// The quantum given with `--jemalloc-quantum`.
    pub fn flag(quantum: u64) -> Choice {
        Choice {
            quantum,
            basis: Basis::Flag,
            reason: "--jemalloc-quantum given".into(),
        }
    }

    /// The default (quantum 8, bundled jemalloc) when the evidence does not decide; `reason` says why.
    pub fn unclear(reason: impl Into<String>) -> Choice {
        Choice {
            quantum: 8,
            basis: Basis::Unclear,
            reason: reason.into(),
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

    /// The widest gap between `used_mem` and a prediction that still fits.
    fn margin_around(&self, predicted: f64) -> f64 {
        ABOVE_FIXED as f64 + ABOVE_RATE * predicted + self.rehash_slack + 3.0 * self.sampling_sd
    }

    fn fits(&self, predicted: f64) -> bool {
        let diff = self.used_mem as f64 - predicted;
        let below = BELOW_FIXED as f64 + BELOW_RATE * predicted + 3.0 * self.sampling_sd;
        let above = self.margin_around(predicted);
        -below <= diff && diff <= above
    }

    /// Quantum 16 if only its prediction fits `used_mem`, 8 if only that
    /// one does, else unclear (both fit: the dump is too small or made of
    /// values both builds round alike; neither fits: memory outside the
    /// keys, or another version wrote it).
    pub fn decide(&self) -> Choice {
        let fit8 = self.fits(self.predicted_q8);
        let fit16 = self.fits(self.predicted_q16);
        let pct = |x: f64| format!("{:.2} %", 100.0 * x.abs());
        let (o8, o16) = (self.off(self.predicted_q8), self.off(self.predicted_q16));
        match (fit8, fit16) {
            (true, false) | (false, true) => {
                let (q, mine, other) = if fit16 { (16, o16, o8) } else { (8, o8, o16) };
                Choice {
                    quantum: q,
                    basis: Basis::UsedMem,
                    reason: format!(
                        "used-mem matches within {} (quantum {} would be {} off)",
                        pct(mine),
                        24 - q,
                        pct(other)
                    ),
                }
            }
            (true, true) => Choice::unclear(format!(
                "the two builds differ by {} on this dump, less than the {} used-mem may hold besides \
                 the keys",
                decimal_size((self.predicted_q16 - self.predicted_q8).abs()),
                decimal_size(self.margin_around(self.predicted_q8))
            )),
            (false, false) => Choice::unclear(format!(
                "used-mem {} fits neither build (quantum 8: {} off, quantum 16: {} off)",
                self.used_mem,
                pct(o8),
                pct(o16)
            )),
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
    fn small_or_odd_dumps_are_unclear() {
        // A fixture-sized dump: the baseline dwarfs the difference.
        let c = evidence(5_104_024, 4_900_000.0, 5_100_000.0).decide();
        assert_eq!((c.quantum, c.basis), (8, Basis::Unclear));
        assert!(c.describe().contains("--jemalloc-quantum 16"), "{}", c.describe());
        assert_eq!(
            c.reason,
            "the two builds differ by 0.2 MB on this dump, less than the 8.0 MB used-mem may hold besides \
             the keys"
        );
        // Builds apart by a few kilobytes: not "0.0 MB".
        let c = evidence(5_104_024, 5_100_000.0, 5_103_456.0).decide();
        assert_eq!(c.basis, Basis::Unclear);
        assert!(
            c.reason
                .starts_with("the two builds differ by 3.5 kB on this dump"),
            "{}",
            c.reason
        );
        // Far more memory than either prediction.
        let c = evidence(900_000_000, 500_000_000.0, 520_000_000.0).decide();
        assert_eq!(c.basis, Basis::Unclear);
        assert!(c.reason.contains("fits neither"), "{}", c.reason);
    }

    #[test]
    fn rehash_slack_widens_the_window_upward() {
        let mut e = evidence(1_040_000_000, 1_000_000_000.0, 1_030_000_000.0);
        assert_eq!(e.decide().quantum, 16);
        e.rehash_slack = 40_000_000.0;
        assert_eq!(e.decide().basis, Basis::Unclear);
    }
}
