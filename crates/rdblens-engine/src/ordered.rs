//! One record per key, in file order, decoded in parallel with bounded memory.
//!
//! Workers take numbered batches from the walker in turn (as the report's
//! do), decode them and hand the results to the caller's thread through a
//! queue that releases them in batch order ([`InOrderQueue`]). A worker
//! waits before taking a batch more than a window ahead of the one the
//! caller is consuming, so memory stays bounded whatever the file size.
//! An earlier design decoded waves of a few batches at a time on the rayon
//! pool, fed by a walker thread; the cores idled at the end of each wave.
//!
//! The allocator build is settled before the first record goes out, by a
//! pass of its own over the whole file ([`map_keys_in_order`]), or by one
//! that stops as soon as the part of the file it has read settles the
//! build ([`map_keys_in_order_rewindable`], see [`crate::early`]): the walk
//! then sums the evidence of every key to confirm it, and answers
//! [`InOrder::Again`] in the rare case the whole file overturns it.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex};

use rdblens_memory::allocator::Choice;
use rdblens_parser::{RdbFile, Scratch};

use crate::allocator::Sums;
use crate::error::{guarded, panicked, AnalysisError};
use crate::pipeline::{batch_facts, batch_start, file_info, prepare, AllocatorPass};
use crate::release::{BatchDone, Releaser};
use crate::walker::SharedWalker;
use rdblens_summary::KeyFacts;
use rdblens_summary::Options;
use rdblens_summary::Settings;
use rdblens_summary::{AllocatorInfo, Damage, FileInfo};

/// Batches per worker the workers may run ahead of the consumer: enough to
/// keep every worker busy while one batch is slow or the writer stalls
/// (2 measured 5 % slower than 8 on prod-1g).
const BATCHES_PER_WORKER: usize = 8;

/// One key, in file order.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyItem<T> {
    /// What `map` made of the key's facts.
    Key(T),
    /// The key's value could not be decoded; the walk went on past it.
    Damaged(Damage),
}

/// How a rewindable walk ended.
#[derive(Debug)]
pub enum InOrder {
    /// Every record given was estimated with the build the file shows.
    Done(Box<FileInfo>),
    /// The records were estimated with a guess the whole file overturned:
    /// discard them and walk again with this.
    Again(Again),
}

/// The allocator build a walk must be repeated with (see [`InOrder::Again`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Again {
    choice: Choice,
    walked: Box<FileInfo>,
}

impl Again {
    /// The quantum the repeated walk estimates with.
    pub fn quantum(&self) -> u64 {
        self.choice.quantum
    }

    /// Why: what the whole file's evidence says.
    pub fn reason(&self) -> &str {
        &self.choice.reason
    }

    /// What the walk that was overturned learnt of the file; its
    /// `allocator` is the build its records assumed. A caller that cannot
    /// discard the records it was given keeps them with this.
    pub fn walked(&self) -> &FileInfo {
        &self.walked
    }
}

