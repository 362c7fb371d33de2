//! What a key costs the keyspace beyond `MEMORY USAGE` (memory-model.md §6):
//! its share of the bucket arrays, allocator rounding `MEMORY USAGE` does
//! not count, and the entry in the expires table.
//!
//! A bucket's share depends on the database's fill (0.5-1 keys per bucket
//! after a load), which one key cannot see; the estimate uses a typical
//! 0.75. Database totals can be computed exactly from the key counts
//! instead (`8 · nextpow2(keys)`).

use super::Ctx;
use crate::rules::Era;
use crate::sds;

/// Bucket pointer share at a load factor of 0.75: 8 / 0.75, rounded.
const DICT_BUCKET_SHARE: u64 = 11;

/// Redis 8.4's no-value keyspace dicts chain colliding keys through 16-byte
/// entries: 16 · (1 − (1 − e^−α)/α) ≈ 5 bytes per key at α = 0.75.
const KVOBJ_COLLISION_SHARE: u64 = 5;

/// Valkey 8.1+ hashtables: 64-byte buckets for 5/32 of a bucket per key
/// (10 bytes), times the average power-of-two slack (~1.4).
const VALKEY_BUCKET_SHARE: u64 = 14;

pub(crate) fn overhead(ctx: &Ctx<'_>) -> u64 {
    let r = ctx.rules;
    let (per_key, per_expire) = match r.era {
        Era::Legacy | Era::Dict => {
            // MEMORY USAGE counts the entry as sizeof (24) and, before 6.2,
            // the key sds as requested; the allocations are rounded. Cluster
            // mode 7.0/7.2 entries really carry 16 bytes of slot links.
            let cluster = if r.cluster && r.cluster_extra > 0 { 16 } else { 0 };
            let counted_cluster = if r.cluster { r.cluster_extra } else { 0 };
            let entry = (r.j(24 + cluster)).saturating_sub(24 + counted_cluster);
            let key = if r.vk_key_in_entry {
                0
            } else {
                let req = sds::request(ctx.key_len, r.sds_tight);
                r.j(req).saturating_sub(r.key_sds(ctx.key_len))
            };
            // The expires entry shares the key and keeps the time inline.
            (DICT_BUCKET_SHARE + entry + key, r.j(24) + DICT_BUCKET_SHARE)
        }
        Era::Kvobj => {
            let share = DICT_BUCKET_SHARE + KVOBJ_COLLISION_SHARE;
            (share, share)
        }
        Era::ValkeyObject => (VALKEY_BUCKET_SHARE, VALKEY_BUCKET_SHARE),
    };
    per_key + if ctx.ttl { per_expire } else { 0 }
}

/// The part of [`overhead`] that is the key's share of the bucket arrays
/// that `allocator::keyspace_tables` counts exactly per database: none
/// where it counts none (Redis 8.2+, Valkey 8.1+, whose tables the
/// per-key shares stand for).
pub(crate) fn bucket_share(ctx: &Ctx<'_>) -> u64 {
    let share = match ctx.rules.era {
        Era::Legacy | Era::Dict => DICT_BUCKET_SHARE,
        Era::Kvobj | Era::ValkeyObject => 0,
    };
    share * if ctx.ttl { 2 } else { 1 }
}
