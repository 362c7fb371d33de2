//! Summary files: what `rdblens report --summary-only` writes and `rdblens
//! merge` / `rdblens diff` read. One JSON object: a format marker, the
//! summary layout version, the options that shaped the accumulators but are
//! not part of the summary's own settings (filters, target server, encoding
//! limits, `--now`), and the summary itself (every accumulator; per-key data
//! only in the bounded top-N lists and rule examples). Written
//! gzip-compressed when the file name ends in `.gz`; read either way.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use rdblens_analysis::{KeyName, Options, Summary, SUMMARY_VERSION};
use rdblens_memory::{Family, Limits, ServerVersion};
use serde::{Deserialize, Serialize};

/// The value of `format`.
pub const FORMAT: &str = "rdblens-summary";

/// Options outside [`rdblens_analysis::Settings`] that change what the
/// accumulators hold; summaries merge only when these agree too.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shaping {
    /// `--db`, sorted.
    pub dbs: Vec<u64>,
    /// `--type`, by type name, sorted.
    pub types: Vec<String>,
    /// `--match`.
    pub pattern: Option<KeyName>,
    /// `--prefix`.
    pub prefix: Option<KeyName>,
    /// `--target` (the profile name), when given.
    pub target: Option<String>,
    /// `--jemalloc-quantum`, when given.
    pub jemalloc_quantum: Option<u64>,
    /// Encoding limits set by `--config` and `--limit`: redis.conf name
    /// (listpack spelling) -> value, the last setting of each.
    pub limits: BTreeMap<String, String>,
    /// `--now` in ms, when given (otherwise each file's own snapshot time).
    pub now_ms: Option<i64>,
    /// `--regex`, `--exclude`, the size and TTL filters, one line each
    /// (absent when none was given, so older summaries read the same).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_filters: Vec<String>,
}

/// The filters beyond `--db`, `--type`, `--match`, `--prefix`, as text.
fn key_filters(f: &rdblens_analysis::KeyFilter) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(r) = &f.regex {
        out.push(format!("--regex {}", r.as_str()));
    }
    for e in &f.exclude {
        out.push(format!("--exclude {}", String::from_utf8_lossy(e)));
    }
    if f.size != rdblens_analysis::SizeRange::default() {
        out.push(format!("size {:?}", f.size));
    }
    if f.ttl != rdblens_analysis::TtlFilter::Any {
        out.push(format!("ttl {:?}", f.ttl));
    }
    out
}

impl Shaping {
    pub fn of(opts: &Options) -> Self {
        let mut dbs = opts.filter.dbs.clone();
        dbs.sort_unstable();
        dbs.dedup();
        let mut types: Vec<String> = opts.filter.kinds.iter().map(|k| k.name().to_string()).collect();
        types.sort();
        types.dedup();
        let mut limits = BTreeMap::new();
        for (name, value) in &opts.config {
            // Only encoding limits change the estimates; other directives
            // (maxmemory-policy...) reach the audit through its settings.
            let mut scratch = Limits::defaults_for(Family::Redis, ServerVersion::new(7, 2, 0));
            if scratch.set(name, value) == Ok(true) {
                let name = name
                    .trim()
                    .to_ascii_lowercase()
                    .replace("-ziplist-", "-listpack-");
                limits.insert(name, value.trim().to_ascii_lowercase());
            }
        }
        Shaping {
            dbs,
            types,
            pattern: opts.filter.pattern.as_deref().map(KeyName::new),
            prefix: opts.filter.prefix.as_deref().map(KeyName::new),
            target: opts.profile.as_ref().map(|p| p.name()),
            jemalloc_quantum: opts.quantum,
            limits,
            now_ms: opts.now_ms,
            key_filters: key_filters(&opts.filter),
        }
    }

