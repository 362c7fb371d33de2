//! What an estimate for a release line is worth: checked against a real
//! server of that line (a fixture in `fixtures/rdb/` and its oracle), or
//! modelled from the line's source only. The per-line record, with measured
//! errors, is docs/memory-model-accuracy.md; a test checks that every
//! fixture folder is named here and every name here has a folder.

use crate::profile::Profile;
use crate::version::Family;

/// How far an estimate for a line has been checked. Serialized as
/// [`AccuracyLevel::as_str`] spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccuracyLevel {
    /// A server of this line wrote a fixture whose oracle the estimates
    /// match within the bands of the fixture test.
    Verified,
    /// Read from this line's source, not checked against its server.
    Modelled,
    /// No `MEMORY USAGE` on this line (before Redis 4.0): encodings only.
    EncodingsOnly,
}

impl AccuracyLevel {
    /// Lower-case name for reports: `verified`, `modelled` or `encodings-only`.
    pub fn as_str(self) -> &'static str {
        match self {
            AccuracyLevel::Verified => "verified",
            AccuracyLevel::Modelled => "modelled",
            AccuracyLevel::EncodingsOnly => "encodings-only",
        }
    }
}

impl std::fmt::Display for AccuracyLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The expected accuracy for one release line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accuracy {
    /// `redis-7.0`, `valkey-8.1`.
    pub line: String,
    /// How far the line has been checked.
    pub level: AccuracyLevel,
    /// The fixture folders of `fixtures/rdb/` that verify this line.
    pub fixtures: &'static [&'static str],
    /// One sentence for the report.
    pub statement: String,
}

/// Bands the fixture test holds every verified line to.
const BANDS: &str = "byte-exact for strings, listpacks, intsets, quicklists and streams; hash tables and \
                     skiplists within 5 %; file total within 1 %";

/// (family, major, minor, fixture folders); an empty list: modelled only.
const LINES: &[(Family, u32, u32, &[&str])] = &[
    (Family::Redis, 3, 2, &["redis-3.2.13"]),
    (Family::Redis, 4, 0, &["redis-4.0.14"]),
    (Family::Redis, 5, 0, &["redis-5.0.14"]),
    (Family::Redis, 6, 0, &["redis-6.0.20"]),
    (Family::Redis, 6, 2, &["redis-6.2.14"]),
    (Family::Redis, 7, 0, &["redis-7.0.15", "redis-7.0.15-debian"]),
    (Family::Redis, 7, 2, &["redis-7.2.3", "redis-7.2.4"]),
    (Family::Redis, 7, 4, &["redis-7.4.5"]),
    (Family::Redis, 8, 0, &["redis-8.0.6"]),
    (Family::Redis, 8, 2, &[]),
    (Family::Redis, 8, 4, &["redis-8.4.0"]),
    (Family::Valkey, 7, 2, &["valkey-7.2.7"]),
    (Family::Valkey, 8, 0, &["valkey-8.0.1"]),
    (Family::Valkey, 8, 1, &["valkey-8.1.1"]),
    (Family::Valkey, 9, 0, &[]),
    (Family::Valkey, 9, 1, &["valkey-9.1.2"]),
];

/// Every fixture folder a line names (for the test that keeps this list
/// and `fixtures/rdb/` in step).
pub fn verified_fixtures() -> impl Iterator<Item = &'static str> {
    LINES.iter().flat_map(|(_, _, _, f)| f.iter().copied())
}

impl Accuracy {
    /// The statement for `profile`'s release line.
    pub fn of(profile: &Profile) -> Accuracy {
        let v = profile.version;
        let family = profile.family.as_str();
        let line = format!("{family}-{}.{}", v.major, v.minor);
        let known = LINES
            .iter()
            .find(|(f, major, minor, _)| *f == profile.family && *major == v.major && *minor == v.minor);
        if profile.family == Family::Redis && !v.at_least(4, 0) {
            return Accuracy {
                line: line.clone(),
                level: AccuracyLevel::EncodingsOnly,
                fixtures: known.map_or(&[], |k| k.3),
                statement: format!(
                    "{line} has no MEMORY USAGE: encodings verified, sizes are what {family} 4.0 would report"
                ),
            };
        }
        match known {
            Some((_, _, _, fixtures)) if !fixtures.is_empty() => Accuracy {
                line: line.clone(),
                level: AccuracyLevel::Verified,
                fixtures,
                statement: format!("verified against {}: {BANDS}", fixtures.join(", ")),
            },
            Some(_) => Accuracy {
                line: line.clone(),
                level: AccuracyLevel::Modelled,
                fixtures: &[],
                statement: format!("modelled from {line} source only, no fixture: errors unmeasured"),
            },
            None => Accuracy {
                line: line.clone(),
                level: AccuracyLevel::Modelled,
                fixtures: &[],
                statement: format!(
                    "{line} is not a release line rdblens models: estimated with the nearest earlier \
                     line's rules, errors unmeasured"
                ),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::ServerVersion;

    fn of(family: Family, major: u32, minor: u32) -> Accuracy {
        Accuracy::of(&Profile::new(family, ServerVersion::new(major, minor, 3), 8))
    }

    #[test]
    fn lines_with_and_without_fixtures() {
        let a = of(Family::Redis, 7, 0);
        assert_eq!((a.line.as_str(), a.level), ("redis-7.0", AccuracyLevel::Verified));
        assert!(a
            .statement
            .starts_with("verified against redis-7.0.15, redis-7.0.15-debian: "));
        let a = of(Family::Redis, 8, 2);
        assert_eq!(a.level, AccuracyLevel::Modelled);
        assert_eq!(
            a.statement,
            "modelled from redis-8.2 source only, no fixture: errors unmeasured"
        );
        let a = of(Family::Valkey, 7, 2);
        assert_eq!(
            (a.line.as_str(), a.level),
            ("valkey-7.2", AccuracyLevel::Verified)
        );
        assert!(a.statement.starts_with("verified against valkey-7.2.7: "));
        assert_eq!(of(Family::Redis, 3, 2).level, AccuracyLevel::EncodingsOnly);
        assert_eq!(of(Family::Valkey, 12, 0).level, AccuracyLevel::Modelled);
    }
}
