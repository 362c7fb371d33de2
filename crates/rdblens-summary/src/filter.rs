//! Which keys a report covers: databases, types, a Redis glob on key names
//! (bytes-safe, as `SCAN MATCH`), a key prefix, a bytes regex, globs that
//! exclude, a size range (memory or serialized) and the keys' TTLs.

use rdblens_parser::{Entry, TypeKind};

use crate::facts::KeyFacts;

/// Which keys a report covers; the default admits every key.
#[derive(Clone, Debug, Default)]
pub struct KeyFilter {
    /// Empty = every database.
    pub dbs: Vec<u64>,
    /// Empty = every type.
    pub kinds: Vec<TypeKind>,
    /// `--match`: a Redis glob the whole key must match (bytes, case-sensitive).
    pub pattern: Option<Vec<u8>>,
    /// `--prefix`: bytes the key must start with.
    pub prefix: Option<Vec<u8>>,
    /// `--regex`: a regex over the key's bytes (unanchored, as `grep`).
    pub regex: Option<regex::bytes::Regex>,
    /// `--exclude`: keys matching any of these Redis globs are left out.
    pub exclude: Vec<Vec<u8>>,
    /// `--min-size` / `--max-size`, inclusive, over [`SizeRange::by`].
    pub size: SizeRange,
    /// `--ttl`, `--no-ttl`, `--expired`.
    pub ttl: TtlFilter,
}

/// Which size `--min-size` and `--max-size` compare.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SizeBy {
    /// Estimated memory (`MEMORY USAGE`), the default.
    #[default]
    Memory,
    /// Bytes the value takes in the file.
    Serialized,
}

/// An inclusive size range; `None` ends are open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SizeRange {
    /// Which size is compared.
    pub by: SizeBy,
    /// Smallest size admitted, bytes; `None`: no lower bound.
    pub min: Option<u64>,
    /// Largest size admitted, bytes; `None`: no upper bound.
    pub max: Option<u64>,
}

/// Keys by their time to live at the reference time (`--now`, or the
/// snapshot's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TtlFilter {
    /// Every key, with or without an expiry (the default).
    #[default]
    Any,
    /// Keys without an expiry.
    Persistent,
    /// Keys whose expiry is at or before the reference time.
    Expired,
    /// Keys with an expiry whose TTL (ms) is within the inclusive range.
    Within {
        /// Smallest TTL admitted, ms; `None`: any TTL above 0.
        min_ms: Option<i64>,
        /// Largest TTL admitted, ms; `None`: no upper bound.
        max_ms: Option<i64>,
    },
}

impl KeyFilter {
    /// Whether nothing is set, so every key is admitted.
    pub fn is_empty(&self) -> bool {
        self.dbs.is_empty()
            && self.kinds.is_empty()
            && self.pattern.is_none()
            && self.prefix.is_none()
            && self.regex.is_none()
            && self.exclude.is_empty()
            && self.size == SizeRange::default()
            && self.ttl == TtlFilter::Any
    }

    /// Checks what is known without the key bytes (cheap, for the walker).
    pub fn admits_entry(&self, e: &Entry<'_>) -> bool {
        (self.dbs.is_empty() || self.dbs.contains(&e.db))
            && (self.kinds.is_empty() || self.kinds.contains(&e.kind()))
    }

    /// Checks the key's name: `--prefix`, `--match`, `--regex` and `--exclude`.
    pub fn admits_key(&self, key: &[u8]) -> bool {
        self.prefix.as_ref().is_none_or(|p| key.starts_with(p))
            && self.pattern.as_ref().is_none_or(|p| glob_match(p, key))
            && self.regex.as_ref().is_none_or(|r| r.is_match(key))
            && !self.exclude.iter().any(|p| glob_match(p, key))
    }

