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
//!
//! One stream whose build is known before its first key (`--jemalloc-quantum`,
//! or a dump that needs no evidence) is read once as it arrives
//! ([`rdblens_engine::stream_keys_in_order`]); any other stream is copied
//! to disk first and walked as a file.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use rdblens_engine::{map_file_keys_in_order_rewindable, stream_keys_in_order, InOrder, KeyItem};
use rdblens_summary::{Damage, FileInfo, KeyFacts, Options, Settings};

use rdblens_parser::RdbFile;

use crate::common::{FilterArgs, ModelArgs};
use crate::dataset::{DatasetStore, LocalDataset, ShardPartition};
use crate::keyrow::KeyRow;
use crate::output::{is_broken_pipe, Output, WriteError};
use crate::progress::FilesProgress;
use crate::rows::{csv_line, RowWriter};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeysFormat {
    /// Comma-separated, with a header; redis-rdb-tools memory report columns first.
    Csv,
    /// One JSON object per line, same fields.
    Jsonl,
    /// Parquet: with `-o DIR`, a Hive-partitioned dataset
    /// (`DIR/cluster=../snapshot=../shard=../part-0.parquet`, docs/fleet.md);
    /// with `-o FILE.parquet`, one file with the CSV's columns, typed.
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
    /// Parquet dataset (`-o DIR`): the `cluster=` partition label.
    #[arg(long, value_name = "LABEL", default_value = "default")]
    pub cluster_label: String,
    /// Parquet dataset (`-o DIR`): the `snapshot=` partition label (default:
    /// the earliest `ctime` aux field of the dumps, else their earliest
    /// modification time, as `2026-11-29T10-00-00Z`). `shard=` is each
    /// file's --label, or its file name without `.rdb` and compression suffixes.
    #[arg(long, value_name = "LABEL")]
    pub snapshot_label: Option<String>,
    /// Last, so that its help heading covers its flags alone.
    #[command(flatten)]
    pub live: crate::live::LiveArgs,
}

/// Where `-o` makes `--format parquet` write a dataset directory: a path
/// that is not a `.parquet` file name, unless it names an existing file
/// that is not a directory (`/dev/null`, a file written before): those get
/// one Parquet file, as before datasets.
pub fn dataset_dir(args: &KeysArgs) -> Option<&Path> {
    let out = args.output.as_deref()?;
    let one_file = out.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
        || std::fs::metadata(out).is_ok_and(|m| !m.is_dir());
    (args.format == KeysFormat::Parquet && !one_file).then_some(out)
}

/// Checks the flags before any work: errors here are usage errors (exit 2).
pub fn prepare(args: &KeysArgs) -> Result<Options> {
    if args.format == KeysFormat::Parquet {
        if !cfg!(feature = "parquet") {
            anyhow::bail!(
                "--format parquet: this rdblens was built without Parquet support (its default cargo feature `parquet`): build it with `cargo install --locked --path crates/rdblens`"
            );
        }
        if args.output.is_none() && std::io::stdout().is_terminal() {
            anyhow::bail!(
                "--format parquet writes binary data: give -o DIR (a dataset) or -o FILE.parquet, or redirect standard output"
            );
        }
    }
    let dataset = dataset_dir(args);
    if dataset.is_none() && (args.snapshot_label.is_some() || args.cluster_label != "default") {
        anyhow::bail!("--cluster-label and --snapshot-label label a dataset: give --format parquet -o DIR");
    }
    if args.format == KeysFormat::Parquet && dataset.is_none() && args.files.len() > 1 {
        anyhow::bail!(
            "--format parquet to one file takes one dump: give -o DIR for a dataset with a shard per dump"
        );
    }
    crate::input::refuse_repeated_inputs(&args.files)?;
    crate::common::check_labels(&args.label, args.files.len())?;
    crate::live::configure(&args.live, &args.files)?;
    if dataset.is_some() {
        crate::dataset::check_label("--cluster-label", &args.cluster_label)?;
        if let Some(snapshot) = &args.snapshot_label {
            crate::dataset::check_label("--snapshot-label", snapshot)?;
        }
        crate::dataset::shard_labels(&args.files, &args.label)?;
    } else {
        let inputs = args.files.iter().chain(&args.model.config);
        crate::output::refuse_input_as_output(args.output.as_deref(), inputs.map(|p| p.as_path()))?;
        crate::output::check_writable(args.output.as_deref())?;
    }
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
    dataset: bool,
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
            if dataset {
                row.key_bytes = Some(facts.key.to_vec());
            }
            Made::Row(Box::new(row))
        }
    }
}

