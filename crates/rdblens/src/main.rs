//! The `rdblens` command line.
//!
//! Exit codes: 0 ok, 2 bad usage, 3 unreadable, corrupt or incomplete input.

mod check;
mod report;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    /// Validate a dump: structure, every value, and the trailing checksum.
    /// Prints version, aux fields and key counts; exits 0 only if the file is sound.
    Check {
        /// The dump file(s) to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

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
                    let incomplete: Vec<_> =
                        summary.files.iter().filter(|f| f.incomplete.is_some()).collect();
                    for f in &incomplete {
                        if let Some(d) = &f.incomplete {
                            eprintln!("rdblens: {}: incomplete: {}", f.path, d.message);
                        }
                    }
                    if incomplete.is_empty() {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::from(EXIT_BAD_INPUT)
                    }
                }
                Err(e) => {
                    eprintln!("rdblens: {e:#}");
                    ExitCode::from(EXIT_BAD_INPUT)
                }
            }
        }
        Command::Check { files } => {
            let mut code = ExitCode::SUCCESS;
            for file in &files {
                if let Err(err) = check::run(file, &mut std::io::stdout().lock()) {
                    eprintln!("rdblens: {}: {err:#}", file.display());
                    code = ExitCode::from(EXIT_BAD_INPUT);
                }
            }
            code
        }
    }
}
