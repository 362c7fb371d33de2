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

use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;
use rdblens_live::{
    ConnectOptions, DumpOptions, DumpWalk, LiveError, ServerUrl, Session, Snapshot, TlsOptions, WalkNotes,
};

use crate::output::{Output, WriteError};

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

/// A failure of a live input that the analysis of a stream would only
/// note as a stream cut short: taken by [`check_received`] after it.
static FAILURES: Mutex<Vec<anyhow::Error>> = Mutex::new(Vec::new());

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

/// Whether `path` is a server URL rather than a file.
pub fn is_url(path: &Path) -> bool {
    path.to_str().is_some_and(rdblens_live::is_server_url)
}

/// The name of a server URL in messages and reports: without its password.
pub fn display_name(path: &Path) -> Option<String> {
    let text = path.to_str().filter(|t| rdblens_live::is_server_url(t))?;
    Some(match ServerUrl::parse(text, None) {
        Ok(url) => url.to_string(),
        Err(_) => rdblens_live::url::redact(text),
    })
}

/// `inputs` with each cluster node's URL replaced by one node of each of
/// its cluster's shards (a healthy replica when there is one), in slot
/// order; an error when the shards leave slots unserved. Unless
/// `--node-only`. Files and other servers stay as they are.
pub fn expand_clusters(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let settings = SETTINGS.get().cloned().unwrap_or_default();
    if settings.node_only || !inputs.iter().any(|p| is_url(p)) {
        return Ok(inputs.to_vec());
    }
    let mut out = Vec::with_capacity(inputs.len());
    for path in inputs {
        let Some(text) = path.to_str().filter(|_| is_url(path)) else {
            out.push(path.clone());
            continue;
        };
        let name = crate::input::input_name(path);
        // Worded as the input's own opening would fail: it is the same
        // connection, login and INFO.
        let nodes =
            cluster_nodes(text, &settings).map_err(|e| anyhow::anyhow!("{name}: cannot open: {e}"))?;
        match nodes {
            None => out.push(path.clone()),
            Some(nodes) => out.extend(nodes.into_iter().map(PathBuf::from)),
        }
    }
    if settings.save.is_some() && out.len() != inputs.len() {
        bail!("--save keeps the snapshot of one server: a cluster has several (save each node's with --node-only)");
    }
    Ok(out)
}

