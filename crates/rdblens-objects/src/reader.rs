//! An object's bytes as a blocking `Read`: a task on the client's runtime
//! GETs the object and sends its body, chunk by chunk, through a bounded
//! channel; the reader's thread takes them as the analysis asks.
//!
//! From an object store (not a plain HTTP URL), an object of more than two
//! parts can be read in parts at once: the first GET's body up to the end
//! of its first part, then ranged GETs of [`Reading::part_bytes`] each,
//! [`Reading::parts_in_flight`] of them at a time, handed on in order. One
//! connection's speed is the store's to set (on S3 about 100 MB/s, less
//! than the analysis reads). But parts cost a copy of every byte and the
//! store's work on more connections at once, which on a machine that
//! serves the object itself takes cores from the analysis (a 300 MB
//! object from a loopback `s3s-fs`: 1.2x the time of one GET). So by
//! default ([`Parts::WhenTheConnectionIsSlower`]) the first GET goes on
//! unless, over its first part, the reader waited for the connection
//! longer than the connection waited for the reader (docs/object-storage.md).
//!
//! A body that stops short (a reset, a timeout, an error from the server)
//! is asked again from the byte after the last one received, with the same
//! entity tag, after a pause that doubles.

use std::future::Future;
use std::io::{self, Read};
use std::ops::Range;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use futures_util::StreamExt;
use object_store::{GetOptions, GetRange, GetResult};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::{Error, Notify, Object};

/// Chunks on their way to the reader: the body as the HTTP client hands
/// it over (up to a few hundred KiB each), so a few MiB per object at most.
const CHUNKS_IN_FLIGHT: usize = 16;

/// A part is handed on in slices of this size, so the chunks in the
/// channel hold at most two parts alive.
const PART_SLICE: usize = 512 * 1024;

/// Resumptions in a row without a byte received in between before the
/// read fails (a connection that makes progress is resumed every time).
const MAX_RESUMES: u32 = 8;

/// When an object is read in parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parts {
    /// One GET for the whole object.
    Never,
    /// From the end of the first part on.
    Always,
    /// When, over the first part, the first GET kept the reader waiting
    /// longer than the reader kept it: the connection, not the analysis,
    /// sets the pace.
    WhenTheConnectionIsSlower,
}

/// How objects are read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reading {
    /// Whether objects are read in parts.
    pub parts: Parts,
    /// The pause before the first resumption (doubled for each in a row).
    pub first_pause: Duration,
    /// Bytes a ranged GET of a part asks for. S3's guidance for ranged
    /// reads is 8-16 MB; memory is this times the parts in flight, and two
    /// more in the channel, per object.
    pub part_bytes: u64,
    /// Parts asked for at once (1: the object in one GET).
    pub parts_in_flight: usize,
}

impl Reading {
    /// The reading `RDBLENS_OBJECT_PARTS` asks for: `auto` (the default),
    /// `1` (one GET), or the number of parts at once (always in parts).
    pub(crate) fn from_setting(setting: Option<&str>) -> Result<Reading, String> {
        let auto = Reading::default();
        match setting.map(str::trim) {
            None | Some("auto") => Ok(auto),
            Some(n) => match n.parse::<usize>() {
                Ok(0 | 1) => Ok(Reading {
                    parts: Parts::Never,
                    ..auto
                }),
                Ok(n) if n <= 64 => Ok(Reading {
                    parts: Parts::Always,
                    parts_in_flight: n,
                    ..auto
                }),
                _ => Err(format!(
                    "RDBLENS_OBJECT_PARTS is `{n}`: give `auto`, `1` (one GET per object) or the parts to read at once (2 to 64)"
                )),
            },
        }
    }
}

impl Default for Reading {
    fn default() -> Self {
        Reading {
            parts: Parts::WhenTheConnectionIsSlower,
            first_pause: Duration::from_millis(200),
            part_bytes: 8 << 20,
            parts_in_flight: 4,
        }
    }
}

