//! `rdblens report`: analyse one or more dumps and print tables or JSON.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use rdblens_analysis::{Options, Summary};
use rdblens_report::{ReportOptions, Section};

use crate::common::{FilterArgs, ModelArgs};
use crate::summary_file::{Shaping, SummaryFile};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// `--fail-on`: the least severe finding that fails the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Warn,
    Crit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortBy {
    Memory,
    Serialized,
    Elements,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Dump files (several: one combined report).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Keys per top list.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Output format; tables are plain (no box drawing) when not on a terminal.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// The first big-key table's order.
    #[arg(long, value_enum, default_value = "memory")]
    pub sort: SortBy,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Namespace separator.
    #[arg(long, default_value = ":")]
    pub separator: String,
    /// Namespace levels aggregated (1-4).
    #[arg(long, default_value_t = 2)]
    pub depth: usize,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Expiry histogram bucket: 1s, 1m, 1h, 1d or auto.
    #[arg(long, default_value = "auto")]
    pub bucket: String,
    /// Write the report here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Sections to show (comma-separated): shards,bigkeys,encodings,ttl,expiry,keys,prefixes,slots,access,findings; `plans` (split plans, docs/advisor.md) only when named.
    #[arg(long, value_delimiter = ',')]
    pub section: Vec<String>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Fail on any damage before printing anything: a truncated or corrupt
    /// file, a value that cannot be decoded, a checksum mismatch (exit 3).
    /// Without it the report covers the sound part and says what is missing.
    #[arg(long)]
    pub strict: bool,
    /// Read a file of an RDB version newer than any rdblens knows with the
    /// newest layout it knows, up to the first type or opcode that layout
    /// does not have (module values of any module are always read).
    #[arg(long)]
    pub skip_unknown: bool,
    /// Design-rule settings: a TOML rules file (thresholds, caps, rules on/off; docs/audit.md).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Override one rule setting, e.g. big-string.warn=20KiB or key-chars.enabled=false (repeatable; wins over --rules).
    #[arg(long = "set", value_name = "RULE.FIELD=VALUE")]
    pub set: Vec<String>,
    /// Exit 1 when the audit finds anything at or above this severity (for CI gates).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// Write the compact, mergeable summary (JSON, every accumulator) instead
    /// of the report; `rdblens merge` and `rdblens diff` read it.
    #[arg(long)]
    pub summary_only: bool,
}

fn parse_bucket(s: &str) -> Result<Option<i64>> {
    Ok(match s {
        "auto" => None,
        "1s" => Some(1_000),
        "1m" => Some(60_000),
        "1h" => Some(3_600_000),
        "1d" => Some(86_400_000),
        other => bail!("unknown bucket '{other}' (expected 1s, 1m, 1h, 1d or auto)"),
    })
}

pub fn options(args: &ReportArgs) -> Result<Options> {
    let separator = match args.separator.as_bytes() {
        [b] => *b,
        _ => bail!("--separator must be a single byte, got {:?}", args.separator),
    };
    if !(1..=4).contains(&args.depth) {
        bail!("--depth must be 1-4, got {}", args.depth);
    }
    let base = args.model.options(args.filter.filter()?)?;
    // The redis.conf also tells the audit whether big keys expire lazily.
    let rules = rdblens_audit::load(args.rules.as_deref(), &base.config, &args.set)?;
    Ok(Options {
        top: args.top,
        separator,
        prefix_depth: args.depth,
        rules,
        skip_unknown: args.skip_unknown,
        ..base
    })
}

/// Analyses every file, in parallel; the summaries merge into one.
pub fn analyze_files(files: &[PathBuf], opts: &Options, quiet: bool) -> Result<Summary> {
    crate::analyze::analyze_files(files, opts, quiet)
}

pub fn report_options(args: &ReportArgs, to_terminal: bool) -> Result<ReportOptions> {
    let mut opts = rendering(&args.section, args.top, &args.bucket, args.sort)?;
    opts.width = to_terminal.then(|| terminal_width().unwrap_or(120));
    Ok(opts)
}

/// What to show and how: `--section`, `--top`, `--bucket`, `--sort`
/// (shared by `report` and `merge`).
pub fn rendering(section: &[String], top: usize, bucket: &str, sort: SortBy) -> Result<ReportOptions> {
    let mut sections = Vec::new();
    for s in section {
        sections.push(Section::parse(s).with_context(|| {
            format!(
                "unknown section '{s}' (expected {})",
                Section::ALL
                    .into_iter()
                    .chain(Section::OPTIONAL)
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        })?);
    }
    if sections.is_empty() {
        sections = Section::ALL.to_vec();
    }
    Ok(ReportOptions {
        sections,
        top,
        bucket_ms: parse_bucket(bucket)?,
        width: None,
        sort: match sort {
            SortBy::Memory => rdblens_report::SortBy::Memory,
            SortBy::Serialized => rdblens_report::SortBy::Serialized,
            SortBy::Elements => rdblens_report::SortBy::Elements,
        },
        ..ReportOptions::default()
    })
}

/// The width of the terminal on standard output; `COLUMNS` when the size
/// cannot be read.
fn terminal_width() -> Option<u16> {
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(terminal_size::Width(w), _)| w)
        .or_else(|| std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()))
}

