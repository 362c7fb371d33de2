//! The allocator build the estimates assume: `--jemalloc-quantum` when
//! given, else what the dump's `used-mem` says (rdblens_memory::allocator).
//!
//! The evidence is a prediction of `used_memory` under both builds for the
//! whole file. Each key is estimated for both builds in one decoding
//! (`Estimator::estimate_pair`), but only a sample of the keys: on a dump
//! of 64 MiB or more a key is taken with a probability proportional to
//! its size (serialized bytes, string length, key and a per-key overhead)
//! over [`SAMPLE_BYTES`], so every value of 64 KiB or more is taken and a
//! 640-byte one with odds of 1 in 100, and each taken key counts 1/p times
//! (the Horvitz-Thompson estimator: unbiased, with a variance it estimates
//! itself). Memory grows with size, so the sample spends its decoding where
//! the bytes are. The sampling's standard deviation widens the decision's
//! margins three-fold (`Evidence::sampling_sd`): on the 3.2 M-key prod-1g
//! corpus it is under 1 % of the prediction, where the two builds differ
//! by 6 %. Smaller dumps are estimated key by key. A key is taken or not by
//! a hash of its name, so the choice is the same for any thread count.
//!
//! Where it is summed: a pass of its own before the main one cost a second
//! walk of the dump (+20 % CPU for the whole report on both benchmark
//! corpora; +55 % when it decoded every value of 1 KiB or more). So the
//! report sums it inside the main pass ([`Deferred`]): it guesses the build
//! from the first keys, analyses with that guess while summing the
//! evidence, follows the build the evidence leans to batch by batch and
//! estimates again, at the end, only the batches folded for the build
//! that lost (`mainpass`), so a wrong guess costs no second pass. `keys`,
//! whose records go out as they are made, runs the
//! separate pass ([`choose`]) but stops it as soon as the part read settles
//! the build (`early`), and sums the evidence in its walk to confirm it
//! (`ordered::map_keys_in_order_rewindable`). Callers that see only part of
//! the file (key filters) run the whole separate pass; all decide on the
//! same sample (the settling pass only stops sooner for a denser one over
//! the first part of the file: [`SETTLING_SAMPLE_BYTES`]).

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;
use std::sync::{Mutex, OnceLock};

use rayon::iter::{ParallelBridge, ParallelIterator};
use rdblens_memory::allocator::{keyspace_tables, Choice, Evidence, BASELINE};
use rdblens_memory::{Estimate, Estimator, Profile};
use rdblens_parser::{Entry, Rdb, Record, Scratch};

use crate::early::{BatchEvidence, EarlyEvidence};
use crate::measure::Measure;
use crate::release::Releaser;
use rdblens_summary::Options;

/// A key of this many bytes (see [`sampling_size`]) or more is always
/// estimated; a smaller one with odds of its size over this.
const SAMPLE_BYTES: u64 = 64 * 1024;
/// [`SAMPLE_BYTES`] for the first [`SETTLING_DENSE_SHARE`] of the file in
/// the pass that stops as soon as the part read settles the build
/// (`keys`): four times the keys, so the part it must read is shorter.
/// Early on, the standard error of its prediction is mostly this
/// sampling's on a cache-like dump: on the 3.2 M-key prod-1g benchmark
/// dump, after its first 4 %, 3.7 % of `used-mem` with the evidence's
/// sample, 1.55 % with this one, 1.24 % with every key; the pass read 24 %
/// of that dump before settling, and now reads 4 %. Where giant values
/// make the batches differ (the collection-heavy dump: settled after 74 %
/// either way), the denser sample only costs, hence the first part only.
/// Each batch's sums stand for that batch at its own odds, so the ratio
/// estimator over batches stays unbiased. The whole-file sums and the
/// values kept for the confirming walk are the evidence's sample only, so
/// every answer is the one the whole file gives.
const SETTLING_SAMPLE_BYTES: u64 = 16 * 1024;
/// The share of the file (by its batches' first bytes) summed over the
/// denser [`SETTLING_SAMPLE_BYTES`] sample.
const SETTLING_DENSE_SHARE: f64 = 0.1;
/// What a key costs besides its value's bytes, in the sampling size: the
/// key's own object and entry (so tiny values are not all left out).
const KEY_OVERHEAD: u64 = 64;
const BATCH: usize = 4096;

