//! Opening a dump: a file is mapped. For the analysis ([`open_source`]),
//! standard input (`-`), pipes, FIFOs, process substitution and
//! compressed dumps (gzip, zstd, LZ4 frames, bzip2: by their magic, on
//! files and streams alike) are streams, read once as they arrive, with no
//! copy on disk; so are server URLs (`redis://`: `crate::live`) and
//! object URLs (`s3://`...); so are they for `check`, which reads a dump
//! once in file order ([`open_once`]). `keys` reads one stream as it
//! arrives too where its allocator build is known before the first key
//! (`crate::keys`); else it copies the stream to an anonymous temporary
//! file ([`open_rdb`], [`copy_to_disk`]): the build its first record needs
//! is settled by a pass of its own over the dump, before the walk that
//! writes the records (docs/streaming.md). The header is
//! checked before any work, with a hint when
//! `--skip-unknown` would help (a version newer than any known) and none
//! when it would not.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::os::fd::AsFd;
use std::path::Path;

use anyhow::{anyhow, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rdblens_parser::{ErrorKind, Format, Rdb, RdbFile};

/// How a dump is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Zstd,
    Lz4,
    Bzip2,
}

impl Compression {
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Lz4 => "lz4",
            Compression::Bzip2 => "bzip2",
        }
    }

    /// By the magic: gzip `1f 8b`, zstd `28 b5 2f fd`, an LZ4 frame
    /// `04 22 4d 18`, bzip2 `BZh` and the block size digit.
    pub fn sniff(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Compression::Zstd)
        } else if head.starts_with(&[0x04, 0x22, 0x4d, 0x18]) {
            Some(Compression::Lz4)
        } else if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
            Some(Compression::Bzip2)
        } else {
            None
        }
    }

    /// The bytes `source` decompresses to, every frame or member of it
    /// (`pigz`, `pzstd`, `cat a.gz b.gz` write several).
    fn decoder<'a, R: BufRead + Send + 'a>(self, source: R) -> Box<dyn Read + Send + 'a> {
        match self {
            Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(source)),
            // Every frame: `zstd` writes one, `pzstd` and `cat a.zst b.zst` several.
            Compression::Zstd => match zstd::stream::read::Decoder::with_buffer(source) {
                Ok(decoder) => Box::new(decoder),
                Err(e) => Box::new(FailedRead(Some(e))),
            },
            Compression::Lz4 => Box::new(lz4_flex::frame::FrameDecoder::new(source)),
            Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(source)),
        }
    }
}

/// How a dump was stored.
pub struct Stored {
    pub compression: Option<Compression>,
    /// Why decompression stopped early (a cut or corrupt stream: what came
    /// out before is still read).
    pub damage: Option<String>,
}

/// The name of an input in messages: `standard input` for `-`.
pub fn input_name(path: &Path) -> String {
    // A server URL without its password (`crate::live` would be a circle:
    // it names its inputs with this function).
    if let Some(server) = path.to_str().filter(|t| rdblens_live::is_server_url(t)) {
        return rdblens_live::url::display_name(server);
    }
    if path == Path::new("-") {
        "standard input".to_string()
    } else {
        path.display().to_string()
    }
}

/// Refuses inputs that cannot be read as given: standard input (`-`) twice
/// (it can be read once), or one file twice (by device and inode: its keys
/// would be counted twice). A usage error, before anything is read.
pub fn refuse_repeated_inputs(paths: &[std::path::PathBuf]) -> Result<()> {
    let stdin = Path::new("-");
    if paths.iter().filter(|p| *p == stdin).count() > 1 {
        anyhow::bail!("standard input (-) is given more than once: it can be read only once");
    }
    let mut seen: Vec<((u64, u64), &Path)> = Vec::new();
    for p in paths.iter().filter(|p| *p != stdin) {
        let Some(id) = crate::output::file_id(p) else {
            continue;
        };
        if let Some((_, first)) = seen.iter().find(|(i, _)| *i == id) {
            anyhow::bail!(
                "{} and {} are the same file: its keys would be counted twice",
                first.display(),
                p.display()
            );
        }
        seen.push((id, p));
    }
    Ok(())
}

