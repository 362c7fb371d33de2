//! The main pass of the report: rayon workers take turns at the
//! [`Walker`], each decodes the batch it walked, estimates memory and
//! folds the facts into its own [`KeyStats`]; those merge into one.
//!
//! When the pass sums the allocator evidence it keeps both builds' stats
//! until the evidence settles which one the file shows ([`Early`]).

use std::sync::{Mutex, OnceLock};

use rayon::iter::{IntoParallelIterator, ParallelIterator};
use rdblens_memory::allocator::Choice;
use rdblens_memory::Profile;
use rdblens_parser::{Record, Scratch};

use crate::allocator::Sums;
use crate::early::EarlyEvidence;
use crate::filter::KeyFilter;
use crate::options::Options;
use crate::pipeline::{batch_facts, batch_span, batch_start, Prepared};
use crate::release::{BatchDone, Releaser};
use crate::summary::KeyStats;
use crate::walker::{WalkOutcome, Walker};

/// One worker's accumulators and reusable buffers.
struct Worker {
    /// The keys folded so far, estimated for the pass's build.
    stats: KeyStats,
    /// The same keys estimated for the other build, while the pass keeps
    /// both (see [`Early`]).
    other: Option<KeyStats>,
    /// The allocator evidence, when the main pass sums it.
    evidence: Sums,
    scratch: Scratch,
    key_buf: Vec<u8>,
}

