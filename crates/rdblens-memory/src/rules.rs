//! The version-specific facts of a [`Profile`], in one place: struct sizes,
//! which allocations `MEMORY USAGE` rounds, which load paths presize their
//! tables. Every estimator reads these instead of comparing versions itself.
//!
//! Every rule is read from the release's own source (`objectComputeSize`
//! and `memoryCommand` in object.c, sds.c, server.h struct sizes, the load
//! paths in rdb.c); memory-model.md §1.5 names the file and function per
//! release line, and the fixtures of docs/memory-model-accuracy.md check
//! each line against its server.

use crate::alloc::usable_size;
use crate::profile::Profile;
use crate::score::ScoreFormat;
use crate::sds;
use crate::version::{Family, ServerVersion};

/// How the key and the value object are laid out and accounted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Era {
    /// Redis 2.x-6.2: `dictEntry` keyspace, ziplists, many sizes reported
    /// as requested rather than allocated.
    Legacy,
    /// Redis 7.0-8.0, Valkey 7.2 and 8.0: `dictEntry` keyspace, listpacks,
    /// allocations rounded through `zmalloc_size`.
    Dict,
    /// Redis 8.2+: key and expire embedded in the value object ("kvobj"),
    /// sizes tracked as data changes (some unrounded).
    Kvobj,
    /// Valkey 8.1+: key embedded in the robj, open-addressing hashtables.
    ValkeyObject,
}

#[derive(Clone, Debug)]
pub(crate) struct Rules {
    pub era: Era,
    pub family: Family,
    pub version: ServerVersion,
    pub q: u64,
    pub cluster: bool,

    /// Longest string stored embstr; `None` before 3.0 (no embstr).
    pub embstr_limit: Option<u64>,
    /// sds header cut-offs of Valkey 8.0+ / Redis 8.4.
    pub sds_tight: bool,
    /// 6.0+: `objectComputeSize` counts value sds by `sdsZmallocSize`
    /// (rounded); 4.0/5.0 by `sdsAllocSize`, header + requested length + 1.
    pub sds_rounded: bool,
    /// 4.0: `MEMORY USAGE` counts the command's key argument, not the
    /// stored key: an embstr (sdshdr8) up to 44 bytes.
    pub key_min_hdr8: bool,
    /// 6.0+: the key is counted by `sdsZmallocSize` (5.0: `sdsAllocSize`).
    pub key_rounded: bool,

    /// 7.0+: listpacks (else ziplists).
    pub listpack: bool,
    /// 7.0+: the compact blob is counted with `zmalloc_size` (≤6.2 counts
    /// `ziplistBlobLen` / `intsetBlobLen`).
    pub compact_rounded: bool,
    /// 3.2+: lists are quicklists.
    pub quicklist: bool,
    /// 7.2+: small lists and string sets are listpacks.
    pub list_listpack: bool,
    pub set_listpack: bool,
    /// Hash fields can carry TTLs (Redis 7.4+, Valkey 9+).
    pub hash_ttl: bool,
    /// Redis 7.4+: hash fields are `mstr`.
    pub hash_field_mstr: bool,

    /// `sizeof(dict)`: 96 up to 6.2, 56 from 7.0.
    pub dict: u64,
    /// `sizeof(quicklist)` as counted (8.4 counts the allocation).
    pub quicklist_struct: u64,
    /// `sizeof(quicklistNode)`: 32 up to 6.2, 40 from 7.0.
    pub ql_node: u64,
    /// Redis 8.0 averages quicklist nodes per element, not per node (the
    /// fixtures show 7.4.5 still per node: its float result differs).
    pub ql_per_element: bool,

