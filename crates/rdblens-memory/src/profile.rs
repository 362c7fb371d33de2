//! The target server an estimate is for: family, release, allocator build,
//! encoding limits and cluster mode.

use rdblens_parser::Dialect;

use crate::limits::Limits;
use crate::version::{Family, ServerVersion};

/// Everything the estimate depends on besides the value itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Server family of the target: Redis or Valkey.
    pub family: Family,
    /// Release of the target server; picks the version rules of the model.
    pub version: ServerVersion,
    /// jemalloc quantum: 8 for the bundled jemalloc of source builds, Docker
    /// images and most clouds; 16 for distro packages that link the system
    /// libjemalloc (Debian's `redis-server`). The file cannot tell them apart.
    pub quantum: u64,
    /// Encoding limits of the target's config.
    pub limits: Limits,
    /// Cluster mode changes the per-key cost on 7.0 and 7.2 (slot metadata).
    pub cluster: bool,
}

impl Profile {
    /// A standalone server with the default limits of that release.
    pub fn new(family: Family, version: ServerVersion, quantum: u64) -> Profile {
        Profile {
            family,
            version,
            quantum,
            limits: Limits::defaults_for(family, version),
            cluster: false,
        }
    }

    /// This profile with the allocator quantum `quantum` (when given) and
    /// the compact-encoding limits of `config` (`hash-max-listpack-entries`
    /// and the like; names that are not limits are left out, as the
    /// command checked what the user typed). The one place the engine's
    /// profile and the advisor's target take the run's settings.
    pub fn configured(mut self, quantum: Option<u64>, config: &[(String, String)]) -> Profile {
        if let Some(q) = quantum {
            self.quantum = q;
        }
        for (name, value) in config {
            let _ = self.limits.set(name, value);
        }
        self
    }

    /// The server that wrote a file, from its AUX fields (`redis-ver`,
    /// `valkey-ver`), assuming the bundled allocator (quantum 8). Without a
    /// usable version field the RDB version picks the newest release line
    /// writing it (RDB 12, shared by 7.4, 8.0 and 8.4, maps to 8.0: 7.4 and
    /// 8.0 share one model, and 8.4 dumps carry `redis-ver` anyway).
    pub fn from_aux(
        redis_ver: Option<&str>,
        valkey_ver: Option<&str>,
        rdb_version: u32,
        dialect: Dialect,
    ) -> Profile {
        let parsed = |s: Option<&str>| s.and_then(|s| ServerVersion::parse(s).ok());
        let (family, version) = if let Some(v) = parsed(valkey_ver) {
            (Family::Valkey, v)
        } else if dialect == Dialect::Valkey {
            (Family::Valkey, valkey_release_for(rdb_version))
        } else if let Some(v) = parsed(redis_ver) {
            (Family::Redis, v)
        } else {
            (Family::Redis, redis_release_for(rdb_version))
        };
        Profile::new(family, version, 8)
    }

    /// Parses a target such as `redis-7.2`, `redis-7.0.15`, `valkey-8.1` or
    /// `valkey-9` (family names are case-insensitive; `:` or a space may
    /// replace the dash).
    pub fn parse_target(s: &str) -> Result<Profile, String> {
        let t = s.trim();
        let (family, rest) = t
            .split_once(['-', ':', ' '])
            .ok_or_else(|| format!("target {s:?}: expected <redis|valkey>-<version>, e.g. redis-7.2"))?;
        let family = match family.to_ascii_lowercase().as_str() {
            "redis" => Family::Redis,
            "valkey" => Family::Valkey,
            other => {
                return Err(format!(
                    "target {s:?}: unknown server {other:?} (expected redis or valkey)"
                ))
            }
        };
        let version = ServerVersion::parse(rest).map_err(|e| format!("target {s:?}: {e}"))?;
        Ok(Profile::new(family, version, 8))
    }

