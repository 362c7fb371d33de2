//! Several dumps in one run: files are analysed at the same time, each with
//! its own share of the worker threads, and their summaries merge in
//! command-line order (so the result is the same as one file after the
//! other, for any thread count).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{Context, Result};
use rdblens_analysis::{analyze_bytes, Options, Summary};

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
pub fn analyze_files(files: &[PathBuf], opts: &Options, quiet: bool) -> Result<Summary> {
    let mut opened = Vec::with_capacity(files.len());
    for path in files {
        let name = path.display().to_string();
        let file = crate::input::open_rdb(path, opts.skip_unknown)?;
        opened.push((name, file));
    }
    let lanes = plan(resolve_threads(opts.threads), opened.len());
    // Largest first: the long files start early, the short ones fill in.
    let mut order: Vec<usize> = (0..opened.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(opened[i].1.len()));
    let progress = FilesProgress::for_bytes(opened.iter().map(|(_, f)| f.len() as u64).sum(), quiet);
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<Summary>>>> = opened.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for &threads in &lanes {
            let (opened, order, next, results, progress) = (&opened, &order, &next, &results, &progress);
            scope.spawn(move || {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let (name, file) = &opened[i];
                    let mut opts = progress.options_for(opts, file.len() as u64);
                    opts.threads = threads;
                    let result = analyze_bytes(file.bytes(), name, &opts).with_context(|| name.clone());
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(result);
                    }
                }
            });
        }
    });
    drop(progress);
    let mut merged: Option<Summary> = None;
    for (slot, (name, _)) in results.into_iter().zip(&opened) {
        let summary = slot
            .into_inner()
            .ok()
            .flatten()
            .with_context(|| format!("{name}: the analysis did not finish"))??;
        match &mut merged {
            None => merged = Some(summary),
            Some(m) => m.merge(summary).map_err(anyhow::Error::msg)?,
        }
    }
    merged.context("no input files")
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
