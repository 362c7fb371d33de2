//! Finds where entries start and end (cheap: lengths are prefixed) and
//! hands them out in batches, hashing the file for its checksum on the way.
//!
//! Pulled, not pushed: workers take turns calling [`Walker::next_batch_into`]
//! under a lock and then decode the batch they walked, on the core whose
//! cache the walk (and the checksum running ahead of it) has just filled.
//! A walker thread of its own handed every batch to another core and added
//! a third busy thread to two cores.

use rdblens_parser::{ChecksumStatus, Crc64Digest, Entry, Error, Rdb, Record, Records, TypeKind};

use crate::release::Releaser;
use rdblens_summary::KeyFilter;
use rdblens_summary::Progress;
use rdblens_summary::{Checksum, ChecksumMismatch};

/// Entries handed to a worker, kept as the records the parser returned:
/// moving a 168-byte `Entry` out of its `Record` and into a vector cost the
/// walker three `memcpy` calls per key (a third of its time); a record is
/// moved once.
pub(crate) type Batch<'a> = Vec<Record<'a>>;

/// Record lengths an earlier walk found, sorted by offset: a walk again
/// takes those records whole ([`Records::next_known`]) instead of walking
/// their values to find where they end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct KnownLens(Vec<(u64, u64)>);

impl FromIterator<(u64, u64)> for KnownLens {
    /// From (offset, record length) pairs in any order.
    fn from_iter<I: IntoIterator<Item = (u64, u64)>>(pairs: I) -> Self {
        let mut lens: Vec<(u64, u64)> = pairs.into_iter().collect();
        lens.sort_unstable();
        KnownLens(lens)
    }
}

impl KnownLens {
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// A cursor at the first length at or past `offset`, for
    /// [`Self::next_record`].
    pub fn cursor_at(&self, offset: u64) -> usize {
        self.0.partition_point(|(at, _)| *at < offset)
    }

    /// The next record of `records`, its length taken if it is known.
    /// `cursor` (the first length not yet passed) moves with the walk,
    /// whose offsets only grow.
    pub fn next_record<'a>(
        &self,
        records: &mut Records<'a>,
        cursor: &mut usize,
    ) -> Option<rdblens_parser::Result<Record<'a>>> {
        let here = records.offset();
        while self.0.get(*cursor).is_some_and(|(at, _)| *at < here) {
            *cursor += 1;
        }
        match self.0.get(*cursor) {
            Some(&(at, len)) if at == here => records.next_known(len),
            _ => records.next(),
        }
    }
}

/// Bytes of values per batch: big values travel in small batches.
const BATCH_BYTES: usize = 4 << 20;

/// The progress hook is called at most once per this many bytes walked.
const PROGRESS_STEP: u64 = 4 << 20;

/// What the walker learns besides the entries.
#[derive(Default)]
pub(crate) struct WalkOutcome {
    pub keys: u64,
    pub functions: u64,
    pub module_aux: u64,
    pub checksum: Option<Checksum>,
    pub checksum_mismatch: Option<ChecksumMismatch>,
    pub error: Option<Error>,
    /// The keys the dump announced (RESIZEDB) for the databases walked so
    /// far: what a stream of unknown size scales its early evidence by
    /// (`crate::streaming`; the mapped walk leaves it empty).
    pub announced: Announced,
}

/// The keys announced by RESIZEDB, before each database's keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Announced {
    /// Their sum, over the databases in `dbs`.
    pub keys: u64,
    /// The databases announced (the first announcement of each counts).
    pub dbs: Vec<u64>,
    /// A database's keys came with no announcement before them: the sum
    /// is not the dump's.
    pub unannounced: bool,
}

impl Announced {
    /// The keys announced, if every database walked announced its own.
    pub fn total(&self) -> Option<u64> {
        (!self.unannounced).then_some(self.keys)
    }

