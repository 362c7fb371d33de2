//! `rdblens report`: analyse one or more dumps and print tables or JSON.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use rdblens_audit::Audit;
use rdblens_report::{AuditWhen, ReportJson, ReportOptions, Section};
use rdblens_summary::{Options, Summary};

use crate::common::{FilterArgs, ModelArgs};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    /// One self-contained page with charts (docs/html-report.md).
    Html,
    /// Prometheus text format, for node_exporter's textfile collector
    /// (docs/monitoring.md).
    Prometheus,
    /// The `INFO keysizes` histograms of Redis 8 (docs/keysizes.md).
    InfoKeysizes,
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
    /// Dump files, or server URLs (redis://, rediss://, unix://: docs/live.md); several: one combined report.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The name each file goes by in the report, its summary, shard tables,
    /// merges and diffs, instead of its path (repeatable: one per file, in
    /// order). A `--summary-only` summary also records the host name: files
    /// of the same path merged from several hosts are shown as HOST:PATH.
    #[arg(long, value_name = "NAME")]
    pub label: Vec<String>,
    /// Keys per top list, at most 10,000. Every list (3 overall, 3 per
    /// type, the coldest and hottest keys, each limit's examples) is held in
    /// memory and printed whole; a key in several lists is stored once. For
    /// every key, `rdblens keys` streams in constant memory.
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
    #[arg(long, default_value = ":", value_parser = crate::common::separator_byte)]
    pub separator: u8,
    /// Namespace levels aggregated (1-4).
    #[arg(long, default_value = "2", value_parser = crate::common::namespace_depth)]
    pub depth: usize,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Expiry histogram bucket: 1s, 10s, 1m, 10m, 1h, 1d or auto.
    #[arg(long, default_value = "auto")]
    pub bucket: String,
    /// Show only expiries in FROM..TO, TO exclusive (times as for --now, e.g.
    /// 2033-05-21T03:34..2033-05-21T03:36 or today..tomorrow).
    #[arg(long, value_name = "FROM..TO")]
    pub expiry_window: Option<String>,
    /// Write the report here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Sections to show (comma-separated; every one but `plans` by default).
    /// Only what they show is computed (findings and plans: the rule hits,
    /// namespaces, TTLs, expiries, slots and the top lists by memory); ttl,
    /// expiry, prefixes and slots alone read no element lengths, so the
    /// small collections a server keeps as stored are counted by their
    /// headers, unwalked (docs/json-schema.md).
    #[arg(long, value_delimiter = ',', value_parser = section_values())]
    pub section: Vec<String>,
    /// Shards read at the same time when inputs are object URLs (a prefix
    /// or glob names many; docs/object-storage.md).
    #[arg(long, value_name = "N", default_value_t = crate::fleet::DEFAULT_JOBS, value_parser = crate::fleet::parse_jobs)]
    pub jobs: usize,
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
    #[command(flatten)]
    pub metrics: MetricsArgs,
    /// With --format info-keysizes: count empty strings in a bin `0`, as
    /// later Redis 8 releases do (8.0's first format counts them nowhere).
    #[arg(long)]
    pub zero_bin: bool,
    /// Last, so that its help heading covers its flags alone.
    #[command(flatten)]
    pub live: crate::live::LiveArgs,
}

/// The caps of `--format prometheus` (docs/monitoring.md): the number of
/// series does not depend on the key names.
#[derive(Args, Debug, Clone, Copy)]
pub struct MetricsArgs {
    /// With --format prometheus: namespaces (first level) with their own
    /// series, heaviest first; the rest are summed in key_group="overflow".
    /// Databases, types and encodings are capped at the same number.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub metrics_groups: usize,
    /// With --format prometheus: big keys listed (by estimated memory).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub metrics_keys: usize,
}

impl MetricsArgs {
    /// The renderer's options (the analysis time is added once measured).
    pub fn options(self) -> rdblens_report::prometheus::MetricsOptions {
        rdblens_report::prometheus::MetricsOptions {
            key_groups: self.metrics_groups,
            big_keys: self.metrics_keys,
            analysis_seconds: None,
        }
    }
}

