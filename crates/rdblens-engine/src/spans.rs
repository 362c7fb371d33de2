//! Batches an earlier walk found, parsed again where they lie.
//!
//! The report's catch-up (`crate::mainpass`) folds again the batches the
//! main pass deferred or folded for the build that lost: on the
//! collection-heavy benchmark dump, 917 of its 1,495 batches, strewn over
//! its first 943. Walked again from the file's start, they took a second
//! serial walk and a second checksum of everything before the last of
//! them; from the offsets the main pass noted, each worker parses the next
//! one wanted where it lies, with no lock held while it parses and no
//! checksum (the main pass checked it).

use std::sync::Mutex;

use rdblens_parser::{Rdb, Record};

use crate::release::Releaser;
use crate::walker::{Batch, KnownLens};
use rdblens_summary::KeyFilter;

/// Where a batch lies: from its first entry (`start`, where that entry's
/// first byte is, in database `db`) to the end of its last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: u64,
    pub end: u64,
    pub db: u64,
}

impl Span {
    /// The span of a batch the walker handed out (`None` for an empty one).
    pub fn of(batch: &[Record<'_>]) -> Option<Span> {
        let mut entries = crate::pipeline::entries(batch);
        let first = entries.next()?;
        let last = entries.last().unwrap_or(first);
        Some(Span {
            start: first.offset,
            end: last.offset + last.record_len,
            db: first.db,
        })
    }
}

/// Numbered spans handed out in file order, each parsed by the worker
/// that takes it.
pub(crate) struct SpanQueue<'a, 'w> {
    rdb: &'w Rdb<'a>,
    spans: Vec<(u64, Span)>,
    /// Entries whose record lengths are known: their values are not
    /// walked again to find where they end.
    known: KnownLens,
    next: Mutex<usize>,
    filter: &'w KeyFilter,
    releaser: Option<&'w Releaser<'w>>,
}

impl<'a, 'w> SpanQueue<'a, 'w> {
    /// `spans` by batch number; handed out in that order. `known`: the
    /// lengths of records the first walk found.
    pub fn new(
        rdb: &'w Rdb<'a>,
        mut spans: Vec<(u64, Span)>,
        known: KnownLens,
        filter: &'w KeyFilter,
        releaser: Option<&'w Releaser<'w>>,
    ) -> Self {
        spans.sort_unstable_by_key(|(seq, _)| *seq);
        SpanQueue {
            rdb,
            spans,
            known,
            next: Mutex::new(0),
            filter,
            releaser,
        }
    }

    /// The next batch's number, its records in `batch` (emptied first; see
    /// `Walker::next_batch_into`): the entries `filter` admits as the first
    /// walk had them; `None` once all are taken (or another worker panicked
    /// holding the lock).
    pub fn next_into(&self, batch: &mut Batch<'a>) -> Option<u64> {
        batch.clear();
        let (seq, span) = {
            let mut next = self.next.lock().ok()?;
            let taken = *self.spans.get(*next)?;
            *next += 1;
            // Registered in order, under the lock: pages are released
            // behind the oldest span still in flight, as behind the walker.
            if let Some(r) = self.releaser {
                r.batch_started(taken.1.start);
                r.walked_to(taken.1.end);
            }
            taken
        };
        let mut records = self.rdb.records_at(span.start, span.db);
        let mut cursor = self.known.cursor_at(span.start);
        while let Some(record) = self.known.next_record(&mut records, &mut cursor) {
            match record {
                Ok(Record::Entry(e)) => {
                    let end = e.offset + e.record_len;
                    if self.filter.admits_entry(&e) {
                        batch.push(Record::Entry(e));
                    }
                    if end >= span.end {
                        break;
                    }
                }
                // Databases selected between entries are followed by the
                // records themselves; nothing else is in a batch.
                Ok(_) => {}
                // The first walk read these bytes without an error; the
                // same bytes read the same way (kept from a panic all the
                // same: the batch ends here).
                Err(_) => break,
            }
        }
        Some(seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walker::tests::{all_types, long_record_lens};
    use crate::walker::Walker;

    /// Where each entry of a batch, its key and its value lie.
    fn shape(batch: &Batch<'_>) -> Vec<(u64, u64, usize, u64, u64, usize)> {
        crate::pipeline::entries(batch)
            .map(|e| {
                (
                    e.offset,
                    e.db,
                    e.key.len(),
                    e.record_len,
                    e.value_offset,
                    e.value.len(),
                )
            })
            .collect()
    }

    /// Parsed again from their spans, in any order they are taken, the
    /// batches hold the entries the walk handed out: across database
    /// changes (this dump has keys in databases 0, 1 and 15), at any batch
    /// size, with entries a filter leaves out, and with the lengths of
    /// some records known (those of 100 bytes or more: taken as known,
    /// not walked).
    #[test]
    fn batches_parsed_where_they_lie_are_the_walks() {
        let data = all_types();
        let rdb = Rdb::new(&data).expect("rdb"); // ok: unit test
        let lens = long_record_lens(&rdb);
        assert_eq!(lens.len(), 36);
        let mut compared = 0;
        for (dbs, known_lens) in [vec![], vec![1, 15]]
            .into_iter()
            .flat_map(|dbs| [(dbs.clone(), KnownLens::default()), (dbs, lens.clone())])
        {
            let filter = KeyFilter {
                dbs,
                ..KeyFilter::default()
            };
            for batch_entries in [1, 3, 64, 1000] {
                let mut walker = Walker::new(&rdb, batch_entries, &filter, None, None);
                let walked: Vec<Batch<'_>> = std::iter::from_fn(|| walker.next_batch()).collect();
                assert!(walker.finish().error.is_none());
                // Every other batch, last first: the queue sorts them.
                let wanted: Vec<(u64, Span)> = (0..walked.len() as u64)
                    .rev()
                    .filter(|seq| seq % 2 == 0)
                    .map(|seq| (seq, Span::of(&walked[seq as usize]).expect("span"))) // ok: unit test
                    .collect();
                let queue = SpanQueue::new(&rdb, wanted.clone(), known_lens.clone(), &filter, None);
                // One vector handed back every time, as a worker does.
                let mut batch = Vec::new();
                let mut taken = 0;
                while let Some(seq) = queue.next_into(&mut batch) {
                    assert_eq!(seq, 2 * taken, "in order");
                    assert_eq!(shape(&batch), shape(&walked[seq as usize]));
                    compared += batch.len();
                    taken += 1;
                }
                assert_eq!(taken, wanted.len() as u64);
            }
        }
        // The entries of the even batches: of 222 keys (all walks), 111 +
        // 111 + 128 + 222; of the 9 in databases 1 and 15, 5 + 6 + 9 + 9;
        // twice (lengths known or not).
        assert_eq!(compared, 2 * (572 + 29));
    }
}
