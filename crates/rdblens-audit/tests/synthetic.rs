//! The summary-level rules on hand-made keyspaces: exact findings for
//! slot skew, expiry windows, namespaces without expiries, databases and
//! sprawl; hostile expiry times; and summaries merged from parts.

use rdblens_audit::{Audit, Quantity, Scope, Unit};
use rdblens_memory::Encoding;
use rdblens_parser::TypeKind;
use rdblens_summary::rules::{RuleConfig, RuleId, Severity};
use rdblens_summary::{KeyFacts, KeyStats, Settings, Summary, SUMMARY_VERSION};

const NOW: i64 = 1_800_000_000_000;

fn settings(rules: RuleConfig) -> Settings {
    Settings {
        top: 5,
        separator: b':',
        prefix_depth: 2,
        now_ms: NOW,
        expiry_buckets: 100_000,
        rules,
        shaping: Default::default(),
    }
}

fn facts(db: u64, key: &[u8], memory: u64, expiry_ms: Option<i64>) -> KeyFacts<'_> {
    KeyFacts {
        db,
        key,
        kind: TypeKind::String,
        module: None,
        rdb_type: "string",
        encoding: Encoding::Embstr,
        elements: 10,
        max_element_len: 10,
        payload_bytes: 10,
        serialized_bytes: 12,
        memory,
        memory_estimated: true,
        compact_memory: None,
        keyspace_overhead: 20,
        bucket_share: 0,
        value_rounding: 0,
        usage_overcount: 0,
        expiry_ms,
        int_value: None,
        idle_seconds: None,
        lfu_freq: None,
        ram_lru: None,
        slot: rdblens_summary::slot::key_slot(key),
        lzf_stored_bytes: 0,
        lzf_uncompressed_bytes: 0,
        limit: None,
        shape: Default::default(),
    }
}

fn summary(s: Settings, mut keys: KeyStats) -> Summary {
    keys.finish();
    Summary {
        summary_version: SUMMARY_VERSION,
        settings: s,
        files: Vec::new(),
        keys,
    }
}

fn audit_of(rules: RuleConfig, keys: &[(u64, Vec<u8>, u64, Option<i64>)]) -> Audit {
    let s = settings(rules);
    let mut stats = KeyStats::new(&s);
    for (db, k, mem, exp) in keys {
        stats.add(&facts(*db, k, *mem, *exp));
    }
    rdblens_audit::audit(&summary(s, stats))
}

fn of(a: &Audit, rule: RuleId) -> Vec<&rdblens_audit::Finding> {
    a.findings.iter().filter(|f| f.rule == rule).collect()
}

/// 2,000 tidy keys: namespaced, with spread expiries.
fn tidy() -> Vec<(u64, Vec<u8>, u64, Option<i64>)> {
    (0..2000)
        .map(|i| {
            (
                0,
                format!("app:item:{i}").into_bytes(),
                100,
                Some(NOW + 3_600_000 + i * 7_919_000),
            )
        })
        .collect()
}

#[test]
fn tidy_keys_break_nothing() {
    let a = audit_of(RuleConfig::default(), &tidy());
    assert_eq!(a.findings, vec![]);
}

#[test]
fn one_hash_tag_holding_memory_is_skew() {
    let mut keys = tidy();
    for i in 0..50 {
        keys.push((
            0,
            format!("cart:{{user7}}:{i}").into_bytes(),
            2000,
            Some(NOW + 1000 * i),
        ));
    }
    let a = audit_of(RuleConfig::default(), &keys);
    let f = of(&a, RuleId::HashtagSkew);
    assert_eq!(f.len(), 1);
    assert_eq!(
        f[0].scope,
        Scope::Slot {
            slot: rdblens_summary::slot::key_slot(b"user7"),
            hash_tag: Some("user7".into())
        }
    );
    assert_eq!((f[0].keys, f[0].memory), (50, 100_000));
    assert_eq!(f[0].measured, Quantity::share(100_000, 300_000));
    let slot = rdblens_summary::slot::key_slot(b"user7");
    assert_eq!(
        f[0].message,
        format!(
            "slot {slot} holds 50 keys and 97.7 KiB (33.3% of all memory, 5461x the mean slot), 50 of them with hash tag {{user7}} (100.0% of the slot)"
        )
    );
    assert_eq!(
        f[0].advice,
        "Spread the keys of this hash tag over several tags (e.g. add a shard suffix inside the braces): one slot lives on one shard, which runs hot and full."
    );
    assert_eq!(rule_advice(&a, RuleId::HashtagSkew), f[0].advice);
    // Fewer keys than min-keys: not judged as skew.
    let mut cfg = RuleConfig::default();
    cfg.hashtag_skew.min_keys = 51;
    assert!(of(&audit_of(cfg, &keys), RuleId::HashtagSkew).is_empty());
}

