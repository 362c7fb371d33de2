//! `--via dump`: for servers that refuse replication (managed services,
//! SYNC and PSYNC renamed away), every key is read with SCAN, then TYPE,
//! PTTL, MEMORY USAGE and OBJECT FREQ or IDLETIME, then DUMP, pipelined a
//! batch of keys at a time and paced to `--rate` commands per second. Each
//! DUMP payload is an RDB value (`type byte, value, 2-byte RDB version,
//! CRC64`): its version and CRC are checked, and it is written into an RDB
//! stream (header, aux fields, the key's expiry, its IDLE or FREQ, type
//! byte, key, value; the CRC trailer) so the analysis and every report read
//! it as they read a dump file.
//!
//! The server tracks either LFU counters (an LFU `maxmemory-policy`) or
//! idle times (any other), and OBJECT answers only the one it tracks:
//! `CONFIG GET maxmemory-policy` tells which, or, where CONFIG is not
//! allowed, OBJECT FREQ's refusal (`An LFU maxmemory policy is not
//! selected`) does. Where OBJECT is not allowed the walk goes on without
//! them ([`WalkNotes::access_unread`]). OBJECT is asked before DUMP: DUMP
//! touches the key (its idle time restarts, its LFU counter may grow),
//! OBJECT, TYPE, PTTL and MEMORY USAGE do not.
//!
//! Keys whose MEMORY USAGE is above the size guard are not serialised (a
//! DUMP reply is held whole in memory, on the server and here): their
//! type, length (the type's length command) and MEMORY USAGE are listed in
//! [`WalkNotes`] instead, and left out of the stream.
//!
//! A walk is not a point-in-time snapshot: keys written during it may be
//! seen in either state, or twice (SCAN's guarantee: a key present for the
//! whole walk is returned at least once; duplicates are dropped here by
//! name), and expiries are as of when each key was read.

use std::collections::HashSet;
use std::io::{self, Read};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdblens_parser::Crc64Digest;

use crate::error::LiveError;
use crate::resp::Reply;
use crate::session::{Session, DUMP_PERMISSIONS};

/// The RDB version of a walk that found no key (any reader knows it).
const EMPTY_VERSION: u16 = 9;

/// Keys asked of SCAN at a time (its COUNT).
const SCAN_COUNT: &[u8] = b"1000";

/// OBJECT FREQ's refusal when the server tracks idle times instead.
const NOT_LFU: &str = "An LFU maxmemory policy is not selected";
/// OBJECT IDLETIME's refusal when the server tracks LFU counters instead.
const LFU_SELECTED: &str = "An LFU maxmemory policy is selected";

/// What the server tracks of each key's use, by its `maxmemory-policy`,
/// and the walk reads with OBJECT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessFigure {
    /// LFU counters (an LFU policy), by OBJECT FREQ: RDB opcode FREQ.
    Freq,
    /// Idle times in seconds (any other policy), by OBJECT IDLETIME: RDB
    /// opcode IDLE.
    Idle,
}

impl AccessFigure {
    fn subcommand(self) -> &'static [u8] {
        match self {
            AccessFigure::Freq => b"FREQ",
            AccessFigure::Idle => b"IDLETIME",
        }
    }
}

/// Whether and how the walk reads OBJECT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AccessMode {
    /// CONFIG was not allowed: OBJECT FREQ on the next key tells.
    Unknown,
    Read(AccessFigure),
    /// OBJECT was refused (not allowed, or renamed away): the keys go
    /// without.
    Off,
}

#[derive(Clone, Debug)]
pub struct DumpOptions {
    /// Commands per second at most; `None`: as fast as the server answers.
    pub rate: Option<u32>,
    /// Keys whose MEMORY USAGE is above this are measured, not serialised.
    pub max_value_bytes: u64,
}

/// A key left out of the stream by the size guard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeasuredKey {
    pub key: Vec<u8>,
    pub kind: String,
    /// MEMORY USAGE, in bytes.
    pub memory: u64,
    /// Elements (or a string's bytes), by the type's length command.
    pub length: Option<u64>,
}

/// What a walk saw besides the keys it streamed.
#[derive(Clone, Debug, Default)]
pub struct WalkNotes {
    pub keys: u64,
    /// Keys SCAN named that were gone (or expired) by the time they were read.
    pub vanished: u64,
    pub measured: Vec<MeasuredKey>,
    pub commands: u64,
    pub elapsed: Duration,
    /// The walk reached SCAN's end.
    pub finished: bool,
    /// What OBJECT gave for the keys (the last, if the server's policy
    /// changed during the walk); `None` when it gave nothing.
    pub access: Option<AccessFigure>,
    /// Why idle times and LFU counters were not read (OBJECT's refusal).
    pub access_unread: Option<String>,
}

