//! Every rule against real dumps: a fixture that triggers it (the exact
//! finding) and one that does not; threshold overrides, caps and their
//! counts, severity overrides; and the savings estimates against what a
//! real server used (recorded by fixtures/generator/rules.py in each
//! fixture's meta.json).

use std::path::{Path, PathBuf};

use rdblens_audit::{Audit, Finding, Num, Quantity, Scope, Unit};
use rdblens_engine::analyze_bytes;
use rdblens_summary::rules::{RuleId, Severity};
use rdblens_summary::{KeyName, Options, Summary};
use serde_json::Value;

mod support;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

fn rules_fixture(name: &str) -> PathBuf {
    root().join("rules").join(format!("{name}.rdb"))
}

fn corpus(name: &str) -> PathBuf {
    root().join("rdb").join(format!("{name}.rdb"))
}

struct Run<'a> {
    sets: &'a [&'a str],
    server: &'a [(&'a str, &'a str)],
    quantum: Option<u64>,
    threads: usize,
    batch: usize,
}

const DEFAULT: Run<'static> = Run {
    sets: &[],
    server: &[],
    quantum: None,
    threads: 2,
    batch: 64,
};

fn summary(path: &Path, run: &Run<'_>) -> Summary {
    let sets: Vec<String> = run.sets.iter().map(|s| s.to_string()).collect();
    let server: Vec<(String, String)> = run
        .server
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let rules = rdblens_audit::load(None, &server, &sets).unwrap_or_else(|e| panic!("{e}"));
    let opts = Options {
        rules,
        quantum: run.quantum,
        threads: run.threads,
        batch_entries: run.batch,
        ..Options::default()
    };
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    analyze_bytes(&data, &path.display().to_string(), &opts).unwrap_or_else(|e| panic!("{e}"))
}

fn audit(path: &Path, run: &Run<'_>) -> Audit {
    rdblens_audit::audit(&summary(path, run))
}

fn of(a: &Audit, rule: RuleId) -> Vec<&Finding> {
    a.findings.iter().filter(|f| f.rule == rule).collect()
}

fn key(db: u64, k: &[u8]) -> Scope {
    Scope::Key {
        db,
        key: KeyName::new(k),
    }
}

fn ns(n: &str) -> Scope {
    Scope::Namespace {
        namespace: n.to_string(),
    }
}

fn int(v: u64, unit: Unit) -> Quantity {
    Quantity::int(v, unit)
}

/// (severity, scope, measured, threshold) of a rule's findings, in order.
fn brief(a: &Audit, rule: RuleId) -> Vec<(Severity, Scope, Quantity, Option<Quantity>)> {
    of(a, rule)
        .into_iter()
        .map(|f| (f.severity, f.scope.clone(), f.measured, f.threshold))
        .collect()
}

fn rule_summary(a: &Audit, rule: RuleId) -> &rdblens_audit::RuleSummary {
    a.rules
        .iter()
        .find(|r| r.rule == rule)
        .unwrap_or_else(|| panic!("no summary for {rule}"))
}

#[test]
fn the_clean_fixture_breaks_no_rule() {
    let a = audit(&rules_fixture("clean"), &DEFAULT);
    assert_eq!(a.findings, vec![], "{:#?}", a.findings);
    assert_eq!(a.counts.total(), 0);
    assert_eq!(a.rules.len(), RuleId::ALL.len());
    assert!(a
        .rules
        .iter()
        .all(|r| r.enabled && r.counts.total() == 0 && r.omitted == 0));
    assert!(!a.fails(Severity::Warn));
}

