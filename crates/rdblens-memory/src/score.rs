//! The text a sorted-set score takes inside a listpack or ziplist
//! (`d2string()`, `src/util.c`). Only its length and whether it reads as an
//! integer matter for sizing, but both depend on the exact formatting rule
//! of the server version.

use std::io::Write;

/// How a server version renders a double.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScoreFormat {
    /// Up to 7.0: integers strictly inside ±2^52 via `ll2string`, the rest
    /// with `printf("%.17g")`.
    Printf17,
    /// 7.2+: integers within ±LLONG_MAX/2 via `ll2string` (`double2ll`), the
    /// rest as the shortest round-trip text (`fpconv_dtoa`, grisu).
    Shortest,
}

/// A rendered score; long enough for any double in either format.
pub(crate) struct ScoreText {
    buf: [u8; 40],
    len: usize,
}

impl ScoreText {
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Renders `v` as `d2string()` of the given format does.
pub(crate) fn d2string(v: f64, format: ScoreFormat) -> ScoreText {
    let mut out = ScoreText { buf: [0; 40], len: 0 };
    let text: &[u8] = if v.is_nan() {
        b"nan"
    } else if v.is_infinite() {
        if v < 0.0 {
            b"-inf"
        } else {
            b"inf"
        }
    } else if v == 0.0 {
        // Signed zero keeps its sign.
        if v.is_sign_negative() {
            b"-0"
        } else {
            b"0"
        }
    } else {
        if let Some(i) = integral(v, format) {
            write_fmt(&mut out, format_args!("{i}"));
        } else {
            let mut digits = Digits::default();
            match format {
                ScoreFormat::Printf17 => {
                    digits.read(format_args!("{:.16e}", v.abs()));
                    digits.printf_g17(&mut out, v < 0.0);
                }
                ScoreFormat::Shortest => {
                    digits.read(format_args!("{:e}", v.abs()));
                    digits.fpconv(&mut out, v < 0.0);
                }
            }
        }
        return out;
    };
    out.buf[..text.len()].copy_from_slice(text);
    out.len = text.len();
    out
}

/// The integer `v` prints as, when the version takes the `ll2string` path.
fn integral(v: f64, format: ScoreFormat) -> Option<i64> {
    let (lo, hi) = match format {
        // -(2^52-1) < v < 2^52, exclusive.
        ScoreFormat::Printf17 => (-4_503_599_627_370_495.0, 4_503_599_627_370_496.0),
        ScoreFormat::Shortest => ((-(i64::MAX / 2)) as f64, (i64::MAX / 2) as f64),
    };
    let inside = match format {
        ScoreFormat::Printf17 => v > lo && v < hi,
        ScoreFormat::Shortest => v >= lo && v <= hi,
    };
    // Both bounds are far inside i64, so the cast is exact when v is integral.
    (inside && v.trunc() == v).then_some(v as i64)
}

fn write_fmt(out: &mut ScoreText, args: std::fmt::Arguments<'_>) {
    let mut cursor = &mut out.buf[..];
    let before = cursor.len();
    // 40 bytes hold any i64 or 17-digit float; a failed write leaves a
    // truncated text, which only shortens the estimate.
    let _ = cursor.write_fmt(args);
    out.len = before - cursor.len();
}

/// Decimal digits and exponent of a positive double: value = 0.d1d2... ×
/// 10^(exp+1), as Rust's `{:e}` prints it (`d.ddde±x`).
#[derive(Default)]
struct Digits {
    digits: [u8; 24],
    n: usize,
    exp: i32,
}

impl Digits {
    fn read(&mut self, args: std::fmt::Arguments<'_>) {
        let mut text = ScoreText { buf: [0; 40], len: 0 };
        write_fmt(&mut text, args);
        let s = text.as_bytes();
        let mut exp_sign = 1;
        let mut exp = 0i32;
        let mut in_exp = false;
        for &c in s {
            match c {
                b'e' => in_exp = true,
                b'-' if in_exp => exp_sign = -1,
                b'0'..=b'9' if in_exp => exp = exp * 10 + i32::from(c - b'0'),
                b'0'..=b'9' if self.n < self.digits.len() => {
                    self.digits[self.n] = c;
                    self.n += 1;
                }
                _ => {}
            }
        }
        self.exp = exp_sign * exp;
    }

    /// C's `%.17g`: 17 significant digits, fixed notation when the exponent
    /// is in [-4, 17), trailing zeros removed, exponent with at least two
    /// digits.
    fn printf_g17(&self, out: &mut ScoreText, neg: bool) {
        let mut n = self.n;
        while n > 1 && self.digits[n - 1] == b'0' {
            n -= 1;
        }
        let d = &self.digits[..n];
        let mut w = Writer::new(out, neg);
        let Some((&first, rest)) = d.split_first() else {
            return;
        };
        if (-4..17).contains(&self.exp) {
            w.fixed(d, self.exp);
        } else {
            w.push(first);
            if !rest.is_empty() {
                w.push(b'.');
                w.extend(rest);
            }
            w.exponent(self.exp, 2);
        }
    }