/// The URLs (with the login) of the node to read in each shard of the
/// cluster `text` is a node of; `None` when it is not in cluster mode.
fn cluster_nodes(text: &str, settings: &LiveArgs) -> Result<Option<Vec<String>>, LiveError> {
    let url = server_url(text)?;
    let tls = matches!(url.transport, rdblens_live::Transport::Tls { .. });
    let mut session = Session::open(&url, &connect_options(settings))?;
    // INFO tells a cluster node; a user without +info is asked CLUSTER
    // SHARDS, and one without +cluster either is read as one server.
    match session.facts()? {
        Ok(facts) if !facts.cluster_enabled => return Ok(None),
        _ => {}
    }
    let shards = match rdblens_live::cluster::shards(&mut session, tls) {
        Err(LiveError::NoPermission { .. }) => None,
        other => other?,
    };
    let Some(mut shards) = shards else {
        return Ok(None);
    };
    let gaps = rdblens_live::cluster::uncovered(&shards);
    if !gaps.is_empty() {
        let ranges: Vec<String> = gaps
            .iter()
            .map(|(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
            .collect();
        return Err(LiveError::Cluster(format!(
            "a cluster whose shards serve no node for slots {}: its data would be incomplete \
             (CLUSTER SHARDS; fix the cluster, or read one node with --node-only)",
            ranges.join(",")
        )));
    }
    shards.sort_by_key(|s| s.slots.first().map_or(0, |r| r.0));
    let mut urls = Vec::with_capacity(shards.len());
    let mut picked = Vec::new();
    for shard in &shards {
        let first = shard.slots.first().map_or(0, |r| r.0);
        let node = shard.pick().ok_or_else(|| {
            LiveError::Cluster(format!(
                "no healthy node serves slot {first} (CLUSTER SHARDS): its data cannot be read"
            ))
        })?;
        let at = url.at_node(&node.host, node.port);
        picked.push(format!(
            "{at} ({})",
            if node.primary { "primary" } else { "replica" }
        ));
        urls.push(at.with_credentials());
    }
    eprintln!(
        "rdblens: {url}: a cluster of {} shards, all {} slots served; reading {}",
        shards.len(),
        rdblens_live::cluster::SLOTS,
        picked.join(", ")
    );
    Ok(Some(urls))
}

/// The snapshot of the server `path` names, if it is a server URL: asked
/// for by the replication handshake (after the user's go-ahead on a
/// primary), with `--save`'s copy made as it is read.
pub fn live_source(path: &Path, quiet: bool) -> io::Result<Option<Box<dyn Read + Send>>> {
    if !is_url(path) {
        return Ok(None);
    }
    let text = path.to_str().unwrap_or_default();
    let settings = SETTINGS.get().cloned().unwrap_or_else(|| LiveArgs {
        timeout: 60.0,
        max_dump: 64 << 20,
        ..LiveArgs::default()
    });
    let name = crate::input::input_name(path);
    let opened = match settings.via {
        Via::Replication => open_snapshot(text, &settings, quiet).map(|s| Body::Snapshot(Box::new(s))),
        Via::Dump => open_walk(text, &settings, &name, quiet).map(|w| Body::Walk(Box::new(w))),
    };
    let body = opened.map_err(|e| match e {
        LiveError::NotConfirmed(why) => io::Error::other(NotConfirmed(why)),
        other => other.into_io(),
    })?;
    let source: Box<dyn Read + Send> = match &settings.save {
        Some(save) => Box::new(Saving::new(body, save, name)?),
        None => Box::new(Watched(body, name)),
    };
    Ok(Some(source))
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

/// A DUMP walk, which says on standard error how it went when it ends.
struct Walk {
    walk: DumpWalk,
    notes: Arc<Mutex<WalkNotes>>,
    name: String,
    quiet: bool,
    ended: bool,
}

impl Read for Walk {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.walk.read(buf)?;
        if n == 0 && !self.ended {
            self.ended = true;
            if let (false, Ok(notes)) = (self.quiet, self.notes.lock()) {
                eprintln!("rdblens: {}: {}", self.name, walk_summary(&notes));
            }
        }
        Ok(n)
    }
}

/// What a finished walk was: for standard error and the report's warnings.
fn walk_summary(notes: &WalkNotes) -> String {
    let mut text = format!(
        "a DUMP walk, not a point-in-time snapshot: {} keys read over {:.1} s with {} commands \
         (keys written meanwhile may be in either state; expiries as of when each key was read)",
        notes.keys,
        notes.elapsed.as_secs_f64(),
        notes.commands
    );
    if notes.vanished > 0 {
        text.push_str(&format!(
            "; {} keys were gone by the time they were read",
            notes.vanished
        ));
    }
    text
}

/// The lines a walk adds to its input's warnings: what it was, and each
/// key the size guard measured instead of reading.
fn walk_warnings(notes: &WalkNotes, max_dump: u64) -> Vec<String> {
    let mut lines = vec![walk_summary(notes)];
    for m in &notes.measured {
        let length = m.length.map_or("unknown".to_string(), |n| n.to_string());
        lines.push(format!(
            "{}: not read (MEMORY USAGE {} bytes is above --max-dump {max_dump}): a {}, length {length}; \
             left out of every figure",
            String::from_utf8_lossy(&m.key),
            m.memory,
            m.kind
        ));
    }
    lines
}

/// The walks of this run, by input name, for [`annotate`].
static WALKS: Mutex<Vec<(String, Arc<Mutex<WalkNotes>>)>> = Mutex::new(Vec::new());

/// Adds each DUMP walk's warnings to its input in `summary`.
pub fn annotate(summary: &mut rdblens_analysis::Summary) {
    let max_dump = SETTINGS.get().map_or(64 << 20, |s| s.max_dump);
    let Ok(walks) = WALKS.lock() else { return };
    for (name, notes) in walks.iter() {
        let Ok(notes) = notes.lock() else { continue };
        for file in summary.files.iter_mut().filter(|f| &f.path == name) {
            file.warnings.extend(walk_warnings(&notes, max_dump));
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

fn open_walk(text: &str, settings: &LiveArgs, name: &str, quiet: bool) -> Result<Walk, LiveError> {
    let url = server_url(text)?;
    let mut session = Session::open(&url, &connect_options(settings))?;
    // The version and used_memory for the aux fields, where INFO is allowed.
    let facts = session.facts()?.ok();
    let opts = DumpOptions {
        rate: settings.rate,
        max_value_bytes: settings.max_dump,
    };
    let walk = DumpWalk::start(
        session,
        opts,
        facts.as_ref().map(|f| f.version.clone()),
        facts.and_then(|f| f.used_memory),
    )?;
    let notes = walk.notes();
    if let Ok(mut walks) = WALKS.lock() {
        walks.push((name.to_string(), Arc::clone(&notes)));
    }
    Ok(Walk {
        walk,
        notes,
        name: name.to_string(),
        quiet,
        ended: false,
    })
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
        _ => Err(LiveError::NotConfirmed(format!(
            "{url}: not going ahead (answered no)"
        ))),
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

/// A snapshot whose first read error is also recorded for
/// [`check_received`] (the analysis of a stream notes a read error as the
/// stream's end; for a server, a cut transfer fails the run).
struct Watched(Body, String);

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
struct Saving {
    snapshot: Body,
    name: String,
    output: Option<(Output, Box<dyn Write + Send>)>,
}

impl Saving {
    fn new(snapshot: Body, path: &Path, name: String) -> io::Result<Saving> {
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
