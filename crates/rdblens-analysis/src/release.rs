//! Giving the mapped file's pages back behind the slowest reader.
//!
//! Without it, every page of a mapped dump stays in the process's resident
//! set until the end: a 50 GB dump on a 32 GB machine pushes everything else
//! out of memory. The walker registers each batch where its first entry
//! starts; workers sign batches off when decoded. Everything before the
//! oldest batch still in flight (or before the walker, when none is) has
//! been read for good and is released in steps of [`STEP`] bytes.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// Bytes released at a time: large enough that the madvise calls cost
/// nothing, small enough that the resident set stays far under the RAM.
pub const STEP: u64 = 64 << 20;

/// Releases `[start, end)` of the mapped file (see `RdbFile::release`).
pub type ReleaseFn<'r> = &'r (dyn Fn(usize, usize) + Sync);

#[derive(Default)]
struct State {
    /// Start offset of every batch not yet decoded -> how many start there.
    in_flight: BTreeMap<u64, usize>,
    /// How far the walker has read.
    walked: u64,
    /// Everything before this offset has been released.
    released: u64,
}

pub(crate) struct Releaser<'r> {
    release: ReleaseFn<'r>,
    state: Mutex<State>,
}

impl<'r> Releaser<'r> {
    pub fn new(release: ReleaseFn<'r>) -> Self {
        Releaser {
            release,
            state: Mutex::new(State::default()),
        }
    }

    /// Starts over for a second pass over the file (the report's catch-up,
    /// which parses the batches it lacks where they lie): what it reads
    /// again is released behind it as the first walk's was, not left
    /// resident to the end.
    pub fn restart(&self) {
        if let Ok(mut s) = self.state.lock() {
            *s = State::default();
        }
    }

    /// The walker starts a batch whose first record begins at `start`.
    pub fn batch_started(&self, start: u64) {
        if let Ok(mut s) = self.state.lock() {
            *s.in_flight.entry(start).or_default() += 1;
        }
    }

    /// The walker has read everything before `offset`.
    pub fn walked_to(&self, offset: u64) {
        let range = self.state.lock().ok().and_then(|mut s| {
            s.walked = s.walked.max(offset);
            next_release(&mut s)
        });
        self.apply(range);
    }

    /// `[start, end)` lies inside a value no worker reads: released now,
    /// whole pages only (its first and last pages may hold bytes that are read).
    pub fn release_unread(&self, start: u64, end: u64) {
        const PAGE: u64 = 4096;
        let (first, last) = (start.div_ceil(PAGE) * PAGE, end / PAGE * PAGE);
        if first < last {
            (self.release)(first as usize, last as usize);
        }
    }

    /// A worker has decoded the batch that started at `start`.
    pub fn batch_done(&self, start: u64) {
        let range = self.state.lock().ok().and_then(|mut s| {
            if let Some(n) = s.in_flight.get_mut(&start) {
                *n -= 1;
                if *n == 0 {
                    s.in_flight.remove(&start);
                }
            }
            next_release(&mut s)
        });
        self.apply(range);
    }

    fn apply(&self, range: Option<(u64, u64)>) {
        if let Some((start, end)) = range {
            (self.release)(start as usize, end as usize);
        }
    }
}

/// The next range to release, marked released: outside the lock the madvise
/// call then cannot be issued twice.
fn next_release(s: &mut State) -> Option<(u64, u64)> {
    let low = s
        .in_flight
        .keys()
        .next()
        .copied()
        .unwrap_or(s.walked)
        .min(s.walked);
    let target = low - low % STEP;
    (target >= s.released + STEP).then(|| {
        let start = s.released;
        s.released = target;
        (start, target)
    })
}

/// Signs a batch off when dropped, also when decoding it panics.
pub(crate) struct BatchDone<'a, 'r>(pub Option<&'a Releaser<'r>>, pub u64);

impl Drop for BatchDone<'_, '_> {
    fn drop(&mut self) {
        if let Some(r) = self.0 {
            r.batch_done(self.1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_only_behind_the_oldest_batch_in_flight() {
        let calls = Mutex::new(Vec::new());
        let record = |a: usize, b: usize| calls.lock().unwrap().push((a, b)); // ok: unit test
        let r = Releaser::new(&record);
        let m = STEP;
        r.batch_started(10);
        r.walked_to(3 * m + 5);
        assert!(calls.lock().unwrap().is_empty(), "batch at 10 still in flight"); // ok: unit test
        r.batch_started(2 * m + 1);
        r.batch_done(10);
        assert_eq!(*calls.lock().unwrap(), vec![(0, 2 * m as usize)]); // ok: unit test
        r.batch_done(2 * m + 1);
        assert_eq!(calls.lock().unwrap()[1], (2 * m as usize, 3 * m as usize)); // ok: unit test
        r.walked_to(3 * m + 7);
        assert_eq!(calls.lock().unwrap().len(), 2, "nothing new past the last step"); // ok: unit test
                                                                                      // Inside an unread value: whole pages only.
        r.release_unread(10, 3 * 4096 + 5);
        assert_eq!(calls.lock().unwrap()[2], (4096, 3 * 4096)); // ok: unit test
        r.release_unread(10, 4000);
        assert_eq!(calls.lock().unwrap().len(), 3, "no whole page inside"); // ok: unit test
                                                                            // A second walk releases again what it reads again.
        r.restart();
        r.batch_started(5);
        r.walked_to(m + 9);
        r.batch_done(5);
        assert_eq!(calls.lock().unwrap()[3], (0, m as usize)); // ok: unit test
    }
}