    /// A RESIZEDB of `db_size` keys for database `db`.
    pub fn resize(&mut self, db: u64, db_size: u64) {
        if !self.dbs.contains(&db) {
            self.dbs.push(db);
            self.keys = self.keys.saturating_add(db_size);
        }
    }

    /// A key of database `db` (called where the database changes).
    pub fn key_in(&mut self, db: u64) {
        if !self.dbs.contains(&db) {
            self.unannounced = true;
        }
    }
}

/// Hashes the file for the trailer checksum a little ahead of the walker.
/// The hash reads every byte in order, which the CPU prefetches well; the
/// walker reads one header per entry and skips the values, and each header
/// it reached cold was a cache miss (two fifths of the walker's time). Run
/// ahead, the hash leaves the next headers and values in cache for the
/// walker and the workers, and the file is never read a second time at the
/// end (its pages may have been released by then).
struct RunningCrc<'a> {
    data: &'a [u8],
    digest: Crc64Digest,
    hashed: usize,
}

/// How far ahead of the walker the checksum runs: well inside a core's L2.
const CRC_LOOKAHEAD: usize = 256 << 10;

impl RunningCrc<'_> {
    fn upto(&mut self, end: usize) {
        let end = end.min(self.data.len());
        if end > self.hashed {
            self.digest.update(&self.data[self.hashed..end]);
            self.hashed = end;
        }
    }

    /// Keeps the hash [`CRC_LOOKAHEAD`] ahead of `pos`, in steps of half
    /// that, short of the 8-byte checksum a file ends with: the checksum
    /// covers everything before it.
    #[inline]
    fn ahead_of(&mut self, pos: usize) {
        if pos + CRC_LOOKAHEAD / 2 > self.hashed {
            let trailer = self.data.len().saturating_sub(8);
            self.upto((pos + CRC_LOOKAHEAD).min(trailer));
        }
    }

    /// The checksum of the bytes before `end`. The hash may have run past
    /// `end` only when bytes follow the trailer (then it starts over).
    fn finish_at(&mut self, end: usize) -> u64 {
        if self.hashed > end {
            self.digest = Crc64Digest::new();
            self.hashed = 0;
        }
        self.upto(end);
        std::mem::take(&mut self.digest).finish()
    }
}

/// The bytes of a huge string value: workers never read them (a string's
/// length, LZF header included, is all the analysis needs), so once hashed
/// they can be released while the entry is still in flight. Without this a
/// dump holding one 1 GB string kept all of it resident.
fn unread_value(e: &Entry<'_>) -> Option<(u64, u64)> {
    let len = e.value.len() as u64;
    (e.kind() == TypeKind::String && len >= crate::release::STEP)
        .then(|| (e.value_offset, e.value_offset + len))
}

/// One pass over a file's records, a batch at a time.
pub(crate) struct Walker<'a, 'w> {
    rdb: &'w Rdb<'a>,
    records: Records<'a>,
    crc: RunningCrc<'a>,
    batch_entries: usize,
    filter: &'w KeyFilter,
    progress: Option<&'w Progress>,
    releaser: Option<&'w Releaser<'w>>,
    next_report: u64,
    out: WalkOutcome,
    done: bool,
    /// Records whose lengths an earlier pass found, and the first not yet
    /// passed: their values are not walked again.
    known: KnownLens,
    known_next: usize,
}

impl<'a, 'w> Walker<'a, 'w> {
    pub fn new(
        rdb: &'w Rdb<'a>,
        batch_entries: usize,
        filter: &'w KeyFilter,
        progress: Option<&'w Progress>,
        releaser: Option<&'w Releaser<'w>>,
    ) -> Self {
        Walker {
            rdb,
            records: rdb.records(),
            crc: RunningCrc {
                data: rdb.data(),
                digest: Crc64Digest::new(),
                hashed: 0,
            },
            batch_entries: batch_entries.max(1),
            filter,
            progress,
            releaser,
            next_report: PROGRESS_STEP,
            out: WalkOutcome::default(),
            done: false,
            known: KnownLens::default(),
            known_next: 0,
        }
    }

