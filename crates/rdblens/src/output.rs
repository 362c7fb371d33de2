//! Where output goes, and the one write error that is not an error.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};

/// A closed pipe (`rdblens keys ... | head`) means the reader has what it
/// wanted: stop quietly instead of reporting an error.
pub fn ignore_broken_pipe(r: io::Result<()>) -> io::Result<()> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

pub fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// [`is_broken_pipe`] for an error that went through `anyhow`.
pub fn is_broken_pipe_error(e: &anyhow::Error) -> bool {
    e.downcast_ref::<io::Error>().is_some_and(is_broken_pipe)
}

/// A buffered writer to `path`, or to standard output.
pub fn writer(path: Option<&Path>) -> Result<Box<dyn Write>> {
    Ok(match path {
        Some(p) => {
            let file = File::create(p).with_context(|| format!("cannot write {}", p.display()))?;
            Box::new(BufWriter::with_capacity(1 << 16, file))
        }
        None => Box::new(BufWriter::with_capacity(1 << 16, io::stdout().lock())),
    })
}

/// [`writer`] that can move between threads (the Parquet writer needs it).
#[cfg(feature = "parquet")]
pub fn send_writer(path: Option<&Path>) -> Result<Box<dyn Write + Send>> {
    Ok(match path {
        Some(p) => {
            let file = File::create(p).with_context(|| format!("cannot write {}", p.display()))?;
            Box::new(BufWriter::with_capacity(1 << 16, file))
        }
        None => Box::new(BufWriter::with_capacity(1 << 16, io::stdout())),
    })
}
