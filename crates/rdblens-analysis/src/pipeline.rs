//! One pass over a mapped file: a walker thread finds where entries start and
//! end (cheap: lengths are prefixed) and sends batches over a bounded
//! channel; rayon workers decode values, estimate memory and fold the facts
//! into per-worker [`KeyStats`], which merge into one.
//!
//! The set-up, the walker and the per-batch decoding are shared with
//! [`crate::ordered`], which streams one record per key in file order.

use std::collections::BTreeMap;
use std::sync::mpsc::sync_channel;
use std::sync::Mutex;

use rayon::iter::{IntoParallelIterator, ParallelIterator};
use rdblens_memory::{Estimator, Profile};
use rdblens_parser::{
    ChecksumStatus, Crc64Digest, Entry, Error, Rdb, RdbFile, RdbString, Record, Scratch, TypeKind,
};

use crate::facts::key_facts;
use crate::facts::KeyFacts;
use crate::filter::KeyFilter;
use crate::options::{Options, Progress};
use crate::release::{BatchDone, Releaser};
use crate::summary::{Damage, FileInfo, KeyStats, Settings, Summary, SUMMARY_VERSION};

/// Bytes of values per batch: big values travel in small batches.
const BATCH_BYTES: usize = 4 << 20;

/// The progress hook is called at most once per this many bytes walked.
const PROGRESS_STEP: u64 = 4 << 20;

fn text(s: &RdbString<'_>) -> String {
    s.to_vec()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// Aux fields come first in every file: read them before the keys.
fn read_aux(rdb: &Rdb<'_>) -> BTreeMap<String, String> {
    let mut aux = BTreeMap::new();
    for record in rdb.records() {
        match record {
            Ok(Record::Aux { key, value }) => {
                aux.insert(text(&key), text(&value));
            }
            Ok(Record::Entry(_)) | Ok(Record::Eof(_)) | Err(_) => break,
            Ok(_) => {}
        }
    }
    aux
}

/// The profile: given, or the server that wrote the file.
pub fn profile_for(rdb: &Rdb<'_>, aux: &BTreeMap<String, String>, opts: &Options) -> Profile {
    let mut profile = opts.profile.clone().unwrap_or_else(|| {
        Profile::from_aux(
            aux.get("redis-ver").map(String::as_str),
            aux.get("valkey-ver").map(String::as_str),
            rdb.version(),
            rdb.dialect(),
        )
    });
    if let Some(q) = opts.quantum {
        profile.quantum = q;
    }
    for (name, value) in &opts.config {
        // Unknown names are not limits; the CLI validates what the user typed.
        let _ = profile.limits.set(name, value);
    }
    profile
}

/// What the walker learns besides the entries.
#[derive(Default)]
pub(crate) struct WalkOutcome {
    keys: u64,
    functions: u64,
    module_aux: u64,
    checksum: String,
    /// Problems that did not stop the walk (a checksum mismatch).
    warnings: Vec<String>,
    error: Option<Error>,
}

/// Hashes the file for the trailer checksum a little ahead of the walker.
/// The hash reads every byte in order, which the CPU prefetches well; the
/// walker reads one header per entry and skips the values, and each header
/// it reached cold was a cache miss (two fifths of the walker's time). Run
/// ahead, the hash leaves the next headers and values in cache for the
/// walker and the workers, and the file is never read a second time at the
/// end (its pages may have been released by then).
struct RunningCrc<'a> {
    data: &'a [u8],
    digest: Crc64Digest,
    hashed: usize,
}

/// How far ahead of the walker the checksum runs: well inside a core's L2.
const CRC_LOOKAHEAD: usize = 256 << 10;

impl RunningCrc<'_> {
    fn upto(&mut self, end: usize) {
        let end = end.min(self.data.len());
        if end > self.hashed {
            self.digest.update(&self.data[self.hashed..end]);
            self.hashed = end;
        }
    }

    /// Keeps the hash [`CRC_LOOKAHEAD`] ahead of `pos`, in steps of half
    /// that, short of the 8-byte checksum a file ends with: the checksum
    /// covers everything before it.
    #[inline]
    fn ahead_of(&mut self, pos: usize) {
        if pos + CRC_LOOKAHEAD / 2 > self.hashed {
            let trailer = self.data.len().saturating_sub(8);
            self.upto((pos + CRC_LOOKAHEAD).min(trailer));
        }
    }

    /// The checksum of the bytes before `end`. The hash may have run past
    /// `end` only when bytes follow the trailer (then it starts over).
    fn finish_at(&mut self, end: usize) -> u64 {
        if self.hashed > end {
            self.digest = Crc64Digest::new();
            self.hashed = 0;
        }
        self.upto(end);
        std::mem::take(&mut self.digest).finish()
    }
}

