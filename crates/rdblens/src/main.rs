//! The `rdblens` command line: `report` (tables or JSON), `keys` (one CSV
//! or JSON-lines record per key, streamed) and `check` (full validation).
//!
//! Exit codes: 0 ok, 1 `report --fail-on` found design-rule findings at or
//! above that severity, 2 bad usage, 3 unreadable, corrupt or incomplete input.

mod check;
mod common;
mod keyrow;
mod keys;
mod output;
mod progress;
mod report;

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
    /// Validate a dump: structure, every value, and the trailing checksum.
    /// Prints version, aux fields and key counts; exits 0 only if the file is sound.
    Check {
        /// The dump file(s) to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
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
                    if input_problems(&summary.files) {
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
        Command::Check { files } => {
            let mut code = ExitCode::SUCCESS;
            for file in &files {
                match check::run(file, &mut std::io::stdout().lock()) {
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
