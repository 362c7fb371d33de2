//! Flags shared by `report` and `keys`: which keys, and which server the
//! memory is estimated for. Every check here runs before any file is read,
//! so its errors are usage errors (exit 2).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use rdblens_memory::{Family, Limit, Limits, Profile, ServerVersion};
use rdblens_parser::TypeKind;
use rdblens_summary::rules::{ByteSize, Seconds};
use rdblens_summary::{KeyFilter, Options, SizeBy, SizeRange, TtlFilter};

/// The compact-encoding limits `--limit` and `--config` can set (redis.conf
/// names; the pre-7.0 `ziplist` spellings are accepted too), for messages.
fn limit_names() -> String {
    Limit::ALL.map(Limit::name).join(", ")
}

/// Which keys: `--db`, `--type`, `--match`, `--prefix`, `--regex`,
/// `--exclude`, `--min-size`/`--max-size`, `--ttl`/`--no-ttl`/`--expired`.
#[derive(Args, Debug)]
pub struct FilterArgs {
    /// Only these databases (repeatable).
    #[arg(long = "db", value_name = "N")]
    pub dbs: Vec<u64>,
    /// Only these types: string, list, set, zset, hash, stream, module, array (repeatable).
    #[arg(long = "type", value_name = "TYPE")]
    pub types: Vec<String>,
    /// Only keys matching this Redis glob (as SCAN MATCH; bytes-safe).
    #[arg(long = "match", value_name = "PATTERN")]
    pub pattern: Option<String>,
    /// Only keys starting with this prefix.
    #[arg(long)]
    pub prefix: Option<String>,
    /// Only keys matching this regular expression (Rust regex syntax, over
    /// the key's bytes, unanchored: `^user:\d+$`; `(?-u:\xff)` matches a byte).
    #[arg(long, value_name = "REGEX")]
    pub regex: Option<String>,
    /// Leave out keys matching this Redis glob (repeatable).
    #[arg(long, visible_alias = "not-match", value_name = "PATTERN")]
    pub exclude: Vec<String>,
    /// Only keys at least this big (e.g. 10KiB, 1MiB; memory estimate, or --size-by serialized).
    #[arg(long, value_name = "SIZE")]
    pub min_size: Option<String>,
    /// Only keys at most this big (e.g. 512, 64KiB).
    #[arg(long, value_name = "SIZE")]
    pub max_size: Option<String>,
    /// What --min-size and --max-size compare: the memory estimate or the serialized size.
    #[arg(long, value_enum, default_value = "memory")]
    pub size_by: SizeByArg,
    /// Only keys whose TTL (at --now, or the snapshot's time) is within MIN..MAX,
    /// e.g. 1h..1d, ..10m, 7d.. (durations: 45s, 90m, 12h, 30d, 2w).
    #[arg(long, value_name = "MIN..MAX", conflicts_with_all = ["no_ttl", "expired"])]
    pub ttl: Option<String>,
    /// Only keys without an expiry.
    #[arg(long, conflicts_with = "expired")]
    pub no_ttl: bool,
    /// Only keys already expired at the reference time (--now, or the snapshot's).
    #[arg(long)]
    pub expired: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SizeByArg {
    Memory,
    Serialized,
}

/// How memory is estimated and TTLs measured.
#[derive(Args, Debug)]
pub struct ModelArgs {
    /// A redis.conf whose encoding limits apply (e.g. hash-max-listpack-entries).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override one compact-encoding limit, e.g. hash-max-listpack-entries=1024 (repeatable; wins over --config).
    #[arg(long = "limit", value_name = "NAME=VALUE")]
    pub limits: Vec<String>,
    /// Server to estimate memory for, e.g. redis-7.2, valkey-8.1 (default: the writer of the file).
    #[arg(long)]
    pub target: Option<String>,
    /// jemalloc quantum of the target: 8 (bundled jemalloc) or 16 (distro libjemalloc) (default: detected from the dump's used-mem when clear, else 8; giving it skips the detection, which is faster on big dumps).
    #[arg(long, value_parser = ["8", "16"])]
    pub jemalloc_quantum: Option<String>,
    /// Reference time for TTLs (default: the snapshot's ctime). Times, here and
    /// in --expiry-window: unix seconds or milliseconds, YYYY-MM-DD[Thh:mm[:ss]]
    /// (UTC), now, today, yesterday, tomorrow (midnight UTC), now-DURATION or
    /// now+DURATION (e.g. now-12h, now+7d).
    #[arg(long, value_name = "TIME", value_parser = crate::time::parse)]
    pub now: Option<i64>,
    /// Worker threads (default: all cores, one fewer when every input is a
    /// server on this machine; at most 8 per core, more is refused).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

impl FilterArgs {
    pub fn filter(&self) -> Result<KeyFilter> {
        let mut f = key_filter(
            &self.dbs,
            &self.types,
            self.pattern.as_deref(),
            self.prefix.as_deref(),
        )?;
        if let Some(r) = &self.regex {
            let re = regex::bytes::Regex::new(r).map_err(|e| anyhow::anyhow!("--regex {r:?}: {e}"))?;
            f.regex = Some(re);
        }
        f.exclude = self.exclude.iter().map(|p| p.as_bytes().to_vec()).collect();
        let size = |flag: &str, v: &Option<String>| -> Result<Option<u64>> {
            v.as_deref()
                .map(|s| {
                    ByteSize::parse(s)
                        .map(|b| b.0)
                        .map_err(|e| anyhow::anyhow!("{flag}: {e}"))
                })
                .transpose()
        };
        f.size = SizeRange {
            by: match self.size_by {
                SizeByArg::Memory => SizeBy::Memory,
                SizeByArg::Serialized => SizeBy::Serialized,
            },
            min: size("--min-size", &self.min_size)?,
            max: size("--max-size", &self.max_size)?,
        };
        if let (Some(min), Some(max)) = (f.size.min, f.size.max) {
            if min > max {
                bail!("--min-size {min} is above --max-size {max}: no key can match");
            }
        }
        f.ttl = if self.no_ttl {
            TtlFilter::Persistent
        } else if self.expired {
            TtlFilter::Expired
        } else if let Some(range) = &self.ttl {
            parse_ttl_range(range)?
        } else {
            TtlFilter::Any
        };
        Ok(f)
    }
}

/// `--ttl MIN..MAX`: either end may be left out, not both.
pub fn parse_ttl_range(s: &str) -> Result<TtlFilter> {
    let Some((min, max)) = s.split_once("..") else {
        bail!("--ttl {s:?}: expected MIN..MAX, e.g. 1h..1d, ..10m or 7d..");
    };
    let end = |v: &str| -> Result<Option<i64>> {
        if v.trim().is_empty() {
            return Ok(None);
        }
        let secs = Seconds::parse(v)
            .map_err(|e| anyhow::anyhow!("--ttl {s:?}: {e}"))?
            .0;
        Ok(Some(i64::try_from(secs.saturating_mul(1000)).unwrap_or(i64::MAX)))
    };
    let (min_ms, max_ms) = (end(min)?, end(max)?);
    match (min_ms, max_ms) {
        (None, None) => bail!("--ttl {s:?}: give at least one end, e.g. 1h..1d, ..10m or 7d.."),
        (Some(a), Some(b)) if a > b => bail!("--ttl {s:?}: the minimum is above the maximum"),
        _ => Ok(TtlFilter::Within { min_ms, max_ms }),
    }
}

impl ModelArgs {
    /// Options with this model and `filter`; the rest default.
    pub fn options(&self, filter: KeyFilter) -> Result<Options> {
        check_threads(self.threads, cores())?;
        Ok(Options {
            threads: self.threads,
            now_ms: self.now,
            profile: target_profile(self.target.as_deref())?,
            quantum: self.jemalloc_quantum.as_deref().and_then(|q| q.parse().ok()),
            config: model_config(self.config.as_deref(), &self.limits)?,
            filter,
            sample_evidence_from: sample_evidence_from_for_test(),
            ..Options::default()
        })
    }
}

/// Debug builds only: `RDBLENS_TEST_SAMPLE_EVIDENCE_FROM=N` treats a dump
/// of N bytes or more as big for the allocator evidence, so the tests can
/// run the small fixtures through what a big dump takes (a stream's
/// one-pass fold for both builds, the mapped file's deferred evidence).
fn sample_evidence_from_for_test() -> usize {
    let default = Options::default().sample_evidence_from;
    #[cfg(debug_assertions)]
    if let Some(n) = std::env::var("RDBLENS_TEST_SAMPLE_EVIDENCE_FROM")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return n;
    }
    default
}

/// `--threads` beyond this many per core only adds switching and memory.
pub const THREADS_PER_CORE: usize = 8;

pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Refuses more than [`THREADS_PER_CORE`] worker threads per core.
pub fn check_threads(threads: usize, cores: usize) -> Result<()> {
    let max = THREADS_PER_CORE * cores;
    if threads > max {
        bail!(
            "--threads {threads}: at most {max} ({THREADS_PER_CORE} per core, {cores} cores here); 0 means one per core"
        );
    }
    Ok(())
}

pub fn parse_kind(s: &str) -> Result<TypeKind> {
    // `sortedset` is what redis-rdb-tools calls it (and `rdblens keys` prints).
    let name = if s == "sortedset" { "zset" } else { s };
    match TypeKind::from_name(name) {
        Some(kind) => Ok(kind),
        None => bail!(
            "unknown type '{s}' (expected {})",
            TypeKind::ALL.map(TypeKind::name).join(", ")
        ),
    }
}

pub fn key_filter(
    dbs: &[u64],
    types: &[String],
    pattern: Option<&str>,
    prefix: Option<&str>,
) -> Result<KeyFilter> {
    Ok(KeyFilter {
        dbs: dbs.to_vec(),
        kinds: types.iter().map(|t| parse_kind(t)).collect::<Result<_>>()?,
        pattern: pattern.map(|p| p.as_bytes().to_vec()),
        prefix: prefix.map(|p| p.as_bytes().to_vec()),
        ..KeyFilter::default()
    })
}

/// Release lines (major.minor) the memory model can be asked for: a
/// version that was never released is a typo, not a target.
const REDIS_LINES: [(u32, u32); 19] = [
    (2, 0),
    (2, 2),
    (2, 4),
    (2, 6),
    (2, 8),
    (3, 0),
    (3, 2),
    (4, 0),
    (5, 0),
    (6, 0),
    (6, 2),
    (7, 0),
    (7, 2),
    (7, 4),
    (8, 0),
    (8, 2),
    (8, 4),
    (8, 6),
    (8, 8),
];
const VALKEY_LINES: [(u32, u32); 6] = [(7, 2), (8, 0), (8, 1), (9, 0), (9, 1), (9, 2)];

pub fn target_profile(target: Option<&str>) -> Result<Option<Profile>> {
    let Some(t) = target else { return Ok(None) };
    let profile = Profile::parse_target(t)
        .map_err(anyhow::Error::msg)
        .context("--target")?;
    let (lines, family) = match profile.family {
        Family::Redis => (&REDIS_LINES[..], "Redis"),
        Family::Valkey => (&VALKEY_LINES[..], "Valkey"),
    };
    let v = profile.version;
    if !lines.contains(&(v.major, v.minor)) {
        let all: Vec<String> = lines.iter().map(|(a, b)| format!("{a}.{b}")).collect();
        bail!(
            "--target {t}: no {family} {}.{} release is known ({family} releases: {})",
            v.major,
            v.minor,
            all.join(", ")
        );
    }
    Ok(Some(profile))
}

/// The largest `--top` a dump is analysed with when any list of key
/// records is kept (the big keys, three overall and three per type; the
/// coldest and hottest keys; each limit's examples): those lists are held
/// in memory and printed whole, so their cost grows with `--top`. At
/// 10,000 a report stays within a few hundred MiB (docs/performance.md).
/// Per-key data for more keys is what `rdblens keys` is for: it streams
/// one record per key. Sections that keep no such list (ttl, expiry,
/// keys, prefixes, slots) take any `--top`: it only
/// sets how many rows their tables show.
pub const MAX_TOP: usize = 10_000;

/// `--separator`: the one byte namespaces are split at. A clap value
/// parser, so every command that takes the flag checks it the same way,
/// before any work.
pub fn separator_byte(text: &str) -> std::result::Result<u8, String> {
    match text.as_bytes() {
        [b] => Ok(*b),
        _ => Err("must be a single byte".to_string()),
    }
}

/// `--depth`: how many namespace levels are aggregated, 1-4 (a clap value
/// parser, as [`separator_byte`]).
pub fn namespace_depth(text: &str) -> std::result::Result<usize, String> {
    match text.parse::<usize>() {
        Ok(depth) if (1..=4).contains(&depth) => Ok(depth),
        _ => Err("must be 1-4".to_string()),
    }
}

/// `--top` where lists of key records are kept: at most [`MAX_TOP`],
/// refused before any file is read.
pub fn check_top(top: usize) -> Result<()> {
    if top > MAX_TOP {
        bail!(
            "--top {top} is above the maximum of {MAX_TOP}: top lists are held in memory and \
             printed whole; for per-key data on every key, `rdblens keys DUMP` streams one \
             record per key (CSV, JSON lines or Parquet) in constant memory"
        );
    }
    Ok(())
}

/// `--label`: none, or one per file (in order), all different.
pub fn check_labels(labels: &[String], files: usize) -> Result<()> {
    if !labels.is_empty() && labels.len() != files {
        bail!(
            "--label is given {} times for {files} files: give one per file, in order",
            labels.len()
        );
    }
    for (i, l) in labels.iter().enumerate() {
        if labels[..i].contains(l) {
            bail!("--label {l:?} is given twice: each file needs its own name");
        }
    }
    Ok(())
}

/// A note on standard error when filters left nothing of keys that exist
/// (`--db 99`, a `--match` that matches nothing): the empty output is then
/// explained, not mistaken for an empty dump.
pub fn note_if_nothing_matched(filter: &KeyFilter, matched: u64, in_files: u64) {
    if !filter.is_empty() && matched == 0 && in_files > 0 {
        eprintln!("rdblens: note: no key matched the filters; the input holds {in_files} keys");
    }
}

/// Reads `name value` lines of a redis.conf; limits are applied, the rest kept for the audit.
pub fn read_config(path: &Path) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (name, value) = l.split_once(char::is_whitespace)?;
            Some((
                name.to_ascii_lowercase(),
                value.trim().trim_matches('"').to_string(),
            ))
        })
        .collect())
}

