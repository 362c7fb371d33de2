//! The text a sorted-set score takes inside a listpack or ziplist
//! (`d2string()`, `src/util.c`). Only its length and whether it reads as an
//! integer matter for sizing, but both depend on the exact formatting rule
//! of the server version.
//!
//! Scores are rendered for every member of a sorted set the target rebuilds,
//! so this avoids `core::fmt`: integers take the `ll2string` path without any
//! text, `%.17g` digits come from exact 128-bit arithmetic, shortest
//! round-trip digits from `ryu`. Values outside what those cover (far
//! exponents, subnormals) fall back to `core::fmt`, which the tests compare
//! the fast paths against.

use std::io::Write;

use crate::compact::Packed;

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

/// What a listpack or ziplist stores for the text `d2string()` makes of `v`:
/// the same as `Packed::of_bytes(d2string(v, format).as_bytes())`.
pub(crate) fn score_entry(v: f64, format: ScoreFormat) -> Packed {
    if v.is_finite() && v != 0.0 {
        if let Some(i) = integral(v, format) {
            // ll2string text is canonical (v is not zero).
            return Packed::Int(i);
        }
        if format == ScoreFormat::Printf17 {
            if let Some(len) = round17(v.abs()).and_then(|(d, e)| printf17_len(d, e, v < 0.0)) {
                return Packed::Str(len);
            }
        }
    }
    Packed::of_bytes(d2string(v, format).as_bytes())
}

/// The length of `%.17g`'s text for the 17 rounded digits `d` at power
/// `e` (see [`round17`]), when that text has a point or an exponent and so
/// is stored as a string; `None` when it is all digits (an integer the
/// caller renders). Counted, not written: rendering every member's score of
/// every skiplist the target would pack was 5 % of a report on prod-1g.
fn printf17_len(mut d: u64, e: i32, neg: bool) -> Option<u64> {
    let mut n = 17;
    while n > 1 && d.is_multiple_of(10) {
        d /= 10;
        n -= 1;
    }
    let body = if (-4..17).contains(&e) {
        if e < 0 {
            // "0." and -e-1 zeros before the digits.
            2 + (-e - 1) + n
        } else if n > e + 1 {
            // The digits with a point after the first e+1.
            n + 1
        } else {
            return None;
        }
    } else {
        // d[.ddd]e±XX, the exponent with at least two digits.
        let mantissa = if n > 1 { n + 1 } else { 1 };
        let exp_digits = if e.unsigned_abs() >= 100 { 3 } else { 2 };
        mantissa + 2 + exp_digits
    };
    Some(u64::from(neg) + body as u64)
}

/// Renders `v` as `d2string()` of the given format does.
pub(crate) fn d2string(v: f64, format: ScoreFormat) -> ScoreText {
    render(v, format, Digits::of)
}

fn render(v: f64, format: ScoreFormat, digits_of: fn(f64, ScoreFormat) -> Digits) -> ScoreText {
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
            let mut w = Writer::new(&mut out, i < 0);
            w.unsigned(i.unsigned_abs(), 1);
        } else {
            let digits = digits_of(v.abs(), format);
            match format {
                ScoreFormat::Printf17 => digits.printf_g17(&mut out, v < 0.0),
                ScoreFormat::Shortest => digits.fpconv(&mut out, v < 0.0),
            }
        }
        return out;
    };
    out.buf[..text.len()].copy_from_slice(text);
    out.len = text.len();
    out
}

/// The integer `v` prints as, when the version takes the `ll2string` path.
#[inline]
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

/// 5^k for k in 0..=54 (5^54 < 2^126, so twice a remainder still fits).
const POW5: [u128; 55] = {
    let mut t = [1u128; 55];
    let mut k = 1;
    while k < 55 {
        t[k] = t[k - 1] * 5;
        k += 1;
    }
    t
};

const E16: u64 = 10_000_000_000_000_000;
const E17: u64 = 100_000_000_000_000_000;

