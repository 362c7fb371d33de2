//! Server URLs as redis-cli reads them (`-u`): `redis://[user[:password]@]host[:port][/db]`,
//! `rediss://` for TLS, `unix:///path/redis.sock`. The password can also
//! come from `REDISCLI_AUTH`, as redis-cli takes it, so that it is never on
//! a command line (where `ps` shows it).

use std::fmt;
use std::path::PathBuf;

/// The default port of a Redis server.
pub const DEFAULT_PORT: u16 = 6379;

/// Where the server is and who to be there.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerUrl {
    pub transport: Transport,
    /// The ACL user (`AUTH user password`); `None`: the default user.
    pub user: Option<String>,
    /// Never printed: [`ServerUrl`]'s `Display` leaves it out.
    pub password: Option<String>,
    /// `/db`: the database a DUMP walk scans (replication copies every one).
    pub db: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp { host: String, port: u16 },
    Tls { host: String, port: u16 },
    Unix { path: PathBuf },
}

/// A URL that cannot be used, and why.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{url}: {why}")]
pub struct UrlError {
    /// The URL with any password replaced by `***`.
    pub url: String,
    pub why: String,
}

/// Whether `text` is meant as a server URL (by its scheme), not a file
/// name; a file named like one can still be read as `./redis:...`.
pub fn is_server_url(text: &str) -> bool {
    ["redis://", "rediss://", "unix://"]
        .iter()
        .any(|scheme| text.len() >= scheme.len() && text[..scheme.len()].eq_ignore_ascii_case(scheme))
}

impl ServerUrl {
    /// Parses `text`; `env_password` (the value of `REDISCLI_AUTH`) is the
    /// password when the URL has none.
    pub fn parse(text: &str, env_password: Option<String>) -> Result<ServerUrl, UrlError> {
        let fail = |why: &str| UrlError {
            url: redact(text),
            why: why.to_string(),
        };
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| fail("not a server URL: expected redis://, rediss:// or unix://"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme == "unix" {
            if rest.is_empty() || !rest.starts_with('/') {
                return Err(fail(
                    "a unix:// URL names a socket by its absolute path: unix:///path/redis.sock",
                ));
            }
            return Ok(ServerUrl {
                transport: Transport::Unix {
                    path: PathBuf::from(percent_decode(rest).map_err(|w| fail(&w))?),
                },
                user: None,
                password: env_password,
                db: 0,
            });
        }
        let tls = match scheme.as_str() {
            "redis" => false,
            "rediss" => true,
            _ => return Err(fail("unknown scheme: expected redis://, rediss:// or unix://")),
        };
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        if path.starts_with(['?', '#']) {
            return Err(fail(
                "query strings and fragments are not read: give the database as /db",
            ));
        }
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (user, password) = match userinfo {
            None => (None, None),
            Some(info) => {
                let (user, password) = match info.split_once(':') {
                    Some((u, p)) => (u, Some(p)),
                    None => (info, None),
                };
                let user = percent_decode(user).map_err(|w| fail(&w))?;
                let password = password.map(percent_decode).transpose().map_err(|w| fail(&w))?;
                // `redis://:password@host`: the default user.
                ((!user.is_empty()).then_some(user), password)
            }
        };
        let (host, port) = split_host_port(hostport).map_err(|w| fail(&w))?;
        let db = match path.trim_start_matches('/') {
            "" => 0,
            n => n.parse::<u32>().map_err(|_| {
                fail(&format!(
                    "the database after the host must be a number, not `{n}`"
                ))
            })?,
        };
        let transport = if tls {
            Transport::Tls { host, port }
        } else {
            Transport::Tcp { host, port }
        };
        Ok(ServerUrl {
            transport,
            user,
            password: password.or(env_password),
            db,
        })
    }

    /// The same server login at another node (a cluster's), TLS or not
    /// as this one.
    pub fn at_node(&self, host: &str, port: u16) -> ServerUrl {
        let host = host.to_string();
        let transport = match self.transport {
            Transport::Tls { .. } => Transport::Tls { host, port },
            _ => Transport::Tcp { host, port },
        };
        ServerUrl {
            transport,
            ..self.clone()
        }
    }

    /// The URL in full, password included (escaped): for this process's
    /// own use, never for messages ([`ServerUrl`]'s `Display` is for those).
    pub fn with_credentials(&self) -> String {
        let shown = self.to_string();
        let (scheme, rest) = shown.split_once("://").unwrap_or(("redis", &shown));
        let rest = match &self.user {
            Some(user) => rest.strip_prefix(&format!("{user}@")).unwrap_or(rest),
            None => rest,
        };
        let user = self.user.as_deref().map(percent_encode).unwrap_or_default();
        match &self.password {
            Some(p) => format!("{scheme}://{user}:{}@{rest}", percent_encode(p)),
            None if !user.is_empty() => format!("{scheme}://{user}@{rest}"),
            None => shown,
        }
    }

    /// Whether the server runs on this machine: a `unix://` socket,
    /// `localhost` or a loopback address (a host name is not resolved for
    /// this: any other counts as another machine).
    pub fn is_on_this_host(&self) -> bool {
        match &self.transport {
            Transport::Unix { .. } => true,
            Transport::Tcp { host, .. } | Transport::Tls { host, .. } => {
                host.eq_ignore_ascii_case("localhost")
                    || host
                        .trim_start_matches('[')
                        .trim_end_matches(']')
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback())
            }
        }
    }

