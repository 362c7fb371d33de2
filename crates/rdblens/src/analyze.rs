//! Several dumps in one run: files are analysed at the same time, each with
//! its own share of the worker threads, and their summaries merge in
//! command-line order (so the result is the same as one file after the
//! other, for any thread count).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{Context, Result};
use rdblens_analysis::{analyze_file, Options, Summary};
use rdblens_parser::RdbFile;

use crate::progress::FilesProgress;

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
pub fn plan(threads: usize, files: usize) -> Vec<usize> {
    let threads = threads.max(1);
    let lanes = files.min(threads).max(1);
    (0..lanes)
        .map(|i| threads / lanes + usize::from(i < threads % lanes))
        .collect()
}

/// Analyses every file and merges the summaries in command-line order.
/// Every file is opened and its header checked first, so an unreadable
/// input fails the run before any work (the first one, in order, is named).
/// `quiet` hides the progress bar (shown only for large inputs on a terminal).
/// `labels` (none, or one per file) name the files in the summary instead
/// of their paths; errors name the path.
pub fn analyze_files(files: &[PathBuf], labels: &[String], opts: &Options, quiet: bool) -> Result<Summary> {
    let mut opened = Vec::with_capacity(files.len());
    for (i, path) in files.iter().enumerate() {
        let file = crate::input::open_rdb(path, opts.skip_unknown, quiet)?;
        let name = labels
            .get(i)
            .cloned()
            .unwrap_or_else(|| crate::input::input_name(path));
        opened.push((name, file));
    }
    let lanes = plan(resolve_threads(opts.threads), opened.len());
    // Largest first: the long files start early, the short ones fill in.
    let mut order: Vec<usize> = (0..opened.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(opened[i].1.len()));
    let progress = FilesProgress::for_bytes(opened.iter().map(|(_, f)| f.len() as u64).sum(), quiet);
    // Each file is unmapped (a decompressed copy deleted) once analysed.
    let opened: Vec<(String, Mutex<Option<RdbFile>>)> = opened
        .into_iter()
        .map(|(name, file)| (name, Mutex::new(Some(file))))
        .collect();
    let next = AtomicUsize::new(0);
    let done = Merging::default();
    std::thread::scope(|scope| {
        for &threads in &lanes {
            let (opened, order, next, done, progress) = (&opened, &order, &next, &done, &progress);
            scope.spawn(move || {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let (name, slot) = &opened[i];
                    let Some(file) = slot.lock().ok().and_then(|mut f| f.take()) else {
                        continue;
                    };
                    let mut opts = progress.options_for(opts, file.len() as u64);
                    opts.threads = threads;
                    let result = analyze_file(&file, name, &opts).with_context(|| name.clone());
                    drop(file);
                    match result {
                        Ok(summary) => done.add(i, summary),
                        Err(e) => done.fail(i, e),
                    }
                }
            });
        }
    });
    drop(progress);
    done.finish(opened.len())
}

/// Summaries of consecutive files (in command-line order) merged as soon as
/// both are ready, by the lane that finished last, while the other lanes go
/// on analysing: little is left to merge once the last file is done. Merging
/// only neighbours keeps the command-line order of the files (and the first
/// file's reference time), so the result is the same as merging one after
/// the other.
#[derive(Default)]
struct Merging {
    /// First file index of a merged run -> (last index, the run's summary).
    runs: Mutex<BTreeMap<usize, (usize, Summary)>>,
    errors: Mutex<BTreeMap<usize, anyhow::Error>>,
}

impl Merging {
    fn add(&self, i: usize, summary: Summary) {
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
                    return self.fail(start, anyhow::Error::msg(e));
                }
                (first, summary) = (start, left);
            }
            if let Some((end, right)) = after {
                if let Err(e) = summary.merge(right) {
                    return self.fail(first, anyhow::Error::msg(e));
                }
                last = end;
            }
        }
    }

    fn fail(&self, i: usize, e: anyhow::Error) {
        if let Ok(mut errors) = self.errors.lock() {
            errors.insert(i, e);
        }
    }

    /// The whole merge, or the error of the first file (in order) that failed.
    fn finish(self, files: usize) -> Result<Summary> {
        if let Some((_, e)) = self.errors.into_inner().ok().and_then(|e| e.into_iter().next()) {
            return Err(e);
        }
        let mut runs = self
            .runs
            .into_inner()
            .map_err(|_| anyhow::anyhow!("a worker panicked"))?;
        match runs.remove(&0) {
            Some((last, summary)) if last + 1 == files => Ok(summary),
            _ => Err(anyhow::anyhow!("no input files")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_shared_among_files() {
        assert_eq!(plan(1, 5), vec![1]);
        assert_eq!(plan(2, 1), vec![2]);
        assert_eq!(plan(2, 4), vec![1, 1]);
        assert_eq!(plan(8, 3), vec![3, 3, 2]);
        assert_eq!(plan(4, 0), vec![4]);
        for (t, f) in [(16, 5), (3, 3), (7, 100)] {
            let p = plan(t, f);
            assert_eq!(p.iter().sum::<usize>(), t);
            assert!(p.len() <= f && p.iter().all(|&n| n >= 1));
        }
    }
}