fn rule_advice(a: &Audit, rule: RuleId) -> String {
    a.rules
        .iter()
        .find(|r| r.rule == rule)
        .map(|r| r.advice.clone())
        .unwrap_or_default()
}

/// `prefix<N>` for the first N whose slot is `slot`'s: a name sharing the
/// slot without a hash tag.
fn name_in_slot(prefix: &str, slot: u16) -> Vec<u8> {
    (0..)
        .map(|n| format!("{prefix}{n}").into_bytes())
        .find(|k| rdblens_summary::slot::key_slot(k) == slot)
        .unwrap_or_default()
}

const BIG_KEY: &str = "One big key makes this slot hot, not a hash tag: split it into buckets without a hash tag, which spread over the slots (`rdblens advise` plans splits for the keys over the big-string, big-collection or big-value-bytes thresholds: lower them to get this key's); one slot lives on one shard, which runs hot and full.";
const BIG_KEY_PLANNED: &str = "One big key makes this slot hot, not a hash tag: split it into buckets without a hash tag, which spread over the slots (`rdblens advise` gives its split plan); one slot lives on one shard, which runs hot and full.";

/// No hash tag anywhere: a slot is hot because one big key shares it with
/// a small one. The finding names the key and advises splitting it.
#[test]
fn one_big_key_in_a_slot_is_not_blamed_on_hash_tags() {
    let mut keys = tidy();
    let slot = rdblens_summary::slot::key_slot(b"app:item:0");
    let big = name_in_slot("blob:", slot);
    keys.push((0, big.clone(), 50_000, None));
    let a = audit_of(RuleConfig::default(), &keys);
    let f = of(&a, RuleId::HashtagSkew);
    assert_eq!(f.len(), 1);
    let big = String::from_utf8_lossy(&big).into_owned();
    assert_eq!(
        f[0].message,
        format!(
            "slot {slot} holds 2 keys and 48.9 KiB (20.0% of all memory, 3283x the mean slot); the key {big} alone holds 48.8 KiB (99.8% of the slot), a big key, not a hash tag"
        )
    );
    let v = serde_json::to_value(f[0]).unwrap_or_default();
    assert_eq!(
        v["scope"],
        serde_json::json!({"kind": "slot", "slot": slot, "hash_tag": null})
    );
    assert_eq!(v["examples"], serde_json::json!([{"db": 0, "key": big}]));
    assert_eq!(v["more_keys"], 1);
    assert_eq!(v["advice"], BIG_KEY);
    assert_eq!(rule_advice(&a, RuleId::HashtagSkew), BIG_KEY);
}

/// The same big key over the big-string threshold has a split plan: the
/// advice points to it.
#[test]
fn a_big_key_with_a_split_plan_is_pointed_to_it() {
    let s = settings(RuleConfig::default());
    let mut stats = KeyStats::new(&s);
    for (db, k, mem, exp) in tidy() {
        stats.add(&facts(db, &k, mem, exp));
    }
    let slot = rdblens_summary::slot::key_slot(b"app:item:0");
    let big = name_in_slot("blob:", slot);
    stats.add(&KeyFacts {
        elements: 40_000,
        payload_bytes: 40_000,
        max_element_len: 40_000,
        ..facts(0, &big, 50_000, None)
    });
    let a = rdblens_audit::audit(&summary(s, stats));
    assert_eq!(of(&a, RuleId::BigString).len(), 1);
    let f = of(&a, RuleId::HashtagSkew);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].advice, BIG_KEY_PLANNED);
    assert_eq!(rule_advice(&a, RuleId::HashtagSkew), BIG_KEY_PLANNED);
}