#[test]
fn key_name_rules_on_all_types() {
    let a = audit(&corpus("redis-7.4.5/all-types"), &DEFAULT);
    let mut long_k = b"long:".to_vec();
    long_k.extend(std::iter::repeat_n(b'K', 1019));
    let mut long_small = b"long:".to_vec();
    long_small.extend(std::iter::repeat_n(b'k', 250));
    assert_eq!(
        brief(&a, RuleId::KeyLong),
        vec![
            (
                Severity::Warn,
                key(0, &long_k),
                int(1024, Unit::Bytes),
                Some(int(128, Unit::Bytes))
            ),
            (
                Severity::Warn,
                key(0, &long_small),
                int(255, Unit::Bytes),
                Some(int(128, Unit::Bytes))
            ),
            (
                Severity::Info,
                Scope::Global,
                Quantity::share(2, 227),
                Some(int(30, Unit::Bytes))
            ),
        ]
    );
    let chars: Vec<_> = of(&a, RuleId::KeyChars)
        .iter()
        .map(|f| (f.scope.clone(), f.measured))
        .collect();
    assert_eq!(
        chars,
        vec![
            (key(0, b"key\twith\ttabs\nand\nnewlines"), int(4, Unit::Count)),
            (key(0, b"bin:\xff\xfe\x00\x01key"), int(2, Unit::Count)),
            (key(0, b"key with spaces"), int(2, Unit::Count)),
            (key(0, b"key\"with\"double\"quotes"), int(3, Unit::Count)),
            (key(0, b"key'with'single'quotes"), int(3, Unit::Count)),
        ]
    );
    assert_eq!(
        brief(&a, RuleId::KeyBraces),
        vec![(Severity::Warn, key(0, b"{}"), int(2, Unit::Count), None)]
    );
    let nons = of(&a, RuleId::KeyNoNamespace);
    assert_eq!(nons.len(), 1);
    assert_eq!(
        (nons[0].scope.clone(), nons[0].keys, nons[0].measured),
        (Scope::Global, 8, Quantity::share(8, 227))
    );
    assert_eq!(nons[0].examples.len(), 8);
    // Hash tags are deliberate here: user:{42}:a, {43}...
    assert!(of(&a, RuleId::HashtagSkew).is_empty());
}

#[test]
fn value_rules_on_all_types() {
    let a = audit(&corpus("redis-7.4.5/all-types"), &DEFAULT);
    assert_eq!(
        brief(&a, RuleId::BigString),
        vec![
            (
                Severity::Warn,
                key(0, b"str:big:1mb-lzf"),
                int(1 << 20, Unit::Bytes),
                Some(int(10 << 10, Unit::Bytes))
            ),
            (
                Severity::Warn,
                key(0, b"str:big:1mb-random"),
                int(1 << 20, Unit::Bytes),
                Some(int(10 << 10, Unit::Bytes))
            ),
            (
                Severity::Warn,
                key(0, b"hll:dense"),
                int(12_304, Unit::Bytes),
                Some(int(10 << 10, Unit::Bytes))
            ),
        ]
    );
    let members: Vec<_> = of(&a, RuleId::BigMember)
        .iter()
        .map(|f| f.scope.clone())
        .collect();
    assert_eq!(members, vec![key(0, b"list:plain-node"), key(0, b"list:bigelem")]);
    let compressible: Vec<_> = of(&a, RuleId::Compressible)
        .iter()
        .map(|f| f.scope.clone())
        .collect();
    assert_eq!(
        compressible,
        vec![
            key(0, b"str:big:1mb-lzf"),
            key(0, b"str:lzf:10k"),
            key(0, b"bitmap:sparse"),
            key(0, b"str:setrange"),
        ]
    );
    // hash:limit:entries:over has 513 fields: one over the limit.
    let over = of(&a, RuleId::EncodingMiss)
        .into_iter()
        .find(|f| f.scope == key(0, b"hash:limit:entries:over"))
        .unwrap_or_else(|| panic!("no encoding-miss for hash:limit:entries:over"));
    assert_eq!(over.severity, Severity::Warn);
    assert_eq!(
        (over.measured, over.threshold),
        (int(513, Unit::Elements), Some(int(512, Unit::Elements)))
    );
    assert_eq!(over.config.as_deref(), Some("hash-max-listpack-entries 513"));
    assert!(over.savings.is_some_and(|s| s > 20_000 && s < over.memory));
    let r = rule_summary(&a, RuleId::EncodingMiss);
    assert_eq!((r.counts.warn, r.counts.info), (15, 2));
    for rule in [
        RuleId::BigCollection,
        RuleId::BigValueBytes,
        RuleId::BigSortedSet,
        RuleId::BigListQueue,
    ] {
        assert!(of(&a, rule).is_empty(), "{rule}");
    }
}

