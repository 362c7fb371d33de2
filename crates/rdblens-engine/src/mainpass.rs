//! The report's analysis of one file: rayon workers take turns at the
//! [`Walker`](crate::walker::Walker), each decodes the batch it walked, estimates memory and folds
//! the facts into its own [`KeyStats`]; those merge into one.
//!
//! On a big dump the allocator build the estimates assume is decided by
//! evidence summed in this same pass (`crate::allocator`), and the pass
//! must end with the statistics of the build the whole file shows, without
//! a second pass where it can. The evidence is folded batch by batch
//! ([`crate::early`]). While the lean is unclear (before enough batches to
//! tell, or while neither build's prediction is closer by two standard
//! errors) a batch only adds its evidence, and the values it decodes for
//! that (the sampled keys: every giant one) are kept; once the lean is
//! clear, each batch is estimated for the build it leans to (the settled
//! build once it is settled) and folded into that build's statistics. At
//! the end the deferred batches and those folded for the build that lost
//! are estimated for the winner ([`catch_up`], taking the kept values as
//! decoded), and only those, each parsed again where the main pass found
//! it ([`crate::spans`]; the kept values' lengths taken, not walked). A
//! deferred batch costs a second parse of its records; one folded for the
//! loser costs a second decoding (on the collection-heavy benchmark dump
//! the lean wandered for a quarter of the file, and folding each batch for
//! the closer build meant decoding 223 of its 1,495 batches twice).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use rayon::iter::{IntoParallelIterator, ParallelIterator};
use rdblens_parser::{RdbFile, Record, Scratch};

use crate::allocator::{Known, Sums};
use crate::early::EarlyEvidence;
use crate::error::{guarded, AnalysisError};
use crate::pipeline::{
    batch_evidence, batch_facts, batch_span, batch_start, file_info, prepare, AllocatorPass, Prepared,
};
use crate::release::{BatchDone, Releaser};
use crate::spans::{Span, SpanQueue};
use crate::walker::{Batch, SharedWalker, WalkOutcome};
use rdblens_summary::Options;
use rdblens_summary::{KeyStats, Summary, SUMMARY_VERSION};

/// Analyses one file held in `data` (usually a memory map).
pub fn analyze_bytes(data: &[u8], path: &str, opts: &Options) -> Result<Summary, AnalysisError> {
    guarded(|| analyze(data, path, opts, None))
}

/// Analyses a mapped file, giving its pages back to the system as soon as
/// every worker is past them, so the resident set stays small on dumps
/// larger than RAM.
pub fn analyze_file(file: &RdbFile, path: &str, opts: &Options) -> Result<Summary, AnalysisError> {
    let release = |start: usize, end: usize| file.release(start, end);
    let populate = |start: usize, end: usize| file.populate(start, end);
    let releaser = Releaser::new(&release).populating(&populate);
    guarded(|| analyze(file.bytes(), path, opts, Some(&releaser)))
}

fn analyze(
    data: &[u8],
    path: &str,
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
) -> Result<Summary, AnalysisError> {
    let mut p = prepare(data, opts, releaser, AllocatorPass::InMainPass)?;
    let mut pass = match releaser {
        Some(r) => r.faulting_ahead(data.len() as u64, p.threads, || main_pass(&p, opts, releaser)),
        None => main_pass(&p, opts, releaser),
    };
    let (stats, outcome) = match p.deferred.take() {
        None => (pass.take(p.profile.quantum, &p), pass.outcome),
        Some(d) => {
            let choice = pass.evidence.decide(&p.profile, d.used_mem);
            let known = std::mem::take(&mut pass.known);
            let spans = std::mem::take(&mut pass.spans);
            let outcome = match resolve(pass, choice.quantum, &p) {
                Resolved::Stats(done) => *done,
                Resolved::Lacking(part, lacking) => {
                    let (parts, outcome) = *part;
                    let decided = prepare(data, opts, releaser, AllocatorPass::Decided(choice.clone()))?;
                    if let Some(r) = releaser {
                        r.restart();
                    }
                    let stats = catch_up(
                        &decided,
                        opts,
                        releaser,
                        where_they_lie(lacking, &spans),
                        &known,
                        parts,
                    );
                    (stats, outcome)
                }
            };
            p.profile.quantum = choice.quantum;
            p.allocator = choice;
            outcome
        }
    };
    Ok(summary_of(path, p, stats, outcome, opts, None))
}