const BIG_KEYS: &str = "Big keys make this slot hot, not a hash tag: split them into buckets without a hash tag, which spread over the slots (`rdblens advise` gives split plans for the keys over the big-string, big-collection or big-value-bytes thresholds); one slot lives on one shard, which runs hot and full.";

/// No hash tag anywhere: one slot holds three big keys (none half of it),
/// another one big key. Neither finding, nor the rule, advises about hash
/// tags.
#[test]
fn several_big_keys_in_a_slot_are_not_blamed_on_hash_tags() {
    let mut keys = tidy();
    let slot = rdblens_summary::slot::key_slot(b"app:item:0");
    let three: Vec<Vec<u8>> = ["pic:", "blob:", "doc:"]
        .iter()
        .map(|p| name_in_slot(p, slot))
        .collect();
    for k in &three {
        keys.push((0, k.clone(), 20_000, None));
    }
    let other = rdblens_summary::slot::key_slot(b"app:item:1");
    keys.push((0, name_in_slot("blob:", other), 50_000, None));
    let a = audit_of(RuleConfig::default(), &keys);
    let f: Vec<_> = of(&a, RuleId::HashtagSkew)
        .into_iter()
        .filter(|f| f.scope == Scope::Slot { slot, hash_tag: None })
        .collect();
    assert_eq!(f.len(), 1);
    // Equal memory: the first name is named.
    let biggest = String::from_utf8_lossy(&three[1]).into_owned();
    assert_eq!(
        f[0].message,
        format!(
            "slot {slot} holds 4 keys and 58.7 KiB (19.4% of all memory, 3176x the mean slot); no key in it has a hash tag: its keys are big, the biggest, {biggest}, holding 19.5 KiB (33.3% of the slot)"
        )
    );
    assert_eq!(f[0].advice, BIG_KEYS);
    assert_eq!(of(&a, RuleId::HashtagSkew).len(), 2);
    assert_eq!(rule_advice(&a, RuleId::HashtagSkew), BIG_KEYS);
    assert!(a.findings.iter().all(|f| !f.advice.contains("Spread")));
}

/// A hash-tag slot and a big-key slot: each finding its own advice, the
/// rule's naming both causes.
#[test]
fn each_skewed_slot_gets_the_advice_of_its_cause() {
    let mut keys = tidy();
    for i in 0..50 {
        keys.push((0, format!("cart:{{user7}}:{i}").into_bytes(), 2000, None));
    }
    let slot = rdblens_summary::slot::key_slot(b"app:item:0");
    keys.push((0, name_in_slot("blob:", slot), 50_000, None));
    let a = audit_of(RuleConfig::default(), &keys);
    let advice: Vec<_> = of(&a, RuleId::HashtagSkew)
        .iter()
        .map(|f| (f.scope.clone(), f.advice.starts_with("Spread")))
        .collect();
    assert_eq!(
        advice,
        vec![
            (
                Scope::Slot {
                    slot: rdblens_summary::slot::key_slot(b"user7"),
                    hash_tag: Some("user7".into())
                },
                true
            ),
            (Scope::Slot { slot, hash_tag: None }, false)
        ]
    );
    assert_eq!(
        rule_advice(&a, RuleId::HashtagSkew),
        "A slot runs hot when a hash tag pins many keys to it (spread them over several tags, e.g. a shard suffix inside the braces) or when it holds a big key (split it: `rdblens advise` gives split plans); `rdblens keys --format csv` lists each key's slot."
    );
}

#[test]
fn expiry_windows() {
    let mut keys = tidy();
    let t = NOW + 86_400_000 * 3;
    for i in 0..1001 {
        keys.push((0, format!("flash:{i}").into_bytes(), 50, Some(t + i % 1000)));
    }
    let a = audit_of(RuleConfig::default(), &keys);
    let f = of(&a, RuleId::ExpiryCluster);
    let start = t.div_euclid(1000) * 1000;
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].severity, f[0].scope.clone(), f[0].keys),
        (
            Severity::Warn,
            Scope::Window {
                start_ms: start,
                end_ms: start + 1000
            },
            1001
        )
    );
    // 1,000 keys are not more than 1,000.
    keys.pop();
    assert!(of(&audit_of(RuleConfig::default(), &keys), RuleId::ExpiryCluster).is_empty());
}