/// Opens `path` and checks its header. If a compressed stream is damaged,
/// a line on standard error says so and what it decompressed to is read
/// (the RDB walk then finds where it ends). Errors name the file: `NAME:
/// cannot open: ...`, `NAME: not an RDB file: ...`. `quiet` hides the
/// byte counter drawn while a stream is received.
pub fn open_rdb(path: &Path, skip_unknown: bool, quiet: bool) -> Result<RdbFile> {
    let name = input_name(path);
    let (file, stored) = open_input(path, quiet).with_context(|| format!("{name}: cannot open"))?;
    if let (Some(c), Some(why)) = (stored.compression, &stored.damage) {
        eprintln!("rdblens: {name}: {}", damage_message(c, why, file.len()));
    }
    read_header(file.bytes(), skip_unknown).with_context(|| match stored.compression {
        Some(c) => format!("{name} (decompressed from {})", c.name()),
        None => name.clone(),
    })?;
    Ok(file)
}

/// The message for a compressed stream that stops early.
pub fn damage_message(c: Compression, why: &str, decompressed: usize) -> String {
    format!(
        "the {} stream is damaged or cut short after {decompressed} decompressed bytes ({why}): reading those",
        c.name()
    )
}

/// Maps `path`. Standard input (`-`) and anything that is not a regular
/// file (a pipe, FIFO, `<(...)`) is copied to an anonymous temporary file
/// first, and compressed input (gzip, zstd) is decompressed into one;
/// nothing is sized from a header: the bytes are streamed as they come.
pub fn open_input(path: &Path, quiet: bool) -> io::Result<(RdbFile, Stored)> {
    let name = input_name(path);
    let (source, streamed) = match raw_source(path, quiet)? {
        Raw::Mapped(map) => {
            let stored = Stored {
                compression: None,
                damage: None,
            };
            return Ok((map, stored));
        }
        Raw::Stream { source, streamed, .. } => (source, streamed),
    };
    let counter = ReceivedBytes::new(&name, streamed && !quiet);
    let mut source = BufReader::with_capacity(1 << 20, counter.wrap(source));
    let compression = Compression::sniff(source.fill_buf()?);
    let mut out = tempfile::tempfile()?;
    let mut w = BufWriter::with_capacity(1 << 20, &mut out);
    // What decompressed before an error is kept: a dump cut short still
    // gets a report of its sound part. A plain stream that fails to read
    // is an error, though (nothing was damaged: the source went away).
    let damage = match compression {
        None => match spool(&mut source, &mut w, spool_error)? {
            Some(e) => return Err(e),
            None => None,
        },
        Some(c) => spool(&mut c.decoder(source), &mut w, spool_error)?,
    }
    .map(|e| e.to_string());
    w.flush().map_err(spool_error)?;
    drop(w);
    drop(counter);
    let stored = Stored { compression, damage };
    Ok((RdbFile::from_file(out)?, stored))
}

/// Where a dump's bytes come from before any decompression.
enum Raw {
    /// A regular file that is not compressed: mapped.
    Mapped(RdbFile),
    /// Standard input, a pipe, a FIFO (`streamed`), a compressed file or
    /// an object in a store (`size`: known before it is read, shown by a
    /// bar), a server's snapshot.
    Stream {
        source: Box<dyn Read + Send>,
        streamed: bool,
        size: Option<u64>,
        /// The bytes `source` will give, when declared before they are read
        /// (a file's or object's size, a replication body's `$<len>`):
        /// the dump's length unless it is compressed.
        declared: Option<u64>,
    },
}

fn raw_source(path: &Path, quiet: bool) -> io::Result<Raw> {
    if let Some(url) = object_url(path) {
        return open_object(url);
    }
    if let Some((source, declared)) = crate::live::live_source(path, quiet)? {
        return Ok(Raw::Stream {
            source,
            streamed: true,
            size: None,
            declared,
        });
    }
    if path == Path::new("-") {
        widen_pipe(io::stdin().as_fd());
        let source = Box::new(io::stdin());
        return Ok(Raw::Stream {
            source,
            streamed: true,
            size: None,
            declared: None,
        });
    }
    let file = File::open(path)?;
    let regular = file.metadata()?.is_file();
    if !regular {
        widen_pipe(file.as_fd());
        let source = Box::new(file);
        return Ok(Raw::Stream {
            source,
            streamed: true,
            size: None,
            declared: None,
        });
    }
    let mut head = [0u8; 4];
    let got = read_up_to(&file, &mut head)?;
    if Compression::sniff(&head[..got]).is_none() {
        let map = RdbFile::from_file(file)?;
        crate::mapguard::watch(map.bytes(), &input_name(path));
        shrink_for_test(path);
        return Ok(Raw::Mapped(map));
    }
    let size = file.metadata()?.len();
    let source = Box::new(File::open(path)?);
    Ok(Raw::Stream {
        source,
        streamed: false,
        size: Some(size),
        declared: Some(size),
    })
}

