//! Request sizes of the string headers Redis and Valkey allocate: sds
//! (`src/sds.h`), and the 7.4+ `mstr` used for hash fields.

/// Header bytes `sdsReqType()` picks for an `n`-byte string.
///
/// `tight` selects the cut-offs of Valkey 8.0+ and Redis 8.4, which move a
/// string to the next header only when header + string + NUL no longer fits
/// the type's `alloc` field (so 252 bytes still use sdshdr8).
pub(crate) fn header(n: u64, tight: bool) -> u64 {
    if n < 32 {
        1
    } else if tight {
        match n {
            32..=252 => 3,
            253..=65_530 => 5,
            65_531..=0xFFFF_FFF6 => 9,
            _ => 17,
        }
    } else {
        match n {
            32..=255 => 3,
            256..=65_535 => 5,
            65_536..=0xFFFF_FFFF => 9,
            _ => 17,
        }
    }
}

/// Bytes `sdsnewlen(n)` asks the allocator for. An empty sds is created as
/// sdshdr8 ("empty strings are usually created in order to append"), so it
/// costs 4, not 2.
pub(crate) fn request(n: u64, tight: bool) -> u64 {
    if n == 0 {
        4
    } else {
        header(n, tight) + n + 1
    }
}

/// `sdsReqSize(n, sdsReqType(n))`: the bytes an sds copied *into* another
/// allocation takes (embedded keys, skiplist members). Unlike
/// [`request`], an empty string keeps the 1-byte type-5 header.
pub(crate) fn embedded(n: u64, tight: bool) -> u64 {
    header(n, tight) + n + 1
}

/// An sds written with a forced sdshdr8 header (embedded string values).
pub(crate) fn embedded8(n: u64) -> u64 {
    3 + n + 1
}

/// Redis 7.4+ `mstr` (hash fields): a 1, 3 or 9-byte header, the bytes, NUL.
pub(crate) fn mstr(n: u64) -> u64 {
    let hdr = match n {
        0..=31 => 1,
        32..=65_535 => 3,
        _ => 9,
    };
    hdr + n + 1
}

/// Extra bytes a 7.4+ hash field carries when it has a TTL: the 16-byte
/// `ExpireMeta` and 2 bytes of mstr metadata flags (`hfieldNew`).
pub(crate) const MSTR_TTL_META: u64 = 16 + 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_types_at_their_boundaries() {
        for (n, classic, tight) in [
            (0, 1, 1),
            (31, 1, 1),
            (32, 3, 3),
            (252, 3, 3),
            (253, 3, 5),
            (255, 3, 5),
            (256, 5, 5),
            (65_530, 5, 5),
            (65_531, 5, 9),
            (65_535, 5, 9),
            (65_536, 9, 9),
            (0xFFFF_FFFF, 9, 17),
            (1 << 32, 17, 17),
        ] {
            assert_eq!(header(n, false), classic, "classic n={n}");
            assert_eq!(header(n, true), tight, "tight n={n}");
        }
    }

    #[test]
    fn request_sizes() {
        assert_eq!(request(0, false), 4, "empty strings use sdshdr8");
        assert_eq!(request(5, false), 7);
        assert_eq!(request(100, false), 104);
        assert_eq!(request(300, false), 306);
        assert_eq!(embedded(0, true), 2, "embedded copies keep type 5");
        assert_eq!(embedded8(0), 4);
        assert_eq!(mstr(31), 33);
        assert_eq!(mstr(32), 36);
        assert_eq!(mstr(65_536), 65_546);
    }
}
