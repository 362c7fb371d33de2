//! Settling the allocator build before the walk ends.
//!
//! The evidence for the build (see [`crate::allocator`]) is a prediction of
//! `used_memory` for the whole file, summed key by key. A guess from the
//! first keys can be wrong (on a collection-heavy dump the first 16 k keys
//! held one giant hash and over-predicted by 13 %), and a wrong guess used
//! to cost a whole second analysis. But keys come in hash-table order,
//! which has nothing to do with their names or sizes, so the batches
//! walked so far are a random sample of the file's batches: their sums,
//! scaled by the bytes still ahead (a ratio estimator over batches as
//! clusters), predict the whole file with a standard error that shrinks as
//! the walk goes on. [`EarlyEvidence`] folds batches in file order and
//! answers as soon as the prediction, with its margins widened by three
//! standard errors, fits one build and not the other; before that, it
//! tells which build the prediction leans to (the closer to `used-mem`)
//! and whether that lean is clear (closer by two standard errors): the
//! report estimates batches for a clear lean meanwhile, and defers the
//! others (`crate::mainpass`).
//!
//! Batches are folded strictly in order (late ones wait for those before
//! them), so the point where it answers, and the answer, are the same for
//! any thread count.

use std::collections::BTreeMap;

use rdblens_memory::allocator::{keyspace_tables, Basis, Choice, Evidence, BASELINE};
use rdblens_memory::Profile;

/// What one batch adds to the evidence: its keys' predicted memory under
/// each build (Horvitz-Thompson sums over the sampled keys) and its keys
/// per database (keys, keys with a TTL).
#[derive(Clone, Debug, Default)]
pub(crate) struct BatchEvidence {
    pub q8: f64,
    pub q16: f64,
    pub dbs: BTreeMap<u64, (u64, u64)>,
}

/// Batches folded before the first answer: fewer make the standard error
/// itself unreliable.
const MIN_BATCHES: f64 = 32.0;
/// Share of the file's key bytes walked before the first answer.
const MIN_SHARE: f64 = 0.02;

/// Running sums over the batches folded so far (in file order).
#[derive(Default)]
struct Folded {
    batches: f64,
    bytes: f64,
    q8: f64,
    q16: f64,
    /// Sums of squares and products, for the ratio estimator's variance.
    bytes_sq: f64,
    bytes_q8: f64,
    bytes_q16: f64,
    q8_sq: f64,
    q16_sq: f64,
    /// (keys, keys with a TTL) per database.
    dbs: BTreeMap<u64, (u64, u64)>,
}

impl Folded {
    fn add(&mut self, bytes: f64, sums: &BatchEvidence) {
        let (y8, y16) = (sums.q8, sums.q16);
        self.batches += 1.0;
        self.bytes += bytes;
        self.q8 += y8;
        self.q16 += y16;
        self.bytes_sq += bytes * bytes;
        self.bytes_q8 += bytes * y8;
        self.bytes_q16 += bytes * y16;
        self.q8_sq += y8 * y8;
        self.q16_sq += y16 * y16;
        for (db, (k, e)) in &sums.dbs {
            let slot = self.dbs.entry(*db).or_default();
            slot.0 += k;
            slot.1 += e;
        }
    }

    /// The whole-file prediction of one build's key memory from the
    /// batches so far, and its variance: `total` bytes times the ratio of
    /// their sums to their bytes (`sum`, `sum_sq`, `bytes_sum` for that
    /// build).
    fn extrapolate(&self, total: f64, sum: f64, sum_sq: f64, bytes_sum: f64) -> (f64, f64) {
        let (n, b) = (self.batches, self.bytes.max(1.0));
        let ratio = sum / b;
        // Sum over batches of (y - ratio * bytes)^2, expanded.
        let residual = (sum_sq - 2.0 * ratio * bytes_sum + ratio * ratio * self.bytes_sq).max(0.0);
        let s2 = residual / (n - 1.0).max(1.0);
        let share = (b / total).min(1.0);
        let var = total * total * (1.0 - share) * s2 * n / (b * b);
        (ratio * total, var)
    }
}

/// Batch sums in file order, and the build they settle on once clear.
pub(crate) struct EarlyEvidence {
    used_mem: u64,
    profile: Profile,
    /// Bytes the file's keys span (the file's size: its header, aux
    /// fields and trailer are a rounding error).
    total: f64,
    /// Batches that came before those ahead of them, by sequence number.
    waiting: BTreeMap<u64, (u64, BatchEvidence)>,
    next: u64,
    folded: Folded,
    /// Answered (or gave up): nothing more is folded.
    settled: bool,
    /// Tests: this answer once this many batches are folded.
    forced: Option<(u64, Choice)>,
    /// The quantum whose prediction is closer to `used-mem` so far, once
    /// enough batches are folded (settled or not).
    closer: Option<u64>,
    /// `closer`, when it is closer by [`CLEAR_BY`] standard errors.
    clear: Option<u64>,
}

/// Standard errors by which one build's prediction must be the closer for
/// the lean to be clear ([`EarlyEvidence::clear`]): a lean that clear is
/// wrong about one time in forty.
const CLEAR_BY: f64 = 2.0;

