use super::{le_signed, le_u16, le_u32, BlobError, BlobResult};
use crate::element::Element;
use crate::error::ErrorKind;

const HEADER: usize = 10;
const END: u8 = 0xff;

/// A ziplist (Redis 2.4-6.2 lists, hashes, zsets and quicklist v1 nodes).
#[derive(Clone, Copy, Debug)]
pub struct Ziplist<'b> {
    bytes: &'b [u8],
}

fn bad(pos: usize, msg: String) -> BlobError {
    BlobError {
        pos,
        kind: ErrorKind::BadZiplist(msg),
    }
}

impl<'b> Ziplist<'b> {
    pub fn new(bytes: &'b [u8]) -> BlobResult<Self> {
        if bytes.len() < HEADER + 1 {
            return Err(bad(
                0,
                format!("{} bytes is shorter than the 11-byte minimum", bytes.len()),
            ));
        }
        let total = le_u32(bytes, 0) as usize;
        if total != bytes.len() {
            return Err(bad(
                0,
                format!("header says {total} bytes, the blob has {}", bytes.len()),
            ));
        }
        let tail = le_u32(bytes, 4) as usize;
        if tail >= bytes.len() {
            return Err(bad(4, format!("tail offset {tail} is past the end")));
        }
        if bytes[bytes.len() - 1] != END {
            return Err(bad(bytes.len() - 1, "missing end marker 0xff".into()));
        }
        Ok(Ziplist { bytes })
    }

    pub fn bytes(&self) -> &'b [u8] {
        self.bytes
    }

    /// The entry count in the header; `None` when it says "count by walking".
    pub fn header_count(&self) -> Option<u16> {
        let n = le_u16(self.bytes, 8);
        (n != u16::MAX).then_some(n)
    }

    pub fn iter(&self) -> ZiplistIter<'b> {
        ZiplistIter {
            bytes: self.bytes,
            pos: HEADER,
            prev_size: 0,
            last_start: HEADER,
            seen: 0,
            done: false,
        }
    }

    /// Walks every entry; count and tail offset must match the header.
    pub fn count(&self) -> BlobResult<usize> {
        let mut n = 0;
        for e in self.iter() {
            e?;
            n += 1;
        }
        Ok(n)
    }
}

/// Entries of a ziplist in order. After an error it yields nothing more.
pub struct ZiplistIter<'b> {
    bytes: &'b [u8],
    pos: usize,
    prev_size: usize,
    last_start: usize,
    seen: usize,
    done: bool,
}

impl<'b> ZiplistIter<'b> {
    fn decode(&self) -> BlobResult<(Element<'b>, usize)> {
        let b = self.bytes;
        let p = self.pos;
        let limit = b.len() - 1;
        let need = |at: usize, n: usize| -> BlobResult<()> {
            if at.saturating_add(n) > limit {
                Err(bad(p, "entry runs past the end of the blob".into()))
            } else {
                Ok(())
            }
        };
        let (prevlen, mut q) = if b[p] == 0xfe {
            need(p, 5)?;
            (le_u32(b, p + 1) as usize, p + 5)
        } else {
            (usize::from(b[p]), p + 1)
        };
        if prevlen != self.prev_size {
            return Err(bad(
                p,
                format!(
                    "prevlen says {prevlen}, the previous entry has {} bytes",
                    self.prev_size
                ),
            ));
        }
        need(q, 1)?;
        let enc = b[q];
        let elem = match enc >> 6 {
            0 => {
                let len = usize::from(enc & 0x3f);
                need(q + 1, len)?;
                q += 1 + len;
                Element::Bytes(&b[q - len..q])
            }
            1 => {
                need(q, 2)?;
                let len = (usize::from(enc & 0x3f) << 8) | usize::from(b[q + 1]);
                need(q + 2, len)?;
                q += 2 + len;
                Element::Bytes(&b[q - len..q])
            }
            2 => {
                need(q, 5)?;
                let len = u32::from_be_bytes([b[q + 1], b[q + 2], b[q + 3], b[q + 4]]) as usize;
                need(q + 5, len)?;
                q += 5 + len;
                Element::Bytes(&b[q - len..q])
            }
            _ => {
                let width = match enc {
                    0xc0 => 2,
                    0xd0 => 4,
                    0xe0 => 8,
                    0xf0 => 3,
                    0xfe => 1,
                    0xf1..=0xfd => 0,
                    _ => return Err(bad(q, format!("invalid entry encoding byte 0x{enc:02x}"))),
                };
                need(q + 1, width)?;
                let v = if width == 0 {
                    i64::from(enc & 0x0f) - 1
                } else {
                    le_signed(b, q + 1, width)
                };
                q += 1 + width;
                Element::Int(v)
            }
        };
        Ok((elem, q - p))
    }
}

