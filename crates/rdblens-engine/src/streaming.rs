//! The report's analysis of a dump read once, as its bytes arrive: standard
//! input, a FIFO, a decompressor, a socket. Nothing is written to disk and
//! nothing is read twice.
//!
//! The bytes come into a buffer; the workers take turns at a
//! [`ChunkWalker`], which walks the records the buffer holds whole (the
//! same parser as on a mapped file, with the file's offsets), and hands
//! out a chunk of them: the buffer itself, moved out, with the part of a
//! record cut by its end copied to the next one. A record longer than the
//! buffer grows it until it is whole, so memory is a few buffers in flight
//! plus the largest single record. Each worker then walks its chunk into
//! batches and folds them as on a mapped file, and gives the buffer back
//! to be filled again. The checksum is summed as the chunks leave.
//!
//! Where the mapped file's pass reads bytes again (the allocator
//! evidence's catch-up, `crate::mainpass`), a stream cannot: until the
//! evidence settles the allocator build ([`Settle`]: the batches so far
//! scaled by the declared size, or by the keys the dump announces), every
//! key is folded for both builds from one decoding ([`batch_facts_both`]);
//! from there, for the settled build alone ([`batch_facts_settled`]). The
//! whole dump's evidence decides at the end, as on the file; the strict
//! settling makes it the settled build all but always, and the report is
//! then the mapped file's, byte for byte ([`settled_elsewhere`] when not).
//!
//! The evidence samples keys on a dump of `Options::sample_evidence_from`
//! bytes or more and estimates every key on a smaller one; a stream's
//! size, unless declared, is known only at its end. So within that many
//! bytes every key is estimated for both builds, those the filters leave
//! out too, and summed exactly beside the sample, and the build does not
//! settle there ([`Settle`]): a stream that ends there is decided by every
//! key's evidence, as a file of its size is, and a longer one by the
//! sample. Nothing is held back or read again.
//!
//! The report cannot say how far a stream was folded for both builds (it
//! is the file's): `Options::notes` is told, for a stream the size of a
//! sampled dump or more ([`both_builds_note`]).

use std::io::{self, Read};
use std::sync::{Mutex, OnceLock};

use rayon::iter::{IntoParallelIterator, ParallelIterator};
use rdblens_parser::{ChecksumStatus, Crc64Digest, ErrorKind, Rdb, Record, Scratch};

use crate::allocator::Sums;
use crate::early::EarlyEvidence;
use crate::error::{guarded, AnalysisError};
use crate::mainpass::summary_of;
use crate::pipeline::{
    batch_facts, batch_facts_both, batch_facts_settled, batch_span, prepare, AllocatorPass, Prepared,
};
use crate::walker::{KnownLens, WalkOutcome};
use rdblens_memory::allocator::{Basis, Choice};
use rdblens_summary::Options;
use rdblens_summary::{Checksum, ChecksumMismatch, KeyStats, Summary};

mod in_order;
pub use in_order::{stream_keys_in_order, stream_needs_evidence};

/// Bytes a chunk holds (more only when one record is longer). Half a
/// core's L2: the worker that walked a chunk to cut it decodes it while
/// its bytes are still there. Chunks of 4 MiB were decoded from L3 or
/// memory (each record's first byte a miss), and took 5 % more CPU.
const CHUNK_BYTES: usize = 512 << 10;

/// A buffer given back with more capacity than this (it held a giant
/// record) is dropped, not kept for the next chunk.
const KEEP_CAPACITY: usize = 2 * CHUNK_BYTES;

/// Read before the aux fields are looked for (they are the first records).
const HEAD_BYTES: usize = 64 << 10;

/// Analyses the dump `source` gives, read once as it arrives; `size` is
/// its length when declared before it is read (an object's
/// `Content-Length`, a replication body's `$<len>`), trusted for the
/// evidence's sample and the early settling of the allocator build. A read
/// error ends the stream there (the walk then says where the dump stops
/// short).
pub fn analyze_stream(
    source: &mut (dyn Read + Send),
    size: Option<u64>,
    path: &str,
    opts: &Options,
) -> Result<Summary, AnalysisError> {
    guarded(|| analyze_sized(source, size, path, opts, CHUNK_BYTES))
}

/// [`analyze_stream`] of a stream of unknown size with chunks of
/// `chunk_bytes` (tests cut records at every kind of place with small
/// ones).
#[cfg(test)]
fn analyze(
    source: &mut (dyn Read + Send),
    path: &str,
    opts: &Options,
    chunk_bytes: usize,
) -> Result<Summary, AnalysisError> {
    analyze_sized(source, None, path, opts, chunk_bytes)
}

