//! What an object URL names: the store (scheme and bucket or container),
//! and one object, every object under a prefix, or the objects a glob
//! matches.

use crate::error::Error;

/// The kinds of store an URL can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// `s3://bucket/key` (AWS S3 and S3-compatible stores).
    S3,
    /// `gs://bucket/key` (Google Cloud Storage).
    Gcs,
    /// `az://container/key`, `abfs[s]://container@account.dfs.core.windows.net/key`.
    Azure,
    /// `https://...` (a presigned URL, or any server answering GET).
    Http,
}

/// What the path part of an URL selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// One object, by its key.
    Object(String),
    /// Every object whose key starts with this prefix (empty: the whole
    /// bucket; otherwise it ends with `/`).
    Prefix(String),
    /// Every object under `prefix` whose key matches `pattern` (`*` and
    /// `?` within one path segment, `[...]` a character class).
    Glob { prefix: String, pattern: String },
}

/// A parsed object URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub scheme: Scheme,
    /// The store's root URL (`s3://bucket`, `abfss://c@a.dfs.core.windows.net`),
    /// or the whole URL for `https://` (which names one object).
    pub store_url: String,
    /// The bucket or container name (empty for `https://`).
    pub bucket: String,
    pub selection: Selection,
}

/// Whether `arg` is an object URL rather than a local path (a local file
/// whose name starts with `s3://` is given as `./s3://...`).
pub fn is_object_url(arg: &str) -> bool {
    scheme_of(arg).is_some()
}

fn scheme_of(arg: &str) -> Option<(Scheme, &str)> {
    const SCHEMES: [(&str, Scheme); 8] = [
        ("s3://", Scheme::S3),
        ("s3a://", Scheme::S3),
        ("gs://", Scheme::Gcs),
        ("az://", Scheme::Azure),
        ("abfs://", Scheme::Azure),
        ("abfss://", Scheme::Azure),
        ("https://", Scheme::Http),
        ("http://", Scheme::Http),
    ];
    SCHEMES.iter().find_map(|(prefix, scheme)| {
        let head = arg.get(..prefix.len())?;
        head.eq_ignore_ascii_case(prefix)
            .then(|| (*scheme, &arg[prefix.len()..]))
    })
}

impl Location {
    /// Parses `url`. Errors name the URL and what is wrong with it.
    pub fn parse(url: &str) -> Result<Location, Error> {
        let bad = |why: &str| Error::Url {
            url: url.to_string(),
            why: why.to_string(),
        };
        let (scheme, rest) = scheme_of(url).ok_or_else(|| bad("not an object URL"))?;
        if scheme == Scheme::Http {
            if rest.is_empty() {
                return Err(bad("no host"));
            }
            return Ok(Location {
                scheme,
                store_url: url.to_string(),
                bucket: String::new(),
                selection: Selection::Object(String::new()),
            });
        }
        let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
        if authority.is_empty() {
            return Err(bad("no bucket or container name after the scheme"));
        }
        // abfs: `container@account.dfs.core.windows.net`.
        let bucket = authority
            .split_once('@')
            .map_or(authority, |(c, _)| c)
            .to_string();
        let scheme_text = &url[..url.len() - rest.len()];
        Ok(Location {
            scheme,
            store_url: format!("{scheme_text}{authority}"),
            bucket,
            selection: select(key),
        })
    }
}

/// A key, a prefix (ends with `/`, or empty) or a glob (has `*`, `?` or `[`).
fn select(key: &str) -> Selection {
    match key.find(['*', '?', '[']) {
        Some(first) => {
            let prefix = key[..first].rfind('/').map_or("", |slash| &key[..=slash]);
            Selection::Glob {
                prefix: prefix.to_string(),
                pattern: key.to_string(),
            }
        }
        None if key.is_empty() || key.ends_with('/') => Selection::Prefix(key.to_string()),
        None => Selection::Object(key.to_string()),
    }
}

/// Whether `key` matches the glob `pattern`: `*` any run of characters
/// other than `/`, `?` one such character, `[abc]`, `[a-z]`, `[!a]` one
/// character of (or not of) the class; anything else itself.
pub fn glob_matches(pattern: &str, key: &str) -> bool {
    let (p, k): (Vec<char>, Vec<char>) = (pattern.chars().collect(), key.chars().collect());
    matches_from(&p, &k)
}

