//! The `rdblens` command line: `report` (tables or JSON, or a mergeable
//! summary), `merge` (summaries made on several hosts into one report),
//! `diff` (two snapshots), `compare-info` (Redis 8 INFO keysizes), `advise` (split plans), `keys` (one CSV, JSON-lines or Parquet record
//! per key, streamed) and `check` (full validation).
//!
//! Exit codes: 0 ok, 1 `report --fail-on` found design-rule findings at or
//! above that severity (or `diff --fail-on-growth` growth above a limit, or
//! `compare-info` bins that differ), 2 bad usage (an output that is an input included,
//! a primary's snapshot without `--yes`),
//! 3 unreadable, corrupt or incomplete input (a server that fails or cuts the transfer too), 4 the output could not be
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
mod compare_info;
mod dataset;
mod diff;
mod fleet;
mod input;
mod keyrow;
mod keys;
mod live;
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
mod time;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use rdblens_engine::{AnalysisError, FileError};
use rdblens_summary::FileInfo;

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
    /// Compare a dump's Redis 8 `INFO keysizes` histograms with a server's
    /// saved `INFO keysizes`, bin by bin; exit 1 when any bin differs
    /// (docs/keysizes.md).
    CompareInfo(Box<compare_info::CompareInfoArgs>),
    /// Validate a dump: structure, every value, and the trailing checksum.
    /// Prints version, aux fields and key counts; exits 0 only if the file is sound.
    Check {
        /// The dump file(s) to check, or server URLs (redis://, rediss://, unix://: docs/live.md).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Read a file of an RDB version newer than any rdblens knows with
        /// the newest layout it knows, up to the first type or opcode that
        /// layout does not have.
        #[arg(long)]
        skip_unknown: bool,
        #[command(flatten)]
        live: live::LiveArgs,
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

/// `report --fail-on`: a design-rule finding at or above the level; `diff
/// --fail-on-growth`: a figure that grew by more than its limit.
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
/// output that is an input or a dataset shard that exists, 5 for a failure of rdblens itself, `default`
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

/// Whether `cause` is (or wraps) a setting the object storage client does
/// not take (`RDBLENS_OBJECT_PARTS`): bad usage.
fn is_object_setting(cause: &(dyn std::error::Error + 'static)) -> bool {
    let objects_error = cause.downcast_ref::<rdblens_objects::Error>().or_else(|| {
        cause
            .downcast_ref::<std::io::Error>()
            .and_then(|e| e.get_ref())
            .and_then(|e| e.downcast_ref::<rdblens_objects::Error>())
    });
    matches!(objects_error, Some(rdblens_objects::Error::Setting(_)))
}

/// The exit code for `e` (see [`fail`]), decided by the error types in its
/// chain, never by its text.
fn exit_code(e: &anyhow::Error, default: u8) -> u8 {
    e.chain()
        .find_map(|cause| {
            if cause.is::<output::WriteError>() {
                Some(EXIT_WRITE)
            } else if cause.is::<output::OutputIsInput>()
                || cause.is::<dataset::ShardExists>()
                || live::is_not_confirmed(cause)
                || is_object_setting(cause)
            {
                Some(EXIT_USAGE)
            } else if live::save_write_error(cause) {
                Some(EXIT_WRITE)
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
            let started = std::time::Instant::now();
            match report::run(&args, &opts, report_opts, started) {
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
                Err(e) => {
                    let code = fail(&e, EXIT_BAD_INPUT);
                    let wrote_nothing = exit_code(&e, EXIT_BAD_INPUT) != EXIT_WRITE;
                    if args.format == Some(report::Format::Prometheus) && wrote_nothing {
                        if let Err(e) = report::write_failure_metrics(&args, &opts, started) {
                            eprintln!("rdblens: {e:#}");
                        }
                    }
                    code
                }
            }
        }
        Command::Keys(args) => keys_command(&args),
        Command::Advise(args) => advise::command(&args),
        Command::Merge(args) => merge_command(&args),
        Command::Diff(args) => diff_command(&args),
        Command::CompareInfo(args) => compare_info_command(&args),
        Command::Completions { shell } => {
            let mut text = Vec::new();
            clap_complete::generate(shell, &mut command(), "rdblens", &mut text);
            print_generated(&text)
        }
        Command::Man => match man_page() {
            Ok(text) => print_generated(&text),
            Err(e) => fail(&e.into(), EXIT_WRITE),
        },
        Command::Check {
            files,
            live,
            skip_unknown,
        } => {
            if let Err(e) = live::configure(&live, &files) {
                return fail(&e, EXIT_USAGE);
            }
            let files = match input::expand_objects(&files).and_then(|f| live::expand_clusters(&f)) {
                Ok(files) => files,
                Err(e) => return fail(&e, EXIT_BAD_INPUT),
            };
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
                    eprintln!("rdblens: {}: {err:#}", input::input_name(file));
                    code = ExitCode::from(exit_code(&err, EXIT_BAD_INPUT));
                }
            }
            code
        }
    }
}

/// Every exit status rdblens uses, for the manual page's EXIT STATUS
/// section (README.md's "Commands" says the same).
const EXIT_STATUSES: [(u8, &str); 6] = [
    (0, "Success. A reader that stops early (rdblens keys dump.rdb | head) is not an error."),
    (
        EXIT_FINDINGS,
        "report or merge with --fail-on LEVEL: a design-rule finding at or above LEVEL (the CI gate); \
         the report is printed first. diff with --fail-on-growth LIMITS: a figure grew by more than \
         its limit; the diff is printed first and each alert is named on standard error. \
         compare-info: a bin of the dump's INFO keysizes histograms differs from the server's; \
         the bins that differ are printed.",
    ),
    (
        EXIT_USAGE,
        "Bad usage: an unknown flag, an invalid value, --threads above 8 per core, the same input twice, \
         an output that is one of the inputs (refused before anything is opened for writing), or a \
         server URL whose primary would fork for a snapshot without --yes when standard input is not a terminal.",
    ),
    (
        EXIT_BAD_INPUT,
        "An input is unreadable, not an RDB file, truncated (a cut file), has values that do not decode \
         or a checksum mismatch, or shrank while it was read, or a shard of object storage could not be read (it is \
         named in the report); what could be read is reported first (with --strict, nothing). \
         A server URL that cannot be reached, refuses the login or the snapshot, stops answering for --timeout \
         or cuts the transfer: nothing is written (docs/live.md).",
    ),
    (
        EXIT_WRITE,
        "The output could not be written (a full disk, > /dev/full, a directory that does not exist); \
         the message names it.",
    ),
    (
        EXIT_INTERNAL,
        "rdblens itself failed (a bug, or a machine that cannot start threads): never a fault in the input.",
    ),
];

/// The manual page, one for every command: the command, the subcommands
/// (each in a section of this page, since no rdblens-SUBCOMMAND(1) page is
/// installed), each subcommand's options, the exit statuses, the version.
fn man_page() -> std::io::Result<Vec<u8>> {
    use clap_mangen::roff::{bold, roman, Roff};
    let cmd = Cli::command();
    let page = clap_mangen::Man::new(cmd.clone());
    let mut text = Vec::new();
    page.render_title(&mut text)?;
    page.render_name_section(&mut text)?;
    page.render_synopsis_section(&mut text)?;
    page.render_description_section(&mut text)?;
    page.render_options_section(&mut text)?;
    let about = |sub: &clap::Command| sub.get_about().map(|a| a.to_string()).unwrap_or_default();
    let mut list = Roff::new();
    list.control("SH", ["SUBCOMMANDS"]);
    for sub in cmd.get_subcommands() {
        let name = sub.get_name();
        list.control("TP", []).text([bold(format!("rdblens {name}"))]);
        list.text([roman(format!(
            "{}. Options: section RDBLENS {} below.",
            about(sub),
            name.to_uppercase()
        ))]);
    }
    list.to_writer(&mut text)?;
    for sub in cmd.get_subcommands() {
        let mut heading = Roff::new();
        let title = format!("RDBLENS {}", sub.get_name().to_uppercase());
        heading.control("SH", [title.as_str()]).text([roman(about(sub))]);
        heading.to_writer(&mut text)?;
        clap_mangen::Man::new(sub.clone()).render_options_section(&mut text)?;
    }
    let mut status = Roff::new();
    status.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in EXIT_STATUSES {
        status
            .control("TP", [])
            .text([bold(code.to_string())])
            .text([roman(meaning)]);
    }
    status.control("PP", []).text([roman(
        "A run stopped by a signal (Ctrl-C) has no status of its own: the shell reports 128 plus the \
         signal's number.",
    )]);
    status.to_writer(&mut text)?;
    page.render_version_section(&mut text)?;
    Ok(preamble_once(&text))
}

/// clap_mangen starts every piece it renders with the same two-line
/// apostrophe preamble; the page needs it once, at the top.
fn preamble_once(text: &[u8]) -> Vec<u8> {
    const PREAMBLE: &[u8] = b".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.windows(PREAMBLE.len()).position(|w| w == PREAMBLE) {
        out.extend_from_slice(&rest[..at]);
        if out.is_empty() {
            out.extend_from_slice(PREAMBLE);
        }
        rest = &rest[at + PREAMBLE.len()..];
    }
    out.extend_from_slice(rest);
    out
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
fn damaged_values(summary: &rdblens_summary::Summary) -> bool {
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
        Ok(diff::Diffed {
            sides: [old, new],
            growth_alerts,
        }) => {
            let old_problems = input_problems(&old.files);
            if old_problems | input_problems(&new.files) {
                ExitCode::from(EXIT_BAD_INPUT)
            } else if !growth_alerts.is_empty() {
                for alert in &growth_alerts {
                    eprintln!("rdblens: --fail-on-growth: {alert}");
                }
                ExitCode::from(EXIT_FINDINGS)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => summary_error(&e),
    }
}

fn compare_info_command(args: &compare_info::CompareInfoArgs) -> ExitCode {
    let opts = match compare_info::prepare(args) {
        Ok(o) => o,
        Err(e) => return fail(&e, EXIT_USAGE),
    };
    match compare_info::run(args, &opts) {
        Ok((summary, comparison)) => {
            if damaged_values(&summary) || input_problems(&summary.files) {
                ExitCode::from(EXIT_BAD_INPUT)
            } else if !comparison.differences.is_empty() {
                ExitCode::from(EXIT_FINDINGS)
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
