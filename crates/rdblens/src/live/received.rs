//! What happens to a live input's bytes as they are read: its failures
//! are recorded for the end of the analysis, and `--save` copies them.

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Mutex;

use anyhow::Result;

use super::Body;
use crate::output::{Output, WriteError};

/// A failure of a live input that the analysis of a stream would only
/// note as a stream cut short: taken by [`check_received`] after it.
static FAILURES: Mutex<Vec<anyhow::Error>> = Mutex::new(Vec::new());

/// A snapshot whose first read error is also recorded for
/// [`check_received`] (the analysis of a stream notes a read error as the
/// stream's end; for a server, a cut transfer fails the run).
pub(super) struct Watched(pub(super) Body, pub(super) String);

impl Read for Watched {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).inspect_err(|e| record(&self.1, e))
    }
}

/// Records the failure `e` of the input `name`.
fn record(name: &str, e: &io::Error) {
    let error = match e.get_ref().and_then(|i| i.downcast_ref::<WriteError>()) {
        Some(w) => anyhow::Error::new(WriteError {
            target: w.target.clone(),
            error: io::Error::new(w.error.kind(), w.error.to_string()),
        }),
        None => anyhow::anyhow!("{name}: {e}"),
    };
    if let Ok(mut failures) = FAILURES.lock() {
        failures.push(error);
    }
}

/// The first failure of a live input during the analysis, if any: the
/// report of a snapshot cut short is not written.
pub fn check_received() -> Result<()> {
    let first = FAILURES
        .lock()
        .ok()
        .and_then(|mut f| (!f.is_empty()).then(|| f.remove(0)));
    match first {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `--save`: each byte read is also written to a temporary file beside
/// FILE, renamed to FILE once the snapshot is whole; a transfer cut short
/// (or never read to its end) leaves no file.
pub(super) struct Saving {
    snapshot: Body,
    name: String,
    output: Option<(Output, Box<dyn Write + Send>)>,
}

impl Saving {
    pub(super) fn new(snapshot: Body, path: &Path, name: String) -> io::Result<Saving> {
        let output = Output::open(Some(path)).map_err(io::Error::other)?;
        Ok(Saving {
            snapshot,
            name,
            output: Some(output),
        })
    }

    fn save(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        let Some((output, writer)) = &mut self.output else {
            return Ok(());
        };
        writer.write_all(bytes).map_err(|e| output.error(e))?;
        if self.snapshot.complete() {
            if let Some((output, mut writer)) = self.output.take() {
                writer.flush().map_err(|e| output.error(e))?;
                drop(writer);
                output.commit()?;
            }
        }
        Ok(())
    }
}

impl Read for Saving {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let result = self.snapshot.read(buf).and_then(|n| {
            self.save(&buf[..n]).map_err(io::Error::other)?;
            Ok(n)
        });
        result.inspect_err(|e| {
            self.output = None;
            record(&self.name, e);
        })
    }
}