    /// [`Self::next_batch_into`] into a new vector.
    #[cfg(test)]
    pub fn next_batch(&mut self) -> Option<Batch<'a>> {
        let mut batch = Vec::new();
        self.next_batch_into(&mut batch).then_some(batch)
    }

    /// The next batch of entries the filter admits, into `batch` (emptied
    /// first); false, with `batch` empty, once the file has ended (or
    /// stopped at damage, see [`Self::finish`]). A worker hands the same
    /// vector back batch after batch: a fresh one per batch (4,096 records,
    /// 700 KB) was new heap pages to fault in every time, and with musl's
    /// allocator an `mmap` and `munmap` per batch, which made the static
    /// musl binary's report 1.18x slower.
    pub fn next_batch_into(&mut self, batch: &mut Batch<'a>) -> bool {
        batch.clear();
        if self.done {
            return false;
        }
        batch.reserve(self.batch_entries);
        let mut batch_bytes = 0;
        loop {
            // Kept in its Option until pushed: each rebinding was a memcpy.
            self.crc.ahead_of(self.records.offset() as usize);
            let next = self.known.next_record(&mut self.records, &mut self.known_next);
            let Some(record) = &next else {
                self.done = true;
                break;
            };
            if let Some(p) = self.progress {
                if self.records.offset() >= self.next_report {
                    p.report(self.records.offset());
                    self.next_report = self.records.offset() + PROGRESS_STEP;
                }
            }
            if let Ok(Record::Entry(e)) = record {
                self.out.keys += 1;
                if !self.filter.admits_entry(e) {
                    continue;
                }
                if let (Some(r), true) = (self.releaser, batch.is_empty()) {
                    r.batch_started(e.offset);
                }
                batch_bytes += e.value.len();
                if let (Some((start, end)), Some(r)) = (unread_value(e), self.releaser) {
                    // Hashed a step at a time, each step released at once: the
                    // value is never resident as a whole.
                    let mut pos = start;
                    while pos < end {
                        let step = (pos + crate::release::STEP).min(end);
                        self.crc.upto(step as usize);
                        r.release_unread(pos, step);
                        pos = step;
                    }
                }
                if let Some(Ok(record)) = next {
                    batch.push(record);
                }
                if batch.len() >= self.batch_entries || batch_bytes >= BATCH_BYTES {
                    let offset = self.records.offset();
                    self.crc.upto(offset as usize);
                    if let Some(r) = self.releaser {
                        // The batch is registered in flight: nothing of it goes.
                        r.walked_to(offset);
                    }
                    return true;
                }
                continue;
            }
            self.other_record(record);
            if self.done {
                break;
            }
        }
        !batch.is_empty()
    }

    fn other_record(&mut self, record: &rdblens_parser::Result<Record<'a>>) {
        let out = &mut self.out;
        match record {
            Ok(Record::Function { .. }) | Ok(Record::FunctionPreGa { .. }) => out.functions += 1,
            Ok(Record::ModuleAux(_)) => out.module_aux += 1,
            Ok(Record::Eof(eof)) => {
                let (rdb, crc) = (self.rdb, &mut self.crc);
                let status = rdb.checksum_status_with(eof, || crc.finish_at(rdb.checksum_end(eof)));
                if let ChecksumStatus::Mismatch { stored, computed } = status {
                    out.checksum_mismatch = Some(ChecksumMismatch {
                        stored,
                        computed,
                        eof_offset: eof.offset,
                    });
                }
                out.checksum = Some(match status {
                    ChecksumStatus::Valid(_) => Checksum::Valid,
                    ChecksumStatus::Mismatch { .. } => Checksum::Mismatch,
                    ChecksumStatus::Disabled => Checksum::Disabled,
                    ChecksumStatus::Absent => Checksum::Absent,
                });
            }
            Ok(_) => {}
            Err(e) => {
                out.error = Some(e.clone());
                self.done = true;
            }
        }
    }

    /// What the walk found besides the entries; ends the progress bar.
    pub fn finish(self) -> WalkOutcome {
        if let Some(p) = self.progress {
            // A complete walk ends the bar at the file size (trailing bytes included).
            p.report(match self.out.error {
                Some(_) => self.records.offset(),
                None => self.rdb.data().len() as u64,
            });
        }
        self.out
    }
}

