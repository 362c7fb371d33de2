//! Migration steps in the guidelines' spirit: write the new keys first,
//! read both while the old data is copied over in small batches, delete
//! the old key without blocking (UNLINK, or *SCAN batches), never DEL it.

use crate::Scheme;

pub(crate) fn steps(scheme: Scheme, type_name: &str, key: &str, buckets: u64) -> Vec<String> {
    let last = buckets.saturating_sub(1);
    let v = |s: &[&str]| s.iter().map(|s| s.to_string()).collect();
    match scheme {
        Scheme::HashBuckets => {
            let (scan, write, del) = match type_name {
                "hash" => ("HSCAN", "HSET", "HDEL"),
                "set" => ("SSCAN", "SADD", "SREM"),
                _ => ("ZSCAN", "ZADD", "ZREM"),
            };
            vec![
                format!("Deploy writers that write to both {key} and the bucket {key}:<CRC32(member) mod {buckets}> ({write})."),
                format!("Copy the existing elements: {scan} {key} COUNT 500, then {write} each batch into its bucket (pipelined; idempotent, so it can be rerun)."),
                format!("Switch readers to the buckets {key}:0 .. {key}:{last}, falling back to {key} until the copy is done (dual read)."),
                format!("Stop writing {key}; delete it with UNLINK (freed in the background) or in {scan} + {del} batches of 500. Never DEL it: DEL frees a big key on the main thread and blocks every client."),
                "Copy the key's TTL to every bucket (EXPIRE), with a little jitter so they do not expire together.".to_string(),
            ]
        }
        Scheme::StreamSplit => vec![
            format!("Deploy producers that XADD to {key}:<CRC32(entity id) mod {buckets}>; create the consumer groups on every new stream (XGROUP CREATE ... MKSTREAM)."),
            format!("Let consumers read {key} until it is drained, and the new streams with one XREADGROUP over {key}:0 .. {key}:{last}."),
            format!("Once {key} is drained, trim it in steps (XTRIM MINID) and UNLINK it; never DEL it."),
        ],
        Scheme::ListRanges => vec![
            format!("Deploy writers that append to the newest range key {key}:<n> (a new key every N elements or every hour/day); keep a small counter or index of the ranges."),
            format!("Copy the old elements in order: LRANGE {key} i i+499 into the range keys (RPUSH), 500 at a time."),
            format!("Switch readers to the ranges, falling back to {key} until the copy is done."),
            format!("Delete {key} with UNLINK, or LTRIM/LPOP it in batches of 500; never DEL it."),
        ],
        Scheme::StringParts => vec![
            format!("Write the parts {key}:0 .. {key}:{last} (GETRANGE {key} on the old value, or from the source), then a small manifest key with the part count and a version."),
            "Switch readers to MGET of the parts (in batches), falling back to the old key until every part exists.".to_string(),
            format!("Delete {key} with UNLINK; never DEL it."),
        ],
        Scheme::NamespaceHashes => v(&[
            "Deploy writers that HSET <bucket> <id> <value> alongside the old SET (dual write).",
            "Copy the existing keys: SCAN MATCH <namespace>:* COUNT 1000, MGET the batch, HSET each value into its bucket (pipelined).",
            "Switch readers to HGET <bucket> <id>, falling back to GET <namespace>:<id> until the copy is done.",
            "Delete the old keys with UNLINK in SCAN batches of 1000 (never one DEL with millions of arguments). Per-key TTLs become field TTLs (HEXPIRE, Redis 7.4+) or are lost: keep expiring data out of the buckets.",
        ]),
    }
}
