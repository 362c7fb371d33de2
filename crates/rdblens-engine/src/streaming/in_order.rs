//! One record per key in file order from a dump read once as it arrives
//! (`rdblens keys` on a pipe, a compressed dump, an object), with no copy
//! of the dump on disk, for a dump whose allocator build is known before
//! its first key: given by `--jemalloc-quantum`, or one that needs no
//! evidence (a writer whose build is known, a dump without `used-mem`).
//!
//! A record carries the key's memory estimate, so the build must be
//! settled before the first record goes out; where only the evidence of
//! the whole dump settles it, a stream cannot go back to write the records
//! again: [`stream_needs_evidence`] tells the caller so, which then copies
//! the stream to a file and walks it twice, as a mapped file is.
//!
//! The workers take turns at the [`ChunkWalker`] of the report's stream
//! (`super`), decode a chunk each and hand its records to the caller's
//! thread through the queue of the mapped file's ordered walk
//! ([`crate::ordered`]), which releases them in chunk order; a worker waits
//! before taking a chunk more than a window ahead of the consumer, so
//! memory is a few chunks and their records whatever the dump's size.

use std::io::Read;
use std::sync::Mutex;

use rdblens_parser::{Crc64Digest, Record, Scratch};
use rdblens_summary::{FileInfo, KeyFacts, Options, Settings};

use super::{Chunk, ChunkWalker, Feed, CHUNK_BYTES, KEEP_CAPACITY};
use crate::error::{guarded, panicked, AnalysisError};
use crate::ordered::{InOrderQueue, KeyItem, Leave, SpareBuffers};
use crate::pipeline::{batch_facts, file_info, prepare, AllocatorPass, Prepared};

/// Chunks per worker the workers may decode ahead of the consumer: one
/// decoding while the other waits to be written.
const CHUNKS_PER_WORKER: u64 = 2;

/// Whether the records of the dump `source` gives need the evidence of
/// its whole keyspace for their allocator build (see the module's doc), and
/// the bytes read from it to tell (its header and aux fields), to be read
/// again before the rest of it: by [`stream_keys_in_order`] when they do
/// not, else from a copy on disk walked twice, as a mapped file is.
pub fn stream_needs_evidence(
    source: &mut (dyn Read + Send),
    opts: &Options,
) -> Result<(bool, Vec<u8>), AnalysisError> {
    guarded(|| {
        let (_, head, header) = Feed::start(source, None);
        let needs = prepare(&header, opts, None, AllocatorPass::Streamed)?
            .deferred
            .is_some();
        Ok((needs, head))
    })
}