/// Checks one limit against a scratch [`Limits`]: `Ok(false)` if `name` is
/// not a limit, `Err` if it is one and `value` does not parse.
fn check_limit(name: &str, value: &str) -> Result<bool> {
    // The defaults do not matter: only the name and the value are checked.
    let mut scratch = Limits::defaults_for(Family::Redis, ServerVersion::new(7, 2, 0));
    scratch.set(name, value).map_err(anyhow::Error::msg)
}

/// `--limit NAME=VALUE`, validated.
pub fn parse_limit(s: &str) -> Result<(String, String)> {
    let Some((name, value)) = s.split_once('=') else {
        bail!("--limit {s:?}: expected NAME=VALUE, e.g. hash-max-listpack-entries=1024");
    };
    let name = name.trim().to_ascii_lowercase();
    let value = value.trim().to_string();
    if !check_limit(&name, &value).with_context(|| format!("--limit {s:?}"))? {
        bail!(
            "--limit {s:?}: unknown limit '{name}' (expected one of {})",
            limit_names()
        );
    }
    Ok((name, value))
}

/// The `--config` file's directives, then the `--limit` overrides (applied
/// in this order, so a `--limit` wins). Bad values of known limits are errors.
pub fn model_config(config: Option<&Path>, limits: &[String]) -> Result<Vec<(String, String)>> {
    let mut out = match config {
        Some(path) => read_config(path)?,
        None => Vec::new(),
    };
    if let Some(path) = config {
        for (name, value) in &out {
            check_limit(name, value).with_context(|| format!("--config {}", path.display()))?;
        }
    }
    for l in limits {
        out.push(parse_limit(l)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_validated() {
        assert_eq!(
            parse_limit("hash-max-ziplist-entries=1k").unwrap(), // ok: unit test
            ("hash-max-ziplist-entries".into(), "1k".into())
        );
        for name in Limit::ALL.map(Limit::name) {
            let value = if name == "list-max-listpack-size" {
                "-3"
            } else {
                "7"
            };
            assert!(parse_limit(&format!("{name}={value}")).is_ok(), "{name}");
        }
        let err = |s: &str| format!("{:#}", parse_limit(s).unwrap_err());
        assert!(err("maxmemory=1").contains("unknown limit 'maxmemory'"));
        assert!(err("hash-max-listpack-entries").contains("expected NAME=VALUE"));
        assert!(err("hash-max-listpack-entries=lots").contains("is not a size"));
    }
}
