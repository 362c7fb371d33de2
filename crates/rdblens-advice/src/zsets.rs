//! Sorted sets: score ranges, not hash buckets. A sorted set orders its
//! members: a ranking (ZREVRANK, ZRANGE by rank) or a score index
//! (ZRANGEBYSCORE). Buckets by a hash of the member would scatter every
//! rank and every score range over all N buckets; buckets by score range
//! keep the order, and a rank is the member's rank in its bucket plus the
//! sizes of the buckets above it (a two-level lookup). Where only the top
//! is read, one key trimmed to it is smaller still: the plan offers that
//! as its `alternative`.

use rdblens_audit::text;

use crate::keys::{blank, compact_limit, Cost, Split};
use crate::plan::{BucketLimit, Plan, Scheme};
use crate::sizing::GROWTH;
use rdblens_summary::rules::RuleConfig;

/// Score ranges of equal counts today, each under the compact limit after
/// [`GROWTH`] (or under big-collection's warn level when no bucket can be
/// compact).
pub(crate) fn score_ranges(split: &Split<'_>, cfg: &RuleConfig, name: &str) -> (Plan, Cost) {
    let s = &split.shape;
    let (limit, compact_note) = match compact_limit(split) {
        Ok(limit) => (limit, None),
        Err(why) => (
            BucketLimit {
                name: "big-collection.warn".into(),
                value: cfg.big_collection.warn,
            },
            (!why.is_empty()).then_some(why),
        ),
    };
    let size = ((limit.value as f64 / (1.0 + GROWTH)) as u64).max(1);
    let n = s.count.div_ceil(size).max(2);
    // Cut evenly: every bucket starts with the same count.
    let size = s.count.div_ceil(n).max(1);
    let cost = split.ranges(n, size, 0);
    let tagged = split.ranges(n, size, 2);
    let why = format!(
        "a sorted set orders its members: buckets by a hash of the member would spread every rank and score range over all {n} buckets (ZREVRANK, ZRANGE by rank or by score would read them all and merge on the client); buckets by score range keep the order, two levels deep: a member's rank is its rank in its bucket plus the ZCARDs of the buckets above it. Scores bunch where they grow: re-cut the bounds when a bucket nears the limit"
    );
    let note = match compact_note {
        Some(c) => format!("{why}. {c}"),
        None => why,
    };
    let (all, per, last) = (text::count(s.count), text::count(size), n - 1);
    let plan = Plan {
        buckets: n,
        key_pattern: format!("{name}:<0..{last}>"),
        bucket_by: format!(
            "score ranges in the sorted set's own order (score, then member): bucket i holds from bound i up to bound i+1; the {last} bounds are today's (score, member) at ranks {size}, {}, ... (ZRANGE {name} {size} {size} WITHSCORES, ...), so each bucket starts with {per} members (ties at a bound split by member)",
            2 * size
        ),
        elements: s.count,
        per_bucket: size,
        max_per_bucket: size,
        // Growth spread over the ranges as the scores are today.
        headroom: limit.value as f64 / size as f64 - 1.0,
        encoding_after: split.encoding(size).as_str().to_string(),
        limit,
        note: Some(note),
        memory_after: cost.usage,
        keyspace_after: cost.keyspace,
        used_memory_after: cost.used,
        latency: format!(
            "ZRANGE 0 -1, ZSCAN and deleting now touch {all} members at once; after, ranges of ~{per}: ZADD goes to the bucket of its score (a score that crosses a bound moves the member: ZREM and ZADD in one MULTI); the top k is ZREVRANGE of the top bucket; ZREVRANK is the rank in the member's bucket plus the ZCARDs of the buckets above (pipelined); ZSCORE and ZREM by member need its bucket: ZSCORE the {n} buckets (pipelined) or keep member -> score in a hash of its own"
        ),
        ..blank(Scheme::ScoreRanges)
    };
    (plan, tagged)
}

/// Members a trimmed ranking keeps: the compact limit, so the key stays
/// compact, or 1,000 where no count makes it compact.
fn top_kept(split: &Split<'_>) -> u64 {
    match compact_limit(split) {
        Ok(limit) => limit.value,
        Err(_) => 1_000,
    }
}

/// The other way to fix a ranking that is read only at its top: one key
/// trimmed to the top T after every write. `None` when the key is no
/// bigger than that.
pub(crate) fn trimmed(split: &Split<'_>, plan: &Plan, name: &str, key_len: u64) -> Option<String> {
    let keep = top_kept(split);
    if split.shape.count <= keep {
        return None;
    }
    // The top: the highest `keep` ranks.
    let e = split.estimate_range(Some(split.shape.count - keep), keep, key_len);
    let used = e.adds_to_used_memory();
    let usage = e.memory.unwrap_or(0);
    let saved = plan.used_memory_before as i64 - used as i64;
    Some(format!(
        "if only the top is read (a leaderboard shown by its first ranks), keep one key trimmed to the top {keep}: ZADD {name} <score> <member>, then ZREMRANGEBYRANK {name} 0 -{} in the same MULTI; {keep} members are a {} of {} used_memory ({} MEMORY USAGE), {}. The members below the top are dropped: keep their scores elsewhere (a hash bucketed by member) if they are needed",
        keep + 1,
        e.encoding.as_str(),
        text::bytes(used),
        text::bytes(usage),
        if saved >= 0 {
            format!("saving {}", text::bytes(saved as u64))
        } else {
            format!("costing {} more", text::bytes(saved.unsigned_abs()))
        }
    ))
}
