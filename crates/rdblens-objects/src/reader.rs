//! An object's bytes as a blocking `Read`: a task on the client's runtime
//! GETs the object and sends its body, chunk by chunk, through a bounded
//! channel; the reader's thread takes them as the analysis asks. A body
//! that stops short (a reset, a timeout, an error from the server) is
//! asked again from the byte after the last one received, with the same
//! entity tag, after a pause that doubles.

use std::io::{self, Read};
use std::time::Duration;

use bytes::{Buf, Bytes};
use futures_util::StreamExt;
use object_store::{GetOptions, GetRange};
use tokio::sync::{mpsc, oneshot};

use crate::{Error, Notify, Object};

/// Chunks on their way to the reader: the body as the HTTP client hands
/// it over (up to a few hundred KiB each), so a few MiB per object at most.
const CHUNKS_IN_FLIGHT: usize = 16;

/// Resumptions in a row without a byte received in between before the
/// read fails (a connection that makes progress is resumed every time).
const MAX_RESUMES: u32 = 8;

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

pub fn open(
    runtime: &tokio::runtime::Runtime,
    object: &Object,
    notify: Notify,
    first_pause: Duration,
) -> Result<ObjectReader, Error> {
    let (first_tx, first_rx) = oneshot::channel();
    let (chunks_tx, chunks) = mpsc::channel(CHUNKS_IN_FLIGHT);
    runtime.spawn(pump(object.clone(), first_tx, chunks_tx, notify, first_pause));
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
    first_pause: Duration,
) {
    let mut first = Some(first);
    let (mut offset, mut size, mut etag) = (0u64, 0u64, None::<String>);
    let mut resumes = 0u32;
    loop {
        let options = GetOptions {
            range: (offset > 0).then_some(GetRange::Offset(offset)),
            if_match: etag.clone(),
            ..GetOptions::default()
        };
        let failure = match object.store.get_opts(&object.path, options).await {
            Ok(result) => {
                if let Some(first) = first.take() {
                    (size, etag) = (result.meta.size, result.meta.e_tag.clone());
                    if first.send(Ok(size)).is_err() {
                        return;
                    }
                } else if result.meta.e_tag != etag {
                    let changed = "the object changed while it was read (its entity tag is another)";
                    let _ = chunks.send(Err(io::Error::other(changed))).await;
                    return;
                }
                let mut body = result.into_stream();
                let mut failure = None;
                while let Some(chunk) = body.next().await {
                    match chunk {
                        // An empty chunk is no progress.
                        Ok(chunk) if chunk.is_empty() => {}
                        Ok(chunk) => {
                            offset += chunk.len() as u64;
                            resumes = 0;
                            if chunks.send(Ok(chunk)).await.is_err() {
                                return; // the reader is gone
                            }
                        }
                        Err(e) => {
                            failure = Some(Error::of(&object.url, e));
                            break;
                        }
                    }
                }
                match failure {
                    Some(failure) => failure,
                    None if offset >= size => return,
                    None => Error::Store {
                        url: object.url.clone(),
                        error: object_store::Error::Generic {
                            store: "HTTP",
                            source: format!("the body ended after {offset} of {size} bytes").into(),
                        },
                    },
                }
            }
            Err(e) => Error::of(&object.url, e),
        };
        if let Some(first) = first.take() {
            // Nothing was received: the store's own retries are spent.
            let _ = first.send(Err(failure));
            return;
        }
        let resumable = matches!(failure, Error::Store { .. });
        if !resumable || resumes >= MAX_RESUMES {
            let why = format!("{failure} (after {offset} of {size} bytes)");
            let _ = chunks.send(Err(io::Error::other(why))).await;
            return;
        }
        resumes += 1;
        let pause = first_pause * (1 << (resumes - 1).min(6));
        notify(&format!(
            "{}: {failure}; resuming from byte {offset} of {size} in {:.1} s (attempt {resumes} of {MAX_RESUMES})",
            object.url,
            pause.as_secs_f64()
        ));
        tokio::time::sleep(pause).await;
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
            let Some(cut) = cut else {
                return Ok(result);
            };
            let (meta, range, attributes, extensions) = (
                result.meta.clone(),
                result.range.clone(),
                result.attributes.clone(),
                result.extensions.clone(),
            );
            let body = result.bytes().await?;
            let head = body.slice(..cut.min(body.len()));
            let reset = object_store::Error::Generic {
                store: "Cutting",
                source: "connection reset by peer".into(),
            };
            let payload = stream::iter([Ok(head), Err(reset)]).boxed();
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
        let notices = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&notices);
        let mut objects = Objects::new(Arc::new(move |line: &str| {
            kept.lock().unwrap().push(line.to_string()) // ok: unit test
        }))
        .unwrap(); // ok: unit test
        objects.first_pause = Duration::from_millis(1);
        let store = Arc::new(Cutting {
            inner: InMemory::new(),
            cuts: Mutex::new(cuts.iter().copied().collect()),
            ranges: Mutex::new(Vec::new()),
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
        };
        let mut reader = objects.open(&object).unwrap(); // ok: unit test
        assert_eq!(reader.size(), data.len() as u64);
        let mut got = Vec::new();
        let result = reader.read_to_end(&mut got).map(|_| got);
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
}
