//! Reading and writing summary files (the format, its checks and merging
//! are `rdblens_summary::SummaryFile`'s). Written gzip-compressed when the
//! file name ends in `.gz`; read either way, never more than
//! [`MAX_SUMMARY_BYTES`] once decompressed.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use rdblens_summary::{SummaryFile, MAX_SUMMARY_BYTES};

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

impl From<rdblens_summary::SummaryError> for SummaryError {
    fn from(e: rdblens_summary::SummaryError) -> Self {
        match e {
            rdblens_summary::SummaryError::Mismatch(m) => SummaryError::Mismatch(m),
            rdblens_summary::SummaryError::Invalid(m) => SummaryError::Input(anyhow::Error::msg(m)),
        }
    }
}

/// Writes the summary to `path` (gzip-compressed when it ends in `.gz`),
/// or to standard output.
pub fn write(file: &SummaryFile, path: Option<&Path>) -> Result<()> {
    let text = file.to_json().context("cannot serialize the summary")?;
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
        _ => Ok(crate::output::write_text(path, &text)?),
    }
}

/// Reads all of `r` (the file, or its decompressed stream), refusing
/// more than `cap` bytes ([`MAX_SUMMARY_BYTES`]).
fn read_capped(r: impl Read, name: &str, decompressed: bool, cap: u64) -> Result<Vec<u8>> {
    let mut data = Vec::new();
    r.take(cap + 1).read_to_end(&mut data).with_context(|| {
        if decompressed {
            format!("{name}: damaged gzip stream")
        } else {
            format!("{name}: cannot read")
        }
    })?;
    if data.len() as u64 > cap {
        anyhow::bail!(
            "{name}: larger than {} MiB{}, the most a summary file can be",
            cap >> 20,
            if decompressed { " decompressed" } else { "" }
        );
    }
    Ok(data)
}

/// Reads a summary file, gzip-compressed or not, and checks it.
pub fn read(path: &Path) -> Result<SummaryFile, SummaryError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path)
        .with_context(|| format!("{name}: cannot read"))
        .map_err(SummaryError::Input)?;
    let cap = MAX_SUMMARY_BYTES;
    let mut data = read_capped(file, &name, false, cap).map_err(SummaryError::Input)?;
    if is_gzip(&data) {
        data = read_capped(flate2::read::MultiGzDecoder::new(&data[..]), &name, true, cap)
            .map_err(SummaryError::Input)?;
    }
    Ok(SummaryFile::parse(&data, &name)?)
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

/// Reads every summary file and merges them in order, each as it is read
/// (memory for two summaries, however many files).
pub fn read_and_merge(paths: &[impl AsRef<Path>]) -> Result<SummaryFile, SummaryError> {
    let mut merger = rdblens_summary::Merger::default();
    for path in paths {
        let path = path.as_ref();
        merger.add(self::read(path)?, path.display().to_string())?;
    }
    Ok(merger.finish()?)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use rdblens_summary::Options;

    use super::*;

    #[test]
    fn json_is_told_from_dumps() {
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
        let summary = rdblens_engine::analyze_bytes(&data, "a.rdb", &opts).unwrap(); // ok: unit test
        let file = SummaryFile::new(summary);
        for name in ["s.json", "s.json.gz"] {
            let path = dir.path().join(name);
            write(&file, Some(&path)).unwrap(); // ok: unit test
            assert!(is_summary_file(&path).unwrap()); // ok: unit test
            assert_eq!(read(&path).unwrap(), file, "{name}"); // ok: unit test
        }
        let gz = std::fs::metadata(dir.path().join("s.json.gz")).unwrap().len(); // ok: unit test
        let plain = std::fs::metadata(dir.path().join("s.json")).unwrap().len(); // ok: unit test
        assert!(gz * 4 < plain, "{gz} vs {plain}");
    }

    /// A gzip bomb: a little compressed text past the cap once inflated
    /// (a 3 MiB cap here: the real one is a GiB).
    #[test]
    fn decompressed_size_is_capped() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&vec![b' '; 4 << 20]).unwrap(); // ok: unit test
        let bomb = gz.finish().unwrap(); // ok: unit test
        assert!(bomb.len() < 10_000);
        let cap = 3 << 20;
        let inflate = flate2::read::MultiGzDecoder::new(&bomb[..]);
        let e = read_capped(inflate, "bomb.json.gz", true, cap).unwrap_err(); // ok: unit test
        assert_eq!(
            e.to_string(),
            "bomb.json.gz: larger than 3 MiB decompressed, the most a summary file can be"
        );
        let e = read_capped(&bomb[..], "x.json", false, 100).unwrap_err(); // ok: unit test
        assert_eq!(
            e.to_string(),
            "x.json: larger than 0 MiB, the most a summary file can be"
        );
        let inflate = flate2::read::MultiGzDecoder::new(&bomb[..]);
        let read = read_capped(inflate, "ok.gz", true, 4 << 20).unwrap(); // ok: unit test
        assert_eq!(read.len(), 4 << 20);
    }
}
