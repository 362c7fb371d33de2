//! `rdblens diff OLD NEW`: what changed between two snapshots. Each side is
//! a dump (analysed here) or a summary file (`report --summary-only`, or a
//! `merge --summary-only` of a whole cluster).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use rdblens_report::diff::GrowthLimits;
use rdblens_report::diff::{growth_alerts, GrowthAlert};
use rdblens_report::ReportOptions;
use rdblens_summary::{join_differences, Options, Setting, Summary, SummaryFile};

use crate::common::{FilterArgs, ModelArgs};
use crate::output::write_text;
use crate::report::{rendering, Format, SortBy};
use crate::summary_file::{is_summary_file, SummaryError};

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The old snapshot: a dump, or a summary file.
    pub old: PathBuf,
    /// The new snapshot: a dump, or a summary file.
    pub new: PathBuf,
    /// Output format; tables are plain (no box drawing) when not on a terminal.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Keys per top list when analysing dumps (at most 10,000), and rows per table.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Namespace separator (for dumps).
    #[arg(long, default_value = ":", value_parser = crate::common::separator_byte)]
    pub separator: u8,
    /// Namespace levels aggregated, 1-4 (for dumps; levels 1 and 2 are compared).
    #[arg(long, default_value = "2", value_parser = crate::common::namespace_depth)]
    pub depth: usize,
    /// Expiry bucket the clusters are compared at: 1s, 1m, 1h, 1d or auto.
    #[arg(long, default_value = "auto")]
    pub bucket: String,
    /// Exit 1 when a figure grew by more than its limit: total (estimated
    /// memory), keys, namespace (any prefix's memory), namespace-keys (any
    /// prefix's keys), key (any key's memory), each a percentage of the old
    /// figure or an amount (a size such as 50MiB; a number of keys for keys
    /// and namespace-keys), and expiry-clusters (how many new expiry
    /// clusters pass), e.g. total=10%,keys=5%,namespace=20%,key=50MiB,expiry-clusters=0.
    #[arg(long, value_name = "LIMITS")]
    pub fail_on_growth: Option<String>,
    /// Rules file whose `[growth]` table gives --fail-on-growth's limits
    /// (`total = "10%"`, `expiry-clusters = 0`...); a limit given with
    /// --fail-on-growth replaces the file's for that figure.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Write the diff here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Checks the flags before any work (usage errors, exit 2).
pub fn prepare(args: &DiffArgs) -> Result<(Options, ReportOptions)> {
    let separator = args.separator;
    crate::common::check_top(args.top)?;
    if args.format == Some(Format::InfoKeysizes) {
        bail!("--format info-keysizes shows one snapshot: run `rdblens report --format info-keysizes` on each side");
    }
    if args.old == Path::new("-") && args.new == Path::new("-") {
        bail!("standard input (-) is given more than once: it can be read only once");
    }
    let inputs = [&args.old, &args.new]
        .into_iter()
        .chain(&args.model.config)
        .chain(&args.rules);
    crate::output::refuse_input_as_output(args.output.as_deref(), inputs.map(|p| p.as_path()))?;
    crate::output::check_writable(args.output.as_deref())?;
    let opts = Options {
        top: args.top,
        separator,
        prefix_depth: args.depth,
        ..args.model.options(args.filter.filter()?)?
    };
    let growth = growth_limits(args)?;
    let report_opts = ReportOptions {
        growth,
        ..rendering(&[], args.top, &args.bucket, SortBy::Memory)?
    };
    Ok((opts, report_opts))
}