/// The summary of one file whose keys are all in `stats` (finished here),
/// as `p` prepared it; `size` when the bytes were not all in `p.rdb` (a
/// stream's count of bytes read).
pub(crate) fn summary_of(
    path: &str,
    p: Prepared<'_>,
    mut stats: KeyStats,
    outcome: WalkOutcome,
    opts: &Options,
    size: Option<u64>,
) -> Summary {
    stats.finish();
    let settings = p.settings.clone();
    // A prediction for the server that loads the file: of every key, or none.
    // A server refuses a dump with a damaged value: no prediction for one.
    let whole = opts.filter.is_empty() && outcome.error.is_none() && stats.damaged_keys == 0;
    let profile = p.profile.clone();
    let mut file = file_info(path, p, outcome).with_shard(&stats);
    if let Some(size) = size {
        file.size = size;
    }
    if whole {
        file = file.with_used_memory(&profile, &stats);
    }
    Summary {
        summary_version: SUMMARY_VERSION,
        settings,
        files: vec![file],
        keys: stats,
    }
}

/// Index of a build's stats: quantum 8, then 16.
fn slot(quantum: u64) -> usize {
    usize::from(quantum == 16)
}

/// The quantum of the other build.
fn other_build(quantum: u64) -> u64 {
    if quantum == 16 {
        8
    } else {
        16
    }
}

/// One worker's accumulators and reusable buffers.
struct Worker {
    /// The keys folded so far, by the build they were estimated for
    /// (quantum 8, then 16).
    stats: [Option<KeyStats>; 2],
    /// The batches folded for each build, when the pass sums the evidence:
    /// those of the build that loses are estimated again.
    batches: [Vec<u64>; 2],
    /// The batches whose evidence was summed while the lean was unclear,
    /// and which were folded for neither build.
    deferred: Vec<u64>,
    /// Where each batch lies, when the pass sums the evidence (for a
    /// catch-up to parse it again there).
    spans: Vec<(u64, Span)>,
    /// The allocator evidence, when the main pass sums it.
    evidence: Sums,
    scratch: Scratch,
    key_buf: Vec<u8>,
}

impl Worker {
    fn new() -> Self {
        Worker {
            stats: [None, None],
            batches: [Vec::new(), Vec::new()],
            deferred: Vec::new(),
            spans: Vec::new(),
            evidence: Sums::default(),
            scratch: Scratch::new(),
            key_buf: Vec::new(),
        }
    }

    /// Buffered keys (expiry cells, slots, top lists) go in here, on every
    /// core at once, not in the serial merge.
    fn finish(&mut self) {
        for stats in self.stats.iter_mut().flatten() {
            stats.finish();
        }
    }

