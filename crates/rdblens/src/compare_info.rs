//! `rdblens compare-info DUMP INFO`: the dump's `INFO keysizes` histograms
//! (Redis 8) against a saved `redis-cli INFO keysizes` of the server,
//! bin by bin (docs/keysizes.md). Exit 0 when every bin is equal, 1 when
//! any differs.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use rdblens_report::keysizes::{compare, parse_info, Comparison, MAX_INFO_BYTES};
use rdblens_summary::{Options, Summary};

use crate::summary_file::SummaryError;

#[derive(Args, Debug)]
pub struct CompareInfoArgs {
    /// The dump (a file, `-` or a compressed dump), or a summary file
    /// (`report --summary-only`, or a `merge --summary-only` of shards).
    pub dump: PathBuf,
    /// The server's saved `redis-cli INFO keysizes` (a whole `INFO` too:
    /// its Keysizes section is read).
    pub info: PathBuf,
    /// Compare empty strings (the bin `0` of later Redis 8 releases) even
    /// when the INFO text has no bin `0`.
    #[arg(long)]
    pub zero_bin: bool,
    /// Write the comparison here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Checks the flags before any work (usage errors, exit 2).
pub fn prepare(args: &CompareInfoArgs) -> Result<Options> {
    let inputs = [args.dump.as_path(), args.info.as_path()];
    crate::output::refuse_input_as_output(args.output.as_deref(), inputs)?;
    crate::output::check_writable(args.output.as_deref())?;
    Ok(Options {
        accumulators: crate::report::keysizes_only(),
        ..Options::default()
    })
}

/// Reads the INFO text (at most [`MAX_INFO_BYTES`]) and the dump, compares
/// and writes the comparison; returns the dump's summary (for its damage)
/// and the comparison.
pub fn run(args: &CompareInfoArgs, opts: &Options) -> Result<(Summary, Comparison), SummaryError> {
    let server = read_info(&args.info).map_err(SummaryError::Input)?;
    for (line, field) in &server.skipped {
        eprintln!(
            "rdblens: note: {}: line {line}: {field} is not one of the five histograms: not compared",
            args.info.display()
        );
    }
    let dump = crate::diff::load(&args.dump, opts, args.quiet)?;
    let comparison = compare(&dump.summary.keys.keysizes, &server, args.zero_bin);
    crate::output::write_text(args.output.as_deref(), &comparison.render())
        .map_err(|e| SummaryError::Input(e.into()))?;
    Ok((dump.summary, comparison))
}

/// The INFO file, read and parsed; errors name the file and the line.
fn read_info(path: &Path) -> Result<rdblens_report::keysizes::ServerKeySizes> {
    let name = path.display();
    let file = std::fs::File::open(path).with_context(|| format!("{name}: cannot open"))?;
    let mut data = Vec::new();
    file.take(MAX_INFO_BYTES + 1)
        .read_to_end(&mut data)
        .with_context(|| format!("{name}: cannot read"))?;
    parse_info(&data).with_context(|| format!("{name}: not an INFO keysizes text"))
}