/// [`analyze_stream`] with chunks of `chunk_bytes`.
fn analyze_sized(
    source: &mut (dyn Read + Send),
    size: Option<u64>,
    path: &str,
    opts: &Options,
    chunk_bytes: usize,
) -> Result<Summary, AnalysisError> {
    let (feed, head, header) = Feed::start(source, opts.progress.clone());
    let p = prepare(&header, opts, None, AllocatorPass::Streamed)?;
    // The checksum covers the magic too (`prepare` read it whole).
    let mut crc = Crc64Digest::new();
    crc.update(&head[..9]);
    let settle = Settle::new(&p, opts, size, opts.sample_evidence_from as u64);
    let walker = Mutex::new(ChunkWalker::new(p.rdb, feed, head, crc, chunk_bytes));
    let spare = Mutex::new(Vec::new());
    let workers = run(&p, opts, &walker, &spare, &settle);
    let walker = walker
        .into_inner()
        .map_err(|_| AnalysisError::Internal("a worker panicked walking the stream".into()))?;
    let (outcome, size, read_error) = walker.finish();
    let mut parts: [Vec<KeyStats>; 2] = [Vec::new(), Vec::new()];
    let mut evidence = Sums::default();
    for w in workers {
        for (mine, theirs) in parts.iter_mut().zip(w.stats) {
            mine.extend(theirs);
        }
        evidence = evidence.merge(w.evidence);
    }
    let mut p = p;
    let mut settled_apart = None;
    let build = match p.deferred.take() {
        Some(d) => {
            // A stream smaller than a sampled dump summed every key exactly
            // (it cannot have settled: `Settle::add`), as its file would.
            let exact = settle.summed_every_key(size);
            let (settled, settled_keys) = settle.settled.into_inner().unzip();
            let choice = if exact {
                evidence.decide_exact(&p.profile, d.used_mem)
            } else {
                evidence.decide(&p.profile, d.used_mem)
            };
            let choice = match settled {
                Some(settled) if settled.quantum != choice.quantum => {
                    let (kept, warning) = settled_elsewhere(settled, choice);
                    settled_apart = Some(warning);
                    kept
                }
                _ => choice,
            };
            // Within the size a sampled dump starts at, both builds' fold is cheap.
            if let (Some(notes), true) = (&opts.notes, size >= opts.sample_evidence_from as u64) {
                // Settled apart, the warning says which flag gives the file's figures.
                let advise = choice.basis == Basis::UsedMem && settled_apart.is_none();
                let note = both_builds_note(path, settled_keys, outcome.keys, choice.quantum, advise);
                notes.tell(note);
            }
            p.profile.quantum = choice.quantum;
            p.allocator = choice;
            usize::from(p.profile.quantum == 16)
        }
        None => 0,
    };
    let mut parts = std::mem::take(&mut parts[build]).into_iter();
    let mut stats = parts
        .next()
        .unwrap_or_else(|| KeyStats::new(&p.settings).keeping(p.accumulators));
    for part in parts {
        stats.merge(part);
    }
    let mut summary = summary_of(path, p, stats, outcome, opts, Some(size));
    if let (Some(warning), Some(file)) = (settled_apart, summary.files.first_mut()) {
        file.warnings.push(warning);
    }
    warn_of(&mut summary, read_error, size);
    Ok(summary)
}

/// The note for a stream of `keys` keys folded for both allocator builds
/// up to the first `settled` of them (`None`: to its end), where the
/// evidence picked quantum `q`: that much of it cost two estimates and
/// two folds per key, which `--jemalloc-quantum` spares where the build
/// is known (named when `advise`: `used-mem` fits it).
fn both_builds_note(path: &str, settled: Option<u64>, keys: u64, q: u64, advise: bool) -> String {
    let how_far = match settled {
        Some(settled) if settled < keys => {
            let share = 100.0 * settled as f64 / keys.max(1) as f64;
            format!("until the evidence settled quantum {q}, after the first {settled} of its {keys} keys ({share:.0} %)")
        }
        _ => format!("to its end, where the evidence decided quantum {q}"),
    };
    let advice = if advise {
        format!("; where the server's build is known, --jemalloc-quantum {q} reads its dumps for one build from the start")
    } else {
        String::new()
    };
    format!("{path}: read for both jemalloc builds (quantum 8 and 16) {how_far}{advice}")
}

