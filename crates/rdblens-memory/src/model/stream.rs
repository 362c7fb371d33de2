//! Streams: what a stream costs on the target, from the figures the
//! visitor collected (`crate::stream_facts`): the node listpacks, the rax
//! of master IDs and the consumer groups, each counted as the target's era
//! counts them.

use super::{Ctx, Value};
use crate::encoding::Encoding;
use crate::rules::Era;
use crate::version::{Family, ServerVersion};
use crate::visitor::Facts;

/// The stream's `MEMORY USAGE` on the target: its struct, the rax of
/// node IDs and the listpacks as the era counts them, and the groups.
pub(crate) fn estimate(facts: &Facts, ctx: &Ctx<'_>) -> Value {
    let r = ctx.rules;
    // Redis 5.0 had no name for the stream encoding.
    let encoding = if r.family == Family::Redis
        && r.version < ServerVersion::new(6, 0, 0)
        && r.version >= ServerVersion::new(5, 0, 0)
    {
        Encoding::Unknown
    } else {
        Encoding::Stream
    };
    let Some(s) = &facts.stream else {
        return Value::new(encoding, ctx.header as f64);
    };
    let object = match r.era {
        Era::Legacy | Era::Dict => {
            let lps = if r.stream_lp_rounded {
                s.lp_rounded
            } else {
                s.lp_raw
            };
            ctx.header + r.stream_struct + s.tree_usage + lps + s.groups
        }
        Era::Kvobj => ctx.header + r.stream_struct + s.tree_allocated + s.lp_raw + s.groups,
        Era::ValkeyObject => ctx.header + r.stream_struct + s.tree_allocated + s.lp_rounded + s.groups,
    };
    Value::new(encoding, object as f64)
}
