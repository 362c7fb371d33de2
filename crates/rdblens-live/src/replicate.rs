//! The snapshot a replica receives: the replication handshake, then the
//! RDB body as a `Read` of exactly its bytes.
//!
//! The handshake follows the server's side and redis-cli's `--rdb`, cited
//! from valkey-io/valkey at 55bbbe09 (`src/replication.c`, `src/rdb.c`,
//! `src/valkey-cli.c`; Redis 7.0 has the same steps):
//!
//! - `REPLCONF capa eof capa psync2` (replication.c `replconfCommand`,
//!   lines 1305-1310): `eof` lets a diskless primary send its `$EOF:` body;
//!   without it a diskless primary would save to disk first
//!   (`startBgsaveForReplication`, line 963).
//! - `REPLCONF rdb-only 1` (lines 1352-1360; 7.0+, as valkey-cli.c's
//!   `sendRdbOnly`, line 8147): only the snapshot, no command stream
//!   after it. Older servers refuse it, which is fine: rdblens hangs up
//!   after the body either way.
//! - No `REPLCONF listening-port` (line 1288): a replica that announces a
//!   port is listed by INFO and recorded by Sentinel as a replica that
//!   would then be missing.
//! - `PSYNC ? -1` forces a full resync (`syncCommand`, lines 1100-1120):
//!   the reply is `+FULLRESYNC <replid> <offset>`
//!   (`replicationSetupReplicaForFullResync`, line 817); servers that do
//!   not know PSYNC get `SYNC`, whose reply is the body at once.
//! - Before the reply and before the body's length the primary writes a
//!   bare `\n` each second to keep the link alive while it forks and saves
//!   (`replicationCron`, lines 4640-4655); valkey-cli.c's `sendSync`
//!   (lines 8190-8230) skips them the same way.
//! - The body is `$<length>\r\n` and the file (a disk save:
//!   `sendBulkToReplica`, line 1551, preamble made at line 1802) or
//!   `$EOF:<40 random bytes>\r\n`, the RDB, and the same 40 bytes (a
//!   diskless save: rdb.c `rdbSaveRioWithEOFMark`, lines 1448-1463); the
//!   mark can arrive split across reads (valkey-cli.c lines 8280-8291).
//! - Refusals: `-NOMASTERLINK` from a replica whose link is down (lines
//!   1063-1073), `-LOADING` while the data set loads (server.c
//!   `processCommand`: SYNC and PSYNC lack the `loading` flag), and
//!   `BGSAVE failed, replication can't continue` when the fork fails
//!   (`startBgsaveForReplication`, lines 996-1010).

use std::io::{self, BufRead, Read};
use std::time::{Duration, Instant};

use crate::conn::Buffered;
use crate::error::{is_timeout, LiveError};
use crate::resp::printable;
use crate::session::{Session, REPLICATION_PERMISSIONS};

/// The length of a diskless body's end mark (`RDB_EOF_MARK_SIZE`).
pub const EOF_MARK_LEN: usize = 40;

/// How the snapshot was asked for and sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// `PSYNC` or `SYNC`.
    pub command: &'static str,
    /// The body's length (a disk save); `None`: a diskless body ended by
    /// its mark.
    pub length: Option<u64>,
    /// `\n` keepalives received while the server prepared the snapshot.
    pub keepalives: u64,
    /// From the command to the first byte of the body.
    pub waited: Duration,
}

/// The RDB bytes of a full resynchronisation, read once. A connection
/// that closes or stalls before the end is a read error (a [`LiveError`]
/// inside the `io::Error`) saying how many bytes came.
pub struct Snapshot {
    url: String,
    /// `None` once the body is whole: the connection is closed then.
    conn: Option<Buffered>,
    body: Body,
    /// Body bytes read from the connection.
    received: u64,
    timeout: Option<Duration>,
    /// Where a marked body's reads land before the mark is looked for.
    chunk: Vec<u8>,
    pub transfer: Transfer,
}

enum Body {
    Sized {
        remaining: u64,
    },
    Marked {
        mark: [u8; EOF_MARK_LEN],
        /// Read but not given out; `[start..]` is what is left.
        pending: Vec<u8>,
        start: usize,
        /// The mark was found: `pending` holds the last bytes.
        found: bool,
    },
}