#[test]
fn keyspace_rules_on_all_types() {
    let a = audit(&corpus("redis-7.4.5/all-types"), &DEFAULT);
    assert_eq!(
        brief(&a, RuleId::MultiDb),
        vec![
            (
                Severity::Info,
                Scope::Database { db: 1 },
                int(7, Unit::Keys),
                None
            ),
            (
                Severity::Info,
                Scope::Database { db: 15 },
                int(2, Unit::Keys),
                None
            ),
        ]
    );
    let str_ns = of(&a, RuleId::NoTtl)
        .into_iter()
        .find(|f| f.scope == ns("str"))
        .unwrap_or_else(|| panic!("no no-ttl finding for str"));
    assert_eq!((str_ns.keys, str_ns.measured), (35, Quantity::share(35, 35)));
    // cache:page:* and session:* all have expiries.
    assert!(of(&a, RuleId::NoTtl)
        .iter()
        .all(|f| f.scope != ns("cache") && f.scope != ns("session")));
    // 40 keys in one millisecond are a cluster for the report's detector,
    // but far under the audit's 1,000-key threshold.
    assert!(of(&a, RuleId::ExpiryCluster).is_empty());
    for rule in [
        RuleId::ExpiredInSnapshot,
        RuleId::ColdKey,
        RuleId::HotKey,
        RuleId::SmallKeySprawl,
        RuleId::BigkeyExpiry,
    ] {
        assert!(of(&a, rule).is_empty(), "{rule}");
    }
}

#[test]
fn big_value_rules_on_the_bigkeys_fixture() {
    let a = audit(&rules_fixture("bigkeys"), &DEFAULT);
    let els = |v| int(v, Unit::Elements);
    assert_eq!(
        brief(&a, RuleId::BigCollection),
        vec![
            (
                Severity::Crit,
                key(0, b"big:set:members"),
                els(12_000),
                Some(els(10_000))
            ),
            (
                Severity::Warn,
                key(0, b"big:hash:fields"),
                els(6_000),
                Some(els(5_000))
            ),
            (
                Severity::Warn,
                key(0, b"big:list:queue"),
                els(6_000),
                Some(els(5_000))
            ),
        ]
    );
    assert_eq!(
        brief(&a, RuleId::BigValueBytes),
        vec![(
            Severity::Warn,
            key(0, b"big:list:blobs"),
            int(1100 * 1024, Unit::Bytes),
            Some(int(1 << 20, Unit::Bytes))
        )]
    );
    assert_eq!(
        brief(&a, RuleId::BigListQueue),
        vec![(
            Severity::Warn,
            key(0, b"big:list:queue"),
            els(6_000),
            Some(els(5_000))
        )]
    );
    assert_eq!(
        brief(&a, RuleId::BigSortedSet),
        vec![(
            Severity::Info,
            key(0, b"big:zset:ranking"),
            els(1_500),
            Some(els(1_000))
        )]
    );
    assert_eq!(
        brief(&a, RuleId::BigMember),
        vec![(
            Severity::Warn,
            key(0, b"big:hash:member"),
            int(5_000, Unit::Bytes),
            Some(int(4096, Unit::Bytes))
        )]
    );
    assert_eq!(
        brief(&a, RuleId::BigString),
        vec![(
            Severity::Warn,
            key(0, b"big:str:json"),
            int(20_000, Unit::Bytes),
            Some(int(10 << 10, Unit::Bytes))
        )]
    );
    let expiring: Vec<_> = of(&a, RuleId::BigkeyExpiry)
        .iter()
        .map(|f| (f.severity, f.scope.clone(), f.measured))
        .collect();
    assert_eq!(
        expiring,
        vec![
            (Severity::Warn, key(0, b"big:hash:fields"), els(6_000)),
            (Severity::Warn, key(0, b"big:str:json"), int(20_000, Unit::Bytes)),
        ]
    );
    let c = of(&a, RuleId::Compressible);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].scope, key(0, b"big:str:json"));
    assert!(matches!(c[0].measured.value, Num::Real(r) if r > 2.0));
    // Far over their limits: info, and no savings claimed.
    let miss: Vec<_> = of(&a, RuleId::EncodingMiss)
        .iter()
        .map(|f| (f.severity, f.scope.clone(), f.savings))
        .collect();
    assert_eq!(
        miss,
        vec![
            (Severity::Info, key(0, b"big:hash:fields"), None),
            (Severity::Info, key(0, b"big:zset:ranking"), None),
            (Severity::Info, key(0, b"big:hash:member"), None),
        ]
    );
    assert!(a.fails(Severity::Crit) && a.fails(Severity::Warn));
    // And nothing of the kind in a tidy keyspace.
    let clean = audit(&rules_fixture("clean"), &DEFAULT);
    assert!(!clean.fails(Severity::Info));
}

