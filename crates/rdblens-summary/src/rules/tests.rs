//! Each per-key rule on hand-made facts: the exact hit when a key breaks
//! it, nothing when it does not, and the thresholds moving with the config.

use rdblens_memory::Encoding;
use rdblens_parser::TypeKind;

use super::*;
use crate::acc::rules::RuleHits;
use crate::acc::Accumulate;
use crate::facts::KeyFacts;
use crate::limits::LimitCheck;

const NOW: i64 = 1_800_000_000_000;

fn facts(key: &[u8], kind: TypeKind) -> KeyFacts<'_> {
    KeyFacts {
        db: 0,
        key,
        kind,
        module: None,
        rdb_type: "x",
        encoding: if kind == TypeKind::String {
            Encoding::Embstr
        } else {
            Encoding::Listpack
        },
        elements: 3,
        max_element_len: 3,
        payload_bytes: 9,
        serialized_bytes: 12,
        memory: 100,
        memory_estimated: true,
        compact_memory: None,
        keyspace_overhead: 20,
        bucket_share: 0,
        value_rounding: 0,
        usage_overcount: 0,
        expiry_ms: Some(NOW + 60_000),
        int_value: None,
        idle_seconds: None,
        lfu_freq: None,
        ram_lru: None,
        slot: 0,
        lzf_stored_bytes: 0,
        lzf_uncompressed_bytes: 0,
        limit: None,
        shape: Default::default(),
    }
}

fn hits_with(f: &KeyFacts<'_>, cfg: &RuleConfig) -> Vec<Hit> {
    let mut out = Vec::new();
    evaluate(f, cfg, &Enabled::new(cfg), b':', NOW, |h| out.push(h));
    out
}

fn hits(f: &KeyFacts<'_>) -> Vec<Hit> {
    hits_with(f, &RuleConfig::default())
}

fn only(f: &KeyFacts<'_>, rule: RuleId) -> Vec<Hit> {
    hits(f).into_iter().filter(|h| h.rule == rule).collect()
}

fn hit(rule: RuleId, severity: Severity, measured: u64, threshold: u64) -> Hit {
    Hit {
        rule,
        severity,
        measured,
        threshold,
        extra: 0,
        impact: 100,
        savings: None,
        detail: None,
        listed: true,
    }
}

#[test]
fn a_tidy_key_breaks_nothing() {
    assert_eq!(hits(&facts(b"app:user:1", TypeKind::String)), vec![]);
    assert_eq!(hits(&facts(b"app:cart:1", TypeKind::Hash)), vec![]);
}

#[test]
fn key_names() {
    let long = [b'k'; 129];
    let mut key = b"ns:".to_vec();
    key.extend_from_slice(&long);
    assert_eq!(
        only(&facts(&key, TypeKind::String), RuleId::KeyLong),
        vec![
            hit(RuleId::KeyLong, Severity::Warn, 132, 128),
            Hit {
                listed: false,
                ..hit(RuleId::KeyLong, Severity::Info, 132, 30)
            }
        ]
    );
    let medium = b"ns:0123456789012345678901234567890";
    assert_eq!(
        only(&facts(medium, TypeKind::String), RuleId::KeyLong),
        vec![Hit {
            listed: false,
            ..hit(RuleId::KeyLong, Severity::Info, 34, 30)
        }]
    );
    assert_eq!(
        only(&facts(b"ns:a b\t\"c\"*", TypeKind::String), RuleId::KeyChars),
        vec![hit(RuleId::KeyChars, Severity::Warn, 5, 0)]
    );
    assert_eq!(
        only(&facts(b"ns:{}x", TypeKind::String), RuleId::KeyBraces),
        vec![hit(RuleId::KeyBraces, Severity::Warn, 2, 0)]
    );
    assert_eq!(
        only(&facts(b"ns:{tag}:x", TypeKind::String), RuleId::KeyBraces),
        vec![]
    );
    assert_eq!(
        only(&facts(b"plain", TypeKind::String), RuleId::KeyNoNamespace),
        vec![hit(RuleId::KeyNoNamespace, Severity::Info, 1, 0)]
    );
}

