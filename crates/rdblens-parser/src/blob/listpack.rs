use super::{le_signed, le_u16, le_u32, BlobError, BlobResult};
use crate::element::Element;
use crate::error::ErrorKind;

const HEADER: usize = 6;
const END: u8 = 0xff;
const UNKNOWN_COUNT: u16 = u16::MAX;

/// A listpack (Redis 5+ streams, 7.0+ hashes, zsets, sets and list nodes).
#[derive(Clone, Copy, Debug)]
pub struct Listpack<'b> {
    bytes: &'b [u8],
}

fn bad(pos: usize, msg: String) -> BlobError {
    BlobError {
        pos,
        kind: ErrorKind::BadListpack(msg),
    }
}

impl<'b> Listpack<'b> {
    /// Checks the header against the blob: total size and end marker.
    pub fn new(bytes: &'b [u8]) -> BlobResult<Self> {
        if bytes.len() < HEADER + 1 {
            return Err(bad(
                0,
                format!("{} bytes is shorter than the 7-byte minimum", bytes.len()),
            ));
        }
        let total = le_u32(bytes, 0) as usize;
        if total != bytes.len() {
            return Err(bad(
                0,
                format!("header says {total} bytes, the blob has {}", bytes.len()),
            ));
        }
        if bytes[bytes.len() - 1] != END {
            return Err(bad(bytes.len() - 1, "missing end marker 0xff".into()));
        }
        Ok(Listpack { bytes })
    }

    /// The element count the header of a `total`-byte listpack gives, read
    /// from its first bytes `head` alone: `None` when the head is short, the
    /// size field disagrees with `total` or the count is "count by walking".
    /// The checks a server makes on load without deep sanitization, but the
    /// end marker (for a compressed blob, it is where decompression ends).
    pub fn count_in_header(head: &[u8], total: usize) -> Option<u16> {
        if total < HEADER + 1 || head.len() < HEADER || le_u32(head, 0) as usize != total {
            return None;
        }
        let n = le_u16(head, 4);
        (n != UNKNOWN_COUNT).then_some(n)
    }

    /// The whole blob, header and end marker included.
    pub fn bytes(&self) -> &'b [u8] {
        self.bytes
    }

    /// The element count in the header; `None` when it says "count by walking" (65535).
    pub fn header_count(&self) -> Option<u16> {
        let n = le_u16(self.bytes, 4);
        (n != UNKNOWN_COUNT).then_some(n)
    }

    /// The elements in order, each checked against the bytes that remain.
    pub fn iter(&self) -> ListpackIter<'b> {
        ListpackIter {
            bytes: self.bytes,
            pos: HEADER,
            seen: 0,
            done: false,
        }
    }

    /// Walks every element; the count must match the header's.
    pub fn count(&self) -> BlobResult<usize> {
        let mut n = 0;
        for e in self.iter() {
            e?;
            n += 1;
        }
        Ok(n)
    }
}

/// Elements of a listpack in order. After an error it yields nothing more.
pub struct ListpackIter<'b> {
    bytes: &'b [u8],
    pos: usize,
    seen: usize,
    done: bool,
}

impl<'b> ListpackIter<'b> {
    /// Offset of the next element within the blob.
    pub fn pos(&self) -> usize {
        self.pos
    }

    fn fail<T>(&mut self, err: BlobError) -> Option<BlobResult<T>> {
        self.done = true;
        Some(Err(err))
    }

