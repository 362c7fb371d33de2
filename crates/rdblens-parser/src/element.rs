//! One element of a collection: bytes or an integer, as the encodings store them.

/// A decoded element. Compact encodings store numbers as integers; their
/// logical value (what a client reads) is the decimal text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element<'b> {
    /// A string element, as stored (not necessarily valid UTF-8).
    Bytes(&'b [u8]),
    /// An element the encoding stores as an integer.
    Int(i64),
}

impl<'b> Element<'b> {
    /// Length of the logical value in bytes (decimal text for integers).
    #[inline]
    pub fn len(&self) -> usize {
        match *self {
            Element::Bytes(b) => b.len(),
            Element::Int(i) => decimal_len(i),
        }
    }

    /// True when the logical value is the empty string (never for an integer).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the logical bytes to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        match *self {
            Element::Bytes(b) => out.extend_from_slice(b),
            Element::Int(i) => {
                out.extend_from_slice(decimal(i, &mut [0u8; 20]));
            }
        }
    }

    /// The logical bytes in a new vector (decimal text for integers).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        self.write_to(&mut out);
        out
    }

    /// The integer value, for integer entries or bytes that are a canonical
    /// decimal integer (what Redis' `string2ll` accepts).
    #[inline]
    pub fn as_int(&self) -> Option<i64> {
        match *self {
            Element::Int(i) => Some(i),
            Element::Bytes(b) => parse_canonical_int(b),
        }
    }
}

/// `10^k` for `k` in 1..=19; entry 0 is 0 so that 0 counts one digit.
const POW10: [u64; 20] = {
    let mut t = [0u64; 20];
    let mut k = 1;
    let mut p = 1u64;
    while k < 20 {
        p *= 10;
        t[k] = p;
        k += 1;
    }
    t
};

/// Number of bytes of the decimal text of `i`.
#[inline]
pub fn decimal_len(i: i64) -> usize {
    let v = i.unsigned_abs();
    // floor(log10(2) * bits) is the digit count or one less (1233/4096 ~ log10 2).
    let bits = 64 - (v | 1).leading_zeros();
    let t = ((bits * 1233) >> 12) as usize;
    let digits = t + usize::from(v >= POW10[t]);
    digits + usize::from(i < 0)
}

/// The decimal text of `i`, written at the end of `buf`.
pub(crate) fn decimal(i: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut pos = buf.len();
    let mut v = i.unsigned_abs();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if i < 0 {
        pos -= 1;
        buf[pos] = b'-';
    }
    &buf[pos..]
}

/// Redis' `string2ll`: no leading zeros, no `+`, no spaces, fits in i64.
///
/// Most elements are not integers and fail on the first byte, so that test
/// is inlined; the digit loop is out of line.
#[inline]
pub fn parse_canonical_int(b: &[u8]) -> Option<i64> {
    match b.first() {
        Some(b'1'..=b'9' | b'-') => parse_digits(b),
        Some(b'0') if b.len() == 1 => Some(0),
        _ => None,
    }
}

/// [`parse_canonical_int`] of a string starting with `1`-`9` or `-`.
fn parse_digits(b: &[u8]) -> Option<i64> {
    if b.len() > 20 {
        return None;
    }
    let (neg, digits) = match b {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, b),
    };
    if !matches!(digits.first(), Some(b'1'..=b'9')) {
        return None;
    }
    if digits.len() <= 18 {
        // At most 18 digits: no overflow possible (10^18 < 2^63).
        let mut v: u64 = 0;
        for &d in digits {
            let x = d.wrapping_sub(b'0');
            if x > 9 {
                return None;
            }
            v = v * 10 + u64::from(x);
        }
        let v = v as i64;
        return Some(if neg { -v } else { v });
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if neg {
        if v <= 1u64 << 63 {
            Some((v as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(v).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_forms() {
        for i in [0i64, 7, -7, 10, 99, -100, i64::MAX, i64::MIN] {
            let text = i.to_string();
            assert_eq!(decimal_len(i), text.len());
            assert_eq!(Element::Int(i).to_vec(), text.as_bytes());
            assert_eq!(parse_canonical_int(text.as_bytes()), Some(i));
        }
        for bad in ["007", "+5", "-0", "", "-", "1 ", "9223372036854775808"] {
            assert_eq!(parse_canonical_int(bad.as_bytes()), None, "{bad}");
        }
    }

    /// The straightforward `string2ll` the fast version replaced.
    fn reference_parse(b: &[u8]) -> Option<i64> {
        if b.is_empty() || b.len() > 20 {
            return None;
        }
        if b == b"0" {
            return Some(0);
        }
        let (neg, digits) = match b[0] {
            b'-' => (true, &b[1..]),
            _ => (false, b),
        };
        if digits.is_empty() || digits[0] == b'0' {
            return None;
        }
        let mut v: u64 = 0;
        for &d in digits {
            if !d.is_ascii_digit() {
                return None;
            }
            v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        }
        if neg {
            (v <= 1u64 << 63).then(|| (v as i64).wrapping_neg())
        } else {
            i64::try_from(v).ok()
        }
    }

    /// xorshift64*, for reproducible pseudo-random inputs.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    #[test]
    fn decimal_len_matches_the_text() {
        let mut values = vec![0i64, 1, -1, i64::MAX, i64::MIN, i64::MIN + 1];
        let mut p = 1i64;
        for _ in 0..19 {
            values.extend([p - 1, p, p + 1, -p + 1, -p, -p - 1]);
            p = p.saturating_mul(10);
        }
        let mut s = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..100_000 {
            let r = next(&mut s);
            values.push(r as i64);
            values.push((r >> (r % 64)) as i64);
        }
        for i in values {
            assert_eq!(decimal_len(i), i.to_string().len(), "{i}");
        }
    }

    #[test]
    fn fast_parse_matches_the_reference() {
        let mut inputs: Vec<Vec<u8>> = [
            "0",
            "-0",
            "00",
            "01",
            "-01",
            "1",
            "-1",
            "-",
            "",
            "+1",
            " 1",
            "1 ",
            "12a",
            "a12",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999",
            "-99999999999999999999",
            "999999999999999999",
            "-999999999999999999",
            "1000000000000000000",
            "18446744073709551616",
            "123456789012345678901",
            "1:2",
            "1/2",
            "--1",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let alphabet = b"0123456789-+ a/:";
        let mut s = 0x1234_5678_9ABC_DEF1;
        for _ in 0..200_000 {
            let r = next(&mut s);
            let len = (r % 22) as usize;
            let mut b = Vec::with_capacity(len);
            let mut r2 = next(&mut s);
            for k in 0..len {
                if k % 10 == 9 {
                    r2 = next(&mut s);
                }
                // Mostly digits, so that long numbers come up.
                let pick = (r2 % 64) as usize;
                r2 /= 64;
                b.push(if pick < 50 {
                    b'0' + (pick % 10) as u8
                } else {
                    alphabet[pick % alphabet.len()]
                });
            }
            inputs.push(b);
            let i = next(&mut s) as i64 >> (r % 64);
            inputs.push(i.to_string().into_bytes());
        }
        for b in inputs {
            assert_eq!(
                parse_canonical_int(&b),
                reference_parse(&b),
                "{:?}",
                String::from_utf8_lossy(&b)
            );
        }
    }
}