/// Bytes a pipe read as a stream holds at most ([`widen_pipe`]): the most
/// an unprivileged process may set by default (`/proc/sys/fs/pipe-max-size`).
const PIPE_BYTES: usize = 1 << 20;

/// Widens the pipe `fd` is (standard input, a FIFO, `<(...)`) from the
/// kernel's 64 KiB to [`PIPE_BYTES`], so that the writer (`cat`, a
/// decompressor, `ssh`) and the report trade the bytes in far fewer turns:
/// through `cat`, a 315 MB dump crossed a 64 KiB pipe in 0.27 s and a
/// 1 MiB one in 0.17 s. Best effort: anything but a pipe, or a user over
/// the kernel's limit on pipe memory, keeps what it has.
fn widen_pipe(fd: std::os::fd::BorrowedFd<'_>) {
    #[cfg(target_os = "linux")]
    {
        let _ = rustix::pipe::fcntl_setpipe_size(fd, PIPE_BYTES);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// The object URL `path` is, if it is one (`s3://`, `gs://`, `az://`,
/// `abfs://`, `https://`: see docs/object-storage.md); anything else is a
/// local path. Other kinds of remote input are told apart here too.
pub fn object_url(path: &Path) -> Option<&str> {
    path.to_str().filter(|p| rdblens_objects::is_object_url(p))
}

/// An object in a store, streamed: the GET has been answered when this
/// returns (a missing object or refused credentials fail here).
fn open_object(url: &str) -> io::Result<Raw> {
    let objects = rdblens_objects::Objects::shared().map_err(io::Error::other)?;
    let mut found = objects.resolve(url).map_err(io::Error::other)?;
    let (Some(object), None) = (found.pop(), found.pop()) else {
        // `expand_objects` has turned prefixes and globs into their objects.
        return Err(io::Error::other(format!("{url} names several objects")));
    };
    let reader = objects.open(&object).map_err(io::Error::other)?;
    let size = Some(reader.size());
    Ok(Raw::Stream {
        source: Box::new(reader),
        streamed: true,
        size,
        declared: size,
    })
}

/// The inputs with every object prefix or glob (`s3://b/backups/`,
/// `s3://b/p/*.rdb.gz`) replaced by the URLs of the objects under it,
/// sorted by key; local paths and single objects as given.
pub fn expand_objects(inputs: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>> {
    let mut expanded = Vec::with_capacity(inputs.len());
    for input in inputs {
        let Some(url) = object_url(input) else {
            expanded.push(input.clone());
            continue;
        };
        let location = rdblens_objects::Location::parse(url).with_context(|| url.to_string())?;
        if matches!(location.selection, rdblens_objects::Selection::Object(_)) {
            expanded.push(input.clone());
            continue;
        }
        let objects = rdblens_objects::Objects::shared()?;
        let found = objects.resolve(url).with_context(|| url.to_string())?;
        expanded.extend(found.into_iter().map(|o| o.url.into()));
    }
    Ok(expanded)
}

/// Opens `path` for the analysis and checks its header: a regular file is
/// mapped, anything else (standard input, a pipe, a FIFO, a compressed
/// file) is a stream the analysis reads once as it arrives, decompressed
/// on the way, with nothing written to disk. Errors as [`open_rdb`]'s; a
/// compressed stream that is damaged says so on standard error when it
/// happens, and what it decompressed to before is analysed.
pub fn open_source(path: &Path, skip_unknown: bool, quiet: bool) -> Result<rdblens_engine::Input> {
    let name = input_name(path);
    let (source, size, declared) =
        match raw_source(path, quiet).with_context(|| format!("{name}: cannot open"))? {
            Raw::Mapped(map) => {
                read_header(map.bytes(), skip_unknown).with_context(|| name.clone())?;
                return Ok(rdblens_engine::Input::Mapped(map));
            }
            Raw::Stream {
                source,
                size,
                declared,
                ..
            } => (source, size, declared),
        };
    let source = match size {
        // A compressed file or an object: a bar over its size, as a
        // mapped file has.
        Some(size) => {
            let show = crate::progress::should_show(quiet, io::stderr().is_terminal(), size);
            Receiving::sized(source, size, show)
        }
        None => Receiving::new(source, &name, !quiet),
    };
    let mut source = BufReader::with_capacity(1 << 20, source);
    let compression = Compression::sniff(
        source
            .fill_buf()
            .with_context(|| format!("{name}: cannot open"))?,
    );
    let mut decoded: Box<dyn Read + Send> = match compression {
        None => Box::new(source),
        Some(c) => Box::new(Decompressed {
            inner: c.decoder(source),
            compression: c,
            name: name.clone(),
            out: 0,
            kept: None,
        }),
    };
    // The magic, and enough to tell a Valkey compressed file by.
    let mut magic = Vec::with_capacity(64);
    (&mut decoded)
        .take(64)
        .read_to_end(&mut magic)
        .with_context(|| format!("{name}: cannot open"))?;
    read_header(&magic, skip_unknown).with_context(|| match compression {
        Some(c) => format!("{name} (decompressed from {})", c.name()),
        None => name.clone(),
    })?;
    let stream = io::Cursor::new(magic).chain(decoded);
    Ok(rdblens_engine::Input::Stream {
        source: Box::new(stream),
        // A compressed dump's length is known only at its end.
        size: declared.filter(|_| compression.is_none()),
    })
}

/// A dump opened for one pass in file order (`check`).
pub enum OnePass {
    /// A regular file that is not compressed: mapped.
    Mapped(RdbFile),
    /// Anything else, read once as it arrives, its header checked: the
    /// magic and the first bytes are read again from `source`.
    Stream {
        source: Box<dyn Read + Send>,
        compression: Option<Compression>,
        /// Why decompression stopped early, and after how many
        /// decompressed bytes, once it has (set while `source` is read).
        damage: DamageCell,
    },
}

/// Where a decompressor that stops early keeps why (see [`OnePass`]).
pub type DamageCell = std::sync::Arc<std::sync::Mutex<Option<(String, usize)>>>;

/// Opens `path` to be read once in file order: a regular uncompressed
/// file is mapped; standard input, a pipe, a FIFO or a compressed file is
/// a stream (decompressed as it comes), with nothing written to disk.
/// The header is checked as by [`read_header`] (the error names no file).
/// `quiet` hides the byte counter drawn while a stream is received.
pub fn open_once(path: &Path, skip_unknown: bool, quiet: bool) -> Result<OnePass> {
    let name = input_name(path);
    let (source, size) = match raw_source(path, quiet).context("cannot open")? {
        Raw::Mapped(map) => return Ok(OnePass::Mapped(map)),
        Raw::Stream { source, size, .. } => (source, size),
    };
    let source = match size {
        // A compressed file or an object: a bar over its size.
        Some(size) => {
            let show = crate::progress::should_show(quiet, io::stderr().is_terminal(), size);
            Receiving::sized(source, size, show)
        }
        None => Receiving::new(source, &name, !quiet),
    };
    let mut source = BufReader::with_capacity(1 << 20, source);
    let compression = Compression::sniff(source.fill_buf().context("cannot open")?);
    let damage = DamageCell::default();
    let mut decoded: Box<dyn Read + Send> = match compression {
        None => Box::new(source),
        Some(c) => Box::new(Decompressed {
            inner: c.decoder(source),
            compression: c,
            name,
            out: 0,
            kept: Some(damage.clone()),
        }),
    };
    let mut magic = Vec::with_capacity(64);
    (&mut decoded)
        .take(64)
        .read_to_end(&mut magic)
        .context("cannot open")?;
    read_header(&magic, skip_unknown)?;
    Ok(OnePass::Stream {
        source: Box::new(io::Cursor::new(magic).chain(decoded)),
        compression,
        damage,
    })
}

/// A decompressor whose first error ends its stream: a line on standard
/// error says where (after how many decompressed bytes) and why, or
/// `kept` keeps it for the caller to say; what came before is read, as
/// of a stream cut there.
struct Decompressed<'a> {
    inner: Box<dyn Read + Send + 'a>,
    compression: Compression,
    name: String,
    /// Decompressed bytes given out so far.
    out: usize,
    kept: Option<DamageCell>,
}

impl Read for Decompressed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.inner.read(buf) {
                Ok(n) => {
                    self.out += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    match &self.kept {
                        Some(cell) => {
                            if let Ok(mut kept) = cell.lock() {
                                *kept = Some((e.to_string(), self.out));
                            }
                        }
                        None => eprintln!(
                            "rdblens: {}: {}",
                            self.name,
                            damage_message(self.compression, &e.to_string(), self.out)
                        ),
                    }
                    self.inner = Box::new(io::empty());
                    return Ok(0);
                }
            }
        }
    }
}

