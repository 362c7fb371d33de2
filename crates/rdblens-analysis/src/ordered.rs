//! One record per key, in file order, decoded in parallel with bounded memory.
//!
//! A walker thread sends batches of entries over a bounded channel (the
//! walker of [`crate::analyze_bytes`], pushed instead of pulled). A decoder thread takes them a wave at a time
//! (a few batches per worker), decodes the wave on the rayon pool and
//! collects the results in batch order, so order is kept without a reorder
//! buffer. The caller's thread consumes one wave while the next is decoded.
//! At most about four waves exist at once, whatever the file size.

use std::sync::mpsc::sync_channel;

use rayon::iter::{IntoParallelRefIterator, ParallelIterator};
use rdblens_parser::{Error, RdbFile, Scratch};

use crate::facts::KeyFacts;
use crate::options::Options;
use crate::pipeline::{
    batch_facts, batch_start, file_info, prepare, walk, walker_panicked, AllocatorPass, Batch,
};
use crate::release::Releaser;
use crate::settings::Settings;
use crate::summary::{Damage, FileInfo};

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
) -> Result<FileInfo, Error>
where
    T: Send,
    M: Fn(&KeyFacts<'_>, &Settings) -> T + Sync,
    S: FnMut(KeyItem<T>) -> bool,
{
    map_in_order(data, path, opts, None, map, sink)
}

/// [`map_keys_in_order`] on a mapped file, whose pages are given back to
/// the system once decoded (see [`crate::analyze_file`]).
pub fn map_file_keys_in_order<T, M, S>(
    file: &RdbFile,
    path: &str,
    opts: &Options,
    map: M,
    sink: S,
) -> Result<FileInfo, Error>
where
    T: Send,
    M: Fn(&KeyFacts<'_>, &Settings) -> T + Sync,
    S: FnMut(KeyItem<T>) -> bool,
{
    let release = |start: usize, end: usize| file.release(start, end);
    let releaser = Releaser::new(&release);
    map_in_order(file.bytes(), path, opts, Some(&releaser), map, sink)
}

fn map_in_order<T, M, S>(
    data: &[u8],
    path: &str,
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
    map: M,
    mut sink: S,
) -> Result<FileInfo, Error>
where
    T: Send,
    M: Fn(&KeyFacts<'_>, &Settings) -> T + Sync,
    S: FnMut(KeyItem<T>) -> bool,
{
    // Rows go out as keys are read: the allocator is settled first.
    let p = prepare(data, opts, releaser, AllocatorPass::Separate)?;
    let wave = p.threads.max(1) * BATCHES_PER_WORKER;
    let (tx, rx) = sync_channel::<Batch<'_>>(wave);
    let (done_tx, done_rx) = sync_channel::<Vec<Vec<KeyItem<T>>>>(1);
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
            let decoded: Vec<Vec<KeyItem<T>>> = pool.install(|| {
                batches
                    .par_iter()
                    .map_init(
                        || (Scratch::new(), Vec::new()),
                        |(scratch, key_buf), batch| {
                            let mut out = Vec::with_capacity(batch.len());
                            batch_facts(
                                scratch,
                                key_buf,
                                profile,
                                filter,
                                settings.now_ms,
                                batch,
                                None,
                                |r| {
                                    out.push(match r {
                                        Ok(facts) => KeyItem::Key(map(facts, settings)),
                                        Err(d) => KeyItem::Damaged(d),
                                    })
                                },
                            );
                            out
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
        'consume: for decoded in done_rx {
            for item in decoded.into_iter().flatten() {
                if !sink(item) {
                    break 'consume;
                }
            }
        }
        walker.join().unwrap_or_else(|_| walker_panicked())
    });
    Ok(file_info(path, p, outcome))
}
