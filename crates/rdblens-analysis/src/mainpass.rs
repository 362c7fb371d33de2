//! The report's analysis of one file: rayon workers take turns at the
//! [`Walker`], each decodes the batch it walked, estimates memory and folds
//! the facts into its own [`KeyStats`]; those merge into one.
//!
//! On a big dump the allocator build the estimates assume is decided by
//! evidence summed in this same pass (`crate::allocator`), so the pass runs
//! with a guess from the first keys and must end with the statistics of the
//! build the whole file shows, without a second pass where it can:
//!
//! - the evidence is folded batch by batch ([`crate::early`]); once it
//!   settles the build, the workers estimate for that build alone;
//! - while it leans away from the guess, every key is estimated for both
//!   builds and folded into two sets of statistics;
//! - batches folded for the guess alone that turn out to need the other
//!   build are estimated again at the end ([`catch_up`]): that costs what
//!   the guess cost, not a whole pass.
//!
//! A guess the evidence never leans away from costs nothing; one it
//! overturns costs the part read before it leaned away. Only a build
//! settled from part of the file and overturned by the whole (beyond three
//! standard errors) means a second pass.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use rayon::iter::{IntoParallelIterator, ParallelIterator};
use rdblens_memory::allocator::Choice;
use rdblens_memory::Profile;
use rdblens_parser::{RdbFile, Record, Scratch};

use crate::allocator::Sums;
use crate::early::EarlyEvidence;
use crate::error::{guarded, AnalysisError};
use crate::options::Options;
use crate::pipeline::{batch_facts, batch_span, batch_start, file_info, prepare, AllocatorPass, Prepared};
use crate::release::{BatchDone, Releaser};
use crate::summary::{KeyStats, Summary, SUMMARY_VERSION};
use crate::walker::{WalkOutcome, Walker};

/// Analyses one file held in `data` (usually a memory map).
pub fn analyze_bytes(data: &[u8], path: &str, opts: &Options) -> Result<Summary, AnalysisError> {
    guarded(|| analyze(data, path, opts, None))
}

/// Analyses a mapped file, giving its pages back to the system as soon as
/// every worker is past them, so the resident set stays small on dumps
/// larger than RAM.
pub fn analyze_file(file: &RdbFile, path: &str, opts: &Options) -> Result<Summary, AnalysisError> {
    let release = |start: usize, end: usize| file.release(start, end);
    let releaser = Releaser::new(&release);
    guarded(|| analyze(file.bytes(), path, opts, Some(&releaser)))
}

fn analyze(
    data: &[u8],
    path: &str,
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
) -> Result<Summary, AnalysisError> {
    let mut p = prepare(data, opts, releaser, AllocatorPass::InMainPass)?;
    let pass = main_pass(&p, opts, releaser);
    let (mut stats, outcome) = match p.deferred.take() {
        None => (pass.stats, pass.outcome),
        Some(d) => {
            let choice = pass.evidence.decide(&p.profile, d.used_mem);
            let guess = p.profile.quantum;
            let decided = || prepare(data, opts, releaser, AllocatorPass::Decided(choice.clone()));
            let outcome = match resolve(pass, guess, choice.quantum) {
                Resolved::Stats(done) => *done,
                Resolved::Lacking(part, lacking) => {
                    let (mut stats, outcome) = *part;
                    stats.merge(catch_up(&decided()?, opts, releaser, &lacking));
                    (stats, outcome)
                }
                Resolved::Again => {
                    // Settled from part of the file, overturned by the whole.
                    let again = main_pass(&decided()?, opts, releaser);
                    (again.stats, again.outcome)
                }
            };
            p.profile.quantum = choice.quantum;
            p.allocator = choice;
            outcome
        }
    };
    stats.finish();
    let settings = p.settings.clone();
    Ok(Summary {
        summary_version: SUMMARY_VERSION,
        settings,
        files: vec![file_info(path, p, outcome).with_shard(&stats)],
        keys: stats,
    })
}

