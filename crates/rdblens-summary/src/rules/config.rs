//! Per-rule settings: on/off, the cap on listed findings, an optional
//! severity override, and the thresholds, whose defaults are those of
//! docs/design-rules.md. Field names are kebab-case, as in rules files
//! (`[big-string] warn = "20KiB"`) and `--set big-string.warn=20KiB`.

use serde::{Deserialize, Serialize};

use super::catalogue::{RuleId, Severity};
use super::units::{ByteSize, Seconds};

/// Findings listed per rule by default; the rest are counted.
pub const DEFAULT_CAP: usize = 100;

/// What every rule has, whatever its thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Common {
    /// Whether the rule is evaluated and reported.
    pub enabled: bool,
    /// Findings listed at most; the rest are counted.
    pub cap: usize,
    /// Replaces the severity of every finding of the rule; `None`: the rule's own.
    pub severity: Option<Severity>,
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

macro_rules! rules_config {
    ($(
        $(#[$doc:meta])*
        $id:ident => $field:ident: $ty:ident {
            $($(#[$fdoc:meta])* $f:ident: $fty:ty = $def:expr,)*
        }
    )*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
            #[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
            pub struct $ty {
                /// Off: the rule is neither evaluated nor reported.
                pub enabled: bool,
                /// Findings listed at most; the rest are counted.
                pub cap: usize,
                /// Replaces the severity of every finding of the rule.
                pub severity: Option<Severity>,
                $($(#[$fdoc])* pub $f: $fty,)*
            }

            impl Default for $ty {
                fn default() -> Self {
                    $ty {
                        enabled: true,
                        cap: DEFAULT_CAP,
                        severity: None,
                        $($f: $def,)*
                    }
                }
            }
        )*

        /// The settings of every rule. `Default` is the catalogue's.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
        pub struct RuleConfig {
            $($(#[$doc])* pub $field: $ty,)*
        }

        impl RuleConfig {
            /// The on/off switch, cap and severity override of rule `id`.
            pub fn common(&self, id: RuleId) -> Common {
                match id {
                    $(RuleId::$id => Common {
                        enabled: self.$field.enabled,
                        cap: self.$field.cap,
                        severity: self.$field.severity,
                    },)*
                }
            }
        }
    };
}

rules_config! {
    /// `key-long`: warn above `warn` bytes; keys above `info` bytes are
    /// counted (statistics only, one summary finding).
    KeyLong => key_long: KeyLong {
        /// Key names longer than this are warned about, bytes.
        warn: ByteSize = ByteSize(128),
        /// Key names longer than this are counted, bytes.
        info: ByteSize = ByteSize(30),
    }
    /// `key-chars`: any occurrence is a warning.
    KeyChars => key_chars: KeyChars {}
    /// `key-braces`: any occurrence is a warning.
    KeyBraces => key_braces: KeyBraces {}
    /// `key-no-namespace`: reported when the share of keys without the
    /// separator is above `min-share` (0 = any).
    KeyNoNamespace => key_no_namespace: KeyNoNamespace {
        /// Share of all keys (0-1) without the separator above which the rule reports; 0: any.
        min_share: f64 = 0.0,
    }
    /// `hashtag-skew`: a slot holding more than `memory-share` of all
    /// memory and more than `mean-factor` times the mean slot, with at least
    /// `min-keys` keys (one big key alone is a big-key finding, not skew).
    HashtagSkew => hashtag_skew: HashtagSkew {
        /// Share of all memory (0-1) a slot must hold more than.
        memory_share: f64 = 0.01,
        /// Times the mean slot's memory a slot must hold more than.
        mean_factor: f64 = 10.0,
        /// Keys a slot must hold at least.
        min_keys: u64 = 2,
    }
    /// `big-string`: string length.
    BigString => big_string: BigString {
        /// String length above which a string is a warning, bytes.
        warn: ByteSize = ByteSize(10 * KIB),
        /// String length above which a string is critical, bytes.
        crit: ByteSize = ByteSize(10 * MIB),
    }
    /// `big-collection`: elements of a hash, list, set, sorted set or stream.
    BigCollection => big_collection: BigCollection {
        /// Elements above which a collection is a warning.
        warn: u64 = 5_000,
        /// Elements above which a collection is critical.
        crit: u64 = 10_000,
    }
    /// `big-value-bytes`: payload bytes of one collection.
    BigValueBytes => big_value_bytes: BigValueBytes {
        /// Payload above which a collection is a warning, bytes.
        warn: ByteSize = ByteSize(MIB),
        /// Payload above which a collection is critical, bytes.
        crit: ByteSize = ByteSize(100 * MIB),
    }
    /// `big-member`: longest element or field value of a collection.
    BigMember => big_member: BigMember {
        /// Longest element above which a collection is a warning, bytes.
        warn: ByteSize = ByteSize(4 * KIB),
    }
    /// `encoding-miss`: info; warn when the measure is at most
    /// `warn-margin` times the limit (a config change brings it back).
    EncodingMiss => encoding_miss: EncodingMiss {
        /// A key at most this many times past its limit is a warning with a savings estimate; further past, info.
        warn_margin: f64 = 2.0,
    }
    /// `compressible`: LZF-stored strings longer than `min-bytes` with a
    /// ratio above `min-ratio`.
    Compressible => compressible: Compressible {
        /// Uncompressed length a string must pass, bytes.
        min_bytes: ByteSize = ByteSize(KIB),
        /// Uncompressed over stored size a string must pass.
        min_ratio: f64 = 2.0,
    }
    /// `big-sorted-set`: members.
    BigSortedSet => big_sorted_set: BigSortedSet {
        /// Members above which a sorted set is reported.
        info: u64 = 1_000,
    }
    /// `big-list-queue`: elements.
    BigListQueue => big_list_queue: BigListQueue {
        /// Elements above which a list is a warning.
        warn: u64 = 5_000,
    }
    /// `no-ttl`: a namespace is reported when more than `min-share` of its
    /// keys (0 = any) and at least `min-keys` keys have no expiry.
    NoTtl => no_ttl: NoTtl {
        /// Share (0-1) of a namespace's keys without expiry that must be passed; 0: any.
        min_share: f64 = 0.0,
        /// Keys without expiry a namespace must have at least.
        min_keys: u64 = 1,
    }
    /// `expiry-cluster`: one 1-second window with more than `second-share`
    /// of all expiring keys and more than `second-keys` keys, or one
    /// 1-minute window with more than `minute-share` and `minute-keys`.
    ExpiryCluster => expiry_cluster: ExpiryCluster {
        /// Share (0-1) of all expiring keys a 1-second window must hold more than.
        second_share: f64 = 0.01,
        /// Keys a 1-second window must hold more than.
        second_keys: u64 = 1_000,
        /// Share (0-1) of all expiring keys a 1-minute window must hold more than.
        minute_share: f64 = 0.05,
        /// Keys a 1-minute window must hold more than.
        minute_keys: u64 = 10_000,
    }
    /// `bigkey-expiry`: keys over the warn threshold of big-string,
    /// big-collection or big-value-bytes that have an expiry. Warn, or info
    /// when `lazyfree-lazy-expire` is known to be on (from `--config`).
    BigkeyExpiry => bigkey_expiry: BigkeyExpiry {
        /// The server's `lazyfree-lazy-expire` (from `--config`); `None` when unknown.
        lazyfree_lazy_expire: Option<bool> = None,
    }
    /// `expired-in-snapshot`: expiry before the snapshot time.
    ExpiredInSnapshot => expired_in_snapshot: ExpiredInSnapshot {}
    /// `cold-key`: LRU idle time above `idle`, or an LFU counter at most
    /// `lfu-max` (the floor the counter decays to).
    ColdKey => cold_key: ColdKey {
        /// LRU idle time above which a key is cold, seconds.
        idle: Seconds = Seconds(30 * 86_400),
        /// LFU counter at or below which a key is cold.
        lfu_max: u8 = 0,
    }
    /// `multi-db`: keys outside database 0.
    MultiDb => multi_db: MultiDb {}
    /// `small-key-sprawl`: a namespace with more than `min-keys` string keys
    /// whose values are shorter than `max-value-bytes`; the savings assume
    /// hashes of `bucket-fields` fields.
    SmallKeySprawl => small_key_sprawl: SmallKeySprawl {
        /// String keys a namespace must have more than.
        min_keys: u64 = 1_000_000,
        /// Values shorter than this are small, bytes.
        max_value_bytes: ByteSize = ByteSize(100),
        /// Fields per hash the savings estimate assumes.
        bucket_fields: u64 = 100,
    }
    /// `hot-key`: the `top` keys with the highest LFU counters. A key with
    /// an LFU counter of at least `min-lfu`, or idle at most `max-idle`,
    /// is hot in the report's `hot-and-big` section.
    HotKey => hot_key: HotKey {
        /// Keys listed, highest LFU counter first (in place of `cap`).
        top: usize = 10,
        /// LFU counter from which a key is hot (20: some thousand reads
        /// more than minutes idle, with the default `lfu-log-factor` 10).
        min_lfu: u8 = 20,
        /// LRU idle time up to which a key is hot, seconds.
        max_idle: Seconds = Seconds(60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_catalogue() {
        let c = RuleConfig::default();
        assert_eq!(c.key_long.warn, ByteSize(128));
        assert_eq!(c.big_string.crit, ByteSize(10 << 20));
        assert_eq!(c.small_key_sprawl.min_keys, 1_000_000);
        assert_eq!(c.cold_key.idle, Seconds(2_592_000));
        for &r in RuleId::ALL {
            let common = c.common(r);
            assert!(common.enabled && common.cap == DEFAULT_CAP && common.severity.is_none());
        }
        let json = serde_json::to_string(&c).unwrap_or_default();
        let back: RuleConfig = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, c);
        assert!(json.contains("\"big-string\":{\"enabled\":true,\"cap\":100"));
    }
}
