//! Migration steps in the guidelines' spirit: write the new keys first,
//! read both while the old data is copied over in small batches, delete
//! the old key without blocking (UNLINK, or *SCAN batches), never DEL it.
//! A key with a TTL gets one more step: the new keys take its expiry (and
//! only such a key: a step that copies a TTL the key does not have would
//! send an operator looking for one).

use crate::plan::Scheme;

/// The steps for splitting `key` (a `type_name`) into `buckets` keys of
/// about `per_bucket` elements; `ttl`: the key has an expiry.
pub(crate) fn steps(
    scheme: Scheme,
    type_name: &str,
    key: &str,
    buckets: u64,
    per_bucket: u64,
    ttl: bool,
) -> Vec<String> {
    let last = buckets.saturating_sub(1);
    let v = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let never_del = "Never DEL it: DEL frees a big key on the main thread and blocks every client.";
    let mut steps = match scheme {
        Scheme::HashBuckets => {
            let (scan, write, del, element) = match type_name {
                "hash" => ("HSCAN", "HSET", "HDEL", "field"),
                _ => ("SSCAN", "SADD", "SREM", "member"),
            };
            vec![
                format!("Deploy writers that write to both {key} and the bucket {key}:<CRC32({element}) mod {buckets}> ({write})."),
                format!("Copy the existing elements: {scan} {key} COUNT 500, then {write} each batch into its bucket (pipelined; idempotent, so it can be rerun)."),
                format!("Switch readers to the buckets {key}:0 .. {key}:{last}, falling back to {key} until the copy is done (dual read)."),
                format!("Stop writing {key}; delete it with UNLINK (freed in the background) or in {scan} + {del} batches of 500. {never_del}"),
            ]
        }
        Scheme::ScoreRanges => vec![
            format!("Cut the bounds: ZRANGE {key} <i*{per_bucket}> <i*{per_bucket}> WITHSCORES for i = 1 .. {last} gives the lowest (score, member) of each bucket but the first; keep the {last} bounds where writers and readers find them (their config, or a small hash of their own)."),
            format!("Deploy writers that ZADD to both {key} and the bucket of the score, {key}:<i> where bound i <= (score, member) < bound i+1 (a score that crosses a bound: ZREM from the old bucket and ZADD to the new one in one MULTI)."),
            format!("Copy the existing members in score order: ZRANGE {key} <start> <start+499> WITHSCORES, then ZADD each batch into its buckets (pipelined; idempotent, so it can be rerun)."),
            format!("Switch readers to the buckets {key}:0 .. {key}:{last}, falling back to {key} until the copy is done: a rank is the rank in the member's bucket plus the ZCARDs of the buckets above it."),
            format!("Stop writing {key}; delete it with UNLINK (freed in the background) or in ZREMRANGEBYRANK {key} 0 499 batches. {never_del}"),
        ],
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
    };
    if ttl && scheme != Scheme::NamespaceHashes {
        steps.push(format!(
            "{key} expires: give every new key its expiry (PEXPIRETIME {key}, then PEXPIREAT on each of {key}:0 .. {key}:{last}), with a little jitter so they do not all expire at once."
        ));
    }
    steps
}