fn matches_from(p: &[char], k: &[char]) -> bool {
    match p.first() {
        None => k.is_empty(),
        Some('*') => (0..=k.len())
            .take_while(|&i| i == 0 || k[i - 1] != '/')
            .any(|i| matches_from(&p[1..], &k[i..])),
        Some('?') => k.first().is_some_and(|&c| c != '/') && matches_from(&p[1..], &k[1..]),
        Some('[') => match (class_end(p), k.first()) {
            (Some(end), Some(&c)) => {
                in_class(&p[1..end], c) && c != '/' && matches_from(&p[end + 1..], &k[1..])
            }
            (Some(_), None) => false,
            // An unclosed `[` is itself.
            (None, first) => first == Some(&'[') && matches_from(&p[1..], &k[1..]),
        },
        Some(&c) => k.first() == Some(&c) && matches_from(&p[1..], &k[1..]),
    }
}

/// The index of the `]` closing the class `p` starts with (a `]` right
/// after `[` or `[!` is a member).
fn class_end(p: &[char]) -> Option<usize> {
    let start = if p.get(1) == Some(&'!') { 2 } else { 1 };
    (start + 1..p.len()).find(|&i| p[i] == ']')
}

fn in_class(class: &[char], c: char) -> bool {
    let (negated, class) = match class.split_first() {
        Some(('!', rest)) => (true, rest),
        _ => (false, class),
    };
    let mut found = false;
    let mut i = 0;
    while i < class.len() {
        if i + 2 < class.len() && class[i + 1] == '-' {
            found |= (class[i]..=class[i + 2]).contains(&c);
            i += 3;
        } else {
            found |= class[i] == c;
            i += 1;
        }
    }
    found != negated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_a_store_and_what_in_it() {
        let l = Location::parse("s3://backups/2026-11-29/shard-1.rdb.gz").unwrap(); // ok: unit test
        assert_eq!(
            (l.scheme, l.store_url.as_str(), l.bucket.as_str()),
            (Scheme::S3, "s3://backups", "backups")
        );
        assert_eq!(l.selection, Selection::Object("2026-11-29/shard-1.rdb.gz".into()));
        let l = Location::parse("s3://backups/2026-11-29/").unwrap(); // ok: unit test
        assert_eq!(l.selection, Selection::Prefix("2026-11-29/".into()));
        assert_eq!(
            Location::parse("gs://b").unwrap().selection, // ok: unit test
            Selection::Prefix(String::new())
        );
        let l = Location::parse("s3://b/p/q/*.rdb.gz").unwrap(); // ok: unit test
        assert_eq!(
            l.selection,
            Selection::Glob {
                prefix: "p/q/".into(),
                pattern: "p/q/*.rdb.gz".into()
            }
        );
        let l = Location::parse("abfss://dumps@acct.dfs.core.windows.net/x/dump.rdb").unwrap(); // ok: unit test
        assert_eq!(
            (l.scheme, l.store_url.as_str(), l.bucket.as_str()),
            (Scheme::Azure, "abfss://dumps@acct.dfs.core.windows.net", "dumps")
        );
        assert_eq!(l.selection, Selection::Object("x/dump.rdb".into()));
        let l = Location::parse("https://h/b/k?X-Amz-Signature=ab*c").unwrap(); // ok: unit test
        assert_eq!(
            (l.scheme, l.store_url.as_str()),
            (Scheme::Http, "https://h/b/k?X-Amz-Signature=ab*c")
        );
        for bad in ["s3://", "s3:///key", "https://"] {
            let e = Location::parse(bad).unwrap_err().to_string();
            assert!(!e.is_empty(), "{bad}");
        }
        assert!(is_object_url("S3://b/k") && is_object_url("gs://b/k") && is_object_url("az://c/k"));
        assert!(!is_object_url("dump.rdb") && !is_object_url("./s3://b/k") && !is_object_url("-"));
    }

    #[test]
    fn globs_match_within_one_segment() {
        assert!(glob_matches("p/*.rdb.gz", "p/shard-1.rdb.gz"));
        assert!(!glob_matches("p/*.rdb.gz", "p/sub/shard-1.rdb.gz"));
        assert!(!glob_matches("p/*.rdb.gz", "p/shard-1.rdb"));
        assert!(glob_matches("p/shard-?.rdb", "p/shard-7.rdb"));
        assert!(!glob_matches("p/shard-?.rdb", "p/shard-10.rdb"));
        assert!(glob_matches("p/shard-[0-4].rdb", "p/shard-3.rdb"));
        assert!(!glob_matches("p/shard-[0-4].rdb", "p/shard-5.rdb"));
        assert!(glob_matches("p/shard-[!0-4].rdb", "p/shard-5.rdb"));
        assert!(glob_matches("p/*/dump.rdb", "p/node-1/dump.rdb"));
        assert!(glob_matches("p/[x", "p/[x"));
        assert!(glob_matches("*", "") && !glob_matches("?", ""));
    }
}
