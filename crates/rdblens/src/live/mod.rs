//! Server URLs as inputs (docs/live.md): `redis://`, `rediss://` and
//! `unix://` wherever `report`, `advise`, `keys` and `check` take a file.
//! The snapshot is taken as a replica gets it ([`rdblens_live`]) and comes
//! in as a stream, through the same path as standard input: the analysis
//! reads it as it arrives (`report`, `advise`), `keys` and `check` spool it
//! as they spool `-`. `--save FILE` keeps a copy, renamed into place only
//! once the snapshot is whole.
//!
//! The settings are process-wide ([`configure`], once per run, before any
//! input is opened): the input dispatch that opens a URL
//! ([`live_source`]) is shared by four commands and by other kinds of
//! source, and takes a path alone.

mod cluster;
mod received;
mod walk;

use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;
use rdblens_live::{ConnectOptions, LiveError, ServerUrl, Session, Snapshot, TlsOptions};

pub use cluster::expand_clusters;
pub use received::check_received;
use received::{Saving, Watched};
pub use walk::annotate;
use walk::{open_walk, Walk};

use crate::output::WriteError;

/// How a server's data is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Via {
    /// The snapshot a replica receives (the server forks to save it).
    #[default]
    Replication,
    /// SCAN, then TYPE, PTTL, MEMORY USAGE and DUMP per key: for servers
    /// that refuse replication; not a point-in-time snapshot.
    Dump,
}

#[derive(Args, Clone, Debug, Default)]
#[command(next_help_heading = "Live servers (redis://, rediss://, unix:// inputs; docs/live.md)")]
pub struct LiveArgs {
    /// How a server's data is read: replication (a snapshot), or dump (key
    /// by key, for services that refuse replication).
    #[arg(long, value_enum, default_value = "replication")]
    pub via: Via,
    /// --via dump: at most N commands per second (default: as fast as the
    /// server answers).
    #[arg(long, value_name = "N")]
    pub rate: Option<u32>,
    /// --via dump: keys whose MEMORY USAGE is above BYTES are measured
    /// (type, length, MEMORY USAGE) instead of serialised with DUMP, and
    /// listed in the report's warnings.
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20)]
    pub max_dump: u64,
    /// Also write the snapshot received to FILE (renamed into place once
    /// the snapshot is whole; a cut transfer leaves nothing).
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Go ahead without asking when the server is a primary (it forks to
    /// save the snapshot); needed when standard input is not a terminal.
    #[arg(long)]
    pub yes: bool,
    /// A cluster node's URL reads that node alone, not the whole cluster.
    #[arg(long)]
    pub node_only: bool,
    /// Seconds a connect, a reply or the next bytes of the snapshot may
    /// take before the run fails (a stopped or overloaded server).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub timeout: f64,
    /// CA certificates (PEM) the server's certificate must chain to
    /// (default: the system's store).
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// Client certificate (PEM), for servers with `tls-auth-clients yes`.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Server name sent in the TLS handshake (SNI) and checked in its
    /// certificate, instead of the URL's host.
    #[arg(long, value_name = "NAME")]
    pub tls_sni: Option<String>,
    /// Accept any server certificate: the connection is encrypted but the
    /// server is not authenticated.
    #[arg(long)]
    pub tls_insecure: bool,
}

static SETTINGS: OnceLock<LiveArgs> = OnceLock::new();

/// Takes the live settings of this run and checks them against `inputs`:
/// a usage error (exit 2) for `--save` without exactly one server URL.
pub fn configure(args: &LiveArgs, inputs: &[PathBuf]) -> Result<()> {
    let urls = inputs.iter().filter(|p| is_url(p)).count();
    if args.save.is_some() && urls != 1 {
        bail!("--save keeps the snapshot of one server: give exactly one server URL (got {urls})");
    }
    if args.via != Via::Dump && args.rate.is_some() {
        bail!("--rate paces a DUMP walk: give it with --via dump");
    }
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        bail!("--timeout must be a positive number of seconds");
    }
    if let Some(save) = &args.save {
        crate::output::check_writable(Some(save))?;
    }
    // Set once per process; a second command in one process (tests) keeps
    // the first's settings, which is why the flags are checked above.
    let _ = SETTINGS.set(args.clone());
    Ok(())
}

