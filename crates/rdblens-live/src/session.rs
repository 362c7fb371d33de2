//! A command connection: connect, authenticate, send commands (one at a
//! time or pipelined) and read their replies, with the server's errors
//! turned into [`LiveError`]s that say what to do.

use std::io::{BufReader, Write};

use crate::conn::{Buffered, ConnectOptions, Stream};
use crate::error::{is_timeout, LiveError};
use crate::resp::{self, ReadError, Reply};
use crate::url::ServerUrl;

/// The ACL permissions each mode needs (docs/live.md says the same).
pub const REPLICATION_PERMISSIONS: &str = "replication needs +psync +replconf +ping (docs/live.md)";
pub const DUMP_PERMISSIONS: &str = "--via dump needs +scan +type +pttl +dump +memory, the length commands \
                                    and read access to the keys (%R~*) (docs/live.md)";

pub struct Session {
    pub(crate) url: ServerUrl,
    pub(crate) conn: Buffered,
    pub(crate) opts: ConnectOptions,
    /// Commands queued by [`Session::queue`], not sent yet.
    out: Vec<u8>,
}

/// What INFO says about the server, where the user may run INFO.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerFacts {
    /// `master` or `slave`.
    pub role: String,
    pub version: String,
    pub used_memory: Option<u64>,
    /// The copy-on-write of the last fork for a save (Redis 6.0+).
    pub rdb_last_cow_size: Option<u64>,
    /// A replica's link to its primary: `up` or `down`.
    pub master_link_status: Option<String>,
    /// Still loading its data set.
    pub loading: bool,
    /// A node of a cluster.
    pub cluster_enabled: bool,
}

impl ServerFacts {
    pub fn is_primary(&self) -> bool {
        self.role == "master"
    }

    fn from_info(text: &str) -> ServerFacts {
        let mut facts = ServerFacts::default();
        for line in text.lines() {
            let Some((name, value)) = line.trim_end().split_once(':') else {
                continue;
            };
            match name {
                "role" => facts.role = value.to_string(),
                "redis_version" | "valkey_version" if facts.version.is_empty() => {
                    facts.version = value.to_string()
                }
                "used_memory" => facts.used_memory = value.parse().ok(),
                "rdb_last_cow_size" => facts.rdb_last_cow_size = value.parse().ok(),
                "master_link_status" => facts.master_link_status = Some(value.to_string()),
                "loading" => facts.loading = value == "1",
                "cluster_enabled" => facts.cluster_enabled = value == "1",
                _ => {}
            }
        }
        facts
    }
}

impl Session {
    /// Connects to `url` and authenticates when it (or `REDISCLI_AUTH`)
    /// gives a password.
    pub fn open(url: &ServerUrl, opts: &ConnectOptions) -> Result<Session, LiveError> {
        let stream = Stream::connect(url, opts)?;
        let mut session = Session {
            url: url.clone(),
            conn: BufReader::with_capacity(1 << 16, stream),
            opts: opts.clone(),
            out: Vec::new(),
        };
        match (&url.user, &url.password) {
            (_, None) => {}
            (user, Some(password)) => {
                let mut args: Vec<&[u8]> = vec![b"AUTH"];
                if let Some(user) = user {
                    args.push(user.as_bytes());
                }
                args.push(password.as_bytes());
                let reply = session.command(&args, "AUTH")?;
                if let Some(e) = reply.error() {
                    return Err(LiveError::Auth {
                        url: url.to_string(),
                        message: e.to_string(),
                    });
                }
            }
        }
        Ok(session)
    }

    pub fn url(&self) -> &ServerUrl {
        &self.url
    }

    /// Sends one command and reads its reply (an error reply is returned
    /// as a reply: the caller knows what it means for that command).
    pub fn command(&mut self, args: &[&[u8]], what: &str) -> Result<Reply, LiveError> {
        self.queue(args);
        self.flush(what)?;
        self.read(what)
    }

    /// Queues a command (sent by [`Session::flush`]).
    pub fn queue(&mut self, args: &[&[u8]]) {
        // Writing to a Vec cannot fail.
        let _ = resp::write_command(&mut self.out, args);
    }

    /// Sends the queued commands.
    pub fn flush(&mut self, what: &str) -> Result<(), LiveError> {
        let out = std::mem::take(&mut self.out);
        let stream = self.conn.get_mut();
        stream
            .write_all(&out)
            .and_then(|()| stream.flush())
            .map_err(|e| self.io_error(e, what))
    }