/// The choice a stream keeps when the build it settled from its first part
/// (`settled`) is not the one the whole dump's evidence picks (`whole`):
/// the settled one, whose figures it folded alone, and a warning naming
/// both and where it settled. The 3-standard-error margins make this all
/// but impossible; a database announced after the settling is the likelier
/// cause (docs/streaming.md).
fn settled_elsewhere(settled: Choice, whole: Choice) -> (Choice, String) {
    let (s, w) = (settled.quantum, whole.quantum);
    let warning = format!(
        "the stream settled the allocator build on quantum {s} ({}) from its first part ({}), and \
         estimated the keys after that for that build alone; the whole dump's evidence picks quantum {w} \
         ({}: {}). The figures assume quantum {s}; the same dump as a file is reported for quantum {w} \
         (pass --jemalloc-quantum {w} to have those figures from the stream)",
        settled.allocator(),
        settled.reason,
        whole.allocator(),
        whole.reason,
    );
    let kept = Choice {
        reason: format!(
            "{} (settled from the stream's first part; the whole dump's evidence picks quantum {w})",
            settled.reason
        ),
        predicted: whole.predicted,
        ..settled
    };
    (kept, warning)
}

/// The allocator build settled from the stream's first part, as the
/// mapped file's pass settles it ([`EarlyEvidence`]): the batches'
/// evidence in file order, scaled by the declared size (each batch by the
/// bytes it spans), or else by the keys the dump announces (each batch by
/// its keys; see `crate::early` for why either is a valid estimator).
/// Once settled, each key is estimated and folded for that build alone,
/// and the other build's accumulators are dropped; the evidence of every
/// key is still summed, and the whole dump's decides at the end.
///
/// Where the size is unknown and a database's keys come with no RESIZEDB
/// before them, the stream does not settle early from there on (it folds
/// both builds to the end, as it did before it could settle). A database
/// announced after the settling shows the total it scaled to fell short:
/// the settling stands (the other build's sums are gone), and only the
/// end's comparison can tell it was wrong (docs/streaming.md).
///
/// A stream of unknown size may prove smaller than a sampled dump
/// (`Options::sample_evidence_from` bytes), whose evidence is every key's,
/// estimated for both builds, and decides only at the end: so it does not
/// settle within that many bytes, and sums every key there exactly
/// ([`Self::every_key`]).
struct Settle {
    evidence: Option<Mutex<EarlyEvidence>>,
    /// The declared size, when batches are scaled by bytes.
    size: Option<u64>,
    /// The size from which a dump's evidence samples keys.
    below: u64,
    /// The build settled, and the keys (in file order) whose evidence
    /// settled it.
    settled: OnceLock<(Choice, u64)>,
}

impl Settle {
    /// For `p`'s stream of `size` bytes if declared, sampled from `below`
    /// bytes: no settling when the evidence is not summed, or when a
    /// declared size is a small dump's (every key's evidence, at the end).
    fn new(p: &Prepared<'_>, opts: &Options, size: Option<u64>, below: u64) -> Settle {
        let evidence = p
            .deferred
            .as_ref()
            .filter(|_| size.is_none_or(|size| size >= below))
            .map(|d| {
                let total = size.unwrap_or(0);
                Mutex::new(match opts.settle_evidence_after {
                    Some((batches, q)) => EarlyEvidence::forced(d.used_mem, &p.profile, total, batches, q),
                    None => EarlyEvidence::new(d.used_mem, &p.profile, total).strict(),
                })
            });
        Settle {
            evidence,
            size,
            below,
            settled: OnceLock::new(),
        }
    }

    /// Whether every key of `chunk` is estimated for both builds, those
    /// the filters leave out too: it lies within the size a sampled dump
    /// starts at, and no declared size says the stream is longer, so it
    /// may yet prove smaller than a sampled dump.
    fn every_key(&self, chunk: &Chunk) -> bool {
        chunk.end() <= self.below && self.declared_small()
    }

    /// Whether no declared size says the stream is a sampled dump's.
    fn declared_small(&self) -> bool {
        self.size.is_none_or(|declared| declared < self.below)
    }

    /// Whether a stream that ended after `size` bytes summed every key's
    /// evidence exactly, as a file of that size does: smaller than a
    /// sampled dump, every chunk estimated whole ([`Self::every_key`]),
    /// and never settled.
    fn summed_every_key(&self, size: u64) -> bool {
        size < self.below && self.declared_small() && self.settled.get().is_none()
    }

    /// The settled build's quantum, once settled.
    fn build(&self) -> Option<u64> {
        self.settled.get().map(|(c, _)| c.quantum)
    }

