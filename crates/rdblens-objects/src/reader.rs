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
) -> Result<ObjectReader, Error> {
    let (first_tx, first_rx) = oneshot::channel();
    let (chunks_tx, chunks) = mpsc::channel(CHUNKS_IN_FLIGHT);
    runtime.spawn(pump(object.clone(), first_tx, chunks_tx, notify));
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
        let pause = Duration::from_millis(200u64 << (resumes - 1).min(6));
        notify(&format!(
            "{}: {failure}; resuming from byte {offset} of {size} in {:.1} s (attempt {resumes} of {MAX_RESUMES})",
            object.url,
            pause.as_secs_f64()
        ));
        tokio::time::sleep(pause).await;
    }
}