fn parse_bucket(s: &str) -> Result<Option<i64>> {
    Ok(match s {
        "auto" => None,
        "1s" => Some(1_000),
        "10s" => Some(10_000),
        "1m" => Some(60_000),
        "10m" => Some(600_000),
        "1h" => Some(3_600_000),
        "1d" => Some(86_400_000),
        other => bail!("unknown bucket '{other}' (expected 1s, 10s, 1m, 10m, 1h, 1d or auto)"),
    })
}

/// `--expiry-window FROM..TO` as unix ms, `[from, to)`.
pub fn parse_window(s: &str) -> Result<(i64, i64)> {
    let (from, to) = s
        .split_once("..")
        .with_context(|| format!("--expiry-window '{s}': expected FROM..TO"))?;
    let end = |which: &str, t: &str| {
        crate::time::parse(t).map_err(|e| anyhow::anyhow!("--expiry-window '{s}': bad {which}: {e}"))
    };
    let (from, to) = (end("FROM", from)?, end("TO", to)?);
    if from >= to {
        bail!("--expiry-window '{s}': FROM must be before TO");
    }
    Ok((from, to))
}

pub fn options(args: &ReportArgs) -> Result<Options> {
    let separator = args.separator;
    let base = args.model.options(args.filter.filter()?)?;
    // The redis.conf also tells the audit whether big keys expire lazily.
    let rules = rdblens_audit::load(args.rules.as_deref(), &base.config, &args.set)?;
    Ok(Options {
        threads: match base.threads {
            0 => crate::live::default_threads(&args.files),
            given => given,
        },
        top: args.top,
        separator,
        prefix_depth: args.depth,
        rules,
        skip_unknown: args.skip_unknown,
        ..base
    })
}

/// Analyses every file, in parallel; the summaries merge into one.
pub fn analyze_files(
    files: &[PathBuf],
    labels: &[String],
    opts: &Options,
    jobs: usize,
    quiet: bool,
) -> Result<Summary> {
    crate::analyze::analyze_files(files, labels, opts, jobs, quiet)
}

pub fn report_options(args: &ReportArgs, to_terminal: bool) -> Result<ReportOptions> {
    let mut opts = rendering(&args.section, args.top, &args.bucket, args.sort)?;
    opts.expiry_window = args.expiry_window.as_deref().map(parse_window).transpose()?;
    opts.width = to_terminal.then(|| crate::output::terminal_width().unwrap_or(120));
    Ok(opts)
}

/// `--section`'s values and their help, from the registry of sections.
pub fn section_values() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        Section::EVERY
            .iter()
            .map(|s| clap::builder::PossibleValue::new(s.name()).help(s.help())),
    )
}