    /// Adds the evidence of batch `index` of `chunk` (its keys `batch`).
    fn add(&self, chunk: &Chunk, index: usize, batch_entries: usize, batch: &[Record<'_>], sums: &Sums) {
        let Some(evidence) = &self.evidence else { return };
        if self.settled.get().is_some() {
            return;
        }
        let seq = chunk.first_key + (index * batch_entries) as u64;
        let keys = batch.len() as u64;
        let (weight, total) = match self.size {
            Some(size) => (batch_span(batch), Some(size)),
            None => (keys, chunk.announced),
        };
        let settles = self.size.is_some() || chunk.end() > self.below;
        // A poisoned lock: another worker panicked, which ends the pass.
        let Ok(mut evidence) = evidence.lock() else { return };
        let batch = sums.batch_evidence();
        if let Some(choice) = evidence.add_weighted((seq, seq + keys), weight, total, settles, batch) {
            // Batches are numbered by their first key's place: the next
            // one to fold is the count of keys folded.
            let _ = self.settled.set((choice, evidence.next_seq()));
        }
    }
}

/// The walk says where the dump stops; this says why, when a read failed.
fn warn_of(summary: &mut Summary, read_error: Option<io::Error>, size: u64) {
    if let (Some(e), Some(file)) = (read_error, summary.files.first_mut()) {
        file.warnings
            .push(format!("reading the stream failed after {size} bytes: {e}"));
    }
}

/// How a stream walked in file order ([`walk_stream`]) ended.
#[derive(Debug)]
pub struct StreamEnd {
    /// Bytes the stream held (read to its end, past where the walk stopped).
    pub size: u64,
    /// Where and why the records stopped short of the EOF record.
    pub error: Option<rdblens_parser::Error>,
    /// The read error that ended the stream, if one did.
    pub read_error: Option<io::Error>,
    /// What the trailing checksum says, once the EOF record came.
    pub checksum: Option<ChecksumStatus>,
    /// Bytes after the EOF record and its checksum.
    pub trailing: u64,
    /// The file's format and its magic (the first 9 bytes), when its
    /// header could be read.
    pub format: Option<(rdblens_parser::Format, Vec<u8>)>,
}

/// Walks the records of the dump `source` gives, in file order, read once
/// as it arrives (`rdblens check` on a pipe or a compressed dump): `each`
/// gets every record whole, with the file's offsets, until the EOF
/// record or damage. Its first error stops the walk, and is returned
/// beside how the stream ended (read to its end all the same, for its
/// size). Memory is a chunk of records, or the largest single record.
pub fn walk_stream<E>(
    source: &mut (dyn Read + Send),
    skip_unknown: bool,
    each: impl FnMut(Record<'_>) -> Result<(), E>,
) -> (StreamEnd, Option<E>) {
    walk_chunks(source, skip_unknown, CHUNK_BYTES, each)
}

/// [`walk_stream`] with chunks of `chunk_bytes` (tests cut records at
/// every kind of place with small ones).
fn walk_chunks<E>(
    source: &mut (dyn Read + Send),
    skip_unknown: bool,
    chunk_bytes: usize,
    mut each: impl FnMut(Record<'_>) -> Result<(), E>,
) -> (StreamEnd, Option<E>) {
    let (mut feed, head, header) = Feed::start(source, None);
    let format = if skip_unknown {
        Rdb::new_allowing_newer(&header)
    } else {
        Rdb::new(&header)
    };
    let format = match format {
        Ok(format) => format,
        Err(e) => {
            feed.drain();
            let end = StreamEnd {
                size: feed.read,
                error: Some(e),
                read_error: feed.error,
                checksum: None,
                trailing: 0,
                format: None,
            };
            return (end, None);
        }
    };
    let mut crc = Crc64Digest::new();
    crc.update(&head[..9]);
    let mut walker = ChunkWalker::new(format, feed, head, crc, chunk_bytes);
    let mut spare = None;
    let mut stopped = None;
    while let Some(chunk) = walker.next_chunk(spare.take()) {
        let mut records = format.records_in(&chunk.bytes[chunk.from..], chunk.base, chunk.db);
        let mut cursor = 0;
        // Whole records, walked before: an error here is one the walk recorded.
        while let Some(Ok(record)) = chunk.lens.next_record(&mut records, &mut cursor) {
            if let Err(e) = each(record) {
                stopped = Some(e);
                break;
            }
        }
        if stopped.is_some() {
            break;
        }
        if chunk.bytes.capacity() <= KEEP_CAPACITY {
            spare = Some(chunk.bytes);
        }
    }
    let (checksum, eof_end) = (walker.checksum_status, walker.eof_end);
    let (outcome, size, read_error) = walker.finish();
    let end = StreamEnd {
        size,
        error: outcome.error,
        read_error,
        checksum,
        trailing: eof_end.map_or(0, |end| size.saturating_sub(end)),
        format: Some((format.format(), header[..9].to_vec())),
    };
    (end, stopped)
}

/// The bytes before the first key (the header and aux fields: what
/// [`prepare`] reads), reading more into `head` until they are whole.
fn read_header(feed: &mut Feed<'_>, head: &mut Vec<u8>) -> Vec<u8> {
    loop {
        let end = match Rdb::new_allowing_newer(head) {
            Ok(rdb) => first_key(&rdb),
            // Not an RDB header: `prepare` says why.
            Err(_) => Some(head.len()),
        };
        match end {
            Some(end) => return head[..end].to_vec(),
            None if feed.ended => return head.clone(),
            None => {
                let more = head.len().max(HEAD_BYTES);
                feed.fill(head, more);
            }
        }
    }
}

/// Where the records before the first key end, if `rdb` holds them whole
/// (a walk stops at the first key, the end, or damage that more bytes
/// would not mend).
fn first_key(rdb: &Rdb<'_>) -> Option<usize> {
    let mut records = rdb.records();
    loop {
        let at = records.offset() as usize;
        match records.next() {
            Some(Ok(Record::Entry(_))) | None => return Some(at),
            Some(Ok(Record::Eof(_))) => return Some(records.offset() as usize),
            Some(Ok(_)) => {}
            Some(Err(e)) if matches!(e.kind(), ErrorKind::Truncated { .. }) => return None,
            Some(Err(_)) => return Some(at),
        }
    }
}

/// The source, and what has come of it.
struct Feed<'s> {
    source: &'s mut (dyn Read + Send),
    /// Bytes read so far.
    read: u64,
    /// The source has nothing more (its end, or a read error).
    ended: bool,
    /// The read error that ended it.
    error: Option<io::Error>,
    progress: Option<rdblens_summary::Progress>,
}

impl<'s> Feed<'s> {
    /// A feed of `source` (its progress shown by `progress`), and what it
    /// gave first: the bytes read until the first key (`head`), and the
    /// header and aux fields among them, whole (what [`prepare`] reads).
    fn start(
        source: &'s mut (dyn Read + Send),
        progress: Option<rdblens_summary::Progress>,
    ) -> (Feed<'s>, Vec<u8>, Vec<u8>) {
        let mut feed = Feed {
            source,
            read: 0,
            ended: false,
            error: None,
            progress,
        };
        let mut head = Vec::new();
        feed.fill(&mut head, HEAD_BYTES);
        let header = read_header(&mut feed, &mut head);
        (feed, head, header)
    }

    /// Appends up to `want` bytes to `buf`: fewer only at the end.
    fn fill(&mut self, buf: &mut Vec<u8>, want: usize) {
        if self.ended || want == 0 {
            return;
        }
        let before = buf.len();
        // `want` may be far more than will come (a stream that ends sooner).
        buf.reserve(want.min(CHUNK_BYTES));
        let got = match (&mut *self.source).take(want as u64).read_to_end(buf) {
            Ok(n) => n,
            Err(e) => {
                self.error = Some(e);
                self.ended = true;
                buf.len() - before
            }
        };
        self.read += got as u64;
        if got < want {
            self.ended = true;
        }
        if let Some(p) = &self.progress {
            p.report(self.read);
        }
    }

    /// Reads what is left, for the count of bytes (a dump whose walk
    /// stopped early, or that has bytes after its end).
    fn drain(&mut self) {
        let mut sink = vec![0u8; 1 << 16];
        while !self.ended {
            match self.source.read(&mut sink) {
                Ok(0) => self.ended = true,
                Ok(n) => self.read += n as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.error = Some(e);
                    self.ended = true;
                }
            }
        }
        if let Some(p) = &self.progress {
            p.report(self.read);
        }
    }
}

/// A part of the stream holding whole records: `bytes[from..]` starts at
/// file offset `base`, in database `db`.
struct Chunk {
    bytes: Vec<u8>,
    from: usize,
    base: u64,
    db: u64,
    /// Each entry's offset and record length, as the walk that cut the
    /// chunk found them: the worker takes the values whole instead of
    /// walking them again to find where they end.
    lens: KnownLens,
    /// The place of its first key among the dump's keys: its batches'
    /// numbers in the early evidence ([`Settle`]).
    first_key: u64,
    /// The keys the dump announced up to its end, if every database so
    /// far announced its own ([`crate::walker::Announced`]).
    announced: Option<u64>,
}

impl Chunk {
    /// The file offset after its last byte.
    fn end(&self) -> u64 {
        self.base + (self.bytes.len() - self.from) as u64
    }
}

/// Finds where whole records end in the bytes read so far and hands them
/// out, a chunk at a time (the workers take turns at it).
struct ChunkWalker<'s> {
    /// The file's format (its header).
    format: Rdb<'s>,
    feed: Feed<'s>,
    /// Bytes read and not handed out: `pending[start..]`, at file offset
    /// `base`, in database `db`.
    pending: Vec<u8>,
    start: usize,
    base: u64,
    db: u64,
    /// The checksum of the bytes handed out.
    crc: Crc64Digest,
    out: WalkOutcome,
    done: bool,
    /// Bytes a chunk holds (more only when one record is longer).
    chunk_bytes: usize,
    /// The entries the last walk found whole: (offset, record length).
    lens: Vec<(u64, u64)>,
    /// What the trailing checksum said, and where the trailer ended.
    checksum_status: Option<ChecksumStatus>,
    eof_end: Option<u64>,
}