    /// `redis-7.2.4`, `valkey-9.1.0`.
    pub fn name(&self) -> String {
        self.release().to_string()
    }

    /// The server release this profile is for.
    pub fn release(&self) -> ServerRelease {
        ServerRelease {
            family: self.family,
            version: self.version,
        }
    }
}

/// A server release, as a summary records the target a file was estimated
/// for: typed, so that nothing reads it back from its name; written as the
/// name (`redis-7.2.4`, `valkey-9.1.0`) and read with
/// [`Profile::parse_target`]'s rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerRelease {
    /// Redis or Valkey.
    pub family: Family,
    /// The release number.
    pub version: ServerVersion,
}

impl ServerRelease {
    /// The profile of this release with its default limits and `quantum`.
    pub fn profile(self, quantum: u64) -> Profile {
        Profile::new(self.family, self.version, quantum)
    }
}

impl std::fmt::Display for ServerRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.family.as_str(), self.version)
    }
}

impl serde::Serialize for ServerRelease {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for ServerRelease {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Profile::parse_target(&name)
            .map(|p| p.release())
            .map_err(serde::de::Error::custom)
    }
}

/// Newest Redis release line writing `REDIS00NN`.
fn redis_release_for(rdb_version: u32) -> ServerVersion {
    let (major, minor) = match rdb_version {
        0..=4 => (2, 4),
        5 => (2, 6),
        6 => (2, 8),
        7 => (3, 2),
        8 => (4, 0),
        9 => (6, 2),
        10 => (7, 0),
        11 => (7, 2),
        12 => (8, 0),
        13 => (8, 6),
        _ => (8, 8),
    };
    ServerVersion::new(major, minor, 0)
}

/// Valkey release line writing `VALKEYNNN` (9.0 and 9.1 write 80).
fn valkey_release_for(rdb_version: u32) -> ServerVersion {
    match rdb_version {
        0..=80 => ServerVersion::new(9, 1, 0),
        _ => ServerVersion::new(9, 2, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_target_forms() {
        let p = Profile::parse_target("redis-7.2").unwrap_or_else(|e| panic!("{e}")); // ok: unit test
        assert_eq!(
            (p.family, p.version),
            (Family::Redis, ServerVersion::new(7, 2, 0))
        );
        assert_eq!(p.quantum, 8);
        assert_eq!(p.name(), "redis-7.2.0");
        let p = Profile::parse_target("redis-7.0.15").unwrap_or_else(|e| panic!("{e}")); // ok: unit test
        assert_eq!(p.version, ServerVersion::new(7, 0, 15));
        let p = Profile::parse_target("valkey-8.1").unwrap_or_else(|e| panic!("{e}")); // ok: unit test
        assert_eq!(
            (p.family, p.version),
            (Family::Valkey, ServerVersion::new(8, 1, 0))
        );
        let p = Profile::parse_target("Valkey:9").unwrap_or_else(|e| panic!("{e}")); // ok: unit test
        assert_eq!(p.name(), "valkey-9.0.0");
        for bad in ["redis", "keydb-6.3", "redis-", "redis-x", "7.2"] {
            assert!(Profile::parse_target(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn from_aux_prefers_version_fields() {
        let p = Profile::from_aux(Some("7.2.4"), None, 11, Dialect::Redis);
        assert_eq!(p.name(), "redis-7.2.4");
        let p = Profile::from_aux(None, Some("8.1.1"), 11, Dialect::Redis);
        assert_eq!(p.name(), "valkey-8.1.1");
        let p = Profile::from_aux(None, None, 9, Dialect::Redis);
        assert_eq!(p.name(), "redis-6.2.0");
        let p = Profile::from_aux(Some("garbage"), None, 12, Dialect::Redis);
        assert_eq!(p.name(), "redis-8.0.0");
        let p = Profile::from_aux(None, None, 80, Dialect::Valkey);
        assert_eq!(p.name(), "valkey-9.1.0");
    }
}