#[test]
fn values() {
    let mut s = facts(b"ns:s", TypeKind::String);
    s.elements = 20 << 20;
    assert_eq!(
        only(&s, RuleId::BigString),
        vec![hit(RuleId::BigString, Severity::Crit, 20 << 20, 10 << 20)]
    );
    s.elements = 10 * 1024;
    assert_eq!(only(&s, RuleId::BigString), vec![], "at the threshold is fine");

    let mut h = facts(b"ns:h", TypeKind::Hash);
    h.elements = 6000;
    h.payload_bytes = 2 << 20;
    h.max_element_len = 5000;
    let got = hits(&h);
    assert!(got.contains(&hit(RuleId::BigCollection, Severity::Warn, 6000, 5000)));
    assert!(got.contains(&hit(RuleId::BigValueBytes, Severity::Warn, 2 << 20, 1 << 20)));
    assert!(got.contains(&hit(RuleId::BigMember, Severity::Warn, 5000, 4096)));

    let mut z = facts(b"ns:z", TypeKind::ZSet);
    z.elements = 1001;
    assert_eq!(
        only(&z, RuleId::BigSortedSet),
        vec![hit(RuleId::BigSortedSet, Severity::Info, 1001, 1000)]
    );
    let mut l = facts(b"ns:l", TypeKind::List);
    l.elements = 5001;
    assert_eq!(
        only(&l, RuleId::BigListQueue),
        vec![hit(RuleId::BigListQueue, Severity::Warn, 5001, 5000)]
    );

    let mut c = facts(b"ns:c", TypeKind::String);
    c.lzf_stored_bytes = 1000;
    c.lzf_uncompressed_bytes = 5000;
    assert_eq!(
        only(&c, RuleId::Compressible),
        vec![Hit {
            extra: 1000,
            ..hit(RuleId::Compressible, Severity::Info, 5000, 1024)
        }]
    );
    c.lzf_stored_bytes = 3000;
    assert_eq!(only(&c, RuleId::Compressible), vec![], "ratio under 2:1");
}

#[test]
fn encoding_miss_warns_near_the_limit_with_savings() {
    let mut h = facts(b"ns:h", TypeKind::Hash);
    h.encoding = Encoding::Hashtable;
    h.memory = 30_000;
    h.compact_memory = Some(5_000);
    h.limit = Some(LimitCheck {
        limit: "hash-max-listpack-entries",
        threshold: 512,
        measured: 600,
    });
    assert_eq!(
        only(&h, RuleId::EncodingMiss),
        vec![Hit {
            impact: 25_000,
            savings: Some(25_000),
            detail: Some("hash-max-listpack-entries"),
            ..hit(RuleId::EncodingMiss, Severity::Warn, 600, 512)
        }]
    );
    h.limit = Some(LimitCheck {
        limit: "hash-max-listpack-entries",
        threshold: 512,
        measured: 5000,
    });
    assert_eq!(
        only(&h, RuleId::EncodingMiss),
        vec![Hit {
            impact: 30_000,
            detail: Some("hash-max-listpack-entries"),
            ..hit(RuleId::EncodingMiss, Severity::Info, 5000, 512)
        }]
    );
    let mut l = facts(b"ns:l", TypeKind::List);
    l.limit = Some(LimitCheck {
        limit: "list-max-listpack-size",
        threshold: 8192,
        measured: 9000,
    });
    assert_eq!(only(&l, RuleId::EncodingMiss), vec![], "quicklists are compact");
}

#[test]
fn lifetimes_and_access() {
    let mut s = facts(b"ns:s", TypeKind::String);
    s.elements = 20_000;
    assert!(hits(&s).contains(&Hit {
        detail: Some("big-string"),
        ..hit(RuleId::BigkeyExpiry, Severity::Warn, 20_000, 10_240)
    }));
    let mut lazy = RuleConfig::default();
    lazy.bigkey_expiry.lazyfree_lazy_expire = Some(true);
    assert!(hits_with(&s, &lazy).contains(&Hit {
        detail: Some("big-string"),
        ..hit(RuleId::BigkeyExpiry, Severity::Info, 20_000, 10_240)
    }));
    s.expiry_ms = None;
    assert_eq!(only(&s, RuleId::BigkeyExpiry), vec![]);

    let mut e = facts(b"ns:e", TypeKind::String);
    e.expiry_ms = Some(NOW - 5_000);
    assert_eq!(
        only(&e, RuleId::ExpiredInSnapshot),
        vec![Hit {
            savings: Some(120),
            ..hit(RuleId::ExpiredInSnapshot, Severity::Info, 5_000, 0)
        }]
    );

    let mut c = facts(b"ns:c", TypeKind::String);
    c.idle_seconds = Some(31 * 86_400);
    assert_eq!(
        only(&c, RuleId::ColdKey),
        vec![Hit {
            detail: Some("idle"),
            savings: Some(120),
            ..hit(RuleId::ColdKey, Severity::Info, 31 * 86_400, 30 * 86_400)
        }]
    );
    c.idle_seconds = Some(29 * 86_400);
    assert_eq!(only(&c, RuleId::ColdKey), vec![]);
    let mut cfg = RuleConfig::default();
    cfg.cold_key.idle = Seconds(86_400);
    assert_eq!(
        hits_with(&c, &cfg)
            .iter()
            .filter(|h| h.rule == RuleId::ColdKey)
            .count(),
        1
    );

    let mut f = facts(b"ns:f", TypeKind::String);
    f.lfu_freq = Some(0);
    let got = hits(&f);
    assert!(got.contains(&Hit {
        detail: Some("lfu"),
        savings: Some(120),
        ..hit(RuleId::ColdKey, Severity::Info, 0, 0)
    }));
    assert!(got.contains(&Hit {
        impact: 0,
        ..hit(RuleId::HotKey, Severity::Info, 0, 0)
    }));
}

