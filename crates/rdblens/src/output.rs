//! Where output goes. A file named with `-o` is written to a temporary file
//! beside it and renamed into place once complete, so a failed or
//! interrupted run never leaves a half-written or emptied file; an output
//! that is one of the inputs is refused before anything is opened for
//! writing. Write errors are [`WriteError`]s naming the output (exit 4),
//! never mistaken for damage in the input (exit 3).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A write to the output failed (a full disk, `> /dev/full`, a closed pipe
/// that is not the reader stopping early...): exit 4.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {target}: {error}")]
pub struct WriteError {
    /// The output's name (`standard output` or the path given).
    pub target: String,
    /// Not a `source`: the message already says it (`{e:#}` would repeat it).
    pub error: io::Error,
}

/// The output is one of the inputs (same device and inode: the same path, a
/// hard link or a symlink): a usage error (exit 2), found before any file
/// is opened for writing.
#[derive(Debug, thiserror::Error)]
#[error("--output {output} is the same file as the input {input}: refusing to overwrite an input")]
pub struct OutputIsInput {
    pub output: String,
    pub input: String,
}

/// Refuses `output` if it is the same file as any of `inputs` (device and
/// inode, so hard links and symlinks are caught). Inputs that cannot be
/// read, and `-`, are skipped (opening them reports the error).
pub fn refuse_input_as_output<'a>(
    output: Option<&Path>,
    inputs: impl IntoIterator<Item = &'a Path>,
) -> Result<(), OutputIsInput> {
    let Some(output) = output else { return Ok(()) };
    let Some(out_id) = file_id(output) else {
        return Ok(()); // a new file cannot be an input
    };
    for input in inputs {
        if input == Path::new("-") {
            continue;
        }
        if file_id(input) == Some(out_id) {
            return Err(OutputIsInput {
                output: output.display().to_string(),
                input: input.display().to_string(),
            });
        }
    }
    Ok(())
}

/// Checks, before any work, that `output` can be written: a missing
/// directory, a directory given as the file or a directory without write
/// permission would otherwise fail only once the whole analysis is done. A
/// temporary file is made beside the output (as the real write does) and
/// deleted at once; an existing device or FIFO is left alone (opening a
/// FIFO would wait for a reader), its errors come when it is written.
pub fn check_writable(output: Option<&Path>) -> Result<(), WriteError> {
    let Some(path) = output else { return Ok(()) };
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Ok(());
    }
    // Dropped without a commit: the temporary file is deleted.
    Output::open(Some(path)).map(drop)
}

/// Device and inode of the file `path` names (symlinks followed).
#[cfg(unix)]
pub fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
pub fn file_id(path: &Path) -> Option<(u64, u64)> {
    // No inode numbers: compare canonical paths (hard links not caught).
    let canonical = std::fs::canonicalize(path).ok()?;
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    canonical.hash(&mut h);
    Some((0, h.finish()))
}

/// tempfile's errors end with ` at path "<the temporary file>"`: the
/// output's name, before the error, is what the user needs.
fn os_error(e: io::Error) -> io::Error {
    let text = e.to_string();
    match text.rfind(" at path \"") {
        Some(cut) => io::Error::new(e.kind(), &text[..cut]),
        None => e,
    }
}

/// The name of an output in messages.
pub fn output_name(path: Option<&Path>) -> String {
    path.map_or_else(|| "standard output".to_string(), |p| p.display().to_string())
}

/// An output being written: [`Output::commit`] makes it visible (renames
/// the temporary file into place); dropped without a commit, the temporary
/// file is deleted and the target left as it was.
pub struct Output {
    name: String,
    pending: Option<(tempfile::NamedTempFile, PathBuf)>,
}

