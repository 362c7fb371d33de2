//! Why a live source failed, each in words that say what to do.

use std::io;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error(transparent)]
    Url(#[from] crate::url::UrlError),
    #[error("cannot connect: {error}")]
    Connect { url: String, error: io::Error },
    #[error("TLS: {why}")]
    Tls { url: String, why: String },
    /// A CA, certificate or key file that cannot be used.
    #[error("TLS settings: {0}")]
    TlsSetup(String),
    #[error("no answer for {} s {during} (--timeout): the server is stopped, overloaded or not a Redis server", .after.as_secs_f64())]
    Timeout {
        url: String,
        during: String,
        after: Duration,
    },
    /// `error` is not a `source`: the message says it already.
    #[error("{during}: {error}{hint}")]
    Io {
        url: String,
        during: String,
        error: io::Error,
        /// What to do, where the error tells (empty, or `: ...`).
        hint: &'static str,
    },
    #[error("the connection closed {during}")]
    Closed { url: String, during: String },
    #[error("not a Redis server: {during}, {what}")]
    NotRedis {
        url: String,
        during: String,
        what: String,
    },
    /// A wrong password, a missing one, or an unknown user.
    #[error("authentication failed: {message}")]
    Auth { url: String, message: String },
    #[error("the user may not run {command} ({message}): {hint}")]
    NoPermission {
        url: String,
        command: String,
        message: String,
        hint: &'static str,
    },
    /// SYNC and PSYNC are refused (renamed away, or a managed service).
    #[error("the server refuses replication ({message}): use --via dump, which reads every key with SCAN and DUMP")]
    ReplicationRefused { url: String, message: String },
    #[error(
        "{message}: the replica has no link to its primary; use another node, or wait until the link is up"
    )]
    NoMasterLink { url: String, message: String },
    #[error("{message}: try again when the server has loaded its data")]
    Loading { url: String, message: String },
    #[error("the server could not save a snapshot ({message}): see its log (a failed fork: memory, vm.overcommit_memory)")]
    SaveFailed { url: String, message: String },
    #[error("{command} failed: {message}")]
    Server {
        url: String,
        command: String,
        message: String,
    },
    /// The snapshot's body stopped short.
    #[error("the connection closed after {received} bytes of the snapshot{}: the transfer was cut (a killed replica connection, the server's client-output-buffer-limit replica, a restart)", .expected.map(|n| format!(" of {n}")).unwrap_or_default())]
    Cut {
        url: String,
        received: u64,
        expected: Option<u64>,
    },
    #[error("no byte of the snapshot for {} s after {received} bytes (--timeout): the server stopped sending", .after.as_secs_f64())]
    Stalled {
        url: String,
        received: u64,
        after: Duration,
    },
    /// A cluster that cannot be read whole.
    #[error("{0}")]
    Cluster(String),
    /// The user said no, or was not asked (`--yes` missing without a terminal).
    #[error("{0}")]
    NotConfirmed(String),
}

impl LiveError {
    /// As an `io::Error`, for a `Read` (the cause stays reachable).
    pub fn into_io(self) -> io::Error {
        io::Error::other(self)
    }
}

/// Whether `e` is a read or write timeout (`WouldBlock` on Unix sockets
/// with `SO_RCVTIMEO`, `TimedOut` elsewhere).
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}