/// One worker's accumulators and reusable buffers.
struct Worker {
    /// The keys folded so far: for the guess, or, once the build is
    /// settled, for that build.
    stats: KeyStats,
    /// The keys folded while both builds are kept, for the other build.
    other: Option<KeyStats>,
    /// Batches folded for the guess alone, before both builds were kept:
    /// estimated again if the other build wins.
    guess_only: Vec<u64>,
    /// The settled build has been taken into account.
    settled: bool,
    /// The allocator evidence, when the main pass sums it.
    evidence: Sums,
    scratch: Scratch,
    key_buf: Vec<u8>,
}

impl Worker {
    fn new(p: &Prepared<'_>) -> Self {
        Worker {
            stats: KeyStats::new(&p.settings),
            other: None,
            guess_only: Vec::new(),
            settled: false,
            evidence: Sums::default(),
            scratch: Scratch::new(),
            key_buf: Vec::new(),
        }
    }

    /// Buffered keys (expiry cells, slots, top lists) go in here, on every
    /// core at once, not in the serial merge.
    fn finish(&mut self) {
        self.stats.finish();
        if let Some(other) = &mut self.other {
            other.finish();
        }
    }

    /// Catches up with the pass (before each batch, and once at the end):
    /// a settled build keeps its stats alone (what was folded for the
    /// guess alone stays listed, to be estimated again); a pass that keeps
    /// both builds gets the other's stats started.
    fn follow(&mut self, early: &Early, p: &Prepared<'_>) {
        if self.settled || p.deferred.is_none() {
            return;
        }
        match early.settled() {
            Some(q) => {
                self.settled = true;
                let other = self.other.take();
                if q == p.profile.quantum {
                    self.guess_only.clear();
                } else {
                    self.stats = other.unwrap_or_else(|| KeyStats::new(&p.settings));
                }
            }
            None if early.keeps_both() && self.other.is_none() => {
                self.other = Some(KeyStats::new(&p.settings));
            }
            None => {}
        }
    }