/// Checks the flags before any work: errors here are usage errors (exit 2).
pub fn prepare(args: &ReportArgs) -> Result<(Options, ReportOptions)> {
    if args.summary_only && args.format == Some(Format::Table) {
        bail!("--summary-only writes JSON: drop --format table");
    }
    Ok((options(args)?, report_options(args, false)?))
}

/// Runs the command; returns the summary for exit-code decisions.
pub fn run(args: &ReportArgs, opts: &Options, report_opts: ReportOptions) -> Result<Summary> {
    let summary = analyze_files(&args.files, opts, args.quiet)?;
    if args.strict {
        strict_check(&summary)?;
    }
    if args.summary_only {
        let file = SummaryFile::new(summary, Shaping::of(opts));
        file.write(args.output.as_deref())?;
        return Ok(file.summary);
    }
    let format = args.format.unwrap_or(Format::Table);
    let report_opts = ReportOptions {
        target: Some(rdblens_advice::target_for(&summary, opts.quantum, &opts.config)),
        ..report_opts
    };
    write_text(
        args.output.as_deref(),
        &render(&summary, format, report_opts, args.output.is_some())?,
    )?;
    Ok(summary)
}

/// `--strict`: the first damage of any kind, as an error (so nothing is
/// printed): where a file stops early, a checksum mismatch, a value that
/// could not be decoded.
pub fn strict_check(summary: &Summary) -> Result<()> {
    for f in &summary.files {
        if let Some(d) = &f.incomplete {
            bail!("{}: --strict: incomplete: {}", f.path, d.message);
        }
        if let Some(w) = f.warnings.iter().find(|w| w.starts_with("checksum mismatch")) {
            bail!("{}: --strict: {w}", f.path);
        }
    }
    let k = &summary.keys;
    if let Some(d) = k.damage.first() {
        let file = match &summary.files[..] {
            [f] => format!("{}: ", f.path),
            _ => String::new(),
        };
        bail!(
            "{file}--strict: {} keys could not be decoded; first: {}",
            k.damaged_keys,
            d.message
        );
    }
    Ok(())
}

/// The report as text; tables fit the terminal when standard output is one.
pub fn render(
    summary: &Summary,
    format: Format,
    report_opts: ReportOptions,
    to_file: bool,
) -> Result<String> {
    let report_opts = ReportOptions {
        width: stdout_width(to_file),
        ..report_opts
    };
    Ok(match format {
        Format::Json => rdblens_report::to_json(summary, &report_opts)?,
        Format::Table => rdblens_report::to_table(summary, &report_opts),
    })
}

/// The table width: the terminal's when standard output is one (and the
/// output does not go to a file), else none (plain tables).
pub fn stdout_width(to_file: bool) -> Option<u16> {
    (!to_file && std::io::stdout().is_terminal()).then(|| terminal_width().unwrap_or(120))
}

/// Writes `text` to `path`, or to standard output (a closed pipe is not an
/// error); a final newline is added when missing.
pub fn write_text(path: Option<&std::path::Path>, text: &str) -> Result<()> {
    match path {
        Some(path) => std::fs::write(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => {
            let mut out = std::io::stdout().lock();
            let written = out.write_all(text.as_bytes()).and_then(|()| {
                if text.ends_with('\n') {
                    Ok(())
                } else {
                    out.write_all(b"\n")
                }
            });
            crate::output::ignore_broken_pipe(written)?;
        }
    }
    Ok(())
}

/// `--fail-on`: why the run fails, if the audit found anything at or above
/// the level (counting findings left out by the caps too).
pub fn failed_audit(args: &ReportArgs, summary: &Summary) -> Option<String> {
    audit_gate(args.fail_on, summary)
}

/// [`failed_audit`] for any command with a `--fail-on`.
pub fn audit_gate(fail_on: Option<FailOn>, summary: &Summary) -> Option<String> {
    let level = match fail_on? {
        FailOn::Warn => rdblens_audit::Severity::Warn,
        FailOn::Crit => rdblens_audit::Severity::Crit,
    };
    let audit = rdblens_audit::audit(summary);
    let c = audit.counts;
    audit.fails(level).then(|| {
        format!(
            "--fail-on {level}: the audit found {} crit and {} warn findings",
            c.crit, c.warn
        )
    })
}
