//! `rdblens keys --format parquet -o DIR`: a Hive-partitioned dataset,
//! `DIR/cluster=<c>/snapshot=<s>/shard=<f>/part-0.parquet`, one shard per
//! input file (docs/fleet.md).
//!
//! Where the parts go is a [`DatasetStore`]: the walk asks it for one part
//! writer per shard and commits it when every shard is written. The local
//! store below stages the parts in a hidden directory and renames them into
//! place, so a reader never sees a half-written part, and an existing shard
//! (or an input inside the dataset) is never written over.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// The dataset schema's version, in each part's key-value metadata
/// (`rdblens.schema_version`). A change that renames, retypes or removes a
/// column increments it; columns added at the end do not.
pub const SCHEMA_VERSION: u32 = 1;

/// A shard of the run is in the dataset already: a usage error (exit 2),
/// found before anything is written.
#[derive(Debug, thiserror::Error)]
#[error(
    "{dir}: this shard is in the dataset already: remove it, or give another --snapshot-label or --label"
)]
pub struct ShardExists {
    pub dir: String,
}

/// Where a dataset's parts are written.
pub trait DatasetStore {
    /// A writer for the part at `relative` (`cluster=../snapshot=../shard=../part-0.parquet`),
    /// started afresh: a second call for the same part drops what the first wrote.
    fn create_part(&mut self, relative: &Path) -> io::Result<Box<dyn Write + Send>>;

    /// Makes every part written visible under the dataset's root.
    fn commit(self: Box<Self>) -> io::Result<()>;
}

/// The labels of one shard's partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardPartition {
    pub cluster: String,
    pub snapshot: String,
    pub shard: String,
}

impl ShardPartition {
    /// The shard's directory under the root.
    pub fn dir(&self) -> PathBuf {
        PathBuf::from(format!("cluster={}", self.cluster))
            .join(format!("snapshot={}", self.snapshot))
            .join(format!("shard={}", self.shard))
    }

    /// The shard's one part file under the root.
    pub fn part(&self) -> PathBuf {
        self.dir().join("part-0.parquet")
    }
}

/// Whether `label` can be a partition value as given: letters, digits and
/// `.`, `-`, `_`, `+`, not starting with `.` or `_` (Spark and Hive skip
/// such directories as hidden), at most 200 bytes. Characters like `/`,
/// `=`, `:` or spaces would need escaping that each engine does its own way.
pub fn check_label(what: &str, label: &str) -> Result<()> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+');
    if label.is_empty() || label.len() > 200 {
        bail!("{what} {label:?}: a partition label must be 1 to 200 characters");
    }
    if label.starts_with(['.', '_']) {
        bail!("{what} {label:?}: a partition label cannot start with `.` or `_` (engines skip such directories)");
    }
    if let Some(c) = label.chars().find(|&c| !allowed(c)) {
        bail!("{what} {label:?}: {c:?} is not allowed in a partition label (letters, digits, `.`, `-`, `_`, `+`)");
    }
    Ok(())
}

/// The default shard label of an input: its file name without the
/// compression and `.rdb` suffixes (`node-1.rdb.gz` is `node-1`), other
/// characters than those [`check_label`] allows made `-`; `stdin` for `-`.
pub fn shard_label_of(path: &Path) -> String {
    if path == Path::new("-") {
        return "stdin".to_string();
    }
    let mut name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for suffix in [".gz", ".bz2", ".lz4", ".zst", ".rdb"] {
        if name.len() > suffix.len() && name.ends_with(suffix) {
            name.truncate(name.len() - suffix.len());
        }
    }
    let mut label: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if label.is_empty() || label.starts_with(['.', '_']) {
        label.insert_str(0, "shard");
    }
    label.truncate(200);
    label
}

/// Each file's shard label: its --label, or its name without suffixes.
pub fn shard_labels(files: &[PathBuf], given: &[String]) -> Result<Vec<String>> {
    let mut labels: Vec<String> = Vec::with_capacity(files.len());
    for (i, path) in files.iter().enumerate() {
        let label = match given.get(i) {
            Some(given) => {
                check_label("--label", given)?;
                given.clone()
            }
            None => shard_label_of(path),
        };
        if let Some(first) = labels.iter().position(|l| l == &label) {
            anyhow::bail!(
                "{} and {} are both shard {label:?} of the dataset: give each file its own --label",
                files[first].display(),
                path.display()
            );
        }
        labels.push(label);
    }
    Ok(labels)
}

/// The snapshot label when none is given: the earliest `ctime` aux field
/// of the dumps (`heads`: each dump's bytes, or its first ones, which hold
/// its aux fields), else the earliest modification time of the files.
pub fn default_snapshot_label(files: &[PathBuf], heads: &[&[u8]]) -> Result<String> {
    let ctime = heads.iter().filter_map(|head| dump_ctime_ms(head)).min();
    let mtime = || {
        files
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok()?.modified().ok())
            .filter_map(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .filter_map(|d| i64::try_from(d.as_millis()).ok())
            .min()
    };
    match ctime.or_else(mtime) {
        Some(ms) => Ok(snapshot_label_of(ms)),
        None => anyhow::bail!(
            "the dumps have no `ctime` aux field and no modification time to label the snapshot with: give --snapshot-label"
        ),
    }
}

