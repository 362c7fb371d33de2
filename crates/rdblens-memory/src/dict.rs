//! Table sizes of the hash tables a loaded value ends up with.
//!
//! Redis `dict` (all Redis, Valkey ≤ 8.0): power-of-two bucket arrays, first
//! expansion to 4, growth to `nextpow2(used+1)` when full, and incremental
//! rehashing that moves one non-empty bucket per add while both tables are
//! counted. A presized table is deterministic; a table grown or re-expanded
//! during load may still be rehashing, which depends on where the hashes
//! fall, so only its expectation is knowable (memory-model.md §3.5).
//!
//! Valkey 8.1+ `hashtable`: 64-byte buckets of 7 slots, sized to
//! `nextpow2(ceil(5n/32))`, with child buckets for overflowing chains.

use std::cell::RefCell;
use std::collections::HashMap;

/// `dictExpand(n)` on an empty dict: the smallest power of two ≥ n, at least 4.
pub(crate) fn presized(n: u64) -> u64 {
    n.max(4).checked_next_power_of_two().unwrap_or(1 << 63)
}

/// One step of a load, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// `dictExpand(n)` / `dictTryExpand(n)`.
    Expand(u64),
    /// `dictAdd` of a new key.
    Add,
}

/// Beyond this much work the occupancy distribution is replaced by its mean:
/// large tables concentrate tightly around it.
const EXACT_WORK: u64 = 300_000;

/// Distribution of the number of non-empty buckets after `m` uniform
/// inserts into `s` buckets, as (count, probability) pairs.
fn occupancy(m: u64, s: u64) -> Vec<(u64, f64)> {
    if s == 0 {
        return vec![(0, 1.0)];
    }
    let top = m.min(s);
    if m.saturating_mul(top) > EXACT_WORK {
        let sf = s as f64;
        let mean = sf * (1.0 - (1.0 - 1.0 / sf).powf(m as f64));
        return vec![(mean.round() as u64, 1.0)];
    }
    let mut d = vec![0.0f64; top as usize + 1];
    d[0] = 1.0;
    let sf = s as f64;
    for _ in 0..m {
        for b in (0..d.len()).rev() {
            let p = d[b];
            if p == 0.0 {
                continue;
            }
            let stay = p * b as f64 / sf;
            d[b] = stay;
            if b + 1 < d.len() {
                d[b + 1] += p - stay;
            }
        }
    }
    d.into_iter()
        .enumerate()
        .filter(|(_, p)| *p > 0.0)
        .map(|(b, p)| (b as u64, p))
        .collect()
}

/// Answers kept per thread: at most this many, so a rules file with huge
/// listpack limits cannot grow the memo without bound (past it, answers
/// are computed every time, as before).
const MEMO_CAP: usize = 1 << 16;

/// Which expectation a remembered answer is of (with the two counts it
/// depends on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Expectation {
    /// [`grown_slots`] of a count.
    Grown,
    /// A plain hash converted at a pair, table presized first or not.
    Converted { presized: bool },
    /// A hash with field TTLs converted at a pair.
    ConvertedWithTtls,
}

thread_local! {
    /// Expected slot counts by what they are a function of.
    static MEMO: RefCell<HashMap<(Expectation, u64, u64), f64>> = RefCell::new(HashMap::new());
}

/// `compute()`, remembered under `key` on this thread. The expectations of
/// this module depend on a few small integers only (an event plan and a
/// count), and the same ones come back key after key: a small hash
/// converted on load replays up to a few hundred events through a set of
/// rehash states, and [`occupancy`] costs m x s for tables under ~550
/// buckets. Computed per key they took 5 % of the collection-heavy
/// report's cycles (measured with perf); remembered, they cost a lookup. A
/// thread-local map needs no lock on the workers.
pub(crate) fn memoized(key: (Expectation, u64, u64), compute: impl FnOnce() -> f64) -> f64 {
    if let Some(v) = MEMO.with(|m| m.borrow().get(&key).copied()) {
        return v;
    }
    let v = compute();
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() < MEMO_CAP {
            m.insert(key, v);
        }
    });
    v
}