/// The RDB stream of a DUMP walk, produced as it is read.
pub struct DumpWalk {
    session: Session,
    opts: DumpOptions,
    db: u32,
    aux: Vec<(String, String)>,
    /// SCAN's cursor; `None` once SCAN returned 0.
    cursor: Option<Vec<u8>>,
    seen: HashSet<Vec<u8>>,
    /// Bytes made and not read yet: `out[at..]`.
    out: Vec<u8>,
    at: usize,
    header_written: bool,
    /// The RDB version of the first payload (every payload of one server
    /// has the same), for the magic.
    version: Option<u16>,
    access: AccessMode,
    ended: bool,
    crc: Crc64Digest,
    started: Instant,
    notes: Arc<Mutex<WalkNotes>>,
}

impl DumpWalk {
    /// Starts a walk of database `session.url().db`. `facts` (INFO's
    /// version and used_memory, where allowed) go into the aux fields.
    pub fn start(
        mut session: Session,
        opts: DumpOptions,
        redis_version: Option<String>,
        used_memory: Option<u64>,
    ) -> Result<DumpWalk, LiveError> {
        // A cluster replica answers key commands only after READONLY (it
        // redirects them to its primary otherwise); elsewhere it is refused,
        // which is fine.
        session.command(&[b"READONLY"], "READONLY")?;
        let db = session.url().db;
        if db != 0 {
            session.expect_ok(
                &[b"SELECT", db.to_string().as_bytes()],
                "SELECT",
                DUMP_PERMISSIONS,
            )?;
        }
        let access = access_mode(&mut session)?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let mut aux = vec![
            ("redis-bits".to_string(), "64".to_string()),
            ("ctime".to_string(), now.as_secs().to_string()),
        ];
        if let Some(v) = redis_version.filter(|v| !v.is_empty()) {
            aux.insert(0, ("redis-ver".to_string(), v));
        }
        if let Some(m) = used_memory {
            aux.push(("used-mem".to_string(), m.to_string()));
        }
        Ok(DumpWalk {
            session,
            opts,
            db,
            aux,
            cursor: Some(b"0".to_vec()),
            seen: HashSet::new(),
            out: Vec::new(),
            at: 0,
            header_written: false,
            version: None,
            access,
            ended: false,
            crc: Crc64Digest::new(),
            started: Instant::now(),
            notes: Arc::new(Mutex::new(WalkNotes::default())),
        })
    }

    /// The walk's notes, filled as it goes (final once the stream ended).
    pub fn notes(&self) -> Arc<Mutex<WalkNotes>> {
        Arc::clone(&self.notes)
    }

    fn note(&self, f: impl FnOnce(&mut WalkNotes)) {
        if let Ok(mut n) = self.notes.lock() {
            f(&mut n);
        }
    }

    /// Waits so that `commands` more keep the walk within `--rate`.
    fn pace(&mut self, commands: u64) {
        let Some(rate) = self.opts.rate.filter(|&r| r > 0) else {
            return;
        };
        let sent = self.notes.lock().map(|n| n.commands).unwrap_or(0);
        let due = Duration::from_secs_f64((sent + commands) as f64 / f64::from(rate));
        if let Some(wait) = due.checked_sub(self.started.elapsed()) {
            std::thread::sleep(wait);
        }
    }

    /// Sends `commands` pipelined and reads their replies.
    fn round_trip(&mut self, commands: &[Vec<Vec<u8>>], what: &str) -> Result<Vec<Reply>, LiveError> {
        self.pace(commands.len() as u64);
        for c in commands {
            let args: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
            self.session.queue(&args);
        }
        self.session.flush(what)?;
        let mut replies = Vec::with_capacity(commands.len());
        for _ in commands {
            replies.push(self.session.read(what)?);
        }
        self.note(|n| n.commands += commands.len() as u64);
        Ok(replies)
    }