/// Entries handed to a worker, kept as the records the parser returned:
/// moving a 168-byte `Entry` out of its `Record` and into a vector cost the
/// walker three `memcpy` calls per key (a third of its time); a record is
/// moved once.
pub(crate) type Batch<'a> = Vec<Record<'a>>;

/// The entries of a batch (it holds nothing else).
pub(crate) fn entries<'b, 'a>(batch: &'b [Record<'a>]) -> impl Iterator<Item = &'b Entry<'a>> {
    batch.iter().filter_map(|r| match r {
        Record::Entry(e) => Some(e),
        _ => None,
    })
}

/// Where the first record of a batch starts.
pub(crate) fn batch_start(batch: &[Record<'_>]) -> u64 {
    entries(batch).next().map_or(0, |e| e.offset)
}

/// The bytes of a huge string value: workers never read them (a string's
/// length, LZF header included, is all the analysis needs), so once hashed
/// they can be released while the entry is still in flight. Without this a
/// dump holding one 1 GB string kept all of it resident.
fn unread_value(e: &Entry<'_>) -> Option<(u64, u64)> {
    let len = e.value.len() as u64;
    (e.kind() == TypeKind::String && len >= crate::release::STEP)
        .then(|| (e.value_offset, e.value_offset + len))
}

pub(crate) fn walk<'a>(
    rdb: &Rdb<'a>,
    batch_entries: usize,
    filter: &KeyFilter,
    progress: Option<&Progress>,
    releaser: Option<&Releaser<'_>>,
    mut send: impl FnMut(Batch<'a>) -> bool,
) -> WalkOutcome {
    let mut out = WalkOutcome {
        checksum: "unknown".into(),
        ..WalkOutcome::default()
    };
    let batch_entries = batch_entries.max(1);
    let mut batch = Vec::with_capacity(batch_entries);
    let mut batch_bytes = 0;
    let mut next_report = PROGRESS_STEP;
    let mut records = rdb.records();
    let mut crc = RunningCrc {
        data: rdb.data(),
        digest: Crc64Digest::new(),
        hashed: 0,
    };
    loop {
        // Kept in its Option until pushed: each rebinding was a memcpy.
        crc.ahead_of(records.offset() as usize);
        let next = records.next();
        let Some(record) = &next else { break };
        if let Some(p) = progress {
            if records.offset() >= next_report {
                p.report(records.offset());
                next_report = records.offset() + PROGRESS_STEP;
            }
        }
        if let Ok(Record::Entry(e)) = record {
            out.keys += 1;
            if !filter.admits_entry(e) {
                continue;
            }
            if let (Some(r), true) = (releaser, batch.is_empty()) {
                r.batch_started(e.offset);
            }
            batch_bytes += e.value.len();
            if let (Some((start, end)), Some(r)) = (unread_value(e), releaser) {
                // Hashed a step at a time, each step released at once: the
                // value is never resident as a whole.
                let mut pos = start;
                while pos < end {
                    let step = (pos + crate::release::STEP).min(end);
                    crc.upto(step as usize);
                    r.release_unread(pos, step);
                    pos = step;
                }
            }
            if let Some(Ok(record)) = next {
                batch.push(record);
            }
            if batch.len() >= batch_entries || batch_bytes >= BATCH_BYTES {
                batch_bytes = 0;
                let offset = records.offset();
                crc.upto(offset as usize);
                if !send(std::mem::replace(&mut batch, Vec::with_capacity(batch_entries))) {
                    break;
                }
                if let Some(r) = releaser {
                    r.walked_to(offset);
                }
            }
            continue;
        }
        match record {
            Ok(Record::Function { .. }) | Ok(Record::FunctionPreGa { .. }) => out.functions += 1,
            Ok(Record::ModuleAux(_)) => out.module_aux += 1,
            Ok(Record::Eof(eof)) => {
                let status = rdb.checksum_status_with(eof, || crc.finish_at(rdb.checksum_end(eof)));
                if let ChecksumStatus::Mismatch { stored, computed } = status {
                    out.warnings.push(format!(
                        "checksum mismatch: the file stores 0x{stored:016x}, its bytes hash to \
                         0x{computed:016x}: the file is damaged and some figures may be wrong"
                    ));
                }
                out.checksum = match status {
                    ChecksumStatus::Valid(_) => "valid",
                    ChecksumStatus::Mismatch { .. } => "mismatch",
                    ChecksumStatus::Disabled => "disabled",
                    ChecksumStatus::Absent => "absent",
                }
                .into();
            }
            Ok(_) => {}
            Err(e) => {
                out.error = Some(e.clone());
                break;
            }
        }
    }
    if !batch.is_empty() {
        send(batch);
    }
    if let Some(p) = progress {
        // A complete walk ends the bar at the file size (trailing bytes included).
        p.report(match out.error {
            Some(_) => records.offset(),
            None => rdb.data().len() as u64,
        });
    }
    out
}

fn damage(e: &Error) -> Damage {
    Damage {
        offset: e.offset(),
        message: e.to_string(),
    }
}

/// Decodes a batch: the facts of every key the filter admits, or the damage
/// that stopped its decoding, in batch order.
pub(crate) fn batch_facts(
    scratch: &mut Scratch,
    key_buf: &mut Vec<u8>,
    profile: &Profile,
    filter: &KeyFilter,
    batch: &[Record<'_>],
    mut each: impl FnMut(Result<&KeyFacts<'_>, Damage>),
) {
    let estimator = Estimator::new(profile);
    for entry in entries(batch) {
        let key: &[u8] = match entry.key {
            RdbString::Raw(k) => k,
            other => match other.bytes_in(key_buf, entry.offset) {
                Ok(k) => k,
                Err(e) => {
                    each(Err(damage(&e)));
                    continue;
                }
            },
        };
        if !filter.admits_key(key) {
            continue;
        }
        match key_facts(entry, key, &estimator, scratch) {
            Ok(facts) => each(Ok(&facts)),
            Err(e) => each(Err(damage(&e))),
        }
    }
}

/// One worker's accumulators and reusable buffers.
struct Worker {
    stats: KeyStats,
    scratch: Scratch,
    key_buf: Vec<u8>,
}

impl Worker {
    fn new(settings: &Settings) -> Self {
        Worker {
            stats: KeyStats::new(settings),
            scratch: Scratch::new(),
            key_buf: Vec::new(),
        }
    }

    /// Decodes and folds one batch, then signs it off for page release.
    fn fold(
        &mut self,
        p: &Prepared<'_>,
        filter: &KeyFilter,
        releaser: Option<&Releaser<'_>>,
        batch: &[Record<'_>],
    ) {
        let _done = BatchDone(releaser, batch_start(batch));
        let stats = &mut self.stats;
        batch_facts(
            &mut self.scratch,
            &mut self.key_buf,
            &p.profile,
            filter,
            batch,
            |r| match r {
                Ok(facts) => stats.add(facts),
                Err(d) => stats.add_damage(d),
            },
        );
    }
}

/// What both passes need before the first key: the header, aux fields,
/// target profile, reference time and worker pool.
pub(crate) struct Prepared<'a> {
    pub rdb: Rdb<'a>,
    pub aux: BTreeMap<String, String>,
    pub profile: Profile,
    pub settings: Settings,
    pub threads: usize,
    pub pool: rayon::ThreadPool,
}

pub(crate) fn prepare<'a>(data: &'a [u8], opts: &Options) -> Result<Prepared<'a>, Error> {
    let rdb = if opts.skip_unknown {
        Rdb::new_allowing_newer(data)?
    } else {
        Rdb::new(data)?
    };
    let aux = read_aux(&rdb);
    let profile = profile_for(&rdb, &aux, opts);
    let now_ms = opts.now_ms.unwrap_or_else(|| {
        aux.get("ctime")
            .and_then(|c| c.parse::<i64>().ok())
            .map_or(0, |secs| secs.saturating_mul(1000))
    });
    let settings = Settings {
        top: opts.top,
        separator: opts.separator,
        prefix_depth: opts.prefix_depth,
        now_ms,
        expiry_buckets: opts.expiry_buckets,
        rules: opts.rules.clone(),
    };
    let threads = if opts.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        opts.threads
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| {
            Error::new(
                0,
                rdblens_parser::ErrorKind::BadValue(format!("thread pool: {e}")),
            )
        })?;
    Ok(Prepared {
        rdb,
        aux,
        profile,
        settings,
        threads,
        pool,
    })
}

