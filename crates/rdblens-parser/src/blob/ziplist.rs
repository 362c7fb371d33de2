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
    /// Checks the header against the blob: total size, tail offset and end marker.
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

    /// As [`super::Listpack::count_in_header`]: the entry count of a
    /// `total`-byte ziplist from its first bytes, size and tail offset checked.
    pub fn count_in_header(head: &[u8], total: usize) -> Option<u16> {
        if total < HEADER + 1 || head.len() < HEADER || le_u32(head, 0) as usize != total {
            return None;
        }
        if le_u32(head, 4) as usize >= total {
            return None;
        }
        let n = le_u16(head, 8);
        (n != u16::MAX).then_some(n)
    }

    /// The whole blob, header and end marker included.
    pub fn bytes(&self) -> &'b [u8] {
        self.bytes
    }

    /// The entry count in the header; `None` when it says "count by walking".
    pub fn header_count(&self) -> Option<u16> {
        let n = le_u16(self.bytes, 8);
        (n != u16::MAX).then_some(n)
    }

    /// The entries in order, each checked against the bytes that remain.
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
    /// Entries with a string of up to 16383 bytes or any integer, when
    /// everything about them checks out (prevlen, size). `None` sends the
    /// entry to [`ZiplistIter::decode`], which handles the rest (32-bit
    /// string lengths) and reports errors, so the errors are the same
    /// whichever path an entry takes.
    #[inline(always)]
    fn decode_common(&self, first: u8) -> Option<(Element<'b>, usize)> {
        let b = self.bytes;
        let p = self.pos;
        let (prevlen, q) = if first < 0xfe {
            (usize::from(first), p + 1)
        } else if first == 0xfe {
            (le_u32(b.get(p..p + 5)?, 1) as usize, p + 5)
        } else {
            return None;
        };
        if prevlen != self.prev_size {
            return None;
        }
        let enc = *b.get(q)?;
        let (elem, end) = if enc < 0x40 {
            let start = q + 1;
            let end = start + usize::from(enc);
            (Element::Bytes(b.get(start..end)?), end)
        } else if enc < 0x80 {
            let start = q + 2;
            let end = start + ((usize::from(enc & 0x3f) << 8) | usize::from(*b.get(q + 1)?));
            (Element::Bytes(b.get(start..end)?), end)
        } else {
            let (v, end) = match enc {
                0xf1..=0xfd => (i64::from(enc & 0x0f) - 1, q + 1),
                0xfe => (i64::from(*b.get(q + 1)? as i8), q + 2),
                0xc0 => (
                    i64::from(i16::from_le_bytes(b.get(q + 1..q + 3)?.try_into().ok()?)),
                    q + 3,
                ),
                0xf0 => {
                    let x = b.get(q + 1..q + 4)?;
                    (i64::from(i32::from_le_bytes([0, x[0], x[1], x[2]]) >> 8), q + 4)
                }
                0xd0 => (
                    i64::from(i32::from_le_bytes(b.get(q + 1..q + 5)?.try_into().ok()?)),
                    q + 5,
                ),
                0xe0 => (i64::from_le_bytes(b.get(q + 1..q + 9)?.try_into().ok()?), q + 9),
                _ => return None,
            };
            (Element::Int(v), end)
        };
        // Entries must end before the end marker, the last byte.
        if end > b.len() - 1 {
            return None;
        }
        Some((elem, end - p))
    }

    #[cold]
    #[inline(never)]
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

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let first = self.bytes[self.pos];
        if let Some((elem, size)) = self.decode_common(first) {
            self.last_start = self.pos;
            self.pos += size;
            self.prev_size = size;
            self.seen += 1;
            return Some(Ok(elem));
        }
        self.next_general(first)
    }
}

impl<'b> ZiplistIter<'b> {
    /// The end marker, the rarer entries and every error.
    fn next_general(&mut self, first: u8) -> Option<BlobResult<Element<'b>>> {
        if first == END {
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
    use proptest::prelude::*;

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
        let z = Ziplist::new(&zl).unwrap(); // ok: unit test
        let got: Vec<Element> = z.iter().map(|e| e.unwrap()).collect(); // ok: unit test
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

    /// The walk with every entry through the general decoder only.
    fn general_walk(zl: Ziplist<'_>) -> Vec<BlobResult<Element<'_>>> {
        let mut it = zl.iter();
        let mut out = Vec::new();
        while !it.done {
            let first = it.bytes[it.pos];
            match it.next_general(first) {
                Some(r) => out.push(r),
                None => break,
            }
        }
        out
    }

    fn entry_strategy() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            (0xf1u8..=0xfd).prop_map(|v| vec![v]),
            any::<i8>().prop_map(|v| vec![0xfe, v as u8]),
            any::<i16>().prop_map(|v| [vec![0xc0], v.to_le_bytes().to_vec()].concat()),
            any::<i32>().prop_map(|v| [vec![0xd0], v.to_le_bytes().to_vec()].concat()),
            any::<i32>().prop_map(|v| [vec![0xf0], v.to_le_bytes()[..3].to_vec()].concat()),
            any::<i64>().prop_map(|v| [vec![0xe0], v.to_le_bytes().to_vec()].concat()),
            prop::collection::vec(any::<u8>(), 0..300).prop_map(|s| str_entry(&s)),
        ]
    }

    proptest::proptest! {
        /// The fast path for common entries yields exactly what the general
        /// decoder yields, errors included, on damaged ziplists too.
        #[test]
        fn fast_path_matches_the_general_decoder(
            entries in prop::collection::vec(entry_strategy(), 0..20),
            damage in prop::collection::vec((any::<usize>(), any::<u8>()), 0..4),
        ) {
            let mut zl = build(&entries);
            let n = zl.len();
            for (at, byte) in damage {
                // Keep the total size, the tail offset and the end marker,
                // so the walk runs.
                zl[8 + at % (n - 9)] = byte;
            }
            let list = Ziplist::new(&zl).unwrap(); // ok: unit test
            let fast: Vec<_> = list.iter().collect();
            proptest::prop_assert_eq!(fast, general_walk(list));
        }
    }

    #[test]
    fn hostile_ziplists() {
        let good = build(&[str_entry(b"ab"), str_entry(b"cd")]);
        assert_eq!(Ziplist::new(&good).unwrap().count().unwrap(), 2); // ok: unit test
        let mut count = good.clone();
        count[8] = 5;
        assert_eq!(Ziplist::new(&count).unwrap().count().unwrap_err().pos, 8); // ok: unit test
        let mut prev = good.clone();
        prev[14] = 9;
        assert!(Ziplist::new(&prev).unwrap().count().is_err()); // ok: unit test
        let mut len = good.clone();
        len[11] = 50;
        assert!(Ziplist::new(&len).unwrap().count().is_err()); // ok: unit test
        let mut tail = good.clone();
        tail[4] = 10;
        assert!(Ziplist::new(&tail).unwrap().count().is_err()); // ok: unit test
        let mut enc = good.clone();
        enc[11] = 0xc5;
        assert!(Ziplist::new(&enc).unwrap().count().is_err()); // ok: unit test
        assert!(Ziplist::new(&good[..5]).is_err());
    }
}