    /// One SCAN step and the keys it named, into `out`.
    fn next_batch(&mut self) -> Result<(), LiveError> {
        let Some(cursor) = self.cursor.take() else {
            return Ok(());
        };
        let reply = self.round_trip(
            &[vec![
                b"SCAN".to_vec(),
                cursor,
                b"COUNT".to_vec(),
                SCAN_COUNT.to_vec(),
            ]],
            "SCAN",
        )?;
        let (next, keys) = self.scan_reply(&reply[0])?;
        self.cursor = (next != b"0").then_some(next);
        let keys: Vec<Vec<u8>> = keys.into_iter().filter(|k| self.seen.insert(k.clone())).collect();
        if keys.is_empty() {
            return Ok(());
        }
        if self.access == AccessMode::Unknown {
            self.probe_access(&keys[0])?;
        }
        let figure = match self.access {
            AccessMode::Read(figure) => Some(figure),
            AccessMode::Unknown | AccessMode::Off => None,
        };
        let per_key = if figure.is_some() { 4 } else { 3 };
        let mut asks = Vec::with_capacity(keys.len() * per_key);
        for k in &keys {
            asks.push(vec![b"TYPE".to_vec(), k.clone()]);
            asks.push(vec![b"PTTL".to_vec(), k.clone()]);
            asks.push(vec![b"MEMORY".to_vec(), b"USAGE".to_vec(), k.clone()]);
            if let Some(figure) = figure {
                asks.push(vec![b"OBJECT".to_vec(), figure.subcommand().to_vec(), k.clone()]);
            }
        }
        let what = match figure {
            Some(AccessFigure::Freq) => "TYPE, PTTL, MEMORY USAGE and OBJECT FREQ",
            Some(AccessFigure::Idle) => "TYPE, PTTL, MEMORY USAGE and OBJECT IDLETIME",
            None => "TYPE, PTTL and MEMORY USAGE",
        };
        let facts = self.round_trip(&asks, what)?;
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let mut wanted = Vec::new();
        let mut big = Vec::new();
        for (k, f) in keys.into_iter().zip(facts.chunks(per_key)) {
            let kind = self.simple(&f[0], "TYPE")?;
            let ttl = self.integer(&f[1], "PTTL")?;
            if kind == "none" || ttl == -2 {
                self.note(|n| n.vanished += 1);
                continue;
            }
            let memory = match &f[2] {
                Reply::Integer(m) => *m as u64,
                // Gone between TYPE and MEMORY USAGE.
                Reply::Bulk(None) => {
                    self.note(|n| n.vanished += 1);
                    continue;
                }
                other => return Err(self.unexpected(other, "MEMORY USAGE")),
            };
            let used = match (figure, f.get(3)) {
                (Some(figure), Some(reply)) => self.access_reply(figure, reply)?,
                _ => None,
            };
            let expires = (ttl >= 0).then(|| now_ms + ttl);
            if memory > self.opts.max_value_bytes {
                big.push((k, kind, memory));
            } else {
                wanted.push((k, expires, used));
            }
        }
        self.measure(big)?;
        let asks: Vec<Vec<Vec<u8>>> = wanted
            .iter()
            .map(|(k, _, _)| vec![b"DUMP".to_vec(), k.clone()])
            .collect();
        let payloads = self.round_trip(&asks, "DUMP")?;
        for ((key, expires, used), payload) in wanted.into_iter().zip(payloads) {
            match payload {
                Reply::Bulk(Some(p)) => {
                    let (version, value) = check_payload(&p).map_err(|why| LiveError::Server {
                        url: self.session.url().to_string(),
                        command: format!("DUMP {}", crate::resp::printable(&key)),
                        message: why,
                    })?;
                    self.version.get_or_insert(version);
                    self.write_record(&key, expires, used, p[0], value);
                    self.note(|n| n.keys += 1);
                }
                Reply::Bulk(None) => self.note(|n| n.vanished += 1),
                other => return Err(self.unexpected(&other, "DUMP")),
            }
        }
        Ok(())
    }

    /// Without CONFIG: OBJECT FREQ on `key` says whether the server tracks
    /// LFU counters (a number), idle times (its refusal [`NOT_LFU`]), or
    /// the user may not ask (any other error). A key gone meanwhile tells
    /// nothing: the next batch asks again.
    fn probe_access(&mut self, key: &[u8]) -> Result<(), LiveError> {
        let ask = vec![b"OBJECT".to_vec(), b"FREQ".to_vec(), key.to_vec()];
        let reply = self.round_trip(&[ask], "OBJECT FREQ")?;
        match &reply[0] {
            Reply::Integer(_) => self.access = AccessMode::Read(AccessFigure::Freq),
            Reply::Bulk(None) => {}
            Reply::Error(e) if e.contains(NOT_LFU) => self.access = AccessMode::Read(AccessFigure::Idle),
            Reply::Error(e) => self.access_off("OBJECT FREQ", e),
            other => return Err(self.unexpected(other, "OBJECT FREQ")),
        }
        Ok(())
    }

