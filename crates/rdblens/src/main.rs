//! The `rdblens` command line: `report` (tables or JSON, or a mergeable
//! summary), `merge` (summaries made on several hosts into one report),
//! `diff` (two snapshots), `advise` (split plans), `keys` (one CSV, JSON-lines or Parquet record
//! per key, streamed) and `check` (full validation).
//!
//! Exit codes: 0 ok, 1 `report --fail-on` found design-rule findings at or
//! above that severity, 2 bad usage (an output that is an input included),
//! 3 unreadable, corrupt or incomplete input, 4 the output could not be
//! written, 5 rdblens itself failed (a bug: never the input's fault).

// The only unsafe code is the SIGBUS guard around mapped reads (`mapguard.rs`), allowed there.
#![deny(unsafe_code)]
// A failure that can happen is an error, never a panic: no unwrap, expect
// or panic! outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod advise;
mod analyze;
mod check;
mod common;
mod diff;
mod input;
mod keyrow;
mod keys;
#[allow(unsafe_code)] // the signal handler: see its SAFETY comments
mod mapguard;
mod merge;
mod output;
#[cfg(feature = "parquet")]
mod parquet_rows;
mod progress;
mod report;
mod rows;
mod summary_file;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use rdblens_analysis::{AnalysisError, FileError, FileInfo};

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
    /// Print a shell completion script, e.g. `rdblens completions bash >
    /// /etc/bash_completion.d/rdblens` (bash, zsh, fish, elvish, powershell).
    Completions { shell: clap_complete::Shell },
    /// Print the manual page (roff), e.g. `rdblens man > /usr/local/share/man/man1/rdblens.1`.
    Man,
}

/// `--version`: the build and the RDB versions it reads.
fn version_text() -> String {
    format!(
        "{}\nreads {}",
        env!("CARGO_PKG_VERSION"),
        rdblens_parser::SUPPORTED
    )
}

/// The command line's definition: `--version` with the RDB versions too
/// (`-V` and the man page's header have the version alone).
fn command() -> clap::Command {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    Cli::command().long_version(VERSION.get_or_init(version_text).as_str())
}

/// `report --fail-on`: a design-rule finding at or above the level.
const EXIT_FINDINGS: u8 = 1;
const EXIT_USAGE: u8 = 2;
/// Unreadable, corrupt or incomplete input.
const EXIT_BAD_INPUT: u8 = 3;
/// The output could not be written (a full disk, `> /dev/full`...).
const EXIT_WRITE: u8 = 4;
/// rdblens itself failed (a bug, or a machine that cannot start threads):
/// never reported as damage in the input.
const EXIT_INTERNAL: u8 = 5;

/// Prints `e` and returns its exit code: 4 for a write error, 2 for an
/// output that is an input, 5 for a failure of rdblens itself, `default`
/// for anything else.
fn fail(e: &anyhow::Error, default: u8) -> ExitCode {
    eprintln!("rdblens: {e:#}");
    ExitCode::from(exit_code(e, default))
}

/// The analysis error `cause` is or names, if any.
fn analysis_error<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<&'a AnalysisError> {
    cause
        .downcast_ref::<AnalysisError>()
        .or_else(|| cause.downcast_ref::<FileError>().map(|f| &f.error))
}

/// The exit code for `e` (see [`fail`]), decided by the error types in its
/// chain, never by its text.
fn exit_code(e: &anyhow::Error, default: u8) -> u8 {
    e.chain()
        .find_map(|cause| {
            if cause.is::<output::WriteError>() {
                Some(EXIT_WRITE)
            } else if cause.is::<output::OutputIsInput>() {
                Some(EXIT_USAGE)
            } else if analysis_error(cause).is_some_and(|e| !e.is_input()) {
                Some(EXIT_INTERNAL)
            } else {
                None
            }
        })
        .unwrap_or(default)
}