    /// `fpconv_dtoa()` as vendored in Redis 7.2 (`emit_digits`).
    fn fpconv(&self, out: &mut ScoreText, neg: bool) {
        let ndigits = self.n as i32;
        let d = &self.digits[..self.n];
        // K: the power of ten of the last digit.
        let k = self.exp - (ndigits - 1);
        let exp = (k + ndigits - 1).abs();
        let mut w = Writer::new(out, neg);
        let Some((&first, rest)) = d.split_first() else {
            return;
        };
        if k >= 0 && exp < ndigits + 7 {
            w.extend(d);
            for _ in 0..k {
                w.push(b'0');
            }
        } else if k < 0 && (k > -7 || exp < 4) {
            w.fixed(d, self.exp);
        } else {
            // fpconv keeps at most 17 digits (18 minus the sign).
            let keep = (ndigits.min(18 - i32::from(neg)).max(1) - 1) as usize;
            w.push(first);
            if keep > 0 && !rest.is_empty() {
                w.push(b'.');
                w.extend(&rest[..keep.min(rest.len())]);
            }
            w.exponent(self.exp, 1);
        }
    }
}

struct Writer<'o> {
    out: &'o mut ScoreText,
}

impl<'o> Writer<'o> {
    fn new(out: &'o mut ScoreText, neg: bool) -> Self {
        out.len = 0;
        let mut w = Writer { out };
        if neg {
            w.push(b'-');
        }
        w
    }

    fn push(&mut self, c: u8) {
        if self.out.len < self.out.buf.len() {
            self.out.buf[self.out.len] = c;
            self.out.len += 1;
        }
    }

    fn extend(&mut self, s: &[u8]) {
        for &c in s {
            self.push(c);
        }
    }

    /// Digits `d` (first digit at power `exp`) in positional notation.
    fn fixed(&mut self, d: &[u8], exp: i32) {
        if exp < 0 {
            self.extend(b"0.");
            for _ in 0..(-exp - 1) {
                self.push(b'0');
            }
            self.extend(d);
            return;
        }
        let int_len = exp as usize + 1;
        for i in 0..int_len {
            self.push(d.get(i).copied().unwrap_or(b'0'));
        }
        if let Some(fraction) = d.get(int_len..).filter(|f| !f.is_empty()) {
            self.push(b'.');
            self.extend(fraction);
        }
    }

    fn exponent(&mut self, exp: i32, min_digits: usize) {
        self.push(b'e');
        self.push(if exp < 0 { b'-' } else { b'+' });
        let mut buf = ScoreText { buf: [0; 40], len: 0 };
        write_fmt(
            &mut buf,
            format_args!("{:0w$}", exp.unsigned_abs(), w = min_digits),
        );
        self.extend(buf.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: f64, f: ScoreFormat) -> String {
        String::from_utf8_lossy(d2string(v, f).as_bytes()).into_owned()
    }

    #[test]
    fn printf17_matches_glibc() {
        use ScoreFormat::Printf17 as P;
        assert_eq!(text(1.0 / 3.0, P), "0.33333333333333331");
        assert_eq!(text(2.5, P), "2.5");
        assert_eq!(text(-3.0, P), "-3");
        assert_eq!(text(0.1, P), "0.10000000000000001");
        assert_eq!(text(1e300, P), "1.0000000000000001e+300");
        assert_eq!(text(1e-300, P), "1e-300");
        assert_eq!(text(9_007_199_254_740_993.0, P), "9007199254740992");
        assert_eq!(text(std::f64::consts::PI, P), "3.1415926535897931");
        assert_eq!(text(1e16, P), "10000000000000000");
        assert_eq!(text(1e17, P), "1e+17");
        assert_eq!(text(0.0001, P), "0.0001");
        assert_eq!(text(0.00001, P), "1.0000000000000001e-05");
        assert_eq!(text(f64::NEG_INFINITY, P), "-inf");
        assert_eq!(text(-0.0, P), "-0");
    }

    #[test]
    fn shortest_matches_fpconv() {
        use ScoreFormat::Shortest as S;
        assert_eq!(text(1.0 / 3.0, S), "0.3333333333333333");
        assert_eq!(text(5.25001, S), "5.25001");
        assert_eq!(text(1e300, S), "1e+300");
        assert_eq!(text(1e-300, S), "1e-300");
        assert_eq!(text(9_007_199_254_740_993.0, S), "9007199254740992");
        assert_eq!(text(1e19, S), "1e+19");
        assert_eq!(text(1.5e-7, S), "1.5e-7");
        assert_eq!(text(0.001, S), "0.001");
        assert_eq!(text(-2.5, S), "-2.5");
        assert_eq!(text(123.456, S), "123.456");
    }
}
