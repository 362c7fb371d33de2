//! One sentence of advice per rule: what to do about a finding.

use rdblens_summary::rules::RuleId;

pub fn advice(rule: RuleId) -> &'static str {
    match rule {
        RuleId::KeyLong => {
            "Shorten the key: short namespace prefixes and compact ids; every byte of a key name is held in memory and sent with every command."
        }
        RuleId::KeyChars => {
            "Rename the key with letters, digits and : . - _ only; spaces, quotes, control bytes and glob characters break redis-cli, SCAN MATCH and log parsing."
        }
        RuleId::KeyBraces => {
            "Use braces only for one deliberate, non-empty {hash tag}; stray braces change which cluster slot the key lands in."
        }
        RuleId::KeyNoNamespace => {
            "Prefix keys with an application namespace (app:entity:id) to avoid collisions and make the keyspace auditable."
        }
        RuleId::HashtagSkew => {
            "Spread the keys of this hash tag over several tags (e.g. add a shard suffix inside the braces): one slot lives on one shard, which runs hot and full."
        }
        RuleId::BigString => {
            "Split the value, compress it on the client, or keep the blob in an object store; large values block the command thread and saturate the network."
        }
        RuleId::BigCollection => {
            "Split the collection into buckets (e.g. by id modulo N) and avoid O(N) commands on it (HGETALL, SMEMBERS, LRANGE 0 -1); delete it with UNLINK."
        }
        RuleId::BigValueBytes => {
            "Split the collection: one huge key blocks on O(N) commands and slows replication and slot migration; delete it with UNLINK."
        }
        RuleId::BigMember => {
            "Store the large element in its own key and keep a reference in the collection; large members defeat compact encodings."
        }
        RuleId::EncodingMiss => {
            "Raise the limit named in `config` (CONFIG SET and redis.conf) so the key loads compact again, or keep the collection under the limit; far over the limit, split it instead."
        }
        RuleId::Compressible => {
            "Compress the value on the client (or store it in a compact format): the snapshot compresses it, the server's memory does not."
        }
        RuleId::BigSortedSet => {
            "Trim the ranking to what is read (ZREMRANGEBYRANK); ranking reads cost O(log N) and grow with it."
        }
        RuleId::BigListQueue => {
            "The queue's consumers fall behind: trim it (LTRIM), alert on LLEN, or move to a stream with consumer groups."
        }
        RuleId::NoTtl => {
            "Give these keys an expiry (SET ... EX, EXPIRE) unless they are meant to live forever; data without an end of life piles up."
        }
        RuleId::ExpiryCluster => {
            "Add random jitter to the TTLs (e.g. +-10%) so the keys do not expire at once and their reads do not hit the backing store together."
        }
        RuleId::BigkeyExpiry => {
            "Turn on lazyfree-lazy-expire (or split the key): on expiry the server deletes it synchronously, blocking every client."
        }
        RuleId::ExpiredInSnapshot => {
            "These keys are dropped on load, but hold memory on the running server until expired: raise active-expire-effort or SCAN the namespace to expire them."
        }
        RuleId::ColdKey => {
            "Nobody reads these keys: give them an expiry or delete them (UNLINK) to free the memory they hold."
        }
        RuleId::MultiDb => {
            "Move the keys to database 0 under a namespace prefix, or to their own instance: numbered databases share one thread and do not exist in cluster mode."
        }
        RuleId::SmallKeySprawl => {
            "Bucket the keys into hashes of ~100 fields (HSET ns:<id / 100> <id> <value>): the per-key overhead exceeds the values. Per-key TTLs become field TTLs (HEXPIRE, Redis 7.4+) or are lost."
        }
        RuleId::HotKey => {
            "A hot key pins its load on one shard: cache it on the client (client-side caching) or spread reads over replicas."
        }
    }
}

/// The advice for bigkey-expiry when lazy freeing on expiry is known to be on.
pub const BIGKEY_EXPIRY_LAZY: &str =
    "lazyfree-lazy-expire is on, so the expiry frees the key in the background; splitting it still helps replication and migration.";

/// The advice for an encoding miss far over its limit.
pub const ENCODING_MISS_FAR: &str =
    "Far over the compact-encoding limit: a compact encoding would make operations slow at this size; split the collection if its memory matters.";
