//! A running Redis or Valkey server as a source of RDB bytes, for the
//! same analysis a dump file gets.
//!
//! - [`url`]: `redis://[user[:password]@]host[:port][/db]`, `rediss://`
//!   (TLS), `unix:///path/redis.sock`; the password also from
//!   `REDISCLI_AUTH`.
//! - [`conn`]: TCP, Unix socket or TLS (rustls, ring provider: a CA file or
//!   the system's store, a client certificate, SNI, `--tls-insecure`),
//!   with timeouts on every connect, read and write.
//! - [`resp`]: the RESP2 replies and commands the handshake and the DUMP
//!   walk use (why not a RESP crate: see there).
//! - [`session`]: a command connection, AUTH, INFO, and the server's error
//!   replies as errors that say what to do.
//! - [`replicate`]: the snapshot a replica receives, by the replication
//!   handshake (each step cited from the server's source), as a `Read` of
//!   exactly the RDB bytes.
//! - [`cluster`]: a cluster node stands for its cluster: its shards, one
//!   node read per shard (a replica preferred), every slot covered.
//! - [`dump`]: `--via dump`, for servers that refuse replication: SCAN,
//!   TYPE, PTTL, MEMORY USAGE and DUMP per key, the payloads checked and
//!   written into an RDB stream the same analysis reads.
//!
//! Nothing here writes to disk; the command line decides what to do with
//! the bytes (analyse them as they arrive, and `--save` them).

// A failure that can happen is an error, never a panic.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod cluster;
pub mod conn;
pub mod dump;
pub mod error;
pub mod replicate;
pub mod resp;
pub mod session;
pub mod url;

pub use conn::{ConnectOptions, TlsOptions};
pub use dump::{AccessFigure, DumpOptions, DumpWalk, MeasuredKey, WalkNotes};
pub use error::LiveError;
pub use replicate::{replicate, Snapshot, Transfer};
pub use session::{ServerFacts, Session};
pub use url::{is_server_url, ServerUrl, Transport};
