//! What every walk of a file shares: the set-up (header, aux fields, target
//! profile, allocator build, worker pool), the per-batch decoding into key
//! facts, and the file's record. The report's main pass
//! ([`crate::mainpass`]) and the ordered walk of `keys` ([`crate::ordered`])
//! are built on it.

use std::collections::BTreeMap;

use rdblens_memory::allocator::Choice;
use rdblens_memory::{Accuracy, Estimator, Profile};
use rdblens_parser::{Entry, Error, Rdb, RdbString, Record, Scratch};

use crate::allocator::{Deferred, Known, KnownValue, Sums};
use crate::error::AnalysisError;
use crate::measure::{facts_of, key_facts, key_facts_both, key_facts_pair, Measure};
use crate::release::Releaser;
pub(crate) use crate::walker::WalkOutcome;
use rdblens_summary::KeyFacts;
use rdblens_summary::KeyFilter;
use rdblens_summary::Options;
use rdblens_summary::Settings;
use rdblens_summary::{AccuracyInfo, AllocatorInfo, Checksum, Damage, FileInfo};

fn text(s: &RdbString<'_>) -> String {
    s.to_vec()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// Aux fields come first in every file: read them before the keys.
fn read_aux(rdb: &Rdb<'_>) -> BTreeMap<String, String> {
    let mut aux = BTreeMap::new();
    for record in rdb.records() {
        match record {
            Ok(Record::Aux { key, value }) => {
                aux.insert(text(&key), text(&value));
            }
            Ok(Record::Entry(_)) | Ok(Record::Eof(_)) | Err(_) => break,
            Ok(_) => {}
        }
    }
    aux
}

/// The profile: given, or the server that wrote the file.
pub fn profile_for(rdb: &Rdb<'_>, aux: &BTreeMap<String, String>, opts: &Options) -> Profile {
    let profile = opts.profile.clone().unwrap_or_else(|| {
        Profile::from_aux(
            aux.get("redis-ver").map(String::as_str),
            aux.get("valkey-ver").map(String::as_str),
            rdb.version(),
            rdb.dialect(),
        )
    });
    profile.configured(opts.quantum, &opts.config)
}

/// The entries of a batch (it holds nothing else).
pub(crate) fn entries<'b, 'a>(batch: &'b [Record<'a>]) -> impl Iterator<Item = &'b Entry<'a>> {
    batch.iter().filter_map(|r| match r {
        Record::Entry(e) => Some(e),
        _ => None,
    })
}

