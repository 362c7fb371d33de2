//! The `rdblens` command line.
//!
//! Exit codes: 0 sound, 2 bad usage (clap), 3 unreadable or corrupt input.

mod check;

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
    /// Validate a dump: structure, every value, and the trailing checksum.
    /// Prints version, aux fields and key counts; exits 0 only if the file is sound.
    Check {
        /// The dump file(s) to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

/// Exit code for unreadable or corrupt input.
pub const EXIT_BAD_INPUT: u8 = 3;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
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
