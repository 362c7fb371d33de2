//! The `rdblens` command line: `report` (tables or JSON, or a mergeable
//! summary), `merge` (summaries made on several hosts into one report),
//! `diff` (two snapshots), `advise` (split plans), `keys` (one CSV, JSON-lines or Parquet record
//! per key, streamed) and `check` (full validation).
//!
//! Exit codes: 0 ok, 1 `report --fail-on` found design-rule findings at or
//! above that severity, 2 bad usage, 3 unreadable, corrupt or incomplete input.

mod advise;
mod analyze;
mod check;
mod common;
mod diff;
mod input;
mod keyrow;
mod keys;
mod merge;
mod output;
#[cfg(feature = "parquet")]
mod parquet_rows;
mod progress;
mod report;
mod summary_file;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rdblens_analysis::FileInfo;

#[derive(Parser)]
#[command(
    name = "rdblens",
    version,
    about = "Offline analyzer for Redis and Valkey RDB snapshot files"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyse dumps: big keys, memory, encodings, TTLs, expiry clusters, namespaces, slots.
    Report(Box<report::ReportArgs>),
    /// One record per key, in file order, as CSV (redis-rdb-tools memory
    /// report columns first) or JSON lines; streamed, memory bounded.
    Keys(Box<keys::KeysArgs>),
    /// Merge summary files made on different hosts (`report --format json
    /// --summary-only`, one per shard) into one report, as if every dump had
    /// been analysed in one run.
    Merge(Box<merge::MergeArgs>),
    /// What changed between two snapshots (dumps or summary files): growth
    /// per namespace, type and encoding, keys that became big, new expiry clusters.
    Diff(Box<diff::DiffArgs>),
    /// Split plans for the big keys and sprawling namespaces: buckets, key
    /// names, memory before and after on the target server, migration steps
    /// (docs/advisor.md).
    Advise(Box<advise::AdviseArgs>),
    /// Validate a dump: structure, every value, and the trailing checksum.
    /// Prints version, aux fields and key counts; exits 0 only if the file is sound.
    Check {
        /// The dump file(s) to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Read a file of an RDB version newer than any rdblens knows with
        /// the newest layout it knows, up to the first type or opcode that
        /// layout does not have.
        #[arg(long)]
        skip_unknown: bool,
    },
}

/// `report --fail-on`: a design-rule finding at or above the level.
const EXIT_FINDINGS: u8 = 1;
const EXIT_USAGE: u8 = 2;
/// Unreadable, corrupt or incomplete input.
const EXIT_BAD_INPUT: u8 = 3;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Report(args) => {
            let (opts, report_opts) = match report::prepare(&args) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("rdblens: {e:#}");
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            match report::run(&args, &opts, report_opts) {
                Ok(summary) => {
                    let problems = input_problems(&summary.files);
                    if damaged_values(&summary) || problems {
                        ExitCode::from(EXIT_BAD_INPUT)
                    } else if let Some(why) = report::failed_audit(&args, &summary) {
                        eprintln!("rdblens: {why}");
                        ExitCode::from(EXIT_FINDINGS)
                    } else {
                        ExitCode::SUCCESS
                    }
                }
                Err(e) => {
                    eprintln!("rdblens: {e:#}");
                    ExitCode::from(EXIT_BAD_INPUT)
                }
            }
        }
        Command::Keys(args) => keys_command(&args),
        Command::Advise(args) => advise::command(&args),
        Command::Merge(args) => merge_command(&args),
        Command::Diff(args) => diff_command(&args),
        Command::Check { files, skip_unknown } => {
            let mut code = ExitCode::SUCCESS;
            for file in &files {
                match check::run(file, skip_unknown, &mut std::io::stdout().lock()) {
                    Ok(()) => {}
                    // `rdblens check ... | head`: the reader has enough.
                    Err(err) if output::is_broken_pipe_error(&err) => break,
                    Err(err) => {
                        eprintln!("rdblens: {}: {err:#}", file.display());
                        code = ExitCode::from(EXIT_BAD_INPUT);
                    }
                }
            }
            code
        }
    }
}

/// Reports, on standard error, files that stopped early or fail their
/// checksum; true if there was any (exit 3, after the output).
fn input_problems(files: &[FileInfo]) -> bool {
    let mut any = false;
    for f in files {
        if let Some(d) = &f.incomplete {
            eprintln!("rdblens: {}: incomplete: {}", f.path, d.message);
            any = true;
        }
        if f.checksum == "mismatch" {
            eprintln!(
                "rdblens: {}: checksum mismatch: the file is damaged (`rdblens check` shows the values)",
                f.path
            );
            any = true;
        }
    }
    any
}

/// Reports, on standard error, values that could not be decoded (the report
/// left them out); true if there was any (exit 3, after the output).
fn damaged_values(summary: &rdblens_analysis::Summary) -> bool {
    let k = &summary.keys;
    match k.damage.first() {
        Some(first) => {
            eprintln!(
                "rdblens: {} keys could not be decoded and are left out of the report; first: {}",
                k.damaged_keys, first.message
            );
            true
        }
        None => false,
    }
}

/// Exit code and message for a summary-file problem: other settings or
/// another version are usage errors (2), unreadable inputs 3.
fn summary_error(e: &summary_file::SummaryError) -> ExitCode {
    eprintln!("rdblens: {e}");
    match e {
        summary_file::SummaryError::Mismatch(_) => ExitCode::from(EXIT_USAGE),
        summary_file::SummaryError::Input(_) => ExitCode::from(EXIT_BAD_INPUT),
    }
}

fn merge_command(args: &merge::MergeArgs) -> ExitCode {
    let report_opts = match merge::prepare(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("rdblens: {e:#}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match merge::run(args, report_opts) {
        Ok(summary) => {
            if input_problems(&summary.files) {
                ExitCode::from(EXIT_BAD_INPUT)
            } else if let Some(why) = report::audit_gate(args.fail_on, &summary) {
                eprintln!("rdblens: {why}");
                ExitCode::from(EXIT_FINDINGS)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => summary_error(&e),
    }
}

fn diff_command(args: &diff::DiffArgs) -> ExitCode {
    let (opts, report_opts) = match diff::prepare(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("rdblens: {e:#}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match diff::run(args, &opts, report_opts) {
        Ok([old, new]) => {
            let old_problems = input_problems(&old.files);
            if old_problems | input_problems(&new.files) {
                ExitCode::from(EXIT_BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => summary_error(&e),
    }
}

fn keys_command(args: &keys::KeysArgs) -> ExitCode {
    let opts = match keys::prepare(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("rdblens: {e:#}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match keys::run(args, &opts) {
        Ok(outcome) => {
            let problems = input_problems(std::slice::from_ref(&outcome.file));
            if problems || outcome.damaged > 0 {
                ExitCode::from(EXIT_BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("rdblens: {e:#}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}