/// Worker threads when `--threads` is not given (0: every core): one core
/// fewer than the machine has when every input is a server on this
/// machine. Its fork writes the snapshot on a core of its own, and the
/// bytes arrive no faster than it writes them: on 2 cores, the 1.47 GB
/// collection-heavy corpus from a loopback server took 1.06-1.08x the
/// time of `redis-cli --rdb /dev/null` with one worker, 1.13-1.14x with
/// two (docs/live.md).
pub fn default_threads(inputs: &[PathBuf]) -> usize {
    let local = |p: &PathBuf| {
        p.to_str()
            .filter(|t| rdblens_live::is_server_url(t))
            .and_then(|t| ServerUrl::parse(t, None).ok())
            .is_some_and(|u| u.is_on_this_host())
    };
    if !inputs.is_empty() && inputs.iter().all(local) {
        rdblens_engine::resolve_threads(0).saturating_sub(1).max(1)
    } else {
        0
    }
}

/// Whether `path` is a server URL rather than a file.
pub fn is_url(path: &Path) -> bool {
    path.to_str().is_some_and(rdblens_live::is_server_url)
}

/// A server's snapshot as a stream, and its length when declared.
pub type LiveSource = (Box<dyn Read + Send>, Option<u64>);

/// The snapshot of the server `path` names, if it is a server URL: asked
/// for by the replication handshake (after the user's go-ahead on a
/// primary), with `--save`'s copy made as it is read; and its length when
/// the server declared it (a disk-based body's `$<len>`).
pub fn live_source(path: &Path, quiet: bool) -> io::Result<Option<LiveSource>> {
    if !is_url(path) {
        return Ok(None);
    }
    let text = path.to_str().unwrap_or_default();
    let settings = SETTINGS.get().cloned().unwrap_or_else(|| LiveArgs {
        timeout: 60.0,
        max_dump: 64 << 20,
        ..LiveArgs::default()
    });
    let name = rdblens_live::url::display_name(text);
    let opened = match settings.via {
        Via::Replication => open_snapshot(text, &settings, quiet).map(|s| Body::Snapshot(Box::new(s))),
        Via::Dump => open_walk(text, &settings, &name, quiet).map(|w| Body::Walk(Box::new(w))),
    };
    let body = opened.map_err(|e| match e {
        LiveError::NotConfirmed(why) => io::Error::other(NotConfirmed(why)),
        other => other.into_io(),
    })?;
    let length = match &body {
        Body::Snapshot(s) => s.transfer.length,
        Body::Walk(_) => None,
    };
    let source: Box<dyn Read + Send> = match &settings.save {
        Some(save) => Box::new(Saving::new(body, save, name)?),
        None => Box::new(Watched(body, name)),
    };
    Ok(Some((source, length)))
}

/// What a server URL gives: a snapshot, or a DUMP walk's stream.
enum Body {
    Snapshot(Box<Snapshot>),
    Walk(Box<Walk>),
}

impl Body {
    /// Every byte has been read.
    fn complete(&self) -> bool {
        match self {
            Body::Snapshot(s) => s.complete(),
            Body::Walk(w) => w.ended,
        }
    }
}

impl Read for Body {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Body::Snapshot(s) => s.read(buf),
            Body::Walk(w) => w.read(buf),
        }
    }
}

fn connect_options(settings: &LiveArgs) -> ConnectOptions {
    ConnectOptions {
        tls: TlsOptions {
            ca_file: settings.tls_ca.clone(),
            cert_file: settings.tls_cert.clone(),
            key_file: settings.tls_key.clone(),
            sni: settings.tls_sni.clone(),
            insecure: settings.tls_insecure,
        },
        timeout: Some(Duration::from_secs_f64(settings.timeout)),
    }
}

fn server_url(text: &str) -> Result<ServerUrl, LiveError> {
    let env_password = std::env::var("REDISCLI_AUTH").ok().filter(|p| !p.is_empty());
    Ok(ServerUrl::parse(text, env_password)?)
}