/// The size a key is sampled by: its serialized bytes (or the string's own
/// length, where LZF made the record small), its name and [`KEY_OVERHEAD`].
fn sampling_size(entry: &Entry<'_>) -> u64 {
    let string_len = entry.string().ok().flatten().map_or(0, |s| s.len() as u64);
    entry.record_len.max(string_len) + entry.key.len() as u64 + KEY_OVERHEAD
}

/// Which keys the evidence estimates (the same in both passes).
#[derive(Clone, Copy)]
pub(crate) struct Sampler {
    /// Every key (a small dump).
    every_key: bool,
    /// A key of this size or more is always taken.
    sample_bytes: u64,
}

/// A key's fixed draw in [0, 1): a hash of its name with a fixed seed, so
/// the same keys are taken on every run and split, and a sampler with
/// higher odds takes every key one with lower odds takes.
fn draw(entry: &Entry<'_>, key: &[u8]) -> f64 {
    let h = foldhash::fast::FixedState::with_seed(0x5eed).hash_one((entry.db, key));
    (h >> 11) as f64 / (1u64 << 53) as f64
}

impl Sampler {
    pub(crate) fn for_file(len: usize, sample_from: usize) -> Sampler {
        Sampler {
            every_key: len < sample_from,
            sample_bytes: SAMPLE_BYTES,
        }
    }

    /// The denser sample of the pass that stops once settled
    /// ([`SETTLING_SAMPLE_BYTES`]): it takes every key this one takes.
    fn settling(self) -> Sampler {
        Sampler {
            sample_bytes: SETTLING_SAMPLE_BYTES,
            ..self
        }
    }

    /// The key's odds of being taken, if it is taken.
    pub(crate) fn takes(&self, entry: &Entry<'_>, key: &[u8]) -> Option<f64> {
        if self.every_key {
            return Some(1.0);
        }
        self.takes_drawn(entry, draw(entry, key))
    }

    /// [`Self::takes`] for a key whose [`draw`] is `u`.
    fn takes_drawn(&self, entry: &Entry<'_>, u: f64) -> Option<f64> {
        if self.every_key {
            return Some(1.0);
        }
        let p = (sampling_size(entry) as f64 / self.sample_bytes as f64).min(1.0);
        (u < p).then_some(p)
    }
}

/// Sums under both builds, and the per-database key counts.
#[derive(Default)]
pub(crate) struct Sums {
    q8: f64,
    q16: f64,
    /// Horvitz-Thompson variance estimates of the two sums.
    var_q8: f64,
    var_q16: f64,
    /// (keys, keys with a TTL) per database.
    dbs: BTreeMap<u64, (u64, u64)>,
    /// A batch's sums over every key (`add_exact`), when a stream that
    /// has not settled the build estimated each for both builds: what it
    /// settles by, the sample's sums being what the whole dump's evidence
    /// decides by, unless the stream proves smaller than a sampled dump
    /// (then its batches' exact sums, merged, are every key's: see
    /// [`Self::decide_exact`]).
    exact: Option<(f64, f64)>,
}

impl Sums {
    pub(crate) fn merge(mut self, other: Sums) -> Sums {
        self.q8 += other.q8;
        self.q16 += other.q16;
        self.var_q8 += other.var_q8;
        self.var_q16 += other.var_q16;
        if let Some((x8, x16)) = other.exact {
            let exact = self.exact.get_or_insert((0.0, 0.0));
            exact.0 += x8;
            exact.1 += x16;
        }
        for (db, (k, e)) in other.dbs {
            let slot = self.dbs.entry(db).or_default();
            slot.0 += k;
            slot.1 += e;
        }
        self
    }

    /// These sums as one batch's part of the evidence folded in file order.
    pub(crate) fn batch_evidence(&self) -> BatchEvidence {
        BatchEvidence {
            q8: self.q8,
            q16: self.q16,
            var_q8: self.var_q8,
            var_q16: self.var_q16,
            exact: self.exact,
            dbs: self.dbs.clone(),
        }
    }

    /// Adds a key's estimates (quantum 8, quantum 16) to the sums over
    /// every key, counting it `weight` times (1, or 1/p for a key left
    /// out by the filter and taken by the sample with odds p).
    pub(crate) fn add_exact(&mut self, weight: f64, q8: &Estimate, q16: &Estimate) {
        self.add_exact_used(weight, [q8.adds_to_used_memory(), q16.adds_to_used_memory()]);
    }