#[derive(Clone, Copy, Debug)]
struct State {
    s0: u64,
    s1: u64,
    /// Non-empty buckets of table 0 still to move.
    pending: u64,
    p: f64,
}

/// Expected `dictSlots()` after the events, modelling incremental rehash with
/// random bucket occupancy (a port of the prototype's `dict_expected_slots`).
pub(crate) fn expected_slots(events: impl IntoIterator<Item = Event>) -> f64 {
    let mut states = vec![State {
        s0: 0,
        s1: 0,
        pending: 0,
        p: 1.0,
    }];
    let mut used: u64 = 0;
    let mut next = Vec::new();
    for ev in events {
        next.clear();
        for st in &states {
            match ev {
                Event::Expand(n) => {
                    let target = presized(n);
                    if st.s1 != 0 || used > n || target == st.s0 {
                        next.push(*st);
                    } else if st.s0 == 0 {
                        next.push(State { s0: target, ..*st });
                    } else {
                        start_rehash(&mut next, st, target, used);
                    }
                }
                Event::Add => {
                    let mut st = *st;
                    if st.s1 != 0 {
                        st.pending = st.pending.saturating_sub(1);
                        if st.pending == 0 {
                            st = State {
                                s0: st.s1,
                                s1: 0,
                                pending: 0,
                                p: st.p,
                            };
                        }
                    }
                    if st.s0 == 0 {
                        st.s0 = 4;
                    }
                    if st.s1 == 0 && used >= st.s0 {
                        start_rehash(&mut next, &st, presized(used + 1), used);
                    } else {
                        next.push(st);
                    }
                }
            }
        }
        if ev == Event::Add {
            used += 1;
        }
        merge(&mut next);
        std::mem::swap(&mut states, &mut next);
    }
    states.iter().map(|s| s.p * (s.s0 + s.s1) as f64).sum()
}

fn start_rehash(out: &mut Vec<State>, st: &State, target: u64, used: u64) {
    for (nonempty, p) in occupancy(used, st.s0) {
        out.push(State {
            s0: st.s0,
            s1: target,
            pending: nonempty,
            p: st.p * p,
        });
    }
}

/// Folds states with equal tables and progress together.
fn merge(states: &mut Vec<State>) {
    states.sort_by_key(|s| (s.s0, s.s1, s.pending));
    let mut w = 0;
    for r in 0..states.len() {
        if w > 0 {
            let (a, b) = (states[w - 1], states[r]);
            if (a.s0, a.s1, a.pending) == (b.s0, b.s1, b.pending) {
                states[w - 1].p += b.p;
                continue;
            }
        }
        states[w] = states[r];
        w += 1;
    }
    states.truncate(w);
}

/// A table grown from empty by `n` adds (no presizing). Every rehash but the
/// last has finished by the time the next starts, so only the last one is
/// modelled: it began when the table of `u` buckets filled up, and the
/// `n - u - 1` adds since then each moved one non-empty bucket.
pub(crate) fn grown_slots(n: u64) -> f64 {
    if n <= 4 {
        return 4.0;
    }
    memoized((Expectation::Grown, n, 0), || grown_slots_uncached(n))
}

fn grown_slots_uncached(n: u64) -> f64 {
    // The largest power of two (≥ 4) below n.
    let u = presized(n) / 2;
    let u = if u >= n { u / 2 } else { u }.max(4);
    let steps = n - u - 1;
    let unfinished: f64 = occupancy(u, u)
        .into_iter()
        .filter(|(nonempty, _)| *nonempty > steps)
        .map(|(_, p)| p)
        .sum();
    (2 * u) as f64 + u as f64 * unfinished
}

/// Valkey `hashtable` top-level buckets after `hashtableExpand(n)`.
pub(crate) fn vk_buckets(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let min_buckets = (n * 5).div_ceil(32);
    min_buckets.checked_next_power_of_two().unwrap_or(1 << 63)
}