    /// Decodes and folds batch number `seq`, then signs it off for page
    /// release; its allocator evidence goes to `early` too.
    fn fold(
        &mut self,
        p: &Prepared<'_>,
        filter: &crate::filter::KeyFilter,
        releaser: Option<&Releaser<'_>>,
        early: &Early,
        (seq, batch): (u64, &[Record<'_>]),
    ) {
        let _done = BatchDone(releaser, batch_start(batch));
        self.follow(early, p);
        // This worker's own state says which build `stats` is for, whatever
        // another worker settled since.
        let profile = match self.settled {
            true => early.profile(p),
            false => &p.profile,
        };
        if p.deferred.is_some() && !self.settled && self.other.is_none() {
            self.guess_only.push(seq);
        }
        let (stats, other) = (&mut self.stats, &mut self.other);
        let mut sums = Sums::default();
        batch_facts(
            &mut self.scratch,
            &mut self.key_buf,
            profile,
            filter,
            p.settings.now_ms,
            batch,
            p.deferred.as_ref().map(|d| (d, &mut sums)),
            other.is_some(),
            |r| match r {
                Ok((facts, theirs)) => {
                    stats.add(facts);
                    if let (Some(other), Some(theirs)) = (other.as_mut(), theirs) {
                        other.add(theirs);
                    }
                }
                Err(d) => {
                    if let Some(other) = other.as_mut() {
                        other.add_damage(d.clone());
                    }
                    stats.add_damage(d);
                }
            },
        );
        if p.deferred.is_some() {
            early.add(seq, batch_span(batch), &sums);
            self.evidence = std::mem::take(&mut self.evidence).merge(sums);
        }
    }
}

/// What the workers share about the allocator build while the pass runs.
struct Early {
    evidence: Option<Mutex<EarlyEvidence>>,
    guess: u64,
    settled: OnceLock<Choice>,
    /// The evidence has leaned away from the guess: keep both builds.
    both: AtomicBool,
    /// Tests: what happens when, whatever the evidence says.
    forced: Option<Forced>,
}

/// Tests: keep both builds from batch `both` on, and settle on a build
/// after batch `settle.0`.
struct Forced {
    both: Option<u64>,
    settle: Option<(u64, Choice)>,
}

impl Early {
    fn for_pass(p: &Prepared<'_>) -> Early {
        let evidence = p.deferred.as_ref().map(|d| {
            Mutex::new(EarlyEvidence::new(
                d.used_mem,
                &p.profile,
                p.rdb.data().len() as u64,
            ))
        });
        Early {
            evidence,
            guess: p.profile.quantum,
            settled: OnceLock::new(),
            both: AtomicBool::new(false),
            forced: None,
        }
    }

    fn add(&self, seq: u64, span: u64, sums: &Sums) {
        if let Some(forced) = &self.forced {
            if forced.both.is_some_and(|at| seq >= at) {
                self.both.store(true, Ordering::Relaxed);
            }
            if let Some((_, choice)) = forced.settle.as_ref().filter(|(at, _)| seq >= *at) {
                let _ = self.settled.set(choice.clone());
            }
            return;
        }
        let Some(evidence) = &self.evidence else { return };
        // A poisoned lock means another worker panicked: that ends the pass.
        let Ok(mut evidence) = evidence.lock() else { return };
        if let Some(choice) = evidence.add(seq, span, sums.batch_evidence()) {
            let _ = self.settled.set(choice);
        }
        if evidence.closer().is_some_and(|q| q != self.guess) {
            self.both.store(true, Ordering::Relaxed);
        }
    }

    /// The quantum the batches folded so far settled on.
    fn settled(&self) -> Option<u64> {
        self.settled.get().map(|c| c.quantum)
    }

    fn keeps_both(&self) -> bool {
        self.both.load(Ordering::Relaxed)
    }

    /// The settled build's profile (the pass's, before it settles).
    fn profile<'p>(&self, p: &'p Prepared<'_>) -> &'p Profile {
        match (self.settled(), &p.deferred) {
            (Some(16), Some(d)) => &d.q16,
            (Some(_), Some(d)) => &d.q8,
            _ => &p.profile,
        }
    }
}

/// What a main pass found.
pub(crate) struct MainPass {
    /// Every key for the guess; or, once the build is settled, for that
    /// build, but for the batches in `guess_only` when it is not the guess.
    pub stats: KeyStats,
    /// When the pass kept both builds for a while and never settled: the
    /// other build's stats of every batch but those in `guess_only`.
    pub other: Option<KeyStats>,
    /// Batches folded for the guess alone (see `stats` and `other`).
    pub guess_only: BTreeSet<u64>,
    pub outcome: WalkOutcome,
    /// The allocator evidence (empty unless `p.deferred`).
    pub evidence: Sums,
    /// The build part of the file settled on, if it did.
    pub settled: Option<Choice>,
}

/// Walks and folds every key.
pub(crate) fn main_pass(p: &Prepared<'_>, opts: &Options, releaser: Option<&Releaser<'_>>) -> MainPass {
    run(p, opts, releaser, Early::for_pass(p), None)
}

/// What a pass that ran with a guess holds of the build the whole file
/// shows.
enum Resolved {
    /// Its stats for every key.
    Stats(Box<(KeyStats, WalkOutcome)>),
    /// Its stats but for these batches, to estimate again ([`catch_up`]).
    Lacking(Box<(KeyStats, WalkOutcome)>, BTreeSet<u64>),
    /// Not enough: only a second pass can give them.
    Again,
}

/// Takes from `pass`, which ran with `guess`, what it holds for `quantum`.
fn resolve(pass: MainPass, guess: u64, quantum: u64) -> Resolved {
    let done = |stats| Box::new((stats, pass.outcome));
    let (stats, lacking) = match (&pass.settled, pass.other) {
        (None, _) if quantum == guess => return Resolved::Stats(done(pass.stats)),
        (None, Some(other)) => (other, pass.guess_only),
        (None, None) => return Resolved::Again,
        (Some(s), _) if s.quantum != quantum => return Resolved::Again,
        (Some(_), _) if quantum == guess => return Resolved::Stats(done(pass.stats)),
        (Some(_), _) => (pass.stats, pass.guess_only),
    };
    match lacking.is_empty() {
        true => Resolved::Stats(done(stats)),
        false => Resolved::Lacking(done(stats), lacking),
    }
}

/// The stats of batches `only` (by number), walked again for `p`'s build.
fn catch_up(
    p: &Prepared<'_>,
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
    only: &BTreeSet<u64>,
) -> KeyStats {
    let mut pass = run(p, opts, releaser, Early::for_pass(p), Some(only));
    pass.stats.finish();
    pass.stats
}

/// The pass: every batch, or only the numbered ones in `only`.
fn run(
    p: &Prepared<'_>,
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
    early: Early,
    only: Option<&BTreeSet<u64>>,
) -> MainPass {
    let mut walker = Walker::new(
        &p.rdb,
        opts.batch_entries,
        &opts.filter,
        opts.progress.as_ref(),
        releaser,
    );
    let last = only.map(|o| o.last().copied().unwrap_or(0));
    // Whether batch `seq` is folded; `None`: past the last one wanted.
    let wanted = |seq: u64| match (only, last) {
        (Some(_), Some(last)) if seq > last => None,
        (Some(o), _) => Some(o.contains(&seq)),
        (None, _) => Some(true),
    };
    let mut workers = if p.threads == 1 {
        // One thread does it all: a second one would only add hand-offs
        // (and a second busy core to `--threads 1`).
        let mut worker = Worker::new(p);
        let mut seq = 0;
        while let Some(batch) = walker.next_batch() {
            match wanted(seq) {
                None => {
                    drop(BatchDone(releaser, batch_start(&batch)));
                    break;
                }
                Some(true) => worker.fold(p, &opts.filter, releaser, &early, (seq, &batch)),
                Some(false) => drop(BatchDone(releaser, batch_start(&batch))),
            }
            seq += 1;
        }
        worker.finish();
        vec![worker]
    } else {
        parallel(p, opts, releaser, &mut walker, &early, &wanted)
    };
    for w in &mut workers {
        // A worker that finished before the build was settled.
        w.follow(&early, p);
    }
    let settled = early.settled.into_inner();
    // The first worker's stats are the base the others merge into: a
    // fresh set would be one more of them in memory (13 MiB on prod-1g).
    let keeps_both = early.both.into_inner() && settled.is_none();
    let mut workers = workers.into_iter();
    let mut pass = match workers.next() {
        Some(w) => MainPass {
            stats: w.stats,
            other: keeps_both.then(|| w.other.unwrap_or_else(|| KeyStats::new(&p.settings))),
            guess_only: w.guess_only.into_iter().collect(),
            outcome: walker.finish(),
            evidence: w.evidence,
            settled,
        },
        None => MainPass {
            stats: KeyStats::new(&p.settings),
            other: None,
            guess_only: BTreeSet::new(),
            outcome: walker.finish(),
            evidence: Sums::default(),
            settled,
        },
    };
    for w in workers {
        pass.stats.merge(w.stats);
        // A worker that never kept both has its batches all listed.
        if let (Some(mine), Some(theirs)) = (pass.other.as_mut(), w.other) {
            mine.merge(theirs);
        }
        pass.guess_only.extend(w.guess_only);
        pass.evidence = std::mem::take(&mut pass.evidence).merge(w.evidence);
    }
    pass
}

/// `p.threads` workers taking turns at the walker: each decodes the batch
/// it has just walked, while it is in its core's cache.
fn parallel(
    p: &Prepared<'_>,
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
    walker: &mut Walker<'_, '_>,
    early: &Early,
    wanted: &(dyn Fn(u64) -> Option<bool> + Sync),
) -> Vec<Worker> {
    // The walker and the number of the next batch it gives.
    let walker = Mutex::new((walker, 0u64));
    // One accumulator per worker, merged once at the end: far fewer
    // merges (and 16384-slot tables) than a fold per stolen job.
    p.pool.install(|| {
        (0..p.threads)
            .into_par_iter()
            .map(|_| {
                let mut worker = Worker::new(p);
                loop {
                    // A poisoned lock means another worker panicked: stop.
                    let next = match walker.lock() {
                        Ok(mut w) => w.0.next_batch().map(|b| {
                            w.1 += 1;
                            (w.1 - 1, b)
                        }),
                        Err(_) => None,
                    };
                    let Some((seq, batch)) = next else { break };
                    match wanted(seq) {
                        None => {
                            drop(BatchDone(releaser, batch_start(&batch)));
                            break;
                        }
                        Some(true) => worker.fold(p, &opts.filter, releaser, early, (seq, &batch)),
                        Some(false) => drop(BatchDone(releaser, batch_start(&batch))),
                    }
                }
                worker.finish();
                worker
            })
            .collect()
    })
}

#[cfg(test)]
mod tests;