    /// Checks what needs the decoded value: its size and TTL at `now_ms`.
    pub fn admits_facts(&self, f: &KeyFacts<'_>, now_ms: i64) -> bool {
        let size = match self.size.by {
            SizeBy::Memory => f.memory,
            SizeBy::Serialized => f.serialized_bytes,
        };
        let in_size = self.size.min.is_none_or(|m| size >= m) && self.size.max.is_none_or(|m| size <= m);
        in_size
            && match self.ttl {
                TtlFilter::Any => true,
                TtlFilter::Persistent => f.expiry_ms.is_none(),
                TtlFilter::Expired => f.expiry_ms.is_some_and(|e| e <= now_ms),
                TtlFilter::Within { min_ms, max_ms } => f.expiry_ms.is_some_and(|e| {
                    let ttl = e.saturating_sub(now_ms);
                    ttl > 0 && min_ms.is_none_or(|m| ttl >= m) && max_ms.is_none_or(|m| ttl <= m)
                }),
            }
    }
}

/// Redis' `stringmatchlen` (util.c): `*`, `?`, `[...]` with ranges and `^`
/// negation, `\` escapes; bytes, case-sensitive. Hand-written because glob
/// crates match paths or UTF-8 text, and SCAN MATCH semantics are Redis' own.
pub fn glob_match(pattern: &[u8], key: &[u8]) -> bool {
    // Iterative with one backtrack point for the last '*': linear in practice,
    // no exponential blow-up on patterns like "a*a*a*a*b".
    let (mut p, mut k) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while k < key.len() {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    while p < pattern.len() && pattern[p] == b'*' {
                        p += 1;
                    }
                    if p == pattern.len() {
                        return true;
                    }
                    star = Some((p, k));
                    continue;
                }
                b'?' => {
                    p += 1;
                    k += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = class(pattern, p, key[k]) {
                        if matched {
                            p = next;
                            k += 1;
                            continue;
                        }
                    }
                }
                b'\\' if p + 1 < pattern.len() && pattern[p + 1] == key[k] => {
                    p += 2;
                    k += 1;
                    continue;
                }
                // An escape that does not match: backtrack below.
                b'\\' if p + 1 < pattern.len() => {}
                c if c == key[k] => {
                    p += 1;
                    k += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, sk)) => {
                p = sp;
                k = sk + 1;
                star = Some((sp, sk + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// Matches `c` against the class starting at `pattern[start] == '['`;
/// returns (matched, index after the class).
fn class(pattern: &[u8], start: usize, c: u8) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = pattern.get(i) == Some(&b'^');
    if negate {
        i += 1;
    }
    let mut matched = false;
    loop {
        match pattern.get(i) {
            None => {
                // Unterminated: Redis treats the rest as the class.
                return Some((matched != negate, i));
            }
            Some(b']') => return Some((matched != negate, i + 1)),
            Some(b'\\') if i + 1 < pattern.len() => {
                matched |= pattern[i + 1] == c;
                i += 2;
            }
            Some(&lo)
                if pattern.get(i + 1) == Some(&b'-') && i + 2 < pattern.len() && pattern[i + 2] != b']' =>
            {
                let hi = pattern[i + 2];
                let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
                matched |= (lo..=hi).contains(&c);
                i += 3;
            }
            Some(&x) => {
                matched |= x == c;
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn redis_glob() {
        let yes: &[(&str, &str)] = &[
            ("*", ""),
            ("*", "anything"),
            ("user:*", "user:1"),
            ("h?llo", "hello"),
            ("h[ae]llo", "hallo"),
            ("h[^e]llo", "hallo"),
            ("h[a-b]llo", "hbllo"),
            ("h[b-a]llo", "hallo"),
            ("a*b*c", "aXXbYYc"),
            ("\\*", "*"),
            ("*:profile", "user:42:profile"),
        ];
        for (p, k) in yes {
            assert!(glob_match(p.as_bytes(), k.as_bytes()), "{p} {k}");
        }
        let no: &[(&str, &str)] = &[
            ("h[^e]llo", "hello"),
            ("h?llo", "hllo"),
            ("user:*", "session:1"),
            ("\\*", "a"),
            ("a*b", "aXXc"),
        ];
        for (p, k) in no {
            assert!(!glob_match(p.as_bytes(), k.as_bytes()), "{p} {k}");
        }
        assert!(glob_match(b"bin:\xff*", b"bin:\xff\xfe\x00"));
        let evil = "a*".repeat(30) + "b";
        assert!(!glob_match(evil.as_bytes(), "a".repeat(200).as_bytes()));
    }
}
