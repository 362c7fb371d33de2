//! Evaluating the per-key rules on one key's facts. Runs in the analysis
//! workers for every key, so it only compares numbers the facts already
//! hold and allocates nothing.

use rdblens_parser::TypeKind;

use super::catalogue::{RuleId, Severity};
use super::config::RuleConfig;
use crate::facts::KeyFacts;
use crate::keyshape::KeyShape;
use crate::keyshape::{bad_braces, bad_char};

/// One rule broken by one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The rule broken.
    pub rule: RuleId,
    /// The rule's severity for this key (the audit applies any override from the settings).
    pub severity: Severity,
    /// The measure the threshold applies to (unit per rule, see docs/audit.md).
    pub measured: u64,
    /// The threshold passed, in the measure's unit; 0 for rules without one.
    pub threshold: u64,
    /// A second measure where one is not enough (compressible: stored bytes).
    pub extra: u64,
    /// Order within a rule: bytes at stake, or the LFU counter for hot-key.
    pub impact: u64,
    /// Memory a fix would give back, where the rule implies one.
    pub savings: Option<u64>,
    /// What was measured: the config limit (encoding-miss), the rule that
    /// made the key big (bigkey-expiry), `idle` or `lfu` (cold-key).
    pub detail: Option<&'static str>,
    /// False for keys only counted (key-long's statistics level).
    pub listed: bool,
}

/// Which rules are on, one bit per `RuleId as usize`: built per key
/// without allocating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enabled(u32);

impl Enabled {
    /// The rules `cfg` leaves on.
    pub fn new(cfg: &RuleConfig) -> Self {
        Enabled(
            RuleId::ALL
                .iter()
                .filter(|&&r| cfg.common(r).enabled)
                .fold(0, |bits, &r| bits | 1 << (r as u32)),
        )
    }

    /// Whether rule `r` is on.
    pub fn on(&self, r: RuleId) -> bool {
        self.0 & (1 << (r as u32)) != 0
    }
}

fn is_collection(k: TypeKind) -> bool {
    matches!(
        k,
        TypeKind::Hash | TypeKind::List | TypeKind::Set | TypeKind::ZSet | TypeKind::Stream
    )
}

/// Two-level check: `(severity, threshold)` of the highest level passed.
fn level(v: u64, warn: u64, crit: u64) -> Option<(Severity, u64)> {
    if v > crit {
        Some((Severity::Crit, crit))
    } else if v > warn {
        Some((Severity::Warn, warn))
    } else {
        None
    }
}

/// One key being evaluated.
struct Eval<'a, 'k> {
    f: &'a KeyFacts<'k>,
    shape: &'a KeyShape,
    cfg: &'a RuleConfig,
    on: &'a Enabled,
}

impl Eval<'_, '_> {
    /// A listed hit whose impact is the key's memory.
    fn hit(&self, rule: RuleId, severity: Severity, measured: u64, threshold: u64) -> Hit {
        Hit {
            rule,
            severity,
            measured,
            threshold,
            extra: 0,
            impact: self.f.memory,
            savings: None,
            detail: None,
            listed: true,
        }
    }

    /// Memory the key holds, keyspace overhead included: what removing it frees.
    fn held(&self) -> u64 {
        self.f.memory.saturating_add(self.f.keyspace_overhead)
    }
}

/// Everything a key breaks, in catalogue order, passed to `emit`.
pub fn evaluate(
    f: &KeyFacts<'_>,
    cfg: &RuleConfig,
    on: &Enabled,
    separator: u8,
    now_ms: i64,
    emit: impl FnMut(Hit),
) {
    evaluate_shaped(f, &KeyShape::of(f.key, separator), cfg, on, now_ms, emit)
}

/// [`evaluate`] for a key whose [`KeyShape`] is known.
pub fn evaluate_shaped(
    f: &KeyFacts<'_>,
    shape: &KeyShape,
    cfg: &RuleConfig,
    on: &Enabled,
    now_ms: i64,
    mut emit: impl FnMut(Hit),
) {
    let e = Eval { f, shape, cfg, on };
    names(&e, &mut emit);
    values(&e, &mut emit);
    if on.on(RuleId::EncodingMiss) {
        encoding_miss(&e, &mut emit);
    }
    lifetimes(&e, now_ms, &mut emit);
    access(&e, &mut emit);
}

