//! Opening a dump: gzip-compressed files are read transparently, and the
//! header is checked before any work, with a hint when `--skip-unknown`
//! would help (a version newer than any known) and none when it would not.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use anyhow::{anyhow, Context, Result};
use rdblens_parser::{ErrorKind, Format, Rdb, RdbFile};

/// How a dump was stored.
pub enum Stored {
    Plain,
    /// Gzip-compressed; `damage` says why decompression stopped early (a
    /// cut or corrupt stream: what came out before is still read).
    Gzip {
        damage: Option<String>,
    },
}

/// Opens `path` and checks its header. A gzip-compressed file is first
/// decompressed to an anonymous temporary file (gone once the map is
/// dropped); if the gzip stream is damaged, a line on standard error says
/// so and what it decompressed to is read (the RDB walk then finds where
/// it ends). Errors name the file: `NAME: cannot open: ...`, `NAME: not an
/// RDB file: ...`.
pub fn open_rdb(path: &Path, skip_unknown: bool) -> Result<RdbFile> {
    let name = path.display().to_string();
    let (file, stored) = open_input(path).with_context(|| format!("{name}: cannot open"))?;
    let gzip = matches!(stored, Stored::Gzip { .. });
    if let Stored::Gzip { damage: Some(why) } = &stored {
        eprintln!("rdblens: {name}: {}", gzip_damage(why, file.len()));
    }
    read_header(file.bytes(), skip_unknown).with_context(|| {
        if gzip {
            format!("{name} (decompressed from gzip)")
        } else {
            name.clone()
        }
    })?;
    Ok(file)
}

/// The message for a gzip stream that stops early.
pub fn gzip_damage(why: &str, decompressed: usize) -> String {
    format!("the gzip stream is damaged or cut short after {decompressed} decompressed bytes ({why}): reading those")
}

/// Maps `path`; if it is gzip-compressed (magic 1f 8b), maps what it
/// decompresses to instead, and says so. Nothing is sized from the gzip
/// header: the output is streamed to the temporary file as it comes.
pub fn open_input(path: &Path) -> io::Result<(RdbFile, Stored)> {
    let mut file = File::open(path)?;
    let mut magic = [0u8; 2];
    let mut got = 0;
    while got < magic.len() {
        match file.read(&mut magic[got..])? {
            0 => break,
            n => got += n,
        }
    }
    if got < 2 || magic != [0x1f, 0x8b] {
        let map = RdbFile::from_file(file)?;
        crate::mapguard::watch(map.bytes(), &path.display().to_string());
        shrink_for_test(path);
        return Ok((map, Stored::Plain));
    }
    file.seek(SeekFrom::Start(0))?;
    let mut out = tempfile::tempfile()?;
    let mut gz = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 20, file));
    let mut w = BufWriter::with_capacity(1 << 20, &mut out);
    // What decompressed before an error is kept: a dump cut short still
    // gets a report of its sound part.
    let damage = io::copy(&mut gz, &mut w).err().map(|e| e.to_string());
    w.flush()?;
    drop(w);
    Ok((RdbFile::from_file(out)?, Stored::Gzip { damage }))
}

/// Debug builds only: `RDBLENS_TEST_SHRINK_AFTER_MAP=1` truncates the
/// input right after it is mapped, so the tests can check what a dump
/// truncated by another process during the run gives (no race to win).
fn shrink_for_test(path: &Path) {
    #[cfg(debug_assertions)]
    if std::env::var_os("RDBLENS_TEST_SHRINK_AFTER_MAP").is_some() {
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(0));
    }
    #[cfg(not(debug_assertions))]
    let _ = path;
}

/// Reads the magic. A version newer than any known gets a hint to
/// `--skip-unknown`; other versions (too old, or in the gap Valkey
/// reserves) get none, since nothing could read them.
pub fn read_header(bytes: &[u8], skip_unknown: bool) -> Result<Rdb<'_>> {
    let rdb = if skip_unknown {
        Rdb::new_allowing_newer(bytes)
    } else {
        Rdb::new(bytes)
    };
    rdb.map_err(|e| match *e.kind() {
        ErrorKind::UnsupportedVersion { dialect, version, .. } if version > Format::newest_known(dialect) => {
            let newest = Format::newest_known(dialect);
            anyhow!(
                "{e}; --skip-unknown reads it as {dialect} RDB {newest}, up to the first type or opcode \
                 RDB {newest} does not have"
            )
        }
        _ => anyhow::Error::new(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_only_where_skip_unknown_helps() {
        let file = |magic: &[u8]| [magic, &[0xff][..], &[0; 8]].concat();
        let err = |magic: &[u8]| format!("{:#}", read_header(&file(magic), false).unwrap_err());
        assert!(err(b"REDIS0015").ends_with(
            "at byte offset 0; --skip-unknown reads it as Redis RDB 14, up to the first type or opcode \
             RDB 14 does not have"
        ));
        assert!(err(b"VALKEY082").contains("--skip-unknown reads it as Valkey RDB 81"));
        for old in [&b"REDIS0000"[..], b"VALKEY079", b"VALKEY012"] {
            assert!(!err(old).contains("--skip-unknown"), "{}", err(old));
            assert!(read_header(&file(old), true).is_err());
        }
        let v15 = file(b"REDIS0015");
        let rdb = read_header(&v15, true).unwrap(); // ok: unit test
        assert_eq!(rdb.version(), 15);
        assert!(rdb.format().is_newer_than_known());
    }
}