/// The bytes of one object, as they arrive.
pub struct ObjectReader {
    chunks: mpsc::Receiver<io::Result<Bytes>>,
    current: Bytes,
    size: u64,
}

impl ObjectReader {
    /// The object's size, from the store's answer.
    pub fn size(&self) -> u64 {
        self.size
    }
}

impl Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.chunks.blocking_recv() {
                Some(Ok(chunk)) => self.current = chunk,
                Some(Err(e)) => return Err(e),
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current[..n]);
        self.current.advance(n);
        Ok(n)
    }
}

pub(crate) fn open(
    runtime: &tokio::runtime::Runtime,
    object: &Object,
    notify: Notify,
    reading: Reading,
) -> Result<ObjectReader, Error> {
    let (first_tx, first_rx) = oneshot::channel();
    let (chunks_tx, chunks) = mpsc::channel(CHUNKS_IN_FLIGHT);
    runtime.spawn(pump(object.clone(), first_tx, chunks_tx, notify, reading));
    let lost = || {
        Error::Runtime(io::Error::other(
            "the download task ended before the store answered",
        ))
    };
    let size = first_rx.blocking_recv().map_err(|_| lost())??;
    Ok(ObjectReader {
        chunks,
        current: Bytes::new(),
        size,
    })
}

/// GETs `object` and sends its body to `chunks`; the first answer (the
/// size, or why there is none) goes to `first`. Ends when the body is
/// whole, on an error that resuming cannot mend, or when the reader is gone.
async fn pump(
    object: Object,
    first: oneshot::Sender<Result<u64, Error>>,
    chunks: mpsc::Sender<io::Result<Bytes>>,
    notify: Notify,
    reading: Reading,
) {
    let answer = match object.store.get_opts(&object.path, GetOptions::default()).await {
        Ok(answer) => answer,
        Err(e) => {
            // Nothing was received: the store's own retries are spent.
            let _ = first.send(Err(Error::of(&object.url, e)));
            return;
        }
    };
    let (size, etag) = (answer.meta.size, answer.meta.e_tag.clone());
    if first.send(Ok(size)).is_err() {
        return;
    }
    let parted = reading.parts != Parts::Never && object.in_parts && size > 2 * reading.part_bytes;
    let get = Get {
        object,
        etag,
        size,
        notify,
        first_pause: reading.first_pause,
    };
    let mut to_channel = Sink::Channel(&chunks);
    let switch = parted.then_some((reading.part_bytes, reading.parts));
    let from = match get.range(0..size, Some(answer), &mut to_channel, switch).await {
        Ok(Ended::InPartsFrom(offset)) => offset,
        Ok(_) => return, // whole, or the reader is gone
        Err(why) => {
            let _ = chunks.send(Err(io::Error::other(why))).await;
            return;
        }
    };
    let starts = (from..size).step_by(reading.part_bytes as usize);
    let mut parts = futures_util::stream::iter(starts)
        .map(|start| {
            let range = start..(start + reading.part_bytes).min(size);
            let get = get.clone();
            // Spawned, so that the parts download while the reader takes
            // the one before; aborted when the reader is gone.
            Aborting(tokio::spawn(async move { get.part(range).await }))
        })
        .buffered(reading.parts_in_flight);
    while let Some(part) = parts.next().await {
        let part = part.unwrap_or_else(|e| Err(format!("a part's download task failed: {e}")));
        let sent = match part {
            Ok(bytes) => send_in_slices(&chunks, bytes).await,
            Err(why) => {
                let _ = chunks.send(Err(io::Error::other(why))).await;
                return;
            }
        };
        if !sent {
            return; // the reader is gone
        }
    }
}

