//! Summary files: what `rdblens report --summary-only` writes and `rdblens
//! merge` / `rdblens diff` read. One JSON object: a format marker, the
//! summary layout version, the options that shaped the accumulators
//! besides the summary's own settings (`shaping`: filters, target server,
//! encoding limits, `--now`), and the summary itself (every accumulator;
//! per-key data only in the bounded top-N lists and rule examples).
//!
//! A summary file comes from another host: it is hostile input like a dump.
//! [`SummaryFile::parse`] refuses more than [`MAX_SUMMARY_BYTES`], names
//! the JSON field of any damage, and runs [`Summary::check`] before anything
//! reads the summary. Reading the file (and decompressing it) is the
//! caller's, within the same cap.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::settings::{join_differences, Shaping};
use crate::summary::{MergeError, Summary, SUMMARY_VERSION};

/// The value of `format`.
pub const FORMAT: &str = "rdblens-summary";

/// The largest summary file read, once decompressed: 1 GiB. A summary's
/// size does not grow with the keys but with the namespaces kept (a prefix
/// tree four levels deep, fully fanned out, is the largest part: about
/// 300 bytes per kept prefix); real ones are a few MB, and this bounds
/// the memory a hostile or mistaken file can take.
pub const MAX_SUMMARY_BYTES: u64 = 1 << 30;

/// A summary file. The summary's settings carry the shaping options (so
/// that merging checks them); the file keeps them beside the summary.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`SUMMARY_VERSION`] of the rdblens that wrote it.
    pub summary_version: u32,
    /// Version of the rdblens that wrote the file (its `CARGO_PKG_VERSION`).
    pub tool_version: String,
    /// The summary; its settings carry the file's `shaping`.
    pub summary: Summary,
    /// The host `report --summary-only` ran on: files of the same path
    /// from several hosts (every shard's `/var/lib/redis/dump.rdb`) are
    /// told apart as `HOST:PATH` when merged.
    pub host: Option<String>,
}

/// The serialized layout (summary_version 5): `shaping` beside `summary`.
#[derive(Serialize)]
struct FileOut<'a> {
    format: &'a str,
    summary_version: u32,
    tool_version: &'a str,
    shaping: &'a Shaping,
    summary: &'a Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    host: &'a Option<String>,
}

#[derive(Deserialize)]
struct FileIn {
    format: String,
    summary_version: u32,
    tool_version: String,
    shaping: Shaping,
    summary: Summary,
    #[serde(default)]
    host: Option<String>,
}

impl Serialize for SummaryFile {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        FileOut {
            format: &self.format,
            summary_version: self.summary_version,
            tool_version: &self.tool_version,
            shaping: &self.summary.settings.shaping,
            summary: &self.summary,
            host: &self.host,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for SummaryFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = FileIn::deserialize(d)?;
        let mut summary = f.summary;
        summary.settings.shaping = f.shaping;
        Ok(SummaryFile {
            format: f.format,
            summary_version: f.summary_version,
            tool_version: f.tool_version,
            summary,
            host: f.host,
        })
    }
}

/// A summary file's marker and layout version, read on their own when the
/// whole does not parse.
struct Head {
    format: Option<String>,
    summary_version: Option<u64>,
    tool_version: Option<String>,
}

impl Head {
    fn of(data: &[u8], name: &str) -> Result<Head, SummaryError> {
        #[derive(Deserialize)]
        struct Raw {
            format: Option<serde_json::Value>,
            summary_version: Option<serde_json::Value>,
            tool_version: Option<serde_json::Value>,
        }
        let raw: Raw = serde_json::from_slice(data)
            .map_err(|e| SummaryError::Invalid(format!("{name}: not an rdblens summary file: {e}")))?;
        let text = |v: Option<serde_json::Value>| v.and_then(|v| v.as_str().map(str::to_string));
        let format = text(raw.format);
        let summary_version = match raw.summary_version {
            None => None,
            Some(v) if format.as_deref() == Some(FORMAT) => Some(v.as_u64().ok_or_else(|| {
                SummaryError::Invalid(format!(
                    "{name}: damaged rdblens summary file: summary_version: {v}, not a version number"
                ))
            })?),
            Some(_) => None,
        };
        Ok(Head {
            format,
            summary_version,
            tool_version: text(raw.tool_version),
        })
    }
}

