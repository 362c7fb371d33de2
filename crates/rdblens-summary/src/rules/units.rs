//! Threshold units for rules files: byte sizes (`10KiB`, `1MiB`, `4096`)
//! and durations (`30d`, `12h`, `2592000`). Both serialize as plain
//! integers, so summaries stay plain JSON.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A size in bytes. Units are binary whatever the spelling: `k`, `kb` and
/// `kib` all mean 1024 (redis.conf's `1k` = 1000 is a trap not worth
/// copying for thresholds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

/// A duration in seconds: `45s`, `90m`, `12h`, `30d`, `2w`, or a plain number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Seconds(pub u64);

fn split_number(s: &str) -> Option<(u64, String)> {
    let t = s.trim();
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n = t[..end].parse().ok()?;
    Some((n, t[end..].trim().to_ascii_lowercase()))
}

impl ByteSize {
    /// Parses a size: a number with an optional binary unit (`b`, `k`/`kb`/`kib` up to `t`), any case; an error naming the text otherwise.
    pub fn parse(s: &str) -> Result<ByteSize, String> {
        let bad = || format!("{s:?} is not a size (examples: 4096, 10KiB, 1MiB, 2GiB)");
        let (n, unit) = split_number(s).ok_or_else(bad)?;
        let mul: u64 = match unit.as_str() {
            "" | "b" => 1,
            "k" | "kb" | "kib" => 1 << 10,
            "m" | "mb" | "mib" => 1 << 20,
            "g" | "gb" | "gib" => 1 << 30,
            "t" | "tb" | "tib" => 1 << 40,
            _ => return Err(bad()),
        };
        n.checked_mul(mul).map(ByteSize).ok_or_else(bad)
    }
}

impl Seconds {
    /// Parses a duration: a number with an optional unit (`s`, `m`/`min`, `h`, `d`, `w`); an error naming the text otherwise.
    pub fn parse(s: &str) -> Result<Seconds, String> {
        let bad = || format!("{s:?} is not a duration (examples: 3600, 90m, 12h, 30d)");
        let (n, unit) = split_number(s).ok_or_else(bad)?;
        let mul: u64 = match unit.as_str() {
            "" | "s" => 1,
            "m" | "min" => 60,
            "h" => 3600,
            "d" => 86_400,
            "w" => 604_800,
            _ => return Err(bad()),
        };
        n.checked_mul(mul).map(Seconds).ok_or_else(bad)
    }
}

macro_rules! integer_or_text {
    ($ty:ident, $what:literal) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_u64(self.0)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        Ok($ty(v))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        u64::try_from(v)
                            .map($ty)
                            .map_err(|_| E::custom(format!("{v} is negative")))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        $ty::parse(v).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

integer_or_text!(
    ByteSize,
    "a size: a number of bytes or a string such as \"10KiB\""
);
integer_or_text!(
    Seconds,
    "a duration: a number of seconds or a string such as \"30d\""
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations() {
        assert_eq!(ByteSize::parse("4096"), Ok(ByteSize(4096)));
        assert_eq!(ByteSize::parse("10KiB"), Ok(ByteSize(10 * 1024)));
        assert_eq!(ByteSize::parse("10 kb"), Ok(ByteSize(10 * 1024)));
        assert_eq!(ByteSize::parse("100MiB"), Ok(ByteSize(100 << 20)));
        assert!(ByteSize::parse("ten").is_err());
        assert!(ByteSize::parse("10 parsecs").is_err());
        assert!(ByteSize::parse("99999999999999999999").is_err());
        assert_eq!(Seconds::parse("30d"), Ok(Seconds(2_592_000)));
        assert_eq!(Seconds::parse("90m"), Ok(Seconds(5400)));
        assert_eq!(Seconds::parse("45"), Ok(Seconds(45)));
        assert!(Seconds::parse("-1").is_err());
        let j: ByteSize = serde_json::from_str("\"1MiB\"").unwrap_or_default();
        assert_eq!(j, ByteSize(1 << 20));
        assert_eq!(serde_json::to_string(&ByteSize(7)).unwrap_or_default(), "7");
    }
}
