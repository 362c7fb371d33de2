//! `rdblens advise`: the split plans alone, the same as the report's
//! `plans` section (docs/advisor.md).

mod support;

use serde_json::Value;
use support::rdblens;

const BIGKEYS: &str = "fixtures/rules/bigkeys.rdb";

fn json_of(out: &std::process::Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn advise_json_is_the_report_plans_section() {
    let advise = json_of(
        &rdblens()
            .args([
                "advise",
                "-q",
                "--format",
                "json",
                "--jemalloc-quantum",
                "16",
                BIGKEYS,
            ])
            .output()
            .unwrap(),
    );
    let report = json_of(
        &rdblens()
            .args([
                "report",
                "-q",
                "--format",
                "json",
                "--jemalloc-quantum",
                "16",
                "--section",
                "plans",
                BIGKEYS,
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(advise, report["plans"]);
    assert_eq!(advise["target"], "redis-7.0.15");
    let plans = advise["plans"].as_array().unwrap();
    assert_eq!(plans.len(), 5);
    let hash = plans.iter().find(|p| p["key"] == "big:hash:fields").unwrap();
    assert_eq!(hash["scheme"], "hash-buckets");
    assert_eq!(hash["buckets"], 17);
    assert_eq!(hash["key_pattern"], "big:hash:fields:<0..16>");
    // Both figures: the change of used_memory and the MEMORY USAGE sums.
    assert_eq!(hash["used_memory_before"], 353_712);
    assert_eq!(hash["used_memory_after"], 67_482);
    assert_eq!(hash["saved"], 353_712 - 67_482);
    assert_eq!(hash["memory_before"], 305_664);
    assert_eq!(hash["memory_after"], 66_386);
    assert_eq!(hash["memory_usage_saved"], 305_664 - 66_386);
    assert_eq!(advise["jemalloc_quantum"], 16);
    assert_eq!(advise["total"]["plans"], 5);
    assert_eq!(advise["total"]["saved"], 218_420);
}

#[test]
fn advise_prints_one_block_per_plan_and_the_totals() {
    let out = rdblens()
        .args(["advise", "-q", "--jemalloc-quantum", "16", BIGKEYS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("hash-buckets: 17 keys big:hash:fields:<0..16>, CRC32 of the field modulo 17"),
        "{text}"
    );
    assert!(text.contains("Never DEL it"), "{text}");
    assert!(text.contains("Memory saved if every plan were applied"), "{text}");
}

#[test]
fn advise_rejects_bad_rule_settings() {
    let out = rdblens()
        .args(["advise", "--set", "no-such-rule.warn=1", BIGKEYS])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no-such-rule"),
        "{out:?}"
    );
}

/// The leaderboard of fixtures/rules/bigkeys.rdb (1,500 members, no TTL;
/// a plan once big-collection warns at 1,000): score ranges, why, and the
/// trimmed top-N, never hash buckets; no TTL step for a key without one.
/// The 15 ranges ZADDed into Debian's 7.0.15 took 23,864 bytes of MEMORY
/// USAGE, what the plan says (each range priced with its own bytes).
const ZSET_PLAN: &str = r#"warn db0 big:zset:ranking (zset skiplist, 1,500 elements; big-collection)
  scheme       score-ranges: 15 keys big:zset:ranking:<0..14>, score ranges in the sorted set's own order (score, then member): bucket i holds from bound i up to bound i+1; the 14 bounds are today's (score, member) at ranks 100, 200, ... (ZRANGE big:zset:ranking 100 100 WITHSCORES, ...), so each bucket starts with 100 members (ties at a bound split by member)
  buckets      ~100 each (at most 100) under zset-max-listpack-entries 128: listpack, 28% growth headroom
  used_memory  165.3 KiB -> 23.6 KiB: saves 141.6 KiB (what the server's used_memory changes by)
  MEMORY USAGE 153.5 KiB -> 23.3 KiB: saves 130.2 KiB (the keys' MEMORY USAGE, summed)
  hash tag     {big:zset:ranking}:<0..14>: every bucket in one slot, so one shard keeps all 23.6 KiB and all the key's traffic (no spread over the cluster); it buys multi-key commands across buckets (MGET, MULTI, Lua); names are 2 bytes longer: 0 B more
  note         a sorted set orders its members: buckets by a hash of the member would spread every rank and score range over all 15 buckets (ZREVRANK, ZRANGE by rank or by score would read them all and merge on the client); buckets by score range keep the order, two levels deep: a member's rank is its rank in its bucket plus the ZCARDs of the buckets above it. Scores bunch where they grow: re-cut the bounds when a bucket nears the limit
  alternative  if only the top is read (a leaderboard shown by its first ranks), keep one key trimmed to the top 128: ZADD big:zset:ranking <score> <member>, then ZREMRANGEBYRANK big:zset:ranking 0 -129 in the same MULTI; 128 members are a listpack of 2.1 KiB used_memory (2.1 KiB MEMORY USAGE), saving 163.2 KiB. The members below the top are dropped: keep their scores elsewhere (a hash bucketed by member) if they are needed
  latency      ZRANGE 0 -1, ZSCAN and deleting now touch 1,500 members at once; after, ranges of ~100: ZADD goes to the bucket of its score (a score that crosses a bound moves the member: ZREM and ZADD in one MULTI); the top k is ZREVRANGE of the top bucket; ZREVRANK is the rank in the member's bucket plus the ZCARDs of the buckets above (pipelined); ZSCORE and ZREM by member need its bucket: ZSCORE the 15 buckets (pipelined) or keep member -> score in a hash of its own
  migration    1. Cut the bounds: ZRANGE big:zset:ranking <i*100> <i*100> WITHSCORES for i = 1 .. 14 gives the lowest (score, member) of each bucket but the first; keep the 14 bounds where writers and readers find them (their config, or a small hash of their own).
               2. Deploy writers that ZADD to both big:zset:ranking and the bucket of the score, big:zset:ranking:<i> where bound i <= (score, member) < bound i+1 (a score that crosses a bound: ZREM from the old bucket and ZADD to the new one in one MULTI).
               3. Copy the existing members in score order: ZRANGE big:zset:ranking <start> <start+499> WITHSCORES, then ZADD each batch into its buckets (pipelined; idempotent, so it can be rerun).
               4. Switch readers to the buckets big:zset:ranking:0 .. big:zset:ranking:14, falling back to big:zset:ranking until the copy is done: a rank is the rank in the member's bucket plus the ZCARDs of the buckets above it.
               5. Stop writing big:zset:ranking; delete it with UNLINK (freed in the background) or in ZREMRANGEBYRANK big:zset:ranking 0 499 batches. Never DEL it: DEL frees a big key on the main thread and blocks every client."#;

#[test]
fn a_leaderboard_gets_score_ranges_and_a_trimmed_top_not_hash_buckets() {
    let out = rdblens()
        .args([
            "advise",
            "-q",
            "--jemalloc-quantum",
            "16",
            "--set",
            "big-collection.warn=1000",
            BIGKEYS,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let block: String = text
        .split("\n\n")
        .find(|b| b.starts_with("warn db0 big:zset:ranking "))
        .unwrap_or_else(|| panic!("{text}"))
        .to_string();
    assert_eq!(block.trim_end(), ZSET_PLAN.trim_end());
}

#[test]
fn a_leaderboard_plan_in_json() {
    let doc = json_of(
        &rdblens()
            .args([
                "advise",
                "-q",
                "--format",
                "json",
                "--jemalloc-quantum",
                "16",
                "--set",
                "big-collection.warn=1000",
                BIGKEYS,
            ])
            .output()
            .unwrap(),
    );
    let plan = doc["plans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["key"] == "big:zset:ranking")
        .unwrap()
        .clone();
    assert_eq!(
        plan,
        serde_json::json!({
            "kind": "key",
            "db": 0,
            "key": "big:zset:ranking",
            "namespace": "big",
            "rules": [
                "big-collection"
            ],
            "severity": "warn",
            "type": "zset",
            "encoding_before": "skiplist",
            "scheme": "score-ranges",
            "buckets": 15,
            "key_pattern": "big:zset:ranking:<0..14>",
            "bucket_by": "score ranges in the sorted set's own order (score, then member): bucket i holds from bound i up to bound i+1; the 14 bounds are today's (score, member) at ranks 100, 200, ... (ZRANGE big:zset:ranking 100 100 WITHSCORES, ...), so each bucket starts with 100 members (ties at a bound split by member)",
            "hash_tag_pattern": "{big:zset:ranking}:<0..14>",
            "hash_tag_cost": "every bucket in one slot, so one shard keeps all 23.6 KiB and all the key's traffic (no spread over the cluster); it buys multi-key commands across buckets (MGET, MULTI, Lua); names are 2 bytes longer: 0 B more",
            "elements": 1500,
            "per_bucket": 100,
            "max_per_bucket": 100,
            "limit": {
                "name": "zset-max-listpack-entries",
                "value": 128
            },
            "headroom": 0.28,
            "encoding_after": "listpack",
            "note": "a sorted set orders its members: buckets by a hash of the member would spread every rank and score range over all 15 buckets (ZREVRANK, ZRANGE by rank or by score would read them all and merge on the client); buckets by score range keep the order, two levels deep: a member's rank is its rank in its bucket plus the ZCARDs of the buckets above it. Scores bunch where they grow: re-cut the bounds when a bucket nears the limit",
            "alternative": "if only the top is read (a leaderboard shown by its first ranks), keep one key trimmed to the top 128: ZADD big:zset:ranking <score> <member>, then ZREMRANGEBYRANK big:zset:ranking 0 -129 in the same MULTI; 128 members are a listpack of 2.1 KiB used_memory (2.1 KiB MEMORY USAGE), saving 163.2 KiB. The members below the top are dropped: keep their scores elsewhere (a hash bucketed by member) if they are needed",
            "used_memory_before": 169221,
            "used_memory_after": 24176,
            "saved": 145045,
            "memory_before": 157205,
            "memory_after": 23864,
            "memory_usage_saved": 133341,
            "keyspace_before": 19,
            "keyspace_after": 285,
            "hash_tag_used_memory_after": 24176,
            "hash_tag_memory_after": 23864,
            "latency": "ZRANGE 0 -1, ZSCAN and deleting now touch 1,500 members at once; after, ranges of ~100: ZADD goes to the bucket of its score (a score that crosses a bound moves the member: ZREM and ZADD in one MULTI); the top k is ZREVRANGE of the top bucket; ZREVRANK is the rank in the member's bucket plus the ZCARDs of the buckets above (pipelined); ZSCORE and ZREM by member need its bucket: ZSCORE the 15 buckets (pipelined) or keep member -> score in a hash of its own",
            "migration": [
                "Cut the bounds: ZRANGE big:zset:ranking <i*100> <i*100> WITHSCORES for i = 1 .. 14 gives the lowest (score, member) of each bucket but the first; keep the 14 bounds where writers and readers find them (their config, or a small hash of their own).",
                "Deploy writers that ZADD to both big:zset:ranking and the bucket of the score, big:zset:ranking:<i> where bound i <= (score, member) < bound i+1 (a score that crosses a bound: ZREM from the old bucket and ZADD to the new one in one MULTI).",
                "Copy the existing members in score order: ZRANGE big:zset:ranking <start> <start+499> WITHSCORES, then ZADD each batch into its buckets (pipelined; idempotent, so it can be rerun).",
                "Switch readers to the buckets big:zset:ranking:0 .. big:zset:ranking:14, falling back to big:zset:ranking until the copy is done: a rank is the rank in the member's bucket plus the ZCARDs of the buckets above it.",
                "Stop writing big:zset:ranking; delete it with UNLINK (freed in the background) or in ZREMRANGEBYRANK big:zset:ranking 0 499 batches. Never DEL it: DEL frees a big key on the main thread and blocks every client."
            ],
            "target": "redis-7.0.15"
        })
    );
}

#[test]
fn the_ttl_step_comes_only_for_a_key_with_a_ttl() {
    let doc = json_of(
        &rdblens()
            .args([
                "advise",
                "-q",
                "--format",
                "json",
                "--jemalloc-quantum",
                "16",
                BIGKEYS,
            ])
            .output()
            .unwrap(),
    );
    let steps = |key: &str| -> Vec<String> {
        doc["plans"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["key"] == key)
            .unwrap()["migration"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    // big:set:members has no TTL: four steps, none about one.
    let set = steps("big:set:members");
    assert_eq!(set.len(), 4, "{set:#?}");
    assert!(
        set.iter().all(|s| !s.contains("TTL") && !s.contains("EXPIRE")),
        "{set:#?}"
    );
    // big:hash:fields expires (PEXPIREAT in the fixture's generator): the
    // buckets get its expiry.
    let hash = steps("big:hash:fields");
    assert_eq!(
        hash.last().map(String::as_str),
        Some("big:hash:fields expires: give every new key its expiry (PEXPIRETIME big:hash:fields, then PEXPIREAT on each of big:hash:fields:0 .. big:hash:fields:16), with a little jitter so they do not all expire at once.")
    );
    assert_eq!(hash.len(), 5);
    // So does big:str:json, split in parts.
    assert!(steps("big:str:json")
        .last()
        .unwrap()
        .starts_with("big:str:json expires: "));
    assert!(steps("big:list:queue").iter().all(|s| !s.contains("expir")));
}

#[test]
fn namespace_flags_are_checked_as_every_command_checks_them() {
    for command in ["advise", "report"] {
        rdblens()
            .args([command, BIGKEYS, "--separator", "::"])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicates::str::contains(
                "invalid value '::' for '--separator <SEPARATOR>': must be a single byte",
            ));
    }
    rdblens()
        .args(["diff", BIGKEYS, BIGKEYS, "--separator", ""])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "invalid value '' for '--separator <SEPARATOR>': must be a single byte",
        ));
}