type Rows = RowWriter<Box<dyn std::io::Write + Send>>;

/// The output and its record writer, before the header.
fn open_rows(args: &KeysArgs) -> Result<(Output, Rows)> {
    let (output, out) = Output::open(args.output.as_deref())?;
    let rows = match args.format {
        KeysFormat::Csv => RowWriter::csv(out),
        KeysFormat::Jsonl => RowWriter::jsonl(out),
        #[cfg(feature = "parquet")]
        KeysFormat::Parquet => RowWriter::parquet(out, crate::parquet_rows::Layout::CsvColumns, Vec::new())
            .map_err(|e| output.error(e))?,
        #[cfg(not(feature = "parquet"))]
        KeysFormat::Parquet => anyhow::bail!("this rdblens was built without Parquet support"),
    };
    Ok((output, rows))
}

/// Where the records go.
enum Records {
    /// One output (a file or standard output) for every dump.
    One { output: Output, rows: Rows },
    /// A dataset: one part per dump, opened by [`Records::begin`].
    Dataset(Box<Dataset>),
}

/// A dataset being written.
struct Dataset {
    name: String,
    store: Box<dyn DatasetStore>,
    shards: Vec<ShardPartition>,
    /// Each part's footer metadata.
    metadata: Vec<Vec<(String, String)>>,
    /// The part being written.
    rows: Option<Rows>,
}

impl Records {
    fn open(args: &KeysArgs, opened: &[Opened]) -> Result<Self> {
        let Some(dir) = dataset_dir(args) else {
            let (output, rows) = open_rows(args)?;
            return Ok(Records::One { output, rows });
        };
        let snapshot = match &args.snapshot_label {
            Some(label) => label.clone(),
            None => {
                let heads: Vec<&[u8]> = opened.iter().map(Opened::head).collect();
                crate::dataset::default_snapshot_label(&args.files, &heads)?
            }
        };
        let shards: Vec<ShardPartition> = crate::dataset::shard_labels(&args.files, &args.label)?
            .into_iter()
            .map(|shard| ShardPartition {
                cluster: args.cluster_label.clone(),
                snapshot: snapshot.clone(),
                shard,
            })
            .collect();
        let metadata = shards
            .iter()
            .zip(&args.files)
            .map(|(shard, path)| {
                vec![
                    ("rdblens.schema".to_string(), "rdblens_key".to_string()),
                    (
                        "rdblens.schema_version".to_string(),
                        crate::dataset::SCHEMA_VERSION.to_string(),
                    ),
                    ("rdblens.cluster".to_string(), shard.cluster.clone()),
                    ("rdblens.snapshot".to_string(), shard.snapshot.clone()),
                    ("rdblens.shard".to_string(), shard.shard.clone()),
                    ("rdblens.source".to_string(), crate::input::input_name(path)),
                ]
            })
            .collect();
        let store = LocalDataset::open(dir, &shards)?;
        Ok(Records::Dataset(Box::new(Dataset {
            name: dir.display().to_string(),
            store: Box::new(store),
            shards,
            metadata,
            rows: None,
        })))
    }

    /// Whether the records of one dump can be written again from the start.
    fn can_start_over(&self, several: bool) -> bool {
        match self {
            Records::One { output, .. } => !several && output.can_start_over(),
            Records::Dataset(_) => true,
        }
    }

    /// Opens the part of dump `index` (afresh if it was opened before).
    fn begin(&mut self, index: usize) -> Result<(), WriteError> {
        let Records::Dataset(d) = self else { return Ok(()) };
        let error = |e| WriteError {
            target: d.name.clone(),
            error: e,
        };
        let out = d.store.create_part(&d.shards[index].part()).map_err(error)?;
        d.rows = Some(dataset_rows(out, d.metadata[index].clone()).map_err(error)?);
        Ok(())
    }

    /// Starts the records of dump `index` over: a new output (the
    /// temporary file is deleted unseen), or a new part.
    fn start_over(
        self,
        args: &KeysArgs,
        index: usize,
        several: bool,
    ) -> Result<(Self, Option<std::io::Error>)> {
        match self {
            Records::One { output, rows } => {
                drop(rows);
                drop(output);
                let (output, mut rows) = open_rows(args)?;
                let header = rows.header(several).err();
                Ok((Records::One { output, rows }, header))
            }
            mut dataset => {
                dataset.begin(index)?;
                Ok((dataset, None))
            }
        }
    }

    fn rows(&mut self) -> std::io::Result<&mut Rows> {
        match self {
            Records::One { rows, .. } => Ok(rows),
            Records::Dataset(d) => d
                .rows
                .as_mut()
                .ok_or_else(|| std::io::Error::other("a record written before its dataset part was opened")),
        }
    }