    /// [`Self::add_exact`] of what the key adds to `used_memory` under
    /// each build (quantum 8, quantum 16).
    pub(crate) fn add_exact_used(&mut self, weight: f64, [y8, y16]: [u64; 2]) {
        let exact = self.exact.get_or_insert((0.0, 0.0));
        exact.0 += weight * y8 as f64;
        exact.1 += weight * y16 as f64;
    }

    /// Counts a key of the file (every key, taken or not).
    pub(crate) fn count(&mut self, entry: &Entry<'_>) {
        let slot = self.dbs.entry(entry.db).or_default();
        slot.0 += 1;
        slot.1 += u64::from(entry.expiry.is_some());
    }

    /// Adds a taken key's estimates (quantum 8, quantum 16), taken with odds `p`.
    pub(crate) fn add(&mut self, p: f64, q8: &Estimate, q16: &Estimate) {
        self.add_used(p, [q8.adds_to_used_memory(), q16.adds_to_used_memory()]);
    }

    /// [`Self::add`] of what the key adds to `used_memory` under each
    /// build (quantum 8, quantum 16).
    pub(crate) fn add_used(&mut self, p: f64, [y8, y16]: [u64; 2]) {
        let (y8, y16) = (y8 as f64, y16 as f64);
        self.q8 += y8 / p;
        self.q16 += y16 / p;
        // Var of the HT sum under independent draws: sum over taken keys
        // of (1 - p) y^2 / p^2.
        self.var_q8 += (1.0 - p) * y8 * y8 / (p * p);
        self.var_q16 += (1.0 - p) * y16 * y16 / (p * p);
    }

    /// [`Self::decide`] by the exact sums instead of the sample's: the
    /// evidence of a stream smaller than a sampled dump whose every batch
    /// summed every key exactly, as a file of its size samples every key
    /// (each counted once, so the sums are of whole bytes: exact in any
    /// order, the file's to the bit).
    pub(crate) fn decide_exact(&self, profile: &Profile, used_mem: u64) -> Choice {
        let (q8, q16) = self.exact.unwrap_or_default();
        let sums = Sums {
            q8,
            q16,
            var_q8: 0.0,
            var_q16: 0.0,
            dbs: self.dbs.clone(),
            exact: None,
        };
        sums.decide(profile, used_mem)
    }

    pub(crate) fn decide(&self, profile: &Profile, used_mem: u64) -> Choice {
        let (mut tables, mut slack) = (0u64, 0u64);
        for (keys, expires) in self.dbs.values() {
            let (t, s) = keyspace_tables(profile, *keys, *expires);
            tables += t;
            slack += s;
        }
        let fixed = (tables + BASELINE) as f64;
        Evidence {
            used_mem,
            predicted_q8: self.q8 + fixed,
            predicted_q16: self.q16 + fixed,
            rehash_slack: slack as f64,
            sampling_sd: self.var_q8.max(self.var_q16).sqrt(),
        }
        .decide()
    }
}

/// The choice made without evidence (a flag, another target than the
/// writer, no `used-mem`), or the `used-mem` the evidence is compared to.
fn without_evidence(
    aux: &BTreeMap<String, String>,
    profile: &Profile,
    writer: &Profile,
    flag: Option<u64>,
) -> Result<Choice, u64> {
    if let Some(q) = flag {
        return Ok(Choice::flag(q));
    }
    let line = |p: &Profile| (p.family, p.version.major, p.version.minor);
    if line(profile) != line(writer) {
        return Ok(Choice::unclear(format!(
            "used-mem describes the writer ({}), not the target",
            writer.name()
        )));
    }
    match rdblens_summary::aux_used_mem(aux) {
        Some(used_mem) => Err(used_mem),
        None => Ok(Choice::unclear("the dump records no used-mem")),
    }
}

/// The build [`choose`] picked.
pub(crate) struct Chosen {
    pub choice: Choice,
    /// When the first part of the file settled it ([`crate::early`]): the
    /// `used-mem` the main walk confirms it against, with the evidence of
    /// the whole file.
    pub to_confirm: Option<u64>,
    /// Big values the settling pass decoded, for the walk that confirms.
    pub known: Known,
}