/// Sends `bytes` in slices of [`PART_SLICE`]; false when the reader is gone.
async fn send_in_slices(chunks: &mpsc::Sender<io::Result<Bytes>>, mut bytes: Bytes) -> bool {
    while !bytes.is_empty() {
        let slice = bytes.split_to(bytes.len().min(PART_SLICE));
        if chunks.send(Ok(slice)).await.is_err() {
            return false;
        }
    }
    true
}

/// A spawned task that is aborted when dropped (a download nobody waits for).
struct Aborting<T>(JoinHandle<T>);

impl<T> Drop for Aborting<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<T> Future for Aborting<T> {
    type Output = Result<T, tokio::task::JoinError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

/// Where a range's bytes go: on to the reader, or into a part's buffer.
enum Sink<'a> {
    Channel(&'a mpsc::Sender<io::Result<Bytes>>),
    Buffer(BytesMut),
}

impl Sink<'_> {
    /// False when the reader is gone.
    async fn put(&mut self, chunk: Bytes) -> bool {
        match self {
            Sink::Channel(chunks) => chunks.send(Ok(chunk)).await.is_ok(),
            Sink::Buffer(buffer) => {
                buffer.extend_from_slice(&chunk);
                true
            }
        }
    }
}

/// How reading a range ended.
enum Ended {
    /// Every byte of it was handed on.
    Whole,
    /// The reader is gone.
    ReaderGone,
    /// The bytes before this offset were handed on; the rest is to be read in parts.
    InPartsFrom(u64),
}

/// The GETs of one object's bytes, with the entity tag of its first answer.
#[derive(Clone)]
struct Get {
    object: Object,
    etag: Option<String>,
    size: u64,
    notify: Notify,
    first_pause: Duration,
}

impl Get {
    /// Reads `range` into `sink`, from `answer` (the first GET's, which
    /// starts at byte 0) when given, resuming from the byte after the last
    /// one received. With `switch` (a part's size and when to switch), at
    /// that byte it may end, for the rest to be read in parts.
    async fn range(
        &self,
        range: Range<u64>,
        mut answer: Option<GetResult>,
        sink: &mut Sink<'_>,
        mut switch: Option<(u64, Parts)>,
    ) -> Result<Ended, String> {
        let (url, size) = (&self.object.url, self.size);
        let whole = range == (0..size);
        let mut offset = range.start;
        let mut resumes = 0u32;
        // Time spent waiting for the connection, and for the reader.
        let (mut waiting_for_bytes, mut waiting_for_reader) = (Duration::ZERO, Duration::ZERO);
        loop {
            let result = match answer.take() {
                Some(answer) => Ok(answer),
                None => {
                    let asked = if whole {
                        GetRange::Offset(offset)
                    } else {
                        GetRange::Bounded(offset..range.end)
                    };
                    let options = GetOptions {
                        range: Some(asked),
                        if_match: self.etag.clone(),
                        ..GetOptions::default()
                    };
                    self.object.store.get_opts(&self.object.path, options).await
                }
            };
            let failure = match result {
                Ok(result) if result.meta.e_tag != self.etag => {
                    return Err("the object changed while it was read (its entity tag is another)".into());
                }
                Ok(result) => {
                    let mut body = result.into_stream();
                    let mut failure = None;
                    loop {
                        let asked = Instant::now();
                        let Some(chunk) = body.next().await else { break };
                        waiting_for_bytes += asked.elapsed();
                        let mut chunk = match chunk {
                            // An empty chunk is no progress.
                            Ok(chunk) if chunk.is_empty() => continue,
                            Ok(chunk) => chunk,
                            Err(e) => {
                                failure = Some(Error::of(url, e));
                                break;
                            }
                        };
                        resumes = 0;
                        // The part of the chunk past the switching point,
                        // kept aside until it is known whether to switch.
                        let after = switch
                            .map(|(at, _)| at.saturating_sub(offset) as usize)
                            .filter(|&before| before < chunk.len())
                            .map(|before| chunk.split_off(before));
                        let put = Instant::now();
                        offset += chunk.len() as u64;
                        if !sink.put(chunk).await {
                            return Ok(Ended::ReaderGone);
                        }
                        waiting_for_reader += put.elapsed();
                        if let Some((at, parts)) = switch.filter(|&(at, _)| offset >= at) {
                            let slower = waiting_for_bytes > waiting_for_reader;
                            if parts == Parts::Always || (parts == Parts::WhenTheConnectionIsSlower && slower)
                            {
                                return Ok(Ended::InPartsFrom(at));
                            }
                            switch = None;
                            if let Some(after) = after {
                                offset += after.len() as u64;
                                if !sink.put(after).await {
                                    return Ok(Ended::ReaderGone);
                                }
                            }
                        }
                        if offset >= range.end {
                            return Ok(Ended::Whole);
                        }
                    }
                    match failure {
                        Some(failure) => failure,
                        None if offset >= range.end => return Ok(Ended::Whole),
                        None => Error::Store {
                            url: url.clone(),
                            error: object_store::Error::Generic {
                                store: "HTTP",
                                source: format!("the body ended after {offset} of {size} bytes").into(),
                            },
                        },
                    }
                }
                Err(e) => Error::of(url, e),
            };
            let resumable = matches!(failure, Error::Store { .. });
            if !resumable || resumes >= MAX_RESUMES {
                return Err(format!("{failure} (after {offset} of {size} bytes)"));
            }
            resumes += 1;
            let pause = self.first_pause * (1 << (resumes - 1).min(6));
            (self.notify)(&format!(
                "{url}: {failure}; resuming from byte {offset} of {size} in {:.1} s (attempt {resumes} of {MAX_RESUMES})",
                pause.as_secs_f64()
            ));
            tokio::time::sleep(pause).await;
        }
    }