impl<'b> Iterator for ZiplistIter<'b> {
    type Item = BlobResult<Element<'b>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.bytes[self.pos] == END {
            self.done = true;
            let err = if self.pos != self.bytes.len() - 1 {
                Some(bad(self.pos, "end marker before the end of the blob".into()))
            } else if le_u32(self.bytes, 4) as usize != self.last_start {
                Some(bad(
                    4,
                    format!(
                        "tail offset {} does not point at the last entry ({})",
                        le_u32(self.bytes, 4),
                        self.last_start
                    ),
                ))
            } else {
                let header = le_u16(self.bytes, 8);
                (header != u16::MAX && usize::from(header) != self.seen).then(|| {
                    bad(
                        8,
                        format!("header counts {header} entries, the walk found {}", self.seen),
                    )
                })
            };
            return err.map(Err);
        }
        match self.decode() {
            Ok((elem, size)) => {
                self.last_start = self.pos;
                self.pos += size;
                self.prev_size = size;
                self.seen += 1;
                Some(Ok(elem))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds a ziplist from entries given as (encoding+data) without prevlen.
    pub fn build(entries: &[Vec<u8>]) -> Vec<u8> {
        let mut body = Vec::new();
        let mut prev = 0usize;
        let mut tail = HEADER;
        for e in entries {
            tail = HEADER + body.len();
            let start = body.len();
            if prev < 254 {
                body.push(prev as u8);
            } else {
                body.push(0xfe);
                body.extend_from_slice(&(prev as u32).to_le_bytes());
            }
            body.extend_from_slice(e);
            prev = body.len() - start;
        }
        let total = HEADER + body.len() + 1;
        let mut out = Vec::new();
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(tail as u32).to_le_bytes());
        out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        out.extend_from_slice(&body);
        out.push(END);
        out
    }

    pub fn str_entry(s: &[u8]) -> Vec<u8> {
        let mut e = Vec::new();
        if s.len() < 64 {
            e.push(s.len() as u8);
        } else if s.len() < 16384 {
            e.push(0x40 | (s.len() >> 8) as u8);
            e.push(s.len() as u8);
        } else {
            e.push(0x80);
            e.extend_from_slice(&(s.len() as u32).to_be_bytes());
        }
        e.extend_from_slice(s);
        e
    }

    #[test]
    fn every_encoding() {
        let long = vec![b'z'; 300];
        let zl = build(&[
            str_entry(b"hi"),
            str_entry(&long),
            str_entry(&vec![b'q'; 20000]),
            vec![0xc0, 0x00, 0x80],
            vec![0xd0, 1, 0, 0, 0],
            vec![0xe0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            vec![0xf0, 0xff, 0xff, 0xff],
            vec![0xfe, 0x80],
            vec![0xf1],
            vec![0xfd],
        ]);
        let z = Ziplist::new(&zl).unwrap();
        let got: Vec<Element> = z.iter().map(|e| e.unwrap()).collect();
        assert_eq!(got.len(), 10);
        assert_eq!(got[0], Element::Bytes(b"hi"));
        assert_eq!(got[1], Element::Bytes(&long));
        assert_eq!(got[2].len(), 20000);
        assert_eq!(
            got[3..],
            [
                Element::Int(-32768),
                Element::Int(1),
                Element::Int(-1),
                Element::Int(-1),
                Element::Int(-128),
                Element::Int(0),
                Element::Int(12)
            ]
        );
    }

    #[test]
    fn hostile_ziplists() {
        let good = build(&[str_entry(b"ab"), str_entry(b"cd")]);
        assert_eq!(Ziplist::new(&good).unwrap().count().unwrap(), 2);
        let mut count = good.clone();
        count[8] = 5;
        assert_eq!(Ziplist::new(&count).unwrap().count().unwrap_err().pos, 8);
        let mut prev = good.clone();
        prev[14] = 9;
        assert!(Ziplist::new(&prev).unwrap().count().is_err());
        let mut len = good.clone();
        len[11] = 50;
        assert!(Ziplist::new(&len).unwrap().count().is_err());
        let mut tail = good.clone();
        tail[4] = 10;
        assert!(Ziplist::new(&tail).unwrap().count().is_err());
        let mut enc = good.clone();
        enc[11] = 0xc5;
        assert!(Ziplist::new(&enc).unwrap().count().is_err());
        assert!(Ziplist::new(&good[..5]).is_err());
    }
}
