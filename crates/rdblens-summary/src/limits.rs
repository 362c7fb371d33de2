//! Which compact-encoding limit a key is measured against, and by how much
//! it passes or nears it.

use rdblens_memory::{Encoding, Limit, Profile};
use rdblens_parser::{TypeKind, ValueStats};
use serde::{Deserialize, Serialize};

/// A key measured against one compact-encoding limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitCheck {
    /// The redis.conf name of the limit, e.g. `hash-max-listpack-entries`.
    pub limit: &'static str,
    /// The limit's value on the target server: entries, or bytes for the `-value` limits and `list-max-listpack-size`.
    pub threshold: u64,
    /// The key's figure against it: its elements, its longest element in bytes, or (lists) the bytes of its compact nodes.
    pub measured: u64,
}

impl LimitCheck {
    /// Whether `measured` passes `threshold` (the key cannot be in the compact encoding).
    pub fn over(&self) -> bool {
        self.measured > self.threshold
    }

    /// Within 10% under the limit.
    pub fn near(&self) -> bool {
        !self.over()
            && self.measured.saturating_mul(10) >= self.threshold.saturating_mul(9)
            && self.threshold > 0
    }
}

fn pick(checks: &[LimitCheck]) -> Option<LimitCheck> {
    // The first limit passed explains the encoding; otherwise the nearest one.
    checks.iter().find(|c| c.over()).copied().or_else(|| {
        checks
            .iter()
            .filter(|c| c.threshold > 0)
            .max_by(|a, b| (a.measured * b.threshold).cmp(&(b.measured * a.threshold)))
            .copied()
    })
}

/// Set listpacks and single-listpack lists came with Redis 7.2 (Valkey forked from 7.2).
fn has_compact_small_sets_and_lists(profile: &Profile) -> bool {
    let v = &profile.version;
    profile.family == rdblens_memory::Family::Valkey || (v.major, v.minor) >= (7, 2)
}

/// Measures a collection against the limits of the target profile.
pub fn check_limits(
    kind: TypeKind,
    encoding: Encoding,
    stats: &ValueStats,
    all_int: bool,
    profile: &Profile,
) -> Option<LimitCheck> {
    let l = &profile.limits;
    let entries = |limit: &'static str, threshold: u64| LimitCheck {
        limit,
        threshold,
        measured: stats.elements,
    };
    let value = |limit: &'static str, threshold: u64| LimitCheck {
        limit,
        threshold,
        measured: stats.max_element_len,
    };
    match kind {
        TypeKind::Hash => pick(&[
            entries(Limit::HashMaxListpackEntries.name(), l.hash_max_listpack_entries),
            value(Limit::HashMaxListpackValue.name(), l.hash_max_listpack_value),
        ]),
        TypeKind::ZSet => pick(&[
            entries(Limit::ZsetMaxListpackEntries.name(), l.zset_max_listpack_entries),
            value(Limit::ZsetMaxListpackValue.name(), l.zset_max_listpack_value),
        ]),
        TypeKind::Set
            if all_int && (encoding == Encoding::Intset || stats.elements > l.set_max_intset_entries) =>
        {
            pick(&[entries(
                Limit::SetMaxIntsetEntries.name(),
                l.set_max_intset_entries,
            )])
        }
        TypeKind::Set if has_compact_small_sets_and_lists(profile) => pick(&[
            entries(Limit::SetMaxListpackEntries.name(), l.set_max_listpack_entries),
            value(Limit::SetMaxListpackValue.name(), l.set_max_listpack_value),
        ]),
        TypeKind::List if has_compact_small_sets_and_lists(profile) && l.list_max_listpack_size < 0 => {
            let exp = (-l.list_max_listpack_size - 1).clamp(0, 4) as u32;
            Some(LimitCheck {
                limit: Limit::ListMaxListpackSize.name(),
                threshold: 4096u64 << exp,
                measured: stats.compact_bytes,
            })
        }
        _ => None,
    }
}