    /// The end of a dump's records: its part is complete.
    fn end(&mut self) -> std::io::Result<()> {
        match self {
            Records::One { .. } => Ok(()),
            Records::Dataset(d) => match d.rows.take() {
                Some(mut rows) => rows.flush(),
                None => Ok(()),
            },
        }
    }

    fn error(&self, e: std::io::Error) -> WriteError {
        match self {
            Records::One { output, .. } => output.error(e),
            Records::Dataset(d) => WriteError {
                target: d.name.clone(),
                error: e,
            },
        }
    }

    /// Flushes and makes the records visible, or, after `write_error`,
    /// drops them (a closed pipe: the reader has what it wanted).
    fn finish(mut self, write_error: Option<std::io::Error>) -> Result<()> {
        let write_error = match write_error {
            None => match &mut self {
                Records::One { rows, .. } => rows.flush().err(),
                Records::Dataset(_) => None,
            },
            some => some,
        };
        match (self, write_error) {
            (_, Some(e)) if is_broken_pipe(&e) => Ok(()),
            (records, Some(e)) => Err(records.error(e).into()),
            (Records::One { output, rows }, None) => {
                drop(rows);
                Ok(output.commit()?)
            }
            (Records::Dataset(d), None) => {
                let name = d.name;
                d.store
                    .commit()
                    .map_err(|error| WriteError { target: name, error })?;
                Ok(())
            }
        }
    }
}

#[cfg(feature = "parquet")]
fn dataset_rows(
    out: Box<dyn std::io::Write + Send>,
    metadata: Vec<(String, String)>,
) -> std::io::Result<Rows> {
    RowWriter::parquet(out, crate::parquet_rows::Layout::Dataset, metadata)
}

#[cfg(not(feature = "parquet"))]
fn dataset_rows(_: Box<dyn std::io::Write + Send>, _: Vec<(String, String)>) -> std::io::Result<Rows> {
    Err(std::io::Error::other(
        "this rdblens was built without Parquet support",
    ))
}

/// A dump opened for its records.
enum Opened {
    /// A file, mapped; or a stream copied to disk, whose allocator build
    /// needs the whole dump's evidence before the first record.
    Mapped(RdbFile),
    /// A stream read once as it arrives (its build is known before the
    /// first key): `head`, the bytes read to tell, then `rest`.
    Stream {
        head: Vec<u8>,
        rest: Box<dyn Read + Send>,
    },
}

impl Opened {
    /// Opens `path`, the one input of a run, and checks its header: a
    /// stream is read as it arrives where it can be, with no copy on disk.
    /// Several inputs are mapped (their streams copied to disk when
    /// opened), so that none waits, its connection idle, for the walks of
    /// those before it.
    fn one(path: &Path, opts: &Options, quiet: bool) -> Result<Opened> {
        let name = crate::input::input_name(path);
        match crate::input::open_source(path, opts.skip_unknown, quiet)? {
            rdblens_engine::Input::Mapped(map) => Ok(Opened::Mapped(map)),
            rdblens_engine::Input::Stream { mut source, .. } => {
                let (needs, head) = rdblens_engine::stream_needs_evidence(source.as_mut(), opts)
                    .with_context(|| name.clone())?;
                if !needs {
                    return Ok(Opened::Stream { head, rest: source });
                }
                let mut whole = std::io::Cursor::new(head).chain(source);
                let map =
                    crate::input::copy_to_disk(&mut whole).with_context(|| format!("{name}: cannot open"))?;
                Ok(Opened::Mapped(map))
            }
        }
    }