#[test]
fn disabled_rules_are_not_evaluated() {
    let mut cfg = RuleConfig::default();
    cfg.key_chars.enabled = false;
    assert_eq!(hits_with(&facts(b"ns:a b", TypeKind::String), &cfg), vec![]);
}

#[test]
fn the_cap_keeps_the_worst_keys_whatever_the_split() {
    let mut cfg = RuleConfig::default();
    cfg.key_chars.cap = 3;
    let keys: Vec<Vec<u8>> = (0..20)
        .map(|i| format!("ns:bad key {i:02}").into_bytes())
        .collect();
    let fold = |order: &mut dyn Iterator<Item = usize>| {
        let mut a = RuleHits::new(&cfg, b':', NOW);
        let mut b = RuleHits::new(&cfg, b':', NOW);
        for i in order {
            let mut f = facts(&keys[i], TypeKind::String);
            f.memory = (i as u64 % 7) * 10;
            if i % 2 == 0 { &mut a } else { &mut b }.add(&f);
        }
        a.merge(b);
        a
    };
    let one = fold(&mut (0..20));
    let two = fold(&mut (0..20).rev());
    assert_eq!(one, two);
    let t = &one.rules[&RuleId::KeyChars];
    assert_eq!(t.total_keys(), 20);
    let kept: Vec<_> = t
        .listed
        .items
        .iter()
        .map(|h| (h.memory, h.key.as_bytes().to_vec()))
        .collect();
    assert_eq!(
        kept,
        vec![
            (60, b"ns:bad key 06".to_vec()),
            (60, b"ns:bad key 13".to_vec()),
            (50, b"ns:bad key 05".to_vec()),
        ]
    );
}

#[test]
fn small_strings_are_measured_as_hash_fields() {
    let mut h = RuleHits::new(&RuleConfig::default(), b':', NOW);
    let mut f = facts(b"sess:123456", TypeKind::String);
    f.elements = 16;
    h.add(&f);
    let mut big = facts(b"sess:9", TypeKind::String);
    big.elements = 100;
    h.add(&big);
    let t = h.sprawl.entries.get(&b"sess"[..]).copied().unwrap_or_default();
    // Field "123456" is a 24-bit integer entry (5 bytes), the value an
    // 18-byte string entry; the 100-byte value is not small.
    assert_eq!(
        (t.keys, t.memory, t.entry_bytes, t.max_field_len, t.max_value_len),
        (1, 120, 23, 6, 16)
    );
}

#[test]
fn stored_integers_are_priced_as_their_listpack_entries() {
    let mut h = RuleHits::new(&RuleConfig::default(), b':', NOW);
    // "12000" stored as an integer: a 16-bit entry (4 bytes), where its
    // five digits alone would allow up to 99,999 (24-bit, 5 bytes).
    let mut stored = facts(b"rate:1", TypeKind::String);
    stored.encoding = Encoding::Int;
    stored.elements = 5;
    stored.int_value = Some(12_000);
    h.add(&stored);
    let mut digits_only = facts(b"rate:2", TypeKind::String);
    digits_only.encoding = Encoding::Int;
    digits_only.elements = 5;
    h.add(&digits_only);
    let t = h.sprawl.entries.get(&b"rate"[..]).copied().unwrap_or_default();
    // Fields "1" and "2": 2-byte entries each.
    assert_eq!((t.keys, t.entry_bytes, t.used_memory), (2, 2 + 4 + 2 + 5, 240));
}