fn names(e: &Eval<'_, '_>, emit: &mut impl FnMut(Hit)) {
    let (f, cfg, on, shape) = (e.f, e.cfg, e.on, e.shape);
    let len = f.key.len() as u64;
    if on.on(RuleId::KeyLong) {
        let c = &cfg.key_long;
        if len > c.warn.0 {
            emit(e.hit(RuleId::KeyLong, Severity::Warn, len, c.warn.0));
        }
        // The statistics level counts every key over it, long ones included.
        if len > c.info.0 {
            emit(Hit {
                listed: false,
                ..e.hit(RuleId::KeyLong, Severity::Info, len, c.info.0)
            });
        }
    }
    if on.on(RuleId::KeyChars) && shape.has_bad_chars() {
        let bad = f.key.iter().filter(|&&b| bad_char(b)).count() as u64;
        if bad > 0 {
            emit(e.hit(RuleId::KeyChars, Severity::Warn, bad, 0));
        }
    }
    if on.on(RuleId::KeyBraces) && shape.has_braces() && bad_braces(f.key) {
        let braces = f.key.iter().filter(|&&b| b == b'{' || b == b'}').count() as u64;
        emit(e.hit(RuleId::KeyBraces, Severity::Warn, braces, 0));
    }
    if on.on(RuleId::KeyNoNamespace) && shape.first_separator.is_none() {
        emit(e.hit(RuleId::KeyNoNamespace, Severity::Info, 1, 0));
    }
}

fn values(e: &Eval<'_, '_>, emit: &mut impl FnMut(Hit)) {
    let (f, cfg, on) = (e.f, e.cfg, e.on);
    if on.on(RuleId::BigString) && f.kind == TypeKind::String {
        let c = &cfg.big_string;
        if let Some((sev, t)) = level(f.elements, c.warn.0, c.crit.0) {
            emit(e.hit(RuleId::BigString, sev, f.elements, t));
        }
    }
    if is_collection(f.kind) {
        let c = &cfg.big_collection;
        if on.on(RuleId::BigCollection) {
            if let Some((sev, t)) = level(f.elements, c.warn, c.crit) {
                emit(e.hit(RuleId::BigCollection, sev, f.elements, t));
            }
        }
        let c = &cfg.big_value_bytes;
        if on.on(RuleId::BigValueBytes) {
            if let Some((sev, t)) = level(f.payload_bytes, c.warn.0, c.crit.0) {
                emit(e.hit(RuleId::BigValueBytes, sev, f.payload_bytes, t));
            }
        }
        let t = cfg.big_member.warn.0;
        if on.on(RuleId::BigMember) && f.max_element_len > t {
            emit(e.hit(RuleId::BigMember, Severity::Warn, f.max_element_len, t));
        }
    }
    if on.on(RuleId::Compressible) && f.kind == TypeKind::String && f.lzf_stored_bytes > 0 {
        let c = &cfg.compressible;
        let (stored, len) = (f.lzf_stored_bytes, f.lzf_uncompressed_bytes);
        if len > c.min_bytes.0 && len as f64 > c.min_ratio * stored as f64 {
            emit(Hit {
                extra: stored,
                ..e.hit(RuleId::Compressible, Severity::Info, len, c.min_bytes.0)
            });
        }
    }
    let t = cfg.big_sorted_set.info;
    if on.on(RuleId::BigSortedSet) && f.kind == TypeKind::ZSet && f.elements > t {
        emit(e.hit(RuleId::BigSortedSet, Severity::Info, f.elements, t));
    }
    let t = cfg.big_list_queue.warn;
    if on.on(RuleId::BigListQueue) && f.kind == TypeKind::List && f.elements > t {
        emit(e.hit(RuleId::BigListQueue, Severity::Warn, f.elements, t));
    }
}