    /// Decodes and folds batch number `seq` for the build the evidence
    /// leans to, then signs it off for page release; its allocator
    /// evidence goes to `early` too. While the lean is unclear the batch
    /// only adds its evidence, and is folded once the build is decided
    /// ([`catch_up`], with the values decoded here for the evidence).
    fn fold(
        &mut self,
        p: &Prepared<'_>,
        filter: &rdblens_summary::KeyFilter,
        releaser: Option<&Releaser<'_>>,
        early: &Early,
        (seq, batch): (u64, &[Record<'_>]),
    ) {
        let _done = BatchDone(releaser, batch_start(batch));
        if let (Some(_), Some(span)) = (&p.deferred, Span::of(batch)) {
            self.spans.push((seq, span));
        }
        if let (Some(d), true) = (&p.deferred, early.defers(seq)) {
            let mut sums = Sums::default();
            batch_evidence(
                &mut self.scratch,
                &mut self.key_buf,
                d,
                batch,
                &mut sums,
                &early.known,
            );
            early.add(seq, batch_span(batch), &sums);
            self.evidence = std::mem::take(&mut self.evidence).merge(sums);
            self.deferred.push(seq);
            return;
        }
        let quantum = early.current();
        let profile = match (&p.deferred, quantum) {
            (Some(d), 16) => &d.q16,
            (Some(d), _) => &d.q8,
            (None, _) => &p.profile,
        };
        if p.deferred.is_some() {
            self.batches[slot(quantum)].push(seq);
        }
        let stats = self.stats[slot(quantum)]
            .get_or_insert_with(|| KeyStats::new(&p.settings).keeping(p.accumulators));
        let mut sums = Sums::default();
        batch_facts(
            !p.accumulators.read_lengths(),
            &mut self.scratch,
            &mut self.key_buf,
            profile,
            filter,
            p.settings.now_ms,
            batch,
            p.deferred.as_ref().map(|d| (d, &mut sums)),
            early.caught_up,
            |r| match r {
                Ok(facts) => stats.add(facts),
                Err(d) => stats.add_damage(d),
            },
        );
        if p.deferred.is_some() {
            early.add(seq, batch_span(batch), &sums);
            self.evidence = std::mem::take(&mut self.evidence).merge(sums);
        }
    }
}

/// What the workers share about the allocator build while the pass runs:
/// whether batches are deferred (the lean is unclear), and the build they
/// are estimated for otherwise (the one the evidence leans to, then the
/// settled one).
struct Early<'k> {
    evidence: Option<Mutex<EarlyEvidence>>,
    current: AtomicU64,
    /// `current` is the settled build: it moves no more.
    settled: AtomicBool,
    /// The lean is clear (or settled): batches are folded, not deferred.
    clear: AtomicBool,
    /// Values decoded for the evidence of deferred batches.
    known: Mutex<Known>,
    /// For a catch-up: the values the main pass decoded for its evidence.
    caught_up: Option<&'k Known>,
    /// Tests: what happens when, whatever the evidence says.
    forced: Option<Forced>,
}

/// Tests: lean to a build from a batch on, and settle on a build after a
/// batch (batch, quantum); defer the batches of a range.
struct Forced {
    lean: Option<(u64, u64)>,
    settle: Option<(u64, u64)>,
    defer: std::ops::Range<u64>,
}

impl<'k> Early<'k> {
    fn for_pass(p: &Prepared<'_>, opts: &Options) -> Early<'k> {
        let evidence = p.deferred.as_ref().map(|d| {
            Mutex::new(EarlyEvidence::new(
                d.used_mem,
                &p.profile,
                p.rdb.data().len() as u64,
            ))
        });
        Early {
            evidence,
            current: AtomicU64::new(p.profile.quantum),
            settled: AtomicBool::new(false),
            clear: AtomicBool::new(false),
            known: Mutex::new(Known::from_size(opts.known_values_from)),
            caught_up: None,
            forced: None,
        }
    }

    /// Whether batch `seq` only adds its evidence for now (the lean is
    /// unclear: folding it for either build may mean estimating it again).
    fn defers(&self, seq: u64) -> bool {
        match &self.forced {
            Some(forced) => forced.defer.contains(&seq),
            None => self.evidence.is_some() && !self.clear.load(Ordering::Relaxed),
        }
    }

    fn add(&self, seq: u64, span: u64, sums: &Sums) {
        if self.settled.load(Ordering::Relaxed) {
            return;
        }
        if let Some(forced) = &self.forced {
            if let Some((_, q)) = forced.lean.filter(|(at, _)| seq >= *at) {
                self.current.store(q, Ordering::Relaxed);
            }
            if let Some((_, q)) = forced.settle.filter(|(at, _)| seq >= *at) {
                self.current.store(q, Ordering::Relaxed);
                self.settled.store(true, Ordering::Relaxed);
            }
            return;
        }
        let Some(evidence) = &self.evidence else { return };
        // A poisoned lock means another worker panicked: that ends the pass.
        let Ok(mut evidence) = evidence.lock() else { return };
        self.fold_evidence(&mut evidence, seq, span, sums);
    }

    /// [`Self::add`] with the evidence locked. Once settled, nothing: a
    /// worker that checked `settled` before another settled the build, and
    /// then waited for the lock, found the evidence answering `None` and
    /// stored its (unclear) lean, and since no batch was added after the
    /// settlement every batch left was deferred and estimated again after
    /// the pass (1,494 of 1,495 batches of the collection-heavy benchmark
    /// dump, in 2 of 47 two-thread reports with two busy loops beside
    /// them).
    fn fold_evidence(&self, evidence: &mut EarlyEvidence, seq: u64, span: u64, sums: &Sums) {
        // Stores of `settled` happen under the lock this caller holds.
        if self.settled.load(Ordering::Relaxed) {
            return;
        }
        match evidence.add(seq, span, sums.batch_evidence()) {
            Some(choice) => {
                self.current.store(choice.quantum, Ordering::Relaxed);
                self.settled.store(true, Ordering::Relaxed);
                self.clear.store(true, Ordering::Relaxed);
            }
            None => {
                if let Some(q) = evidence.closer() {
                    self.current.store(q, Ordering::Relaxed);
                }
                self.clear.store(evidence.clear().is_some(), Ordering::Relaxed);
            }
        }
    }

    /// The build keys are estimated for now.
    fn current(&self) -> u64 {
        self.current.load(Ordering::Relaxed)
    }
}

/// What a main pass found.
pub(crate) struct MainPass {
    /// The keys by the build they were estimated for (quantum 8, then
    /// 16), a set per worker that folded any: merged only when taken.
    pub stats: [Vec<KeyStats>; 2],
    /// The batches folded for each build (empty unless `p.deferred`).
    pub batches: [BTreeSet<u64>; 2],
    /// The batches folded for neither build (the lean was unclear).
    pub deferred: BTreeSet<u64>,
    /// Values the deferred batches decoded for the evidence.
    pub known: Known,
    /// Where each batch lies (empty unless `p.deferred`).
    pub spans: BTreeMap<u64, Span>,
    pub outcome: WalkOutcome,
    /// The allocator evidence (empty unless `p.deferred`).
    pub evidence: Sums,
}

impl MainPass {
    /// The stats of `quantum`'s build (all of them, when the pass was
    /// decided from the start).
    fn take(&mut self, quantum: u64, p: &Prepared<'_>) -> KeyStats {
        let mut parts = self.take_parts(quantum).into_iter();
        // The first set is the base the others merge into: a fresh set
        // would be one more of them in memory (13 MiB on prod-1g).
        let mut stats = parts
            .next()
            .unwrap_or_else(|| KeyStats::new(&p.settings).keeping(p.accumulators));
        for part in parts {
            stats.merge(part);
        }
        stats
    }

