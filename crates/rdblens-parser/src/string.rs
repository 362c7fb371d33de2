//! RDB strings: raw bytes borrowed from the file, small integers, or LZF.

use std::borrow::Cow;

use crate::element::Element;
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
    Lzf { compressed: &'a [u8], len: usize },
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

    pub fn is_compressed(&self) -> bool {
        matches!(self, RdbString::Lzf { .. })
    }

    /// The logical bytes, decompressing into `scratch` when needed.
    /// `offset` is only used to place an LZF error.
    pub fn bytes_in<'s>(&self, scratch: &'s mut Vec<u8>, offset: u64) -> Result<&'s [u8]>
    where
        'a: 's,
    {
        match *self {
            RdbString::Raw(b) => Ok(b),
            RdbString::Int(i) => {
                scratch.clear();
                Element::Int(i).write_to(scratch);
                Ok(scratch)
            }
            RdbString::Lzf { compressed, len } => {
                crate::lzf::decompress(compressed, len, scratch)
                    .map_err(|msg| Error::new(offset, ErrorKind::BadLzf(msg)))?;
                Ok(scratch)
            }
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
                self.bytes_in(&mut buf, 0)?;
                Ok(Cow::Owned(buf))
            }
        }
    }

    pub fn to_vec(&self) -> Result<Vec<u8>> {
        Ok(self.to_cow()?.into_owned())
    }
}