/// What a walk of the pending bytes found.
enum Walked {
    /// Whole records up to this many bytes past `start`, the database
    /// after them, and whether the walk ended there (the EOF record, or
    /// damage more bytes would not mend).
    Records(usize, u64, bool),
    /// No record is whole yet: at least this many more bytes are needed
    /// (what the read that fell short lacked).
    Short(u64),
}

impl<'s> ChunkWalker<'s> {
    /// A walker of the records after the magic in `head` (the bytes `feed`
    /// gave so far), the magic summed in `crc` already.
    fn new(format: Rdb<'s>, feed: Feed<'s>, head: Vec<u8>, crc: Crc64Digest, chunk_bytes: usize) -> Self {
        ChunkWalker {
            format,
            feed,
            pending: head,
            start: 9,
            base: 9,
            db: 0,
            crc,
            out: WalkOutcome::default(),
            done: false,
            chunk_bytes,
            lens: Vec::new(),
            checksum_status: None,
            eof_end: None,
        }
    }

    /// The next chunk of whole records, in `spare` (a buffer given back)
    /// or a new one; `None` at the end.
    fn next_chunk(&mut self, spare: Option<Vec<u8>>) -> Option<Chunk> {
        loop {
            if self.done {
                return None;
            }
            let have = self.pending.len() - self.start;
            if have < self.chunk_bytes && !self.feed.ended {
                self.compact();
                self.feed.fill(&mut self.pending, self.chunk_bytes - have);
            }
            match self.walk() {
                Walked::Records(0, _, _) => {
                    self.done = true;
                    return None;
                }
                Walked::Records(len, db, ended) => {
                    self.done = ended;
                    return Some(self.cut(len, db, spare));
                }
                Walked::Short(lacking) => {
                    // A record longer than the buffer: grow it to hold it,
                    // by what the value lacks (a string's whole length) and
                    // no more, or by half again (a collection's elements
                    // come one at a time), so that a giant value costs its
                    // own size, not the next power of two.
                    self.compact();
                    let lacking = usize::try_from(lacking).unwrap_or(usize::MAX);
                    let more = lacking.max(self.chunk_bytes).max(self.pending.len() / 2);
                    // A damaged length may claim more than memory holds:
                    // then the buffer grows only as bytes come.
                    let _ = self.pending.try_reserve_exact(more);
                    self.feed.fill(&mut self.pending, more);
                }
            }
        }
    }

