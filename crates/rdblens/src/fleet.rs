//! A fleet: many shards in one run, from object storage (a prefix or glob
//! names hundreds). A bounded number are read at the same time (`--jobs`),
//! and each summary is merged, in the order given, as soon as the shards
//! before it are in: a shard may start only while fewer than two windows
//! of shards wait to be merged, so memory stays bounded whatever the
//! count. A shard that cannot be read leaves the others in the report:
//! it is listed among the files as incomplete, with the reason, and the
//! run exits 3 (docs/object-storage.md).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::{Condvar, Mutex};

use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rdblens_summary::{Checksum, Damage, FileInfo, Options, Summary};

/// Shards read at the same time unless `--jobs` says otherwise: enough
/// to keep a link busy while each waits on its store.
pub const DEFAULT_JOBS: usize = 8;

/// The most shards `--jobs` may read at the same time.
const MAX_JOBS: usize = 256;

/// `--jobs N`: 1 to [`MAX_JOBS`].
pub fn parse_jobs(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_JOBS).contains(&n) => Ok(n),
        _ => Err(format!("expected a number of shards from 1 to {MAX_JOBS}")),
    }
}

/// One shard: its name in the report, and where it is.
struct Shard {
    name: String,
    path: PathBuf,
}

/// What is known while the shards are read.
struct State {
    /// The next shard to start.
    next: usize,
    /// Shards before this one are merged (or recorded as failed).
    merged: usize,
    /// Finished shards waiting for the ones before them.
    waiting: BTreeMap<usize, Result<Summary>>,
    summary: Option<Summary>,
    failed: Vec<(usize, anyhow::Error)>,
}

/// Analyses every input (object prefixes and globs expanded), `jobs` at a
/// time, and merges the summaries in order. `labels` (none, or one per
/// input as given) name the inputs. Errors only when no shard could be read
/// (the first shard's error) or the summaries cannot be merged.
pub fn analyze(
    inputs: &[PathBuf],
    labels: &[String],
    opts: &Options,
    jobs: usize,
    quiet: bool,
) -> Result<Summary> {
    let shards = shards(inputs, labels)?;
    let in_flight = jobs.clamp(1, shards.len().max(1));
    let mut shard_opts = opts.clone();
    shard_opts.threads = (rdblens_engine::resolve_threads(opts.threads) / in_flight).max(1);
    // One bar over the bytes of one shard; a count of shards for a fleet.
    let shard_quiet = quiet || shards.len() > 1;
    let counter = ShardCounter::new(shards.len(), quiet || shards.len() == 1);
    let state = Mutex::new(State {
        next: 0,
        merged: 0,
        waiting: BTreeMap::new(),
        summary: None,
        failed: Vec::new(),
    });
    let turn = Condvar::new();
    let window = 2 * in_flight;
    std::thread::scope(|scope| {
        for _ in 0..in_flight {
            scope.spawn(|| loop {
                let i = {
                    let mut s = lock(&state);
                    while s.next < shards.len() && s.next >= s.merged + window {
                        s = turn.wait(s).unwrap_or_else(|poisoned| poisoned.into_inner());
                    }
                    if s.next >= shards.len() {
                        return;
                    }
                    s.next += 1;
                    s.next - 1
                };
                let result = analyze_shard(&shards[i], &shard_opts, shard_quiet);
                counter.done();
                let mut s = lock(&state);
                s.waiting.insert(i, result);
                merge_ready(&mut s);
                turn.notify_all();
            });
        }
    });
    let state = state
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    finish(state, &shards)
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The inputs as shards: each object prefix or glob becomes its objects,
/// named by their URLs; a label names the one shard of its input.
fn shards(inputs: &[PathBuf], labels: &[String]) -> Result<Vec<Shard>> {
    let mut shards = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let expanded = crate::input::expand_objects(std::slice::from_ref(input))?;
        let label = labels.get(i);
        if let (Some(label), true) = (label, expanded.len() > 1) {
            anyhow::bail!(
                "--label {label} names one input, and {} holds {} objects",
                input.display(),
                expanded.len()
            );
        }
        for path in expanded {
            let name = label.cloned().unwrap_or_else(|| crate::input::input_name(&path));
            shards.push(Shard { name, path });
        }
    }
    Ok(shards)
}

fn analyze_shard(shard: &Shard, opts: &Options, quiet: bool) -> Result<Summary> {
    let input = crate::input::open_source(&shard.path, opts.skip_unknown, quiet)?;
    Ok(input.analyze(&shard.name, opts)?)
}

/// Merges the finished shards that come next in order.
fn merge_ready(s: &mut State) {
    while let Some(result) = s.waiting.remove(&s.merged) {
        let i = s.merged;
        s.merged += 1;
        let merged = result.and_then(|summary| match s.summary.as_mut() {
            None => {
                s.summary = Some(summary);
                Ok(())
            }
            Some(all) => all
                .merge(summary)
                .map_err(|e| anyhow!(rdblens_engine::AnalysisError::Merge(e))),
        });
        if let Err(e) = merged {
            s.failed.push((i, e));
        }
    }
}

/// The merged summary with every failed shard listed among the files, in
/// its place, as incomplete with the reason; or, when no shard could be
/// read, the first shard's error.
fn finish(state: State, shards: &[Shard]) -> Result<Summary> {
    let Some(mut summary) = state.summary else {
        let mut failed = state.failed.into_iter();
        return Err(match failed.next() {
            Some((_, first)) if shards.len() == 1 => first,
            Some((_, first)) => first.context(format!("none of the {} shards could be read", shards.len())),
            None => anyhow!("no input"),
        });
    };
    for (i, error) in state.failed {
        let template = summary.files.first().cloned();
        if let Some(template) = template {
            let at = i.min(summary.files.len());
            summary
                .files
                .insert(at, not_read(template, &shards[i].name, &error));
        }
    }
    Ok(summary)
}

/// A shard that could not be read, as a file entry: no header, no keys,
/// incomplete at its first byte with the reason.
fn not_read(template: FileInfo, name: &str, error: &anyhow::Error) -> FileInfo {
    // The entry is the shard's: its name once is enough.
    let why = format!("{error:#}");
    let why = why.strip_prefix(&format!("{name}: ")).unwrap_or(&why);
    FileInfo {
        path: name.to_string(),
        size: 0,
        dialect: String::new(),
        rdb_version: 0,
        aux: BTreeMap::new(),
        checksum: Checksum::Unknown,
        checksum_mismatch: None,
        allocator: None,
        accuracy: None,
        keys: 0,
        functions: 0,
        module_aux: 0,
        incomplete: Some(Damage {
            offset: 0,
            message: format!("not read: {why}"),
        }),
        warnings: Vec::new(),
        shard: None,
        used_memory: None,
        // The target the others were estimated for.
        profile: template.profile,
    }
}

/// Shards done out of all, on standard error when it is a terminal.
struct ShardCounter {
    bar: Option<ProgressBar>,
}

impl ShardCounter {
    fn new(total: usize, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let style = ProgressStyle::with_template("[{elapsed_precise}] {bar:40} {pos}/{len} shards")
                .unwrap_or_else(|_| ProgressStyle::default_bar());
            ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr()).with_style(style)
        });
        ShardCounter { bar }
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }
}

impl Drop for ShardCounter {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
