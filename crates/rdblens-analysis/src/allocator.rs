//! The allocator build the estimates assume: `--jemalloc-quantum` when
//! given, else what the dump's `used-mem` says (rdblens_memory::allocator).
//!
//! The evidence needs a prediction of `used_memory` under both builds for
//! the whole file, so this is a pass of its own before the main one. It
//! decodes each value once for both builds (`Estimator::estimate_pair`),
//! every value of 1 KiB or more (few keys, most of the bytes) and a
//! systematic sample of the small ones past the first 131,072 (one in
//! eight, weighted by eight). Values under 1 KiB vary little, so the sample
//! of them (≥ 16,000 values once sampling starts) costs far less error than
//! the margins of the decision allow; on the 3.2 M-key prod-1g corpus the
//! sampled quantum-16 prediction came within 0.14 % of `used-mem`.

use std::collections::BTreeMap;

use rayon::iter::{ParallelBridge, ParallelIterator};
use rdblens_memory::allocator::{keyspace_tables, Choice, Evidence, BASELINE};
use rdblens_memory::{Estimate, Estimator, Profile};
use rdblens_parser::{Entry, Rdb, Record, Scratch};

/// Values at least this big (serialized) are always estimated.
const HEAVY_BYTES: u64 = 1024;
/// Small values estimated in full before sampling starts.
const FULL_PREFIX: u64 = 131_072;
/// One small value in this many is estimated past the prefix.
const SAMPLE_EVERY: u64 = 8;
const BATCH: usize = 4096;

/// Picks the quantum for `profile` (the file's writer, or the `--target`).
pub(crate) fn choose(
    rdb: &Rdb<'_>,
    aux: &BTreeMap<String, String>,
    profile: &Profile,
    writer: &Profile,
    flag: Option<u64>,
    pool: &rayon::ThreadPool,
) -> Choice {
    if let Some(q) = flag {
        return Choice::flag(q);
    }
    let line = |p: &Profile| (p.family, p.version.major, p.version.minor);
    if line(profile) != line(writer) {
        return Choice::unclear(format!(
            "used-mem describes the writer ({}), not the target",
            writer.name()
        ));
    }
    let Some(used_mem) = aux.get("used-mem").and_then(|u| u.parse::<u64>().ok()) else {
        return Choice::unclear("the dump records no used-mem");
    };
    evidence(rdb, profile, used_mem, pool).decide()
}

/// Sums under both builds, and the per-database key counts.
#[derive(Default)]
struct Sums {
    q8: f64,
    q16: f64,
    /// (keys, keys with a TTL) per database.
    dbs: BTreeMap<u64, (u64, u64)>,
}

impl Sums {
    fn merge(mut self, other: Sums) -> Sums {
        self.q8 += other.q8;
        self.q16 += other.q16;
        for (db, (k, e)) in other.dbs {
            let slot = self.dbs.entry(db).or_default();
            slot.0 += k;
            slot.1 += e;
        }
        self
    }
}

/// What the key adds to `used_memory` besides the keyspace bucket arrays.
fn used_by(e: &Estimate) -> f64 {
    (e.memory.unwrap_or(0) + e.keyspace_overhead - e.bucket_share + e.allocator_slack) as f64
}

fn evidence(rdb: &Rdb<'_>, profile: &Profile, used_mem: u64, pool: &rayon::ThreadPool) -> Evidence {
    let mut q8 = profile.clone();
    q8.quantum = 8;
    let mut q16 = profile.clone();
    q16.quantum = 16;
    let (e8, e16) = (Estimator::new(&q8), Estimator::new(&q16));

    // Batches of (ordinal of the first entry, entries); damage ends the walk
    // (the main pass reports it).
    let mut records = rdb.records();
    let mut ordinal = 0u64;
    let batches = std::iter::from_fn(move || {
        let mut batch: Vec<Entry<'_>> = Vec::with_capacity(BATCH);
        let first = ordinal;
        for record in records.by_ref() {
            match record {
                Ok(Record::Entry(e)) => batch.push(e),
                Ok(Record::Eof(_)) | Err(_) => break,
                Ok(_) => continue,
            }
            if batch.len() == BATCH {
                break;
            }
        }
        ordinal += batch.len() as u64;
        (!batch.is_empty()).then_some((first, batch))
    });
    let sums = pool.install(|| {
        batches
            .par_bridge()
            .map(|(first, batch)| {
                let mut scratch = Scratch::new();
                let mut sums = Sums::default();
                for (i, entry) in batch.iter().enumerate() {
                    let n = first + i as u64;
                    let slot = sums.dbs.entry(entry.db).or_default();
                    slot.0 += 1;
                    slot.1 += u64::from(entry.expiry.is_some());
                    let heavy = entry.record_len >= HEAVY_BYTES
                        || entry
                            .string()
                            .ok()
                            .flatten()
                            .is_some_and(|s| s.len() as u64 >= HEAVY_BYTES);
                    let weight = if heavy || n < FULL_PREFIX {
                        1.0
                    } else if n.is_multiple_of(SAMPLE_EVERY) {
                        SAMPLE_EVERY as f64
                    } else {
                        continue;
                    };
                    if let Ok((a, b)) = e8.estimate_pair(&e16, entry, &mut scratch) {
                        sums.q8 += weight * used_by(&a);
                        sums.q16 += weight * used_by(&b);
                    }
                }
                sums
            })
            .reduce(Sums::default, Sums::merge)
    });
    let (mut tables, mut slack) = (0u64, 0u64);
    for (keys, expires) in sums.dbs.values() {
        let (t, s) = keyspace_tables(profile, *keys, *expires);
        tables += t;
        slack += s;
    }
    let fixed = (tables + BASELINE) as f64;
    Evidence {
        used_mem,
        predicted_q8: sums.q8 + fixed,
        predicted_q16: sums.q16 + fixed,
        rehash_slack: slack as f64,
    }
}
