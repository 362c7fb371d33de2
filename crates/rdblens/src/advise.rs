//! `rdblens advise`: the split plans alone (docs/advisor.md), as text or
//! JSON, from the same analysis and rule settings as `report`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use rdblens_summary::Options;

use crate::common::{FilterArgs, ModelArgs};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Args, Debug)]
pub struct AdviseArgs {
    /// Dump files, or server URLs (redis://, rediss://, unix://: docs/live.md); several: one combined analysis.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Namespace separator.
    #[arg(long, default_value = ":", value_parser = crate::common::separator_byte)]
    pub separator: u8,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Design-rule settings: a TOML rules file (thresholds, caps; docs/audit.md).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Override one rule setting, e.g. big-collection.warn=2000 (repeatable; wins over --rules).
    #[arg(long = "set", value_name = "RULE.FIELD=VALUE")]
    pub set: Vec<String>,
    /// Write the plans here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Shards read at the same time when inputs are object URLs (a prefix
    /// or glob names many; docs/object-storage.md).
    #[arg(long, value_name = "N", default_value_t = crate::fleet::DEFAULT_JOBS, value_parser = crate::fleet::parse_jobs)]
    pub jobs: usize,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Last, so that its help heading covers its flags alone.
    #[command(flatten)]
    pub live: crate::live::LiveArgs,
}

fn options(args: &AdviseArgs) -> Result<Options> {
    crate::input::refuse_repeated_inputs(&args.files)?;
    crate::live::configure(&args.live, &args.files)?;
    let inputs = args.files.iter().chain(&args.model.config).chain(&args.rules);
    crate::output::refuse_input_as_output(args.output.as_deref(), inputs.map(|p| p.as_path()))?;
    crate::output::check_writable(args.output.as_deref())?;
    let separator = args.separator;
    let base = args.model.options(args.filter.filter()?)?;
    let rules = rdblens_audit::load(args.rules.as_deref(), &base.config, &args.set)?;
    Ok(Options {
        threads: match base.threads {
            0 => crate::live::default_threads(&args.files),
            given => given,
        },
        separator,
        rules,
        ..base
    })
}

/// The plans as text or JSON.
fn run(args: &AdviseArgs, opts: &Options) -> Result<rdblens_summary::Summary> {
    let summary = crate::analyze::analyze_files(&args.files, &[], opts, args.jobs, args.quiet)?;
    let target = rdblens_advice::target_for(&summary, opts.quantum, &opts.config);
    let audit = rdblens_audit::audit(&summary);
    let plans = rdblens_advice::plans(&summary, &audit, &target);
    let text = match args.format {
        Format::Json => serde_json::to_string_pretty(&plans)?,
        Format::Table => rdblens_advice::text::render(&plans),
    };
    crate::output::write_text(args.output.as_deref(), &text)?;
    Ok(summary)
}

pub fn command(args: &AdviseArgs) -> ExitCode {
    let opts = match options(args) {
        Ok(o) => o,
        Err(e) => return crate::fail(&e, crate::EXIT_USAGE),
    };
    match run(args, &opts) {
        Ok(summary) => {
            let problems = crate::input_problems(&summary.files);
            if problems || summary.keys.damaged_keys > 0 {
                ExitCode::from(crate::EXIT_BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => crate::fail(&e, crate::EXIT_BAD_INPUT),
    }
}