/// Calls `map` on the facts of every key `opts.filter` admits, in parallel,
/// and hands the results to `sink` in file order. `sink` returns `false` to
/// stop early (the walk then ends promptly, e.g. on a closed pipe).
///
/// Returns what was learnt about the file; `incomplete` is set when the walk
/// stopped at damage or truncation. Fails only when `data` is not an RDB
/// file of a supported version.
pub fn map_keys_in_order<T, M, S>(
    data: &[u8],
    path: &str,
    opts: &Options,
    map: M,
    sink: S,
) -> Result<FileInfo, AnalysisError>
where
    T: Send,
    M: Fn(&KeyFacts<'_>, &Settings) -> T + Sync,
    S: FnMut(KeyItem<T>) -> bool,
{
    let (map, sink) = plain(map, sink);
    let (info, _) = map_in_order(data, path, opts, None, AllocatorPass::Separate, map, sink)?;
    Ok(info)
}

/// [`map_keys_in_order`] whose pass for the allocator build stops as soon
/// as the part of the file it has read settles it (with no key filter);
/// the walk then sums the evidence of every key to confirm the build. When
/// the whole file overturns it (rare: the settlement allows for three
/// standard errors), the answer is [`InOrder::Again`]: a caller that can
/// discard what `sink` was given calls again with that `Again` as `again`,
/// and that walk is always [`InOrder::Done`], its records and file those
/// [`map_keys_in_order`] gives; one that cannot keeps the records, which
/// [`Again::walked`] describes.
///
/// `map` is also given a byte buffer per batch of keys, which `sink` gets
/// with each result: a record's text can be written there on the worker
/// (`map` returns where) and copied out by `sink`, with no allocation per
/// key.
pub fn map_keys_in_order_rewindable<T, M, S>(
    data: &[u8],
    path: &str,
    opts: &Options,
    again: Option<Again>,
    map: M,
    sink: S,
) -> Result<InOrder, AnalysisError>
where
    T: Send,
    M: Fn(&KeyFacts<'_>, &Settings, &mut Vec<u8>) -> T + Sync,
    S: FnMut(KeyItem<T>, &[u8]) -> bool,
{
    rewindable(data, path, opts, None, again, map, sink)
}

/// [`map_keys_in_order`] on a mapped file, whose pages are given back to
/// the system once decoded (see [`crate::analyze_file`]).
pub fn map_file_keys_in_order<T, M, S>(
    file: &RdbFile,
    path: &str,
    opts: &Options,
    map: M,
    sink: S,
) -> Result<FileInfo, AnalysisError>
where
    T: Send,
    M: Fn(&KeyFacts<'_>, &Settings) -> T + Sync,
    S: FnMut(KeyItem<T>) -> bool,
{
    let (map, sink) = plain(map, sink);
    let (info, _) = over_file(file, opts, |releaser| {
        map_in_order(
            file.bytes(),
            path,
            opts,
            Some(releaser),
            AllocatorPass::Separate,
            map,
            sink,
        )
    })?;
    Ok(info)
}

/// [`map_keys_in_order_rewindable`] on a mapped file.
pub fn map_file_keys_in_order_rewindable<T, M, S>(
    file: &RdbFile,
    path: &str,
    opts: &Options,
    again: Option<Again>,
    map: M,
    sink: S,
) -> Result<InOrder, AnalysisError>
where
    T: Send,
    M: Fn(&KeyFacts<'_>, &Settings, &mut Vec<u8>) -> T + Sync,
    S: FnMut(KeyItem<T>, &[u8]) -> bool,
{
    over_file(file, opts, |releaser| {
        rewindable(file.bytes(), path, opts, Some(releaser), again, map, sink)
    })
}

/// Runs `pass` over a mapped file with a releaser that gives its pages
/// back once decoded and, with more than one worker, faults them in ahead
/// of the walker.
fn over_file<R>(file: &RdbFile, opts: &Options, pass: impl FnOnce(&Releaser<'_>) -> R) -> R {
    let release = |start: usize, end: usize| file.release(start, end);
    let populate = |start: usize, end: usize| file.populate(start, end);
    let releaser = Releaser::new(&release).populating(&populate);
    releaser.faulting_ahead(file.len() as u64, opts.worker_threads(), || pass(&releaser))
}

fn rewindable<T, M, S>(
    data: &[u8],
    path: &str,
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
    again: Option<Again>,
    map: M,
    sink: S,
) -> Result<InOrder, AnalysisError>
where
    T: Send,
    M: Fn(&KeyFacts<'_>, &Settings, &mut Vec<u8>) -> T + Sync,
    S: FnMut(KeyItem<T>, &[u8]) -> bool,
{
    let pass = match again {
        Some(again) => AllocatorPass::Decided(again.choice),
        None => AllocatorPass::SeparateUntilSettled,
    };
    let (mut info, evidence) = map_in_order(data, path, opts, releaser, pass, map, sink)?;
    match evidence {
        Some(Verdict::Overturned(choice)) => Ok(InOrder::Again(Again {
            choice,
            walked: Box::new(info),
        })),
        Some(Verdict::Confirmed(choice)) => {
            info.allocator = Some(AllocatorInfo::of(&choice));
            Ok(InOrder::Done(Box::new(info)))
        }
        None => Ok(InOrder::Done(Box::new(info))),
    }
}

/// What the evidence summed in the walk said of the guess it ran with.
enum Verdict {
    Confirmed(Choice),
    Overturned(Choice),
}

/// One decoded batch: its records, the bytes `map` wrote for them, and the
/// evidence over its keys.
type Decoded<T> = (Vec<KeyItem<T>>, Vec<u8>, Sums);

/// A `map` and `sink` that use no batch bytes, as the two functions with
/// batch bytes take them.
#[allow(clippy::type_complexity)] // two closures, named by their bounds
fn plain<T, M, S>(
    map: M,
    mut sink: S,
) -> (
    impl Fn(&KeyFacts<'_>, &Settings, &mut Vec<u8>) -> T + Sync,
    impl FnMut(KeyItem<T>, &[u8]) -> bool,
)
where
    M: Fn(&KeyFacts<'_>, &Settings) -> T + Sync,
    S: FnMut(KeyItem<T>) -> bool,
{
    (
        move |f: &KeyFacts<'_>, s: &Settings, _: &mut Vec<u8>| map(f, s),
        move |item, _: &[u8]| sink(item),
    )
}

/// The ordered walk; a panic in any of its threads (a bug) comes back as
/// [`AnalysisError::Internal`].
fn map_in_order<T, M, S>(
    data: &[u8],
    path: &str,
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
    pass: AllocatorPass,
    map: M,
    sink: S,
) -> Result<(FileInfo, Option<Verdict>), AnalysisError>
where
    T: Send,
    M: Fn(&KeyFacts<'_>, &Settings, &mut Vec<u8>) -> T + Sync,
    S: FnMut(KeyItem<T>, &[u8]) -> bool,
{
    guarded(|| map_in_order_unguarded(data, path, opts, releaser, pass, map, sink))
}

fn map_in_order_unguarded<T, M, S>(
    data: &[u8],
    path: &str,
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
    pass: AllocatorPass,
    map: M,
    mut sink: S,
) -> Result<(FileInfo, Option<Verdict>), AnalysisError>
where
    T: Send,
    M: Fn(&KeyFacts<'_>, &Settings, &mut Vec<u8>) -> T + Sync,
    S: FnMut(KeyItem<T>, &[u8]) -> bool,
{
    // Rows go out as keys are read: the allocator is settled first, or
    // confirmed while the evidence is summed (`pass`).
    let p = prepare(data, opts, releaser, pass)?;
    let deferred = p.deferred.as_ref();
    let mut evidence = Sums::default();
    let mut stopped = false;
    let known_lens = deferred.map(|d| d.known.record_lens()).unwrap_or_default();
    let walker = SharedWalker::over(&p.rdb, opts, releaser).knowing(known_lens);
    let window = (p.threads.max(1) * BATCHES_PER_WORKER) as u64;
    let order: InOrderQueue<Decoded<T>> = InOrderQueue::new(p.threads.max(1));
    let spare = SpareBuffers::default();
    let (map, filter, profile, settings) = (&map, &opts.filter, &p.profile, &p.settings);
    std::thread::scope(|scope| -> Result<(), AnalysisError> {
        let workers: Vec<_> = (0..p.threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    // Leaves the queue when done, also by a panic.
                    let _leave = Leave(&order);
                    let (mut scratch, mut key_buf) = (Scratch::new(), Vec::new());
                    loop {
                        let next = walker.next(|seq| order.may_take(seq, window));
                        let Some((seq, batch)) = next else { break };
                        let _done = BatchDone(releaser, batch_start(&batch));
                        let mut out = Vec::with_capacity(batch.len());
                        let mut bytes = spare.take();
                        let mut sums = Sums::default();
                        batch_facts(
                            // Every row has the longest element.
                            false,
                            &mut scratch,
                            &mut key_buf,
                            profile,
                            filter,
                            settings.now_ms,
                            &batch,
                            deferred.map(|d| (d, &mut sums)),
                            None,
                            |r| {
                                out.push(match r {
                                    Ok(facts) => KeyItem::Key(map(facts, settings, &mut bytes)),
                                    Err(d) => KeyItem::Damaged(d),
                                })
                            },
                        );
                        order.put(seq, (out, bytes, sums));
                    }
                })
            })
            .collect();
        // Batches merge in file order: the same sums for any thread count.
        'consume: while let Some((items, bytes, sums)) = order.take() {
            evidence = std::mem::take(&mut evidence).merge(sums);
            for item in items {
                if !sink(item, &bytes) {
                    stopped = true;
                    break 'consume;
                }
            }
            spare.give_back(bytes, 2 * p.threads.max(1));
        }
        // The consumer stopped (or every batch is in): the workers stop too.
        order.close();
        for w in workers {
            w.join().map_err(|payload| panicked(payload.as_ref()))?;
        }
        Ok(())
    })?;
    let outcome = walker
        .finish()
        .ok_or_else(|| AnalysisError::Internal("a worker panicked while walking".into()))?;
    // A consumer that stopped keeps nothing: the guess stands.
    let verdict = deferred.filter(|_| !stopped).map(|d| {
        let choice = evidence.decide(&p.profile, d.used_mem);
        if choice.quantum == p.profile.quantum {
            Verdict::Confirmed(choice)
        } else {
            Verdict::Overturned(choice)
        }
    });
    Ok((file_info(path, p, outcome), verdict))
}

/// Byte buffers of batches the consumer is done with, for the workers'
/// next batches. A fresh buffer per batch grew by doubling to about
/// 230 KB (a `keys` CSV batch of prod-1g), copying itself on the way,
/// and its pages were faulted in anew each time: reusing them cut the
/// kernel time of `keys --format csv` on prod-1g from 0.26 to 0.21 s,
/// and its wall time to 0.97x (paired).
#[derive(Default)]
pub(crate) struct SpareBuffers(Mutex<Vec<Vec<u8>>>);

impl SpareBuffers {
    /// An empty buffer, with the capacity of an earlier batch's if one is spare.
    pub(crate) fn take(&self) -> Vec<u8> {
        self.0.lock().ok().and_then(|mut v| v.pop()).unwrap_or_default()
    }

    /// Keeps `bytes` for a later batch, unless `most` are kept already.
    pub(crate) fn give_back(&self, mut bytes: Vec<u8>, most: usize) {
        bytes.clear();
        if let Ok(mut v) = self.0.lock() {
            if v.len() < most {
                v.push(bytes);
            }
        }
    }
}

/// Decoded batches handed from the workers to the consumer in file order.
/// Workers decode batches as they take them, so batch `n + 1` may be done
/// before batch `n`; it waits here until `n` is taken. Workers wait before
/// taking a batch more than a window ahead of the consumer, so memory stays
/// bounded whatever the file size.
pub(crate) struct InOrderQueue<T> {
    state: Mutex<QueueState<T>>,
    changed: Condvar,
}

struct QueueState<T> {
    ready: BTreeMap<u64, T>,
    /// The batch the consumer takes next.
    next: u64,
    /// Workers still decoding.
    workers: usize,
    /// The consumer has stopped: workers take no more batches.
    closed: bool,
}

impl<T> InOrderQueue<T> {
    pub(crate) fn new(workers: usize) -> Self {
        InOrderQueue {
            state: Mutex::new(QueueState {
                ready: BTreeMap::new(),
                next: 0,
                workers,
                closed: false,
            }),
            changed: Condvar::new(),
        }
    }

    /// Whether a worker may take batch `seq`: waits while it is more than
    /// `window` batches ahead of the consumer; false once the consumer stopped.
    pub(crate) fn may_take(&self, seq: u64, window: u64) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return false;
        };
        while !s.closed && seq >= s.next + window {
            s = match self.changed.wait(s) {
                Ok(s) => s,
                Err(_) => return false,
            };
        }
        !s.closed
    }

    pub(crate) fn put(&self, seq: u64, batch: T) {
        if let Ok(mut s) = self.state.lock() {
            s.ready.insert(seq, batch);
        }
        self.changed.notify_all();
    }

    /// The next batch in file order; `None` once every worker is done and
    /// it never came (the walk ended).
    pub(crate) fn take(&self) -> Option<T> {
        let mut s = self.state.lock().ok()?;
        loop {
            let next = s.next;
            if let Some(batch) = s.ready.remove(&next) {
                s.next += 1;
                drop(s);
                self.changed.notify_all();
                return Some(batch);
            }
            if s.workers == 0 {
                return None;
            }
            s = self.changed.wait(s).ok()?;
        }
    }

    pub(crate) fn close(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.closed = true;
        }
        self.changed.notify_all();
    }
}

/// Counts a worker out of the queue when dropped.
pub(crate) struct Leave<'q, T>(pub(crate) &'q InOrderQueue<T>);

impl<T> Drop for Leave<'_, T> {
    fn drop(&mut self) {
        if let Ok(mut s) = self.0.state.lock() {
            s.workers -= 1;
        }
        self.0.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::SpareBuffers;

    #[test]
    fn spare_buffers_come_back_empty_with_their_capacity_and_are_bounded() {
        let spare = SpareBuffers::default();
        assert_eq!(spare.take().capacity(), 0);
        let (mut a, mut b, mut c) = (spare.take(), spare.take(), spare.take());
        a.extend_from_slice(&[1; 1000]);
        b.extend_from_slice(&[2; 2000]);
        c.extend_from_slice(&[3; 3000]);
        spare.give_back(a, 2);
        spare.give_back(b, 2);
        // Two are kept already: the third is dropped.
        spare.give_back(c, 2);
        let taken = [spare.take(), spare.take(), spare.take()];
        assert!(taken.iter().all(Vec::is_empty));
        let mut caps: Vec<usize> = taken.iter().map(Vec::capacity).collect();
        caps.sort_unstable();
        assert_eq!(caps[0], 0);
        assert!(caps[1] >= 1000 && caps[1] < 2000, "{caps:?}");
        assert!(caps[2] >= 2000 && caps[2] < 3000, "{caps:?}");
    }
}