fn open_snapshot(text: &str, settings: &LiveArgs, quiet: bool) -> Result<Snapshot, LiveError> {
    let url = server_url(text)?;
    let mut session = Session::open(&url, &connect_options(settings))?;
    confirm_fork(&mut session, settings.yes)?;
    let snapshot = rdblens_live::replicate(session)?;
    if !quiet {
        let t = &snapshot.transfer;
        let body = match t.length {
            Some(n) => format!("{n} bytes saved to disk first"),
            None => "diskless, streamed as it is saved".to_string(),
        };
        eprintln!(
            "rdblens: {url}: snapshot by {} ({body}), after {:.1} s and {} keepalives while the server prepared it",
            t.command,
            t.waited.as_secs_f64(),
            t.keepalives
        );
    }
    Ok(snapshot)
}

/// A snapshot makes the server fork to save it: on a primary (or a server
/// whose role INFO does not tell), say so with the figures INFO gives, and
/// go on only with `--yes` or the user's yes on a terminal.
fn confirm_fork(session: &mut Session, yes: bool) -> Result<(), LiveError> {
    let url = session.url().to_string();
    let what = match session.facts()? {
        Ok(facts) if !facts.is_primary() => return Ok(()),
        Ok(facts) => {
            let mib = |b: Option<u64>| b.map_or("unknown".into(), |b| format!("{:.1} MiB", b as f64 / 1048576.0));
            format!(
                "{url} is a primary: a snapshot makes it fork and save its data set (used_memory {}; \
                 the last fork's copy-on-write, rdb_last_cow_size, {}). A replica of it would spare the primary",
                mib(facts.used_memory),
                mib(facts.rdb_last_cow_size)
            )
        }
        Err(why) => format!(
            "{url}: INFO is refused ({why}), so its role is unknown: if it is a primary, a snapshot makes it fork \
             and save its data set"
        ),
    };
    eprintln!("rdblens: {what}");
    if yes {
        return Ok(());
    }
    if !io::stdin().is_terminal() || !io::stderr().is_terminal() {
        return Err(LiveError::NotConfirmed(
            "not going ahead without --yes (standard input is not a terminal to ask on)".to_string(),
        ));
    }
    eprint!("rdblens: go ahead? [y/N] ");
    let _ = io::stderr().flush();
    let mut answer = String::new();
    let _ = io::stdin().read_line(&mut answer);
    match answer.trim() {
        "y" | "Y" | "yes" => Ok(()),
        _ => Err(LiveError::NotConfirmed(
            "not going ahead (answered no)".to_string(),
        )),
    }
}

/// The user did not agree to a fork on a primary: a usage error (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NotConfirmed(String);

/// Whether `cause` is a live input's [`NotConfirmed`] (inside the
/// `io::Error` the input dispatch returns).
pub fn is_not_confirmed(cause: &(dyn std::error::Error + 'static)) -> bool {
    cause.is::<NotConfirmed>()
        || cause
            .downcast_ref::<io::Error>()
            .and_then(|e| e.get_ref())
            .is_some_and(|inner| inner.is::<NotConfirmed>())
}

/// Whether `cause` is a `--save` write error (inside an `io::Error`).
pub fn save_write_error(cause: &(dyn std::error::Error + 'static)) -> bool {
    cause
        .downcast_ref::<io::Error>()
        .and_then(|e| e.get_ref())
        .is_some_and(|inner| inner.is::<WriteError>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_is_left_to_servers_on_this_machine_only() {
        let cores = rdblens_engine::resolve_threads(0);
        let paths = |ps: &[&str]| ps.iter().map(PathBuf::from).collect::<Vec<_>>();
        let local = paths(&["redis://127.0.0.1:7000", "unix:///tmp/redis.sock"]);
        assert_eq!(default_threads(&local), cores.saturating_sub(1).max(1));
        // Another machine, or a file among the inputs: every core.
        assert_eq!(default_threads(&paths(&["redis://10.1.2.3:6379"])), 0);
        assert_eq!(
            default_threads(&paths(&["redis://127.0.0.1:7000", "dump.rdb"])),
            0
        );
        assert_eq!(default_threads(&[]), 0);
    }
}