/// The growth limits: the rules file's `[growth]` table, each figure
/// replaced by `--fail-on-growth`'s when the flag names it; `None` when
/// neither gives any.
fn growth_limits(args: &DiffArgs) -> Result<Option<GrowthLimits>> {
    let from_file = match &args.rules {
        Some(path) => {
            let limits = rdblens_audit::config::growth_limits(path)?;
            let spec: Vec<String> = limits.iter().map(|(f, l)| format!("{f}={l}")).collect();
            if spec.is_empty() {
                None
            } else {
                Some(
                    GrowthLimits::parse(&spec.join(","))
                        .map_err(|e| anyhow::anyhow!("{} [growth]: {e}", path.display()))?,
                )
            }
        }
        None => None,
    };
    let from_flag = match &args.fail_on_growth {
        Some(spec) => Some(GrowthLimits::parse(spec).map_err(|e| anyhow::anyhow!("--fail-on-growth: {e}"))?),
        None => None,
    };
    Ok(match (from_flag, from_file) {
        (Some(flag), Some(file)) => Some(flag.over(file)),
        (flag, file) => flag.or(file),
    })
}

/// One side: a summary file, or a dump analysed with `opts`.
pub(crate) fn load(path: &Path, opts: &Options, quiet: bool) -> Result<SummaryFile, SummaryError> {
    // A stream can be read once: it is taken for a dump (summaries are files).
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let summary = regular
        && is_summary_file(path)
            .with_context(|| format!("{}: cannot open", path.display()))
            .map_err(SummaryError::Input)?;
    if summary {
        return crate::summary_file::read(path);
    }
    let summary = crate::analyze::analyze_files(&[path.to_path_buf()], &[], opts, 1, quiet)
        .map_err(SummaryError::Input)?;
    Ok(SummaryFile::new(summary))
}

/// What a diff that was written leaves for the exit code: both sides, and
/// the growth alerts (`--fail-on-growth`; empty without it).
pub struct Diffed {
    pub sides: [Summary; 2],
    pub growth_alerts: Vec<GrowthAlert>,
}

/// Both sides, compared and written; returns them for exit-code decisions.
pub fn run(args: &DiffArgs, opts: &Options, report_opts: ReportOptions) -> Result<Diffed, SummaryError> {
    let same = crate::output::file_id(&args.old).is_some()
        && crate::output::file_id(&args.old) == crate::output::file_id(&args.new);
    if same {
        eprintln!(
            "rdblens: note: {} and {} are the same file: nothing can have changed",
            args.old.display(),
            args.new.display()
        );
    }
    let old = load(&args.old, opts, args.quiet)?;
    let new = load(&args.new, opts, args.quiet)?;
    let mut differences = old.summary.settings.differences(&new.summary.settings);
    differences.retain(|d| d.setting != Setting::Now);
    if !differences.is_empty() {
        eprintln!(
            "rdblens: note: the two sides were analysed with different settings ({}); figures may differ for that reason",
            join_differences(&differences)
        );
    }
    let to_file = args.output.is_some();
    let report_opts = ReportOptions {
        width: crate::output::stdout_width(to_file),
        ..report_opts
    };
    let output = args.output.as_deref();
    let written = match args.format.unwrap_or(Format::Table) {
        Format::Json => {
            let text = rdblens_report::diff::to_json(&old.summary, &new.summary, &report_opts)
                .context("cannot serialize the diff")
                .map_err(SummaryError::Input)?;
            write_text(output, &text)
        }
        Format::Table => write_text(
            output,
            &rdblens_report::diff::to_table(&old.summary, &new.summary, &report_opts),
        ),
        // The page goes to the output as it renders, never held whole.
        Format::Html => {
            let model = rdblens_report::diff::build(&old.summary, &new.summary, &report_opts);
            crate::output::write_with(output, |w| rdblens_html::write_diff(&model, w))
        }
        Format::Prometheus => {
            let model = rdblens_report::diff::build(&old.summary, &new.summary, &report_opts);
            let metrics = rdblens_report::prometheus::MetricsOptions::default();
            write_text(output, &rdblens_report::prometheus::render_diff(&model, &metrics))
        }
        // Refused by `prepare`; nothing to write.
        Format::InfoKeysizes => Ok(()),
    };
    written.map_err(|e| SummaryError::Input(e.into()))?;
    let growth_alerts = match &report_opts.growth {
        Some(limits) => growth_alerts(&old.summary, &new.summary, limits, report_opts.cluster_rule),
        None => Vec::new(),
    };
    Ok(Diffed {
        sides: [old.summary, new.summary],
        growth_alerts,
    })
}
