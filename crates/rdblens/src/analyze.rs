//! Several dumps in one run: every input is opened (mapped, or a stream
//! read as it arrives, decompressed on the way) and its header checked first, so an unreadable input fails
//! the run before any work; then the analysis library's
//! [`rdblens_engine::analyze_files`] analyses them at the same time and
//! merges the summaries in command-line order. Object URLs go to the
//! fleet runner (src/fleet.rs) instead; a cluster node's URL stands for a
//! node of each shard (`crate::live::expand_clusters`), read a few at a
//! time.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use rdblens_summary::{Notes, Options, Summary};

use crate::progress::FilesProgress;

/// Analyses every file and merges the summaries in command-line order.
/// `quiet` hides the progress bar (shown only for large inputs on a terminal).
/// `labels` (none, or one per file) name the files in the summary instead
/// of their paths; errors name the path.
pub fn analyze_files(
    files: &[PathBuf],
    labels: &[String],
    opts: &Options,
    jobs: usize,
    quiet: bool,
) -> Result<Summary> {
    let notes = NotesOnStderr::new(quiet);
    let opts = &notes.hooked(opts);
    // Object URLs: read as a fleet of shards, `jobs` at a time.
    let summary = if files.iter().any(|path| crate::input::object_url(path).is_some()) {
        crate::fleet::analyze(files, labels, opts, jobs, quiet)
    } else {
        let expanded = crate::live::expand_clusters(files)?;
        if expanded != files {
            if !labels.is_empty() {
                anyhow::bail!(
                    "--label names each input: a cluster URL stands for several, named by their nodes"
                );
            }
            analyze_in_groups(&expanded, opts, quiet)
        } else {
            analyze_each(files, labels, opts, quiet)
        }
    };
    notes.print();
    summary
}

/// The notes the analysis tells of how inputs were read (a stream read
/// for both allocator builds), printed on standard error once it is done
/// and its bars are cleared: each of the first few, then how many more (a
/// fleet's or a cluster's shards would each have one).
struct NotesOnStderr {
    told: Option<Arc<Mutex<Vec<String>>>>,
}

/// Notes printed whole; beyond, only counted.
const NOTES_SHOWN: usize = 3;

impl NotesOnStderr {
    /// Nothing is told with `quiet`.
    fn new(quiet: bool) -> Self {
        NotesOnStderr {
            told: (!quiet).then(|| Arc::new(Mutex::new(Vec::new()))),
        }
    }

    /// `opts` telling this its notes.
    fn hooked(&self, opts: &Options) -> Options {
        let notes = self.told.as_ref().map(|told| {
            let told = Arc::clone(told);
            Notes::new(move |note| {
                // A poisoned lock: a worker panicked, which fails the run.
                if let Ok(mut told) = told.lock() {
                    told.push(note);
                }
            })
        });
        Options {
            notes,
            ..opts.clone()
        }
    }

    fn print(&self) {
        let Some(Ok(told)) = self.told.as_ref().map(|t| t.lock()) else {
            return;
        };
        // Inputs read at once tell theirs in any order; each names its input.
        let mut told = told.clone();
        told.sort();
        for note in told.iter().take(NOTES_SHOWN) {
            eprintln!("rdblens: note: {note}");
        }
        match told.len().saturating_sub(NOTES_SHOWN) {
            0 => {}
            1 => eprintln!("rdblens: note: and 1 more input read for both jemalloc builds"),
            more => eprintln!("rdblens: note: and {more} more inputs read for both jemalloc builds"),
        }
    }
}

/// [`analyze_files`] of inputs that are what they say (no cluster to expand).
fn analyze_each(files: &[PathBuf], labels: &[String], opts: &Options, quiet: bool) -> Result<Summary> {
    let mut opened = Vec::with_capacity(files.len());
    for (i, path) in files.iter().enumerate() {
        let file = crate::input::open_source(path, opts.skip_unknown, quiet)?;
        let name = labels
            .get(i)
            .cloned()
            .unwrap_or_else(|| crate::input::input_name(path));
        opened.push((name, file));
    }
    // Streams count their own bytes as they arrive (their size is unknown).
    let known = opened.iter().filter_map(|(_, f)| f.size()).sum();
    let progress = FilesProgress::for_bytes(known, quiet);
    let opts = Options {
        progress: progress.hook(),
        ..opts.clone()
    };
    let summary = rdblens_engine::analyze_files(opened, &opts);
    drop(progress);
    // A server's snapshot cut short fails the run (a file cut short is
    // reported as far as it goes): the server can be asked again.
    crate::live::check_received()?;
    let mut summary = summary?;
    crate::live::annotate(&mut summary);
    Ok(summary)
}

/// Servers read at once: each is a fork (or a replica's save) and a
/// transfer in flight, and an opened transfer must be read before the
/// server's output buffer for it fills.
const SERVERS_AT_ONCE: usize = 4;

/// The inputs a few at a time (a cluster's shards), their summaries merged
/// in order: the same summary as one run over all of them, since every
/// accumulator merges associatively.
fn analyze_in_groups(files: &[PathBuf], opts: &Options, quiet: bool) -> Result<Summary> {
    let mut merged: Option<Summary> = None;
    for group in files.chunks(SERVERS_AT_ONCE) {
        let summary = analyze_each(group, &[], opts, quiet)?;
        match &mut merged {
            None => merged = Some(summary),
            Some(m) => m.merge(summary)?,
        }
    }
    merged.ok_or_else(|| anyhow::anyhow!("a cluster with no shard serving slots"))
}