impl Output {
    /// Opens the output: standard output, an existing file that is not a
    /// regular file (`/dev/null`, a FIFO: written directly, there is
    /// nothing to rename), or a temporary file beside `path`. The writer
    /// is buffered; flush it before [`Output::commit`].
    pub fn open(path: Option<&Path>) -> Result<(Output, Box<dyn Write + Send>), WriteError> {
        let name = output_name(path);
        let fail = |error| WriteError {
            target: name.clone(),
            error,
        };
        let Some(path) = path else {
            let out = BufWriter::with_capacity(1 << 16, io::stdout());
            return Ok((Output { name, pending: None }, Box::new(out)));
        };
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            let file = File::create(path).map_err(fail)?;
            let out = BufWriter::with_capacity(1 << 16, file);
            return Ok((Output { name, pending: None }, Box::new(out)));
        }
        // A symlink to a file: replace the file it points to, not the link.
        let target = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).map_err(fail)?,
            _ => path.to_path_buf(),
        };
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".rdblens-").suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // What `File::create` would make: 0666 less the umask.
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        // tempfile's error names the temporary file: the OS error alone,
        // after the output's name, is what the user needs.
        let temp = builder.tempfile_in(&dir).map_err(|e| fail(os_error(e)))?;
        let file = temp.as_file().try_clone().map_err(fail)?;
        let out = BufWriter::with_capacity(1 << 16, file);
        Ok((
            Output {
                name,
                pending: Some((temp, target)),
            },
            Box::new(out),
        ))
    }

    /// True when nothing written reaches the target before the commit (a
    /// temporary file): the writing may then start over from a fresh
    /// [`Output::open`].
    pub fn can_start_over(&self) -> bool {
        self.pending.is_some()
    }

    /// A write error on this output.
    pub fn error(&self, error: io::Error) -> WriteError {
        WriteError {
            target: self.name.clone(),
            error,
        }
    }

    /// Renames the complete temporary file into place (the writer must have
    /// been flushed). Nothing to do for standard output or a device.
    pub fn commit(self) -> Result<(), WriteError> {
        let Some((temp, target)) = self.pending else {
            return Ok(());
        };
        let name = self.name;
        temp.persist(&target).map(drop).map_err(|e| WriteError {
            target: name,
            error: e.error,
        })
    }
}

/// Writes `bytes` to `path` (or standard output) through an [`Output`]. A
/// closed pipe on standard output means the reader has what it wanted: not
/// an error.
pub fn write_all(path: Option<&Path>, bytes: &[u8]) -> Result<(), WriteError> {
    write_with(path, |w| w.write_all(bytes))
}

/// Writes to `path` (or standard output) through an [`Output`] what `write`
/// writes as it goes, so an output is never held whole in memory. Errors as
/// [`write_all`].
pub fn write_with(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), WriteError> {
    let (output, mut w) = Output::open(path)?;
    match write(&mut w).and_then(|()| w.flush()) {
        Ok(()) => {}
        Err(e) if path.is_none() && is_broken_pipe(&e) => return Ok(()),
        Err(e) => return Err(output.error(e)),
    }
    drop(w);
    output.commit()
}

pub fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// The width of the terminal on standard output; `COLUMNS` when the size
/// cannot be read.
pub fn terminal_width() -> Option<u16> {
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(terminal_size::Width(w), _)| w)
        .or_else(|| std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()))
}

/// The table width: the terminal's when standard output is one (and the
/// output does not go to a file), else none (plain tables).
pub fn stdout_width(to_file: bool) -> Option<u16> {
    (!to_file && io::IsTerminal::is_terminal(&io::stdout())).then(|| terminal_width().unwrap_or(120))
}

/// Writes `text` to `path` (through a temporary file renamed into place),
/// or to standard output (a closed pipe is not an error); a final newline
/// is added when missing.
pub fn write_text(path: Option<&std::path::Path>, text: &str) -> Result<(), WriteError> {
    write_with(path, |w| {
        w.write_all(text.as_bytes())?;
        if text.ends_with('\n') {
            Ok(())
        } else {
            w.write_all(b"\n")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_uncommitted_output_leaves_the_target_alone() {
        let dir = tempfile::tempdir().unwrap(); // ok: unit test
        let target = dir.path().join("out.txt");
        std::fs::write(&target, b"old").unwrap(); // ok: unit test
        let (output, mut w) = Output::open(Some(&target)).unwrap(); // ok: unit test
        w.write_all(b"new, but never committed").unwrap(); // ok: unit test
        w.flush().unwrap(); // ok: unit test
        drop((output, w));
        assert_eq!(std::fs::read(&target).unwrap(), b"old"); // ok: unit test
                                                             // No temporary file left behind either.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1); // ok: unit test
        write_all(Some(&target), b"new").unwrap(); // ok: unit test
        assert_eq!(std::fs::read(&target).unwrap(), b"new"); // ok: unit test
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1); // ok: unit test
    }
}