    /// The common encodings (7-bit and 13-bit integers, strings up to 4095
    /// bytes, 16/24/32/64-bit integers) when everything about the element
    /// checks out: it ends before the end marker and its back-length
    /// matches. `None` sends the element to [`ListpackIter::decode`], which
    /// handles the other encodings and reports errors, so the errors are
    /// the same whichever path an element takes.
    #[inline(always)]
    fn decode_common(&self, first: u8) -> Option<(Element<'b>, usize)> {
        let b = self.bytes;
        let p = self.pos;
        // Entries must end before the end marker, the last byte.
        let limit = b.len() - 1;
        let (elem, size) = if first < 0x80 {
            (Element::Int(i64::from(first)), 1)
        } else if first < 0xc0 {
            let len = usize::from(first & 0x3f);
            (Element::Bytes(b.get(p + 1..p + 1 + len)?), 1 + len)
        } else if first < 0xe0 {
            let u = (i64::from(first & 0x1f) << 8) | i64::from(*b.get(p + 1)?);
            (Element::Int(if u >= 4096 { u - 8192 } else { u }), 2)
        } else if first < 0xf0 {
            let len = (usize::from(first & 0x0f) << 8) | usize::from(*b.get(p + 1)?);
            (Element::Bytes(b.get(p + 2..p + 2 + len)?), 2 + len)
        } else {
            let v = match first {
                0xf1 => i64::from(i16::from_le_bytes(b.get(p + 1..p + 3)?.try_into().ok()?)),
                0xf2 => {
                    let x = b.get(p + 1..p + 4)?;
                    i64::from(i32::from_le_bytes([0, x[0], x[1], x[2]]) >> 8)
                }
                0xf3 => i64::from(i32::from_le_bytes(b.get(p + 1..p + 5)?.try_into().ok()?)),
                0xf4 => i64::from_le_bytes(b.get(p + 1..p + 9)?.try_into().ok()?),
                _ => return None,
            };
            (Element::Int(v), [3, 4, 5, 9][usize::from(first - 0xf1)])
        };
        // The back-length: 1 byte (whose high bit the decoder ignores) up
        // to 127, else 2 (sizes here are at most 4097).
        let end = p + size;
        if size < 128 {
            if end + 1 > limit || usize::from(b[end] & 0x7f) != size {
                return None;
            }
            Some((elem, size + 1))
        } else {
            if end + 2 > limit {
                return None;
            }
            let (high, low) = (b[end], b[end + 1]);
            if high & 0x80 != 0
                || low & 0x80 == 0
                || (usize::from(high) << 7 | usize::from(low & 0x7f)) != size
            {
                return None;
            }
            Some((elem, size + 2))
        }
    }

    #[cold]
    #[inline(never)]
    fn decode(&self) -> BlobResult<(Element<'b>, usize)> {
        let b = self.bytes;
        let p = self.pos;
        // The last byte is the end marker, so entries must end before it.
        let limit = b.len() - 1;
        let need = |n: usize| -> BlobResult<()> {
            if p + n > limit {
                Err(bad(
                    p,
                    format!("element of {n} bytes runs past the end of the blob"),
                ))
            } else {
                Ok(())
            }
        };
        let first = b[p];
        let (elem, size) = match first {
            0x00..=0x7f => (Element::Int(i64::from(first)), 1),
            0x80..=0xbf => {
                let len = usize::from(first & 0x3f);
                need(1 + len)?;
                (Element::Bytes(&b[p + 1..p + 1 + len]), 1 + len)
            }
            0xc0..=0xdf => {
                need(2)?;
                let u = (i64::from(first & 0x1f) << 8) | i64::from(b[p + 1]);
                (Element::Int(if u >= 4096 { u - 8192 } else { u }), 2)
            }
            0xe0..=0xef => {
                need(2)?;
                let len = (usize::from(first & 0x0f) << 8) | usize::from(b[p + 1]);
                need(2 + len)?;
                (Element::Bytes(&b[p + 2..p + 2 + len]), 2 + len)
            }
            0xf0 => {
                need(5)?;
                let len = le_u32(b, p + 1) as usize;
                need(5usize.saturating_add(len))?;
                (Element::Bytes(&b[p + 5..p + 5 + len]), 5 + len)
            }
            0xf1 => {
                need(3)?;
                (Element::Int(le_signed(b, p + 1, 2)), 3)
            }
            0xf2 => {
                need(4)?;
                (Element::Int(le_signed(b, p + 1, 3)), 4)
            }
            0xf3 => {
                need(5)?;
                (Element::Int(le_signed(b, p + 1, 4)), 5)
            }
            0xf4 => {
                need(9)?;
                (Element::Int(le_signed(b, p + 1, 8)), 9)
            }
            _ => return Err(bad(p, format!("invalid element encoding byte 0x{first:02x}"))),
        };
        let width = match size {
            0..=127 => 1,
            128..=16383 => 2,
            16384..=2097151 => 3,
            2097152..=268435455 => 4,
            _ => 5,
        };
        need(size + width)?;
        let back = &b[p + size..p + size + width];
        let mut stored: u64 = 0;
        for (i, &byte) in back.iter().enumerate() {
            if (i == 0) == (byte & 0x80 != 0) && width > 1 {
                return Err(bad(p + size, "malformed back-length".into()));
            }
            stored = (stored << 7) | u64::from(byte & 0x7f);
        }
        if stored != size as u64 {
            return Err(bad(
                p + size,
                format!("back-length says {stored} bytes, the element has {size}"),
            ));
        }
        Ok((elem, size + width))
    }
}