    /// The dump's bytes, or its first ones (its aux fields).
    fn head(&self) -> &[u8] {
        match self {
            Opened::Mapped(map) => map.bytes(),
            Opened::Stream { head, .. } => head,
        }
    }
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
    // A dataset's shards are named from the inputs as given (one per dump).
    if args.format == KeysFormat::Parquet && files.len() != args.files.len() {
        anyhow::bail!(
            "--format parquet takes one input per dump, and the object prefixes or globs hold {} objects: name each object",
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
        opened.push(if files.len() == 1 {
            Opened::one(path, opts, args.quiet)?
        } else {
            Opened::Mapped(crate::input::open_rdb(path, opts.skip_unknown, args.quiet)?)
        });
    }
    let several = files.len() > 1;
    let mut records = Records::open(args, &opened)?;
    let dataset = matches!(records, Records::Dataset(_));
    let mut write_error = match &mut records {
        Records::One { rows, .. } => rows.header(several).err(),
        Records::Dataset(_) => None,
    };
    let mut outcome = KeysOutcome {
        files: Vec::new(),
        damaged: 0,
    };
    // Records of one dump to a file (or a dataset part) can be written
    // again when the whole dump overturns the build the first part of it settled.
    let rewind = records.can_start_over(several);
    for (i, (path, mut file)) in files.iter().zip(opened).enumerate() {
        let name = crate::input::input_name(path);
        let label = args.label.get(i).cloned().unwrap_or_else(|| name.clone());
        // A dataset names the shard by its directory.
        let column = (several && !dataset).then_some(label.as_str());
        records.begin(i)?;
        // A stream shows its own counter as it is received.
        let progress = match &file {
            Opened::Mapped(map) => FilesProgress::for_bytes(map.len() as u64, args.quiet),
            Opened::Stream { .. } => FilesProgress::for_bytes(0, true),
        };
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
                            Made::Line(at) if at.start == 0 => {
                                records.rows().and_then(|r| r.write_line(bytes))
                            }
                            Made::Line(_) => Ok(()),
                            Made::Row(row) => records.rows().and_then(|r| r.write(&row)),
                        }
                        .err();
                    }
                    KeyItem::Damaged(d) => report_damage(&d),
                }
                write_error.is_none()
            };
            let make = maker(args.format, column, dataset);
            let walked = match &mut file {
                Opened::Mapped(map) => {
                    map_file_keys_in_order_rewindable(map, &label, &opts, again.take(), make, sink)
                }
                // Read once: the build was known before the first key.
                Opened::Stream { head, rest } => {
                    let mut source = std::io::Cursor::new(std::mem::take(head)).chain(rest);
                    stream_keys_in_order(&mut source, &label, &opts, make, sink).map(|(info, read_error)| {
                        // The walk says where the dump stops; this, why.
                        if let Some(e) = read_error {
                            let size = info.size;
                            eprintln!("rdblens: {name}: reading the stream failed after {size} bytes: {e}");
                        }
                        InOrder::Done(Box::new(info))
                    })
                }
            };
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
                    // Every record so far assumed the wrong build: start
                    // the output (or this dump's part) over.
                    (records, write_error) = records.start_over(args, i, several)?;
                    repeated = true;
                    again = Some(decided);
                }
            }
        };
        drop(progress);
        if write_error.is_none() {
            write_error = records.end().err();
        }
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
    records.finish(write_error)?;
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
        keys_with(out, &["--format", format], settle);
        std::fs::read(out).expect("output written") // ok: unit test
    }

    const FIXTURE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/rdb/valkey-7.2.7/all-types.rdb"
    );

    /// `rdblens keys FIXTURE -o OUT -q FLAGS` as [`keys_to_file`] runs it.
    fn keys_with(out: &std::path::Path, flags: &[&str], settle: Option<u64>) {
        let out_arg = out.to_str().expect("utf-8 temp path"); // ok: unit test
        let base = ["keys", FIXTURE, "-o", out_arg, "-q"];
        let cli = Cli::try_parse_from(base.iter().chain(flags)).expect("arguments parse"); // ok: unit test
        let mut opts = prepare(&cli.keys).expect("flags"); // ok: unit test
        opts.sample_evidence_from = 0;
        opts.settle_evidence_after = settle.map(|q| (1, q));
        let outcome = run(&cli.keys, &opts).expect("keys runs"); // ok: unit test
        assert_eq!(outcome.files.len(), 1);
    }

    /// As [`a_walk_started_over_writes_the_same_file`], for a dataset's
    /// part: started over, it is what the separate pass writes.
    #[cfg(feature = "parquet")]
    #[test]
    fn a_walk_started_over_writes_the_same_dataset_part() {
        let dir = tempfile::tempdir().expect("temp dir"); // ok: unit test
        let part = "cluster=default/snapshot=s/shard=all-types/part-0.parquet";
        let flags = ["--format", "parquet", "--snapshot-label", "s"];
        keys_with(&dir.path().join("a"), &flags, None);
        keys_with(&dir.path().join("b"), &flags, Some(16));
        let separate = std::fs::read(dir.path().join("a").join(part)).expect("part a"); // ok: unit test
        let in_walk = std::fs::read(dir.path().join("b").join(part)).expect("part b"); // ok: unit test
        assert!(separate == in_walk, "the parts differ");
        assert!(in_walk.starts_with(b"PAR1"));
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list") // ok: unit test
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned()) // ok: unit test
            .collect();
        names.sort();
        assert_eq!(names, ["a", "b"]);
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