    /// The workers' stats of `quantum`'s build, unmerged.
    fn take_parts(&mut self, quantum: u64) -> Vec<KeyStats> {
        std::mem::take(&mut self.stats[slot(quantum)])
    }
}

/// Walks and folds every key.
pub(crate) fn main_pass(p: &Prepared<'_>, opts: &Options, releaser: Option<&Releaser<'_>>) -> MainPass {
    let walker = SharedWalker::over(&p.rdb, opts, releaser);
    run(
        p,
        opts,
        releaser,
        Early::for_pass(p, opts),
        Source::Walk(walker),
        Vec::new(),
    )
}

/// What a pass that ran with the evidence holds of the build the whole
/// file shows.
enum Resolved {
    /// Its stats for every key.
    Stats(Box<(KeyStats, WalkOutcome)>),
    /// Its workers' stats (unmerged: each seeds a worker of the
    /// [`catch_up`]) but for these batches, to estimate again.
    Lacking(Box<(Vec<KeyStats>, WalkOutcome)>, BTreeSet<u64>),
}

/// Takes from `pass` what it holds for `quantum`'s build.
fn resolve(mut pass: MainPass, quantum: u64, p: &Prepared<'_>) -> Resolved {
    let mut lacking = std::mem::take(&mut pass.batches[slot(other_build(quantum))]);
    lacking.append(&mut pass.deferred);
    match lacking.is_empty() {
        true => Resolved::Stats(Box::new((pass.take(quantum, p), pass.outcome))),
        false => Resolved::Lacking(Box::new((pass.take_parts(quantum), pass.outcome)), lacking),
    }
}

/// The batches `lacking`, with where each lies.
fn where_they_lie(lacking: BTreeSet<u64>, spans: &BTreeMap<u64, Span>) -> Vec<(u64, Span)> {
    // Every batch the pass took has its span (kept when it sums evidence,
    // the only pass that can lack any).
    let wanted = lacking.len();
    let span = |seq| Some((seq, *spans.get(&seq)?));
    let found: Vec<(u64, Span)> = lacking.into_iter().filter_map(span).collect();
    debug_assert_eq!(found.len(), wanted, "a batch lacking without its span");
    found
}

/// The stats in `parts` with the batches `only` (by number, where they
/// lie) added, parsed again for `p`'s build, taking the values in `known`
/// as decoded. Each worker adds them to a part itself: a fresh set per
/// worker while the parts are held was one more set in memory (13 MiB on
/// prod-1g), and merging the parts before was a step on one core (9 ms
/// on prod-1g) that the merge after the catch-up makes anyway.
fn catch_up(
    p: &Prepared<'_>,
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
    only: Vec<(u64, Span)>,
    known: &Known,
    parts: Vec<KeyStats>,
) -> KeyStats {
    let early = Early {
        caught_up: Some(known),
        ..Early::for_pass(p, opts)
    };
    let queue = SpanQueue::new(&p.rdb, only, known.record_lens(), &opts.filter, releaser);
    let mut pass = run(p, opts, releaser, early, Source::Spans(queue), parts);
    let mut stats = pass.take(p.profile.quantum, p);
    stats.finish();
    stats
}

/// Where a pass takes its batches from.
#[allow(clippy::large_enum_variant)] // one per pass
enum Source<'a, 'w> {
    /// Every batch, walked in file order.
    Walk(SharedWalker<'a, 'w>),
    /// Batches an earlier walk found (a catch-up).
    Spans(SpanQueue<'a, 'w>),
}

impl<'a> Source<'a, '_> {
    /// The next batch's number, its records in `batch` (a worker's own
    /// vector, handed back every time).
    fn next_into(&self, batch: &mut Batch<'a>) -> Option<u64> {
        match self {
            Source::Walk(w) => w.next_into(|_| true, batch),
            Source::Spans(q) => q.next_into(batch),
        }
    }

