//! The full analysis on damaged files: fixtures cut at entry boundaries and
//! at random offsets, bytes flipped, length fields inflated to 2^32 and 2^64,
//! type bytes swapped. `analyze_bytes` must never panic, hang or make an
//! allocation the input cannot justify; a cut file must give the report of
//! every key before the cut, marked incomplete at an offset inside the file;
//! every damage message names its byte offset. The parser's own walk over
//! the same kinds of damage is `rdblens-parser/tests/hostile.rs`.
//!
//! Bounded: a few hundred cases on three fixtures, a few seconds in debug.

use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rdblens_engine::{analyze_bytes, AnalysisError};
use rdblens_parser::{Entry, Rdb};
use rdblens_summary::{Damage, Options, Summary};

/// Records the largest single allocation request.
struct Tracking;

static LARGEST_ALLOC: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST_ALLOC.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST_ALLOC.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST_ALLOC.fetch_max(new_size, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

/// The fixtures below are at most 1.2 MB; a legitimate allocation (LZF
/// output, accumulators) stays far below this. A length read from a damaged
/// file and trusted would ask for 4 GiB or more.
const ALLOC_CEILING: usize = 64 << 20;

/// The whole test must finish within this (it takes a few seconds).
const TIME_LIMIT: Duration = Duration::from_secs(120);

fn fixture(rel: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/rdb")
        .join(rel);
    std::fs::read(path).unwrap()
}

fn analyze(data: &[u8]) -> Result<Summary, AnalysisError> {
    let opts = Options {
        threads: 1,
        ..Options::default()
    };
    analyze_bytes(data, "damaged.rdb", &opts)
}

/// Fixed-seed LCG (Knuth's MMIX constants).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n.max(1) as u64) as usize
    }
}

fn check_damage(ctx: &str, d: &Damage, len: usize, failures: &mut Vec<String>) {
    if d.offset > len as u64 {
        failures.push(format!(
            "{ctx}: damage offset {} past the end ({len}): {}",
            d.offset, d.message
        ));
    }
    if !d.message.contains(&format!("at byte offset {}", d.offset)) {
        failures.push(format!(
            "{ctx}: the message does not name offset {}: {}",
            d.offset, d.message
        ));
    }
}

/// The invariants every analysis of damaged input keeps.
fn check(ctx: &str, data: &[u8], failures: &mut Vec<String>) -> Option<Summary> {
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| analyze(data)));
    if started.elapsed() > Duration::from_secs(10) {
        failures.push(format!("{ctx}: took {:?}", started.elapsed()));
    }
    match result {
        Err(_) => {
            failures.push(format!("{ctx}: panic"));
            None
        }
        // A panic inside the analysis comes back as an internal error.
        Ok(Err(e @ (AnalysisError::Internal(_) | AnalysisError::Merge(_)))) => {
            failures.push(format!("{ctx}: {e}"));
            None
        }
        Ok(Err(AnalysisError::Input(e))) => {
            // Only the header can fail the whole analysis.
            if e.offset() != 0 {
                failures.push(format!("{ctx}: the analysis failed past the header: {e}"));
            }
            None
        }
        Ok(Ok(s)) => {
            let f = &s.files[0];
            if let Some(d) = &f.incomplete {
                check_damage(ctx, d, data.len(), failures);
            }
            for d in &s.keys.damage {
                check_damage(ctx, d, data.len(), failures);
            }
            Some(s)
        }
    }
}

/// Entry boundaries: (offset of the record's first byte, byte after it).
fn entry_bounds(data: &[u8]) -> Vec<(usize, usize)> {
    Rdb::new(data)
        .unwrap()
        .entries()
        .map(|e| {
            let e = e.unwrap();
            (e.offset as usize, (e.offset + e.record_len) as usize)
        })
        .collect()
}

/// Cuts at up to `max` entry boundaries and `random` random offsets: the
/// report covers exactly the keys that end before the cut.
fn truncations(name: &str, data: &[u8], max: usize, random: usize, failures: &mut Vec<String>) -> usize {
    let bounds = entry_bounds(data);
    let mut cuts: Vec<usize> = bounds.iter().map(|&(start, _)| start).collect();
    if cuts.len() > max {
        cuts = (0..max).map(|i| cuts[i * (cuts.len() - 1) / (max - 1)]).collect();
    }
    let mut rng = Lcg(data.len() as u64);
    cuts.extend((0..random).map(|_| 9 + rng.below(data.len() - 9)));
    for &cut in &cuts {
        let ctx = format!("{name} cut at {cut}");
        let Some(s) = check(&ctx, &data[..cut], failures) else {
            continue;
        };
        let f = &s.files[0];
        let Some(d) = &f.incomplete else {
            failures.push(format!("{ctx}: not marked incomplete"));
            continue;
        };
        if d.offset > cut as u64 || f.checksum.as_str() != "unknown" {
            failures.push(format!(
                "{ctx}: stopped at {} with checksum {}",
                d.offset, f.checksum
            ));
        }
        let before = bounds.iter().filter(|&&(_, end)| end <= cut).count() as u64;
        let covered = s.keys.totals.keys + s.keys.damaged_keys;
        if covered != before || f.keys != before {
            failures.push(format!(
                "{ctx}: {before} keys end before the cut, the report covers {covered} (file says {})",
                f.keys
            ));
        }
    }
    cuts.len()
}

