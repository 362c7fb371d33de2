//! The RESP2 replies rdblens reads (simple strings, errors, integers, bulk
//! strings, arrays) and the commands it writes (arrays of bulk strings).
//!
//! Written here rather than taken from a RESP crate: the replication
//! stream is not plain RESP (`\n` keepalives between replies, a
//! `$EOF:<mark>` body, a body of gigabytes that must stream rather than
//! be held as one frame: `crate::replicate` reads those by hand), and the
//! replies of the few commands sent around it fit in a hundred lines that
//! bound every length before allocating.

use std::io::{self, BufRead, Read, Write};

/// The longest line (status, error, length) accepted: a server's are short.
const MAX_LINE: usize = 64 << 10;
/// The deepest nesting of arrays accepted (SCAN's is 2).
const MAX_DEPTH: usize = 8;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Integer(i64),
    /// `None`: the null bulk string `$-1`.
    Bulk(Option<Vec<u8>>),
    /// `None`: the null array `*-1`.
    Array(Option<Vec<Reply>>),
}

/// What stops a reply from being read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The peer closed the connection before a whole reply.
    #[error("the connection closed")]
    Closed,
    /// Bytes that are not RESP: the start of what came.
    #[error("it answered `{0}`, which is not the Redis protocol")]
    NotResp(String),
}

impl Reply {
    /// The error text of an error reply.
    pub fn error(&self) -> Option<&str> {
        match self {
            Reply::Error(e) => Some(e),
            _ => None,
        }
    }

    /// The text of a simple or bulk string.
    pub fn text(&self) -> Option<String> {
        match self {
            Reply::Simple(s) => Some(s.clone()),
            Reply::Bulk(Some(b)) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        }
    }
}

/// Writes `args` as a command (a RESP array of bulk strings).
pub fn write_command(out: &mut impl Write, args: &[&[u8]]) -> io::Result<()> {
    write!(out, "*{}\r\n", args.len())?;
    for a in args {
        write!(out, "${}\r\n", a.len())?;
        out.write_all(a)?;
        out.write_all(b"\r\n")?;
    }
    Ok(())
}

/// Reads one reply.
pub fn read_reply(input: &mut impl BufRead) -> Result<Reply, ReadError> {
    read_nested(input, 0)
}

fn read_nested(input: &mut impl BufRead, depth: usize) -> Result<Reply, ReadError> {
    let line = read_line(input)?;
    let (kind, rest) = match line.split_first() {
        Some((k, r)) => (*k, r),
        None => return Err(not_resp(&line)),
    };
    let text = || String::from_utf8_lossy(rest).into_owned();
    match kind {
        b'+' => Ok(Reply::Simple(text())),
        b'-' => Ok(Reply::Error(text())),
        b':' => Ok(Reply::Integer(parse_int(rest).ok_or_else(|| not_resp(&line))?)),
        b'$' => {
            let len = parse_int(rest).ok_or_else(|| not_resp(&line))?;
            if len < 0 {
                return Ok(Reply::Bulk(None));
            }
            let len = usize::try_from(len).map_err(|_| not_resp(&line))?;
            // Filled as it arrives: a bogus length costs no allocation.
            let mut body = Vec::with_capacity(len.min(1 << 20));
            let got = io::copy(&mut Read::take(&mut *input, len as u64 + 2), &mut body)?;
            if got < len as u64 + 2 {
                return Err(ReadError::Closed);
            }
            if !body.ends_with(b"\r\n") {
                return Err(not_resp(&body[len..]));
            }
            body.truncate(len);
            Ok(Reply::Bulk(Some(body)))
        }
        b'*' => {
            let n = parse_int(rest).ok_or_else(|| not_resp(&line))?;
            if n < 0 {
                return Ok(Reply::Array(None));
            }
            if depth >= MAX_DEPTH {
                return Err(not_resp(&line));
            }
            let mut items = Vec::with_capacity((n as usize).min(1024));
            for _ in 0..n {
                items.push(read_nested(input, depth + 1)?);
            }
            Ok(Reply::Array(Some(items)))
        }
        _ => Err(not_resp(&line)),
    }
}

/// One `\r\n`-ended line without its end.
pub fn read_line(input: &mut impl BufRead) -> Result<Vec<u8>, ReadError> {
    let mut line = Vec::new();
    let got = Read::take(&mut *input, MAX_LINE as u64).read_until(b'\n', &mut line)?;
    if got == 0 {
        return Err(ReadError::Closed);
    }
    if !line.ends_with(b"\r\n") {
        if line.ends_with(b"\n") || line.len() >= MAX_LINE {
            return Err(not_resp(&line));
        }
        return Err(ReadError::Closed);
    }
    line.truncate(line.len() - 2);
    Ok(line)
}

fn parse_int(digits: &[u8]) -> Option<i64> {
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// The start of what came, printable, for a message.
fn not_resp(bytes: &[u8]) -> ReadError {
    ReadError::NotResp(printable(bytes))
}

/// Up to 60 characters of `bytes`, control characters escaped.
pub fn printable(bytes: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(&bytes[..bytes.len().min(60)])
        .chars()
        .flat_map(char::escape_debug)
        .collect();
    let text = text.trim_end_matches("\\r\\n").to_string();
    if bytes.len() > 60 {
        format!("{text}...")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<Reply, ReadError> {
        read_reply(&mut &bytes[..])
    }

    #[test]
    fn reads_every_kind() {
        assert_eq!(read(b"+OK\r\n").unwrap(), Reply::Simple("OK".into())); // ok: unit test
        assert_eq!(read(b"-NOPERM no\r\n").unwrap(), Reply::Error("NOPERM no".into())); // ok: unit test
        assert_eq!(read(b":-42\r\n").unwrap(), Reply::Integer(-42)); // ok: unit test
        assert_eq!(read(b"$-1\r\n").unwrap(), Reply::Bulk(None)); // ok: unit test
        assert_eq!(
            read(b"$4\r\na\r\nb\r\n").unwrap(), // ok: unit test
            Reply::Bulk(Some(b"a\r\nb".to_vec()))
        );
        assert_eq!(
            read(b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n").unwrap(), // ok: unit test
            Reply::Array(Some(vec![
                Reply::Bulk(Some(b"0".to_vec())),
                Reply::Array(Some(vec![Reply::Bulk(Some(b"k".to_vec()))]))
            ]))
        );
    }

    #[test]
    fn cut_and_foreign_replies_are_errors() {
        assert!(matches!(read(b""), Err(ReadError::Closed)));
        assert!(matches!(read(b"$10\r\nabc"), Err(ReadError::Closed)));
        assert!(matches!(read(b"+OK"), Err(ReadError::Closed)));
        match read(b"HTTP/1.1 400 Bad Request\r\n\r\n") {
            Err(ReadError::NotResp(start)) => assert_eq!(start, "HTTP/1.1 400 Bad Request"),
            other => panic!("{other:?}"), // ok: unit test
        }
        assert!(matches!(read(b"$3\r\nabcXY"), Err(ReadError::NotResp(_))));
        assert!(matches!(read(b":x\r\n"), Err(ReadError::NotResp(_))));
        let deep = "*1\r\n".repeat(20);
        assert!(matches!(read(deep.as_bytes()), Err(ReadError::NotResp(_))));
    }

    #[test]
    fn writes_commands_as_bulk_arrays() {
        let mut out = Vec::new();
        write_command(&mut out, &[b"AUTH", b"a b"]).unwrap(); // ok: unit test
        assert_eq!(out, b"*2\r\n$4\r\nAUTH\r\n$3\r\na b\r\n");
    }
}