/// Big values the settling pass of `keys` decoded, by record offset: the
/// walk that confirms the build takes the same keys into its evidence and
/// would decode them again, for both builds, before writing their records.
/// On the collection-heavy benchmark dump the pass settles three quarters
/// of the way in, having decoded every giant hash, set and list on the way.
pub(crate) struct Known {
    /// By record offset: the value, and its record's length.
    values: HashMap<u64, (KnownValue, u64)>,
    /// Kept from this record size up (no value is kept past every size).
    from: u64,
}

/// One value's estimates under both builds and what its decoding measured.
#[derive(Clone)]
pub(crate) struct KnownValue {
    pub q8: Estimate,
    pub q16: Estimate,
    pub measure: Measure,
}

/// Values kept at most (456 bytes each: 7.5 MiB at most).
const KNOWN_MAX: usize = 16_384;

impl Default for Known {
    /// Nothing kept, nothing to keep.
    fn default() -> Self {
        Known::from_size(u64::MAX)
    }
}

impl Known {
    /// Empty, keeping the values of records of `from` bytes or more.
    pub(crate) fn from_size(from: u64) -> Self {
        Known {
            values: HashMap::new(),
            from,
        }
    }

    /// Keeps what `entry`'s decoding gave, up to [`KNOWN_MAX`] values, if
    /// its record is big enough to keep (small ones would fill the map
    /// before the giant values further on).
    pub(crate) fn keep(&mut self, entry: &Entry<'_>, value: KnownValue) {
        if entry.record_len >= self.from && self.values.len() < KNOWN_MAX {
            self.values.insert(entry.offset, (value, entry.record_len));
        }
    }

    /// Values kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// Offsets of the records whose values are kept.
    #[cfg(test)]
    pub(crate) fn offsets(&self) -> impl Iterator<Item = u64> + '_ {
        self.values.keys().copied()
    }

    /// What the settling pass found for `entry`, if it kept it.
    pub fn get(&self, entry: &Entry<'_>) -> Option<&KnownValue> {
        if entry.record_len < self.from || self.values.is_empty() {
            return None;
        }
        self.values.get(&entry.offset).map(|(value, _)| value)
    }

    /// The length of each record whose value is kept, by offset: a walk
    /// again need not walk those values to find where they end.
    pub(crate) fn record_lens(&self) -> crate::walker::KnownLens {
        self.values.iter().map(|(at, (_, len))| (*at, *len)).collect()
    }
}

/// Picks the quantum for `profile` (the file's writer, or the `--target`)
/// with a pass of its own. With `early`, the pass stops as soon as the
/// batches walked settle the build (see [`crate::early`]).
#[allow(clippy::too_many_arguments)] // the pass's context, passed once
pub(crate) fn choose(
    rdb: &Rdb<'_>,
    aux: &BTreeMap<String, String>,
    profile: &Profile,
    writer: &Profile,
    opts: &Options,
    pool: &rayon::ThreadPool,
    releaser: Option<&Releaser<'_>>,
    early: bool,
) -> Chosen {
    match without_evidence(aux, profile, writer, opts.quantum) {
        Ok(choice) => Chosen {
            choice,
            to_confirm: None,
            known: Known::default(),
        },
        Err(used_mem) => {
            let sampler = Sampler::for_file(rdb.data().len(), opts.sample_evidence_from);
            let len = rdb.data().len() as u64;
            let early = early.then(|| match opts.settle_evidence_after {
                Some((batches, q)) => EarlyEvidence::forced(used_mem, profile, len, batches, q),
                None => EarlyEvidence::new(used_mem, profile, len),
            });
            let known_from = opts.known_values_from;
            match evidence(rdb, profile, sampler, pool, releaser, early, known_from) {
                Evidenced::Whole(sums) => Chosen {
                    choice: sums.decide(profile, used_mem),
                    to_confirm: None,
                    known: Known::default(),
                },
                Evidenced::Settled(choice, known) => Chosen {
                    choice,
                    to_confirm: Some(used_mem),
                    known,
                },
            }
        }
    }
}