/// Position of an entry's type byte, after its prefix opcodes.
fn type_byte_at(data: &[u8], e: &Entry<'_>) -> Option<usize> {
    let mut p = e.offset as usize;
    loop {
        match data[p] {
            0xfc => p += 9,
            0xfd => p += 5,
            0xf9 => p += 2,
            0xf8 => {
                p += match data[p + 1] >> 6 {
                    0 => 2,
                    1 => 3,
                    _ if data[p + 1] == 0x80 => 6,
                    _ => 10,
                }
            }
            b => return (b == e.value_type.byte()).then_some(p),
        }
    }
}

/// Flipped bytes, 2^32 and 2^64 lengths written over a key's or a value's
/// first length field or anywhere inside a value, and swapped type bytes.
fn mutations(name: &str, data: &[u8], per_kind: usize, failures: &mut Vec<String>) -> usize {
    let rdb = Rdb::new(data).unwrap();
    let entries: Vec<Entry<'_>> = rdb.entries().map(|e| e.unwrap()).collect();
    let mut rng = Lcg(0xdead_beef ^ data.len() as u64);
    let len32 = [0x80, 0xff, 0xff, 0xff, 0xff];
    let len64 = [0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    let mut cases: Vec<(usize, Vec<u8>)> = Vec::new();
    for _ in 0..per_kind {
        let e = &entries[rng.below(entries.len())];
        let inside = e.value_offset as usize + rng.below(e.value.len());
        let anywhere = 9 + rng.below(data.len() - 9);
        cases.push((anywhere, vec![data[anywhere] ^ (1 + rng.below(255) as u8)]));
        cases.push((inside, vec![data[inside] ^ (1 + rng.below(255) as u8)]));
        cases.push((inside, len32.to_vec()));
        cases.push((e.value_offset as usize, len64.to_vec()));
        if let Some(at) = type_byte_at(data, e) {
            cases.push((at + 1, len32.to_vec()));
            let mut t = rng.below(29) as u8;
            if t == e.value_type.byte() {
                t = (t + 1) % 29;
            }
            cases.push((at, vec![t]));
        }
    }
    for (at, bytes) in &cases {
        let mut bad = data.to_vec();
        for (slot, b) in bad[*at..].iter_mut().zip(bytes) {
            *slot = *b;
        }
        check(&format!("{name}: {bytes:02x?} at {at}"), &bad, failures);
    }
    cases.len()
}

#[test]
fn damaged_files_still_get_a_report_of_the_sound_part() {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let outcome = catch_unwind(|| {
            let mut failures = Vec::new();
            let mut cases = 0;
            for (name, cuts, random, per_kind) in [
                ("redis-7.4.5/lru.rdb", 120, 40, 25),
                ("valkey-9.1.2/lfu.rdb", 120, 40, 25),
                ("redis-3.2.13/all-types.rdb", 60, 20, 10),
            ] {
                let data = fixture(name);
                let intact = check(name, &data, &mut failures).expect("the intact fixture analyses");
                assert!(
                    intact.files[0].incomplete.is_none() && intact.keys.damaged_keys == 0,
                    "{name}"
                );
                cases += truncations(name, &data, cuts, random, &mut failures);
                cases += mutations(name, &data, per_kind, &mut failures);
            }
            (cases, failures)
        });
        let _ = tx.send(outcome);
    });
    let (cases, failures) = match rx.recv_timeout(TIME_LIMIT) {
        Ok(Ok(r)) => r,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("no answer after {TIME_LIMIT:?}: a damaged file hangs the analysis"),
    };
    assert!(
        failures.is_empty(),
        "{} of {cases} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(cases > 500, "{cases}");
    let largest = LARGEST_ALLOC.load(Ordering::Relaxed);
    assert!(
        largest <= ALLOC_CEILING,
        "an allocation of {largest} bytes was requested"
    );
}
