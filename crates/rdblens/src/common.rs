//! Flags shared by `report` and `keys`: which keys, and which server the
//! memory is estimated for. Every check here runs before any file is read,
//! so its errors are usage errors (exit 2).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use rdblens_analysis::{KeyFilter, Options};
use rdblens_memory::{Family, Limits, Profile, ServerVersion};
use rdblens_parser::TypeKind;

/// The compact-encoding limits `--limit` and `--config` can set (redis.conf
/// names; the pre-7.0 `ziplist` spellings are accepted too).
pub const LIMIT_NAMES: [&str; 9] = [
    "hash-max-listpack-entries",
    "hash-max-listpack-value",
    "set-max-intset-entries",
    "set-max-listpack-entries",
    "set-max-listpack-value",
    "zset-max-listpack-entries",
    "zset-max-listpack-value",
    "list-max-listpack-size",
    "list-compress-depth",
];

/// `--db`, `--type`, `--match`, `--prefix`.
#[derive(Args, Debug)]
pub struct FilterArgs {
    /// Only these databases (repeatable).
    #[arg(long = "db", value_name = "N")]
    pub dbs: Vec<u64>,
    /// Only these types: string, list, set, zset, hash, stream, module, array (repeatable).
    #[arg(long = "type", value_name = "TYPE")]
    pub types: Vec<String>,
    /// Only keys matching this Redis glob (as SCAN MATCH; bytes-safe).
    #[arg(long = "match", value_name = "PATTERN")]
    pub pattern: Option<String>,
    /// Only keys starting with this prefix.
    #[arg(long)]
    pub prefix: Option<String>,
}

/// How memory is estimated and TTLs measured.
#[derive(Args, Debug)]
pub struct ModelArgs {
    /// A redis.conf whose encoding limits apply (e.g. hash-max-listpack-entries).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override one compact-encoding limit, e.g. hash-max-listpack-entries=1024 (repeatable; wins over --config).
    #[arg(long = "limit", value_name = "NAME=VALUE")]
    pub limits: Vec<String>,
    /// Server to estimate memory for, e.g. redis-7.2, valkey-8.1 (default: the writer of the file).
    #[arg(long)]
    pub target: Option<String>,
    /// jemalloc quantum of the target: 8 (bundled jemalloc) or 16 (distro libjemalloc) (default: detected from the dump's used-mem when clear, else 8).
    #[arg(long, value_parser = ["8", "16"])]
    pub jemalloc_quantum: Option<String>,
    /// Reference time for TTLs: unix seconds or ms (default: the snapshot's ctime).
    #[arg(long)]
    pub now: Option<i64>,
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

impl FilterArgs {
    pub fn filter(&self) -> Result<KeyFilter> {
        key_filter(
            &self.dbs,
            &self.types,
            self.pattern.as_deref(),
            self.prefix.as_deref(),
        )
    }
}

impl ModelArgs {
    /// Options with this model and `filter`; the rest default.
    pub fn options(&self, filter: KeyFilter) -> Result<Options> {
        Ok(Options {
            threads: self.threads,
            now_ms: now_ms(self.now),
            profile: target_profile(self.target.as_deref())?,
            quantum: self.jemalloc_quantum.as_deref().and_then(|q| q.parse().ok()),
            config: model_config(self.config.as_deref(), &self.limits)?,
            filter,
            ..Options::default()
        })
    }
}

pub fn parse_kind(s: &str) -> Result<TypeKind> {
    Ok(match s {
        "string" => TypeKind::String,
        "list" => TypeKind::List,
        "set" => TypeKind::Set,
        // `sortedset` is what redis-rdb-tools calls it (and `rdblens keys` prints).
        "zset" | "sortedset" => TypeKind::ZSet,
        "hash" => TypeKind::Hash,
        "stream" => TypeKind::Stream,
        "module" => TypeKind::Module,
        "array" => TypeKind::Array,
        other => {
            bail!("unknown type '{other}' (expected string, list, set, zset, hash, stream, module, array)")
        }
    })
}

pub fn key_filter(
    dbs: &[u64],
    types: &[String],
    pattern: Option<&str>,
    prefix: Option<&str>,
) -> Result<KeyFilter> {
    Ok(KeyFilter {
        dbs: dbs.to_vec(),
        kinds: types.iter().map(|t| parse_kind(t)).collect::<Result<_>>()?,
        pattern: pattern.map(|p| p.as_bytes().to_vec()),
        prefix: prefix.map(|p| p.as_bytes().to_vec()),
    })
}

/// `--now`: values below 1e11 are seconds (1e11 s is the year 5138).
pub fn now_ms(now: Option<i64>) -> Option<i64> {
    now.map(|n| {
        if n < 100_000_000_000 {
            n.saturating_mul(1000)
        } else {
            n
        }
    })
}

pub fn target_profile(target: Option<&str>) -> Result<Option<Profile>> {
    target
        .map(|t| {
            Profile::parse_target(t)
                .map_err(anyhow::Error::msg)
                .context("--target")
        })
        .transpose()
}

/// Reads `name value` lines of a redis.conf; limits are applied, the rest kept for the audit.
pub fn read_config(path: &Path) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (name, value) = l.split_once(char::is_whitespace)?;
            Some((
                name.to_ascii_lowercase(),
                value.trim().trim_matches('"').to_string(),
            ))
        })
        .collect())
}

