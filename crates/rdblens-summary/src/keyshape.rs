//! What the naming checks need to know about a key name, found in one pass.
//!
//! Several accumulators look at every key's bytes (naming problems, the
//! audit's name rules, namespaces for prefixes, expiry buckets and rule
//! hits). Each scanned the name on its own, five or six passes per key; this
//! is one pass with a byte-class table, and the rare keys with a problem pay
//! for the exact counts afterwards.

/// A byte the design rules do not want in key names.
const BAD: u8 = 1;
const BRACE: u8 = 2;
const NON_ASCII: u8 = 4;

/// The class of every byte value (bit set of the constants above).
static CLASS: [u8; 256] = {
    let mut a = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut class = 0;
        if bad_char(c) {
            class |= BAD;
        }
        if c == b'{' || c == b'}' {
            class |= BRACE;
        }
        if c >= 0x80 {
            class |= NON_ASCII;
        }
        a[b] = class;
        b += 1;
    }
    a
};

/// What the naming checks need to know about one key name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyShape {
    /// Position of the first namespace separator.
    pub first_separator: Option<usize>,
    classes: u8,
}

impl KeyShape {
    /// Scans `key` once, noting where `separator` first occurs.
    pub fn of(key: &[u8], separator: u8) -> Self {
        let classes = key.iter().fold(0, |acc, &b| acc | CLASS[usize::from(b)]);
        KeyShape {
            first_separator: key.iter().position(|&b| b == separator),
            classes,
        }
    }

    /// Whether the name holds a byte the design rules do not want (control bytes, space, quotes, backslash, glob or paren characters).
    pub fn has_bad_chars(&self) -> bool {
        self.classes & BAD != 0
    }

    /// Whether the name holds `{` or `}`.
    pub fn has_braces(&self) -> bool {
        self.classes & BRACE != 0
    }

    /// Whether every byte of the name is ASCII.
    pub fn is_ascii(&self) -> bool {
        self.classes & NON_ASCII == 0
    }

    /// The first namespace segment (the whole key when it has no separator).
    pub fn namespace<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        &key[..self.first_separator.unwrap_or(key.len())]
    }
}

/// A byte the design rules do not want in a key name: control bytes,
/// spaces, quotes and glob characters.
pub(crate) const fn bad_char(b: u8) -> bool {
    b < 0x20
        || b == 0x7f
        || matches!(
            b,
            b' ' | b'"' | b'\'' | b'\\' | b'*' | b'?' | b'[' | b']' | b'(' | b')'
        )
}

/// Braces are fine only as exactly one non-empty `{tag}`.
pub(crate) fn bad_braces(key: &[u8]) -> bool {
    let opens = key.iter().filter(|&&b| b == b'{').count();
    let closes = key.iter().filter(|&&b| b == b'}').count();
    if opens == 0 && closes == 0 {
        return false;
    }
    opens != 1 || closes != 1 || crate::slot::hash_tag(key).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_agrees_with_the_byte_checks() {
        let keys: [&[u8]; 7] = [
            b"user:1",
            b"plain",
            b"a b",
            b"{tag}:x",
            b"caf\xc3\xa9:1",
            b"\xff\xfe",
            b"",
        ];
        for key in keys {
            let s = KeyShape::of(key, b':');
            assert_eq!(s.first_separator, key.iter().position(|&b| b == b':'));
            assert_eq!(s.has_bad_chars(), key.iter().any(|&b| bad_char(b)));
            assert_eq!(s.has_braces(), key.iter().any(|&b| b == b'{' || b == b'}'));
            assert_eq!(s.is_ascii(), key.is_ascii());
        }
        assert_eq!(KeyShape::of(b"user:1", b':').namespace(b"user:1"), b"user");
        assert_eq!(KeyShape::of(b"plain", b':').namespace(b"plain"), b"plain");
    }

    /// Every byte value at every place of a key.
    #[test]
    fn every_byte_is_classed_wherever_it_is() {
        for b in 0..=255u8 {
            for at in 0..40 {
                let mut key = vec![b'a'; 40];
                key[at] = b;
                let s = KeyShape::of(&key, b':');
                assert_eq!(s.has_bad_chars(), bad_char(b), "byte {b:#04x} at {at}");
                assert_eq!(s.has_braces(), b == b'{' || b == b'}', "byte {b:#04x} at {at}");
                assert_eq!(s.is_ascii(), b < 0x80, "byte {b:#04x} at {at}");
                assert_eq!(
                    s.first_separator,
                    (b == b':').then_some(at),
                    "byte {b:#04x} at {at}"
                );
            }
        }
        let named = b" \"'\\*?[]()\x7f";
        for b in 0..=255u8 {
            assert_eq!(bad_char(b), b < 0x20 || named.contains(&b), "byte {b:#04x}");
        }
    }
}