    /// What differs from `other`, by command-line flag.
    pub fn differences(&self, other: &Shaping) -> Vec<String> {
        let mut out = Vec::new();
        let name = |k: &Option<KeyName>| match k {
            None => "(none)".to_string(),
            Some(k) => rdblens_report::format::quote_key(k.as_bytes()),
        };
        let or_none = |v: Option<String>| v.unwrap_or_else(|| "(none)".into());
        if self.dbs != other.dbs {
            out.push(format!("--db {:?} vs {:?}", self.dbs, other.dbs));
        }
        if self.types != other.types {
            out.push(format!("--type {:?} vs {:?}", self.types, other.types));
        }
        if self.pattern != other.pattern {
            out.push(format!(
                "--match {} vs {}",
                name(&self.pattern),
                name(&other.pattern)
            ));
        }
        if self.prefix != other.prefix {
            out.push(format!(
                "--prefix {} vs {}",
                name(&self.prefix),
                name(&other.prefix)
            ));
        }
        if self.target != other.target {
            out.push(format!(
                "--target {} vs {}",
                or_none(self.target.clone()),
                or_none(other.target.clone())
            ));
        }
        if self.jemalloc_quantum != other.jemalloc_quantum {
            out.push(format!(
                "--jemalloc-quantum {} vs {}",
                or_none(self.jemalloc_quantum.map(|q| q.to_string())),
                or_none(other.jemalloc_quantum.map(|q| q.to_string()))
            ));
        }
        if self.limits != other.limits {
            let show = |m: &BTreeMap<String, String>| {
                let v: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
                if v.is_empty() {
                    "(defaults)".to_string()
                } else {
                    v.join(",")
                }
            };
            out.push(format!(
                "encoding limits (--config, --limit) {} vs {}",
                show(&self.limits),
                show(&other.limits)
            ));
        }
        if self.key_filters != other.key_filters {
            out.push(format!(
                "key filters {:?} vs {:?}",
                self.key_filters, other.key_filters
            ));
        }
        if self.now_ms != other.now_ms {
            out.push(format!(
                "--now {} vs {}",
                or_none(self.now_ms.map(|n| n.to_string())),
                or_none(other.now_ms.map(|n| n.to_string()))
            ));
        }
        out
    }
}

/// A summary file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`SUMMARY_VERSION`] of the rdblens that wrote it.
    pub summary_version: u32,
    pub tool_version: String,
    pub shaping: Shaping,
    pub summary: Summary,
    /// The host `report --summary-only` ran on: files of the same path
    /// from several hosts (every shard's `/var/lib/redis/dump.rdb`) are
    /// told apart as `HOST:PATH` when merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// This machine's host name (Linux), if it can be read.
pub fn host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// Why a summary file cannot be used: a usage problem (exit 2: other
/// settings, another version) or an unreadable input (exit 3).
#[derive(Debug)]
pub enum SummaryError {
    Mismatch(String),
    Input(anyhow::Error),
}

impl std::fmt::Display for SummaryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SummaryError::Mismatch(m) => f.write_str(m),
            SummaryError::Input(e) => write!(f, "{e:#}"),
        }
    }
}

impl std::error::Error for SummaryError {}

impl SummaryFile {
    pub fn new(summary: Summary, shaping: Shaping) -> Self {
        SummaryFile {
            format: FORMAT.to_string(),
            summary_version: SUMMARY_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            shaping,
            summary,
            host: None,
        }
    }