    /// Reads one reply.
    pub fn read(&mut self, what: &str) -> Result<Reply, LiveError> {
        resp::read_reply(&mut self.conn).map_err(|e| self.read_error(e, what))
    }

    /// Sends `args` and fails on an error reply, by what it means.
    pub fn expect_ok(&mut self, args: &[&[u8]], what: &str, hint: &'static str) -> Result<Reply, LiveError> {
        let reply = self.command(args, what)?;
        match reply.error() {
            Some(e) => Err(self.server_error(what, e, hint)),
            None => Ok(reply),
        }
    }

    /// What INFO says, or why it could not be read (a user without +info).
    pub fn facts(&mut self) -> Result<Result<ServerFacts, String>, LiveError> {
        let reply = self.command(&[b"INFO"], "INFO")?;
        match (&reply, reply.error()) {
            (_, Some(e)) if e.starts_with("NOAUTH") || e.starts_with("WRONGPASS") => {
                Err(self.server_error("INFO", e, ""))
            }
            (_, Some(e)) => Ok(Err(e.to_string())),
            (Reply::Bulk(Some(text)), None) => Ok(Ok(ServerFacts::from_info(&String::from_utf8_lossy(text)))),
            (other, None) => Err(LiveError::NotRedis {
                url: self.url.to_string(),
                during: "INFO".into(),
                what: format!("it answered {other:?}"),
            }),
        }
    }

    /// The error reply `message` to `command`, by what it means.
    pub fn server_error(&self, command: &str, message: &str, hint: &'static str) -> LiveError {
        let url = self.url.to_string();
        let message = message.to_string();
        let code = message.split(' ').next().unwrap_or_default();
        match code {
            "NOAUTH" => LiveError::Auth {
                url,
                message: format!(
                    "{message} (the server needs a password: give it in the URL or in REDISCLI_AUTH)"
                ),
            },
            "WRONGPASS" => LiveError::Auth { url, message },
            "NOPERM" => LiveError::NoPermission {
                url,
                command: command.to_string(),
                message,
                hint,
            },
            "LOADING" => LiveError::Loading { url, message },
            "NOMASTERLINK" => LiveError::NoMasterLink { url, message },
            _ => LiveError::Server {
                url,
                command: command.to_string(),
                message,
            },
        }
    }

    pub(crate) fn io_error(&self, e: std::io::Error, during: &str) -> LiveError {
        let url = self.url.to_string();
        let during = format!("waiting for the reply to {during}");
        if is_timeout(&e) {
            LiveError::Timeout {
                url,
                during,
                after: self.opts.timeout.unwrap_or_default(),
            }
        } else if matches!(
            e.kind(),
            std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::BrokenPipe
                | std::io::ErrorKind::UnexpectedEof
        ) {
            LiveError::Closed { url, during }
        } else {
            let hint = if e.to_string().contains("CertificateRequired") {
                ": the server wants a client certificate (--tls-cert and --tls-key)"
            } else {
                ""
            };
            LiveError::Io {
                url,
                during,
                error: e,
                hint,
            }
        }
    }

    pub(crate) fn read_error(&self, e: ReadError, during: &str) -> LiveError {
        match e {
            ReadError::Io(e) => self.io_error(e, during),
            ReadError::Closed => LiveError::Closed {
                url: self.url.to_string(),
                during: format!("waiting for the reply to {during}"),
            },
            ReadError::NotResp(start) => LiveError::NotRedis {
                url: self.url.to_string(),
                during: format!("to {during}"),
                what: format!("it answered `{start}`"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_facts_info_gives() {
        let info = "# Server\r\nredis_version:7.0.15\r\n# Replication\r\nrole:master\r\n\
                    # Memory\r\nused_memory:1048576\r\n# Persistence\r\nloading:0\r\nrdb_last_cow_size:4096\r\n";
        assert_eq!(
            ServerFacts::from_info(info),
            ServerFacts {
                role: "master".into(),
                version: "7.0.15".into(),
                used_memory: Some(1 << 20),
                rdb_last_cow_size: Some(4096),
                master_link_status: None,
                loading: false,
                cluster_enabled: false,
            }
        );
    }
}