    /// Moves the pending bytes to the front of the buffer, and gives back
    /// the room a long record or the stream's first bytes took once it is
    /// no longer needed.
    fn compact(&mut self) {
        if self.start > 0 {
            self.pending.drain(..self.start);
            self.start = 0;
        }
        if self.pending.capacity() > KEEP_CAPACITY && self.pending.len() < self.chunk_bytes {
            self.pending.shrink_to(2 * self.chunk_bytes);
        }
    }

    /// Walks the pending bytes, counting what the walk outcome counts for
    /// the records it finds whole (up to a chunk's bytes of them, or one).
    fn walk(&mut self) -> Walked {
        let bytes = &self.pending[self.start..];
        let mut records = self.format.records_in(bytes, self.base, self.db);
        let (mut end, mut db) = (0usize, self.db);
        let mut counts = (0u64, 0u64, 0u64);
        let mut eof = None;
        let mut ended = false;
        self.lens.clear();
        // Committed with the counts (a walk that falls short is walked again).
        let mut announced = self.out.announced.clone();
        let mut key_db = None;
        while end < self.chunk_bytes {
            match records.next() {
                None => {
                    ended = true;
                    break;
                }
                Some(Ok(record)) => {
                    match &record {
                        Record::Entry(e) => {
                            counts.0 += 1;
                            self.lens.push((e.offset, e.record_len));
                            if key_db != Some(e.db) {
                                key_db = Some(e.db);
                                announced.key_in(e.db);
                            }
                        }
                        Record::ResizeDb { db_size, .. } => announced.resize(records.current_db(), *db_size),
                        Record::Function { .. } | Record::FunctionPreGa { .. } => counts.1 += 1,
                        Record::ModuleAux(_) => counts.2 += 1,
                        Record::Eof(e) => eof = Some((e.offset, e.checksum)),
                        _ => {}
                    }
                    end = (records.offset() - self.base) as usize;
                    db = records.current_db();
                    if eof.is_some() {
                        ended = true;
                        break;
                    }
                }
                Some(Err(e)) => {
                    let lacking = match *e.kind() {
                        ErrorKind::Truncated {
                            needed, available, ..
                        } if !self.feed.ended => Some(needed.saturating_sub(available)),
                        _ => None,
                    };
                    if let Some(lacking) = lacking {
                        if end == 0 {
                            return Walked::Short(lacking);
                        }
                    } else {
                        self.out.error = Some(e);
                        ended = true;
                    }
                    break;
                }
            }
        }
        self.out.keys += counts.0;
        self.out.functions += counts.1;
        self.out.module_aux += counts.2;
        self.out.announced = announced;
        if let Some((offset, stored)) = eof {
            self.checksum(offset, stored);
            self.eof_end = Some(self.base + end as u64);
        }
        Walked::Records(end, db, ended)
    }