/// A [`Walker`] the workers take turns at, numbering its batches 0, 1,
/// 2... in file order (the number says which batches to fold again, or
/// in which order to hand them out).
pub(crate) struct SharedWalker<'a, 'w> {
    inner: std::sync::Mutex<(Walker<'a, 'w>, u64)>,
}

impl<'a, 'w> SharedWalker<'a, 'w> {
    /// A walk of `rdb` as `opts` batches and filters it.
    pub fn over(
        rdb: &'w Rdb<'a>,
        opts: &'w rdblens_summary::Options,
        releaser: Option<&'w Releaser<'w>>,
    ) -> Self {
        let walker = Walker::new(
            rdb,
            opts.batch_entries,
            &opts.filter,
            opts.progress.as_ref(),
            releaser,
        );
        SharedWalker {
            inner: std::sync::Mutex::new((walker, 0)),
        }
    }

    /// The walk takes the lengths of these records (by offset) as found
    /// by an earlier pass instead of walking their values: `keys`'
    /// settling pass decoded the big values of the part it read (on the
    /// collection-heavy benchmark dump, three quarters of the file), and
    /// walking a giant hash's fields again only to find where it ends was
    /// serial work under the walker's lock.
    pub fn knowing(mut self, known: KnownLens) -> Self {
        if let Ok((w, _)) = self.inner.get_mut() {
            w.known_next = known.cursor_at(w.records.offset());
            w.known = known;
        }
        self
    }

    /// The next batch and its number, if `may_take` allows its number
    /// (called under the lock, so it may wait); `None` at the end, when
    /// refused, or when another worker panicked holding the lock.
    pub fn next(&self, may_take: impl FnOnce(u64) -> bool) -> Option<(u64, Batch<'a>)> {
        let mut batch = Vec::new();
        self.next_into(may_take, &mut batch).map(|seq| (seq, batch))
    }

    /// [`Self::next`] into `batch` (see [`Walker::next_batch_into`]):
    /// the batch's number, or `None` as there.
    pub fn next_into(&self, may_take: impl FnOnce(u64) -> bool, batch: &mut Batch<'a>) -> Option<u64> {
        batch.clear();
        let mut w = self.inner.lock().ok()?;
        if !may_take(w.1) || !w.0.next_batch_into(batch) {
            return None;
        }
        w.1 += 1;
        Some(w.1 - 1)
    }

