//! Several dumps in one run (the shards of a cluster): files are analysed
//! at the same time, each with its own share of the worker threads, and
//! their summaries merge in the order given, so the result is the same as
//! one file after the other, for any thread count. Kept in the library, as
//! ripgrep keeps its parallel walk in one: every caller gets the same
//! lanes and the same order.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rdblens_parser::RdbFile;

use crate::error::AnalysisError;
use crate::mainpass::analyze_file;
use crate::streaming::analyze_stream;
use rdblens_summary::Summary;
use rdblens_summary::{Options, Progress};

/// Where a dump's bytes come from: the engine's input seam.
pub enum Input {
    /// A mapped file (or a copy in memory): read in place, its pages
    /// given back behind the walk.
    Mapped(RdbFile),
    /// Bytes read once, as they arrive: standard input, a FIFO, a
    /// decompressor, a socket, an object in a store.
    Stream {
        /// The bytes, from the magic on.
        source: Box<dyn std::io::Read + Send>,
        /// The dump's length in bytes when declared before it is read (an
        /// object's `Content-Length`, a replication body's `$<len>`; never
        /// a compressed file's size): the stream then settles the
        /// allocator build as a mapped file does. Else known at its end.
        size: Option<u64>,
    },
}

impl Input {
    /// A mapped file's size, for the order files are taken in and the
    /// progress bar they share (a stream shows its own).
    pub fn size(&self) -> Option<u64> {
        match self {
            Input::Mapped(file) => Some(file.len() as u64),
            Input::Stream { .. } => None,
        }
    }

    /// Analyses it (see [`analyze_file`], [`analyze_stream`]).
    pub fn analyze(self, name: &str, opts: &Options) -> Result<rdblens_summary::Summary, AnalysisError> {
        match self {
            Input::Mapped(file) => analyze_file(&file, name, opts),
            Input::Stream { mut source, size } => analyze_stream(&mut *source, size, name, opts),
        }
    }
}

/// One of several files that could not be analysed: which, and why.
#[derive(Debug, thiserror::Error)]
#[error("{name}: {error}")]
pub struct FileError {
    /// Its position among the inputs.
    pub index: usize,
    /// Its name, as given with the file.
    pub name: String,
    /// Why it failed.
    pub error: AnalysisError,
}

/// Worker threads for `threads` (0 = every core).
pub fn resolve_threads(threads: usize) -> usize {
    if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    }
}

/// How `threads` workers are shared among `files` files: one entry per
/// file analysed at the same time, giving its worker threads (they add up
/// to `threads`, at least one each).
pub fn plan_lanes(threads: usize, files: usize) -> Vec<usize> {
    let threads = threads.max(1);
    let lanes = files.min(threads).max(1);
    (0..lanes)
        .map(|i| threads / lanes + usize::from(i < threads % lanes))
        .collect()
}

/// Analyses every file (named as it is to appear in the summary) and merges
/// the summaries in the order given. Each file is dropped (unmapped, a
/// decompressed copy deleted) as soon as it is analysed. `opts.progress`
/// is told the bytes walked of all the files together. On failure, the
/// error of the first file, in order, that failed.
pub fn analyze_files(files: Vec<(String, Input)>, opts: &Options) -> Result<Summary, FileError> {
    let count = files.len();
    let lanes = plan_lanes(resolve_threads(opts.threads), count);
    // Largest first: the long files start early, the short ones fill in
    // (a stream, of a size unknown, first of all).
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i].1.size().unwrap_or(u64::MAX)));
    let walked_total = Arc::new(AtomicU64::new(0));
    let files: Vec<(String, Mutex<Option<Input>>)> = files
        .into_iter()
        .map(|(name, file)| (name, Mutex::new(Some(file))))
        .collect();
    let next = AtomicUsize::new(0);
    let done = Merging::default();
    std::thread::scope(|scope| {
        for &threads in &lanes {
            let (files, order, next, done, walked_total) = (&files, &order, &next, &done, &walked_total);
            scope.spawn(move || {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let (name, slot) = &files[i];
                    let Some(file) = slot.lock().ok().and_then(|mut f| f.take()) else {
                        continue;
                    };
                    let mut file_opts = opts.clone();
                    file_opts.threads = threads;
                    // A stream shows its own count of bytes received.
                    file_opts.progress = match file.size() {
                        Some(len) => opts.progress.as_ref().map(|p| share_of(p, walked_total, len)),
                        None => None,
                    };
                    let result = file.analyze(name, &file_opts);
                    match result {
                        Ok(summary) => done.add(i, summary, name),
                        Err(error) => done.fail(i, name, error),
                    }
                }
            });
        }
    });
    done.finish(count)
}