#[test]
fn bigkey_expiry_is_info_when_lazyfree_expire_is_on() {
    let lazy = Run {
        server: &[("lazyfree-lazy-expire", "yes")],
        ..DEFAULT
    };
    let a = audit(&rules_fixture("bigkeys"), &lazy);
    let sev: Vec<_> = of(&a, RuleId::BigkeyExpiry).iter().map(|f| f.severity).collect();
    assert_eq!(sev, vec![Severity::Info, Severity::Info]);
    let off = Run {
        server: &[("lazyfree-lazy-expire", "no")],
        ..DEFAULT
    };
    let a = audit(&rules_fixture("bigkeys"), &off);
    assert!(of(&a, RuleId::BigkeyExpiry)
        .iter()
        .all(|f| f.severity == Severity::Warn));
}

const T0: i64 = 1_959_999_960_000;

#[test]
fn expiry_cluster() {
    let a = audit(&rules_fixture("expiry"), &DEFAULT);
    assert_eq!(
        brief(&a, RuleId::ExpiryCluster),
        vec![(
            Severity::Warn,
            Scope::Window {
                start_ms: T0,
                end_ms: T0 + 1000
            },
            int(1200, Unit::Keys),
            Some(int(1000, Unit::Keys))
        )]
    );
    let f = of(&a, RuleId::ExpiryCluster)[0];
    assert!(
        f.message.contains("30.0% of the expiring keys") && f.message.contains("flash:sale (~1,200)"),
        "{}",
        f.message
    );
    // The minute after holds 1,800 keys at 30 per second: a cluster only
    // for a lower 1-minute threshold.
    let lower = Run {
        sets: &["expiry-cluster.minute-keys=1500"],
        ..DEFAULT
    };
    let a = audit(&rules_fixture("expiry"), &lower);
    let windows: Vec<_> = of(&a, RuleId::ExpiryCluster)
        .iter()
        .map(|f| (f.scope.clone(), f.keys))
        .collect();
    assert_eq!(
        windows,
        vec![
            (
                Scope::Window {
                    start_ms: T0 + 60_000,
                    end_ms: T0 + 120_000
                },
                1800
            ),
            (
                Scope::Window {
                    start_ms: T0,
                    end_ms: T0 + 1000
                },
                1200
            ),
        ]
    );
    // With a 1-minute threshold of 1,000 keys the minute of the 1,200
    // flash:sale keys is over it too, by those keys alone: still one
    // finding for them, their second.
    let both = Run {
        sets: &["expiry-cluster.minute-keys=1000"],
        ..DEFAULT
    };
    let a = audit(&rules_fixture("expiry"), &both);
    let windows: Vec<_> = of(&a, RuleId::ExpiryCluster)
        .iter()
        .map(|f| (f.scope.clone(), f.keys))
        .collect();
    assert_eq!(
        windows,
        vec![
            (
                Scope::Window {
                    start_ms: T0 + 60_000,
                    end_ms: T0 + 120_000
                },
                1800
            ),
            (
                Scope::Window {
                    start_ms: T0,
                    end_ms: T0 + 1000
                },
                1200
            ),
        ]
    );
    assert_eq!(rule_summary(&a, RuleId::ExpiryCluster).keys, 3000);
    // All-types' 40 cache:page keys, with a lower 1-second threshold.
    let a = audit(
        &corpus("redis-7.4.5/all-types"),
        &Run {
            sets: &["expiry-cluster.second-keys=30"],
            ..DEFAULT
        },
    );
    assert_eq!(
        brief(&a, RuleId::ExpiryCluster),
        vec![(
            Severity::Warn,
            Scope::Window {
                start_ms: 1_950_000_000_000,
                end_ms: 1_950_000_001_000
            },
            int(40, Unit::Keys),
            Some(int(30, Unit::Keys))
        )]
    );
}

