//! A bounds-checked cursor over borrowed bytes: every read checks the bytes
//! that remain before it trusts a length.

use crate::error::{Error, ErrorKind, Result};
use crate::string::RdbString;

/// A length field or a special string encoding (`11eeeeee`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Length {
    Plain(u64),
    Special(u8),
}

#[derive(Clone, Debug)]
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// Offset of `data[0]` in the file, for error messages.
    base: u64,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Reader { data, pos: 0, base }
    }

    pub fn at(data: &'a [u8], pos: usize) -> Self {
        Reader { data, pos, base: 0 }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The bytes between `start` (a position from [`Reader::pos`]) and here.
    pub fn since(&self, start: usize) -> &'a [u8] {
        &self.data[start.min(self.pos)..self.pos]
    }

    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    pub fn err(&self, kind: ErrorKind) -> Error {
        Error::new(self.offset(), kind)
    }

    pub fn err_at(&self, pos: usize, kind: ErrorKind) -> Error {
        Error::new(self.base + pos as u64, kind)
    }

    #[inline]
    pub fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8]> {
        if n > self.remaining() as u64 {
            return Err(self.err(ErrorKind::Truncated {
                what,
                needed: n,
                available: self.remaining() as u64,
            }));
        }
        let n = n as usize;
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let bytes = self.take(N as u64, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    #[inline]
    pub fn u8(&mut self, what: &'static str) -> Result<u8> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.err(ErrorKind::Truncated {
                what,
                needed: 1,
                available: 0,
            })),
        }
    }

    pub fn i64_le(&mut self, what: &'static str) -> Result<i64> {
        Ok(i64::from_le_bytes(self.array(what)?))
    }

    pub fn u64_le(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    #[inline]
    pub fn length_or_special(&mut self, what: &'static str) -> Result<Length> {
        // Tested in order of frequency (6-bit lengths, then specials and
        // 14-bit lengths), rather than by a jump table on the top two bits.
        let start = self.pos;
        let first = self.u8(what)?;
        if first < 0x40 {
            Ok(Length::Plain(u64::from(first)))
        } else if first >= 0xc0 {
            Ok(Length::Special(first & 0x3f))
        } else if first < 0x80 {
            let second = self.u8(what)?;
            Ok(Length::Plain((u64::from(first & 0x3f) << 8) | u64::from(second)))
        } else {
            self.long_length(start, first, what)
        }
    }

    /// 32- and 64-bit lengths (`0x80`, `0x81`) and the invalid `10xxxxxx` bytes.
    #[inline(never)]
    fn long_length(&mut self, start: usize, first: u8, what: &'static str) -> Result<Length> {
        match first {
            0x80 => Ok(Length::Plain(u64::from(u32::from_be_bytes(self.array(what)?)))),
            0x81 => Ok(Length::Plain(u64::from_be_bytes(self.array(what)?))),
            _ => Err(self.err_at(start, ErrorKind::BadLength(first))),
        }
    }

    /// A length where the format allows no special encoding (counts, ids).
    #[inline]
    pub fn length(&mut self, what: &'static str) -> Result<u64> {
        let start = self.pos;
        match self.length_or_special(what)? {
            Length::Plain(n) => Ok(n),
            Length::Special(e) => Err(self.err_at(start, ErrorKind::UnexpectedSpecialEncoding(0xc0 | e))),
        }
    }

    /// A count of items that each take at least `min_item_bytes` bytes: a
    /// count the remaining input cannot hold is rejected before any loop.
    pub fn count(&mut self, what: &'static str, min_item_bytes: u64) -> Result<u64> {
        let start = self.pos;
        let n = self.length(what)?;
        let room = self.remaining() as u64;
        if n.saturating_mul(min_item_bytes) > room {
            return Err(self.err_at(
                start,
                ErrorKind::Truncated {
                    what,
                    needed: n.saturating_mul(min_item_bytes),
                    available: room,
                },
            ));
        }
        Ok(n)
    }

    /// Steps over one string, as [`Self::string`] reads it, for the
    /// boundary walk: raw strings of 6- and 14-bit lengths (nearly every
    /// element of a big collection) by their length alone; anything else,
    /// or a length the bytes left cannot hold, through `string`, whose
    /// checks and errors are the walk's. Building each element's
    /// `RdbString` only to drop it was most of the walk's time on
    /// collections of millions of elements, and the walk is the part of a
    /// report that runs on one core at a time.
    #[inline(always)]
    pub fn skip_string(&mut self, what: &'static str) -> Result<()> {
        let pos = self.pos;
        let end = match self.data.get(pos..pos + 2) {
            Some(&[first, _]) if first < 0x40 => pos + 1 + usize::from(first),
            Some(&[first, second]) if first < 0x80 => {
                pos + 2 + (usize::from(first & 0x3f) << 8 | usize::from(second))
            }
            _ => usize::MAX,
        };
        if end <= self.data.len() {
            self.pos = end;
            return Ok(());
        }
        self.string(what).map(|_| ())
    }

    #[inline]
    pub fn string(&mut self, what: &'static str) -> Result<RdbString<'a>> {
        let start = self.pos;
        match self.length_or_special(what)? {
            Length::Plain(n) => Ok(RdbString::Raw(self.take(n, what)?)),
            Length::Special(0) => Ok(RdbString::Int(i64::from(self.u8(what)? as i8))),
            Length::Special(1) => Ok(RdbString::Int(i64::from(i16::from_le_bytes(self.array(what)?)))),
            Length::Special(2) => Ok(RdbString::Int(i64::from(i32::from_le_bytes(self.array(what)?)))),
            Length::Special(3) => {
                let clen = self.length(what)?;
                let ulen_at = self.pos;
                let ulen = self.length(what)?;
                let compressed = self.take(clen, what)?;
                if ulen > crate::lzf::max_output_len(clen) {
                    return Err(self.err_at(
                        ulen_at,
                        ErrorKind::BadLzf(format!(
                            "declared uncompressed length {ulen} is impossible for {clen} compressed bytes"
                        )),
                    ));
                }
                let len = usize::try_from(ulen)
                    .map_err(|_| self.err_at(ulen_at, ErrorKind::LengthOverflow { length: ulen }))?;
                Ok(RdbString::Lzf { compressed, len })
            }
            Length::Special(e) => Err(self.err_at(start, ErrorKind::BadStringEncoding(0xc0 | e))),
        }
    }
}