    /// The walk's outcome; `None` if a worker panicked holding the lock.
    pub fn finish(self) -> Option<WalkOutcome> {
        self.inner.into_inner().ok().map(|(w, _)| w.finish())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Valkey 7.2's dump of every type, keys in databases 0, 1 and 15.
    pub(crate) fn all_types() -> Vec<u8> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/rdb/valkey-7.2.7/all-types.rdb"
        );
        std::fs::read(path).expect("fixture") // ok: unit test
    }

    /// The lengths of `rdb`'s records of 100 bytes or more, by offset (36
    /// of [`all_types`]'), as an earlier walk would find them.
    pub(crate) fn long_record_lens(rdb: &Rdb<'_>) -> KnownLens {
        rdb.entries()
            .flatten()
            .filter(|e| e.record_len >= 100)
            .map(|e| (e.offset, e.record_len))
            .collect()
    }

    /// Where an entry and its value lie: offset, database, record length,
    /// value offset and length.
    type Shape = (u64, u64, u64, u64, usize);

    /// The shapes of each batch's entries.
    fn shapes(walker: SharedWalker<'_, '_>) -> Vec<Vec<Shape>> {
        let batches = std::iter::from_fn(|| walker.next(|_| true)).map(|(_, batch)| {
            crate::pipeline::entries(&batch)
                .map(|e| (e.offset, e.db, e.record_len, e.value_offset, e.value.len()))
                .collect()
        });
        let shapes = batches.collect();
        assert!(walker
            .finish()
            .is_some_and(|o| o.error.is_none() && o.checksum.is_some()));
        shapes
    }

    /// Told the lengths of the records of 100 bytes or more, the walk hands
    /// out the same batches as without, in two batch sizes.
    #[test]
    fn known_lengths_give_the_same_batches() {
        let data = all_types();
        let rdb = Rdb::new(&data).expect("rdb"); // ok: unit test
        let lens = long_record_lens(&rdb);
        assert_eq!(lens.len(), 36);
        for batch_entries in [1, 50] {
            let opts = rdblens_summary::Options {
                batch_entries,
                ..Default::default()
            };
            let plain = shapes(SharedWalker::over(&rdb, &opts, None));
            let knowing = shapes(SharedWalker::over(&rdb, &opts, None).knowing(lens.clone()));
            assert_eq!(plain.iter().map(Vec::len).sum::<usize>(), 222);
            assert_eq!(knowing, plain);
        }
    }

    /// One vector handed back batch after batch (as each worker of a pass
    /// does) holds the batches new vectors do, at any batch size, and is
    /// empty after the last.
    #[test]
    fn a_vector_handed_back_holds_the_batches_new_ones_do() {
        let data = all_types();
        let rdb = Rdb::new(&data).expect("rdb"); // ok: unit test
        for batch_entries in [1, 3, 50, 1000] {
            let opts = rdblens_summary::Options {
                batch_entries,
                ..Default::default()
            };
            let fresh = shapes(SharedWalker::over(&rdb, &opts, None));
            let walker = SharedWalker::over(&rdb, &opts, None);
            let mut batch = Vec::new();
            let mut reused = Vec::new();
            while let Some(seq) = walker.next_into(|_| true, &mut batch) {
                assert_eq!(seq, reused.len() as u64);
                reused.push(
                    crate::pipeline::entries(&batch)
                        .map(|e| (e.offset, e.db, e.record_len, e.value_offset, e.value.len()))
                        .collect::<Vec<Shape>>(),
                );
            }
            assert!(batch.is_empty());
            assert_eq!(reused, fresh);
            assert_eq!(reused.iter().map(Vec::len).sum::<usize>(), 222);
        }
    }

    /// A known length is taken, not walked: with a big value's first
    /// length zeroed (its bytes then read as records), a walk that knows
    /// its length still hands out every entry, one that does not goes
    /// astray.
    #[test]
    fn a_known_length_is_not_walked_again() {
        let mut data = all_types();
        let opts = rdblens_summary::Options::default();
        let (plain, lens, value) = {
            let rdb = Rdb::new(&data).expect("rdb"); // ok: unit test
            let big = rdb
                .entries()
                .flatten()
                .find(|e| e.record_len >= 1000)
                .expect("a big value"); // ok: unit test
            let lens = KnownLens::from_iter([(big.offset, big.record_len)]);
            let value = big.value_offset as usize;
            (shapes(SharedWalker::over(&rdb, &opts, None)), lens, value)
        };
        data[value] = 0;
        let rdb = Rdb::new(&data).expect("rdb"); // ok: unit test
        let knowing = shapes(SharedWalker::over(&rdb, &opts, None).knowing(lens));
        assert_eq!(knowing, plain);
        let walker = SharedWalker::over(&rdb, &opts, None);
        let astray = std::iter::from_fn(|| walker.next(|_| true))
            .map(|(_, b)| b.len())
            .sum::<usize>();
        let outcome = walker.finish().expect("finished"); // ok: unit test
        assert!(astray != 222 || outcome.error.is_some());
    }
}