/// `v` (positive, finite, not zero) rounded to 17 significant digits, ties
/// to even, as glibc's `printf` (and Rust's `{:.16e}`) rounds: `(d, e)` with
/// 10^16 <= d < 10^17 and v ~ d × 10^(e-16). Exact: v × 10^(16-e) is
/// computed as a 128-bit fraction. `None` where that does not fit (v under
/// about 1e-16 or over about 1e47).
fn round17(v: f64) -> Option<(u64, i32)> {
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 || biased == 0x7ff {
        return None;
    }
    let m = u128::from((bits & ((1u64 << 52) - 1)) | (1u64 << 52));
    // v = m × 2^q
    let q = biased - 1075;
    // From the binary exponent (v is in [2^(q+52), 2^(q+53))): the
    // estimate is the power of ten or one under it, and the range check on
    // the truncated result corrects it (`log10` was a third of this).
    let mut e = (f64::from(q + 52) * std::f64::consts::LOG10_2).floor() as i32;
    for _ in 0..3 {
        let p = 16 - e;
        // floor(v × 10^p), and the remainder against one half.
        let (floor, rem) = if p >= 0 {
            let p = p as usize;
            if p >= POW5.len() {
                return None;
            }
            // m × 5^p × 2^(q+p)
            let num = m.checked_mul(POW5[p])?;
            let shift = q + p as i32;
            if shift >= 0 {
                if shift >= 64 || num.leading_zeros() < 64 + shift as u32 {
                    // At least 2^64: far above 10^17.
                    e += 1;
                    continue;
                }
                (num << shift, std::cmp::Ordering::Less)
            } else {
                let s = (-shift) as u32;
                if s >= 127 {
                    return None;
                }
                let rem = num & ((1u128 << s) - 1);
                (num >> s, rem.cmp(&(1u128 << (s - 1))))
            }
        } else {
            // m × 2^(q-k) / 5^k
            let k = (-p) as usize;
            let shift = q - k as i32;
            if k >= POW5.len() || !(0..=74).contains(&shift) {
                return None;
            }
            let num = m << shift;
            let den = POW5[k];
            (num / den, (2 * (num % den)).cmp(&den))
        };
        if floor < u128::from(E16) {
            e -= 1;
            continue;
        }
        if floor >= u128::from(E17) {
            e += 1;
            continue;
        }
        let mut d = floor as u64;
        if rem == std::cmp::Ordering::Greater || (rem == std::cmp::Ordering::Equal && d % 2 == 1) {
            d += 1;
        }
        if d == E17 {
            return Some((E16, e + 1));
        }
        return Some((d, e));
    }
    None
}

/// Decimal digits and exponent of a positive double: value = 0.d1d2... ×
/// 10^(exp+1), as Rust's `{:e}` prints it (`d.ddde±x`).
#[derive(Debug, Default, PartialEq, Eq)]
struct Digits {
    digits: [u8; 24],
    n: usize,
    exp: i32,
}

impl Digits {
    /// The digits `format` needs for `v` (positive, finite, not zero).
    fn of(v: f64, format: ScoreFormat) -> Digits {
        Digits::fast(v, format).unwrap_or_else(|| Digits::formatted(v, format))
    }

    /// Without `core::fmt`, where the fast paths cover `v`.
    fn fast(v: f64, format: ScoreFormat) -> Option<Digits> {
        let mut d = Digits::default();
        match format {
            ScoreFormat::Printf17 => {
                let (mut digits, exp) = round17(v)?;
                d.n = 17;
                for slot in d.digits[..17].iter_mut().rev() {
                    *slot = b'0' + (digits % 10) as u8;
                    digits /= 10;
                }
                d.trim();
                d.exp = exp;
            }
            ScoreFormat::Shortest => {
                // Where two shortest texts are equally close to `v`, ryu
                // takes the even last digit and core::fmt may not: the
                // digits differ, their count and the exponent do not.
                let mut buf = ryu::Buffer::new();
                d.read(buf.format_finite(v).as_bytes());
            }
        }
        Some(d)
    }

