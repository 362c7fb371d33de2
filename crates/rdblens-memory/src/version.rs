//! Server family and release number.

use std::fmt;

/// Which server line: the two diverged after 7.2.4 (Valkey forked there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Redis, any release.
    Redis,
    /// Valkey, from its first release (7.2.5, forked from Redis 7.2.4).
    Valkey,
}

impl Family {
    /// Lower-case name: `redis` or `valkey`.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Redis => "redis",
            Family::Valkey => "valkey",
        }
    }
}

/// A release number, ordered numerically.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerVersion {
    /// Major release number (7 in 7.2.4).
    pub major: u32,
    /// Minor release number (2 in 7.2.4).
    pub minor: u32,
    /// Patch number (4 in 7.2.4; 0 when not given).
    pub patch: u32,
}

impl ServerVersion {
    /// The release `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        ServerVersion { major, minor, patch }
    }

    /// Parses "7.2.4", "7.2" or "9"; missing parts are 0. A suffix after the
    /// numbers ("8.0.0-rc1", "7.2.4-debian") is ignored.
    pub fn parse(s: &str) -> Result<Self, String> {
        let core = s.trim().split(['-', '+', ' ']).next().unwrap_or("");
        let mut parts = [0u32; 3];
        let mut count = 0;
        for (i, part) in core.split('.').enumerate() {
            if i >= 3 {
                return Err(format!("version {s:?} has more than three parts"));
            }
            parts[i] = part
                .parse()
                .map_err(|_| format!("version {s:?}: {part:?} is not a number"))?;
            count += 1;
        }
        if count == 0 {
            return Err(format!("version {s:?} is empty"));
        }
        Ok(ServerVersion::new(parts[0], parts[1], parts[2]))
    }

    /// True if this is `major.minor` or later.
    pub(crate) fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

impl fmt::Display for ServerVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_release_numbers() {
        assert_eq!(ServerVersion::parse("7.2.4"), Ok(ServerVersion::new(7, 2, 4)));
        assert_eq!(ServerVersion::parse("7.2"), Ok(ServerVersion::new(7, 2, 0)));
        assert_eq!(ServerVersion::parse("9"), Ok(ServerVersion::new(9, 0, 0)));
        assert_eq!(ServerVersion::parse("8.0.0-rc1"), Ok(ServerVersion::new(8, 0, 0)));
        assert!(ServerVersion::parse("").is_err());
        assert!(ServerVersion::parse("x.1").is_err());
        assert!(ServerVersion::parse("1.2.3.4").is_err());
        assert!(ServerVersion::new(7, 10, 0) > ServerVersion::new(7, 2, 9));
    }
}