    /// A key's idle time or LFU counter from OBJECT's `reply`. A refusal
    /// naming the other figure (the policy changed during the walk)
    /// switches to it for the next batches; any other stops asking.
    fn access_reply(
        &mut self,
        figure: AccessFigure,
        reply: &Reply,
    ) -> Result<Option<(AccessFigure, u64)>, LiveError> {
        match reply {
            Reply::Integer(n) => {
                self.note(|notes| notes.access = Some(figure));
                Ok(Some((figure, (*n).max(0) as u64)))
            }
            // Gone since MEMORY USAGE: DUMP will say so.
            Reply::Bulk(None) => Ok(None),
            Reply::Error(e) if e.contains(NOT_LFU) => {
                self.access = AccessMode::Read(AccessFigure::Idle);
                Ok(None)
            }
            Reply::Error(e) if e.contains(LFU_SELECTED) => {
                self.access = AccessMode::Read(AccessFigure::Freq);
                Ok(None)
            }
            Reply::Error(e) => {
                let command = match figure {
                    AccessFigure::Freq => "OBJECT FREQ",
                    AccessFigure::Idle => "OBJECT IDLETIME",
                };
                self.access_off(command, e);
                Ok(None)
            }
            other => Err(self.unexpected(other, "OBJECT")),
        }
    }

    /// Stops asking OBJECT, noting why once.
    fn access_off(&mut self, command: &str, message: &str) {
        if self.access == AccessMode::Off {
            return;
        }
        self.access = AccessMode::Off;
        let why = if message.starts_with("NOPERM") {
            format!("the user may not run {command} ({message})")
        } else {
            format!("{command} was refused ({message})")
        };
        self.note(|n| n.access_unread = Some(why));
    }

    /// The length of each key too big to DUMP, by its type's command.
    fn measure(&mut self, big: Vec<(Vec<u8>, String, u64)>) -> Result<(), LiveError> {
        if big.is_empty() {
            return Ok(());
        }
        let asks: Vec<Vec<Vec<u8>>> = big
            .iter()
            .map(|(k, kind, _)| {
                let command: &[u8] = match kind.as_str() {
                    "string" => b"STRLEN",
                    "list" => b"LLEN",
                    "set" => b"SCARD",
                    "zset" => b"ZCARD",
                    "hash" => b"HLEN",
                    "stream" => b"XLEN",
                    _ => b"EXISTS",
                };
                vec![command.to_vec(), k.clone()]
            })
            .collect();
        let lengths = self.round_trip(&asks, "the length commands")?;
        for ((key, kind, memory), length) in big.into_iter().zip(lengths) {
            let length = match (&length, kind.as_str()) {
                (Reply::Integer(n), "string" | "list" | "set" | "zset" | "hash" | "stream") => {
                    Some(*n as u64)
                }
                _ => None,
            };
            self.note(|n| {
                n.measured.push(MeasuredKey {
                    key,
                    kind,
                    memory,
                    length,
                })
            });
        }
        Ok(())
    }

    fn scan_reply(&self, reply: &Reply) -> Result<(Vec<u8>, Vec<Vec<u8>>), LiveError> {
        if let Some(e) = reply.error() {
            return Err(self.session.server_error("SCAN", e, DUMP_PERMISSIONS));
        }
        if let Reply::Array(Some(parts)) = reply {
            if let [Reply::Bulk(Some(cursor)), Reply::Array(Some(keys))] = &parts[..] {
                let keys = keys
                    .iter()
                    .map(|k| match k {
                        Reply::Bulk(Some(k)) => Ok(k.clone()),
                        other => Err(self.unexpected(other, "SCAN")),
                    })
                    .collect::<Result<_, _>>()?;
                return Ok((cursor.clone(), keys));
            }
        }
        Err(self.unexpected(reply, "SCAN"))
    }

    fn simple(&self, reply: &Reply, command: &str) -> Result<String, LiveError> {
        match reply {
            Reply::Simple(s) => Ok(s.clone()),
            Reply::Error(e) => Err(self.session.server_error(command, e, DUMP_PERMISSIONS)),
            other => Err(self.unexpected(other, command)),
        }
    }

