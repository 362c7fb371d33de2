//! The main pass ends with the stats of the build the whole file shows,
//! whichever builds its batches were estimated for on the way.

use super::*;
use crate::pipeline::{prepare, AllocatorPass};
use rdblens_memory::allocator::{Basis, Choice};

fn fixture() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/rdb/valkey-7.2.7/all-types.rdb"
    );
    std::fs::read(path).expect("fixture") // ok: unit test
}

fn opts(threads: usize) -> Options {
    Options {
        threads,
        now_ms: Some(1_700_000_000_000),
        // The evidence summed in the main pass, as on a big dump, in
        // batches of one key: 222 batches to lean and settle between.
        sample_evidence_from: 0,
        batch_entries: 1,
        known_values_from: 64,
        ..Options::default()
    }
}

fn choice(quantum: u64) -> Choice {
    Choice {
        quantum,
        basis: Basis::UsedMem,
        reason: "test".into(),
        predicted: None,
    }
}

/// The stats of a pass estimated for `quantum` from the first key.
fn decided(data: &[u8], quantum: u64) -> KeyStats {
    let p = prepare(data, &opts(1), None, AllocatorPass::Decided(choice(quantum))).expect("prepared"); // ok: unit test
    let mut pass = main_pass(&p, &opts(1), None);
    assert!(p.deferred.is_none() && pass.batches.iter().all(BTreeSet::is_empty));
    let mut stats = pass.take(quantum, &p);
    stats.finish();
    stats
}

/// A pass that leans to a build from some batch on and settles on a build
/// after another (either possibly never, past the last batch), deferring
/// some batches or none, resolved for the build shown, holds exactly the
/// stats of a pass estimated for that build from the first key, for any
/// thread count, estimating again only the batches folded for the other
/// build and those deferred (with the values decoded for their evidence).
#[test]
fn every_way_through_the_pass_ends_with_the_stats_of_the_build_shown() {
    let data = fixture();
    let expected = [(8, decided(&data, 8)), (16, decided(&data, 16))];
    assert!(
        expected[0].1 != expected[1].1,
        "the builds must differ on this dump"
    );
    let record_len: std::collections::HashMap<u64, u64> = rdblens_parser::Rdb::new(&data)
        .expect("rdb") // ok: unit test
        .entries()
        .flatten()
        .map(|e| (e.offset, e.record_len))
        .collect();
    let (mut resolved, mut caught_up) = (0, 0);
    for threads in [1, 2] {
        let o = opts(threads);
        for lean in [
            None,
            Some((0, 8)),
            Some((0, 16)),
            Some((60, 8)),
            Some((60, 16)),
            Some((10_000, 16)),
        ] {
            for (settle, defer) in [None, Some((1, 8)), Some((1, 16)), Some((100, 8)), Some((100, 16))]
                .into_iter()
                .flat_map(|s| [(s, 0..0), (s, 0..40), (s, 30..150), (s, 0..222)])
            {
                for (quantum, stats) in &expected {
                    let p = prepare(&data, &o, None, AllocatorPass::InMainPass).expect("prepared"); // ok: unit test
                    let early = Early {
                        forced: Some(Forced {
                            lean,
                            settle,
                            defer: defer.clone(),
                        }),
                        ..Early::for_pass(&p, &o)
                    };
                    let walker = SharedWalker::over(&p.rdb, &o, None);
                    let mut pass = run(&p, &o, None, early, Source::Walk(walker), Vec::new());
                    let folded: usize = pass.batches.iter().map(BTreeSet::len).sum();
                    assert_eq!(pass.deferred, defer.clone().collect(), "deferred");
                    assert_eq!(
                        folded + pass.deferred.len(),
                        222,
                        "every batch folded once or deferred"
                    );
                    // Values of 64 bytes or more are kept (`opts`), and only those.
                    if defer.is_empty() || defer == (0..222) {
                        assert_eq!(pass.known.len() > 0, !defer.is_empty(), "values kept");
                    }
                    assert!(
                        pass.known.offsets().all(|o| record_len[&o] >= 64),
                        "small values kept"
                    );
                    let known = std::mem::take(&mut pass.known);
                    let spans = std::mem::take(&mut pass.spans);
                    assert_eq!(spans.len(), 222, "every batch's span kept");
                    let case = format!(
                        "{threads} threads, lean {lean:?}, settle {settle:?}, defer {defer:?}, shown {quantum}"
                    );
                    let mut got = match resolve(pass, *quantum, &p) {
                        Resolved::Stats(done) => done.0,
                        Resolved::Lacking(part, lacking) => {
                            caught_up += 1;
                            // Every other catch-up after a two-thread pass
                            // has one worker for the two workers' stats.
                            let catch_o = opts(if caught_up % 2 == 0 { 1 } else { threads });
                            let decided_p =
                                prepare(&data, &catch_o, None, AllocatorPass::Decided(choice(*quantum)))
                                    .expect("prepared"); // ok: unit test
                            let only = where_they_lie(lacking, &spans);
                            catch_up(&decided_p, &catch_o, None, only, &known, part.0)
                        }
                    };
                    got.finish();
                    assert!(got == *stats, "{case}");
                    resolved += 1;
                }
            }
        }
    }
    assert_eq!(resolved, 480);
    // Both ways were taken: some passes held everything, some caught up.
    assert!(caught_up > 80 && caught_up < 480, "{caught_up} caught up");
}

/// Two workers: one settles the build while the other, past its check of
/// `settled`, waits for the evidence's lock; the batch the other then adds
/// changes nothing, and the batches after the settlement are folded for
/// the settled build, not deferred.
#[test]
fn a_batch_added_while_another_worker_settles_keeps_the_settled_build() {
    let data = fixture();
    let o = opts(2);
    let p = prepare(&data, &o, None, AllocatorPass::InMainPass).expect("prepared"); // ok: unit test
    let d = p.deferred.as_ref().expect("evidence summed in the main pass"); // ok: unit test
    let settled_on = other_build(p.profile.quantum);
    let early = Early {
        evidence: Some(Mutex::new(EarlyEvidence::forced(
            d.used_mem,
            &p.profile,
            data.len() as u64,
            2,
            settled_on,
        ))),
        ..Early::for_pass(&p, &o)
    };
    let sums = Sums::default();
    early.add(0, 1, &sums);
    assert!(early.defers(1), "one batch settles nothing");
    let lock = early.evidence.as_ref().expect("evidence"); // ok: unit test
    let mut evidence = lock.lock().expect("lock"); // ok: unit test

    // Batch 1 settles the build; batch 2's worker got the lock next.
    early.fold_evidence(&mut evidence, 1, 1, &sums);
    assert_eq!(early.current(), settled_on);
    early.fold_evidence(&mut evidence, 2, 1, &sums);
    drop(evidence);
    assert!(!early.defers(3), "a batch after the settlement is deferred");
    assert_eq!(early.current(), settled_on);
}