/// What to show and how: `--section`, `--top`, `--bucket`, `--sort`
/// (shared by `report` and `merge`).
pub fn rendering(section: &[String], top: usize, bucket: &str, sort: SortBy) -> Result<ReportOptions> {
    let mut sections = Vec::new();
    for s in section {
        sections.push(Section::parse(s).with_context(|| {
            format!(
                "unknown section '{s}' (expected {})",
                Section::EVERY
                    .iter()
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

/// Checks the flags before any work: errors here are usage errors (exit 2).
pub fn prepare(args: &ReportArgs) -> Result<(Options, ReportOptions)> {
    if args.summary_only
        && matches!(
            args.format,
            Some(Format::Table | Format::Html | Format::Prometheus | Format::InfoKeysizes)
        )
    {
        bail!("--summary-only writes JSON: drop --format table/html/prometheus/info-keysizes");
    }
    crate::input::refuse_repeated_inputs(&args.files)?;
    crate::common::check_labels(&args.label, args.files.len())?;
    crate::live::configure(&args.live, &args.files)?;
    let inputs = args.files.iter().chain(&args.model.config).chain(&args.rules);
    crate::output::refuse_input_as_output(args.output.as_deref(), inputs.map(|p| p.as_path()))?;
    crate::output::check_writable(args.output.as_deref())?;
    let mut report_opts = report_options(args, false)?;
    report_opts.metrics = args.metrics.options();
    report_opts.keysizes_zero_bin = args.zero_bin;
    let mut opts = options(args)?;
    if args.format == Some(Format::Prometheus) {
        // The big keys of the metrics come from the top list.
        opts.top = opts.top.max(args.metrics.metrics_keys);
    }
    // Fewer sections feed fewer accumulators (the tables, JSON and HTML
    // are all built from the model, which reads only what the sections
    // show). A summary needs every one; a `--fail-on` gate, what the
    // audit reads.
    if !args.summary_only {
        let gate = args.fail_on.map(|_| Section::Findings.accumulators());
        let shown = match args.format {
            // The histograms alone: no section is shown.
            Some(Format::InfoKeysizes) => keysizes_only(),
            _ => Section::accumulators_for(&report_opts.sections),
        };
        opts.accumulators = gate.map_or(shown, |audit| shown.either(audit));
    }
    let a = opts.accumulators;
    if a.keep_top_lists() {
        crate::common::check_top(args.top)?;
    }
    Ok((opts, report_opts))
}

/// The accumulators `--format info-keysizes` reads: its histograms.
pub fn keysizes_only() -> rdblens_summary::Accumulators {
    rdblens_summary::Accumulators {
        keysizes: true,
        ..rdblens_summary::Accumulators::NONE
    }
}

/// Runs the command; returns the summary and the audit (when `--fail-on`
/// or a section asked for it; it ran once) for exit-code decisions.
pub fn run(
    args: &ReportArgs,
    opts: &Options,
    report_opts: ReportOptions,
    started: Instant,
) -> Result<(Summary, Option<Audit>)> {
    let summary = analyze_files(&args.files, &args.label, opts, args.jobs, args.quiet)?;
    let in_files = summary.files.iter().map(|f| f.keys).sum();
    crate::common::note_if_nothing_matched(&opts.filter, summary.keys.totals.keys, in_files);
    if args.strict {
        strict_check(&summary)?;
    }
    if args.summary_only {
        let mut file = rdblens_summary::SummaryFile::new(summary);
        file.host = crate::summary_file::host_name();
        crate::summary_file::write(&file, args.output.as_deref())?;
        let audit = args.fail_on.map(|_| rdblens_audit::audit(&file.summary));
        return Ok((file.summary, audit));
    }
    let format = args.format.unwrap_or(Format::Table);
    let mut report_opts = ReportOptions {
        target: Some(rdblens_advice::target_for(&summary, opts.quantum, &opts.config)),
        ..report_opts
    };
    report_opts.metrics.analysis_seconds = Some(started.elapsed().as_secs_f64());
    let audit = write_report(
        &summary,
        format,
        report_opts,
        args.output.as_deref(),
        args.fail_on,
    )?;
    Ok((summary, audit))
}

/// `--strict`: the first damage of any kind, as an error (so nothing is
/// printed): where a file stops early, a checksum mismatch, a value that
/// could not be decoded.
pub fn strict_check(summary: &Summary) -> Result<()> {
    for f in &summary.files {
        if let Some(d) = &f.incomplete {
            bail!("{}: --strict: incomplete: {}", f.path, d.message);
        }
        if let Some(problem) = f.checksum_problem() {
            bail!("{}: --strict: {problem}", f.path);
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

/// Renders the report (tables fit the terminal when standard output is
/// one) and writes it to `output` (or standard output); JSON and HTML go
/// to the output as they are rendered, never held whole in memory. Returns the
/// audit: built once into one model, the audit run once when a section
/// shows it or `fail_on` will read it.
pub fn write_report(
    summary: &Summary,
    format: Format,
    report_opts: ReportOptions,
    output: Option<&std::path::Path>,
    fail_on: Option<FailOn>,
) -> Result<Option<Audit>> {
    if format == Format::InfoKeysizes {
        // Read from the summary's histograms; no report model is built.
        let text = rdblens_report::keysizes::render(&summary.keys.keysizes, report_opts.keysizes_zero_bin);
        crate::output::write_text(output, &text)?;
        return Ok(fail_on.map(|_| rdblens_audit::audit(summary)));
    }
    let report_opts = ReportOptions {
        width: crate::output::stdout_width(output.is_some()),
        ..report_opts
    };
    let model = ReportJson::build(summary, &report_opts, audit_when(fail_on));
    match format {
        Format::Json => crate::output::write_with(output, |w| rdblens_report::json::write(&model, w))?,
        Format::Table => crate::output::write_text(output, &rdblens_report::table::render(&model))?,
        Format::Html => crate::output::write_with(output, |w| rdblens_html::write_report(&model, w))?,
        Format::Prometheus => crate::output::write_text(
            output,
            &rdblens_report::prometheus::render(&model, &model.options.metrics),
        )?,
        // Written above, before the model.
        Format::InfoKeysizes => {}
    }
    Ok(model.into_audit())
}

/// Whether the audit runs: when a section shows it, or always for a
/// `--fail-on` gate.
fn audit_when(fail_on: Option<FailOn>) -> AuditWhen {
    match fail_on {
        Some(_) => AuditWhen::Always,
        None => AuditWhen::Shown,
    }
}

/// With `--format prometheus`, after an analysis that failed (an
/// unreadable or unknown file...): the metrics of a failed run
/// (`rdblens_analysis_success 0`), written where the report would have
/// gone, so that the failure alerts rather than the last good figures
/// staying in place.
pub fn write_failure_metrics(args: &ReportArgs, opts: &Options, started: Instant) -> Result<()> {
    let now_ms = opts.now_ms.unwrap_or_else(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    });
    let text = rdblens_report::prometheus::failure(now_ms, started.elapsed().as_secs_f64());
    Ok(crate::output::write_text(args.output.as_deref(), &text)?)
}

/// `--fail-on`: why the run fails, if the audit found anything at or above
/// the level (counting findings left out by the caps too).
pub fn failed_audit(args: &ReportArgs, audit: Option<&Audit>) -> Option<String> {
    audit_gate(args.fail_on, audit)
}

/// [`failed_audit`] for any command with a `--fail-on`, reading the audit
/// the run made (the one its report shows).
pub fn audit_gate(fail_on: Option<FailOn>, audit: Option<&Audit>) -> Option<String> {
    let level = match fail_on? {
        FailOn::Warn => rdblens_audit::Severity::Warn,
        FailOn::Crit => rdblens_audit::Severity::Crit,
    };
    let audit = audit?;
    let c = audit.counts;
    audit.fails(level).then(|| {
        format!(
            "--fail-on {level}: the audit found {} crit and {} warn findings",
            c.crit, c.warn
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report written to a file, read back, and its audit.
    fn render(
        summary: &Summary,
        format: Format,
        report_opts: ReportOptions,
        fail_on: Option<FailOn>,
    ) -> Result<(String, Option<Audit>)> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("report");
        let audit = write_report(summary, format, report_opts, Some(&path), fail_on)?;
        Ok((std::fs::read_to_string(&path)?, audit))
    }

    #[test]
    fn render_keeps_the_audit_it_ran_for_the_gate() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/rules/bigkeys.rdb");
        let data = std::fs::read(path).unwrap(); // ok: unit test
        let opts = Options {
            threads: 1,
            ..Options::default()
        };
        let summary = rdblens_engine::analyze_bytes(&data, "bigkeys.rdb", &opts).unwrap(); // ok: unit test
        let ttl = rendering(&["ttl".to_string()], 20, "auto", SortBy::Memory).unwrap(); // ok: unit test
        let (text, audit) = render(&summary, Format::Table, ttl.clone(), None).unwrap(); // ok: unit test
        assert!(audit.is_none() && !text.contains("Findings"));
        for format in [Format::Table, Format::Json, Format::Html] {
            let (_, audit) = render(&summary, format, ttl.clone(), Some(FailOn::Crit)).unwrap(); // ok: unit test
            let why = audit_gate(Some(FailOn::Crit), audit.as_ref());
            assert_eq!(
                why.as_deref(),
                Some("--fail-on crit: the audit found 1 crit and 8 warn findings")
            );
        }
        // The findings section shows the audit the gate reads.
        let all = rendering(&[], 20, "auto", SortBy::Memory).unwrap(); // ok: unit test
        let (text, audit) = render(&summary, Format::Table, all, None).unwrap(); // ok: unit test
        let audit = audit.unwrap(); // ok: unit test
        assert!(text.contains(&format!(
            "== Findings ({} crit, {} warn, {} info) ==",
            audit.counts.crit, audit.counts.warn, audit.counts.info
        )));
        assert_eq!(audit_gate(None, Some(&audit)), None);
    }
}