#[test]
fn hashtag_skew() {
    let a = audit(&rules_fixture("hashtag"), &DEFAULT);
    let f = of(&a, RuleId::HashtagSkew);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        f[0].scope,
        Scope::Slot {
            slot: rdblens_summary::slot::key_slot(b"{shop42}"),
            hash_tag: Some("shop42".into())
        }
    );
    assert_eq!((f[0].severity, f[0].keys), (Severity::Warn, 300));
    assert!(matches!(f[0].measured.value, Num::Real(s) if s > 0.3 && s < 0.4));
    // A bigger share of memory is needed with a higher threshold.
    let a = audit(
        &rules_fixture("hashtag"),
        &Run {
            sets: &["hashtag-skew.memory-share=0.5"],
            ..DEFAULT
        },
    );
    assert!(of(&a, RuleId::HashtagSkew).is_empty());
}

#[test]
fn expired_in_snapshot() {
    let a = audit(&rules_fixture("expired"), &DEFAULT);
    let f = of(&a, RuleId::ExpiredInSnapshot);
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].severity, f[0].scope.clone(), f[0].keys, f[0].measured),
        (Severity::Info, Scope::Global, 2000, int(2000, Unit::Keys))
    );
    assert_eq!((f[0].examples.len(), f[0].more_keys), (100, 1900));
    assert!(f[0]
        .examples
        .iter()
        .all(|k| k.key.as_bytes().starts_with(b"tmp:job:")));
    assert!(f[0].savings.is_some_and(|s| s > f[0].memory));
    // They all expired in one second, but before the snapshot: no
    // stampede ahead.
    assert!(of(&a, RuleId::ExpiryCluster).is_empty());
}

#[test]
fn cold_keys_by_idle_time_and_by_lfu_counter() {
    let a = audit(&rules_fixture("cold"), &DEFAULT);
    let f = of(&a, RuleId::ColdKey);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (f[0].scope.clone(), f[0].keys, f[0].threshold),
        (ns("archive"), 1000, Some(int(30 * 86_400, Unit::Seconds)))
    );
    assert!(f[0]
        .message
        .starts_with("1,000 of 1,000 keys (100.0%) idle for more than 30.0d"));
    assert_eq!((f[0].examples.len(), f[0].more_keys), (5, 995));

    // The lru corpus dump: idle times up to ~28 h; with a 1-day threshold
    // the keys the oracle says were idle longer.
    let path = corpus("valkey-9.1.2/lru");
    let oracle = oracle_rows(&path);
    let want = oracle
        .iter()
        .filter(|o| o["rdb_idle_s"].as_u64().is_some_and(|s| s > 86_400))
        .count() as u64;
    let a = audit(&path, &DEFAULT);
    assert!(of(&a, RuleId::ColdKey).is_empty());
    let a = audit(
        &path,
        &Run {
            sets: &["cold-key.idle=1d"],
            ..DEFAULT
        },
    );
    assert_eq!(rule_summary(&a, RuleId::ColdKey).keys, want);
    assert_eq!(want, 30);

    // The lfu corpus dump: one key with a counter of 0.
    let a = audit(&corpus("redis-5.0.14/lfu"), &DEFAULT);
    let f = of(&a, RuleId::ColdKey);
    assert_eq!((f.len(), f[0].scope.clone(), f[0].keys), (1, ns("set"), 1));
    assert_eq!(f[0].examples[0].key, KeyName::new(b"set:limit:intset:at"));
}

