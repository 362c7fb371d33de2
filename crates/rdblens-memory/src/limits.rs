//! The config limits that decide which encoding a loaded value gets
//! (`rdbLoadObject()` compares against the *loading* server's config).

use crate::version::{Family, ServerVersion};

/// Encoding thresholds of the target server. Names follow 7.0+ (`listpack`);
/// [`Limits::set`] also takes the older `ziplist` names, as redis.conf does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `hash-max-listpack-entries`: most pairs a hash keeps as a listpack.
    pub hash_max_listpack_entries: u64,
    /// `hash-max-listpack-value`: longest field or value, in bytes, a hash keeps as a listpack.
    pub hash_max_listpack_value: u64,
    /// `set-max-intset-entries`: most members a set of integers keeps as an intset.
    pub set_max_intset_entries: u64,
    /// 7.2+ (sets had no listpack encoding before).
    pub set_max_listpack_entries: u64,
    /// `set-max-listpack-value`: longest member, in bytes, a set keeps as a listpack.
    pub set_max_listpack_value: u64,
    /// `zset-max-listpack-entries`: most members a sorted set keeps as a listpack.
    pub zset_max_listpack_entries: u64,
    /// `zset-max-listpack-value`: longest member, in bytes, a sorted set keeps as a listpack.
    pub zset_max_listpack_value: u64,
    /// Negative: node size limit (-1 = 4 KiB ... -5 = 64 KiB); positive: entries per node.
    pub list_max_listpack_size: i64,
    /// Quicklist nodes left uncompressed at each end; 0 = no compression.
    pub list_compress_depth: u64,
}

/// One compact-encoding limit, by its redis.conf name: the one list of
/// names every crate and the command line use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Limit {
    /// `hash-max-listpack-entries`.
    HashMaxListpackEntries,
    /// `hash-max-listpack-value`.
    HashMaxListpackValue,
    /// `set-max-intset-entries`.
    SetMaxIntsetEntries,
    /// `set-max-listpack-entries`.
    SetMaxListpackEntries,
    /// `set-max-listpack-value`.
    SetMaxListpackValue,
    /// `zset-max-listpack-entries`.
    ZsetMaxListpackEntries,
    /// `zset-max-listpack-value`.
    ZsetMaxListpackValue,
    /// `list-max-listpack-size`.
    ListMaxListpackSize,
    /// `list-compress-depth`.
    ListCompressDepth,
}

impl Limit {
    /// Every limit, in redis.conf order.
    pub const ALL: [Limit; 9] = [
        Limit::HashMaxListpackEntries,
        Limit::HashMaxListpackValue,
        Limit::SetMaxIntsetEntries,
        Limit::SetMaxListpackEntries,
        Limit::SetMaxListpackValue,
        Limit::ZsetMaxListpackEntries,
        Limit::ZsetMaxListpackValue,
        Limit::ListMaxListpackSize,
        Limit::ListCompressDepth,
    ];

    /// The redis.conf name (7.0+ spelling).
    pub fn name(self) -> &'static str {
        match self {
            Limit::HashMaxListpackEntries => "hash-max-listpack-entries",
            Limit::HashMaxListpackValue => "hash-max-listpack-value",
            Limit::SetMaxIntsetEntries => "set-max-intset-entries",
            Limit::SetMaxListpackEntries => "set-max-listpack-entries",
            Limit::SetMaxListpackValue => "set-max-listpack-value",
            Limit::ZsetMaxListpackEntries => "zset-max-listpack-entries",
            Limit::ZsetMaxListpackValue => "zset-max-listpack-value",
            Limit::ListMaxListpackSize => "list-max-listpack-size",
            Limit::ListCompressDepth => "list-compress-depth",
        }
    }

    /// The limit a config name names, in any case, with the pre-7.0
    /// `ziplist` spellings accepted as redis.conf accepts them.
    pub fn from_config_name(config_name: &str) -> Option<Limit> {
        let name = config_name
            .trim()
            .to_ascii_lowercase()
            .replace("-ziplist-", "-listpack-");
        Limit::ALL.into_iter().find(|l| l.name() == name)
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Limits {
    /// Shipped defaults. They have not changed since quicklists arrived in
    /// 3.2, on either family.
    pub fn defaults_for(_family: Family, _version: ServerVersion) -> Limits {
        Limits {
            hash_max_listpack_entries: 512,
            hash_max_listpack_value: 64,
            set_max_intset_entries: 512,
            set_max_listpack_entries: 128,
            set_max_listpack_value: 64,
            zset_max_listpack_entries: 128,
            zset_max_listpack_value: 64,
            list_max_listpack_size: -2,
            list_compress_depth: 0,
        }
    }

    /// Applies one config directive. Returns `Ok(false)` if `config_name` is
    /// not an encoding limit (so callers can pass every CONFIG GET pair),
    /// `Err` if it is one but the value does not parse.
    pub fn set(&mut self, config_name: &str, value: &str) -> Result<bool, String> {
        let Some(limit) = Limit::from_config_name(config_name) else {
            return Ok(false);
        };
        let slot: &mut u64 = match limit {
            Limit::HashMaxListpackEntries => &mut self.hash_max_listpack_entries,
            Limit::HashMaxListpackValue => &mut self.hash_max_listpack_value,
            Limit::SetMaxIntsetEntries => &mut self.set_max_intset_entries,
            Limit::SetMaxListpackEntries => &mut self.set_max_listpack_entries,
            Limit::SetMaxListpackValue => &mut self.set_max_listpack_value,
            Limit::ZsetMaxListpackEntries => &mut self.zset_max_listpack_entries,
            Limit::ZsetMaxListpackValue => &mut self.zset_max_listpack_value,
            Limit::ListCompressDepth => &mut self.list_compress_depth,
            Limit::ListMaxListpackSize => {
                self.list_max_listpack_size = parse_signed(config_name, value)?;
                return Ok(true);
            }
        };
        *slot = parse_size(config_name, value)?;
        Ok(true)
    }
}

fn parse_signed(name: &str, value: &str) -> Result<i64, String> {
    value
        .trim()
        .parse()
        .map_err(|_| format!("{name}: {value:?} is not an integer"))
}

/// A non-negative count or size, with the memory units redis.conf accepts
/// for size configs (`1k` = 1000, `1kb` = 1024, ... case-insensitive).
fn parse_size(name: &str, value: &str) -> Result<u64, String> {
    let v = value.trim().to_ascii_lowercase();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (digits, unit) = v.split_at(split);
    let mul: u64 = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return Err(format!("{name}: {value:?} is not a size")),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("{name}: {value:?} is not a size"))
}

