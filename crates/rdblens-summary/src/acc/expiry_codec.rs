//! Compact text for the expiry accumulators in summaries: a million cells
//! or sketch counters as JSON numbers would make a summary tens of MB.
//! Variable-length integers (LEB128) in base64. Hand-written: two dozen
//! lines, and no crate for either is in the dependency tree.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// A namespace sketch is mostly zero counters: whole blocks of zero bytes
/// (and their text, all `A`) are copied at once, not a chunk at a time.
/// (Small blocks: a sketch's few non-zero counters are spread evenly.)
const ZERO_BYTES: [u8; 48] = [0; 48];
const ZERO_TEXT: [u8; 64] = [b'A'; 64];

/// Standard base64 of `bytes`, `=`-padded.
pub fn to_base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(&ZERO_BYTES) {
            // ASCII: the block is text.
            out.push_str(std::str::from_utf8(&ZERO_TEXT).unwrap_or_default());
            at += ZERO_BYTES.len();
            continue;
        }
        let chunk = &bytes[at..(at + 3).min(bytes.len())];
        at += chunk.len();
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard `=`-padded base64; `None` when malformed.
pub fn from_base64(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(4) {
        return None;
    }
    // A table, not a search of the alphabet: a summary's sketch is a
    // million characters.
    const INVALID: u8 = 0xff;
    const VALUES: [u8; 256] = {
        let mut t = [INVALID; 256];
        let mut i = 0;
        while i < 64 {
            t[ALPHABET[i] as usize] = i as u8;
            i += 1;
        }
        t
    };
    let value = |c: u8| match VALUES[usize::from(c)] {
        INVALID => None,
        v => Some(u32::from(v)),
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut at = 0;
    while at < text.len() {
        if text[at..].starts_with(&ZERO_TEXT) {
            out.extend_from_slice(&ZERO_BYTES);
            at += ZERO_TEXT.len();
            continue;
        }
        let chunk = &text[at..at + 4];
        at += 4;
        let last = at == text.len();
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = (n << 6) | value(c)?;
        }
        n <<= 6 * pad as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

/// Appends `v` as an unsigned LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads one varint at `*pos`; `None` when truncated or longer than 64 bits.
pub fn get_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        let bits = u64::from(b & 0x7f);
        if shift == 63 && bits > 1 {
            return None;
        }
        v |= bits << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Maps a signed integer to an unsigned one, small magnitudes staying small (0, -1, 1, -2 -> 0, 1, 2, 3).
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for len in 0..10 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 200) as u8).collect();
            assert_eq!(from_base64(&to_base64(&bytes)).unwrap(), bytes); // ok: unit test
        }
        assert_eq!(to_base64(b"Man"), "TWFu");
        assert_eq!(to_base64(&[0, 0, 0, 0, 0, 0, 1]), "AAAAAAAAAQ==");
        assert_eq!(from_base64("AAAAAAAAAQ=="), Some(vec![0, 0, 0, 0, 0, 0, 1]));
        assert_eq!(from_base64("AAAAAA=="), Some(vec![0, 0, 0, 0]));
        // Zero blocks and what surrounds them.
        for len in [47, 48, 49, 100, 2000, 2304] {
            for at in [0, len / 2, len - 1] {
                let mut bytes = vec![0u8; len];
                bytes[at] = 7;
                let text = to_base64(&bytes);
                assert_eq!(text.len(), len.div_ceil(3) * 4);
                assert_eq!(from_base64(&text).unwrap(), bytes); // ok: unit test
            }
            let zeros = vec![0u8; len];
            assert!(to_base64(&zeros).trim_end_matches('=').bytes().all(|c| c == b'A'));
            assert_eq!(from_base64(&to_base64(&zeros)).unwrap(), zeros); // ok: unit test
        }
        assert!(from_base64("TW=u").is_none());
        assert!(from_base64("TWF").is_none());
        let mut out = Vec::new();
        for v in [0, 1, 127, 128, u64::MAX] {
            put_varint(&mut out, v);
        }
        let mut pos = 0;
        for v in [0, 1, 127, 128, u64::MAX] {
            assert_eq!(get_varint(&out, &mut pos), Some(v));
        }
        assert_eq!(get_varint(&out, &mut pos), None);
        assert_eq!(get_varint(&[0xff; 11], &mut 0), None);
        for v in [0, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
    }
}