fn encoding_miss(e: &Eval<'_, '_>, emit: &mut impl FnMut(Hit)) {
    let f = e.f;
    // Lists past the listpack size become quicklists of listpacks: still
    // compact, so only hashes, sets and sorted sets can miss.
    if !matches!(f.kind, TypeKind::Hash | TypeKind::Set | TypeKind::ZSet) {
        return;
    }
    let Some(check) = f.limit.filter(|c| c.over()) else {
        return;
    };
    let margin = e.cfg.encoding_miss.warn_margin;
    let small_margin = check.measured as f64 <= margin * check.threshold as f64;
    // A saving is claimed only where the config fix is practical.
    let savings = small_margin
        .then(|| f.compact_memory.map(|c| f.memory.saturating_sub(c)))
        .flatten();
    let sev = if small_margin {
        Severity::Warn
    } else {
        Severity::Info
    };
    emit(Hit {
        savings,
        impact: savings.unwrap_or(f.memory),
        detail: Some(check.limit),
        ..e.hit(RuleId::EncodingMiss, sev, check.measured, check.threshold)
    });
}

fn lifetimes(e: &Eval<'_, '_>, now_ms: i64, emit: &mut impl FnMut(Hit)) {
    let (f, cfg, on) = (e.f, e.cfg, e.on);
    let Some(expiry) = f.expiry_ms else { return };
    if on.on(RuleId::BigkeyExpiry) {
        if let Some((rule, measured, threshold)) = bigness(f, cfg) {
            // Deleting a big key on expiry blocks unless it is freed lazily.
            let sev = if cfg.bigkey_expiry.lazyfree_lazy_expire == Some(true) {
                Severity::Info
            } else {
                Severity::Warn
            };
            emit(Hit {
                detail: Some(rule.name()),
                ..e.hit(RuleId::BigkeyExpiry, sev, measured, threshold)
            });
        }
    }
    if on.on(RuleId::ExpiredInSnapshot) && expiry < now_ms {
        emit(Hit {
            savings: Some(e.held()),
            ..e.hit(
                RuleId::ExpiredInSnapshot,
                Severity::Info,
                now_ms.abs_diff(expiry),
                0,
            )
        });
    }
}

fn access(e: &Eval<'_, '_>, emit: &mut impl FnMut(Hit)) {
    let (f, cfg, on) = (e.f, e.cfg, e.on);
    if on.on(RuleId::ColdKey) {
        let c = &cfg.cold_key;
        let cold = match (f.idle_seconds, f.lfu_freq) {
            (Some(idle), _) if idle > c.idle.0 => Some(("idle", idle, c.idle.0)),
            (_, Some(freq)) if freq <= c.lfu_max => Some(("lfu", u64::from(freq), u64::from(c.lfu_max))),
            _ => None,
        };
        if let Some((what, measured, threshold)) = cold {
            emit(Hit {
                detail: Some(what),
                savings: Some(e.held()),
                ..e.hit(RuleId::ColdKey, Severity::Info, measured, threshold)
            });
        }
    }
    if on.on(RuleId::HotKey) {
        if let Some(freq) = f.lfu_freq {
            let freq = u64::from(freq);
            emit(Hit {
                impact: freq,
                ..e.hit(RuleId::HotKey, Severity::Info, freq, 0)
            });
        }
    }
}

/// Which big-* threshold (warn level) a key passes, for bigkey-expiry.
fn bigness(f: &KeyFacts<'_>, cfg: &RuleConfig) -> Option<(RuleId, u64, u64)> {
    if f.kind == TypeKind::String {
        let t = cfg.big_string.warn.0;
        return (f.elements > t).then_some((RuleId::BigString, f.elements, t));
    }
    if !is_collection(f.kind) {
        return None;
    }
    let t = cfg.big_collection.warn;
    if f.elements > t {
        return Some((RuleId::BigCollection, f.elements, t));
    }
    let t = cfg.big_value_bytes.warn.0;
    (f.payload_bytes > t).then_some((RuleId::BigValueBytes, f.payload_bytes, t))
}
