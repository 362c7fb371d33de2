//! Strings: `int` (the value lives in the robj pointer), `embstr` (robj and
//! sds in one allocation) or `raw` (robj plus a separate sds). Which one a
//! loaded string gets depends on its text and, from Redis 8.2 / Valkey 8.1
//! on, on whether robj + key + expire + value fit a size budget.

use super::{Ctx, Value};
use crate::encoding::Encoding;
use crate::rules::Era;
use crate::sds;
use crate::visitor::{Facts, StringFacts};

pub(crate) fn estimate(facts: &Facts, ctx: &Ctx<'_>) -> Value {
    of(facts.string, ctx)
}

/// What `MEMORY USAGE` counts for a string that the server does not
/// allocate for it: an `int` of 0-9999 is counted as its robj, but up to
/// Redis 8.0 and Valkey 8.0 the loader points the key at the shared object
/// for that integer instead (object.c `tryObjectEncoding`,
/// `createStringObjectFromLongLongForValue`), unless an LRU or LFU
/// maxmemory policy forbids sharing; a writer with such a policy records
/// each key's idle time or frequency (`lru_or_lfu`), which is taken as the
/// target's policy. Later releases embed the key in the value's object, so
/// nothing is shared.
pub(crate) fn shared_overcount(string: StringFacts, ctx: &Ctx<'_>, lru_or_lfu: bool) -> u64 {
    let shares = matches!(ctx.rules.era, Era::Legacy | Era::Dict) && !lru_or_lfu;
    if shares && string.small_int {
        ctx.rules.j(16)
    } else {
        0
    }
}

/// The estimate of a string value from its facts alone.
pub(crate) fn of(string: Option<StringFacts>, ctx: &Ctx<'_>) -> Value {
    let r = ctx.rules;
    let Some(s) = string else {
        return Value::new(Encoding::Raw, ctx.header as f64);
    };
    if s.int {
        // Shared integers (0..9999) and private INT objects both count the robj.
        return Value::new(Encoding::Int, ctx.header as f64);
    }
    let len = s.len;
    let ttl = if ctx.ttl { 8 } else { 0 };
    let key = sds::embedded(ctx.key_len, true);
    let embedded = match r.era {
        Era::Legacy => r
            .embstr_limit
            .filter(|&limit| len <= limit)
            // Up to 6.2 the embstr is counted as robj + len + 2, unrounded.
            .map(|_| 16 + len + 2),
        Era::Dict => r
            .embstr_limit
            .filter(|&limit| len <= limit)
            .map(|_| r.j(16 + sds::embedded8(len))),
        Era::Kvobj => {
            // kvobjCreateEmbedString: only if robj + key + expire + value fit 64 bytes.
            let fits = len <= 44 && 16 + (ctx.key_len + 3) + ttl + 4 + len <= 64;
            fits.then(|| r.j(16 + ttl + 1 + key + sds::embedded8(len)))
        }
        Era::ValkeyObject if r.vk_embstr_v9 => {
            // The value sds takes the robj's pointer slot; it keeps at least
            // 8 bytes so the value can be un-embedded in place later.
            let want = 8 + (key + 1) + ttl + sds::embedded8(len);
            (len <= 255 && want <= r.vk_embed_limit)
                .then(|| r.j(8 + ttl + 1 + key + sds::embedded8(len).max(8)))
        }
        Era::ValkeyObject => {
            let size = 16 + (key + 1) + ttl + sds::embedded8(len);
            (len <= 44 && size <= r.vk_embed_limit).then(|| r.j(size))
        }
    };
    if let Some(size) = embedded {
        return Value::new(Encoding::Embstr, size as f64);
    }
    let value = match r.era {
        Era::Legacy | Era::Dict => r.sds_alloc(len),
        Era::Kvobj => r.sds_alloc_84(len),
        Era::ValkeyObject => r.j(sds::request(len, true)),
    };
    Value::new(Encoding::Raw, (ctx.header + value) as f64)
}