/// A hook for one file of `len` bytes that adds what it walked since its
/// last call to `total` and tells `outer` the new total.
fn share_of(outer: &Progress, total: &Arc<AtomicU64>, len: u64) -> Progress {
    let (outer, total) = (outer.clone(), Arc::clone(total));
    let walked = AtomicU64::new(0);
    Progress::new(move |done| {
        let done = done.min(len);
        let before = walked.fetch_max(done, Ordering::Relaxed);
        if done > before {
            let now = total.fetch_add(done - before, Ordering::Relaxed) + (done - before);
            outer.report(now);
        }
    })
}

/// Summaries of consecutive files (in the order given) merged as soon as
/// both are ready, by the lane that finished last, while the other lanes go
/// on analysing: little is left to merge once the last file is done.
/// Merging only neighbours keeps the order of the files (and the first
/// file's reference time), so the result is the same as merging one after
/// the other.
#[derive(Default)]
struct Merging {
    /// First file index of a merged run -> (last index, the run's summary).
    runs: Mutex<BTreeMap<usize, (usize, Summary)>>,
    errors: Mutex<BTreeMap<usize, FileError>>,
}

impl Merging {
    fn add(&self, i: usize, summary: Summary, name: &str) {
        let (mut first, mut last, mut summary) = (i, i, summary);
        loop {
            // Take the neighbouring runs out, merge without the lock, put back.
            let (before, after) = {
                let Ok(mut runs) = self.runs.lock() else { return };
                let before = match first.checked_sub(1).and_then(|p| runs.range(..=p).next_back()) {
                    Some((&start, &(end, _))) if end + 1 == first => {
                        runs.remove(&start).map(|r| (start, r.1))
                    }
                    _ => None,
                };
                let after = runs.remove(&(last + 1));
                if before.is_none() && after.is_none() {
                    runs.insert(first, (last, summary));
                    return;
                }
                (before, after)
            };
            if let Some((start, mut left)) = before {
                if let Err(e) = left.merge(summary) {
                    return self.fail(i, name, AnalysisError::Merge(e));
                }
                (first, summary) = (start, left);
            }
            if let Some((end, right)) = after {
                if let Err(e) = summary.merge(right) {
                    return self.fail(i, name, AnalysisError::Merge(e));
                }
                last = end;
            }
        }
    }

    fn fail(&self, index: usize, name: &str, error: AnalysisError) {
        if let Ok(mut errors) = self.errors.lock() {
            let name = name.to_string();
            errors.insert(index, FileError { index, name, error });
        }
    }

    /// The whole merge, or the error of the first file (in order) that failed.
    fn finish(self, files: usize) -> Result<Summary, FileError> {
        let internal = |why: &str| FileError {
            index: 0,
            name: String::new(),
            error: AnalysisError::Internal(why.into()),
        };
        let errors = self
            .errors
            .into_inner()
            .map_err(|_| internal("a lane panicked"))?;
        if let Some((_, e)) = errors.into_iter().next() {
            return Err(e);
        }
        let mut runs = self.runs.into_inner().map_err(|_| internal("a lane panicked"))?;
        match runs.remove(&0) {
            Some((last, summary)) if last + 1 == files => Ok(summary),
            _ => Err(internal("no input files")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_shared_among_files() {
        assert_eq!(plan_lanes(1, 5), vec![1]);
        assert_eq!(plan_lanes(2, 1), vec![2]);
        assert_eq!(plan_lanes(2, 4), vec![1, 1]);
        assert_eq!(plan_lanes(8, 3), vec![3, 3, 2]);
        assert_eq!(plan_lanes(4, 0), vec![4]);
        for (t, f) in [(16, 5), (3, 3), (7, 100)] {
            let p = plan_lanes(t, f);
            assert_eq!(p.iter().sum::<usize>(), t);
            assert!(p.len() <= f && p.iter().all(|&n| n >= 1));
        }
    }

    #[test]
    fn progress_of_several_files_adds_up_and_never_counts_twice() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let outer = Progress::new(move |n| sink.lock().unwrap().push(n)); // ok: unit test
        let total = Arc::new(AtomicU64::new(0));
        let (a, b) = (share_of(&outer, &total, 100), share_of(&outer, &total, 50));
        a.report(40);
        b.report(30);
        a.report(40); // no news: not reported again
        a.report(150); // past the end of the file: capped at its length
        b.report(50);
        assert_eq!(*seen.lock().unwrap(), vec![40, 70, 130, 150]); // ok: unit test
    }
}