    /// The host name a TLS certificate is checked against (SNI too).
    pub fn host(&self) -> Option<&str> {
        match &self.transport {
            Transport::Tcp { host, .. } | Transport::Tls { host, .. } => Some(host),
            Transport::Unix { .. } => None,
        }
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`.
fn split_host_port(text: &str) -> Result<(String, u16), String> {
    let (host, port) = if let Some(v6) = text.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or("an IPv6 address opened with [ is not closed with ]")?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or("expected :port after ]")?),
        };
        (host, port)
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    if host.is_empty() {
        return Err("no host name".into());
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| format!("the port must be a number from 1 to 65535, not `{p}`"))?,
    };
    Ok((host.to_string(), port))
}

/// `%XX` escapes, as in a URL's user name and password.
fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("a % in the URL is not followed by two hex digits")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "a %-escape in the URL is not UTF-8".to_string())
}

/// Every byte but the URL's unreserved ones as `%XX`.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A server URL as messages and reports name it: without its password
/// (parsed, or only redacted where it does not parse).
pub fn display_name(text: &str) -> String {
    match ServerUrl::parse(text, None) {
        Ok(url) => url.to_string(),
        Err(_) => redact(text),
    }
}

/// `text` with the password of a `scheme://user:password@` URL replaced
/// by `***`: for messages about a URL that may not parse.
pub fn redact(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..end].rfind('@') else {
        return text.to_string();
    };
    match rest[..at].split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{}", &rest[at + 1..]),
        None => text.to_string(),
    }
}

/// The URL without its password: what messages and reports name.
impl fmt::Display for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let user = self.user.as_deref().map(|u| format!("{u}@")).unwrap_or_default();
        let db = if self.db == 0 {
            String::new()
        } else {
            format!("/{}", self.db)
        };
        let bracket = |h: &str| {
            if h.contains(':') {
                format!("[{h}]")
            } else {
                h.to_string()
            }
        };
        match &self.transport {
            Transport::Tcp { host, port } => write!(f, "redis://{user}{}:{port}{db}", bracket(host)),
            Transport::Tls { host, port } => write!(f, "rediss://{user}{}:{port}{db}", bracket(host)),
            Transport::Unix { path } => write!(f, "unix://{}", path.display()),
        }
    }
}