/// Why a summary file cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SummaryError {
    /// Made with other settings, or by an rdblens of another summary
    /// layout: the files cannot be used together (a usage problem).
    Mismatch(String),
    /// Not a summary file, damaged, or holding what no summary can (bad
    /// input): the message names the file and the JSON field.
    Invalid(String),
}

impl std::fmt::Display for SummaryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SummaryError::Mismatch(m) | SummaryError::Invalid(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SummaryError {}

impl SummaryFile {
    /// The file of a summary made on this host.
    pub fn new(summary: Summary) -> Self {
        SummaryFile {
            format: FORMAT.to_string(),
            summary_version: SUMMARY_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            summary,
            host: None,
        }
    }

    /// Compact JSON (one line).
    pub fn to_json(&self) -> serde_json::Result<String> {
        serde_json::to_string(self)
    }

    /// Parses and checks a summary file's bytes; `name` is used in messages.
    pub fn parse(data: &[u8], name: &str) -> Result<SummaryFile, SummaryError> {
        if data.len() as u64 > MAX_SUMMARY_BYTES {
            return Err(SummaryError::Invalid(format!(
                "{name}: larger than {} MiB, the most a summary file can be",
                MAX_SUMMARY_BYTES >> 20
            )));
        }
        let damaged = |e: String| SummaryError::Invalid(format!("{name}: damaged rdblens summary file: {e}"));
        let mut de = serde_json::Deserializer::from_slice(data);
        let parsed = serde_path_to_error::deserialize::<_, SummaryFile>(&mut de)
            .map_err(|e| {
                let at = e.path().to_string();
                if at == "." {
                    e.inner().to_string()
                } else {
                    format!("{at}: {}", e.inner())
                }
            })
            // Nothing but white space after the object.
            .and_then(|f| de.end().map(|()| f).map_err(|e| e.to_string()));
        // The marker and the version before any damage, so that another
        // document (a report, a summary of another layout) gets a message
        // saying what it is. Read again only when the whole did not parse:
        // one pass over the file otherwise.
        let (format, version, tool_version) = match &parsed {
            Ok(f) => (
                Some(f.format.clone()),
                Some(u64::from(f.summary_version)),
                Some(f.tool_version.clone()),
            ),
            Err(_) => {
                let head = Head::of(data, name)?;
                (head.format, head.summary_version, head.tool_version)
            }
        };
        if format.as_deref() != Some(FORMAT) {
            return Err(SummaryError::Invalid(format!(
                "{name}: not an rdblens summary file (no \"format\": \"{FORMAT}\"; summaries are written by `rdblens report --format json --summary-only`)"
            )));
        }
        let version = version.unwrap_or(0);
        if version != u64::from(SUMMARY_VERSION) {
            return Err(SummaryError::Mismatch(format!(
                "{name}: summary_version {version} (written by rdblens {}), this rdblens {} reads summary_version {SUMMARY_VERSION}: make every summary with the same rdblens version",
                tool_version.as_deref().unwrap_or("?"),
                env!("CARGO_PKG_VERSION")
            )));
        }
        let file = parsed.map_err(damaged)?;
        file.summary.check().map_err(|e| damaged(e.to_string()))?;
        Ok(file)
    }

    /// Folds `other` (read from `name`) in, after checking that both were
    /// made with the same settings; `first` names this one in messages.
    pub fn merge(&mut self, other: SummaryFile, name: &str, first: &str) -> Result<(), SummaryError> {
        self.summary.merge(other.summary).map_err(|e| match e {
            MergeError::Settings(d) => SummaryError::Mismatch(format!(
                "{name}: cannot merge: made with other settings than {first}: {}",
                join_differences(&d)
            )),
            MergeError::Invalid(e) => SummaryError::Invalid(format!(
                "{name}: cannot merge: the merged summary would not be valid: {e}"
            )),
        })
    }

    /// Merges summary files in order, each with the name it is known by
    /// (its path). Files of the same path from several hosts are renamed
    /// `HOST:PATH`; summaries all made on one host merge into a summary of
    /// that host. (See [`Merger`] to merge files as they are read.)
    pub fn merge_all(files: Vec<(SummaryFile, String)>) -> Result<SummaryFile, SummaryError> {
        let mut merger = Merger::default();
        for (file, name) in files {
            merger.add(file, name)?;
        }
        merger.finish()
    }
}

/// Merges summary files one at a time, as they are read: only the merged
/// summary and the file being read are in memory (100 summaries held at
/// once took 1.4 GB). What renaming needs is kept per file and applied by
/// [`Merger::finish`].
#[derive(Default)]
pub struct Merger {
    merged: Option<(SummaryFile, String)>,
    /// Per file in order: its host, its name and how many dump files it
    /// lists (its run of `summary.files` in the merged summary).
    origins: Vec<(Option<String>, String, usize)>,
}

impl Merger {
    /// Folds in the summary read from `name` (after checking that it was
    /// made with the same settings as the first).
    pub fn add(&mut self, file: SummaryFile, name: String) -> Result<(), SummaryError> {
        let origin = (file.host.clone(), name.clone(), file.summary.files.len());
        match &mut self.merged {
            None => self.merged = Some((file, name)),
            Some((m, first)) => m.merge(file, &name, first)?,
        }
        self.origins.push(origin);
        Ok(())
    }

    /// The merged summary; an error when no file was added.
    pub fn finish(self) -> Result<SummaryFile, SummaryError> {
        let (mut m, _) = self
            .merged
            .ok_or_else(|| SummaryError::Mismatch("no summary files".into()))?;
        name_colliding_files(&mut m.summary.files, &self.origins);
        // From several hosts, the files are named `HOST:PATH` by now and the
        // result has no host.
        let common_host = match self.origins.split_first() {
            Some(((first, _, _), rest)) if rest.iter().all(|(h, _, _)| h == first) => first.clone(),
            _ => None,
        };
        m.host = common_host;
        Ok(m)
    }
}

/// Files of the same name in summaries from different hosts (every shard's
/// `/var/lib/redis/dump.rdb`) are renamed `HOST:PATH` (or `SUMMARY:PATH`
/// when the summary does not say its host), so shard tables and diffs
/// tell them apart.
fn name_colliding_files(files: &mut [crate::summary::FileInfo], origins: &[(Option<String>, String, usize)]) {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for f in files.iter() {
        *count.entry(f.path.clone()).or_default() += 1;
    }
    let mut rest = files;
    for (host, summary_name, n) in origins {
        let k = (*n).min(rest.len());
        let (mine, after) = std::mem::take(&mut rest).split_at_mut(k);
        rest = after;
        let origin = host.as_deref().unwrap_or(summary_name);
        for f in mine {
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
    fn other_documents_are_refused_with_a_reason() {
        let err = |data: &str| SummaryFile::parse(data.as_bytes(), "x.json").unwrap_err(); // ok: unit test
        let text = |data: &str| err(data).to_string();
        assert!(text("REDIS0011").starts_with("x.json: not an rdblens summary file: expected value"));
        assert!(text(r#"{"schema_version": 1}"#).contains("summaries are written by"));
        let e = text(r#"{"format": "rdblens-summary", "summary_version": 1, "tool_version": "0.0.1"}"#);
        assert!(e.contains("summary_version 1 (written by rdblens 0.0.1)"), "{e}");
        assert!(matches!(
            err(r#"{"format": "rdblens-summary", "summary_version": 1}"#),
            SummaryError::Mismatch(_)
        ));
        assert_eq!(
            err(r#"{"format": "rdblens-summary", "summary_version": "5"}"#),
            SummaryError::Invalid(
                "x.json: damaged rdblens summary file: summary_version: \"5\", not a version number".into()
            )
        );
        let e = text(&format!(
            r#"{{"format": "rdblens-summary", "summary_version": {SUMMARY_VERSION}, "tool_version": "x", "shaping": 3}}"#
        ));
        assert!(
            e.starts_with("x.json: damaged rdblens summary file: shaping: invalid type: integer `3`"),
            "{e}"
        );
    }
}