/// Copies the dump `source` gives (decompressed already) to an anonymous
/// temporary file and maps it: `keys` on a stream whose allocator build
/// needs the whole dump's evidence before its first record. A read error
/// is an error (the source went away).
pub fn copy_to_disk(source: &mut dyn Read) -> io::Result<RdbFile> {
    // What a user short of disk can do instead.
    let hint = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!(
                "cannot copy it to {} for a pass that settles the allocator build before the first \
                 record (pass --jemalloc-quantum 8 or 16 to read it as it arrives, with no copy; or set \
                 TMPDIR to a larger file system): {e}",
                std::env::temp_dir().display()
            ),
        )
    };
    let mut out = tempfile::tempfile().map_err(hint)?;
    let mut w = BufWriter::with_capacity(1 << 20, &mut out);
    if let Some(e) = spool(&mut &mut *source, &mut w, hint)? {
        return Err(e);
    }
    w.flush().map_err(hint)?;
    drop(w);
    RdbFile::from_file(out)
}

/// Copies `from` into the temporary file `to`: `Ok(Some(e))` when reading
/// stopped on an error (what came before is written), `Err` when the
/// temporary file could not be written (a full disk).
fn spool(
    from: &mut impl Read,
    to: &mut impl Write,
    write_error: impl Fn(io::Error) -> io::Error,
) -> io::Result<Option<io::Error>> {
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(None),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Ok(Some(e)),
        };
        to.write_all(&buf[..n]).map_err(&write_error)?;
    }
}