/// Calls `map` on the facts of every key `opts.filter` admits, in
/// parallel, and hands the results to `sink` in file order, as the bytes
/// of `source` arrive (see the module's doc). `map` and `sink` are those
/// of [`crate::map_keys_in_order_rewindable`]: `map` may write a record's
/// text into its chunk's byte buffer, which `sink` gets with each result;
/// `sink` returns `false` to stop (the source is then read no further).
/// A read error ends the stream there: the walk says where the dump stops
/// short, and the error, returned beside what was learnt of the dump, why.
/// A dump whose build needs the evidence of every key
/// ([`stream_needs_evidence`]) is an error here.
pub fn stream_keys_in_order<T, M, S>(
    source: &mut (dyn Read + Send),
    path: &str,
    opts: &Options,
    map: M,
    sink: S,
) -> Result<(FileInfo, Option<std::io::Error>), AnalysisError>
where
    T: Send,
    M: Fn(&KeyFacts<'_>, &Settings, &mut Vec<u8>) -> T + Sync,
    S: FnMut(KeyItem<T>, &[u8]) -> bool,
{
    guarded(|| in_order(source, path, opts, CHUNK_BYTES, map, sink))
}

/// One chunk's records, and the bytes `map` wrote for them.
type Decoded<T> = (Vec<KeyItem<T>>, Vec<u8>);

/// [`stream_keys_in_order`] with chunks of `chunk_bytes` (tests cut
/// records at every kind of place with small ones).
pub(super) fn in_order<T, M, S>(
    source: &mut (dyn Read + Send),
    path: &str,
    opts: &Options,
    chunk_bytes: usize,
    map: M,
    mut sink: S,
) -> Result<(FileInfo, Option<std::io::Error>), AnalysisError>
where
    T: Send,
    M: Fn(&KeyFacts<'_>, &Settings, &mut Vec<u8>) -> T + Sync,
    S: FnMut(KeyItem<T>, &[u8]) -> bool,
{
    let (feed, head, header) = Feed::start(source, opts.progress.clone());
    let p = prepare(&header, opts, None, AllocatorPass::Streamed)?;
    if p.deferred.is_some() {
        return Err(AnalysisError::Internal(
            "the records of a stream whose build needs the whole dump's evidence cannot be written as it arrives"
                .into(),
        ));
    }
    // The checksum covers the magic too (`prepare` read it whole).
    let mut crc = Crc64Digest::new();
    crc.update(&head[..9]);
    // The walker, and the number of the chunk it hands out next.
    let walker = Mutex::new((ChunkWalker::new(p.rdb, feed, head, crc, chunk_bytes), 0u64));
    let threads = p.threads.max(1);
    let window = threads as u64 * CHUNKS_PER_WORKER;
    let order: InOrderQueue<Decoded<T>> = InOrderQueue::new(threads);
    let rows = SpareBuffers::default();
    let chunks = SpareBuffers::default();
    let mut stopped = false;
    std::thread::scope(|scope| -> Result<(), AnalysisError> {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    // Leaves the queue when done, also by a panic.
                    let _leave = Leave(&order);
                    let (mut scratch, mut key_buf) = (Scratch::new(), Vec::new());
                    loop {
                        let given = Some(chunks.take()).filter(|b| b.capacity() > 0);
                        let taken = {
                            // A poisoned lock: another worker panicked, which ends the walk.
                            let Ok(mut w) = walker.lock() else { break };
                            let (walker, next) = &mut *w;
                            if !order.may_take(*next, window) {
                                break;
                            }
                            walker.next_chunk(given).map(|chunk| {
                                *next += 1;
                                (*next - 1, chunk)
                            })
                        };
                        let Some((seq, chunk)) = taken else { break };
                        let mut bytes = rows.take();
                        let items = decode(&p, opts, &chunk, &map, &mut bytes, (&mut scratch, &mut key_buf));
                        order.put(seq, (items, bytes));
                        if chunk.bytes.capacity() <= KEEP_CAPACITY {
                            chunks.give_back(chunk.bytes, 2 * threads);
                        }
                    }
                })
            })
            .collect();
        'consume: while let Some((items, bytes)) = order.take() {
            for item in items {
                if !sink(item, &bytes) {
                    stopped = true;
                    break 'consume;
                }
            }
            rows.give_back(bytes, 2 * threads);
        }
        // The consumer stopped (or every chunk is in): the workers stop too.
        order.close();
        for w in workers {
            w.join().map_err(|payload| panicked(payload.as_ref()))?;
        }
        Ok(())
    })?;
    let (walker, _) = walker
        .into_inner()
        .map_err(|_| AnalysisError::Internal("a worker panicked walking the stream".into()))?;
    // A consumer that stopped (a closed pipe) reads no further.
    let (outcome, size, read_error) = if stopped { walker.stop() } else { walker.finish() };
    let mut info = file_info(path, p, outcome);
    info.size = size;
    Ok((info, read_error))
}

/// The records of `chunk`'s keys `opts.filter` admits, each what `map`
/// made of its facts (writing into `bytes`) or its damage.
fn decode<T, M>(
    p: &Prepared<'_>,
    opts: &Options,
    chunk: &Chunk,
    map: &M,
    bytes: &mut Vec<u8>,
    (scratch, key_buf): (&mut Scratch, &mut Vec<u8>),
) -> Vec<KeyItem<T>>
where
    M: Fn(&KeyFacts<'_>, &Settings, &mut Vec<u8>) -> T + Sync,
{
    let (filter, settings) = (&opts.filter, &p.settings);
    let batch_entries = opts.batch_entries.max(1);
    let mut items = Vec::new();
    let mut batch = Vec::with_capacity(batch_entries);
    let mut fold = |batch: &[Record<'_>], items: &mut Vec<KeyItem<T>>| {
        batch_facts(
            // Every row has the longest element.
            false,
            scratch,
            key_buf,
            &p.profile,
            filter,
            settings.now_ms,
            batch,
            None,
            None,
            |r| {
                items.push(match r {
                    Ok(facts) => KeyItem::Key(map(facts, settings, bytes)),
                    Err(d) => KeyItem::Damaged(d),
                })
            },
        )
    };
    let mut records = p.rdb.records_in(&chunk.bytes[chunk.from..], chunk.base, chunk.db);
    let mut cursor = 0;
    // Whole records, walked before: an error here is one the walk recorded.
    while let Some(Ok(record)) = chunk.lens.next_record(&mut records, &mut cursor) {
        if let Record::Entry(e) = &record {
            if filter.admits_entry(e) {
                batch.push(record);
                if batch.len() >= batch_entries {
                    fold(&batch, &mut items);
                    batch.clear();
                }
            }
        }
    }
    if !batch.is_empty() {
        fold(&batch, &mut items);
    }
    items
}

#[cfg(test)]
mod tests;
