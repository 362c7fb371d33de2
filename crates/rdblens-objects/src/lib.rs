//! Dumps read where backups live: object URLs (`s3://bucket/key`,
//! `gs://`, `az://` and `abfs[s]://`, `https://` presigned URLs) turned
//! into blocking [`std::io::Read`] streams that rdblens' streaming engine
//! reads as it reads standard input, with no download to disk first.
//!
//! The clients are the `object_store` crate's, with their credential
//! chains (environment, web identity, instance and container metadata) and
//! their endpoint settings (`AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP` for
//! S3-compatible stores). They are async: they run on a small tokio
//! runtime of their own threads ([`Objects`]), and each object's bytes
//! come to the reading thread through a bounded channel of chunks
//! ([`ObjectReader`]), so a slow reader holds back the download rather
//! than buffering it. A body cut short (a reset connection, a throttled
//! read) is resumed from the last byte received with a ranged GET.
//!
//! A prefix (`s3://bucket/backups/2026-11-29/`) or a glob
//! (`s3://bucket/p/*.rdb.gz`) is listed into its objects ([`Objects::resolve`]),
//! each a shard of one report. Only this crate pulls in tokio and the
//! HTTP stack; the analysis crates never see them.

#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod error;
mod location;
mod reader;
mod stores;

use std::sync::{Arc, Mutex, OnceLock};

use futures_util::StreamExt;
use object_store::path::Path;
use object_store::ObjectStore;

pub use error::Error;
pub use location::{glob_matches, is_object_url, Location, Scheme, Selection};
pub use reader::ObjectReader;

/// One object to read: its URL (the name it has in reports) and, when it
/// came from a listing, its size.
#[derive(Clone, Debug)]
pub struct Object {
    pub url: String,
    pub size: Option<u64>,
    store: Arc<dyn ObjectStore>,
    path: Path,
    /// Whether the store serves byte ranges (every object store's API
    /// does; a plain HTTP server may not), so the object can be read in
    /// parts at once.
    in_parts: bool,
}

/// Receives the notices of the readers: a connection lost and resumed.
pub type Notify = Arc<dyn Fn(&str) + Send + Sync>;

/// The object storage client: its runtime, and one store per bucket or
/// container (built once, from the environment).
pub struct Objects {
    runtime: tokio::runtime::Runtime,
    stores: Mutex<Vec<(String, Arc<dyn ObjectStore>)>>,
    notify: Notify,
    /// How objects are read: parts, and pauses before resuming.
    reading: reader::Reading,
}

impl Objects {
    /// A client whose readers tell `notify` when they resume a download,
    /// reading objects in parts as `RDBLENS_OBJECT_PARTS` says (`auto` when
    /// unset: see `reader`).
    pub fn new(notify: Notify) -> Result<Objects, Error> {
        let parts = std::env::var("RDBLENS_OBJECT_PARTS").ok();
        let reading = reader::Reading::from_setting(parts.as_deref()).map_err(Error::Setting)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            // The work is waiting on sockets and copying chunks: two
            // threads keep several downloads going without taking cores
            // from the analysis.
            .worker_threads(2)
            .thread_name("rdblens-objects")
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        Ok(Objects {
            runtime,
            stores: Mutex::new(Vec::new()),
            notify,
            reading,
        })
    }

    /// The process's client, made on first use (its notices go to standard
    /// error, as `rdblens: ...` lines).
    pub fn shared() -> Result<&'static Objects, Error> {
        static SHARED: OnceLock<Objects> = OnceLock::new();
        if let Some(objects) = SHARED.get() {
            return Ok(objects);
        }
        let objects = Objects::new(Arc::new(|line: &str| eprintln!("rdblens: {line}")))?;
        Ok(SHARED.get_or_init(|| objects))
    }

    /// The objects `url` names: one for a key or an `https://` URL; for a
    /// prefix or a glob, every object under it (empty ones, such as folder
    /// markers, left out), sorted by key. A listing that finds nothing is
    /// an error.
    pub fn resolve(&self, url: &str) -> Result<Vec<Object>, Error> {
        let location = Location::parse(url)?;
        let store = self.store(&location, url)?;
        let in_parts = location.scheme != Scheme::Http;
        let listed = |prefix: &str, pattern: Option<&str>| -> Result<Vec<Object>, Error> {
            let prefix = Path::from(prefix);
            let metas: Vec<_> = self.runtime.block_on(store.list(Some(&prefix)).collect());
            let mut objects = Vec::new();
            for meta in metas {
                let meta = meta.map_err(|e| Error::of(url, e))?;
                let key = meta.location.as_ref();
                if meta.size == 0 || pattern.is_some_and(|p| !glob_matches(p, key)) {
                    continue;
                }
                objects.push(Object {
                    url: format!("{}/{key}", location.store_url),
                    size: Some(meta.size),
                    store: Arc::clone(&store),
                    path: meta.location,
                    in_parts,
                });
            }
            objects.sort_by(|a, b| a.path.cmp(&b.path));
            if objects.is_empty() {
                return Err(Error::Empty { url: url.to_string() });
            }
            Ok(objects)
        };
        match &location.selection {
            Selection::Object(key) => Ok(vec![Object {
                url: url.to_string(),
                size: None,
                store,
                path: Path::from(key.as_str()),
                in_parts,
            }]),
            Selection::Prefix(prefix) => listed(prefix, None),
            Selection::Glob { prefix, pattern } => listed(prefix, Some(pattern)),
        }
    }

    /// Starts reading `object`: returns once the store has answered, so a
    /// missing object or refused credentials is an error here, with the
    /// object's size known.
    pub fn open(&self, object: &Object) -> Result<ObjectReader, Error> {
        reader::open(&self.runtime, object, Arc::clone(&self.notify), self.reading)
    }

    /// The store for `location`'s bucket, built on first use.
    fn store(&self, location: &Location, url: &str) -> Result<Arc<dyn ObjectStore>, Error> {
        let mut stores = self
            .stores
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, store)) = stores.iter().find(|(root, _)| *root == location.store_url) {
            return Ok(Arc::clone(store));
        }
        let store = stores::build(location).map_err(|e| Error::of(url, e))?;
        stores.push((location.store_url.clone(), Arc::clone(&store)));
        Ok(store)
    }
}