    /// What the walk found besides the entries (nothing for a catch-up:
    /// the main pass's walk found it).
    fn finish(self) -> WalkOutcome {
        match self {
            // A worker that panicked holding the walker ended the pass before this.
            Source::Walk(w) => w.finish().unwrap_or_default(),
            Source::Spans(_) => WalkOutcome::default(),
        }
    }
}

/// The pass over the batches `source` hands out; each worker folds into
/// one of `seeds` (stats of `p`'s build) while any is left.
fn run(
    p: &Prepared<'_>,
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
    early: Early,
    source: Source<'_, '_>,
    seeds: Vec<KeyStats>,
) -> MainPass {
    let seeds = Mutex::new(seeds);
    // One worker per thread, each taking turns at the walker and decoding
    // the batch it has just walked, while it is in its core's cache; one
    // accumulator per worker, merged once at the end: far fewer merges (and
    // 16384-slot tables) than a fold per stolen job.
    let work = || {
        let mut worker = Worker::new();
        // A poisoned lock: another worker panicked, which ends the pass.
        if let Some(stats) = seeds.lock().ok().and_then(|mut s| s.pop()) {
            worker.stats[slot(p.profile.quantum)] = Some(stats);
        }
        let mut batch = Vec::new();
        while let Some(seq) = source.next_into(&mut batch) {
            worker.fold(p, &opts.filter, releaser, &early, (seq, &batch));
        }
        worker.finish();
        worker
    };
    let workers: Vec<Worker> = if p.threads == 1 {
        // One thread does it all: a second one would only add hand-offs
        // (and a second busy core to `--threads 1`).
        vec![work()]
    } else {
        p.pool
            .install(|| (0..p.threads).into_par_iter().map(|_| work()).collect())
    };
    let mut pass = MainPass {
        stats: [Vec::new(), Vec::new()],
        batches: [BTreeSet::new(), BTreeSet::new()],
        deferred: BTreeSet::new(),
        // A poisoned lock means a worker panicked: that ended the pass.
        known: early.known.into_inner().unwrap_or_default(),
        spans: BTreeMap::new(),
        outcome: source.finish(),
        evidence: Sums::default(),
    };
    // Seeds no worker took (none is left unless a pass had more seeds
    // than workers) are parts all the same.
    let left = seeds.into_inner().unwrap_or_default();
    pass.stats[slot(p.profile.quantum)].extend(left);
    for w in workers {
        for (mine, theirs) in pass.stats.iter_mut().zip(w.stats) {
            mine.extend(theirs);
        }
        for (mine, theirs) in pass.batches.iter_mut().zip(w.batches) {
            mine.extend(theirs);
        }
        pass.deferred.extend(w.deferred);
        pass.spans.extend(w.spans);
        pass.evidence = std::mem::take(&mut pass.evidence).merge(w.evidence);
    }
    pass
}

#[cfg(test)]
mod tests;