/// The `ctime` aux field (unix seconds) of a dump, in ms; aux fields come
/// before the first database, so only the header's records are read.
fn dump_ctime_ms(bytes: &[u8]) -> Option<i64> {
    let rdb = rdblens_parser::Rdb::new_allowing_newer(bytes).ok()?;
    for record in rdb.records().take(64) {
        match record.ok()? {
            rdblens_parser::Record::Aux { key, value } => {
                if key.to_cow().ok().as_deref() == Some(&b"ctime"[..]) {
                    let text = value.to_cow().ok()?;
                    let secs: i64 = std::str::from_utf8(&text).ok()?.trim().parse().ok()?;
                    return secs.checked_mul(1000);
                }
            }
            rdblens_parser::Record::ModuleAux(_) => {}
            _ => return None,
        }
    }
    None
}

/// A time (ms since the epoch) as a snapshot label: ISO 8601 in UTC with
/// `-` for `:` (`2026-11-29T10-00-00Z`), since a `:` in a directory name
/// breaks Hadoop paths; labels sort as the times do.
pub fn snapshot_label_of(ms: i64) -> String {
    let (y, m, d, hh, mm, ss) = rdblens_report::format::civil(ms);
    format!("{y:04}-{m:02}-{d:02}T{hh:02}-{mm:02}-{ss:02}Z")
}

/// A dataset in a local directory. The root is created when missing; then
/// the parts are staged in a sibling directory renamed to the root at
/// commit. Into an existing root, they are staged in a hidden directory in
/// it and each shard's directory renamed into place at commit.
pub struct LocalDataset {
    root: PathBuf,
    staging: tempfile::TempDir,
    /// The root did not exist: the staging directory becomes it.
    new_root: bool,
    shard_dirs: Vec<PathBuf>,
}

impl LocalDataset {
    /// Checks that none of `shards` is in the dataset already (a usage
    /// error: nothing is written over) and prepares the staging directory.
    pub fn open(root: &Path, shards: &[ShardPartition]) -> Result<Self> {
        let new_root = match std::fs::metadata(root) {
            Ok(m) if m.is_dir() => false,
            Ok(_) => bail!(
                "{}: not a directory (a dataset directory is written there; name a `.parquet` file for one file)",
                root.display()
            ),
            Err(e) if e.kind() == io::ErrorKind::NotFound => true,
            Err(e) => bail!("{}: {e}", root.display()),
        };
        for shard in shards {
            let dir = root.join(shard.dir());
            if dir.exists() {
                return Err(ShardExists {
                    dir: dir.display().to_string(),
                }
                .into());
            }
        }
        let staging_parent = if new_root {
            match root.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            }
        } else {
            root.to_path_buf()
        };
        let staging = tempfile::Builder::new()
            .prefix(".rdblens-staging-")
            .tempdir_in(&staging_parent)
            .map_err(|e| crate::output::WriteError {
                target: root.display().to_string(),
                error: os_error(e),
            })?;
        Ok(LocalDataset {
            root: root.to_path_buf(),
            staging,
            new_root,
            shard_dirs: shards.iter().map(ShardPartition::dir).collect(),
        })
    }
}

/// The OS error alone (tempfile's error names the temporary path, which
/// the user never sees).
fn os_error(e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => e,
    }
}

impl DatasetStore for LocalDataset {
    fn create_part(&mut self, relative: &Path) -> io::Result<Box<dyn Write + Send>> {
        let path = self.staging.path().join(relative);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Box::new(BufWriter::with_capacity(1 << 16, File::create(path)?)))
    }

    fn commit(self: Box<Self>) -> io::Result<()> {
        if self.new_root {
            // Another run may have made the root meanwhile: then the shards go in one by one.
            let staged = self.staging.keep();
            match std::fs::rename(&staged, &self.root) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&staged);
                    return Err(e);
                }
            }
        }
        let staged = self.staging.path();
        for dir in &self.shard_dirs {
            let target = self.root.join(dir);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            if target.exists() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{}: written by another run meanwhile", target.display()),
                ));
            }
            std::fs::rename(staged.join(dir), &target)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_checked_and_derived() {
        assert!(check_label("--cluster-label", "prod-eu.1").is_ok());
        for bad in ["", ".hidden", "_tmp", "a/b", "a=b", "a:b", "a b"] {
            assert!(check_label("--label", bad).is_err(), "{bad}");
        }
        assert_eq!(shard_label_of(Path::new("/backups/node-1.rdb.gz")), "node-1");
        assert_eq!(shard_label_of(Path::new("dump.rdb")), "dump");
        assert_eq!(shard_label_of(Path::new("host:6379 dump")), "host-6379-dump");
        assert_eq!(shard_label_of(Path::new("_x.rdb")), "shard_x");
        assert_eq!(shard_label_of(Path::new("-")), "stdin");
        assert_eq!(snapshot_label_of(1_700_000_000_000), "2023-11-14T22-13-20Z");
    }
}