    fn integer(&self, reply: &Reply, command: &str) -> Result<i64, LiveError> {
        match reply {
            Reply::Integer(n) => Ok(*n),
            Reply::Error(e) => Err(self.session.server_error(command, e, DUMP_PERMISSIONS)),
            other => Err(self.unexpected(other, command)),
        }
    }

    fn unexpected(&self, reply: &Reply, command: &str) -> LiveError {
        match reply.error() {
            Some(e) => self.session.server_error(command, e, DUMP_PERMISSIONS),
            None => LiveError::NotRedis {
                url: self.session.url().to_string(),
                during: format!("to {command}"),
                what: format!("it answered {reply:?}"),
            },
        }
    }

    fn emit(&mut self, bytes: &[u8]) {
        self.crc.update(bytes);
        self.out.extend_from_slice(bytes);
    }

    /// The magic (the RDB version of the first payload: every payload of
    /// one server has its own), the aux fields and the database.
    fn write_header(&mut self, version: u16) {
        let magic = if version >= 80 {
            format!("VALKEY{version:03}")
        } else {
            format!("REDIS{version:04}")
        };
        let mut head = magic.into_bytes();
        for (name, value) in &self.aux {
            head.push(0xfa);
            rdb_string(&mut head, name.as_bytes());
            rdb_string(&mut head, value.as_bytes());
        }
        head.push(0xfe);
        rdb_length(&mut head, u64::from(self.db));
        // Written ahead of the records it precedes.
        let records = std::mem::take(&mut self.out);
        self.emit(&head);
        self.crc.update(&records);
        self.out.extend_from_slice(&records);
        self.header_written = true;
    }

    /// One key as a server's own save writes it: its expiry, its idle
    /// time or LFU counter, then type, key and value.
    fn write_record(
        &mut self,
        key: &[u8],
        expires_ms: Option<i64>,
        used: Option<(AccessFigure, u64)>,
        kind: u8,
        value: &[u8],
    ) {
        let mut record = Vec::with_capacity(key.len() + value.len() + 26);
        if let Some(ms) = expires_ms {
            record.push(0xfc);
            record.extend_from_slice(&ms.to_le_bytes());
        }
        if let Some(used) = used {
            access_opcode(&mut record, used);
        }
        record.push(kind);
        rdb_string(&mut record, key);
        record.extend_from_slice(value);
        if self.header_written {
            self.emit(&record);
        } else {
            // Summed into the CRC once the header before it is.
            self.out.extend_from_slice(&record);
        }
    }

    /// Produces the next bytes: a batch of records, or the end.
    fn produce(&mut self) -> Result<(), LiveError> {
        while self.at == self.out.len() && !self.ended {
            self.out.clear();
            self.at = 0;
            if !self.header_written {
                // Batches until the first key tells the RDB version.
                while self.version.is_none() && self.cursor.is_some() {
                    self.next_batch()?;
                }
                self.write_header(self.version.unwrap_or(EMPTY_VERSION));
                continue;
            }
            if self.cursor.is_some() {
                self.next_batch()?;
                continue;
            }
            self.emit(&[0xff]);
            let crc = std::mem::replace(&mut self.crc, Crc64Digest::new()).finish();
            self.out.extend_from_slice(&crc.to_le_bytes());
            self.ended = true;
            let elapsed = self.started.elapsed();
            self.note(|n| {
                n.finished = true;
                n.elapsed = elapsed;
            });
        }
        Ok(())
    }
}