fn spool_error(e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!(
            "cannot write its temporary copy in {} (set TMPDIR to a larger file system): {e}",
            std::env::temp_dir().display()
        ),
    )
}

/// A source whose first read fails with the error that kept it from
/// being opened (a decompressor that could not start), then ends.
struct FailedRead(Option<io::Error>);

impl Read for FailedRead {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }
}

/// Reads up to `buf.len()` bytes (fewer at the end of the file).
fn read_up_to(mut file: &File, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// A stream whose bytes received are counted on standard error while
/// they come (when it is a terminal): bytes, rate and time elapsed (a
/// stream has no size to show a bar against); cleared when dropped.
struct Receiving<R> {
    inner: R,
    bar: Option<ProgressBar>,
}

impl<R: Read> Receiving<R> {
    fn new(inner: R, name: &str, show: bool) -> Self {
        Receiving {
            inner,
            bar: ReceivedBytes::new(name, show).bar.take(),
        }
    }
}

impl<R: Read> Receiving<R> {
    /// A bar over the `size` bytes of a compressed file, with its rate
    /// and the time left, when `show`.
    fn sized(inner: R, size: u64, show: bool) -> Self {
        let bar = show.then(|| {
            let style = ProgressStyle::with_template(crate::progress::TEMPLATE)
                .unwrap_or_else(|_| ProgressStyle::default_bar());
            ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::stderr()).with_style(style)
        });
        Receiving { inner, bar }
    }
}

impl<R: Read> Read for Receiving<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(bar) = &self.bar {
            bar.inc(n as u64);
        }
        Ok(n)
    }
}