fn oracle_rows(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path.with_extension("oracle.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn oracle_key(o: &Value) -> Vec<u8> {
    let k = o["key"].as_str().unwrap_or_default();
    if o["key_enc"] == "hex" {
        (0..k.len())
            .step_by(2)
            .filter_map(|i| u8::from_str_radix(&k[i..i + 2], 16).ok())
            .collect()
    } else {
        k.as_bytes().to_vec()
    }
}

#[test]
fn hot_keys_are_the_highest_lfu_counters() {
    let path = corpus("redis-5.0.14/lfu");
    let mut rows: Vec<(u64, u64, Vec<u8>)> = oracle_rows(&path)
        .iter()
        .filter_map(|o| Some((o["rdb_freq"].as_u64()?, o["db"].as_u64()?, oracle_key(o))))
        .collect();
    rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| (a.1, &a.2).cmp(&(b.1, &b.2))));
    // Findings are sorted by memory; the kept set is the top N counters.
    let as_set = |v: Vec<(Scope, Quantity)>| {
        let mut s: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
        s.sort();
        s
    };
    for (sets, n) in [(&[][..], 10), (&["hot-key.top=3"][..], 3)] {
        let a = audit(&path, &Run { sets, ..DEFAULT });
        let got: Vec<_> = of(&a, RuleId::HotKey)
            .iter()
            .map(|f| (f.scope.clone(), f.measured))
            .collect();
        let want: Vec<_> = rows[..n]
            .iter()
            .map(|(freq, db, k)| (key(*db, k), int(*freq, Unit::LfuCounter)))
            .collect();
        assert_eq!(as_set(got), as_set(want));
    }
    // No LFU counters, no hot keys.
    assert!(of(&audit(&corpus("valkey-9.1.2/lru"), &DEFAULT), RuleId::HotKey).is_empty());
}

#[test]
fn small_key_sprawl_needs_its_threshold() {
    let path = rules_fixture("sprawl");
    assert!(of(&audit(&path, &DEFAULT), RuleId::SmallKeySprawl).is_empty());
    let a = audit(
        &path,
        &Run {
            sets: &["small-key-sprawl.min-keys=1000"],
            ..DEFAULT
        },
    );
    assert_eq!(
        brief(&a, RuleId::SmallKeySprawl),
        vec![(
            Severity::Info,
            ns("sess"),
            int(10_000, Unit::Keys),
            Some(int(1000, Unit::Keys))
        )]
    );
    let f = of(&a, RuleId::SmallKeySprawl)[0];
    assert!(
        f.message.contains("as 100 hashes of ~100 fields"),
        "{}",
        f.message
    );
    assert_eq!(
        f.config, None,
        "16-byte values fit the default listpack value limit"
    );
}

#[test]
fn encoding_miss_suggests_the_config_that_fixes_it() {
    let a = audit(&rules_fixture("encoding"), &DEFAULT);
    let r = rule_summary(&a, RuleId::EncodingMiss);
    assert_eq!(
        (r.counts.warn, r.counts.info, r.listed, r.omitted),
        (36, 0, 36, 0)
    );
    let directives: Vec<_> = r.config.iter().map(|c| (c.directive.as_str(), c.keys)).collect();
    assert_eq!(
        directives,
        vec![
            ("hash-max-listpack-entries 600", 10),
            ("hash-max-listpack-value 100", 20),
            ("set-max-intset-entries 600", 1),
            ("zset-max-listpack-entries 200", 5),
        ]
    );
    assert!(of(&a, RuleId::EncodingMiss)
        .iter()
        .all(|f| f.savings.is_some() && f.config.is_some()));
}

#[test]
fn caps_keep_the_worst_and_count_the_rest() {
    let path = rules_fixture("encoding");
    let all = audit(&path, &DEFAULT);
    let capped = audit(
        &path,
        &Run {
            sets: &["encoding-miss.cap=5"],
            ..DEFAULT
        },
    );
    let r = rule_summary(&capped, RuleId::EncodingMiss);
    assert_eq!((r.listed, r.omitted, r.counts.warn, r.keys), (5, 31, 36, 36));
    // The five kept are the five with the largest savings, and the totals
    // still cover every key.
    let top: Vec<_> = of(&all, RuleId::EncodingMiss)[..5]
        .iter()
        .map(|f| f.scope.clone())
        .collect();
    let kept: Vec<_> = of(&capped, RuleId::EncodingMiss)
        .iter()
        .map(|f| f.scope.clone())
        .collect();
    assert_eq!(kept, top);
    assert_eq!(r.savings, rule_summary(&all, RuleId::EncodingMiss).savings);
    assert_eq!(capped.counts, all.counts);

    // A global cap, on a grouped rule too.
    let a = audit(
        &corpus("redis-7.4.5/all-types"),
        &Run {
            sets: &["cap=2"],
            ..DEFAULT
        },
    );
    let no_ttl = rule_summary(&a, RuleId::NoTtl);
    assert_eq!((no_ttl.listed, no_ttl.omitted, no_ttl.counts.info), (2, 20, 22));
    let chars = rule_summary(&a, RuleId::KeyChars);
    assert_eq!((chars.listed, chars.omitted), (2, 3));
    assert!(a.rules.iter().all(|r| r.listed <= 2));
}