fn main() -> ExitCode {
    mapguard::install();
    let cli = match Cli::from_arg_matches(&command().get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match cli.command {
        Command::Report(args) => {
            let (opts, report_opts) = match report::prepare(&args) {
                Ok(o) => o,
                Err(e) => return fail(&e, EXIT_USAGE),
            };
            match report::run(&args, &opts, report_opts) {
                Ok((summary, audit)) => {
                    let problems = input_problems(&summary.files);
                    if damaged_values(&summary) || problems {
                        ExitCode::from(EXIT_BAD_INPUT)
                    } else if let Some(why) = report::failed_audit(&args, audit.as_ref()) {
                        eprintln!("rdblens: {why}");
                        ExitCode::from(EXIT_FINDINGS)
                    } else {
                        ExitCode::SUCCESS
                    }
                }
                Err(e) => fail(&e, EXIT_BAD_INPUT),
            }
        }
        Command::Keys(args) => keys_command(&args),
        Command::Advise(args) => advise::command(&args),
        Command::Merge(args) => merge_command(&args),
        Command::Diff(args) => diff_command(&args),
        Command::Completions { shell } => {
            let mut text = Vec::new();
            clap_complete::generate(shell, &mut command(), "rdblens", &mut text);
            print_generated(&text)
        }
        Command::Man => match man_page() {
            Ok(text) => print_generated(&text),
            Err(e) => fail(&e.into(), EXIT_WRITE),
        },
        Command::Check { files, skip_unknown } => {
            let mut code = ExitCode::SUCCESS;
            for file in &files {
                // Buffered per file (a few lines), so that a failure to write
                // standard output is told apart from a damaged input.
                let mut text = Vec::new();
                let checked = check::run(file, skip_unknown, &mut text);
                let mut out = std::io::stdout().lock();
                match out.write_all(&text).and_then(|()| out.flush()) {
                    Ok(()) => {}
                    // `rdblens check ... | head`: the reader has enough.
                    Err(e) if output::is_broken_pipe(&e) => break,
                    Err(error) => {
                        let e = output::WriteError {
                            target: "standard output".into(),
                            error,
                        };
                        return fail(&e.into(), EXIT_WRITE);
                    }
                }
                if let Err(err) = checked {
                    eprintln!("rdblens: {}: {err:#}", file.display());
                    code = ExitCode::from(EXIT_BAD_INPUT);
                }
            }
            code
        }
    }
}

/// The manual page: the command, then each subcommand's options.
fn man_page() -> std::io::Result<Vec<u8>> {
    let cmd = Cli::command();
    let mut text = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut text)?;
    for sub in cmd.get_subcommands() {
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        writeln!(text, ".SH \"RDBLENS {}\"\n{about}", sub.get_name().to_uppercase())?;
        clap_mangen::Man::new(sub.clone()).render_options_section(&mut text)?;
    }
    Ok(text)
}

/// Writes a generated script or page to standard output.
fn print_generated(text: &[u8]) -> ExitCode {
    match output::write_all(None, text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e.into(), EXIT_WRITE),
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
        if let Some(problem) = f.checksum_problem() {
            eprintln!("rdblens: {}: {problem}", f.path);
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
/// another version are usage errors (2), unreadable inputs 3, write errors 4.
fn summary_error(e: &summary_file::SummaryError) -> ExitCode {
    match e {
        summary_file::SummaryError::Mismatch(_) => {
            eprintln!("rdblens: {e}");
            ExitCode::from(EXIT_USAGE)
        }
        summary_file::SummaryError::Input(e) => fail(e, EXIT_BAD_INPUT),
    }
}

fn merge_command(args: &merge::MergeArgs) -> ExitCode {
    let report_opts = match merge::prepare(args) {
        Ok(o) => o,
        Err(e) => return fail(&e, EXIT_USAGE),
    };
    match merge::run(args, report_opts) {
        Ok((summary, audit)) => {
            if input_problems(&summary.files) {
                ExitCode::from(EXIT_BAD_INPUT)
            } else if let Some(why) = report::audit_gate(args.fail_on, audit.as_ref()) {
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
        Err(e) => return fail(&e, EXIT_USAGE),
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
        Err(e) => return fail(&e, EXIT_USAGE),
    };
    match keys::run(args, &opts) {
        Ok(outcome) => {
            let problems = input_problems(&outcome.files);
            if problems || outcome.damaged > 0 {
                ExitCode::from(EXIT_BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => fail(&e, EXIT_BAD_INPUT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn exit_codes_come_from_the_error_types_not_their_text() {
        let internal = anyhow::Error::new(AnalysisError::Internal("a worker thread panicked: x".into()))
            .context("dump.rdb");
        assert_eq!(exit_code(&internal, EXIT_BAD_INPUT), EXIT_INTERNAL);
        let bad = rdblens_parser::Rdb::new(b"NOTREDIS0011")
            .map(|_| ())
            .map_err(AnalysisError::from);
        let bad = bad.context("dump.rdb").unwrap_err(); // ok: unit test
        assert_eq!(exit_code(&bad, EXIT_BAD_INPUT), EXIT_BAD_INPUT);
        // Text that looks like an internal error is still the default.
        let of_a_file = anyhow::Error::new(FileError {
            index: 1,
            name: "b.rdb".into(),
            error: AnalysisError::Internal("a lane panicked".into()),
        });
        assert_eq!(exit_code(&of_a_file, EXIT_BAD_INPUT), EXIT_INTERNAL);
        let text = anyhow::anyhow!("internal error: a worker thread panicked");
        assert_eq!(exit_code(&text, EXIT_BAD_INPUT), EXIT_BAD_INPUT);
        let write = anyhow::Error::new(output::WriteError {
            target: "out.json".into(),
            error: std::io::Error::other("disk full"),
        });
        assert_eq!(exit_code(&write, EXIT_BAD_INPUT), EXIT_WRITE);
    }
}
