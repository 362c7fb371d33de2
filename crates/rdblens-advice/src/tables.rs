//! The keyspace's bucket arrays (one slot of 8 bytes per bucket, for the
//! keys and for the keys with a TTL, per database): what a plan's deleted
//! and created keys do to them. A split of one key leaves them as they
//! are; folding a namespace that is most of its database lets the server
//! shrink them, which frees memory no key's `MEMORY USAGE` holds.
//!
//! The server resizes a table (Redis 7.0-7.2, Valkey up to 8.0: in
//! `serverCron`, once fewer than 10 % of its buckets are used; Redis 7.4+:
//! on delete, once at most one in 8 is) to the power of two that holds its
//! keys, and doubles it when the keys reach its size. Redis 8.2+ and
//! Valkey 8.1+ count the arrays in the per-key shares already
//! ([`keyspace_tables`] is 0 there): nothing to add.

use rdblens_memory::allocator::keyspace_tables;
use rdblens_memory::{Family, Profile, ServerVersion};

/// Keys and keys with a TTL in one database.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Keys {
    pub keys: u64,
    pub expiring: u64,
}

/// Slots of a table presized for `n` keys, as a loaded dump has them.
fn presized(target: &Profile, n: u64) -> u64 {
    keyspace_tables(target, n, 0).0 / 8
}

/// Slots of a table of `slots` once it holds `used` keys.
fn settle(target: &Profile, slots: u64, used: u64) -> u64 {
    if slots == 0 {
        return 0;
    }
    let shrinks = if target.family == Family::Redis && target.version >= ServerVersion::new(7, 4, 0) {
        used * 8 <= slots
    } else {
        used * 100 / slots < 10
    };
    if used >= slots {
        presized(target, used + 1)
    } else if slots > 4 && shrinks {
        presized(target, used.max(4))
    } else {
        slots
    }
}

/// Bytes the bucket arrays of a database holding `now` give back (negative:
/// take) once `added` keys are created (first: the plans write the new
/// keys before deleting the old) and `removed` keys deleted.
pub(crate) fn freed(target: &Profile, now: Keys, removed: Keys, added: Keys) -> i64 {
    let one = |now: u64, removed: u64, added: u64| {
        let loaded = presized(target, now);
        let grown = settle(target, loaded, now + added);
        let last = settle(target, grown, (now + added).saturating_sub(removed));
        loaded as i64 - last as i64
    };
    8 * (one(now.keys, removed.keys, added.keys) + one(now.expiring, removed.expiring, added.expiring))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redis(minor: u32) -> Profile {
        Profile::new(Family::Redis, ServerVersion::new(7, minor, 0), 16)
    }

    #[test]
    fn tables_shrink_only_when_nearly_empty() {
        let keys = |keys, expiring| Keys { keys, expiring };
        // 10,000 keys (16,384 slots) folded into 100: 128 slots remain.
        let all = freed(&redis(0), keys(10_000, 0), keys(10_000, 0), keys(100, 0));
        assert_eq!(all, 8 * (16_384 - 128));
        // The same namespace in a database of 100,000 keys (131,072
        // slots): 90,100 keys stay, nothing shrinks.
        assert_eq!(
            freed(&redis(0), keys(100_000, 0), keys(10_000, 0), keys(100, 0)),
            0
        );
        // 1,000 TTL keys deleted of 1,500: the expires table of 2,048
        // slots holds 500, 24 % full: kept. 10,000 of 10,200 deleted
        // leaves 200 in 16,384 slots (1 %): 256 slots.
        assert_eq!(
            freed(&redis(0), keys(2_000, 1_500), keys(1_000, 1_000), keys(0, 0)),
            0
        );
        let e = freed(&redis(0), keys(20_000, 10_200), keys(10_000, 10_000), keys(0, 0));
        // The keys table (32,768 slots, 10,000 keys: 30 %) stays.
        assert_eq!(e, 8 * (16_384 - 256));
        // One key split into 17 that fill the table: it doubles.
        assert_eq!(
            freed(&redis(2), keys(1_024, 0), keys(1, 0), keys(17, 0)),
            -8 * 1_024
        );
        // Redis 7.4+ shrinks at one in 8: 1,000 of 8,192 slots used is
        // 12.2 %, kept on 7.2, shrunk to 1,024 on 7.4.
        assert_eq!(freed(&redis(2), keys(8_000, 0), keys(7_000, 0), keys(0, 0)), 0);
        assert_eq!(
            freed(&redis(4), keys(8_000, 0), keys(7_000, 0), keys(0, 0)),
            8 * (8_192 - 1_024)
        );
    }
}
