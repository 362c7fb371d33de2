//! What one element costs the target beyond its table: the allocation the
//! target makes for a set or sorted-set member, or for a hash field and its
//! value, as `MEMORY USAGE` counts it in each era.

use crate::rules::{Era, Rules};
use crate::sds;

/// A set or sorted-set member (or a list element in pre-3.2 linked lists).
pub(crate) fn member(r: &Rules, len: u64) -> u64 {
    match r.era {
        Era::Legacy | Era::Dict => r.sds_alloc(len),
        Era::Kvobj => r.sds_alloc_84(len),
        Era::ValkeyObject => r.j(sds::request(len, true)),
    }
}

/// A hash field and its value; `ttl` if the field keeps a TTL on the target.
pub(crate) fn pair(r: &Rules, flen: u64, vlen: u64, ttl: bool) -> u64 {
    let field = if r.hash_field_mstr {
        // 7.4+: an mstr, with expire metadata in front when it has a TTL.
        let meta = if ttl { sds::MSTR_TTL_META } else { 0 };
        r.j(meta + sds::mstr(flen))
    } else {
        r.sds_alloc(flen)
    };
    match r.era {
        Era::Legacy | Era::Dict => field + r.sds_alloc(vlen),
        Era::Kvobj => field + r.sds_alloc_84(vlen),
        Era::ValkeyObject => valkey_entry(r, flen, vlen, ttl),
    }
}

/// A Valkey 8.1+ hash entry (`entryCreate`): field and value share one
/// allocation when it stays within 128 bytes, else the entry holds the field
/// (sdshdr8 at least) and a pointer to a separate value sds. A TTL adds an
/// 8-byte expire and forces sdshdr8 on the field.
fn valkey_entry(r: &Rules, flen: u64, vlen: u64, ttl: bool) -> u64 {
    let expire = if ttl { 8 } else { 0 };
    let field8 = sds::header(flen, true).max(3) + flen + 1;
    let field = if ttl { field8 } else { sds::embedded(flen, true) };
    let value = sds::embedded8(vlen);
    if field + expire + value <= 128 {
        r.j(field + expire + value)
    } else {
        r.j(expire + 8 + field8) + r.j(sds::request(vlen, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Family, Profile, ServerVersion};

    fn rules(family: Family, major: u32, minor: u32) -> Rules {
        Rules::for_profile(&Profile::new(family, ServerVersion::new(major, minor, 0), 8))
    }

    #[test]
    fn per_era_element_costs() {
        // 10-byte field, 20-byte value.
        assert_eq!(pair(&rules(Family::Redis, 5, 0), 10, 20, false), 12 + 22);
        assert_eq!(pair(&rules(Family::Redis, 7, 2), 10, 20, false), 16 + 24);
        assert_eq!(pair(&rules(Family::Redis, 7, 4), 10, 20, true), 32 + 24);
        assert_eq!(pair(&rules(Family::Redis, 8, 4), 10, 20, false), 16 + 22);
        // Valkey: field and value in one allocation (12 + 24 -> 40).
        assert_eq!(pair(&rules(Family::Valkey, 8, 1), 10, 20, false), 40);
        assert_eq!(pair(&rules(Family::Valkey, 9, 1), 10, 200, false), 24 + 224);
        assert_eq!(member(&rules(Family::Redis, 8, 4), 5), 7);
        assert_eq!(member(&rules(Family::Redis, 7, 0), 5), 8);
    }
}