impl<R> Drop for Receiving<R> {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The count of bytes received from a stream, drawn on standard error
/// while they come (when it is a terminal): a stream has no size to show
/// a bar against.
struct ReceivedBytes {
    bar: Option<ProgressBar>,
}

impl ReceivedBytes {
    fn new(name: &str, show: bool) -> Self {
        let bar = (show && io::stderr().is_terminal()).then(|| {
            let style = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] receiving {msg}: {bytes} ({binary_bytes_per_sec})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(style);
            bar.set_message(name.to_string());
            // Drawn on a timer, not only as bytes come: a writer that stalls
            // shows as the time going on while the count stands still.
            bar.enable_steady_tick(std::time::Duration::from_millis(250));
            bar
        });
        ReceivedBytes { bar }
    }

    fn wrap<'a>(&self, source: Box<dyn Read + Send + 'a>) -> Box<dyn Read + Send + 'a> {
        match &self.bar {
            Some(bar) => Box::new(bar.wrap_read(source)),
            None => source,
        }
    }
}

impl Drop for ReceivedBytes {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
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

/// Whether `head` (a file's first bytes) is a Valkey compressed RDB file
/// rather than an RDB file: Valkey's `rdbcompression lz4` writes a short
/// envelope (`VCS`, Valkey Compressed Stream) and then the dump as one LZ4
/// frame (valkey-io/valkey pull request 3531). Without the envelope's
/// published layout, it is told by what it can be: no RDB magic, and the
/// bytes `VCS` at the start or an LZ4 frame's magic within the first 64
/// bytes (a plain `.lz4` file starts with that magic and is decompressed
/// before this is asked).
pub fn looks_like_valkey_compressed(head: &[u8]) -> bool {
    let rdb_magic = head.starts_with(b"REDIS") || head.starts_with(b"VALKEY");
    let lz4_frame = [0x04, 0x22, 0x4d, 0x18];
    let head = &head[..head.len().min(64)];
    !rdb_magic && (head.starts_with(b"VCS") || head.windows(4).skip(1).any(|w| w == lz4_frame))
}

/// Reads the magic. A version newer than any known gets a hint to
/// `--skip-unknown`; other versions (too old, or in the gap Valkey
/// reserves) get none, since nothing could read them.
pub fn read_header(bytes: &[u8], skip_unknown: bool) -> Result<Rdb<'_>> {
    if looks_like_valkey_compressed(bytes) {
        anyhow::bail!(
            "a Valkey compressed RDB file (saved with `rdbcompression lz4`: an envelope around one LZ4 \
             frame, Valkey 9.2+), which rdblens cannot read: decompress it with `valkey-check-rdb`, or have \
             the server save with `rdbcompression yes`"
        );
    }
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

    /// A Valkey `rdbcompression lz4` file is refused by name with what to
    /// do, never read as a damaged RDB file; RDB files and plain LZ4 files
    /// are not taken for one.
    #[test]
    fn a_valkey_compressed_file_is_refused_by_name() {
        let lz4 = [0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7];
        for head in [
            [&b"VCS\x01\x01"[..], &lz4].concat(),
            [&b"VKC\x00\x01\x00\x00\x00"[..], &lz4].concat(),
        ] {
            let err = format!("{:#}", read_header(&head, false).unwrap_err());
            assert!(
                err.starts_with("a Valkey compressed RDB file (saved with `rdbcompression lz4`"),
                "{err}"
            );
            assert!(
                err.contains("valkey-check-rdb") && err.contains("rdbcompression yes"),
                "{err}"
            );
        }
        assert!(!looks_like_valkey_compressed(&lz4));
        assert!(!looks_like_valkey_compressed(b"REDIS0011\xfa\x04\x22\x4d\x18"));
        assert!(!looks_like_valkey_compressed(b"hello\n"));
    }

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

    /// A pipe read as a stream is widened to 1 MiB (from the kernel's
    /// 64 KiB); a regular file is left as it is, with no error.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_pipe_read_as_a_stream_is_widened() {
        let (reader, _writer) = rustix::pipe::pipe().unwrap(); // ok: unit test
        assert_eq!(rustix::pipe::fcntl_getpipe_size(&reader).unwrap(), 64 << 10); // ok: unit test
        widen_pipe(reader.as_fd());
        assert_eq!(rustix::pipe::fcntl_getpipe_size(&reader).unwrap(), PIPE_BYTES); // ok: unit test
        let file = tempfile::tempfile().unwrap(); // ok: unit test
        widen_pipe(file.as_fd());
    }
}