    /// Compact JSON (one line).
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).context("cannot serialize the summary")
    }

    /// Writes the summary to `path` (gzip-compressed when it ends in `.gz`),
    /// or to standard output.
    pub fn write(&self, path: Option<&Path>) -> Result<()> {
        let text = self.to_json()?;
        match path {
            Some(p) if p.extension().is_some_and(|e| e == "gz") => {
                use std::io::Write;
                let (output, w) = crate::output::Output::open(Some(p))?;
                let mut gz = flate2::write::GzEncoder::new(w, flate2::Compression::default());
                gz.write_all(text.as_bytes())
                    .and_then(|()| gz.finish())
                    .and_then(|mut w| w.flush())
                    .map_err(|e| output.error(e))?;
                output.commit()?;
                Ok(())
            }
            _ => crate::report::write_text(path, &text),
        }
    }

    /// Parses a summary file's bytes; `name` is used in messages.
    pub fn parse(data: &[u8], name: &str) -> Result<SummaryFile, SummaryError> {
        // The marker and version first, so that another document (a report,
        // a summary of another layout) gets a message saying what it is.
        #[derive(Deserialize)]
        struct Head {
            format: Option<String>,
            summary_version: Option<u32>,
            tool_version: Option<String>,
        }
        let head: Head = serde_json::from_slice(data)
            .map_err(|e| SummaryError::Input(anyhow::anyhow!("{name}: not an rdblens summary file: {e}")))?;
        if head.format.as_deref() != Some(FORMAT) {
            return Err(SummaryError::Input(anyhow::anyhow!(
                "{name}: not an rdblens summary file (no \"format\": \"{FORMAT}\"; summaries are written by `rdblens report --format json --summary-only`)"
            )));
        }
        let version = head.summary_version.unwrap_or(0);
        if version != SUMMARY_VERSION {
            return Err(SummaryError::Mismatch(format!(
                "{name}: summary_version {version} (written by rdblens {}), this rdblens {} reads summary_version {SUMMARY_VERSION}: make every summary with the same rdblens version",
                head.tool_version.as_deref().unwrap_or("?"),
                env!("CARGO_PKG_VERSION")
            )));
        }
        serde_json::from_slice(data)
            .map_err(|e| SummaryError::Input(anyhow::anyhow!("{name}: damaged rdblens summary file: {e}")))
    }

    /// Reads a summary file, gzip-compressed or not.
    pub fn read(path: &Path) -> Result<SummaryFile, SummaryError> {
        let name = path.display().to_string();
        let data = std::fs::read(path)
            .with_context(|| format!("{name}: cannot read"))
            .map_err(SummaryError::Input)?;
        if is_gzip(&data) {
            let mut text = Vec::new();
            flate2::read::MultiGzDecoder::new(&data[..])
                .read_to_end(&mut text)
                .with_context(|| format!("{name}: damaged gzip stream"))
                .map_err(SummaryError::Input)?;
            return Self::parse(&text, &name);
        }
        Self::parse(&data, &name)
    }

    /// Folds `other` (read from `name`) in, after checking that both were
    /// made with the same settings.
    pub fn merge(&mut self, other: SummaryFile, name: &str, first: &str) -> Result<(), SummaryError> {
        let mut differences = self.shaping.differences(&other.shaping);
        differences.extend(self.summary.settings.differences(&other.summary.settings));
        if !differences.is_empty() {
            return Err(SummaryError::Mismatch(format!(
                "{name}: cannot merge: made with other settings than {first}: {}",
                differences.join("; ")
            )));
        }
        self.summary.merge(other.summary).map_err(SummaryError::Mismatch)
    }
}

fn is_gzip(data: &[u8]) -> bool {
    data.starts_with(&[0x1f, 0x8b])
}

