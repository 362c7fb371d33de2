//! The one rule that makes namespaces of key names, for the prefix tree,
//! the expiry clusters' attribution and everything that reads them (tables,
//! HTML, diff).
//!
//! A key's namespaces are its name up to each separator, to `--depth`
//! levels, except that a level stops before a segment that looks like an id
//! (a number, an address, a hash, a UUID, a random token): `rate:10.1.2.3:n`
//! and `user:42:profile` are in `rate` and `user`, not in one namespace per
//! address or user. The first segment is always a namespace.

/// The ends (byte positions of separators) of `key`'s namespaces,
/// shallowest first, at most `depth`: `key[..end]` is each namespace. None
/// for a key without a separator.
pub fn namespace_ends(key: &[u8], separator: u8, depth: usize) -> impl Iterator<Item = usize> + '_ {
    let mut start = 0;
    key.iter()
        .enumerate()
        .filter(move |&(_, &b)| b == separator)
        .map(|(i, _)| i)
        .take_while(move |&end| {
            // The first segment always counts; a later one ends the
            // namespaces when it is an id.
            let keep = start == 0 || !looks_like_id(&key[start..end]);
            start = end + 1;
            keep
        })
        .take(depth)
}

/// `key`'s deepest namespace at `depth` (see [`namespace_ends`]); empty for
/// a name without a separator.
pub fn namespace_at(key: &[u8], separator: u8, depth: usize) -> &[u8] {
    let end = namespace_ends(key, separator, depth.max(1)).last().unwrap_or(0);
    &key[..end]
}

/// Whether a segment of a key name looks like an id rather than a name:
/// - digits with `.`, `-` or `_` (numbers, IPv4 addresses, dates);
/// - 8 or more hex digits and dashes, a digit among them (hashes, UUIDs,
///   object ids);
/// - 16 or more base64 characters (letters, digits, `-_+/=`) in a random
///   mix: both cases and a digit, or both cases changing at least every third
///   character (CamelCase names change far less often);
/// - 16 or more lowercase letters and digits, a quarter of them digits;
/// - any of these as a hash tag (`{42}`).
pub fn looks_like_id(segment: &[u8]) -> bool {
    let segment = match segment {
        [b'{', inside @ .., b'}'] => inside,
        _ => segment,
    };
    let digits = segment.iter().filter(|b| b.is_ascii_digit()).count();
    if digits > 0
        && segment
            .iter()
            .all(|&b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'_'))
    {
        return true;
    }
    if segment.len() >= 8 && digits > 0 && segment.iter().all(|&b| b.is_ascii_hexdigit() || b == b'-') {
        return true;
    }
    if segment.len() < 16 {
        return false;
    }
    if segment
        .iter()
        .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && digits * 4 >= segment.len()
    {
        return true;
    }
    if !segment
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'+' | b'/' | b'='))
    {
        return false;
    }
    let upper = segment.iter().any(u8::is_ascii_uppercase);
    let lower = segment.iter().any(u8::is_ascii_lowercase);
    if !(upper && lower) {
        return false;
    }
    let case_changes = segment
        .windows(2)
        .filter(|w| {
            w[0].is_ascii_alphabetic()
                && w[1].is_ascii_alphabetic()
                && w[0].is_ascii_uppercase() != w[1].is_ascii_uppercase()
        })
        .count();
    digits > 0 || case_changes * 3 >= segment.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names() {
        let ids = [
            "42",
            "-7",
            "10.1.118.134",
            "2026-11-28",
            "d41d8cd98f00b204e9800998ecf8427e",
            "5f2b8c1e9a7d4e3f9b6a1c0d",
            "0b7e3e8a-3c4f-4b7e-9a1d-2f6c5e8d9a01",
            "Xk9_2bQzLm-4pR7tYw1vNe",
            "aGVsbG8gd29ybGQgaGVsbG8=",
            "QkZhWnRpQmpYcUxvUGZTeA",
            "k3j4h5g6f7d8s9a0",
            "{42}",
        ];
        for id in ids {
            assert!(looks_like_id(id.as_bytes()), "{id} is an id");
        }
        let names = [
            "profile",
            "v2",
            "cache",
            "deadbeef",
            "abc12",
            "page-7a",
            "user_preferences_v2",
            "UserPreferencesStore",
            "session_store_2024",
            "",
            "caf\u{e9}",
            "{tag}",
            "{}",
        ];
        for name in names {
            assert!(!looks_like_id(name.as_bytes()), "{name} is a name");
        }
    }

    #[test]
    fn namespaces_stop_before_an_id() {
        let at = |key: &str, depth| {
            String::from_utf8_lossy(namespace_at(key.as_bytes(), b':', depth)).into_owned()
        };
        assert_eq!(at("rate:10.1.118.134:5", 1), "rate");
        assert_eq!(at("rate:10.1.118.134:5", 2), "rate");
        assert_eq!(at("rate:10.1.118.134:5", 4), "rate");
        assert_eq!(at("user:42:profile", 3), "user");
        assert_eq!(at("sess:0b7e3e8a-3c4f-4b7e-9a1d-2f6c5e8d9a01", 2), "sess");
        assert_eq!(at("cache:page:home", 2), "cache:page");
        assert_eq!(at("cache:page:home", 1), "cache");
        assert_eq!(at("cache:page:7:x", 4), "cache:page");
        assert_eq!(at("a:b:c:d:e", 4), "a:b:c:d");
        assert_eq!(at("plain", 2), "");
        // The first segment counts whatever it looks like.
        assert_eq!(at("42:x", 2), "42");
        let ends: Vec<usize> = namespace_ends(b"app:cfg:17:name:x", b':', 4).collect();
        assert_eq!(ends, [3, 7]);
        assert_eq!(namespace_ends(b"none", b':', 2).count(), 0);
    }
}
