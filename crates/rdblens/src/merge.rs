//! `rdblens merge`: combines summary files made on different hosts (`report
//! --format json --summary-only`, one per shard) into the report `report`
//! would print for all the dumps at once, or into one summary again.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use rdblens_audit::Audit;
use rdblens_report::ReportOptions;
use rdblens_summary::Summary;

use crate::report::{rendering, write_report, FailOn, Format, SortBy};
use crate::summary_file::{read_and_merge, SummaryError};

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Summary files (`rdblens report --format json --summary-only`), merged in this order.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format; tables are plain (no box drawing) when not on a terminal.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Rows per top list in tables (default: the summaries' --top; lists hold no more).
    #[arg(long)]
    pub top: Option<usize>,
    /// The first big-key table's order.
    #[arg(long, value_enum, default_value = "memory")]
    pub sort: SortBy,
    /// Expiry histogram bucket: 1s, 10s, 1m, 10m, 1h, 1d or auto.
    #[arg(long, default_value = "auto")]
    pub bucket: String,
    /// Show only expiries in FROM..TO (as `report --expiry-window`).
    #[arg(long, value_name = "FROM..TO")]
    pub expiry_window: Option<String>,
    /// Sections to show (comma-separated), as for `report`.
    #[arg(long, value_delimiter = ',', value_parser = crate::report::section_values())]
    pub section: Vec<String>,
    /// Write the result here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Write the merged summary (to merge again later) instead of the report.
    #[arg(long)]
    pub summary_only: bool,
    /// Exit 1 when the audit finds anything at or above this severity.
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// With --format info-keysizes: count empty strings in a bin `0`, as
    /// later Redis 8 releases do (8.0's first format counts them nowhere).
    #[arg(long)]
    pub zero_bin: bool,
}

/// Checks the flags before reading anything (usage errors, exit 2).
pub fn prepare(args: &MergeArgs) -> Result<ReportOptions> {
    if args.summary_only
        && matches!(
            args.format,
            Some(Format::Table | Format::Html | Format::Prometheus | Format::InfoKeysizes)
        )
    {
        anyhow::bail!("--summary-only writes JSON: drop --format table/html/prometheus/info-keysizes");
    }
    crate::output::refuse_input_as_output(args.output.as_deref(), args.files.iter().map(|p| p.as_path()))?;
    crate::output::check_writable(args.output.as_deref())?;
    let mut opts = rendering(&args.section, args.top.unwrap_or(0), &args.bucket, args.sort)?;
    opts.keysizes_zero_bin = args.zero_bin;
    opts.expiry_window = args
        .expiry_window
        .as_deref()
        .map(crate::report::parse_window)
        .transpose()?;
    Ok(opts)
}

/// Reads, merges and writes; returns the merged summary and its audit
/// (when `--fail-on` or a section asked for it; it ran once) for exit-code
/// decisions.
pub fn run(args: &MergeArgs, report_opts: ReportOptions) -> Result<(Summary, Option<Audit>), SummaryError> {
    let merged = read_and_merge(&args.files)?;
    let output = args.output.as_deref();
    let written = if args.summary_only {
        let audit = args.fail_on.map(|_| rdblens_audit::audit(&merged.summary));
        crate::summary_file::write(&merged, output).map(|()| audit)
    } else {
        let report_opts = ReportOptions {
            top: args.top.unwrap_or(merged.summary.settings.top),
            ..report_opts
        };
        let format = args.format.unwrap_or(Format::Table);
        write_report(&merged.summary, format, report_opts, output, args.fail_on)
    };
    let audit = written.map_err(SummaryError::Input)?;
    Ok((merged.summary, audit))
}