impl fmt::Debug for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ServerUrl({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(host: &str, port: u16) -> Transport {
        Transport::Tcp {
            host: host.into(),
            port,
        }
    }

    #[test]
    fn parses_every_documented_shape() {
        let u = ServerUrl::parse("redis://127.0.0.1", None).unwrap(); // ok: unit test
        assert_eq!(
            (u.transport, u.user, u.password, u.db),
            (tcp("127.0.0.1", 6379), None, None, 0)
        );
        let u = ServerUrl::parse("redis://alice:s%40cret@cache.internal:7000/3", None).unwrap(); // ok: unit test
        assert_eq!(u.transport, tcp("cache.internal", 7000));
        assert_eq!(u.user.as_deref(), Some("alice"));
        assert_eq!(u.password.as_deref(), Some("s@cret"));
        assert_eq!(u.db, 3);
        assert_eq!(u.to_string(), "redis://alice@cache.internal:7000/3");
        let u = ServerUrl::parse("redis://:pw@h", None).unwrap(); // ok: unit test
        assert_eq!((u.user, u.password.as_deref()), (None, Some("pw")));
        let u = ServerUrl::parse("REDISS://[::1]:6380", None).unwrap(); // ok: unit test
        assert_eq!(
            u.transport,
            Transport::Tls {
                host: "::1".into(),
                port: 6380
            }
        );
        assert_eq!(u.to_string(), "rediss://[::1]:6380");
        let u = ServerUrl::parse("unix:///run/redis/redis.sock", Some("env".into())).unwrap(); // ok: unit test
        assert_eq!(
            u.transport,
            Transport::Unix {
                path: "/run/redis/redis.sock".into()
            }
        );
        assert_eq!(u.password.as_deref(), Some("env"));
    }

    #[test]
    fn the_url_password_wins_over_the_environment() {
        let u = ServerUrl::parse("redis://u:url@h", Some("env".into())).unwrap(); // ok: unit test
        assert_eq!(u.password.as_deref(), Some("url"));
        let u = ServerUrl::parse("redis://u@h", Some("env".into())).unwrap(); // ok: unit test
        assert_eq!(u.password.as_deref(), Some("env"));
    }

    #[test]
    fn bad_urls_say_why_without_the_password() {
        let err = |t: &str| ServerUrl::parse(t, None).unwrap_err().to_string();
        assert_eq!(
            err("redis://u:secret@h:99999"),
            "redis://u:***@h:99999: the port must be a number from 1 to 65535, not `99999`"
        );
        assert_eq!(
            err("redis://h/x"),
            "redis://h/x: the database after the host must be a number, not `x`"
        );
        assert_eq!(err("redis://:p@"), "redis://:***@: no host name");
        assert_eq!(
            err("unix://relative.sock"),
            "unix://relative.sock: a unix:// URL names a socket by its absolute path: unix:///path/redis.sock"
        );
        assert_eq!(
            err("http://h"),
            "http://h: unknown scheme: expected redis://, rediss:// or unix://"
        );
    }

    #[test]
    fn a_node_url_keeps_the_login_and_parses_back() {
        let u = ServerUrl::parse("rediss://al%20ice:p@ss:w@seed:7000/0", None).unwrap(); // ok: unit test
        let node = u.at_node("10.0.0.2", 7003);
        assert_eq!(node.to_string(), "rediss://al ice@10.0.0.2:7003");
        let full = node.with_credentials();
        assert_eq!(full, "rediss://al%20ice:p%40ss%3Aw@10.0.0.2:7003");
        assert_eq!(ServerUrl::parse(&full, None).unwrap(), node); // ok: unit test
        let plain = ServerUrl::parse("redis://h:1", None).unwrap(); // ok: unit test
        assert_eq!(plain.with_credentials(), "redis://h:1");
    }

    #[test]
    fn servers_on_this_machine_are_sockets_localhost_and_loopback() {
        let local = |t: &str| ServerUrl::parse(t, None).unwrap().is_on_this_host(); // ok: unit test
        for t in [
            "unix:///run/redis.sock",
            "redis://localhost",
            "redis://127.0.0.1:6380",
            "rediss://127.4.5.6",
            "redis://[::1]:7000",
        ] {
            assert!(local(t), "{t}");
        }
        for t in [
            "redis://10.0.0.5",
            "redis://cache.internal:6379",
            "rediss://[2001:db8::1]:6380",
        ] {
            assert!(!local(t), "{t}");
        }
    }

    #[test]
    fn tells_urls_from_file_names() {
        assert!(is_server_url("redis://h"));
        assert!(is_server_url("Rediss://h"));
        assert!(is_server_url("unix:///s"));
        assert!(!is_server_url("dump.rdb"));
        assert!(!is_server_url("./redis://h"));
        assert!(!is_server_url("redis:"));
    }
}