impl EarlyEvidence {
    /// For a file of `file_len` bytes whose dump says `used_mem`.
    pub(crate) fn new(used_mem: u64, profile: &Profile, file_len: u64) -> Self {
        EarlyEvidence {
            used_mem,
            profile: profile.clone(),
            total: file_len.max(1) as f64,
            waiting: BTreeMap::new(),
            next: 0,
            folded: Folded::default(),
            settled: false,
            forced: None,
            closer: None,
            clear: None,
        }
    }

    /// Tests: answers `quantum` once `batches` are folded, whatever the
    /// sums say.
    pub(crate) fn forced(
        used_mem: u64,
        profile: &Profile,
        file_len: u64,
        batches: u64,
        quantum: u64,
    ) -> Self {
        let choice = Choice {
            quantum,
            basis: Basis::UsedMem,
            reason: format!("settled after {batches} batches by a test"),
            predicted: None,
        };
        EarlyEvidence {
            forced: Some((batches, choice)),
            ..EarlyEvidence::new(used_mem, profile, file_len)
        }
    }

    /// Adds batch number `seq` (0, 1, 2... in file order), which spans
    /// `bytes` of the file, with the evidence summed over its keys. Returns
    /// the build once the batches folded so far settle it, once; then
    /// `None` for good.
    pub(crate) fn add(&mut self, seq: u64, bytes: u64, sums: BatchEvidence) -> Option<Choice> {
        if self.settled {
            return None;
        }
        self.waiting.insert(seq, (bytes, sums));
        while let Some((bytes, sums)) = self.waiting.remove(&self.next) {
            self.next += 1;
            self.folded.add(bytes as f64, &sums);
            if let Some(choice) = self.decide() {
                self.settled = true;
                self.waiting.clear();
                return Some(choice);
            }
        }
        None
    }

    /// The quantum whose prediction from the batches folded so far is
    /// closer to `used-mem`, once there are enough of them to tell (see
    /// [`Self::add`]): a lean, not a settlement.
    pub(crate) fn closer(&self) -> Option<u64> {
        self.closer
    }

    /// The closer build (see [`Self::closer`]) once its prediction is
    /// closer by [`CLEAR_BY`] standard errors; `None` while the lean is
    /// unclear, when folding a batch for either build may mean estimating
    /// it again.
    pub(crate) fn clear(&self) -> Option<u64> {
        self.clear
    }