    /// Through `core::fmt`: `{:.16e}` is `%.17g`'s rounding, `{:e}` the
    /// shortest round trip.
    fn formatted(v: f64, format: ScoreFormat) -> Digits {
        let mut text = ScoreText { buf: [0; 40], len: 0 };
        match format {
            ScoreFormat::Printf17 => write_fmt(&mut text, format_args!("{v:.16e}")),
            ScoreFormat::Shortest => write_fmt(&mut text, format_args!("{v:e}")),
        }
        let mut d = Digits::default();
        d.read(text.as_bytes());
        d
    }

    /// Reads a positive number written `d.ddde±x` (`core::fmt`), or in
    /// positional notation with an optional exponent (`ryu`: `123.45`,
    /// `0.001`, `1234.0`, `1e16`, `1.5e-7`): its significant digits, from
    /// the first non-zero one, without trailing zeros, and the power of ten
    /// of the first. (A shortest round-trip representation never ends in a
    /// significant zero, and `%.17g` drops trailing zeros.)
    fn read(&mut self, s: &[u8]) {
        let (mantissa, exp_text) = match s.iter().position(|&c| c == b'e') {
            Some(i) => (&s[..i], &s[i + 1..]),
            None => (s, &b""[..]),
        };
        let mut exp = 0i32;
        let mut exp_sign = 1;
        for &c in exp_text {
            match c {
                b'-' => exp_sign = -1,
                b'0'..=b'9' => exp = exp * 10 + i32::from(c - b'0'),
                _ => {}
            }
        }
        let int_len = mantissa.iter().position(|&c| c == b'.').unwrap_or(mantissa.len()) as i32;
        let mut first = None;
        for (i, &c) in mantissa.iter().filter(|c| c.is_ascii_digit()).enumerate() {
            if first.is_none() {
                if c == b'0' {
                    continue;
                }
                first = Some(i as i32);
            }
            if self.n < self.digits.len() {
                self.digits[self.n] = c;
                self.n += 1;
            }
        }
        self.trim();
        self.exp = exp_sign * exp + int_len - 1 - first.unwrap_or(0);
    }

    fn trim(&mut self) {
        while self.n > 1 && self.digits[self.n - 1] == b'0' {
            self.n -= 1;
        }
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
        self.unsigned(u64::from(exp.unsigned_abs()), min_digits);
    }