/// Expected child buckets: a bucket holds 7 entries, each child 6 more
/// (its last slot links the next child). Chain lengths are binomial.
pub(crate) fn vk_expected_child_buckets(n: u64, buckets: u64) -> f64 {
    if buckets <= 1 || n <= 7 {
        return 0.0;
    }
    let p = 1.0 / buckets as f64;
    let ratio = p / (1.0 - p);
    let mut pk = (1.0 - p).powf(n as f64);
    let mut expected = 0.0;
    for k in 0..=n {
        if k > 7 {
            expected += pk * (k - 7).div_ceil(6) as f64;
        }
        if k > 60 && pk < 1e-12 {
            break;
        }
        pk *= (n - k) as f64 / (k + 1) as f64 * ratio;
    }
    buckets as f64 * expected
}

/// `hashtableMemUsage()`: the struct plus every bucket, children included.
pub(crate) fn vk_table_bytes(n: u64, struct_size: u64) -> f64 {
    let b = vk_buckets(n);
    struct_size as f64 + 64.0 * (b as f64 + vk_expected_child_buckets(n, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn presized_tables() {
        assert_eq!(presized(1), 4);
        assert_eq!(presized(5), 8);
        assert_eq!(presized(1000), 1024);
        assert_eq!(presized(1024), 1024);
    }

    #[test]
    fn growth_matches_the_prototype() {
        // Values from the prototype's dict_expected_slots([('add',)] * n).
        for (n, want) in [
            (1, 4.0),
            (4, 4.0),
            (5, 12.0),
            (9, 24.0),
            (12, 23.841835021972656),
            (13, 22.47918701171875),
            (17, 48.0),
            (129, 384.00000000000006),
            (200, 383.5814546890834),
            (300, 768.0000000000003),
        ] {
            let generic = expected_slots((0..n).map(|_| Event::Add));
            assert!(close(generic, want), "generic n={n}: {generic} vs {want}");
            assert!(
                close(grown_slots(n), want),
                "closed form n={n}: {} vs {want}",
                grown_slots(n)
            );
        }
    }

    #[test]
    fn remembered_answers_are_the_computed_ones() {
        // Each n twice: the second answer comes from the memo.
        for n in (5..700).chain([1 << 20]) {
            let first = grown_slots(n);
            assert_eq!(first.to_bits(), grown_slots_uncached(n).to_bits(), "n={n}");
            assert_eq!(grown_slots(n).to_bits(), first.to_bits(), "n={n}");
        }
        // Keys differ by their kind: one expectation does not answer for another.
        let (a, b) = (
            Expectation::ConvertedWithTtls,
            Expectation::Converted { presized: true },
        );
        assert_eq!(memoized((a, u64::MAX, 7), || 1.0), 1.0);
        assert_eq!(memoized((b, u64::MAX, 7), || 2.0), 2.0);
        assert_eq!(memoized((a, u64::MAX, 7), || 3.0), 1.0);
    }

    #[test]
    fn the_memo_stops_growing_at_its_cap() {
        // On a thread of its own: a fresh memo.
        std::thread::spawn(|| {
            let kind = Expectation::Converted { presized: false };
            for i in 0..MEMO_CAP as u64 + 10 {
                memoized((kind, i, u64::MAX), || i as f64);
            }
            assert_eq!(MEMO.with(|m| m.borrow().len()), MEMO_CAP);
            // Past the cap an answer is computed, not remembered.
            assert_eq!(memoized((kind, u64::MAX, u64::MAX), || 5.0), 5.0);
            assert_eq!(memoized((kind, u64::MAX, u64::MAX), || 6.0), 6.0);
        })
        .join()
        .unwrap(); // ok: unit test
    }

    #[test]
    fn conversion_path_matches_the_prototype() {
        let events = [Event::Expand(2)]
            .into_iter()
            .chain((0..3).map(|_| Event::Add))
            .chain([Event::Expand(10)])
            .chain((0..10).map(|_| Event::Add));
        assert!(close(expected_slots(events), 16.0));
    }

    #[test]
    fn valkey_buckets() {
        assert_eq!(vk_buckets(6), 1);
        assert_eq!(vk_buckets(7), 2);
        assert_eq!(vk_buckets(1000), 256);
        assert!((vk_expected_child_buckets(1000, 256) - 11.639978296332007).abs() < 1e-9);
        assert_eq!(vk_expected_child_buckets(3, 1), 0.0);
    }
}