#[test]
fn thresholds_severities_and_switches_are_configurable() {
    let path = corpus("redis-7.4.5/all-types");
    let a = audit(
        &path,
        &Run {
            sets: &[
                "big-string.warn=20KiB",
                "big-member.severity=crit",
                "key-chars.enabled=false",
                "key_long.warn=300",
            ],
            ..DEFAULT
        },
    );
    let big: Vec<_> = of(&a, RuleId::BigString)
        .iter()
        .map(|f| f.scope.clone())
        .collect();
    assert_eq!(
        big,
        vec![key(0, b"str:big:1mb-lzf"), key(0, b"str:big:1mb-random")]
    );
    assert!(of(&a, RuleId::BigString)
        .iter()
        .all(|f| f.threshold == Some(int(20 << 10, Unit::Bytes))));
    let members: Vec<_> = of(&a, RuleId::BigMember).iter().map(|f| f.severity).collect();
    assert_eq!(members, vec![Severity::Crit, Severity::Crit]);
    assert_eq!(rule_summary(&a, RuleId::BigMember).counts.crit, 2);
    assert!(a.fails(Severity::Crit));
    assert!(of(&a, RuleId::KeyChars).is_empty());
    assert!(!rule_summary(&a, RuleId::KeyChars).enabled);
    let long: Vec<_> = of(&a, RuleId::KeyLong)
        .iter()
        .filter(|f| f.severity == Severity::Warn)
        .map(|f| f.measured)
        .collect();
    assert_eq!(long, vec![int(1024, Unit::Bytes)]);
    // The findings come most severe first.
    assert_eq!(a.findings[0].severity, Severity::Crit);
}

/// The real numbers were measured by rules.py when it made the fixtures;
/// tests/live_savings.rs measures them again when a server is at hand.
#[test]
fn savings_estimates_are_within_15_percent_of_the_real_server() {
    support::check_savings(&root().join("rules"));
}

#[test]
fn the_audit_is_the_same_for_any_thread_count() {
    for path in [
        rules_fixture("bigkeys"),
        rules_fixture("expired"),
        rules_fixture("cold"),
        corpus("redis-7.4.5/all-types"),
        corpus("redis-5.0.14/lfu"),
    ] {
        let one = audit(
            &path,
            &Run {
                threads: 1,
                batch: 2048,
                ..DEFAULT
            },
        );
        for (threads, batch) in [(3, 1), (4, 7)] {
            let other = audit(
                &path,
                &Run {
                    threads,
                    batch,
                    ..DEFAULT
                },
            );
            assert_eq!(one, other, "{} with {threads} threads", path.display());
        }
    }
}

#[test]
fn the_audit_serializes_as_documented() {
    let a = audit(&rules_fixture("hashtag"), &DEFAULT);
    let v = serde_json::to_value(&a.findings[0]).unwrap_or_default();
    assert_eq!(v["rule"], "hashtag-skew");
    assert_eq!(v["severity"], "warn");
    assert_eq!(v["scope"]["kind"], "slot");
    assert_eq!(v["scope"]["hash_tag"], "shop42");
    assert_eq!(v["measured"]["unit"], "share");
    assert_eq!(v["threshold"]["value"], 0.01);
    assert!(v.get("impact").is_none());
    let e = audit(&rules_fixture("expired"), &DEFAULT);
    let v = serde_json::to_value(of(&e, RuleId::ExpiredInSnapshot)[0]).unwrap_or_default();
    assert_eq!(v["scope"], serde_json::json!({"kind": "global"}));
    assert!(v["examples"][0]["key"]
        .as_str()
        .is_some_and(|k| k.starts_with("tmp:job:")));
    let k = serde_json::to_value(&audit(&corpus("redis-7.4.5/all-types"), &DEFAULT).findings[0])
        .unwrap_or_default();
    assert_eq!(k["scope"]["kind"], "key");
    assert_eq!(k["scope"]["db"], 0);
    assert!(k["scope"]["key"].is_string());
}