    /// 5.0+: plain hashes over the entry limit get a presized table
    /// (4.0 grows it one add at a time).
    pub presize_plain_hash: bool,
    /// 5.0+: plain sorted sets get a presized dict.
    pub presize_plain_zset: bool,
    /// 7.0+: converting a listpack hash presizes the table.
    pub presize_hash_convert: bool,
    /// 7.2+: converting a listpack sorted set presizes the dict.
    pub presize_zset_convert: bool,
    /// 5.0+: the skiplist estimate counts zset, zskiplist, dict and header.
    pub zset_structs_counted: bool,
    /// `ZSKIPLIST_MAXLEVEL`: header node size.
    pub zsl_max_level: u64,
    pub score_format: ScoreFormat,

    /// `sizeof(stream)` as counted (0: not counted, 5.0 and 6.0).
    pub stream_struct: u64,
    /// 6.2+: stream listpacks counted by allocation (5.0/6.0: `lpBytes`).
    pub stream_lp_rounded: bool,
    pub stream_cg: u64,
    pub stream_consumer: u64,

    /// Extra per-key bytes `MEMORY USAGE` adds in cluster mode.
    pub cluster_extra: u64,

    /// Valkey 8.0: the key is copied into the keyspace entry
    /// (`dictEntryEmbedded`), which `MEMORY USAGE` counts instead of a key sds.
    pub vk_key_in_entry: bool,
    /// Valkey 8.0: set members sit in the bucket; only chained ones cost a
    /// 16-byte entry.
    pub vk_set_novalue: bool,
    /// Redis 7.2-8.0 and Valkey 7.2: set members sit in the bucket as in
    /// Valkey 8.0 (dict.c `no_value`, `keys_are_odd`), but `MEMORY USAGE`
    /// still counts a 24-byte entry each (`dictEntryMemUsage`): what
    /// `used_memory` holds is less.
    pub set_novalue_uncounted: bool,
    /// Valkey 8.1+: `sizeof(hashtable)`.
    pub vk_hashtable: u64,
    /// Valkey 9+: metadata in a hash's table (its volatile-field set).
    pub vk_hash_meta: u64,
    /// Valkey 9+: the object header counted is the real robj allocation,
    /// key and expire included (8.1 counts 16).
    pub vk_robj_counts_key: bool,
    /// Valkey 9+: embedded strings drop the value pointer.
    pub vk_embstr_v9: bool,
    /// Budget for robj + key + expire + value of an embedded string.
    pub vk_embed_limit: u64,
    /// Valkey 9+: skiplist nodes embed their member.
    pub vk_zsl_embedded: bool,
}