#[cfg(test)]
mod tests {

    #[test]
    fn every_limit_is_found_by_its_name_and_old_spelling() {
        for limit in Limit::ALL {
            assert_eq!(Limit::from_config_name(limit.name()), Some(limit));
            let upper = limit.name().to_ascii_uppercase();
            assert_eq!(Limit::from_config_name(&upper), Some(limit));
        }
        assert_eq!(
            Limit::from_config_name(" zset-max-ziplist-value "),
            Some(Limit::ZsetMaxListpackValue)
        );
        assert_eq!(Limit::from_config_name("maxmemory"), None);
        // Every name sets its own field: no two limits share one.
        let defaults = Limits::defaults_for(Family::Redis, ServerVersion::new(7, 2, 0));
        for limit in Limit::ALL {
            let mut l = defaults.clone();
            assert_eq!(l.set(limit.name(), "3"), Ok(true));
            assert_ne!(l, defaults, "{limit}");
        }
    }
    use super::*;

    fn defaults() -> Limits {
        Limits::defaults_for(Family::Redis, ServerVersion::new(7, 2, 4))
    }

    #[test]
    fn accepts_both_ziplist_and_listpack_names() {
        let mut l = defaults();
        assert_eq!(l.set("hash-max-ziplist-entries", "100"), Ok(true));
        assert_eq!(l.hash_max_listpack_entries, 100);
        assert_eq!(l.set("hash-max-listpack-entries", "200"), Ok(true));
        assert_eq!(l.hash_max_listpack_entries, 200);
        assert_eq!(l.set("HASH-MAX-ZIPLIST-VALUE", "1kb"), Ok(true));
        assert_eq!(l.hash_max_listpack_value, 1024);
        assert_eq!(l.set("zset-max-ziplist-entries", "64"), Ok(true));
        assert_eq!(l.zset_max_listpack_entries, 64);
        assert_eq!(l.set("zset-max-listpack-value", "32"), Ok(true));
        assert_eq!(l.zset_max_listpack_value, 32);
        assert_eq!(l.set("set-max-intset-entries", "1000"), Ok(true));
        assert_eq!(l.set_max_intset_entries, 1000);
        assert_eq!(l.set("set-max-listpack-entries", "10"), Ok(true));
        assert_eq!(l.set("set-max-listpack-value", "10"), Ok(true));
        assert_eq!((l.set_max_listpack_entries, l.set_max_listpack_value), (10, 10));
        assert_eq!(l.set("list-max-ziplist-size", "-3"), Ok(true));
        assert_eq!(l.list_max_listpack_size, -3);
        assert_eq!(l.set("list-max-listpack-size", "128"), Ok(true));
        assert_eq!(l.list_max_listpack_size, 128);
        assert_eq!(l.set("list-compress-depth", "2"), Ok(true));
        assert_eq!(l.list_compress_depth, 2);
    }

    #[test]
    fn ignores_other_configs_and_rejects_bad_values() {
        let mut l = defaults();
        assert_eq!(l.set("maxmemory-policy", "allkeys-lru"), Ok(false));
        assert_eq!(l.set("stream-node-max-bytes", "4096"), Ok(false));
        assert!(l.set("hash-max-listpack-entries", "-1").is_err());
        assert!(l.set("hash-max-listpack-entries", "many").is_err());
        assert!(l.set("list-max-listpack-size", "big").is_err());
        assert_eq!(l, defaults());
    }
}
