//! One record per key, in file order, decoded in parallel with bounded memory.
//!
//! A walker thread sends batches of entries over a bounded channel (the
//! walker of [`crate::analyze_bytes`], pushed instead of pulled). A decoder thread takes them a wave at a time
//! (a few batches per worker), decodes the wave on the rayon pool and
//! collects the results in batch order, so order is kept without a reorder
//! buffer. The caller's thread consumes one wave while the next is decoded.
//! At most about four waves exist at once, whatever the file size.
//!
//! The allocator build is settled before the first record goes out, by a
//! pass of its own over the whole file ([`map_keys_in_order`]), or by one
//! that stops as soon as the part of the file it has read settles the
//! build ([`map_keys_in_order_rewindable`], see [`crate::early`]): the walk
//! then sums the evidence of every key to confirm it, and answers
//! [`InOrder::Again`] in the rare case the whole file overturns it.

use std::sync::mpsc::sync_channel;

use rayon::iter::{IntoParallelRefIterator, ParallelIterator};
use rdblens_memory::allocator::Choice;
use rdblens_parser::{RdbFile, Scratch};

use crate::allocator::Sums;
use crate::error::{guarded, panicked, AnalysisError};
use crate::facts::KeyFacts;
use crate::options::Options;
use crate::pipeline::{batch_facts, batch_start, file_info, prepare, walk, AllocatorPass};
use crate::release::Releaser;
use crate::settings::Settings;
use crate::summary::{AllocatorInfo, Damage, FileInfo};
use crate::walker::Batch;

/// Batches per worker in one wave: enough to keep every worker busy while
/// one batch of the wave is slow.
const BATCHES_PER_WORKER: usize = 2;

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
    M: Fn(&KeyFacts<'_>, &Settings) -> T + Sync,
    S: FnMut(KeyItem<T>) -> bool,
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
    let release = |start: usize, end: usize| file.release(start, end);
    let releaser = Releaser::new(&release);
    let pass = AllocatorPass::Separate;
    let (info, _) = map_in_order(file.bytes(), path, opts, Some(&releaser), pass, map, sink)?;
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
    M: Fn(&KeyFacts<'_>, &Settings) -> T + Sync,
    S: FnMut(KeyItem<T>) -> bool,
{
    let release = |start: usize, end: usize| file.release(start, end);
    let releaser = Releaser::new(&release);
    rewindable(file.bytes(), path, opts, Some(&releaser), again, map, sink)
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
    M: Fn(&KeyFacts<'_>, &Settings) -> T + Sync,
    S: FnMut(KeyItem<T>) -> bool,
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

/// One decoded batch: its records and the evidence over its keys.
type Decoded<T> = (Vec<KeyItem<T>>, Sums);

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
    M: Fn(&KeyFacts<'_>, &Settings) -> T + Sync,
    S: FnMut(KeyItem<T>) -> bool,
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
    M: Fn(&KeyFacts<'_>, &Settings) -> T + Sync,
    S: FnMut(KeyItem<T>) -> bool,
{
    // Rows go out as keys are read: the allocator is settled first, or
    // guessed while the evidence is summed (`pass`).
    let p = prepare(data, opts, releaser, pass)?;
    let deferred = p.deferred.as_ref();
    let mut evidence = Sums::default();
    let mut stopped = false;
    let wave = p.threads.max(1) * BATCHES_PER_WORKER;
    let (tx, rx) = sync_channel::<Batch<'_>>(wave);
    let (done_tx, done_rx) = sync_channel::<Vec<Decoded<T>>>(1);
    let (map, filter, profile, settings, pool) = (&map, &opts.filter, &p.profile, &p.settings, &p.pool);
    let outcome = std::thread::scope(|scope| {
        let walker = scope.spawn(|| {
            walk(
                &p.rdb,
                opts.batch_entries,
                filter,
                opts.progress.as_ref(),
                releaser,
                move |batch| tx.send(batch).is_ok(),
            )
        });
        scope.spawn(move || loop {
            let batches: Vec<Batch<'_>> = rx.iter().take(wave).collect();
            if batches.is_empty() {
                break;
            }
            let decoded: Vec<Decoded<T>> = pool.install(|| {
                batches
                    .par_iter()
                    .map_init(
                        || (Scratch::new(), Vec::new()),
                        |(scratch, key_buf), batch| {
                            let mut out = Vec::with_capacity(batch.len());
                            let mut sums = Sums::default();
                            batch_facts(
                                scratch,
                                key_buf,
                                profile,
                                filter,
                                settings.now_ms,
                                batch,
                                deferred.map(|d| (d, &mut sums)),
                                false,
                                |r| {
                                    out.push(match r {
                                        Ok((facts, _)) => KeyItem::Key(map(facts, settings)),
                                        Err(d) => KeyItem::Damaged(d),
                                    })
                                },
                            );
                            (out, sums)
                        },
                    )
                    .collect()
            });
            if let Some(r) = releaser {
                for batch in &batches {
                    r.batch_done(batch_start(batch));
                }
            }
            // The consumer stopped: dropping `rx` here stops the walker too.
            if done_tx.send(decoded).is_err() {
                break;
            }
        });
        // Batches merge in file order: the same sums for any thread count.
        'consume: for decoded in done_rx {
            for (items, sums) in decoded {
                evidence = std::mem::take(&mut evidence).merge(sums);
                for item in items {
                    if !sink(item) {
                        stopped = true;
                        break 'consume;
                    }
                }
            }
        }
        walker.join().map_err(|payload| panicked(payload.as_ref()))
    })?;
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