    /// The trailer's checksum against the bytes up to and including the
    /// EOF opcode at `offset` (hashed as the chunks leave, the rest here).
    fn checksum(&mut self, offset: u64, stored: Option<u64>) {
        let eof = rdblens_parser::Eof {
            offset,
            checksum: stored,
            trailing: &[],
        };
        let upto = self.start + (offset + 1 - self.base) as usize;
        let (crc, pending, start) = (&mut self.crc, &self.pending, self.start);
        let status = self.format.checksum_status_with(&eof, || {
            let mut crc = std::mem::take(crc);
            crc.update(&pending[start..upto]);
            crc.finish()
        });
        self.checksum_status = Some(status);
        if let ChecksumStatus::Mismatch { stored, computed } = status {
            self.out.checksum_mismatch = Some(ChecksumMismatch {
                stored,
                computed,
                eof_offset: offset,
            });
        }
        self.out.checksum = Some(match status {
            ChecksumStatus::Valid(_) => Checksum::Valid,
            ChecksumStatus::Mismatch { .. } => Checksum::Mismatch,
            ChecksumStatus::Disabled => Checksum::Disabled,
            ChecksumStatus::Absent => Checksum::Absent,
        });
    }

    /// Hands out the first `len` pending bytes (whole records, in database
    /// `db` after them): the buffer itself when what follows is shorter
    /// (copied to `spare`), else a copy into `spare`.
    fn cut(&mut self, len: usize, db: u64, spare: Option<Vec<u8>>) -> Chunk {
        let (start, end) = (self.start, self.start + len);
        if self.out.checksum.is_none() {
            self.crc.update(&self.pending[start..end]);
        }
        let mut other = spare.unwrap_or_default();
        other.clear();
        // The walk has counted this chunk's keys.
        let first_key = self.out.keys - self.lens.len() as u64;
        let announced = self.out.announced.total();
        let lens: KnownLens = self.lens.drain(..).collect();
        let chunk = if self.pending.len() - end <= len {
            other.extend_from_slice(&self.pending[end..]);
            let mut bytes = std::mem::replace(&mut self.pending, other);
            bytes.truncate(end);
            self.start = 0;
            Chunk {
                bytes,
                from: start,
                base: self.base,
                db: self.db,
                lens,
                first_key,
                announced,
            }
        } else {
            other.extend_from_slice(&self.pending[start..end]);
            self.start = end;
            Chunk {
                bytes: other,
                from: 0,
                base: self.base,
                db: self.db,
                lens,
                first_key,
                announced,
            }
        };
        self.base += len as u64;
        self.db = db;
        chunk
    }

    /// What the walk found, the stream's size (read to its end), and the
    /// read error that ended it, if one did.
    fn finish(mut self) -> (WalkOutcome, u64, Option<io::Error>) {
        self.feed.drain();
        self.stop()
    }

    /// [`Self::finish`] with the stream read no further: its size is
    /// what was read.
    fn stop(self) -> (WalkOutcome, u64, Option<io::Error>) {
        (self.out, self.feed.read, self.feed.error)
    }
}

/// One worker's accumulators: by build (quantum 8, then 16) when the
/// evidence decides it at the end, else the first only.
struct Worker {
    stats: [Option<KeyStats>; 2],
    evidence: Sums,
    scratch: Scratch,
    key_buf: Vec<u8>,
}

