//! `rdblens keys`: one record per key, streamed in file order as CSV or
//! JSON lines. Keys are decoded in parallel a few batches at a time and
//! written in sequence, so memory stays bounded whatever the file size.
//!
//! The allocator build the estimates assume is settled by a pass of its own
//! before the first record goes out, which stops as soon as the part of the
//! dump it has read settles the build; the walk that writes the records
//! then sums the evidence of the whole dump to confirm it. In the rare case
//! the whole dump overturns it (`InOrder::Again`), one dump written to a
//! file (`-o`) is written again, and records already sent to standard
//! output stay as they are, with a warning that says how to get exact ones.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use rdblens_engine::{map_file_keys_in_order_rewindable, InOrder, KeyItem};
use rdblens_summary::{Damage, FileInfo, KeyFacts, Options, Settings};

use crate::common::{FilterArgs, ModelArgs};
use crate::keyrow::KeyRow;
use crate::output::{is_broken_pipe, Output};
use crate::progress::FilesProgress;
use crate::rows::{csv_line, RowWriter};

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
    /// The dump files (`-` for standard input), or server URLs (redis://,
    /// rediss://, unix://: docs/live.md). Several: their records one
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
    /// Last, so that its help heading covers its flags alone.
    #[command(flatten)]
    pub live: crate::live::LiveArgs,
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
    crate::live::configure(&args.live, &args.files)?;
    let inputs = args.files.iter().chain(&args.model.config);
    crate::output::refuse_input_as_output(args.output.as_deref(), inputs.map(|p| p.as_path()))?;
    crate::output::check_writable(args.output.as_deref())?;
    let mut opts = args.model.options(args.filter.filter()?)?;
    opts.skip_unknown = args.skip_unknown;
    Ok(opts)
}

/// What a worker makes of one key: its CSV line, written in its batch's
/// bytes (where), or its row (JSON lines and Parquet: the one writer
/// serializes it).
enum Made {
    Line(std::ops::Range<usize>),
    Row(Box<KeyRow>),
}