/// Whether `data` looks like JSON (a summary file) rather than a dump.
pub fn looks_like_json(data: &[u8]) -> bool {
    data.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

/// Whether the file at `path` is a summary file (JSON, maybe
/// gzip-compressed) rather than a dump (maybe gzip-compressed too).
pub fn is_summary_file(path: &Path) -> std::io::Result<bool> {
    let mut head = Vec::with_capacity(64);
    std::fs::File::open(path)?.take(64).read_to_end(&mut head)?;
    if is_gzip(&head) {
        let mut inner = Vec::with_capacity(64);
        // A damaged stream is not a summary; opening it as a dump says why.
        let _ = flate2::read::MultiGzDecoder::new(std::fs::File::open(path)?)
            .take(64)
            .read_to_end(&mut inner);
        return Ok(looks_like_json(&inner));
    }
    Ok(looks_like_json(&head))
}

/// Reads every summary file and merges them in order.
pub fn read_and_merge(paths: &[impl AsRef<Path>]) -> Result<SummaryFile, SummaryError> {
    let mut read = Vec::with_capacity(paths.len());
    for path in paths {
        let path = path.as_ref();
        read.push((SummaryFile::read(path)?, path.display().to_string()));
    }
    name_colliding_files(&mut read);
    // Summaries all made on one host merge into a summary of that host (as
    // one `report --summary-only` over their files would be); from several
    // hosts, the files are named `HOST:PATH` by now and the result has none.
    let common_host = match read.split_first() {
        Some(((first, _), rest)) if rest.iter().all(|(f, _)| f.host == first.host) => first.host.clone(),
        _ => None,
    };
    let mut merged: Option<(SummaryFile, String)> = None;
    for (file, name) in read {
        match &mut merged {
            None => merged = Some((file, name)),
            Some((m, first)) => m.merge(file, &name, first)?,
        }
    }
    merged
        .map(|(m, _)| {
            let mut m = m;
            m.host = common_host;
            m
        })
        .ok_or_else(|| SummaryError::Mismatch("no summary files".into()))
}

/// Files of the same name in summaries from different hosts (every shard's
/// `/var/lib/redis/dump.rdb`) are renamed `HOST:PATH` (or `SUMMARY:PATH`
/// when the summary does not say its host), so shard tables and diffs
/// tell them apart.
fn name_colliding_files(read: &mut [(SummaryFile, String)]) {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for (file, _) in read.iter() {
        for f in &file.summary.files {
            *count.entry(f.path.clone()).or_default() += 1;
        }
    }
    for (file, summary_name) in read.iter_mut() {
        let origin = file.host.clone().unwrap_or_else(|| summary_name.clone());
        for f in &mut file.summary.files {
            if count.get(&f.path).is_some_and(|&n| n > 1) {
                f.path = format!("{origin}:{}", f.path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shaping_normalizes_what_does_not_matter() {
        let mut a = Options::default();
        a.filter.dbs = vec![3, 0, 3];
        a.config = vec![
            ("hash-max-ziplist-entries".into(), "1K".into()),
            ("maxmemory-policy".into(), "allkeys-lru".into()),
        ];
        let mut b = Options::default();
        b.filter.dbs = vec![0, 3];
        b.config = vec![("hash-max-listpack-entries".into(), "1k".into())];
        assert_eq!(Shaping::of(&a), Shaping::of(&b));
        b.now_ms = Some(5);
        let d = Shaping::of(&a).differences(&Shaping::of(&b));
        assert_eq!(d, vec!["--now (none) vs 5".to_string()]);
    }

    #[test]
    fn other_documents_are_refused_with_a_reason() {
        let err = |data: &str| {
            SummaryFile::parse(data.as_bytes(), "x.json")
                .unwrap_err()
                .to_string()
        };
        assert!(err("REDIS0011").contains("x.json: not an rdblens summary file"));
        assert!(err(r#"{"schema_version": 1}"#).contains("summaries are written by"));
        let e = err(r#"{"format": "rdblens-summary", "summary_version": 1, "tool_version": "0.0.1"}"#);
        assert!(e.contains("summary_version 1 (written by rdblens 0.0.1)"), "{e}");
        assert!(matches!(
            SummaryFile::parse(br#"{"format": "rdblens-summary", "summary_version": 1}"#, "x"),
            Err(SummaryError::Mismatch(_))
        ));
        assert!(looks_like_json(b"  \n{\"a\":1}"));
        assert!(!looks_like_json(b"REDIS0011"));
    }

    #[test]
    fn gzip_summaries_read_back() {
        let dir = tempfile::tempdir().unwrap(); // ok: unit test
        let opts = Options::default();
        let data = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/rdb/redis-7.4.5/all-types.rdb"
        ))
        .unwrap(); // ok: unit test
        let summary = rdblens_analysis::analyze_bytes(&data, "a.rdb", &opts).unwrap(); // ok: unit test
        let file = SummaryFile::new(summary, Shaping::of(&opts));
        for name in ["s.json", "s.json.gz"] {
            let path = dir.path().join(name);
            file.write(Some(&path)).unwrap(); // ok: unit test
            assert!(is_summary_file(&path).unwrap()); // ok: unit test
            assert_eq!(SummaryFile::read(&path).unwrap(), file, "{name}"); // ok: unit test
        }
        let gz = std::fs::metadata(dir.path().join("s.json.gz")).unwrap().len(); // ok: unit test
        let plain = std::fs::metadata(dir.path().join("s.json")).unwrap().len(); // ok: unit test
        assert!(gz * 4 < plain, "{gz} vs {plain}");
    }
}
