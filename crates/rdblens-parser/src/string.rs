//! RDB strings: raw bytes borrowed from the file, small integers, or LZF.

use std::borrow::Cow;

use crate::element::{decimal, Element};
use crate::error::{Error, ErrorKind, Result};

/// A string as stored in the file. Raw and LZF bytes borrow from the input;
/// nothing is decompressed until asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdbString<'a> {
    /// Stored verbatim.
    Raw(&'a [u8]),
    /// Stored as an INT8/16/32 special encoding; its text is the decimal form.
    Int(i64),
    /// LZF-compressed; `len` is the declared uncompressed length, known
    /// without decompressing.
    Lzf {
        /// The compressed bytes as stored.
        compressed: &'a [u8],
        /// Declared uncompressed length in bytes (checked against what
        /// `compressed` can possibly expand to).
        len: usize,
    },
}

impl<'a> RdbString<'a> {
    /// Logical length in bytes (for integers, the length of the decimal text).
    pub fn len(&self) -> usize {
        match *self {
            RdbString::Raw(b) => b.len(),
            RdbString::Int(i) => crate::element::decimal_len(i),
            RdbString::Lzf { len, .. } => len,
        }
    }

    /// True when the logical value is the empty string.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes this string takes in the file after its length prefix.
    pub fn stored_len(&self) -> usize {
        match *self {
            RdbString::Raw(b) => b.len(),
            RdbString::Int(i) => match i {
                -128..=127 => 1,
                -32768..=32767 => 2,
                _ => 4,
            },
            RdbString::Lzf { compressed, .. } => compressed.len(),
        }
    }

    /// True for an LZF-compressed string.
    pub fn is_compressed(&self) -> bool {
        matches!(self, RdbString::Lzf { .. })
    }

    /// The logical bytes, decompressing into `scratch` when needed.
    /// `offset` is only used to place an LZF error.
    ///
    /// `scratch` is a reusable buffer, not the result: the returned slice
    /// may be a prefix of it (its length and the bytes past the result are
    /// unspecified), which lets LZF output be written in whole chunks
    /// without zero-filling the buffer again for every string.
    pub fn bytes_in<'s>(&self, scratch: &'s mut Vec<u8>, offset: u64) -> Result<&'s [u8]>
    where
        'a: 's,
    {
        match *self {
            RdbString::Raw(b) => Ok(b),
            RdbString::Int(i) => {
                // Written over the start of the buffer without shrinking it,
                // so the LZF output that comes next needs no zero-filling.
                let mut digits = [0u8; 20];
                let text = decimal(i, &mut digits);
                if scratch.len() < text.len() {
                    scratch.resize(text.len(), 0);
                }
                scratch[..text.len()].copy_from_slice(text);
                Ok(&scratch[..text.len()])
            }
            RdbString::Lzf { compressed, len } => crate::lzf::decompress_into(compressed, len, scratch)
                .map_err(|msg| Error::new(offset, ErrorKind::BadLzf(msg))),
        }
    }

    /// As an element: raw bytes and integers without copying, LZF decompressed into `scratch`.
    pub fn element_in<'s>(&self, scratch: &'s mut Vec<u8>, offset: u64) -> Result<Element<'s>>
    where
        'a: 's,
    {
        match *self {
            RdbString::Int(i) => Ok(Element::Int(i)),
            _ => Ok(Element::Bytes(self.bytes_in(scratch, offset)?)),
        }
    }

    /// The logical bytes, borrowed when possible.
    pub fn to_cow(&self) -> Result<Cow<'a, [u8]>> {
        match *self {
            RdbString::Raw(b) => Ok(Cow::Borrowed(b)),
            _ => {
                let mut buf = Vec::new();
                let n = self.bytes_in(&mut buf, 0)?.len();
                buf.truncate(n);
                Ok(Cow::Owned(buf))
            }
        }
    }

    /// The logical bytes in a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        Ok(self.to_cow()?.into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_in_reuses_the_buffer() {
        let mut scratch = Vec::new();
        for i in [0, 7, -1, 1234, i64::MIN, i64::MAX] {
            assert_eq!(
                RdbString::Int(i).bytes_in(&mut scratch, 0).unwrap(), // ok: unit test
                i.to_string().as_bytes()
            );
            let text = RdbString::Int(i).to_vec().unwrap(); // ok: unit test
            assert_eq!(text, i.to_string().as_bytes());
        }
        // "abcabcabc" as LZF, then a shorter integer into the same buffer.
        let lzf = RdbString::Lzf {
            compressed: &[2, b'a', b'b', b'c', (4 << 5), 2],
            len: 9,
        };
        assert_eq!(lzf.bytes_in(&mut scratch, 0).unwrap(), b"abcabcabc"); // ok: unit test
        assert_eq!(RdbString::Int(-5).bytes_in(&mut scratch, 0).unwrap(), b"-5"); // ok: unit test
        assert_eq!(lzf.to_vec().unwrap(), b"abcabcabc"); // ok: unit test
        assert_eq!(lzf.to_cow().unwrap().len(), 9); // ok: unit test
        let bad = RdbString::Lzf {
            compressed: &[0, b'a'],
            len: 2,
        };
        let err = bad.bytes_in(&mut scratch, 42).unwrap_err();
        assert_eq!(err.offset(), 42);
    }
}