impl<'b> Iterator for ListpackIter<'b> {
    type Item = BlobResult<Element<'b>>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let first = self.bytes[self.pos];
        if let Some((elem, advance)) = self.decode_common(first) {
            self.pos += advance;
            self.seen += 1;
            return Some(Ok(elem));
        }
        self.next_general(first)
    }
}

impl<'b> ListpackIter<'b> {
    /// The end marker, the rarer encodings and every error.
    fn next_general(&mut self, first: u8) -> Option<BlobResult<Element<'b>>> {
        if first == END {
            self.done = true;
            if self.pos != self.bytes.len() - 1 {
                return self.fail(bad(self.pos, "end marker before the end of the blob".into()));
            }
            let header = le_u16(self.bytes, 4);
            if header != UNKNOWN_COUNT && usize::from(header) != self.seen {
                return self.fail(bad(
                    4,
                    format!("header counts {header} elements, the walk found {}", self.seen),
                ));
            }
            return None;
        }
        match self.decode() {
            Ok((elem, advance)) => {
                self.pos += advance;
                self.seen += 1;
                Some(Ok(elem))
            }
            Err(e) => self.fail(e),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Builds a listpack from encoded elements (encoding+data), adding back-lengths.
    pub fn build(entries: &[Vec<u8>]) -> Vec<u8> {
        let mut body = Vec::new();
        for e in entries {
            body.extend_from_slice(e);
            let s = e.len();
            match s {
                0..=127 => body.push(s as u8),
                128..=16383 => body.extend_from_slice(&[(s >> 7) as u8, (s & 127) as u8 | 128]),
                _ => body.extend_from_slice(&[
                    (s >> 14) as u8,
                    ((s >> 7) & 127) as u8 | 128,
                    (s & 127) as u8 | 128,
                ]),
            }
        }
        let total = HEADER + body.len() + 1;
        let mut out = Vec::new();
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        out.extend_from_slice(&body);
        out.push(END);
        out
    }

    pub fn str_entry(s: &[u8]) -> Vec<u8> {
        let mut e = Vec::new();
        if s.len() < 64 {
            e.push(0x80 | s.len() as u8);
        } else if s.len() < 4096 {
            e.push(0xe0 | (s.len() >> 8) as u8);
            e.push(s.len() as u8);
        } else {
            e.push(0xf0);
            e.extend_from_slice(&(s.len() as u32).to_le_bytes());
        }
        e.extend_from_slice(s);
        e
    }

    #[test]
    fn every_encoding() {
        let long = vec![b'x'; 200];
        let huge = vec![b'y'; 5000];
        let lp = build(&[
            vec![5],
            vec![0xdf, 0xff],
            vec![0xc0, 0x10],
            str_entry(b"abc"),
            str_entry(&long),
            str_entry(&huge),
            vec![0xf1, 0x00, 0x80],
            vec![0xf2, 0xff, 0xff, 0x7f],
            vec![0xf3, 0, 0, 0, 0x80],
            [vec![0xf4], i64::MIN.to_le_bytes().to_vec()].concat(),
        ]);
        let got: Vec<Element> = Listpack::new(&lp).unwrap().iter().map(|e| e.unwrap()).collect(); // ok: unit test
        assert_eq!(
            got,
            vec![
                Element::Int(5),
                Element::Int(-1),
                Element::Int(16),
                Element::Bytes(b"abc"),
                Element::Bytes(&long),
                Element::Bytes(&huge),
                Element::Int(-32768),
                Element::Int(8388607),
                Element::Int(i64::from(i32::MIN)),
                Element::Int(i64::MIN),
            ]
        );
        assert_eq!(Listpack::new(&lp).unwrap().count().unwrap(), 10); // ok: unit test
    }

    /// The walk with every element through the general decoder only.
    fn general_walk(lp: Listpack<'_>) -> Vec<BlobResult<Element<'_>>> {
        let mut it = lp.iter();
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

    fn element_strategy() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            (0u8..0x80).prop_map(|v| vec![v]),
            any::<u16>().prop_map(|v| vec![0xc0 | ((v >> 8) as u8 & 0x1f), v as u8]),
            prop::collection::vec(any::<u8>(), 0..300).prop_map(|s| str_entry(&s)),
            any::<i16>().prop_map(|v| [vec![0xf1], v.to_le_bytes().to_vec()].concat()),
            any::<i32>().prop_map(|v| [vec![0xf2], v.to_le_bytes()[..3].to_vec()].concat()),
            any::<i32>().prop_map(|v| [vec![0xf3], v.to_le_bytes().to_vec()].concat()),
            any::<i64>().prop_map(|v| [vec![0xf4], v.to_le_bytes().to_vec()].concat()),
        ]
    }

    proptest::proptest! {
        /// The fast path for common encodings yields exactly what the
        /// general decoder yields, errors included, on damaged listpacks too.
        #[test]
        fn fast_path_matches_the_general_decoder(
            entries in prop::collection::vec(element_strategy(), 0..20),
            damage in prop::collection::vec((any::<usize>(), any::<u8>()), 0..4),
        ) {
            let mut lp = build(&entries);
            let n = lp.len();
            for (at, byte) in damage {
                // Keep the total size and the end marker, so the walk runs.
                lp[4 + at % (n - 5)] = byte;
            }
            let list = Listpack::new(&lp).unwrap(); // ok: unit test
            let fast: Vec<_> = list.iter().collect();
            proptest::prop_assert_eq!(fast, general_walk(list));
        }
    }

    #[test]
    fn hostile_listpacks() {
        let good = build(&[str_entry(b"hello"), vec![7]]);
        // Wrong total size.
        let mut bad_total = good.clone();
        bad_total[0] += 1;
        assert!(matches!(
            Listpack::new(&bad_total).unwrap_err().kind,
            ErrorKind::BadListpack(_)
        ));
        // Wrong count.
        let mut bad_count = good.clone();
        bad_count[4] = 3;
        let err = Listpack::new(&bad_count).unwrap().count().unwrap_err(); // ok: unit test
        assert_eq!(err.pos, 4);
        // A string length pointing past the end.
        let mut long = good.clone();
        long[6] = 0x80 | 60;
        let err = Listpack::new(&long).unwrap().count().unwrap_err(); // ok: unit test
        assert_eq!(err.pos, 6);
        // Bad back-length.
        let mut back = good.clone();
        back[12] = 9;
        assert!(Listpack::new(&back).unwrap().count().is_err()); // ok: unit test
                                                                 // Invalid encoding byte; a huge 32-bit length.
        let mut inv = good.clone();
        inv[6] = 0xf7;
        assert!(Listpack::new(&inv).unwrap().count().is_err()); // ok: unit test
        let huge = build(&[vec![0xf0, 0xff, 0xff, 0xff, 0xff]]);
        assert!(Listpack::new(&huge).unwrap().count().is_err()); // ok: unit test
                                                                 // Too short, missing end.
        assert!(Listpack::new(&[7, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(Listpack::new(&[1]).is_err());
    }
}