/// Every worker takes chunks from `walker` and folds them until the end,
/// giving their buffers back to `spare` to be filled again.
fn run(
    p: &Prepared<'_>,
    opts: &Options,
    walker: &Mutex<ChunkWalker<'_>>,
    spare: &Mutex<Vec<Vec<u8>>>,
    settle: &Settle,
) -> Vec<Worker> {
    let work = || {
        let mut worker = Worker {
            stats: [None, None],
            evidence: Sums::default(),
            scratch: Scratch::new(),
            key_buf: Vec::new(),
        };
        loop {
            // A poisoned lock: another worker panicked, which ends the pass.
            let given = spare.lock().ok().and_then(|mut s| s.pop());
            let Some(chunk) = walker.lock().ok().and_then(|mut w| w.next_chunk(given)) else {
                break;
            };
            worker.fold_chunk(p, opts, &chunk, settle);
            if chunk.bytes.capacity() <= KEEP_CAPACITY {
                if let Ok(mut s) = spare.lock() {
                    s.push(chunk.bytes);
                }
            }
        }
        for stats in worker.stats.iter_mut().flatten() {
            stats.finish();
        }
        worker
    };
    if p.threads == 1 {
        vec![work()]
    } else {
        p.pool
            .install(|| (0..p.threads).into_par_iter().map(|_| work()).collect())
    }
}

impl Worker {
    /// Walks `chunk` into batches of `opts.batch_entries` keys and folds
    /// each (one vector per chunk, reused batch after batch).
    fn fold_chunk(&mut self, p: &Prepared<'_>, opts: &Options, chunk: &Chunk, settle: &Settle) {
        let batch_entries = opts.batch_entries.max(1);
        let mut batch = Vec::with_capacity(batch_entries);
        let batch = &mut batch;
        let mut index = 0;
        // With the evidence, every key counts toward it: the filter is the fold's.
        let every_key = p.deferred.is_some();
        // Whole records, walked before: an error here is one the walk recorded.
        let mut records = p.rdb.records_in(&chunk.bytes[chunk.from..], chunk.base, chunk.db);
        let mut cursor = 0;
        while let Some(Ok(record)) = chunk.lens.next_record(&mut records, &mut cursor) {
            if let Record::Entry(e) = &record {
                if every_key || opts.filter.admits_entry(e) {
                    batch.push(record);
                    if batch.len() >= batch_entries {
                        self.fold(p, opts, batch, (settle, chunk, index));
                        index += 1;
                        batch.clear();
                    }
                }
            }
        }
        if !batch.is_empty() {
            self.fold(p, opts, batch, (settle, chunk, index));
            batch.clear();
        }
    }

    /// Folds `batch`, batch `index` of `chunk`: for the one build decided
    /// before the stream, else for both builds until `settle` has settled
    /// one, then for that one alone; either way its evidence goes to
    /// `settle` and the whole dump's sums.
    fn fold(
        &mut self,
        p: &Prepared<'_>,
        opts: &Options,
        batch: &[Record<'_>],
        (settle, chunk, index): (&Settle, &Chunk, usize),
    ) {
        let header_counts = !p.accumulators.read_lengths();
        let new_stats = || KeyStats::new(&p.settings).keeping(p.accumulators);
        match &p.deferred {
            None => {
                let stats = self.stats[0].get_or_insert_with(new_stats);
                batch_facts(
                    header_counts,
                    &mut self.scratch,
                    &mut self.key_buf,
                    &p.profile,
                    &opts.filter,
                    p.settings.now_ms,
                    batch,
                    None,
                    None,
                    |r| match r {
                        Ok(facts) => stats.add(facts),
                        Err(d) => stats.add_damage(d),
                    },
                );
            }
            Some(d) => {
                let mut sums = Sums::default();
                if let Some(quantum) = settle.build() {
                    let build = usize::from(quantum == 16);
                    // The other build's figures will never be reported.
                    self.stats[1 - build] = None;
                    let stats = self.stats[build].get_or_insert_with(new_stats);
                    batch_facts_settled(
                        header_counts,
                        &mut self.scratch,
                        &mut self.key_buf,
                        d,
                        quantum,
                        &opts.filter,
                        p.settings.now_ms,
                        batch,
                        &mut sums,
                        |r| match r {
                            Ok(facts) => stats.add(facts),
                            Err(d) => stats.add_damage(d),
                        },
                    );
                } else {
                    let [s8, s16] = &mut self.stats;
                    let (s8, s16) = (
                        s8.get_or_insert_with(new_stats),
                        s16.get_or_insert_with(new_stats),
                    );
                    batch_facts_both(
                        header_counts,
                        &mut self.scratch,
                        &mut self.key_buf,
                        d,
                        settle.every_key(chunk),
                        &opts.filter,
                        p.settings.now_ms,
                        batch,
                        &mut sums,
                        |build, r| {
                            let stats = if build == 0 { &mut *s8 } else { &mut *s16 };
                            match r {
                                Ok(facts) => stats.add(facts),
                                Err(d) => stats.add_damage(d.clone()),
                            }
                        },
                    );
                }
                settle.add(chunk, index, opts.batch_entries.max(1), batch, &sums);
                self.evidence = std::mem::take(&mut self.evidence).merge(sums);
            }
        }
    }
}

#[cfg(test)]
mod tests;