impl Worker {
    fn new(p: &Prepared<'_>) -> Self {
        Worker {
            stats: KeyStats::new(&p.settings),
            other: p.deferred.as_ref().map(|_| KeyStats::new(&p.settings)),
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

    /// Once the build is settled, keeps the stats made for it only.
    fn settle(&mut self, early: &Early, guess: u64) {
        if let Some(q) = early.settled() {
            if let Some(other) = self.other.take() {
                if q != guess {
                    self.stats = other;
                }
            }
        }
    }

    /// Decodes and folds batch number `seq`, then signs it off for page
    /// release; its allocator evidence goes to `early` too.
    fn fold(
        &mut self,
        p: &Prepared<'_>,
        filter: &KeyFilter,
        releaser: Option<&Releaser<'_>>,
        early: &Early,
        (seq, batch): (u64, &[Record<'_>]),
    ) {
        let _done = BatchDone(releaser, batch_start(batch));
        self.settle(early, p.profile.quantum);
        // While this worker keeps both builds, `stats` is the guess's
        // (whatever another worker settled since); once it keeps one, that
        // is the settled build's.
        let profile = match self.other {
            Some(_) => &p.profile,
            None => early.profile(p),
        };
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

/// When the main pass sums the allocator evidence, it estimates every key
/// for both builds and folds each into its own stats, so that whichever
/// build the whole file shows, its analysis is there at the end (a guess
/// from the first keys, wrong on a collection-heavy dump, used to cost a
/// whole second pass). The evidence is also folded batch by batch
/// ([`crate::early`]): once it settles the build, the workers keep the
/// stats for that build alone and estimate for it only.
struct Early {
    evidence: Option<Mutex<EarlyEvidence>>,
    settled: OnceLock<Choice>,
    /// Tests: settle on this build once this batch is folded, whatever
    /// the evidence says.
    settle_after: Option<(u64, Choice)>,
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
            settled: OnceLock::new(),
            settle_after: None,
        }
    }

    fn add(&self, seq: u64, span: u64, sums: &Sums) {
        if let Some((at, choice)) = &self.settle_after {
            if seq >= *at {
                let _ = self.settled.set(choice.clone());
            }
            return;
        }
        let Some(evidence) = &self.evidence else { return };
        // A poisoned lock means another worker panicked: that ends the pass.
        let Ok(mut evidence) = evidence.lock() else { return };
        if let Some(choice) = evidence.add(seq, span, sums.clone()) {
            let _ = self.settled.set(choice);
        }
    }

    /// The quantum the batches folded so far settled on.
    fn settled(&self) -> Option<u64> {
        self.settled.get().map(|c| c.quantum)
    }

    /// The profile keys are estimated for: the pass's, or the settled build's.
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
    /// Every key, estimated for the pass's build or the one it settled on.
    pub stats: KeyStats,
    /// Every key estimated for the other build, when the pass never
    /// settled which build the file shows.
    pub other: Option<KeyStats>,
    pub outcome: WalkOutcome,
    /// The allocator evidence (empty unless `p.deferred`).
    pub evidence: Sums,
    /// The build part of the file settled on, if it did.
    pub settled: Option<Choice>,
}

/// Walks and folds every key.
pub(crate) fn main_pass(p: &Prepared<'_>, opts: &Options, releaser: Option<&Releaser<'_>>) -> MainPass {
    run(p, opts, releaser, Early::for_pass(p))
}

fn run(p: &Prepared<'_>, opts: &Options, releaser: Option<&Releaser<'_>>, early: Early) -> MainPass {
    let mut walker = Walker::new(
        &p.rdb,
        opts.batch_entries,
        &opts.filter,
        opts.progress.as_ref(),
        releaser,
    );
    let mut workers = if p.threads == 1 {
        // One thread does it all: a second one would only add hand-offs
        // (and a second busy core to `--threads 1`).
        let mut worker = Worker::new(p);
        let mut seq = 0;
        while let Some(batch) = walker.next_batch() {
            worker.fold(p, &opts.filter, releaser, &early, (seq, &batch));
            seq += 1;
        }
        worker.finish();
        vec![worker]
    } else {
        parallel(p, opts, releaser, &mut walker, &early)
    };
    for w in &mut workers {
        // A worker that finished before the build was settled.
        w.settle(&early, p.profile.quantum);
    }
    let mut workers = workers.into_iter();
    let mut pass = MainPass {
        stats: KeyStats::new(&p.settings),
        other: None,
        outcome: walker.finish(),
        evidence: Sums::default(),
        settled: early.settled.into_inner(),
    };
    if let Some(first) = workers.next() {
        (pass.stats, pass.other, pass.evidence) = (first.stats, first.other, first.evidence);
    }
    for w in workers {
        pass.stats.merge(w.stats);
        if let (Some(mine), Some(theirs)) = (pass.other.as_mut(), w.other) {
            mine.merge(theirs);
        }
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
                    worker.fold(p, &opts.filter, releaser, early, (seq, &batch));
                }
                worker.finish();
                worker
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{prepare, AllocatorPass};
    use rdblens_memory::allocator::Basis;

    fn fixture() -> Vec<u8> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/rdb/valkey-7.2.7/all-types.rdb"
        );
        std::fs::read(path).expect("fixture") // ok: unit test
    }

    fn opts(threads: usize) -> Options {
        Options {
            threads,
            now_ms: Some(1_700_000_000_000),
            // The evidence summed in the main pass, as on a big dump, in
            // batches of one key: 222 batches to settle between.
            sample_evidence_from: 0,
            batch_entries: 1,
            ..Options::default()
        }
    }

    fn choice(quantum: u64) -> Choice {
        Choice {
            quantum,
            basis: Basis::UsedMem,
            reason: "test".into(),
        }
    }

    /// A pass that settles on a build part-way, at any batch and thread
    /// count, holds exactly the stats of a pass estimated for that build
    /// from the first key; one that never settles holds both.
    #[test]
    fn settling_part_way_keeps_the_stats_of_the_settled_build() {
        let data = fixture();
        for quantum in [8, 16] {
            let decided = {
                let p = prepare(&data, &opts(1), None, AllocatorPass::Decided(choice(quantum)))
                    .expect("prepared"); // ok: unit test
                let mut pass = main_pass(&p, &opts(1), None);
                assert!(p.deferred.is_none() && pass.other.is_none());
                pass.stats.finish();
                pass.stats
            };
            for threads in [1, 2] {
                let o = opts(threads);
                for at in [0, 1, 50, 221, 10_000] {
                    let p = prepare(&data, &o, None, AllocatorPass::InMainPass).expect("prepared"); // ok: unit test
                    assert!(p.deferred.is_some());
                    let early = Early {
                        settle_after: Some((at, choice(quantum))),
                        ..Early::for_pass(&p)
                    };
                    let mut pass = run(&p, &o, None, early);
                    let stats = match pass.settled.as_ref().map(|c| c.quantum) {
                        Some(q) => {
                            assert!(at < 222, "settled at {at}");
                            assert_eq!(q, quantum);
                            assert!(pass.other.is_none());
                            &mut pass.stats
                        }
                        None => {
                            // Never settled: the guess's stats and the other build's.
                            assert!(at >= 222);
                            match (p.profile.quantum == quantum, pass.other.as_mut()) {
                                (true, _) => &mut pass.stats,
                                (false, Some(other)) => other,
                                (false, None) => panic!("the other build's stats are missing"), // ok: unit test
                            }
                        }
                    };
                    stats.finish();
                    assert!(
                        *stats == decided,
                        "quantum {quantum}, {threads} threads, settled after {at}"
                    );
                }
            }
        }
    }
}