/// Checks one limit against a scratch [`Limits`]: `Ok(false)` if `name` is
/// not a limit, `Err` if it is one and `value` does not parse.
fn check_limit(name: &str, value: &str) -> Result<bool> {
    // The defaults do not matter: only the name and the value are checked.
    let mut scratch = Limits::defaults_for(Family::Redis, ServerVersion::new(7, 2, 0));
    scratch.set(name, value).map_err(anyhow::Error::msg)
}

/// `--limit NAME=VALUE`, validated.
pub fn parse_limit(s: &str) -> Result<(String, String)> {
    let Some((name, value)) = s.split_once('=') else {
        bail!("--limit {s:?}: expected NAME=VALUE, e.g. hash-max-listpack-entries=1024");
    };
    let name = name.trim().to_ascii_lowercase();
    let value = value.trim().to_string();
    if !check_limit(&name, &value).with_context(|| format!("--limit {s:?}"))? {
        bail!(
            "--limit {s:?}: unknown limit '{name}' (expected one of {})",
            LIMIT_NAMES.join(", ")
        );
    }
    Ok((name, value))
}

/// The `--config` file's directives, then the `--limit` overrides (applied
/// in this order, so a `--limit` wins). Bad values of known limits are errors.
pub fn model_config(config: Option<&Path>, limits: &[String]) -> Result<Vec<(String, String)>> {
    let mut out = match config {
        Some(path) => read_config(path)?,
        None => Vec::new(),
    };
    if let Some(path) = config {
        for (name, value) in &out {
            check_limit(name, value).with_context(|| format!("--config {}", path.display()))?;
        }
    }
    for l in limits {
        out.push(parse_limit(l)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_validated() {
        assert_eq!(
            parse_limit("hash-max-ziplist-entries=1k").unwrap(), // ok: unit test
            ("hash-max-ziplist-entries".into(), "1k".into())
        );
        for name in LIMIT_NAMES {
            let value = if name == "list-max-listpack-size" {
                "-3"
            } else {
                "7"
            };
            assert!(parse_limit(&format!("{name}={value}")).is_ok(), "{name}");
        }
        let err = |s: &str| format!("{:#}", parse_limit(s).unwrap_err());
        assert!(err("maxmemory=1").contains("unknown limit 'maxmemory'"));
        assert!(err("hash-max-listpack-entries").contains("expected NAME=VALUE"));
        assert!(err("hash-max-listpack-entries=lots").contains("is not a size"));
    }

    #[test]
    fn now_takes_seconds_or_ms() {
        assert_eq!(now_ms(Some(1_700_000_000)), Some(1_700_000_000_000));
        assert_eq!(now_ms(Some(1_700_000_000_123)), Some(1_700_000_000_123));
        assert_eq!(now_ms(None), None);
    }
}
