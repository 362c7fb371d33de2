//! `rdblens keys`: one record per key, streamed in file order as CSV or
//! JSON lines. Keys are decoded in parallel a few batches at a time and
//! written in sequence, so memory stays bounded whatever the file size.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use rdblens_analysis::{map_file_keys_in_order, Damage, FileInfo, KeyItem, Options};

use crate::common::{FilterArgs, ModelArgs};
use crate::keyrow::{KeyRow, RowWriter};
use crate::output::{is_broken_pipe, Output};
use crate::progress::FilesProgress;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeysFormat {
    /// Comma-separated, with a header; redis-rdb-tools memory report columns first.
    Csv,
    /// One JSON object per line, same fields.
    Jsonl,
    /// A Parquet file, same columns, typed (needs a build with the `parquet` feature).
    Parquet,
}

#[derive(Args, Debug)]
pub struct KeysArgs {
    /// The dump files (`-` for standard input). Several: their records one
    /// file after the other, with a `file` column naming each (its --label, or its path).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The name of each file in the `file` column (repeatable: one per file, in order).
    #[arg(long, value_name = "NAME")]
    pub label: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: KeysFormat,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Write the records here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Read a file of an RDB version newer than any rdblens knows with the
    /// newest layout it knows, up to the first type or opcode that layout
    /// does not have.
    #[arg(long)]
    pub skip_unknown: bool,
}

/// Checks the flags before any work: errors here are usage errors (exit 2).
pub fn prepare(args: &KeysArgs) -> Result<Options> {
    if args.format == KeysFormat::Parquet {
        if !cfg!(feature = "parquet") {
            anyhow::bail!(
                "--format parquet: this rdblens was built without Parquet support (build it with `cargo install --path crates/rdblens --features parquet`)"
            );
        }
        if args.output.is_none() && std::io::stdout().is_terminal() {
            anyhow::bail!("--format parquet writes a binary file: give -o FILE or redirect standard output");
        }
    }
    if args.format == KeysFormat::Parquet && args.files.len() > 1 {
        anyhow::bail!("--format parquet writes one file per dump: give one FILE (query the files together)");
    }
    crate::input::refuse_repeated_inputs(&args.files)?;
    crate::common::check_labels(&args.label, args.files.len())?;
    let inputs = args.files.iter().chain(&args.model.config);
    crate::output::refuse_input_as_output(args.output.as_deref(), inputs.map(|p| p.as_path()))?;
    let mut opts = args.model.options(args.filter.filter()?)?;
    opts.skip_unknown = args.skip_unknown;
    Ok(opts)
}

/// Damaged keys whose messages are printed; the rest are counted.
const DAMAGE_SHOWN: usize = 10;

/// What the walks found besides the records.
pub struct KeysOutcome {
    pub files: Vec<FileInfo>,
    pub damaged: u64,
}

/// Streams the records of every file, one file after the other. Damaged
/// keys are reported on standard error as they come (the first few of each
/// file) and counted.
pub fn run(args: &KeysArgs, opts: &Options) -> Result<KeysOutcome> {
    // Not an RDB file: say so before writing anything (or creating --output).
    // Streams are read (spooled) here, one after the other.
    let mut opened = Vec::with_capacity(args.files.len());
    for path in &args.files {
        opened.push(crate::input::open_rdb(path, opts.skip_unknown, args.quiet)?);
    }
    let several = args.files.len() > 1;
    let (output, out) = Output::open(args.output.as_deref())?;
    let mut rows = match args.format {
        KeysFormat::Csv => RowWriter::csv(out),
        KeysFormat::Jsonl => RowWriter::jsonl(out),
        #[cfg(feature = "parquet")]
        KeysFormat::Parquet => RowWriter::parquet(out).map_err(|e| output.error(e))?,
        #[cfg(not(feature = "parquet"))]
        KeysFormat::Parquet => anyhow::bail!("this rdblens was built without Parquet support"),
    };
    let mut write_error = rows.header(several).err();
    let mut outcome = KeysOutcome {
        files: Vec::new(),
        damaged: 0,
    };
    for (i, (path, file)) in args.files.iter().zip(opened).enumerate() {
        let name = crate::input::input_name(path);
        let label = args.label.get(i).cloned().unwrap_or_else(|| name.clone());
        let column = several.then_some(label.as_str());
        let progress = FilesProgress::for_bytes(file.len() as u64, args.quiet);
        let opts = progress.options_for(opts, file.len() as u64);
        let mut damaged = 0u64;
        let mut written = 0u64;
        let mut report_damage = |d: &Damage| {
            damaged += 1;
            if damaged as usize <= DAMAGE_SHOWN {
                progress.eprintln(&format!("rdblens: {name}: damaged key skipped: {}", d.message));
            }
        };
        let info = map_file_keys_in_order(
            &file,
            &label,
            &opts,
            |facts, settings| KeyRow::from_facts(facts, settings.now_ms),
            |item| {
                if write_error.is_some() {
                    return false;
                }
                match item {
                    KeyItem::Key(mut row) => {
                        written += 1;
                        row.file = column.map(str::to_string);
                        write_error = rows.write(&row).err();
                    }
                    KeyItem::Damaged(d) => report_damage(&d),
                }
                write_error.is_none()
            },
        )
        .with_context(|| name.clone())?;
        drop(progress);
        crate::common::note_if_nothing_matched(&opts.filter, written, info.keys);
        if damaged as usize > DAMAGE_SHOWN {
            eprintln!("rdblens: {name}: {damaged} damaged keys skipped in all");
        }
        outcome.damaged += damaged;
        outcome.files.push(info);
        if write_error.is_some() {
            break;
        }
    }
    if write_error.is_none() {
        write_error = rows.flush().err();
    }
    drop(rows);
    match write_error {
        // `rdblens keys ... | head`: the reader has what it wanted.
        Some(e) if is_broken_pipe(&e) => {}
        Some(e) => return Err(output.error(e).into()),
        None => output.commit()?,
    }
    Ok(outcome)
}