/// Asks `session`'s server for a full snapshot. The server forks (or, on a
/// replica, may) to save it: the caller asks the user first.
pub fn replicate(mut session: Session) -> Result<Snapshot, LiveError> {
    let capa = session.command(
        &[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"],
        "REPLCONF capa",
    )?;
    if let Some(e) = capa.error() {
        return Err(refusal(&session, "REPLCONF", e, None));
    }
    // A refusal (before 7.0) is fine: the body is read and the link closed.
    let _ = session.command(&[b"REPLCONF", b"rdb-only", b"1"], "REPLCONF rdb-only")?;
    let started = Instant::now();
    let mut keepalives = 0;
    session.queue(&[b"PSYNC", b"?", b"-1"]);
    session.flush("PSYNC")?;
    let line = read_line_skipping_keepalives(&mut session, "PSYNC", &mut keepalives)?;
    let (command, header) = if line.starts_with(b"+FULLRESYNC") {
        let header = read_line_skipping_keepalives(&mut session, "PSYNC", &mut keepalives)?;
        ("PSYNC", header)
    } else if let Some(psync_error) = line.strip_prefix(b"-") {
        let psync_error = String::from_utf8_lossy(psync_error).into_owned();
        // Only a PSYNC that is unknown or not allowed is worth a SYNC.
        if !(is_unknown_command(&psync_error) || psync_error.starts_with("NOPERM")) {
            return Err(refusal(&session, "PSYNC", &psync_error, None));
        }
        session.queue(&[b"SYNC"]);
        session.flush("SYNC")?;
        let header = read_line_skipping_keepalives(&mut session, "SYNC", &mut keepalives)?;
        if let Some(sync_error) = header.strip_prefix(b"-") {
            let sync_error = String::from_utf8_lossy(sync_error).into_owned();
            return Err(refusal(&session, "PSYNC", &psync_error, Some(&sync_error)));
        }
        ("SYNC", header)
    } else {
        return Err(not_redis(&session, "PSYNC", &line));
    };
    let body = parse_body_header(&session, command, &header)?;
    let length = match &body {
        Body::Sized { remaining } => Some(*remaining),
        Body::Marked { .. } => None,
    };
    let timeout = session.opts.timeout;
    Ok(Snapshot {
        url: session.url.to_string(),
        conn: Some(session.conn),
        body,
        received: 0,
        timeout,
        chunk: Vec::new(),
        transfer: Transfer {
            command,
            length,
            keepalives,
            waited: started.elapsed(),
        },
    })
}

/// `$<length>` or `$EOF:<mark>`.
fn parse_body_header(session: &Session, command: &str, header: &[u8]) -> Result<Body, LiveError> {
    if let Some(e) = header.strip_prefix(b"-") {
        return Err(refusal(session, command, &String::from_utf8_lossy(e), None));
    }
    let Some(rest) = header.strip_prefix(b"$") else {
        return Err(not_redis(session, command, header));
    };
    if let Some(mark) = rest.strip_prefix(b"EOF:") {
        let mark: [u8; EOF_MARK_LEN] = mark.try_into().map_err(|_| not_redis(session, command, header))?;
        return Ok(Body::Marked {
            mark,
            pending: Vec::new(),
            start: 0,
            found: false,
        });
    }
    let remaining = std::str::from_utf8(rest)
        .ok()
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or_else(|| not_redis(session, command, header))?;
    Ok(Body::Sized { remaining })
}

/// One `\r\n` line, after any bare `\n` keepalives (counted).
fn read_line_skipping_keepalives(
    session: &mut Session,
    command: &str,
    keepalives: &mut u64,
) -> Result<Vec<u8>, LiveError> {
    loop {
        let mut line = Vec::new();
        let got = (&mut session.conn)
            .take(4096)
            .read_until(b'\n', &mut line)
            .map_err(|e| session.io_error(e, command))?;
        if got == 0 || !line.ends_with(b"\n") {
            return Err(match line.is_empty() {
                true => LiveError::Closed {
                    url: session.url.to_string(),
                    during: format!("waiting for the reply to {command}"),
                },
                false => not_redis(session, command, &line),
            });
        }
        if line == b"\n" {
            *keepalives += 1;
            continue;
        }
        if !line.ends_with(b"\r\n") {
            return Err(not_redis(session, command, &line));
        }
        line.truncate(line.len() - 2);
        return Ok(line);
    }
}

fn is_unknown_command(message: &str) -> bool {
    message.starts_with("ERR unknown command")
}

/// The error reply `message` to `command` (and `sync`'s, when SYNC was
/// tried after it), by what it means for replication.
fn refusal(session: &Session, command: &str, message: &str, sync: Option<&str>) -> LiveError {
    let url = session.url.to_string();
    if message.contains("BGSAVE failed") {
        return LiveError::SaveFailed {
            url,
            message: message.to_string(),
        };
    }
    if is_unknown_command(message) && sync.is_none_or(is_unknown_command) {
        let message = match sync {
            Some(s) => format!("{command}: {message}; SYNC: {s}"),
            None => format!("{command}: {message}"),
        };
        return LiveError::ReplicationRefused { url, message };
    }
    // A NOPERM on PSYNC is the one to name, even when SYNC failed too.
    session.server_error(command, message, REPLICATION_PERMISSIONS)
}

fn not_redis(session: &Session, command: &str, got: &[u8]) -> LiveError {
    LiveError::NotRedis {
        url: session.url.to_string(),
        during: format!("to {command}"),
        what: format!("it answered `{}`", printable(got)),
    }
}

impl Snapshot {
    /// Whether every byte of the body has been given out (the connection
    /// is closed then).
    pub fn complete(&self) -> bool {
        match &self.body {
            Body::Sized { remaining } => *remaining == 0,
            Body::Marked {
                pending,
                start,
                found,
                ..
            } => *found && *start == pending.len(),
        }
    }

    /// Body bytes received so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Reads from the connection; its end or a stall is an error naming
    /// how far the body came.
    fn fill(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(conn) = self.conn.as_mut() else {
            return Ok(0);
        };
        let expected = match &self.body {
            Body::Sized { remaining } => Some(self.received + remaining),
            Body::Marked { .. } => None,
        };
        loop {
            return match conn.read(buf) {
                Ok(0) => Err(LiveError::Cut {
                    url: self.url.clone(),
                    received: self.received,
                    expected,
                }
                .into_io()),
                Ok(n) => {
                    self.received += n as u64;
                    Ok(n)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if is_timeout(&e) => Err(LiveError::Stalled {
                    url: self.url.clone(),
                    received: self.received,
                    after: self.timeout.unwrap_or_default(),
                }
                .into_io()),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe
                    ) =>
                {
                    Err(LiveError::Cut {
                        url: self.url.clone(),
                        received: self.received,
                        expected,
                    }
                    .into_io())
                }
                Err(e) => Err(e),
            };
        }
    }

    /// Hangs up: the body is whole, nothing after it is wanted.
    fn hang_up(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            conn.get_mut().hang_up();
        }
    }
}