/// The evidence summed in the main pass: the build it starts from, and
/// what the sums are compared to at the end.
pub(crate) struct Deferred {
    /// Values decoded before the walk.
    pub known: Known,
    pub used_mem: u64,
    /// The quantum the pass starts from: `keys`' settled build, or 8 for
    /// the report (which folds no batch before the evidence leans clearly).
    pub guess: u64,
    pub sampler: Sampler,
    /// Profiles for quantum 8 and 16.
    pub q8: Profile,
    pub q16: Profile,
}

/// [`Deferred`] evidence when the choice needs it and the dump is big
/// enough for a second pass to cost (a small one gets [`choose`]).
pub(crate) fn defer(
    rdb: &Rdb<'_>,
    aux: &BTreeMap<String, String>,
    profile: &Profile,
    writer: &Profile,
    flag: Option<u64>,
    sample_from: usize,
) -> Result<Deferred, Option<Choice>> {
    let used_mem = match without_evidence(aux, profile, writer, flag) {
        Ok(choice) => return Err(Some(choice)),
        Err(used_mem) => used_mem,
    };
    if rdb.data().len() < sample_from {
        return Err(None);
    }
    // No guess to start with: the main pass defers its batches until the
    // evidence leans clearly (`crate::mainpass`). Estimating the first
    // 16,384 keys for a guess was 25-50 ms before the first batch.
    Ok(confirm(rdb, profile, used_mem, 8, sample_from))
}

/// [`Deferred`] evidence for a stream of [`Options::sample_evidence_from`]
/// bytes or more (a shorter one is analysed as a file is): keys sampled
/// as on a file that size, summed in the one pass (`crate::streaming`);
/// or the choice made without evidence.
pub(crate) fn defer_streamed(
    aux: &BTreeMap<String, String>,
    profile: &Profile,
    writer: &Profile,
    flag: Option<u64>,
) -> Result<Deferred, Choice> {
    let used_mem = match without_evidence(aux, profile, writer, flag) {
        Ok(choice) => return Err(choice),
        Err(used_mem) => used_mem,
    };
    let (q8, q16) = profiles(profile);
    Ok(Deferred {
        known: Known::default(),
        used_mem,
        guess: 8,
        sampler: Sampler {
            every_key: false,
            sample_bytes: SAMPLE_BYTES,
        },
        q8,
        q16,
    })
}

/// [`Deferred`] evidence to confirm a build settled from part of the file
/// (`guess`), summed over the same sample as the separate pass.
pub(crate) fn confirm(
    rdb: &Rdb<'_>,
    profile: &Profile,
    used_mem: u64,
    guess: u64,
    sample_from: usize,
) -> Deferred {
    let (q8, q16) = profiles(profile);
    Deferred {
        known: Known::default(),
        used_mem,
        guess,
        sampler: Sampler::for_file(rdb.data().len(), sample_from),
        q8,
        q16,
    }
}

/// [`confirm`] for the build `chosen` settled, taking the values it decoded.
pub(crate) fn confirm_settled(
    rdb: &Rdb<'_>,
    profile: &Profile,
    chosen: Chosen,
    used_mem: u64,
    sample_from: usize,
) -> Deferred {
    let guess = chosen.choice.quantum;
    Deferred {
        known: chosen.known,
        ..confirm(rdb, profile, used_mem, guess, sample_from)
    }
}

fn profiles(profile: &Profile) -> (Profile, Profile) {
    let mut q8 = profile.clone();
    q8.quantum = 8;
    let mut q16 = profile.clone();
    q16.quantum = 16;
    (q8, q16)
}

/// What the separate pass found.
enum Evidenced {
    /// The sums over the whole file.
    Whole(Sums),
    /// The build the first part of the file settled on, and the big
    /// values decoded on the way.
    Settled(Choice, Known),
}

