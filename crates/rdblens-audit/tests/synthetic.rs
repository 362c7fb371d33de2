//! The summary-level rules on hand-made keyspaces: exact findings for
//! slot skew, expiry windows, namespaces without expiries, databases and
//! sprawl; hostile expiry times; and summaries merged from parts.

use rdblens_analysis::rules::{RuleConfig, RuleId, Severity};
use rdblens_analysis::{KeyFacts, KeyStats, Settings, Summary, SUMMARY_VERSION};
use rdblens_audit::{Audit, Quantity, Scope, Unit};
use rdblens_memory::Encoding;
use rdblens_parser::TypeKind;

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
        slot: rdblens_analysis::slot::key_slot(key),
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
            slot: rdblens_analysis::slot::key_slot(b"user7"),
            hash_tag: Some("user7".into())
        }
    );
    assert_eq!((f[0].keys, f[0].memory), (50, 100_000));
    assert_eq!(f[0].measured, Quantity::share(100_000, 300_000));
    // Fewer keys than min-keys: not judged as skew.
    let mut cfg = RuleConfig::default();
    cfg.hashtag_skew.min_keys = 51;
    assert!(of(&audit_of(cfg, &keys), RuleId::HashtagSkew).is_empty());
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