/// Where the first record of a batch starts.
pub(crate) fn batch_start(batch: &[Record<'_>]) -> u64 {
    entries(batch).next().map_or(0, |e| e.offset)
}

/// The bytes of the file a batch spans, from its first key to the end of
/// its last value.
pub(crate) fn batch_span(batch: &[Record<'_>]) -> u64 {
    let end = entries(batch).last().map_or(0, |e| e.offset + e.record_len);
    end.saturating_sub(batch_start(batch))
}

fn damage(e: &Error) -> Damage {
    Damage {
        offset: e.offset(),
        message: e.to_string(),
    }
}

/// Decodes a batch: the facts of every key the filter admits, or the damage
/// that stopped its decoding, in batch order, estimated for `profile`.
/// With `evidence`, also sums the allocator evidence over the batch's keys
/// (every key: it is deferred only when no key filter is set).
/// `header_counts`: count blobs the target keeps as stored by their header
/// (`Estimator::counting_by_header`), when no accumulator reads lengths.
#[allow(clippy::too_many_arguments)] // the hot loop's state, passed once per batch
pub(crate) fn batch_facts(
    header_counts: bool,
    scratch: &mut Scratch,
    key_buf: &mut Vec<u8>,
    profile: &Profile,
    filter: &KeyFilter,
    now_ms: i64,
    batch: &[Record<'_>],
    evidence: Option<(&Deferred, &mut Sums)>,
    known: Option<&Known>,
    mut each: impl FnMut(Result<&KeyFacts<'_>, Damage>),
) {
    let estimator = Estimator::new(profile).counting_by_header(header_counts);
    let q16 = profile.quantum == 16;
    let mut evidence = evidence.map(|(d, sums)| {
        let other = Estimator::new(if q16 { &d.q8 } else { &d.q16 }).counting_by_header(header_counts);
        (d, sums, other)
    });
    for entry in entries(batch) {
        if let Some((_, sums, _)) = &mut evidence {
            sums.count(entry);
        }
        let key: &[u8] = match entry.key {
            RdbString::Raw(k) => k,
            other => match other.bytes_in(key_buf, entry.offset) {
                Ok(k) => k,
                Err(e) => {
                    each(Err(damage(&e)));
                    continue;
                }
            },
        };
        if !filter.admits_key(key) {
            continue;
        }
        let taken = evidence
            .as_ref()
            .and_then(|(d, _, _)| d.sampler.takes(entry, key));
        let facts = match (taken, &mut evidence) {
            (Some(p), Some((d, sums, other))) => match d.known.get(entry) {
                // Decoded by the settling pass: the same facts and sums.
                Some(k) => {
                    sums.add(p, &k.q8, &k.q16);
                    let mine = if q16 { k.q16.clone() } else { k.q8.clone() };
                    Ok(facts_of(entry, key, profile, mine, k.measure))
                }
                None => {
                    key_facts_pair(entry, key, &estimator, other, scratch).map(|(facts, mine, theirs)| {
                        let (a8, a16) = if q16 { (theirs, mine) } else { (mine, theirs) };
                        sums.add(p, &a8, &a16);
                        facts
                    })
                }
            },
            // Decoded by the main pass for the evidence when it deferred
            // the batch: the same facts.
            _ => match known.and_then(|k| k.get(entry)) {
                Some(k) => Ok(facts_of(
                    entry,
                    key,
                    profile,
                    if q16 { k.q16.clone() } else { k.q8.clone() },
                    k.measure,
                )),
                None => key_facts(entry, key, &estimator, scratch),
            },
        };
        match facts {
            Ok(facts) if !filter.admits_facts(&facts, now_ms) => {}
            Ok(facts) => each(Ok(&facts)),
            Err(e) => each(Err(damage(&e))),
        }
    }
}

/// The allocator evidence of a batch whose keys are not folded yet (see
/// `crate::mainpass`): every key counted, the sampled ones estimated for
/// both builds, and those of `keep_from` bytes or more kept in `known`, so
/// that folding the batch later decodes them no more.
pub(crate) fn batch_evidence(
    scratch: &mut Scratch,
    key_buf: &mut Vec<u8>,
    d: &Deferred,
    batch: &[Record<'_>],
    sums: &mut Sums,
    known: &std::sync::Mutex<Known>,
) {
    let (e8, e16) = (Estimator::new(&d.q8), Estimator::new(&d.q16));
    for entry in entries(batch) {
        sums.count(entry);
        // A key that cannot be read is damage the fold reports.
        let Ok(key) = entry.key.bytes_in(key_buf, entry.offset) else {
            continue;
        };
        let Some(p) = d.sampler.takes(entry, key) else {
            continue;
        };
        let mut measure = Measure::for_entry(entry);
        if let Ok((q8, q16)) = e8.estimate_pair_with(&e16, entry, scratch, &mut measure) {
            sums.add(p, &q8, &q16);
            // A poisoned lock: another worker panicked, which ends the pass.
            if let Ok(mut k) = known.lock() {
                k.keep(entry, KnownValue { q8, q16, measure });
            }
        }
    }
}

/// What a stream's fold sums every key's evidence with: the deferred
/// choice, an estimator per build, and which of the keys the filters
/// leave out the exact sums (the unsettled fold's, `Sums::add_exact`) take.
struct StreamEvidence<'e, 'p> {
    d: &'e Deferred,
    e8: &'e Estimator<'p>,
    e16: &'e Estimator<'p>,
    left_out: LeftOut,
}

/// Which keys the filters leave out a stream's exact sums take.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LeftOut {
    /// None: the build is settled, and the exact sums are not kept.
    Skipped,
    /// The sampled ones, each weighed by its odds.
    Sampled,
    /// Every one, counted once: the stream may yet prove smaller than a
    /// sampled dump, whose evidence is every key's.
    Every,
}

/// A key the filters admit: its name and its odds in the evidence's
/// sample (`None`: not sampled).
type AdmittedKey<'k> = (&'k [u8], Option<f64>);

/// The part the two stream folds share of each key: counted in the
/// evidence, its name read (the damage that stopped reading it, for a key
/// the entry filter admits), and its sampling odds. `None` for a key the
/// filters leave out, whose sampled evidence is summed all the same.
#[inline]
fn stream_key<'k>(
    entry: &Entry<'k>,
    key_buf: &'k mut Vec<u8>,
    filter: &KeyFilter,
    ev: &StreamEvidence<'_, '_>,
    scratch: &mut Scratch,
    sums: &mut Sums,
) -> Option<Result<AdmittedKey<'k>, Damage>> {
    sums.count(entry);
    let admitted = filter.admits_entry(entry);
    let key: &[u8] = match entry.key {
        RdbString::Raw(k) => k,
        other => match other.bytes_in(key_buf, entry.offset) {
            Ok(k) => k,
            Err(e) => return admitted.then(|| Err(damage(&e))),
        },
    };
    let taken = ev.d.sampler.takes(entry, key);
    if admitted && filter.admits_key(key) {
        return Some(Ok((key, taken)));
    }
    // Left out by the filter, but in the evidence all the same.
    let exact_weight = match (ev.left_out, taken) {
        (LeftOut::Every, _) => Some(1.0),
        (LeftOut::Sampled, Some(p)) => Some(1.0 / p),
        _ => None,
    };
    if taken.is_none() && exact_weight.is_none() {
        return None;
    }
    let mut measure = Measure::for_entry(entry);
    if let Ok((a8, a16)) = ev.e8.estimate_pair_with(ev.e16, entry, scratch, &mut measure) {
        if let Some(p) = taken {
            sums.add(p, &a8, &a16);
        }
        if let Some(weight) = exact_weight {
            sums.add_exact(weight, &a8, &a16);
        }
    }
    None
}

/// Decodes a batch of a stream for both allocator builds while the
/// evidence between them is summed (`crate::streaming`): every key counts
/// toward the evidence (sampled keys estimated for both builds, as the
/// mapped file's pass samples them), and each key `filter` admits is
/// handed to `each` with its facts for quantum 8 (index 0) and 16 (index
/// 1), or the damage that stopped its decoding (to both). One decoding
/// serves both builds and the evidence. With `every_key`, the keys the
/// filters leave out are estimated too, each counted once in the exact
/// sums (which are then every key's: the evidence of a dump smaller
/// than a sampled one).
#[allow(clippy::too_many_arguments)] // the hot loop's state, passed once per batch
pub(crate) fn batch_facts_both(
    header_counts: bool,
    scratch: &mut Scratch,
    key_buf: &mut Vec<u8>,
    d: &Deferred,
    every_key: bool,
    filter: &KeyFilter,
    now_ms: i64,
    batch: &[Record<'_>],
    sums: &mut Sums,
    mut each: impl FnMut(usize, Result<&KeyFacts<'_>, &Damage>),
) {
    let e8 = Estimator::new(&d.q8).counting_by_header(header_counts);
    let e16 = Estimator::new(&d.q16).counting_by_header(header_counts);
    let evidence = StreamEvidence {
        d,
        e8: &e8,
        e16: &e16,
        left_out: if every_key {
            LeftOut::Every
        } else {
            LeftOut::Sampled
        },
    };
    for entry in entries(batch) {
        let (key, taken) = match stream_key(entry, key_buf, filter, &evidence, scratch, sums) {
            Some(Ok(admitted)) => admitted,
            Some(Err(d)) => {
                each(0, Err(&d));
                each(1, Err(&d));
                continue;
            }
            None => continue,
        };
        match key_facts_both(entry, key, &e8, &e16, scratch) {
            Ok((facts, used)) => {
                sums.add_exact_used(1.0, used);
                if let Some(p) = taken {
                    sums.add_used(p, used);
                }
                for (build, facts) in facts.iter().enumerate() {
                    if filter.admits_facts(facts, now_ms) {
                        each(build, Ok(facts));
                    }
                }
            }
            Err(e) => {
                let d = damage(&e);
                each(0, Err(&d));
                each(1, Err(&d));
            }
        }
    }
}

/// [`batch_facts_both`] once the stream has settled the build (`quantum`)
/// from its first part (`crate::streaming`): every key still counts toward
/// the evidence, summed for both builds to be compared at the end, but
/// each key `filter` admits is folded for the settled build only (one
/// estimate and one fold instead of two; the other build's estimate only
/// for the sampled keys).
#[allow(clippy::too_many_arguments)] // the hot loop's state, passed once per batch
pub(crate) fn batch_facts_settled(
    header_counts: bool,
    scratch: &mut Scratch,
    key_buf: &mut Vec<u8>,
    d: &Deferred,
    quantum: u64,
    filter: &KeyFilter,
    now_ms: i64,
    batch: &[Record<'_>],
    sums: &mut Sums,
    mut each: impl FnMut(Result<&KeyFacts<'_>, Damage>),
) {
    let q16 = quantum == 16;
    let (mine, other) = if q16 { (&d.q16, &d.q8) } else { (&d.q8, &d.q16) };
    let mine = Estimator::new(mine).counting_by_header(header_counts);
    let other = Estimator::new(other).counting_by_header(header_counts);
    let (e8, e16) = if q16 { (&other, &mine) } else { (&mine, &other) };
    let evidence = StreamEvidence {
        d,
        e8,
        e16,
        left_out: LeftOut::Skipped,
    };
    for entry in entries(batch) {
        let (key, taken) = match stream_key(entry, key_buf, filter, &evidence, scratch, sums) {
            Some(Ok(admitted)) => admitted,
            Some(Err(d)) => {
                each(Err(d));
                continue;
            }
            None => continue,
        };
        let facts = match taken {
            Some(p) => key_facts_pair(entry, key, &mine, &other, scratch).map(|(facts, mine, theirs)| {
                let (a8, a16) = if q16 { (theirs, mine) } else { (mine, theirs) };
                sums.add(p, &a8, &a16);
                facts
            }),
            None => key_facts(entry, key, &mine, scratch),
        };
        match facts {
            Ok(facts) if !filter.admits_facts(&facts, now_ms) => {}
            Ok(facts) => each(Ok(&facts)),
            Err(e) => each(Err(damage(&e))),
        }
    }
}

/// What both passes need before the first key: the header, aux fields,
/// target profile, reference time and worker pool.
pub(crate) struct Prepared<'a> {
    pub rdb: Rdb<'a>,
    pub aux: BTreeMap<String, String>,
    pub profile: Profile,
    /// The allocator build `profile.quantum` stands for, and why.
    pub allocator: Choice,
    /// Evidence for the allocator left to the main pass (`allocator` is
    /// then a guess).
    pub deferred: Option<Deferred>,
    pub settings: Settings,
    /// The accumulators the keys feed (`Options::accumulators`).
    pub accumulators: rdblens_summary::Accumulators,
    pub threads: usize,
    pub pool: rayon::ThreadPool,
}

/// How [`prepare`] settles the allocator build.
pub(crate) enum AllocatorPass {
    /// A pass of its own, before the keys (streams that cannot go back).
    Separate,
    /// Summed in the main pass where it can be (no key filter, a big dump):
    /// the report, and `keys` writing to a file.
    InMainPass,
    /// Already decided (the main pass again, after a wrong guess).
    Decided(Choice),
    /// A pass of its own that stops as soon as the first part of the file
    /// settles the build; the main walk then sums the evidence of the
    /// whole file to confirm it (`keys`, which can write its records again
    /// or say they are off).
    SeparateUntilSettled,
    /// Summed over every key in the one pass a stream allows, which folds
    /// each key for both builds until the end decides
    /// (`crate::streaming`): a stream cannot go back.
    Streamed,
}

pub(crate) fn prepare<'a>(
    data: &'a [u8],
    opts: &Options,
    releaser: Option<&Releaser<'_>>,
    pass: AllocatorPass,
) -> Result<Prepared<'a>, AnalysisError> {
    let rdb = if opts.skip_unknown {
        Rdb::new_allowing_newer(data)?
    } else {
        Rdb::new(data)?
    };
    let aux = read_aux(&rdb);
    let mut profile = profile_for(&rdb, &aux, opts);
    let now_ms = opts.now_ms.unwrap_or_else(|| {
        aux.get("ctime")
            .and_then(|c| c.parse::<i64>().ok())
            .map_or(0, |secs| secs.saturating_mul(1000))
    });
    let settings = Settings::of(opts, now_ms);
    let threads = opts.worker_threads();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| AnalysisError::Internal(format!("the thread pool could not start: {e}")))?;
    let writer = Profile::from_aux(
        aux.get("redis-ver").map(String::as_str),
        aux.get("valkey-ver").map(String::as_str),
        rdb.version(),
        rdb.dialect(),
    );
    let separate = |profile: &Profile, early: bool| {
        crate::allocator::choose(&rdb, &aux, profile, &writer, opts, &pool, releaser, early)
    };
    let (allocator, deferred) = match pass {
        AllocatorPass::Decided(choice) => (choice, None),
        AllocatorPass::InMainPass if opts.filter.is_empty() => {
            let from = opts.sample_evidence_from;
            match crate::allocator::defer(&rdb, &aux, &profile, &writer, opts.quantum, from) {
                Ok(d) => {
                    let guess = Choice {
                        quantum: d.guess,
                        ..Choice::unclear("the main pass has not summed the evidence yet")
                    };
                    (guess, Some(d))
                }
                Err(Some(choice)) => (choice, None),
                Err(None) => (separate(&profile, false).choice, None),
            }
        }
        AllocatorPass::SeparateUntilSettled => {
            // A settled build can be confirmed only by a walk of every key.
            let chosen = separate(&profile, opts.filter.is_empty());
            let choice = chosen.choice.clone();
            let confirm = chosen.to_confirm.map(|used_mem| {
                crate::allocator::confirm_settled(&rdb, &profile, chosen, used_mem, opts.sample_evidence_from)
            });
            (choice, confirm)
        }
        AllocatorPass::Streamed => {
            match crate::allocator::defer_streamed(&aux, &profile, &writer, opts.quantum) {
                Ok(d) => {
                    let guess = Choice {
                        quantum: d.guess,
                        ..Choice::unclear("the pass has not summed the evidence yet")
                    };
                    (guess, Some(d))
                }
                Err(choice) => (choice, None),
            }
        }
        AllocatorPass::Separate | AllocatorPass::InMainPass => (separate(&profile, false).choice, None),
    };
    profile.quantum = allocator.quantum;
    Ok(Prepared {
        rdb,
        aux,
        profile,
        allocator,
        deferred,
        settings,
        accumulators: opts.accumulators,
        threads,
        pool,
    })
}

pub(crate) fn file_info(path: &str, p: Prepared<'_>, outcome: WalkOutcome) -> FileInfo {
    FileInfo {
        path: path.to_string(),
        size: p.rdb.data().len() as u64,
        dialect: p.rdb.dialect().to_string(),
        rdb_version: p.rdb.version(),
        aux: p.aux,
        // A walk that stopped early never reached the checksum.
        checksum: outcome.checksum.unwrap_or(Checksum::Unknown),
        checksum_mismatch: outcome.checksum_mismatch,
        profile: p.profile.release(),
        allocator: Some(AllocatorInfo::of(&p.allocator)),
        accuracy: Some(AccuracyInfo::of(&Accuracy::of(&p.profile))),
        keys: outcome.keys,
        functions: outcome.functions,
        module_aux: outcome.module_aux,
        incomplete: outcome.error.as_ref().map(damage),
        warnings: newer_version_warning(&p.rdb)
            .into_iter()
            .chain(outcome.checksum_mismatch.map(|m| m.to_string()))
            .collect(),
        shard: None,
        used_memory: None,
    }
}

/// A file of a version newer than any known, read with `skip_unknown`.
fn newer_version_warning(rdb: &Rdb<'_>) -> Option<String> {
    let format = rdb.format();
    format.is_newer_than_known().then(|| {
        let newest = rdblens_parser::Format::newest_known(format.dialect);
        format!(
            "{} RDB version {} is newer than any rdblens knows: read as RDB {newest}, up to the first \
             type or opcode RDB {newest} does not have",
            format.dialect, format.version
        )
    })
}
