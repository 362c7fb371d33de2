//! Byte sizes of the compact encodings, computed from elements: listpack
//! (`src/listpack.c`, 7.0+), ziplist (`src/ziplist.c`, up to 6.2) and
//! intset (`src/intset.h`). Needed whenever the loader rebuilds a blob
//! instead of keeping the one in the file (ziplist→listpack on 7.0+,
//! plain collections that fit the compact limits, quicklist repacking).

use rdblens_parser::Element;

/// Listpack header (total bytes u32 + count u16) plus the 0xFF terminator.
pub(crate) const LP_EMPTY: u64 = 6 + 1;

/// Ziplist header (zlbytes, zltail u32 + zllen u16) plus the 0xFF terminator.
pub(crate) const ZL_EMPTY: u64 = 10 + 1;

/// Intset header (encoding u32 + length u32).
pub(crate) const INTSET_HEADER: u64 = 8;

/// An element as the compact encodings store it: an integer (integers as
/// such, and bytes that are the canonical decimal form of an i64, Redis
/// `string2ll`), or a string of the given length. Deciding that takes a
/// parse of the bytes, done once per element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Packed {
    Int(i64),
    Str(u64),
}

impl Packed {
    #[inline]
    pub fn of(e: Element<'_>) -> Packed {
        match e {
            Element::Int(i) => Packed::Int(i),
            Element::Bytes(b) => Packed::of_bytes(b),
        }
    }

    #[inline]
    pub fn of_bytes(b: &[u8]) -> Packed {
        match rdblens_parser::parse_canonical_int(b) {
            Some(i) => Packed::Int(i),
            None => Packed::Str(b.len() as u64),
        }
    }

    /// The integer, for the intset test.
    pub fn int(self) -> Option<i64> {
        match self {
            Packed::Int(i) => Some(i),
            Packed::Str(_) => None,
        }
    }
}

/// Bytes of the back-length field that closes a listpack entry whose
/// encoding and data take `l` bytes.
fn lp_backlen(l: u64) -> u64 {
    match l {
        0..=127 => 1,
        128..=16_382 => 2,
        16_383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    }
}

/// Encoding plus data bytes of a listpack integer entry.
fn lp_int_body(v: i64) -> u64 {
    match v {
        0..=127 => 1,
        -4096..=4095 => 2,
        -32_768..=32_767 => 3,
        -8_388_608..=8_388_607 => 4,
        -2_147_483_648..=2_147_483_647 => 5,
        _ => 9,
    }
}

/// Encoding plus data bytes of a listpack string entry.
fn lp_str_body(n: u64) -> u64 {
    match n {
        0..=63 => 1 + n,
        64..=4095 => 2 + n,
        _ => 5 + n,
    }
}

/// Full size of one listpack entry holding `p`.
#[inline]
pub(crate) fn lp_packed(p: Packed) -> u64 {
    let body = match p {
        Packed::Int(v) => lp_int_body(v),
        Packed::Str(n) => lp_str_body(n),
    };
    body + lp_backlen(body)
}

/// Full size of one listpack entry holding `e`.
#[cfg(test)]
pub(crate) fn lp_entry(e: Element<'_>) -> u64 {
    lp_packed(Packed::of(e))
}

/// Full size of a listpack entry holding an integer.
pub(crate) fn lp_int_entry(v: i64) -> u64 {
    let body = lp_int_body(v);
    body + lp_backlen(body)
}

/// Encoding plus data bytes of a ziplist entry (everything but the
/// prevlen field, which depends on the entry before it).
#[inline]
pub(crate) fn zl_body(p: Packed) -> u64 {
    // zipTryEncoding only tries integers shorter than 32 bytes; every
    // canonical i64 is at most 20.
    match p {
        Packed::Int(v) => match v {
            0..=12 => 1,
            -128..=127 => 2,
            -32_768..=32_767 => 3,
            -8_388_608..=8_388_607 => 4,
            -2_147_483_648..=2_147_483_647 => 5,
            _ => 9,
        },
        Packed::Str(n) => match n {
            0..=63 => 1 + n,
            64..=16_383 => 2 + n,
            _ => 5 + n,
        },
    }
}

/// A ziplist being filled one entry at a time: each entry's prevlen field is
/// 1 byte if the previous entry took less than 254 bytes, else 5.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ziplist {
    pub bytes: u64,
    prev: u64,
}

impl Default for Ziplist {
    fn default() -> Self {
        Ziplist {
            bytes: ZL_EMPTY,
            prev: 0,
        }
    }
}

impl Ziplist {
    #[cfg(test)]
    pub fn push(&mut self, e: Element<'_>) {
        self.push_packed(Packed::of(e));
    }

    #[inline]
    pub fn push_packed(&mut self, p: Packed) {
        let entry = if self.prev < 254 { 1 } else { 5 } + zl_body(p);
        self.bytes += entry;
        self.prev = entry;
    }
}

/// Element width an intset needs for `v`.
pub(crate) fn intset_width(v: i64) -> u64 {
    if i16::try_from(v).is_ok() {
        2
    } else if i32::try_from(v).is_ok() {
        4
    } else {
        8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdblens_parser::Element::{Bytes, Int};

    #[test]
    fn listpack_entry_sizes() {
        for (e, want) in [
            (Int(0), 2),
            (Int(127), 2),
            (Int(128), 3),
            (Int(-4096), 3),
            (Int(4096), 4),
            (Int(-32_768), 4),
            (Int(32_768), 5),
            (Int(8_388_608), 6),
            (Int(i64::from(i32::MIN)), 6),
            (Int(i64::MAX), 10),
            (Bytes(b"12345"), 4),
            (Bytes(b"007"), 5),
            (Bytes(b"-0"), 4),
            (Bytes(b""), 2),
            (Bytes(b"hello"), 7),
            (Bytes(&[b'x'; 63]), 65),
            (Bytes(&[b'x'; 64]), 67),
            (Bytes(&[b'x'; 125]), 128),
            (Bytes(&[b'x'; 126]), 130),
            (Bytes(&[b'x'; 4095]), 4099),
            (Bytes(&[b'x'; 4096]), 4103),
        ] {
            assert_eq!(lp_entry(e), want, "{e:?}");
        }
        // "RPUSH a b c" is a 16-byte listpack (memory-model.md §4).
        let lp = LP_EMPTY
            + [b"a", b"b", b"c"]
                .iter()
                .map(|b| lp_entry(Bytes(*b)))
                .sum::<u64>();
        assert_eq!(lp, 16);
    }

    #[test]
    fn ziplist_prevlen_grows_after_a_long_entry() {
        let mut zl = Ziplist::default();
        zl.push(Int(5));
        zl.push(Bytes(&[b'x'; 300]));
        zl.push(Int(1000));
        // 11 + (1+1) + (1+2+300) + (5+3)
        assert_eq!(zl.bytes, 11 + 2 + 303 + 8);
    }

    #[test]
    fn intset_widths() {
        assert_eq!(intset_width(-32_768), 2);
        assert_eq!(intset_width(32_768), 4);
        assert_eq!(intset_width(i64::from(i32::MIN) - 1), 8);
    }
}