impl Read for Snapshot {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match &mut self.body {
                Body::Sized { remaining } => {
                    if *remaining == 0 {
                        self.hang_up();
                        return Ok(0);
                    }
                    let want = buf.len().min(usize::try_from(*remaining).unwrap_or(usize::MAX));
                    let n = self.fill(&mut buf[..want])?;
                    if let Body::Sized { remaining } = &mut self.body {
                        *remaining -= n as u64;
                        if *remaining == 0 {
                            self.hang_up();
                        }
                    }
                    return Ok(n);
                }
                Body::Marked { found, .. } => {
                    let found = *found;
                    let n = self.body.give_out(buf);
                    if n > 0 || found {
                        return Ok(n);
                    }
                    let mut chunk = std::mem::take(&mut self.chunk);
                    chunk.resize(256 << 10, 0);
                    let got = self.fill(&mut chunk);
                    let found = got.as_ref().is_ok_and(|&n| self.body.take_in(&chunk[..n]));
                    self.chunk = chunk;
                    got?;
                    if found {
                        self.hang_up();
                    }
                }
            }
        }
    }
}

impl Body {
    /// Adds bytes read to a marked body and looks for the mark, which may
    /// straddle what was held back and what came; true when it is found.
    /// Anything after the mark (a command stream) is dropped.
    fn take_in(&mut self, data: &[u8]) -> bool {
        let Body::Marked {
            mark,
            pending,
            start,
            found,
        } = self
        else {
            return false;
        };
        pending.drain(..*start);
        *start = 0;
        let searched_from = pending.len().saturating_sub(EOF_MARK_LEN - 1);
        pending.extend_from_slice(data);
        if let Some(at) = memchr::memmem::find(&pending[searched_from..], &mark[..]) {
            pending.truncate(searched_from + at);
            *found = true;
        }
        *found
    }

    /// Copies out of a marked body what may go out: everything but the
    /// last bytes that may begin the mark, or, once it is found, all.
    fn give_out(&mut self, buf: &mut [u8]) -> usize {
        let Body::Marked {
            pending,
            start,
            found,
            ..
        } = self
        else {
            return 0;
        };
        let keep = if *found { 0 } else { EOF_MARK_LEN };
        let n = (pending.len() - *start).saturating_sub(keep).min(buf.len());
        buf[..n].copy_from_slice(&pending[*start..*start + n]);
        *start += n;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a marked body over `parts` as successive reads.
    fn unmark(parts: &[&[u8]], mark: &[u8; EOF_MARK_LEN]) -> (Vec<u8>, bool) {
        let mut body = Body::Marked {
            mark: *mark,
            pending: Vec::new(),
            start: 0,
            found: false,
        };
        let mut out = Vec::new();
        let mut buf = [0u8; 7];
        let mut found = false;
        for part in parts {
            found = body.take_in(part);
            loop {
                let n = body.give_out(&mut buf);
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n]);
            }
            if found {
                break;
            }
        }
        (out, found)
    }

    #[test]
    fn the_mark_is_found_wherever_the_reads_split_it() {
        let mark = *b"0123456789abcdef0123456789abcdef01234567";
        let rdb: Vec<u8> = (0..200u8).collect();
        let wire = [&rdb[..], &mark[..], b"*1\r\n$4\r\nPING\r\n"].concat();
        for cut in 0..wire.len() {
            for cut2 in cut..wire.len().min(cut + 45) {
                let parts = [&wire[..cut], &wire[cut..cut2], &wire[cut2..]];
                let (out, found) = unmark(&parts, &mark);
                assert!(found, "cuts at {cut}, {cut2}");
                assert_eq!(out, rdb, "cuts at {cut}, {cut2}");
            }
        }
    }

    #[test]
    fn a_body_without_its_mark_never_gives_out_its_last_bytes() {
        let mark = [b'm'; EOF_MARK_LEN];
        let (out, found) = unmark(&[&[1u8; 100][..]], &mark);
        assert!(!found);
        assert_eq!(out.len(), 100 - EOF_MARK_LEN);
    }
}
