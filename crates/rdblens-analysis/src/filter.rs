//! Which keys a report covers: databases, types, a Redis glob on key names
//! (bytes-safe, as `SCAN MATCH`), and a key prefix.

use rdblens_parser::{Entry, TypeKind};

#[derive(Clone, Debug, Default)]
pub struct KeyFilter {
    /// Empty = every database.
    pub dbs: Vec<u64>,
    /// Empty = every type.
    pub kinds: Vec<TypeKind>,
    pub pattern: Option<Vec<u8>>,
    pub prefix: Option<Vec<u8>>,
}

impl KeyFilter {
    pub fn is_empty(&self) -> bool {
        self.dbs.is_empty() && self.kinds.is_empty() && self.pattern.is_none() && self.prefix.is_none()
    }

    /// Checks what is known without the key bytes (cheap, for the walker).
    pub fn admits_entry(&self, e: &Entry<'_>) -> bool {
        (self.dbs.is_empty() || self.dbs.contains(&e.db))
            && (self.kinds.is_empty() || self.kinds.contains(&e.kind()))
    }

    pub fn admits_key(&self, key: &[u8]) -> bool {
        self.prefix.as_ref().is_none_or(|p| key.starts_with(p))
            && self.pattern.as_ref().is_none_or(|p| glob_match(p, key))
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
