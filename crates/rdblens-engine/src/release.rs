//! Giving the mapped file's pages back behind the slowest reader.
//!
//! Without it, every page of a mapped dump stays in the process's resident
//! set until the end: a 50 GB dump on a 32 GB machine pushes everything else
//! out of memory. The walker registers each batch where its first entry
//! starts; workers sign batches off when decoded. Everything before the
//! oldest batch still in flight (or before the walker, when none is) has
//! been read for good and is released in steps of [`STEP`] bytes.
//!
//! It can also fault the pages in ahead of the walker, on a thread of its
//! own ([`Releaser::faulting_ahead`]): the first touch of each page of a
//! mapped file is a page fault (0.15-0.19 s for the 1.47 GB
//! collection-heavy benchmark dump), and the walker, which reads the file
//! first (its checksum runs ahead of it), took them one at a time under
//! its lock, the one part of a pass no second core shares. The report's
//! main pass and `keys` use it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Bytes released at a time: large enough that the madvise calls cost
/// nothing, small enough that the resident set stays far under the RAM.
pub const STEP: u64 = 64 << 20;

/// Releases `[start, end)` of the mapped file (see `RdbFile::release`).
pub type ReleaseFn<'r> = &'r (dyn Fn(usize, usize) + Sync);

/// Maps `[start, end)` of the file into the process (see `RdbFile::populate`).
pub type PopulateFn<'r> = &'r (dyn Fn(usize, usize) + Sync);

/// How far ahead of the walker pages are faulted in: a few batches, and a
/// small part of the resident set (the pages are the file's, not anonymous).
const AHEAD_WINDOW: u64 = 32 << 20;
/// Bytes faulted in per call.
const AHEAD_CHUNK: u64 = 4 << 20;

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
    /// Faults pages in ahead of the walker, when set.
    populate: Option<PopulateFn<'r>>,
    /// Tells the thread that faults pages in to end.
    stop: AtomicBool,
}

impl<'r> Releaser<'r> {
    pub fn new(release: ReleaseFn<'r>) -> Self {
        Releaser {
            release,
            state: Mutex::new(State::default()),
            populate: None,
            stop: AtomicBool::new(false),
        }
    }

    /// Also faults pages in ahead of the walker with `populate`, during
    /// [`Releaser::faulting_ahead`].
    pub fn populating(mut self, populate: PopulateFn<'r>) -> Self {
        self.populate = Some(populate);
        self
    }

    /// Runs `pass` (a walk of a file of `len` bytes from its start) while a
    /// thread of its own faults the file's pages in, up to
    /// [`AHEAD_WINDOW`] past the walker. Only with `threads` > 1: a pass
    /// asked to use one core uses one. Without a populate function, or if
    /// the thread cannot start, `pass` runs alone, as it would.
    pub fn faulting_ahead<T>(&self, len: u64, threads: usize, pass: impl FnOnce() -> T) -> T {
        let Some(populate) = self.populate.filter(|_| threads > 1) else {
            return pass();
        };
        self.stop.store(false, Ordering::Relaxed);
        std::thread::scope(|s| {
            // Set when `pass` ends, also by a panic, before the scope waits
            // for the thread.
            let _stop = StopOnDrop(&self.stop);
            let ahead = std::thread::Builder::new()
                .name("rdblens-ahead".into())
                .spawn_scoped(s, || self.fault_in(len, populate));
            // Not started: the walk faults its pages in itself, as before.
            drop(ahead);
            pass()
        })
    }

    fn fault_in(&self, len: u64, populate: PopulateFn<'r>) {
        let mut done = 0u64;
        while !self.stop.load(Ordering::Relaxed) && done < len {
            // How far the walker has read: the state releasing behind it
            // keeps it. A poisoned lock (a worker panicked) ends the pass.
            let Ok(walked) = self.state.lock().map(|s| s.walked) else {
                return;
            };
            match next_ahead(done, walked, len) {
                Some(end) => {
                    populate(done as usize, end as usize);
                    done = end;
                }
                // Far enough ahead: the walker reads a window in tens of ms.
                None => std::thread::sleep(Duration::from_millis(1)),
            }
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

/// The end of the next range to fault in, from `done`: at most
/// [`AHEAD_CHUNK`] bytes, none past [`AHEAD_WINDOW`] beyond `walked` or past
/// `len`; `None` when that far is done.
fn next_ahead(done: u64, walked: u64, len: u64) -> Option<u64> {
    let limit = walked.saturating_add(AHEAD_WINDOW).min(len);
    (done < limit).then(|| done.saturating_add(AHEAD_CHUNK).min(limit))
}

/// Sets its flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
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
    fn the_next_range_ahead_stays_inside_the_window() {
        let (w, c) = (AHEAD_WINDOW, AHEAD_CHUNK);
        // From the start: one chunk, then up to the window, then nothing.
        assert_eq!(next_ahead(0, 0, 10 * w), Some(c));
        assert_eq!(next_ahead(w - 1, 0, 10 * w), Some(w));
        assert_eq!(next_ahead(w, 0, 10 * w), None);
        // The walker moves: the window with it.
        assert_eq!(next_ahead(w, 5, 10 * w), Some(w + 5));
        assert_eq!(next_ahead(w, c, 10 * w), Some(w + c));
        // Never past the file.
        assert_eq!(next_ahead(0, 0, 100), Some(100));
        assert_eq!(next_ahead(100, 0, 100), None);
        assert_eq!(next_ahead(0, u64::MAX, 100), Some(100));
    }

    #[test]
    fn pages_are_faulted_in_ahead_only_with_two_threads() {
        let len = 3 * AHEAD_WINDOW + 12_345;
        let calls = Mutex::new(Vec::new());
        let populate = |a: usize, b: usize| calls.lock().unwrap().push((a as u64, b as u64)); // ok: unit test
        let release = |_: usize, _: usize| {};
        let r = Releaser::new(&release).populating(&populate);
        assert_eq!(r.faulting_ahead(len, 1, || 7), 7);
        assert!(calls.lock().unwrap().is_empty()); // ok: unit test
        let reached = |end: u64| calls.lock().unwrap().last().is_some_and(|c| c.1 == end); // ok: unit test
        let waited = r.faulting_ahead(len, 2, || {
            let start = std::time::Instant::now();
            // Held at the window until the walker moves.
            while !reached(AHEAD_WINDOW) && start.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(20));
            let held = calls.lock().unwrap().last().map(|c| c.1); // ok: unit test
            r.walked_to(len);
            while !reached(len) && start.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(1));
            }
            held
        });
        assert_eq!(waited, Some(AHEAD_WINDOW));
        // Every byte once, in order, a chunk at a time at most.
        let calls = calls.into_inner().unwrap(); // ok: unit test
        assert_eq!(calls.first().map(|c| c.0), Some(0));
        assert_eq!(calls.last().map(|c| c.1), Some(len));
        for pair in calls.windows(2) {
            assert_eq!(pair[0].1, pair[1].0);
        }
        assert!(calls.iter().all(|(a, b)| a < b && b - a <= AHEAD_CHUNK));
    }

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