/// The walker's outcome when its thread panicked (a bug, reported as damage).
pub(crate) fn walker_panicked() -> WalkOutcome {
    WalkOutcome {
        error: Some(Error::new(
            0,
            rdblens_parser::ErrorKind::BadValue("walker thread panicked".into()),
        )),
        ..WalkOutcome::default()
    }
}

pub(crate) fn file_info(path: &str, p: Prepared<'_>, outcome: WalkOutcome) -> FileInfo {
    FileInfo {
        path: path.to_string(),
        size: p.rdb.data().len() as u64,
        dialect: p.rdb.dialect().to_string(),
        rdb_version: p.rdb.version(),
        aux: p.aux,
        checksum: outcome.checksum,
        profile: p.profile.name(),
        keys: outcome.keys,
        functions: outcome.functions,
        module_aux: outcome.module_aux,
        incomplete: outcome.error.as_ref().map(damage),
        warnings: newer_version_warning(&p.rdb)
            .into_iter()
            .chain(outcome.warnings)
            .collect(),
        shard: None,
    }
}

/// A file of a version newer than any known, read with `skip_unknown`.
fn newer_version_warning(rdb: &Rdb<'_>) -> Option<String> {
    let format = rdb.format();
    format.is_newer_than_known().then(|| {
        let newest = rdblens_parser::Format::newest_known(format.dialect);
        format!(
            "{} RDB version {} is newer than any rdblens knows: read as RDB {newest}, up to the first \
             type or opcode RDB {newest} does not have",
            format.dialect, format.version
        )
    })
}

