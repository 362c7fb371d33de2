//! One element of a collection: bytes or an integer, as the encodings store them.

/// A decoded element. Compact encodings store numbers as integers; their
/// logical value (what a client reads) is the decimal text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element<'b> {
    Bytes(&'b [u8]),
    Int(i64),
}

impl<'b> Element<'b> {
    /// Length of the logical value in bytes (decimal text for integers).
    pub fn len(&self) -> usize {
        match *self {
            Element::Bytes(b) => b.len(),
            Element::Int(i) => decimal_len(i),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the logical bytes to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        match *self {
            Element::Bytes(b) => out.extend_from_slice(b),
            Element::Int(i) => {
                let mut buf = itoa_buf(i);
                out.extend_from_slice(buf.as_slice(&mut [0u8; 20]));
            }
        }
    }

    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        self.write_to(&mut out);
        out
    }

    /// The integer value, for integer entries or bytes that are a canonical
    /// decimal integer (what Redis' `string2ll` accepts).
    pub fn as_int(&self) -> Option<i64> {
        match *self {
            Element::Int(i) => Some(i),
            Element::Bytes(b) => parse_canonical_int(b),
        }
    }
}

/// Number of bytes of the decimal text of `i`.
pub fn decimal_len(i: i64) -> usize {
    let mut n = if i < 0 { 2 } else { 1 };
    let mut v = i.unsigned_abs();
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

struct ItoaBuf(i64);

fn itoa_buf(i: i64) -> ItoaBuf {
    ItoaBuf(i)
}

impl ItoaBuf {
    fn as_slice<'s>(&mut self, buf: &'s mut [u8; 20]) -> &'s [u8] {
        let mut pos = buf.len();
        let mut v = self.0.unsigned_abs();
        loop {
            pos -= 1;
            buf[pos] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        if self.0 < 0 {
            pos -= 1;
            buf[pos] = b'-';
        }
        &buf[pos..]
    }
}

/// Redis' `string2ll`: no leading zeros, no `+`, no spaces, fits in i64.
pub fn parse_canonical_int(b: &[u8]) -> Option<i64> {
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
}