impl Rules {
    pub fn for_profile(p: &Profile) -> Rules {
        let v = p.version;
        let redis = p.family == Family::Redis;
        let at = |major, minor| v.at_least(major, minor);
        let era = match p.family {
            Family::Redis if at(8, 2) => Era::Kvobj,
            Family::Redis if at(7, 0) => Era::Dict,
            Family::Redis => Era::Legacy,
            Family::Valkey if at(8, 1) => Era::ValkeyObject,
            Family::Valkey if at(7, 0) => Era::Dict,
            // Valkey starts at 7.2; an older number means the Redis it forked from.
            Family::Valkey => Era::Legacy,
        };
        let legacy = era == Era::Legacy;
        let valkey8 = !redis && at(8, 0);
        let valkey9 = !redis && at(9, 0);
        let kvobj = era == Era::Kvobj;
        Rules {
            era,
            family: p.family,
            version: v,
            q: if p.quantum == 16 { 16 } else { 8 },
            cluster: p.cluster,
            embstr_limit: match () {
                _ if at(3, 2) => Some(44),
                _ if at(3, 0) => Some(39),
                _ => None,
            },
            sds_tight: valkey8 || kvobj,
            sds_rounded: at(6, 0),
            key_min_hdr8: !at(5, 0),
            key_rounded: at(6, 0),
            listpack: at(7, 0),
            compact_rounded: at(7, 0),
            quicklist: at(3, 2),
            list_listpack: at(7, 2),
            set_listpack: at(7, 2),
            hash_ttl: (redis && at(7, 4)) || valkey9,
            hash_field_mstr: redis && at(7, 4),
            dict: if legacy { 96 } else { 56 },
            quicklist_struct: if kvobj { usable_size(48, p.quantum) } else { 40 },
            ql_node: if legacy { 32 } else { 40 },
            ql_per_element: redis && at(8, 0),
            presize_plain_hash: at(5, 0),
            presize_plain_zset: at(5, 0),
            presize_hash_convert: at(7, 0),
            presize_zset_convert: at(7, 2),
            zset_structs_counted: at(5, 0),
            zsl_max_level: if at(5, 0) && !at(6, 0) { 64 } else { 32 },
            score_format: if at(7, 2) {
                ScoreFormat::Shortest
            } else {
                ScoreFormat::Printf17
            },
            stream_struct: match () {
                _ if kvobj => usable_size(120, p.quantum),
                _ if at(7, 0) => 80,
                _ if at(6, 2) => 40,
                _ => 0,
            },
            stream_lp_rounded: at(6, 2),
            stream_cg: if at(7, 0) { 40 } else { 32 },
            stream_consumer: if at(7, 2) { 32 } else { 24 },
            cluster_extra: match era {
                Era::Dict if !at(7, 2) => 16,
                Era::Dict if !at(7, 4) && !valkey8 => 8,
                _ => 0,
            },
            vk_key_in_entry: valkey8 && era == Era::Dict,
            vk_set_novalue: valkey8 && era == Era::Dict,
            set_novalue_uncounted: !valkey8 && at(7, 2) && era == Era::Dict,
            vk_hashtable: if valkey9 { 80 } else { 72 },
            vk_hash_meta: if valkey9 { 8 } else { 0 },
            vk_robj_counts_key: valkey9,
            vk_embstr_v9: valkey9,
            vk_embed_limit: if !redis && at(9, 1) { 128 } else { 64 },
            vk_zsl_embedded: valkey9,
        }
    }

    /// jemalloc usable size.
    pub fn j(&self, n: u64) -> u64 {
        usable_size(n, self.q)
    }

    /// What `objectComputeSize` adds for an sds made by `sdsnewlen(n)`.
    pub fn sds_alloc(&self, n: u64) -> u64 {
        let req = sds::request(n, self.sds_tight);
        if self.sds_rounded {
            self.j(req)
        } else {
            req
        }
    }

    /// Redis 8.4 `sdsAllocSize()`: a type-5 sds records no capacity, so it
    /// reports its request; the others report the usable size.
    pub fn sds_alloc_84(&self, n: u64) -> u64 {
        if (1..32).contains(&n) {
            1 + n + 1
        } else {
            self.j(sds::request(n, self.sds_tight))
        }
    }

    /// The key sds as `MEMORY USAGE` counts it in the dictEntry eras.
    pub fn key_sds(&self, n: u64) -> u64 {
        if self.key_min_hdr8 {
            let hdr = sds::header(n, false).max(3);
            hdr + n + 1
        } else if self.key_rounded {
            self.j(sds::request(n, self.sds_tight))
        } else {
            sds::request(n, false)
        }
    }

    /// A blob's size as counted: rounded from 7.0 on.
    pub fn blob(&self, bytes: u64) -> u64 {
        if self.compact_rounded {
            self.j(bytes)
        } else {
            bytes
        }
    }

    /// `E[zmalloc_size(node)]` for a skiplist node of `base + 16·level`
    /// bytes, over the level distribution of `zslRandomLevel()` (p = 1/4,
    /// capped at 32). The level is not in the RDB, so only the expectation
    /// is knowable.
    pub fn expected_zsl_node(&self, base: u64) -> f64 {
        let mut e = 0.0;
        let mut p_level = 0.75;
        for level in 1..32u64 {
            e += p_level * self.j(base + 16 * level) as f64;
            p_level *= 0.25;
        }
        // Levels 32+ (probability 4^-31) are capped at 32.
        e + (p_level / 0.75) * self.j(base + 16 * 32) as f64
    }
}