    /// The build, if the batches folded so far settle it.
    fn decide(&mut self) -> Option<Choice> {
        if let Some((batches, choice)) = &self.forced {
            return (self.next >= *batches).then(|| choice.clone());
        }
        let f = &self.folded;
        let share = f.bytes / self.total;
        if f.batches < MIN_BATCHES || share < MIN_SHARE {
            return None;
        }
        let (p8, var8) = f.extrapolate(self.total, f.q8, f.q8_sq, f.bytes_q8);
        let (p16, var16) = f.extrapolate(self.total, f.q16, f.q16_sq, f.bytes_q16);
        let (mut tables, mut slack) = (0u64, 0u64);
        for (keys, expires) in f.dbs.values() {
            let scale = |n: u64| (n as f64 / share.min(1.0)) as u64;
            let (t, s) = keyspace_tables(&self.profile, scale(*keys), scale(*expires));
            tables += t;
            slack += s;
        }
        let fixed = (tables + BASELINE) as f64;
        let used = self.used_mem as f64;
        // The lean is the build whose prediction is closer now, however
        // noisy: each batch folded for the build that loses in the end is
        // estimated again, whenever it came, so the cost is least when
        // every batch takes the likelier build. Flips cost nothing by
        // themselves. (Holding a lean until the other build was closer by
        // a standard error left 438 of about 1,480 batches of the
        // collection-heavy benchmark dump to estimate again; this rule, 223.)
        let (d8, d16) = ((p8 + fixed - used).abs(), (p16 + fixed - used).abs());
        if d16 < d8 {
            self.closer = Some(16);
        } else if d8 < d16 {
            self.closer = Some(8);
        }
        let sd = var8.max(var16).sqrt();
        self.clear = ((d8 - d16).abs() >= CLEAR_BY * sd)
            .then_some(self.closer)
            .flatten();
        let choice = Evidence {
            used_mem: self.used_mem,
            predicted_q8: p8 + fixed,
            predicted_q16: p16 + fixed,
            rehash_slack: slack as f64,
            sampling_sd: var8.max(var16).sqrt(),
        }
        .decide();
        (choice.basis == Basis::UsedMem).then(|| Choice {
            reason: format!(
                "{} (from the first {:.0} % of the dump)",
                choice.reason,
                (100.0 * share).ceil()
            ),
            ..choice
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sums(q8: f64, q16: f64, keys: u64) -> BatchEvidence {
        let mut s = BatchEvidence {
            q8,
            q16,
            ..BatchEvidence::default()
        };
        s.dbs.insert(0, (keys, 0));
        s
    }

    fn profile() -> Profile {
        Profile::from_aux(Some("7.0.15"), None, 10, rdblens_parser::Dialect::Redis)
    }

    /// 1,000 batches of 1 MB, each predicting 2.0 MB under quantum 8 and
    /// 2.12 MB under quantum 16, with a little noise; used-mem is the
    /// quantum 16 prediction of the whole file.
    fn batch(i: u64) -> BatchEvidence {
        let noise = ((i * 7919) % 101) as f64 / 100.0 - 0.5; // -0.5..0.5
        sums(2.0e6 + noise * 1e5, 2.12e6 + noise * 1.06e5, 1000)
    }

    fn used_mem() -> u64 {
        let (keys, expires) = (1_000_000, 0);
        let (tables, _) = keyspace_tables(&profile(), keys, expires);
        (1000.0 * 2.12e6) as u64 + tables + BASELINE
    }

    #[test]
    fn a_clear_file_is_settled_early_and_the_same_in_any_arrival_order() {
        let in_order = {
            let mut early = EarlyEvidence::new(used_mem(), &profile(), 1000 * 1_000_000);
            (0..1000u64).find_map(|i| early.add(i, 1_000_000, batch(i)).map(|c| (i, c)))
        };
        let (at, choice) = in_order.expect("settled"); // ok: unit test
        let mut early = EarlyEvidence::new(used_mem(), &profile(), 1000 * 1_000_000);
        for i in 0..31 {
            assert!(early.add(i, 1_000_000, batch(i)).is_none());
            assert_eq!(early.clear(), None, "too few batches to tell");
        }
        assert!(early.add(31, 1_000_000, batch(31)).is_some());
        assert_eq!(early.clear(), Some(16), "the lean is clear where it settles");
        assert_eq!(choice.quantum, 16);
        assert_eq!(choice.basis, Basis::UsedMem);
        // The first answer comes as soon as the rules allow: 32 batches (3 %).
        assert_eq!(at, 31);
        assert!(
            choice.reason.ends_with("(from the first 4 % of the dump)"),
            "{}",
            choice.reason
        );

        // Pairs swapped: batch 1 before batch 0, 3 before 2... The answer
        // comes when batch 31 is folded, whichever call brings it.
        let mut early = EarlyEvidence::new(used_mem(), &profile(), 1000 * 1_000_000);
        let swapped = (0..1000u64)
            .map(|i| i ^ 1)
            .find_map(|i| early.add(i, 1_000_000, batch(i)).map(|c| (i, c)));
        let (at, again) = swapped.expect("settled"); // ok: unit test
        assert_eq!(at, 30, "batch 30 comes after 31 and releases it");
        assert_eq!(again, choice);
        // Settled: nothing more is answered.
        assert!(early.add(1000, 1_000_000, batch(1000)).is_none());
    }

    /// Batches that alternate between a giant key and small ones: the
    /// standard error after 32 of 1,000 batches is far wider than the 6 %
    /// between the builds.
    fn uneven(i: u64) -> BatchEvidence {
        if i.is_multiple_of(2) {
            batch(i)
        } else {
            sums(2.0e7, 2.12e7, 10)
        }
    }

    #[test]
    fn a_noisy_file_is_not_settled_from_a_few_batches() {
        let total: f64 = (0..1000).map(|i| uneven(i).q16).sum();
        let mut early = EarlyEvidence::new(total as u64, &profile(), 1000 * 1_000_000);
        for i in 0..32 {
            assert!(early.add(i, 1_000_000, uneven(i)).is_none());
        }
    }

    #[test]
    fn the_lean_follows_the_closer_prediction_before_anything_is_settled() {
        // The uneven file: after 32 batches the standard error is far
        // wider than the gap between the builds, so nothing is settled, but
        // the quantum 16 prediction is the closer one, and the lean is it.
        let total: f64 = (0..1000).map(|i| uneven(i).q16).sum();
        let mut early = EarlyEvidence::new(total as u64, &profile(), 1000 * 1_000_000);
        for i in 0..31 {
            assert!(early.add(i, 1_000_000, uneven(i)).is_none());
            assert_eq!(early.closer(), None, "too few batches to lean");
        }
        assert!(early.add(31, 1_000_000, uneven(31)).is_none());
        assert_eq!(early.closer(), Some(16));
        // Closer, but not by two standard errors: not clear.
        assert_eq!(early.clear(), None);
        // used-mem at the quantum 8 prediction: the lean goes to 8.
        let total8: f64 = (0..1000).map(|i| uneven(i).q8).sum();
        let mut early = EarlyEvidence::new(total8 as u64, &profile(), 1000 * 1_000_000);
        for i in 0..32 {
            assert!(early.add(i, 1_000_000, uneven(i)).is_none());
        }
        assert_eq!(early.closer(), Some(8));
    }

    #[test]
    fn used_mem_between_the_builds_settles_nothing() {
        let (tables, _) = keyspace_tables(&profile(), 1_000_000, 0);
        let halfway = (1000.0 * 2.06e6) as u64 + tables + BASELINE;
        let mut early = EarlyEvidence::new(halfway, &profile(), 1000 * 1_000_000);
        assert!((0..1000u64).all(|i| early.add(i, 1_000_000, batch(i)).is_none()));
    }
}