/// How the workers make each key's record for `format`, with `file` in
/// the file column.
fn maker(
    format: KeysFormat,
    file: Option<&str>,
) -> impl Fn(&KeyFacts<'_>, &Settings, &mut Vec<u8>) -> Made + Sync + '_ {
    move |facts, settings, bytes| match format {
        KeysFormat::Csv => {
            let start = bytes.len();
            csv_line(bytes, facts, settings.now_ms, file);
            Made::Line(start..bytes.len())
        }
        _ => {
            let mut row = KeyRow::from_facts(facts, settings.now_ms);
            row.file = file.map(str::to_string);
            Made::Row(Box::new(row))
        }
    }
}

/// The output and its record writer, before the header.
fn open_rows(args: &KeysArgs) -> Result<(Output, RowWriter<Box<dyn std::io::Write + Send>>)> {
    let (output, out) = Output::open(args.output.as_deref())?;
    let rows = match args.format {
        KeysFormat::Csv => RowWriter::csv(out),
        KeysFormat::Jsonl => RowWriter::jsonl(out),
        #[cfg(feature = "parquet")]
        KeysFormat::Parquet => RowWriter::parquet(out).map_err(|e| output.error(e))?,
        #[cfg(not(feature = "parquet"))]
        KeysFormat::Parquet => anyhow::bail!("this rdblens was built without Parquet support"),
    };
    Ok((output, rows))
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
    // Object prefixes and globs: every object under them, in key order; a
    // cluster node's URL: a node of each shard.
    let objects = crate::input::expand_objects(&args.files)?;
    let files = crate::live::expand_clusters(&objects)?;
    if files != objects && (!args.label.is_empty() || args.format == KeysFormat::Parquet) {
        anyhow::bail!(
            "a cluster URL stands for several inputs, named by their nodes: --label and --format parquet take one per input"
        );
    }
    if args.format == KeysFormat::Parquet && files.len() > 1 {
        anyhow::bail!(
            "--format parquet writes one file per dump, and the object prefixes or globs hold {} objects",
            files.len()
        );
    }
    if !args.label.is_empty() && files.len() != args.files.len() {
        anyhow::bail!(
            "--label names one input each, and the object prefixes or globs hold {} objects",
            files.len()
        );
    }
    let mut opened = Vec::with_capacity(files.len());
    for path in &files {
        opened.push(crate::input::open_rdb(path, opts.skip_unknown, args.quiet)?);
    }
    let several = files.len() > 1;
    let (mut output, mut rows) = open_rows(args)?;
    let mut write_error = rows.header(several).err();
    let mut outcome = KeysOutcome {
        files: Vec::new(),
        damaged: 0,
    };
    // Records of one dump to a file can be written again when the whole
    // dump overturns the build the first part of it settled.
    let rewind = !several && output.can_start_over();
    for (i, (path, file)) in files.iter().zip(opened).enumerate() {
        let name = crate::input::input_name(path);
        let label = args.label.get(i).cloned().unwrap_or_else(|| name.clone());
        let column = several.then_some(label.as_str());
        let progress = FilesProgress::for_bytes(file.len() as u64, args.quiet);
        let opts = Options {
            progress: progress.hook(),
            ..opts.clone()
        };
        let mut again = None;
        let mut repeated = false;
        let (info, damaged, written) = loop {
            let mut damaged = 0u64;
            let mut written = 0u64;
            // A repeated walk meets the same damage: it was reported already.
            let mut report_damage = |d: &Damage| {
                damaged += 1;
                if !repeated && damaged as usize <= DAMAGE_SHOWN {
                    progress.eprintln(&format!("rdblens: {name}: damaged key skipped: {}", d.message));
                }
            };
            let sink = |item: KeyItem<Made>, bytes: &[u8]| {
                if write_error.is_some() {
                    return false;
                }
                match item {
                    KeyItem::Key(made) => {
                        written += 1;
                        write_error = match made {
                            // A batch's lines fill its bytes, in order and
                            // nothing else: its first line (at 0) writes
                            // them all in one write, which passes the
                            // writer's buffer by. A write per line (a
                            // dynamic call and a copy into the buffer) was
                            // the writing thread's work, beside the two
                            // decoding ones on two cores.
                            Made::Line(at) if at.start == 0 => rows.write_line(bytes),
                            Made::Line(_) => Ok(()),
                            Made::Row(row) => rows.write(&row),
                        }
                        .err();
                    }
                    KeyItem::Damaged(d) => report_damage(&d),
                }
                write_error.is_none()
            };
            let make = maker(args.format, column);
            let walked = map_file_keys_in_order_rewindable(&file, &label, &opts, again.take(), make, sink);
            match walked.with_context(|| name.clone())? {
                InOrder::Done(info) => break (*info, damaged, written),
                InOrder::Again(decided) if !rewind => {
                    // The records are out: say what they assumed.
                    let info = decided.walked().clone();
                    let assumed = info.allocator.as_ref().map_or(String::new(), |a| {
                        format!("quantum {} ({}: {})", a.quantum, a.allocator, a.reason)
                    });
                    progress.eprintln(&format!(
                        "rdblens: {name}: warning: the records' memory figures assume {assumed}; the whole \
                         dump points to quantum {q} instead ({reason}): run again with --jemalloc-quantum {q} \
                         for exact ones",
                        q = decided.quantum(),
                        reason = decided.reason(),
                    ));
                    break (info, damaged, written);
                }
                InOrder::Again(decided) => {
                    // Every record so far assumed the wrong build: start the
                    // output over (the temporary file is deleted unseen).
                    drop(rows);
                    drop(output);
                    (output, rows) = open_rows(args)?;
                    write_error = rows.header(several).err();
                    repeated = true;
                    again = Some(decided);
                }
            }
        };
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        keys: KeysArgs,
    }

    /// Runs `rdblens keys FIXTURE -o OUT --format FORMAT -q` with the
    /// allocator evidence sampled (as on a big dump), the separate pass
    /// settling on quantum `settle` after its first batch when given.
    fn keys_to_file(out: &std::path::Path, format: &str, settle: Option<u64>) -> Vec<u8> {
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/rdb/valkey-7.2.7/all-types.rdb"
        );
        let out_arg = out.to_str().expect("utf-8 temp path"); // ok: unit test
        let cli = Cli::try_parse_from(["keys", fixture, "-o", out_arg, "--format", format, "-q"])
            .expect("arguments parse"); // ok: unit test
        let mut opts = prepare(&cli.keys).expect("flags"); // ok: unit test
        opts.sample_evidence_from = 0;
        opts.settle_evidence_after = settle.map(|q| (1, q));
        let outcome = run(&cli.keys, &opts).expect("keys runs"); // ok: unit test
        assert_eq!(outcome.files.len(), 1);
        std::fs::read(out).expect("output written") // ok: unit test
    }

    /// The separate pass settles on quantum 16 after its first batch, and
    /// the whole of this small dump leaves the default 8: the walk that
    /// confirms it writes its records, throws them away and writes them
    /// again. The file must be what the whole separate pass writes, with no
    /// temporary file left behind.
    #[test]
    fn a_walk_started_over_writes_the_same_file() {
        let dir = tempfile::tempdir().expect("temp dir"); // ok: unit test
        let parquet = cfg!(feature = "parquet");
        let formats: &[&str] = if parquet {
            &["csv", "jsonl", "parquet"]
        } else {
            &["csv", "jsonl"]
        };
        for &format in formats {
            let separate = keys_to_file(&dir.path().join(format!("a.{format}")), format, None);
            let in_walk = keys_to_file(&dir.path().join(format!("b.{format}")), format, Some(16));
            assert!(separate == in_walk, "{format}: outputs differ");
            let lines = in_walk.iter().filter(|&&b| b == b'\n').count();
            // 222 keys, and the CSV header.
            match format {
                "csv" => assert_eq!(lines, 223),
                "jsonl" => assert_eq!(lines, 222),
                _ => assert!(in_walk.starts_with(b"PAR1")),
            }
        }
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list") // ok: unit test
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned()) // ok: unit test
            .collect();
        names.sort();
        let mut expected: Vec<String> = formats
            .iter()
            .flat_map(|f| [format!("a.{f}"), format!("b.{f}")])
            .collect();
        expected.sort();
        assert_eq!(names, expected);
    }
}