    /// `v` in decimal, zero-padded to `min_digits`.
    fn unsigned(&mut self, mut v: u64, min_digits: usize) {
        let mut buf = [b'0'; 20];
        let mut pos = buf.len();
        while v > 0 {
            pos -= 1;
            buf[pos] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        let start = pos.min(buf.len() - min_digits.min(buf.len()));
        self.extend(&buf[start..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact;

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

    /// `d2string()` as it was written before the fast paths: `core::fmt`
    /// for the digits and for integers.
    fn reference(v: f64, f: ScoreFormat) -> Vec<u8> {
        if v.is_finite() && v != 0.0 {
            if let Some(i) = integral(v, f) {
                return i.to_string().into_bytes();
            }
        }
        render(v, f, Digits::formatted).as_bytes().to_vec()
    }

    /// xorshift64*, for reproducible pseudo-random inputs.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Scores of every kind: integers (timestamps, counters), fixed-point
    /// decimals, binary fractions (halves... and exact ties at the 17th
    /// digit), neighbours of powers of ten, random bit patterns (every
    /// exponent, subnormals), and the special values.
    fn sample_scores() -> Vec<f64> {
        let mut v = vec![
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::EPSILON,
            5e-324,
            0.1,
            0.2,
            0.3,
            1.0 / 3.0,
            2.0 / 3.0,
            std::f64::consts::PI,
            // Exact ties at the 17th significant digit.
            1234567890123456.0 + 0.25,
            1234567890123456.0 + 0.75,
            1125899906842624.0 + 0.75,
            4503599627370495.5,
            4503599627370496.0,
            -4503599627370495.0,
            -4503599627370496.0,
            9007199254740993.0,
            4611686018427387904.0,
            -4611686018427387904.0,
            4611686018427388904.0,
            9223372036854775807.0,
            1e300,
            1e-300,
        ];
        let mut p = 1e-30f64;
        for _ in 0..80 {
            for x in [p, p * 1.5, p * 9.999_999_999_999_999] {
                let b = x.to_bits();
                v.extend([x, f64::from_bits(b + 1), f64::from_bits(b - 1)]);
            }
            p *= 10.0;
        }
        for k in 0..64 {
            let x = 2f64.powi(k);
            v.extend([
                x,
                x + 0.5,
                x - 0.5,
                x + 0.25,
                x * 1.25,
                x.next_up(),
                x.next_down(),
            ]);
        }
        let mut s = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..40_000 {
            let r = next(&mut s);
            v.push(f64::from_bits(r));
            // Counters, timestamps (ms and s), prices, fixed-point.
            v.push((r % 100_000) as f64);
            v.push((1_600_000_000_000 + r % 100_000_000_000) as f64);
            v.push((r % 1_000_000) as f64 / 100.0);
            v.push((r % 10_000_000) as f64 / 1000.0);
            v.push((r % 100_000_000) as f64 / 10_000.0);
            v.push(-((r % 1_000_000_007) as f64) / 7.0);
            // Binary fractions with many digits: ties at the 17th digit.
            let shift = (r >> 58) as i32;
            v.push((r >> 11) as f64 / 2f64.powi(shift));
            v.push((r >> (r % 64)) as f64 * 2f64.powi(shift - 20));
            // Uniform mantissa across exponents the fast paths cover.
            let m = (r >> 12) as f64 / (1u64 << 52) as f64;
            v.push((1.0 + m) * 10f64.powi((r % 70) as i32 - 20));
        }
        v
    }

    #[test]
    fn fast_paths_match_core_fmt() {
        let (mut covered, mut total) = (0, 0);
        for v in sample_scores() {
            for f in [ScoreFormat::Printf17, ScoreFormat::Shortest] {
                let want = reference(v, f);
                let got = d2string(v, f);
                let (entry, want_entry) = (score_entry(v, f), Packed::of_bytes(&want));
                if f == ScoreFormat::Printf17 {
                    assert_eq!(got.as_bytes(), &want[..], "{v:e} {f:?}");
                    assert_eq!(entry, want_entry, "{v:e} {f:?}");
                } else {
                    // Where two shortest texts are equally close, ryu and
                    // core::fmt may pick different last digits; the length
                    // and what the encodings store for it agree.
                    assert_eq!(got.as_bytes().len(), want.len(), "{v:e} {f:?}");
                    assert_eq!(compact::lp_packed(entry), compact::lp_packed(want_entry), "{v:e}");
                    assert_eq!(compact::zl_body(entry), compact::zl_body(want_entry), "{v:e}");
                }
                if v.is_finite() && v != 0.0 {
                    let a = v.abs();
                    if let Some(d) = Digits::fast(a, f) {
                        let want = Digits::formatted(a, f);
                        if f == ScoreFormat::Printf17 {
                            assert_eq!(d, want, "{v:e} {f:?}");
                        } else {
                            assert_eq!((d.n, d.exp), (want.n, want.exp), "{v:e} {f:?}");
                            assert_eq!(d.digits[..d.n - 1], want.digits[..want.n - 1], "{v:e}");
                        }
                    }
                    if f == ScoreFormat::Printf17 && (1e-15..1e40).contains(&a) {
                        total += 1;
                        covered += usize::from(Digits::fast(a, f).is_some());
                    }
                }
            }
        }
        // %.17g takes the exact path throughout its range.
        assert_eq!(covered, total);
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