/// Analyses one file held in `data` (usually a memory map).
pub fn analyze_bytes(data: &[u8], path: &str, opts: &Options) -> Result<Summary, Error> {
    analyze(data, path, opts, None)
}

/// Analyses a mapped file, giving its pages back to the system as soon as
/// every worker is past them, so the resident set stays small on dumps
/// larger than RAM.
pub fn analyze_file(file: &RdbFile, path: &str, opts: &Options) -> Result<Summary, Error> {
    let release = |start: usize, end: usize| file.release(start, end);
    let releaser = Releaser::new(&release);
    analyze(file.bytes(), path, opts, Some(&releaser))
}

fn analyze(
    data: &[u8],
    path: &str,
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
) -> Result<Summary, Error> {
    let p = prepare(data, opts)?;
    let (outcome, stats) = if p.threads == 1 {
        // One thread does it all: a walker thread beside one worker would
        // only add hand-offs (and a second busy core to `--threads 1`).
        let mut worker = Worker::new(&p.settings);
        let outcome = walk(
            &p.rdb,
            opts.batch_entries,
            &opts.filter,
            opts.progress.as_ref(),
            releaser,
            |batch| {
                worker.fold(&p, &opts.filter, releaser, &batch);
                true
            },
        );
        (outcome, worker.stats)
    } else {
        parallel(&p, opts, releaser)
    };
    let mut stats = stats;
    stats.finish();
    let settings = p.settings.clone();
    Ok(Summary {
        summary_version: SUMMARY_VERSION,
        settings,
        files: vec![file_info(path, p, outcome).with_shard(&stats)],
        keys: stats,
    })
}

/// A walker thread feeding `p.threads` workers.
fn parallel(p: &Prepared<'_>, opts: &Options, releaser: Option<&Releaser<'_>>) -> (WalkOutcome, KeyStats) {
    let settings = &p.settings;
    let (tx, rx) = sync_channel::<Batch<'_>>(p.threads * 4);
    std::thread::scope(|scope| {
        let walker = scope.spawn(|| {
            walk(
                &p.rdb,
                opts.batch_entries,
                &opts.filter,
                opts.progress.as_ref(),
                releaser,
                move |batch| tx.send(batch).is_ok(),
            )
        });
        // One accumulator per worker, merged once at the end: far fewer
        // merges (and 16384-slot tables) than a fold per stolen job.
        let rx = Mutex::new(rx);
        let parts: Vec<KeyStats> = p.pool.install(|| {
            (0..p.threads)
                .into_par_iter()
                .map(|_| {
                    let mut worker = Worker::new(settings);
                    loop {
                        let batch = match rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => break,
                        };
                        let Ok(batch) = batch else { break };
                        worker.fold(p, &opts.filter, releaser, &batch);
                    }
                    worker.stats
                })
                .collect()
        });
        let mut parts = parts.into_iter();
        let mut stats = parts.next().unwrap_or_else(|| KeyStats::new(settings));
        for part in parts {
            stats.merge(part);
        }
        let outcome = walker.join().unwrap_or_else(|_| walker_panicked());
        (outcome, stats)
    })
}