fn rule_keys(a: &Audit, rule: RuleId) -> Option<(u64, u64)> {
    a.rules
        .iter()
        .find(|r| r.rule == rule)
        .map(|r| (r.keys, r.memory))
}

/// 12,000 keys in the second 08:00:05 UTC, three days after NOW: over the
/// 1-second thresholds, and their minute over the 1-minute ones.
#[test]
fn a_burst_in_one_second_is_that_second_not_also_its_minute() {
    let mut keys = tidy();
    let minute = NOW + 86_400_000 * 3;
    for i in 0..12_000 {
        keys.push((
            0,
            format!("flash:{i}").into_bytes(),
            50,
            Some(minute + 5_000 + i % 1000),
        ));
    }
    let a = audit_of(RuleConfig::default(), &keys);
    let f = of(&a, RuleId::ExpiryCluster);
    let brief: Vec<_> = f.iter().map(|f| (f.scope.clone(), f.keys, f.memory)).collect();
    assert_eq!(
        brief,
        vec![(
            Scope::Window {
                start_ms: minute + 5_000,
                end_ms: minute + 6_000
            },
            12_000,
            12_000 * 50
        )]
    );
    assert_eq!(
        f[0].message,
        "12,000 keys (85.7% of the expiring keys) expire in one 1-second window; namespaces: flash (~12,000)"
    );
    assert_eq!(f[0].threshold, Some(Quantity::int(1000, Unit::Keys)));
    // The rule's totals count the keys once.
    assert_eq!(rule_keys(&a, RuleId::ExpiryCluster), Some((12_000, 12_000 * 50)));
}

/// A minute over the 1-minute thresholds even without the burst in one of
/// its seconds is the minute, the burst named in it: one finding.
#[test]
fn a_minute_wide_cluster_names_its_burst() {
    let mut keys = tidy();
    let minute = NOW + 86_400_000 * 3;
    for i in 0..2_000 {
        keys.push((0, format!("flash:{i}").into_bytes(), 50, Some(minute + 5_000)));
    }
    // 11,000 keys over the 60 seconds: 183 or 184 a second.
    for i in 0..11_000 {
        keys.push((
            0,
            format!("feed:{i}").into_bytes(),
            50,
            Some(minute + i * 60_000 / 11_000),
        ));
    }
    let a = audit_of(RuleConfig::default(), &keys);
    let f = of(&a, RuleId::ExpiryCluster);
    let brief: Vec<_> = f.iter().map(|f| (f.scope.clone(), f.keys)).collect();
    assert_eq!(
        brief,
        vec![(
            Scope::Window {
                start_ms: minute,
                end_ms: minute + 60_000
            },
            13_000
        )]
    );
    assert_eq!(
        f[0].message,
        "13,000 keys (86.7% of the expiring keys) expire in one 1-minute window, including 2,183 in the second 08:00:05 UTC, over the 1-second thresholds; namespaces: feed (~11,000), flash (~2,000)"
    );
    assert_eq!(f[0].threshold, Some(Quantity::int(10_000, Unit::Keys)));
    assert_eq!(rule_keys(&a, RuleId::ExpiryCluster), Some((13_000, 13_000 * 50)));
    // The minute less its burst holds 10,817 keys: with that as the
    // 1-minute threshold the burst alone is a cluster, its second.
    let mut cfg = RuleConfig::default();
    cfg.expiry_cluster.minute_keys = 10_817;
    let a = audit_of(cfg, &keys);
    let brief: Vec<_> = of(&a, RuleId::ExpiryCluster)
        .iter()
        .map(|f| (f.scope.clone(), f.keys))
        .collect();
    assert_eq!(
        brief,
        vec![(
            Scope::Window {
                start_ms: minute + 5_000,
                end_ms: minute + 6_000
            },
            2_183
        )]
    );
}

