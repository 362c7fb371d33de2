//! `rdblens keys`: one record per key, streamed in file order as CSV or
//! JSON lines. Keys are decoded in parallel a few batches at a time and
//! written in sequence, so memory stays bounded whatever the file size.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use rdblens_analysis::{map_keys_in_order, Damage, FileInfo, KeyItem, Options};
use rdblens_parser::RdbFile;

use crate::common::{FilterArgs, ModelArgs};
use crate::keyrow::{KeyRow, RowWriter};
use crate::output::{is_broken_pipe, writer};
use crate::progress::FilesProgress;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeysFormat {
    /// Comma-separated, with a header; redis-rdb-tools memory report columns first.
    Csv,
    /// One JSON object per line, same fields.
    Jsonl,
}

#[derive(Args, Debug)]
pub struct KeysArgs {
    /// The dump file.
    pub file: PathBuf,
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
}

/// Checks the flags before any work: errors here are usage errors (exit 2).
pub fn prepare(args: &KeysArgs) -> Result<Options> {
    args.model.options(args.filter.filter()?)
}

/// Damaged keys whose messages are printed; the rest are counted.
const DAMAGE_SHOWN: usize = 10;

/// What the walk found besides the records.
pub struct KeysOutcome {
    pub file: FileInfo,
    pub damaged: u64,
}

/// Streams the records. Damaged keys are reported on standard error as they
/// come (the first few) and counted.
pub fn run(args: &KeysArgs, opts: &Options) -> Result<KeysOutcome> {
    let path = &args.file;
    let name = path.display().to_string();
    let file = RdbFile::open(path).with_context(|| format!("{name}: cannot open"))?;
    // Not an RDB file: say so before writing anything (or creating --output).
    file.rdb().with_context(|| name.clone())?;
    let progress = FilesProgress::new(std::slice::from_ref(path), args.quiet);
    let opts = progress.options_for(opts, file.len() as u64);
    let out = writer(args.output.as_deref())?;
    let mut rows = match args.format {
        KeysFormat::Csv => RowWriter::csv(out),
        KeysFormat::Jsonl => RowWriter::jsonl(out),
    };
    let mut write_error = rows.header().err();
    let mut damaged = 0u64;
    let mut report_damage = |d: &Damage| {
        damaged += 1;
        if damaged as usize <= DAMAGE_SHOWN {
            progress.eprintln(&format!("rdblens: {name}: damaged key skipped: {}", d.message));
        }
    };
    let info = map_keys_in_order(
        file.bytes(),
        &name,
        &opts,
        |facts, settings| KeyRow::from_facts(facts, settings.now_ms),
        |item| {
            if write_error.is_some() {
                return false;
            }
            match item {
                KeyItem::Key(row) => write_error = rows.write(&row).err(),
                KeyItem::Damaged(d) => report_damage(&d),
            }
            write_error.is_none()
        },
    )
    .with_context(|| name.clone())?;
    drop(progress);
    if write_error.is_none() {
        write_error = rows.flush().err();
    }
    if damaged as usize > DAMAGE_SHOWN {
        eprintln!("rdblens: {name}: {damaged} damaged keys skipped in all");
    }
    match write_error {
        Some(e) if is_broken_pipe(&e) => {}
        Some(e) => {
            let to = args
                .output
                .as_ref()
                .map_or("standard output".into(), |p| p.display().to_string());
            return Err(e).with_context(|| format!("cannot write {to}"));
        }
        None => {}
    }
    Ok(KeysOutcome { file: info, damaged })
}
