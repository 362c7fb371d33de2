//! Several dumps in one run: every input is opened (mapped, or a stream
//! read as it arrives, decompressed on the way) and its header checked first, so an unreadable input fails
//! the run before any work; then the analysis library's
//! [`rdblens_analysis::analyze_files`] analyses them at the same time and
//! merges the summaries in command-line order.

use std::path::PathBuf;

use anyhow::Result;
use rdblens_analysis::{Options, Summary};

use crate::progress::FilesProgress;

/// Analyses every file and merges the summaries in command-line order.
/// `quiet` hides the progress bar (shown only for large inputs on a terminal).
/// `labels` (none, or one per file) name the files in the summary instead
/// of their paths; errors name the path.
pub fn analyze_files(files: &[PathBuf], labels: &[String], opts: &Options, quiet: bool) -> Result<Summary> {
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
    let summary = rdblens_analysis::analyze_files(opened, &opts);
    drop(progress);
    // A server's snapshot cut short fails the run (a file cut short is
    // reported as far as it goes): the server can be asked again.
    crate::live::check_received()?;
    let mut summary = summary?;
    crate::live::annotate(&mut summary);
    Ok(summary)
}