fn evidence(
    rdb: &Rdb<'_>,
    profile: &Profile,
    sampler: Sampler,
    pool: &rayon::ThreadPool,
    releaser: Option<&Releaser<'_>>,
    early: Option<EarlyEvidence>,
    known_from: u64,
) -> Evidenced {
    let (q8, q16) = profiles(profile);
    let (e8, e16) = (Estimator::new(&q8), Estimator::new(&q16));
    // Kept only where a walk confirms what this pass settles.
    let keep_from = if early.is_some() { known_from } else { u64::MAX };
    // What settles early is summed over a denser sample; the whole-file
    // sums over the evidence's own.
    let dense = early.is_some().then(|| sampler.settling());
    let dense_until = (rdb.data().len() as f64 * SETTLING_DENSE_SHARE) as u64;
    let known = Mutex::new(Known::from_size(keep_from));
    let early = early.map(Mutex::new);
    let settled: OnceLock<Choice> = OnceLock::new();

    // Numbered batches of entries; damage ends the walk (the main pass
    // reports it), and so does a settled build.
    let mut records = rdb.records();
    let mut seq = 0u64;
    let settled_ref = &settled;
    let batches = std::iter::from_fn(move || {
        if settled_ref.get().is_some() {
            return None;
        }
        let mut batch: Vec<Entry<'_>> = Vec::with_capacity(BATCH);
        for record in records.by_ref() {
            match record {
                Ok(Record::Entry(e)) => batch.push(e),
                Ok(Record::Eof(_)) | Err(_) => break,
                Ok(_) => continue,
            }
            if batch.len() == BATCH {
                break;
            }
        }
        seq += 1;
        (!batch.is_empty()).then_some((seq - 1, batch))
    });
    let sums = pool.install(|| {
        batches
            .par_bridge()
            .map(|(seq, batch)| {
                let mut scratch = Scratch::new();
                let mut key_buf = Vec::new();
                let mut sums = Sums::default();
                let mut settling = Sums::default();
                let dense = dense.filter(|_| batch.first().is_some_and(|e| e.offset < dense_until));
                for entry in &batch {
                    sums.count(entry);
                    let Ok(key) = entry.key.bytes_in(&mut key_buf, entry.offset) else {
                        continue;
                    };
                    let u = draw(entry, key);
                    let taken = sampler.takes_drawn(entry, u);
                    let Some(p_settling) = dense.map_or(taken, |d| d.takes_drawn(entry, u)) else {
                        continue;
                    };
                    let mut add = |q8: &Estimate, q16: &Estimate| {
                        settling.add(p_settling, q8, q16);
                        if let Some(p) = taken {
                            sums.add(p, q8, q16);
                        }
                    };
                    if taken.is_some() && entry.record_len >= keep_from {
                        let mut measure = Measure::for_entry(entry);
                        if let Ok((q8, q16)) = e8.estimate_pair_with(&e16, entry, &mut scratch, &mut measure)
                        {
                            add(&q8, &q16);
                            if let Ok(mut k) = known.lock() {
                                k.keep(entry, KnownValue { q8, q16, measure });
                            }
                        }
                    } else if let Ok((a, b)) = e8.estimate_pair(&e16, entry, &mut scratch) {
                        add(&a, &b);
                    }
                }
                // Read for good: give the pages back, as the main pass
                // does, so a dump larger than RAM stays out of the
                // resident set (whole pages inside the batch only).
                if let (Some(r), Some(first), Some(last)) = (releaser, batch.first(), batch.last()) {
                    r.release_unread(first.offset, last.offset + last.record_len);
                }
                if let (Some(early), Some(first), Some(last)) = (&early, batch.first(), batch.last()) {
                    let span = last.offset + last.record_len - first.offset;
                    settling.dbs = sums.dbs.clone();
                    // A poisoned lock: another worker panicked, which ends the pass.
                    if let Some(choice) = early
                        .lock()
                        .ok()
                        .and_then(|mut e| e.add(seq, span, settling.batch_evidence()))
                    {
                        let _ = settled.set(choice);
                    }
                }
                sums
            })
            .reduce(Sums::default, Sums::merge)
    });
    match settled.into_inner() {
        Some(choice) => Evidenced::Settled(choice, known.into_inner().unwrap_or_default()),
        None => Evidenced::Whole(sums),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{prepare, AllocatorPass};
    use rdblens_summary::Options;

    fn fixture() -> Vec<u8> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/rdb/redis-7.4.5/all-types.rdb"
        );
        std::fs::read(path).expect("fixture") // ok: unit test
    }

    /// The offsets of the keys `sampler` takes, with their odds.
    fn taken(data: &[u8], sampler: Sampler) -> BTreeMap<u64, f64> {
        let rdb = Rdb::new(data).expect("rdb"); // ok: unit test
        let mut buf = Vec::new();
        rdb.entries()
            .map(|e| e.expect("entry")) // ok: unit test
            .filter_map(|e| {
                let key = e.key.bytes_in(&mut buf, e.offset).expect("key"); // ok: unit test
                sampler.takes(&e, key).map(|p| (e.offset, p))
            })
            .collect()
    }

    /// The settling pass's denser sample holds every key of the evidence's
    /// sample, at higher odds, and more keys besides.
    #[test]
    fn the_settling_sample_holds_the_evidence_sample() {
        let data = fixture();
        let sampler = Sampler::for_file(data.len(), 0);
        let (standard, dense) = (taken(&data, sampler), taken(&data, sampler.settling()));
        for (offset, p) in &standard {
            let dense_p = dense.get(offset).expect("taken by the denser sample too"); // ok: unit test
            assert!(dense_p >= p, "key at {offset}: {dense_p} < {p}");
        }
        assert_eq!((standard.len(), dense.len()), (4, 15));
    }

    /// A settling pass that never settles answers with the evidence's own
    /// sample: the sums the report's main pass sums, not the denser ones.
    #[test]
    fn a_pass_that_never_settles_sums_the_evidence_sample() {
        let data = fixture();
        let rdb = Rdb::new(&data).expect("rdb"); // ok: unit test
        let profile = Profile::from_aux(Some("7.4.5"), None, 12, rdblens_parser::Dialect::Redis);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool"); // ok: unit test
        let sampler = Sampler::for_file(data.len(), 0);
        let sums = |early: Option<EarlyEvidence>| match evidence(
            &rdb,
            &profile,
            sampler,
            &pool,
            None,
            early,
            u64::MAX,
        ) {
            Evidenced::Whole(s) => (s.q8, s.q16, s.var_q8, s.var_q16, s.dbs),
            Evidenced::Settled(..) => panic!("one batch cannot settle"), // ok: unit test
        };
        // One batch: far fewer than an answer needs.
        let never = EarlyEvidence::new(1 << 30, &profile, data.len() as u64);
        let whole = sums(None);
        assert!(whole.0 > 0.0 && whole.1 > whole.0, "{whole:?}");
        assert_eq!(sums(Some(never)), whole);
    }

    /// The settling pass keeps the values from the size asked (every one
    /// it sampled from 0 bytes, none past every record's size), and only
    /// when a walk confirms what it settled.
    #[test]
    fn the_settling_pass_keeps_the_big_values_it_decoded() {
        let data = fixture();

        // Every key sampled (a small dump), or some (a big one).
        let kept = |known_values_from: u64, sample_evidence_from: usize, pass: AllocatorPass| {
            let opts = Options {
                threads: 1,
                sample_evidence_from,
                settle_evidence_after: Some((1, 16)),
                known_values_from,
                ..Options::default()
            };
            let p = prepare(&data, &opts, None, pass).expect("prepared"); // ok: unit test
            p.deferred.map(|d| (d.known.values.len(), d.known.from))
        };
        let keys = rdblens_parser::Rdb::new(&data).expect("rdb").entries().count(); // ok: unit test
        let big = rdblens_parser::Rdb::new(&data)
            .expect("rdb") // ok: unit test
            .entries()
            .filter(|e| e.as_ref().is_ok_and(|e| e.record_len >= 200))
            .count();
        assert!(0 < big && big < keys, "{big} of {keys}");
        let until_settled = || AllocatorPass::SeparateUntilSettled;
        let every_key = usize::MAX;
        assert_eq!(kept(0, every_key, until_settled()), Some((keys, 0)));
        assert_eq!(kept(200, every_key, until_settled()), Some((big, 200)));
        assert_eq!(kept(u64::MAX, every_key, until_settled()), Some((0, u64::MAX)));
        // A sample: the keys the evidence's sample takes, and only those
        // (the settling pass sums a denser one, whose values the confirming
        // walk would never look up).
        let sampled = kept(0, 0, until_settled()).expect("confirmed").0; // ok: unit test
        assert!(0 < sampled && sampled < big, "{sampled}");
        assert_eq!(sampled, taken(&data, Sampler::for_file(data.len(), 0)).len());
        // The report's main pass sums its own evidence: nothing decoded before it.
        assert_eq!(kept(0, 0, AllocatorPass::InMainPass), Some((0, u64::MAX)));
    }
}