#[test]
fn hostile_expiry_times_do_not_overflow() {
    let keys = vec![
        (0, b"a:max".to_vec(), 10, Some(i64::MAX)),
        (0, b"a:min".to_vec(), 10, Some(i64::MIN)),
        (0, b"a:zero".to_vec(), 10, Some(0)),
    ];
    let mut cfg = RuleConfig::default();
    cfg.expiry_cluster.second_keys = 0;
    cfg.expiry_cluster.second_share = 0.0;
    let a = audit_of(cfg, &keys);
    // The far-future key is a (one-key) window; the past ones are expired.
    let windows: Vec<_> = of(&a, RuleId::ExpiryCluster).iter().map(|f| f.keys).collect();
    assert_eq!(windows, vec![1]);
    assert_eq!(of(&a, RuleId::ExpiredInSnapshot)[0].keys, 2);
}

#[test]
fn namespaces_without_expiries_and_other_databases() {
    let mut keys = tidy();
    for i in 0..10 {
        keys.push((0, format!("conf:{i}").into_bytes(), 100, None));
        keys.push((3, format!("legacy{i}").into_bytes(), 100, None));
    }
    keys.push((0, b"conf:ttl".to_vec(), 100, Some(NOW + 5000)));
    let a = audit_of(RuleConfig::default(), &keys);
    let no_ttl: Vec<_> = of(&a, RuleId::NoTtl)
        .iter()
        .map(|f| (f.scope.clone(), f.keys, f.measured))
        .collect();
    assert_eq!(
        no_ttl,
        vec![
            // Same memory: ordered by scope.
            (
                Scope::Namespace {
                    namespace: "(no namespace)".into()
                },
                10,
                Quantity::share(10, 10)
            ),
            (
                Scope::Namespace {
                    namespace: "conf".into()
                },
                10,
                Quantity::share(10, 11)
            ),
        ]
    );
    let dbs: Vec<_> = of(&a, RuleId::MultiDb)
        .iter()
        .map(|f| (f.scope.clone(), f.measured))
        .collect();
    assert_eq!(
        dbs,
        vec![(Scope::Database { db: 3 }, Quantity::int(10, Unit::Keys))]
    );
    // Only namespaces mostly without expiries, with a share threshold.
    let mut cfg = RuleConfig::default();
    cfg.no_ttl.min_share = 0.95;
    let a = audit_of(cfg, &keys);
    assert_eq!(of(&a, RuleId::NoTtl).len(), 1);
}

#[test]
fn sprawl_counts_small_strings_per_namespace() {
    let mut cfg = RuleConfig::default();
    cfg.small_key_sprawl.min_keys = 1500;
    let a = audit_of(cfg, &tidy());
    let f = of(&a, RuleId::SmallKeySprawl);
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].scope.clone(), f[0].keys, f[0].memory),
        (
            Scope::Namespace {
                namespace: "app".into()
            },
            2000,
            2000 * 120
        )
    );
    assert!(f[0].savings.is_some_and(|s| s > 0 && s < 2000 * 120));
}

#[test]
fn merged_parts_audit_like_the_whole() {
    let mut keys = tidy();
    for i in 0..300 {
        keys.push((i % 3, format!("bad key {i}").into_bytes(), 100 + i, None));
    }
    let mut cfg = RuleConfig::default();
    cfg.key_chars.cap = 7;
    let s = settings(cfg);
    let mut whole = KeyStats::new(&s);
    let mut parts = [KeyStats::new(&s), KeyStats::new(&s), KeyStats::new(&s)];
    for (i, (db, k, mem, exp)) in keys.iter().enumerate() {
        let f = facts(*db, k, *mem, *exp);
        whole.add(&f);
        parts[(i * 7 + i / 3) % 3].add(&f);
    }
    let [a, b, c] = parts;
    let mut merged = c;
    merged.merge(a);
    merged.merge(b);
    let one = rdblens_audit::audit(&summary(s.clone(), whole));
    let other = rdblens_audit::audit(&summary(s, merged));
    assert_eq!(one, other);
    let r = one
        .rules
        .iter()
        .find(|r| r.rule == RuleId::KeyChars)
        .map(|r| (r.listed, r.omitted, r.keys));
    assert_eq!(r, Some((7, 293, 300)));
}
