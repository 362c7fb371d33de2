use super::{le_u32, BlobError, BlobResult};
use crate::error::ErrorKind;

const END: u8 = 0xff;
const BIG_LEN: u8 = 254;

/// A zipmap (Redis 2.4 small hashes): field/value pairs.
#[derive(Clone, Copy, Debug)]
pub struct Zipmap<'b> {
    bytes: &'b [u8],
}

fn bad(pos: usize, msg: String) -> BlobError {
    BlobError {
        pos,
        kind: ErrorKind::BadZipmap(msg),
    }
}

impl<'b> Zipmap<'b> {
    /// Checks that the blob has a count byte and ends with the end marker.
    pub fn new(bytes: &'b [u8]) -> BlobResult<Self> {
        if bytes.len() < 2 {
            return Err(bad(
                0,
                format!("{} bytes is shorter than the 2-byte minimum", bytes.len()),
            ));
        }
        if bytes[bytes.len() - 1] != END {
            return Err(bad(bytes.len() - 1, "missing end marker 0xff".into()));
        }
        Ok(Zipmap { bytes })
    }

    /// The pair count in the header, when below 254.
    pub fn header_count(&self) -> Option<u8> {
        (self.bytes[0] < BIG_LEN).then_some(self.bytes[0])
    }

    /// The whole blob, count byte and end marker included.
    pub fn bytes(&self) -> &'b [u8] {
        self.bytes
    }

    /// The (field, value) pairs in order, each checked against the bytes that remain.
    pub fn iter(&self) -> ZipmapIter<'b> {
        ZipmapIter {
            bytes: self.bytes,
            pos: 1,
            seen: 0,
            done: false,
        }
    }
}

/// (field, value) pairs of a zipmap.
pub struct ZipmapIter<'b> {
    bytes: &'b [u8],
    pos: usize,
    seen: usize,
    done: bool,
}

impl<'b> ZipmapIter<'b> {
    fn len_at(&self, p: usize) -> BlobResult<(usize, usize)> {
        let b = self.bytes;
        match b.get(p) {
            Some(&n) if n < BIG_LEN => Ok((usize::from(n), 1)),
            Some(&BIG_LEN) if p + 5 <= b.len() => Ok((le_u32(b, p + 1) as usize, 5)),
            _ => Err(bad(p, "length runs past the end of the blob".into())),
        }
    }

    fn slice(&self, p: usize, n: usize) -> BlobResult<&'b [u8]> {
        self.bytes
            .get(p..p.saturating_add(n))
            .filter(|_| p + n < self.bytes.len())
            .ok_or_else(|| bad(p, format!("{n} bytes run past the end of the blob")))
    }

    fn decode(&mut self) -> BlobResult<(&'b [u8], &'b [u8])> {
        let (klen, w) = self.len_at(self.pos)?;
        let key = self.slice(self.pos + w, klen)?;
        let mut p = self.pos + w + klen;
        let (vlen, w) = self.len_at(p)?;
        p += w;
        let free = usize::from(*self.bytes.get(p).ok_or_else(|| bad(p, "truncated".into()))?);
        let value = self.slice(p + 1, vlen)?;
        p += 1 + vlen;
        self.slice(p, free)?;
        self.pos = p + free;
        Ok((key, value))
    }
}

impl<'b> Iterator for ZipmapIter<'b> {
    type Item = BlobResult<(&'b [u8], &'b [u8])>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.bytes.get(self.pos) == Some(&END) {
            self.done = true;
            if self.pos != self.bytes.len() - 1 {
                return Some(Err(bad(self.pos, "end marker before the end of the blob".into())));
            }
            let header = self.bytes[0];
            if header < BIG_LEN && usize::from(header) != self.seen {
                return Some(Err(bad(
                    0,
                    format!("header counts {header} pairs, the walk found {}", self.seen),
                )));
            }
            return None;
        }
        match self.decode() {
            Ok(pair) => {
                self.seen += 1;
                Some(Ok(pair))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_and_hostile() {
        // 2 pairs: "a" => "xy" (1 free byte), "bc" => "" ; end.
        let zm = [2, 1, b'a', 2, 1, b'x', b'y', 0, 2, b'b', b'c', 0, 0, END];
        let pairs: Vec<_> = Zipmap::new(&zm)
            .unwrap() // ok: unit test
            .iter()
            .collect::<Result<_, _>>()
            .unwrap(); // ok: unit test
        assert_eq!(pairs, vec![(&b"a"[..], &b"xy"[..]), (&b"bc"[..], &b""[..])]);
        let mut count = zm;
        count[0] = 3;
        assert!(Zipmap::new(&count).unwrap().iter().any(|r| r.is_err())); // ok: unit test
        let mut long = zm;
        long[1] = 200;
        assert!(Zipmap::new(&long).unwrap().iter().any(|r| r.is_err())); // ok: unit test
        let mut big = zm;
        big[1] = BIG_LEN;
        assert!(Zipmap::new(&big).unwrap().iter().any(|r| r.is_err())); // ok: unit test
    }
}