impl Read for DumpWalk {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Err(e) = self.produce() {
            // The walk cannot go on: the stream ends with the error.
            self.ended = true;
            self.out.clear();
            self.at = 0;
            return Err(e.into_io());
        }
        let n = (self.out.len() - self.at).min(buf.len());
        buf[..n].copy_from_slice(&self.out[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// What OBJECT will answer on this server, by `CONFIG GET
/// maxmemory-policy`: LFU counters under an LFU policy, idle times under
/// any other. [`AccessMode::Unknown`] where CONFIG is not allowed (or
/// renamed away, as managed services do).
fn access_mode(session: &mut Session) -> Result<AccessMode, LiveError> {
    let reply = session.command(&[b"CONFIG", b"GET", b"maxmemory-policy"], "CONFIG GET")?;
    let policy = match &reply {
        Reply::Array(Some(parts)) => match parts.as_slice() {
            [_, Reply::Bulk(Some(policy))] => Some(String::from_utf8_lossy(policy).into_owned()),
            _ => None,
        },
        _ => None,
    };
    Ok(match policy {
        Some(p) if p.contains("lfu") => AccessMode::Read(AccessFigure::Freq),
        Some(_) => AccessMode::Read(AccessFigure::Idle),
        None => AccessMode::Unknown,
    })
}

/// Checks a DUMP payload (`type byte, value, RDB version as 2 bytes
/// little-endian, CRC64 of all before as 8 bytes little-endian`, as the
/// server's `createDumpPayload` writes it) and returns its RDB version and
/// its value (what follows the type byte, before the version).
pub fn check_payload(payload: &[u8]) -> Result<(u16, &[u8]), String> {
    if payload.len() < 11 {
        return Err(format!("a DUMP payload of {} bytes is too short", payload.len()));
    }
    let (body, crc) = payload.split_at(payload.len() - 8);
    let stored = u64::from_le_bytes(crc.try_into().unwrap_or_default());
    let computed = rdblens_parser::crc64(body);
    if stored != computed {
        return Err(format!(
            "the DUMP payload's CRC64 is {stored:#018x}, its bytes sum to {computed:#018x}: damaged in transit"
        ));
    }
    let version = u16::from_le_bytes([body[body.len() - 2], body[body.len() - 1]]);
    Ok((version, &body[1..body.len() - 2]))
}

/// A key's idle time or LFU counter as the opcode before it, as the
/// server's rdbSaveKeyValuePair writes it.
fn access_opcode(out: &mut Vec<u8>, (figure, n): (AccessFigure, u64)) {
    match figure {
        // IDLE: the seconds as an RDB length.
        AccessFigure::Idle => {
            out.push(0xf8);
            rdb_length(out, n);
        }
        // FREQ: the counter as one byte (it is 0-255 on the server).
        AccessFigure::Freq => {
            out.push(0xf9);
            out.push(n.min(255) as u8);
        }
    }
}

/// An RDB length: 6 bits, 14 bits, 32 or 64 bits big-endian.
fn rdb_length(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else if n <= u64::from(u32::MAX) {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// An RDB string: its length, then its bytes.
fn rdb_string(out: &mut Vec<u8>, s: &[u8]) {
    rdb_length(out, s.len() as u64);
    out.extend_from_slice(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `DUMP mykey` of `SET mykey 10` on Redis 5 (RDB 9), from the DUMP
    /// command's documentation.
    const DOCUMENTED: &[u8] = b"\x00\xc0\n\t\x00\xbem\x06\x89Z(\x00\n";

    #[test]
    fn a_payload_gives_its_version_and_value_after_its_crc_is_checked() {
        assert_eq!(check_payload(DOCUMENTED), Ok((9, &b"\xc0\n"[..])));
        let mut damaged = DOCUMENTED.to_vec();
        damaged[1] ^= 1;
        assert_eq!(
            check_payload(&damaged).unwrap_err(),
            "the DUMP payload's CRC64 is 0x0a00285a89066dbe, its bytes sum to 0x86e14039057f0eb8: damaged in transit"
        );
        assert_eq!(
            check_payload(b"\x00\x01").unwrap_err(),
            "a DUMP payload of 2 bytes is too short"
        );
    }

    #[test]
    fn idle_times_and_lfu_counters_are_written_as_their_opcodes() {
        let enc = |used| {
            let mut v = Vec::new();
            access_opcode(&mut v, used);
            v
        };
        assert_eq!(enc((AccessFigure::Idle, 70)), [0xf8, 0x40, 70]);
        assert_eq!(enc((AccessFigure::Idle, 5)), [0xf8, 5]);
        assert_eq!(enc((AccessFigure::Idle, 100_000)), [0xf8, 0x80, 0, 1, 0x86, 0xa0]);
        assert_eq!(enc((AccessFigure::Freq, 12)), [0xf9, 12]);
        assert_eq!(enc((AccessFigure::Freq, 255)), [0xf9, 255]);
    }

    #[test]
    fn lengths_take_the_shortest_encoding() {
        let enc = |n| {
            let mut v = Vec::new();
            rdb_length(&mut v, n);
            v
        };
        assert_eq!(enc(63), [63]);
        assert_eq!(enc(64), [0x40, 64]);
        assert_eq!(enc(16383), [0x7f, 0xff]);
        assert_eq!(enc(16384), [0x80, 0, 0, 0x40, 0]);
        assert_eq!(enc(1 << 32), [0x81, 0, 0, 0, 1, 0, 0, 0, 0]);
    }
}