    /// The bytes of `range`, whole.
    async fn part(self, range: Range<u64>) -> Result<Bytes, String> {
        let mut sink = Sink::Buffer(BytesMut::with_capacity((range.end - range.start) as usize));
        self.range(range, None, &mut sink, None).await?;
        Ok(match sink {
            Sink::Buffer(bytes) => bytes.freeze(),
            Sink::Channel(_) => Bytes::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    use async_trait::async_trait;
    use futures_util::stream::{self, BoxStream};
    use object_store::memory::InMemory;
    use object_store::path::Path;
    use object_store::{
        CopyOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
        ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult,
    };

    use super::*;
    use crate::Objects;

    /// An in-memory store whose answers are cut after the given numbers
    /// of bytes, one per GET, as a reset connection would cut them.
    #[derive(Debug)]
    struct Cutting {
        inner: InMemory,
        cuts: Mutex<VecDeque<usize>>,
        ranges: Mutex<Vec<Option<GetRange>>>,
        /// Bodies in chunks of this many bytes, each after this pause (an
        /// uncut answer only).
        pace: Option<(usize, Duration)>,
    }

    impl std::fmt::Display for Cutting {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Cutting")
        }
    }

    #[async_trait]
    impl ObjectStore for Cutting {
        async fn put_opts(&self, l: &Path, p: PutPayload, o: PutOptions) -> object_store::Result<PutResult> {
            self.inner.put_opts(l, p, o).await
        }
        async fn put_multipart_opts(
            &self,
            l: &Path,
            o: PutMultipartOptions,
        ) -> object_store::Result<Box<dyn MultipartUpload>> {
            self.inner.put_multipart_opts(l, o).await
        }
        async fn get_opts(&self, l: &Path, options: GetOptions) -> object_store::Result<GetResult> {
            self.ranges.lock().unwrap().push(options.range.clone()); // ok: unit test
            let result = self.inner.get_opts(l, options).await?;
            let cut = self.cuts.lock().unwrap().pop_front(); // ok: unit test
            if cut.is_none() && self.pace.is_none() {
                return Ok(result);
            }
            let (meta, range, attributes, extensions) = (
                result.meta.clone(),
                result.range.clone(),
                result.attributes.clone(),
                result.extensions.clone(),
            );
            let body = result.bytes().await?;
            let payload = match (cut, self.pace) {
                // Cut after `cut` bytes, as a reset connection cuts it.
                (Some(cut), _) => {
                    let head = body.slice(..cut.min(body.len()));
                    let reset = object_store::Error::Generic {
                        store: "Cutting",
                        source: "connection reset by peer".into(),
                    };
                    stream::iter([Ok(head), Err(reset)]).boxed()
                }
                // Whole, in chunks of `size`, each after `pause`.
                (None, pace) => {
                    let (size, pause) = pace.unwrap_or((body.len().max(1), Duration::ZERO));
                    let chunks: Vec<Bytes> = body.chunks(size).map(Bytes::copy_from_slice).collect();
                    stream::iter(chunks)
                        .then(move |chunk| async move {
                            if !pause.is_zero() {
                                tokio::time::sleep(pause).await;
                            }
                            Ok(chunk)
                        })
                        .boxed()
                }
            };
            Ok(GetResult {
                payload: GetResultPayload::Stream(payload),
                meta,
                range,
                attributes,
                extensions,
            })
        }
        fn delete_stream(
            &self,
            l: BoxStream<'static, object_store::Result<Path>>,
        ) -> BoxStream<'static, object_store::Result<Path>> {
            self.inner.delete_stream(l)
        }
        fn list(&self, p: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
            self.inner.list(p)
        }
        async fn list_with_delimiter(&self, p: Option<&Path>) -> object_store::Result<ListResult> {
            self.inner.list_with_delimiter(p).await
        }
        async fn copy_opts(&self, f: &Path, t: &Path, o: CopyOptions) -> object_store::Result<()> {
            self.inner.copy_opts(f, t, o).await
        }
    }

    /// What a reader of the object `data` gives with its answers cut after
    /// `cuts` bytes, one GET after the other; the ranges asked; the notices.
    fn read_through(
        cuts: &[usize],
        data: &[u8],
    ) -> (io::Result<Vec<u8>>, Vec<Option<GetRange>>, Vec<String>) {
        read_in_parts(cuts, data, Reading::default().part_bytes, true)
    }

    /// [`read_through`], reading an object of more than two parts of
    /// `part_bytes` in parts, three at a time, when its store serves
    /// ranges (`in_parts`).
    fn read_in_parts(
        cuts: &[usize],
        data: &[u8],
        part_bytes: u64,
        in_parts: bool,
    ) -> (io::Result<Vec<u8>>, Vec<Option<GetRange>>, Vec<String>) {
        let reading = Reading {
            parts: Parts::Always,
            first_pause: Duration::from_millis(1),
            part_bytes,
            parts_in_flight: 3,
        };
        read_with(cuts, data, reading, in_parts, None, Duration::ZERO)
    }

    /// What a reader that pauses `reader_pause` after each read of up to
    /// 1,000 bytes gives of the object `data` read as `reading` says, its
    /// answers cut after `cuts` bytes and paced by `pace`.
    fn read_with(
        cuts: &[usize],
        data: &[u8],
        reading: Reading,
        in_parts: bool,
        pace: Option<(usize, Duration)>,
        reader_pause: Duration,
    ) -> (io::Result<Vec<u8>>, Vec<Option<GetRange>>, Vec<String>) {
        let notices = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&notices);
        let mut objects = Objects::new(Arc::new(move |line: &str| {
            kept.lock().unwrap().push(line.to_string()) // ok: unit test
        }))
        .unwrap(); // ok: unit test
        objects.reading = reading;
        let store = Arc::new(Cutting {
            inner: InMemory::new(),
            cuts: Mutex::new(cuts.iter().copied().collect()),
            ranges: Mutex::new(Vec::new()),
            pace,
        });
        let path = Path::from("d/dump.rdb");
        objects
            .runtime
            .block_on(store.put(&path, PutPayload::from(data.to_vec())))
            .unwrap(); // ok: unit test
        let object = crate::Object {
            url: "mem://d/dump.rdb".into(),
            size: None,
            store: Arc::clone(&store) as Arc<dyn ObjectStore>,
            path,
            in_parts,
        };
        let mut reader = objects.open(&object).unwrap(); // ok: unit test
        assert_eq!(reader.size(), data.len() as u64);
        let mut got = Vec::new();
        let mut buf = [0u8; 1000];
        let result = loop {
            match reader.read(&mut buf) {
                Ok(0) => break Ok(got),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) => break Err(e),
            }
            std::thread::sleep(reader_pause);
        };
        let ranges = store.ranges.lock().unwrap().clone(); // ok: unit test
        let notices = notices.lock().unwrap().clone(); // ok: unit test
        (result, ranges, notices)
    }

    #[test]
    fn a_cut_body_is_asked_again_from_the_next_byte() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let (got, ranges, notices) = read_through(&[30_000, 0, 50_000], &data);
        assert!(got.unwrap() == data); // ok: unit test
        assert_eq!(
            ranges,
            [
                None,
                Some(GetRange::Offset(30_000)),
                Some(GetRange::Offset(30_000)),
                Some(GetRange::Offset(80_000))
            ]
        );
        let resumed = |byte: u64, wait: &str, attempt: u32| {
            format!(
                "mem://d/dump.rdb: Generic Cutting error: connection reset by peer; resuming from byte {byte} \
                 of 100000 in {wait} s (attempt {attempt} of 8)"
            )
        };
        assert_eq!(
            notices,
            [
                resumed(30_000, "0.0", 1),
                resumed(30_000, "0.0", 2),
                resumed(80_000, "0.0", 1)
            ]
        );
    }

    #[test]
    fn a_body_that_makes_no_progress_fails_after_the_last_resumption() {
        let data = vec![7u8; 1000];
        let (got, ranges, notices) = read_through(&[10, 0, 0, 0, 0, 0, 0, 0, 0], &data);
        let err = got.unwrap_err().to_string();
        assert_eq!(
            err,
            "Generic Cutting error: connection reset by peer (after 10 of 1000 bytes)"
        );
        assert_eq!(ranges.len(), 9); // the first GET and eight resumptions
        assert_eq!(notices.len(), 8);
    }

    /// The ranges after the first `skip` GETs', in order of their first
    /// byte (the parts are asked for at once, in no fixed order).
    fn sorted_after(skip: usize, ranges: &[Option<GetRange>]) -> Vec<Range<u64>> {
        let mut later: Vec<Range<u64>> = ranges[skip..]
            .iter()
            .map(|r| match r {
                Some(GetRange::Bounded(r)) => r.clone(),
                other => panic!("not a bounded range: {other:?}"), // ok: unit test
            })
            .collect();
        later.sort_by_key(|r| r.start);
        later
    }

    #[test]
    fn an_object_of_more_than_two_parts_is_read_in_parts_at_once() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 13 % 251) as u8).collect();
        // The first GET is cut inside its first part: resumed to the end of
        // the object, and left at the end of the first part.
        let (got, ranges, notices) = read_in_parts(&[5_000], &data, 10_000, true);
        assert!(got.unwrap() == data); // ok: unit test
        assert_eq!(ranges[..2], [None, Some(GetRange::Offset(5_000))]);
        let expected: Vec<Range<u64>> = (1..10).map(|k| k * 10_000..(k + 1) * 10_000).collect();
        assert_eq!(sorted_after(2, &ranges), expected);
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(
            notices[0].contains("resuming from byte 5000 of 100000"),
            "{notices:?}"
        );
    }

    #[test]
    fn a_part_cut_short_is_asked_again_from_its_next_byte() {
        let data: Vec<u8> = (0..95_000u32).map(|i| (i * 17 % 251) as u8).collect();
        // The first answer runs past its part (never cut there); the first
        // part asked for after it is cut after 4,000 bytes.
        let (got, ranges, notices) = read_in_parts(&[usize::MAX, 4_000], &data, 10_000, true);
        assert!(got.unwrap() == data); // ok: unit test
        let later = sorted_after(1, &ranges);
        // Nine parts, the last one short, and one resumption inside a part.
        assert_eq!(later.len(), 10, "{later:?}");
        assert_eq!(later.last(), Some(&(90_000..95_000)));
        let resumed: Vec<_> = later.iter().filter(|r| r.start % 10_000 != 0).collect();
        assert_eq!(resumed.len(), 1, "{later:?}");
        assert_eq!(resumed[0].start % 10_000, 4_000);
        assert_eq!(resumed[0].end, (resumed[0].start / 10_000 + 1) * 10_000);
        assert_eq!(notices.len(), 1, "{notices:?}");
    }

    #[test]
    fn an_object_of_two_parts_or_from_a_plain_http_url_is_one_get() {
        // Two parts at most.
        let data = vec![3u8; 20_000];
        let (got, ranges, _) = read_in_parts(&[], &data, 10_000, true);
        assert!(got.unwrap() == data); // ok: unit test
        assert_eq!(ranges, [None]);
        // A plain HTTP server need not serve ranges.
        let data = vec![5u8; 50_000];
        let (got, ranges, _) = read_in_parts(&[], &data, 10_000, false);
        assert!(got.unwrap() == data); // ok: unit test
        assert_eq!(ranges, [None]);
    }

    #[test]
    fn by_default_parts_only_when_the_connection_is_slower_than_the_reader() {
        let data: Vec<u8> = (0..30_000u32).map(|i| (i * 11 % 251) as u8).collect();
        let reading = Reading {
            first_pause: Duration::from_millis(1),
            part_bytes: 10_000,
            ..Reading::default()
        };
        assert_eq!(reading.parts, Parts::WhenTheConnectionIsSlower);
        // 500 bytes every 2 ms, read at once: in parts after the first.
        let slow_connection = Some((500, Duration::from_millis(2)));
        let (got, ranges, _) = read_with(&[], &data, reading, true, slow_connection, Duration::ZERO);
        assert!(got.unwrap() == data); // ok: unit test
        assert_eq!(ranges[0], None);
        assert_eq!(sorted_after(1, &ranges), [10_000..20_000, 20_000..30_000]);
        // 100 bytes at once, read 1,000 every 2 ms: one GET.
        let at_once = Some((100, Duration::ZERO));
        let slow_reader = Duration::from_millis(2);
        let (got, ranges, _) = read_with(&[], &data, reading, true, at_once, slow_reader);
        assert!(got.unwrap() == data); // ok: unit test
        assert_eq!(ranges, [None]);
    }

    #[test]
    fn rdblens_object_parts_says_auto_one_get_or_how_many_parts() {
        let parts = |s: Option<&str>| Reading::from_setting(s).map(|r| (r.parts, r.parts_in_flight));
        assert_eq!(parts(None), Ok((Parts::WhenTheConnectionIsSlower, 4)));
        assert_eq!(parts(Some("auto")), Ok((Parts::WhenTheConnectionIsSlower, 4)));
        assert_eq!(parts(Some("1")).map(|p| p.0), Ok(Parts::Never));
        assert_eq!(parts(Some(" 8 ")), Ok((Parts::Always, 8)));
        assert_eq!(
            parts(Some("many")),
            Err("RDBLENS_OBJECT_PARTS is `many`: give `auto`, `1` (one GET per object) or the parts to read at once (2 to 64)".into())
        );
        assert!(parts(Some("65")).is_err());
    }
}
