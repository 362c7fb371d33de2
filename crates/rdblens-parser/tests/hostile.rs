//! Damaged and hostile input: truncations of every fixture, byte flips,
//! inflated lengths, swapped type bytes and arbitrary bytes after a valid
//! magic. The parser must answer with an `Err` (or, for harmless damage, an
//! `Ok`): never a panic, a hang, or an allocation the input cannot justify.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use rdblens_parser::*;

/// Records the largest single allocation request, so the tests can show that
/// no length read from a hostile file turns into a huge allocation.
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

/// The largest fixture is ~1.2 MB; LZF may legitimately expand 88x and a
/// reused scratch buffer may double once. Nothing may go beyond this.
const ALLOC_CEILING: usize = 256 << 20;

fn assert_alloc_bounded(ctx: &str) {
    let largest = LARGEST_ALLOC.load(Ordering::Relaxed);
    assert!(
        largest <= ALLOC_CEILING,
        "{ctx}: an allocation of {largest} bytes was requested"
    );
}

/// A visitor that looks at nothing.
struct Nothing;
impl ValueVisitor for Nothing {}

/// Everything a caller can do with a file: every record, and for each entry
/// its key, a decoding visit, the stats pass, the stream and module views.
/// Returns whether the EOF record was reached.
fn full_walk(data: &[u8]) -> Result<bool> {
    walk_visiting_after(data, 0)
}

/// As [`full_walk`], but entries that end at or before `from` are only
/// located, not decoded. Used where the bytes up to `from` are identical to
/// an intact fixture whose full walk has already been checked: decoding an
/// entry reads nothing but its own bytes, so the result for those entries
/// cannot differ. The record walk itself always runs from the magic.
fn walk_visiting_after(data: &[u8], from: usize) -> Result<bool> {
    let rdb = Rdb::new(data)?;
    let mut scratch = Scratch::new();
    let mut saw_eof = false;
    for record in rdb.records() {
        match record? {
            Record::Entry(e) if (e.offset + e.record_len) as usize > from => {
                e.key_bytes()?;
                e.visit_with(&mut scratch, &mut Nothing)?;
                e.stats_with(&mut scratch)?;
                if let Some(s) = e.stream()? {
                    for node in s.nodes() {
                        node?;
                    }
                }
                if let Some(m) = e.module()? {
                    for item in m.items() {
                        item?;
                    }
                }
                e.string()?;
            }
            Record::ModuleAux(aux) => {
                aux.module.name();
            }
            Record::Eof(eof) => {
                rdb.checksum_status(&eof);
                saw_eof = true;
            }
            _ => {}
        }
    }
    Ok(saw_eof)
}

type Progress = std::sync::Mutex<String>;

/// Runs `f` on another thread and fails (instead of hanging) if it takes
/// longer than `limit`; `progress` names the case being worked on.
fn with_watchdog<F>(name: &str, limit: Duration, progress: &'static Progress, f: F)
where
    F: FnOnce() + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(f));
            let _ = tx.send(outcome);
        })
        .unwrap();
    match rx.recv_timeout(limit) {
        Ok(Ok(())) => handle.join().unwrap(),
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!(
            "{name}: no answer after {limit:?}; last case started: {}",
            progress.lock().unwrap()
        ),
    }
}

fn set_progress(progress: &Progress, what: String) {
    *progress.lock().unwrap_or_else(|e| e.into_inner()) = what;
}

/// `RDBLENS_HOSTILE_SCALE=N` multiplies the number of random cases (default
/// 1) and `RDBLENS_HOSTILE_SEED` changes their seed, for deeper local runs.
fn scale() -> usize {
    env_number("RDBLENS_HOSTILE_SCALE").unwrap_or(1).max(1) as usize
}

fn seed() -> u64 {
    env_number("RDBLENS_HOSTILE_SEED").unwrap_or(0)
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn time_limit() -> Duration {
    Duration::from_secs(120 * scale() as u64)
}

/// Fixed-seed LCG (Knuth's MMIX constants): reproducible without a rand crate.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Record boundaries (every record's first byte and the byte after it,
/// which for entries are `offset` and `offset + record_len`), and a few
/// offsets inside each record: past a prefix or type byte, at and just after
/// the value start, a third into the value, its last byte, the checksum.
fn cut_points(data: &[u8]) -> (Vec<usize>, Vec<usize>) {
    let rdb = Rdb::new(data).unwrap();
    let mut bounds = Vec::new();
    let mut inside = vec![0, 1, 5, 8];
    let mut records = rdb.records();
    loop {
        let start = records.offset() as usize;
        bounds.push(start);
        let Some(record) = records.next() else { break };
        let end = records.offset() as usize;
        bounds.push(end);
        inside.extend([start + 1, start + (end - start) / 2, end - 1]);
        match record.unwrap() {
            Record::Entry(e) => {
                assert_eq!(
                    (e.offset as usize, e.offset as usize + e.record_len as usize),
                    (start, end)
                );
                let value_at = e.value_offset as usize;
                inside.extend([start + 2, value_at, value_at + 1, value_at + e.value.len() / 3]);
            }
            Record::Eof(eof) => {
                let at = eof.offset as usize;
                inside.extend([at + 1, at + 4, at + 8]);
            }
            _ => {}
        }
    }
    let tidy = |mut v: Vec<usize>| {
        v.retain(|&c| c < data.len());
        v.sort_unstable();
        v.dedup();
        v
    };
    let bounds = tidy(bounds);
    let inside = tidy(inside)
        .into_iter()
        .filter(|c| bounds.binary_search(c).is_err())
        .collect();
    (bounds, inside)
}

/// At most `max` elements, evenly spread, always keeping the first and last.
fn spread(v: Vec<usize>, max: usize) -> Vec<usize> {
    if v.len() <= max {
        return v;
    }
    (0..max).map(|i| v[i * (v.len() - 1) / (max - 1)]).collect()
}

/// Boundary and inside cuts decode the entries that end in the last 4 KiB
/// before the cut (see [`walk_visiting_after`]); random cuts decode all.
const CUT_WINDOW: usize = 4 << 10;

/// No single case may take longer than this (they take milliseconds).
const CASE_LIMIT: Duration = Duration::from_secs(5);

fn check_case_time(ctx: &str, at: usize, started: Instant, failures: &mut Vec<String>) {
    if started.elapsed() > CASE_LIMIT {
        failures.push(format!("{ctx}: the case at {at} took {:?}", started.elapsed()));
    }
}

/// The message names the byte offset the error carries.
fn check_names_offset(ctx: &str, e: &Error, failures: &mut Vec<String>) {
    let text = e.to_string();
    if !text.contains(&format!("at byte offset {}", e.offset())) {
        failures.push(format!("{ctx}: the message does not name the offset: {text}"));
    }
}

/// Returns the number of cases run.
fn truncate_fixtures(files: Vec<PathBuf>, progress: &Progress) -> usize {
    let mut failures = Vec::new();
    let mut cases = 0;
    for path in files {
        let ctx = common::name(&path);
        let data = std::fs::read(&path).unwrap();
        assert!(full_walk(&data).unwrap(), "{ctx}: the intact file walks to EOF");
        let (bounds, inside) = cut_points(&data);
        // (cut, decode entries ending after this offset)
        // Every record boundary (a few hundred per fixture), a spread of
        // cuts inside records.
        let mut cuts: Vec<(usize, usize)> = bounds
            .into_iter()
            .chain(spread(inside, 150))
            .map(|cut| (cut, cut.saturating_sub(CUT_WINDOW)))
            .collect();
        // Random cuts get the full walk: every entry decoded from the start.
        let mut rng = Lcg(0x5eed ^ seed() ^ data.len() as u64);
        cuts.extend((0..50 * scale()).map(|_| (rng.below(data.len()), 0)));
        for (cut, from) in cuts {
            cases += 1;
            set_progress(progress, format!("{ctx} cut at {cut}"));
            let part = &data[..cut];
            let started = Instant::now();
            let outcome = catch_unwind(|| walk_visiting_after(part, from));
            check_case_time(&ctx, cut, started, &mut failures);
            if let Ok(Err(e)) = &outcome {
                check_names_offset(&ctx, e, &mut failures);
            }
            match outcome {
                Err(_) => failures.push(format!("{ctx}: panic when cut at {cut}")),
                Ok(Ok(_)) => failures.push(format!("{ctx}: cut at {cut} of {} looks complete", data.len())),
                Ok(Err(e)) => {
                    if e.offset() > cut as u64 {
                        failures.push(format!(
                            "{ctx}: cut at {cut}: error offset {} past the end: {e}",
                            e.offset()
                        ));
                    }
                    // Inside the magic it is not an RDB yet; past it, the
                    // only thing wrong with the file is that it ends early.
                    let expected = match e.kind() {
                        ErrorKind::NotRdb(_) => cut < 9,
                        ErrorKind::Truncated { .. } => cut >= 9,
                        _ => false,
                    };
                    if !expected {
                        failures.push(format!("{ctx}: cut at {cut}: unexpected error: {e}"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} cuts failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_alloc_bounded("truncation");
    cases
}

fn fixtures_where(pred: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    common::fixture_files().into_iter().filter(|p| pred(p)).collect()
}

fn scenario(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

static TRUNCATE_SMALL: Progress = Progress::new(String::new());
static TRUNCATE_BIG: Progress = Progress::new(String::new());

#[test]
fn truncated_small_fixtures_fail_cleanly() {
    let files = fixtures_where(|p| scenario(p) != "all-types");
    with_watchdog("truncate-small", time_limit(), &TRUNCATE_SMALL, move || {
        let cases = truncate_fixtures(files, &TRUNCATE_SMALL);
        assert!(cases > 5000, "{cases}");
    });
}

#[test]
fn truncated_all_types_fixtures_fail_cleanly() {
    let files = fixtures_where(|p| scenario(p) == "all-types");
    with_watchdog("truncate-all-types", time_limit(), &TRUNCATE_BIG, move || {
        let cases = truncate_fixtures(files, &TRUNCATE_BIG);
        assert!(cases > 3000, "{cases}");
    });
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

#[derive(Clone, Copy, Debug)]
enum Damage {
    /// XOR a byte with a nonzero mask.
    Flip(u8),
    /// Overwrite with 0x80 ff ff ff ff: a 4 GiB length.
    Len32,
    /// Overwrite with 0x81 and eight 0xff: a 2^64-1 length.
    Len64,
    /// Replace a type byte with another one.
    Type(u8),
}

fn apply(data: &mut [u8], at: usize, damage: Damage) {
    let bytes = match damage {
        Damage::Flip(mask) => vec![data[at] ^ mask],
        Damage::Len32 => vec![0x80, 0xff, 0xff, 0xff, 0xff],
        Damage::Len64 => vec![0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        Damage::Type(t) => vec![t],
    };
    for (slot, b) in data[at..].iter_mut().zip(bytes) {
        *slot = b;
    }
}

/// The damaged cases for one file: positions inside values and anywhere,
/// and type bytes of entries swapped for other types.
fn damage_cases(data: &[u8], per_kind: usize, seed: u64) -> Vec<(usize, Damage)> {
    let rdb = Rdb::new(data).unwrap();
    let entries: Vec<Entry<'_>> = rdb.entries().map(|e| e.unwrap()).collect();
    let mut rng = Lcg(seed);
    let mut cases = Vec::new();
    let pos = |rng: &mut Lcg| {
        if rng.below(4) == 0 {
            9 + rng.below(data.len() - 9)
        } else {
            // Inside a value, where most structure lives.
            let e = &entries[rng.below(entries.len())];
            e.value_offset as usize + rng.below(e.value.len())
        }
    };
    for _ in 0..per_kind {
        let mask = 1 + rng.below(255) as u8;
        cases.push((pos(&mut rng), Damage::Flip(mask)));
        cases.push((pos(&mut rng), Damage::Len32));
        cases.push((pos(&mut rng), Damage::Len64));
        let e = &entries[rng.below(entries.len())];
        // The key's length field and the value's first length field.
        let huge = if rng.below(2) == 0 {
            Damage::Len32
        } else {
            Damage::Len64
        };
        cases.push((e.value_offset as usize, huge));
        if let Some(at) = type_byte_at(data, e) {
            cases.push((at + 1, huge));
        }
        if let Some(at) = type_byte_at(data, e) {
            let mut t = rng.below(29) as u8;
            if t == e.value_type.byte() {
                t = (t + 1) % 29;
            }
            cases.push((at, Damage::Type(t)));
        }
    }
    cases
}

/// Returns the number of cases run.
fn damage_fixtures(files: Vec<PathBuf>, per_kind: usize, progress: &Progress) -> usize {
    let mut failures = Vec::new();
    let mut total = 0;
    for path in files {
        let ctx = common::name(&path);
        let data = std::fs::read(&path).unwrap();
        assert!(full_walk(&data).unwrap(), "{ctx}: the intact file walks to EOF");
        let cases = damage_cases(
            &data,
            per_kind * scale(),
            0xdead_beef ^ seed() ^ data.len() as u64,
        );
        for (at, damage) in cases {
            total += 1;
            set_progress(progress, format!("{ctx}: {damage:?} at {at}"));
            let mut bad = data.clone();
            apply(&mut bad, at, damage);
            // Entries that end before the damage are byte-identical to the
            // intact file's, walked in full above: decode the rest.
            let started = Instant::now();
            let outcome = catch_unwind(|| walk_visiting_after(&bad, at));
            check_case_time(&ctx, at, started, &mut failures);
            if let Ok(Err(e)) = &outcome {
                check_names_offset(&ctx, e, &mut failures);
            }
            match outcome {
                Err(_) => failures.push(format!("{ctx}: panic with {damage:?} at offset {at}")),
                Ok(Err(e)) if e.offset() > bad.len() as u64 => failures.push(format!(
                    "{ctx}: {damage:?} at {at}: error offset past the end: {e}"
                )),
                Ok(_) => {}
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_alloc_bounded("damage");
    total
}

static DAMAGE_SMALL: Progress = Progress::new(String::new());
static DAMAGE_BIG: Progress = Progress::new(String::new());

#[test]
fn damaged_lru_lfu_fixtures_never_panic() {
    let files = fixtures_where(|p| matches!(scenario(p).as_str(), "lru" | "lfu"));
    with_watchdog("damage-small", time_limit(), &DAMAGE_SMALL, move || {
        let cases = damage_fixtures(files, 20, &DAMAGE_SMALL);
        assert!(cases > 1500, "{cases}");
    });
}

#[test]
fn damaged_all_types_fixtures_never_panic() {
    let files = fixtures_where(|p| {
        let dir = p
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        scenario(p) == "all-types" && matches!(dir.as_str(), "redis-3.2.13" | "redis-8.0.6" | "valkey-9.1.2")
    });
    with_watchdog("damage-all-types", time_limit(), &DAMAGE_BIG, move || {
        let cases = damage_fixtures(files, 40, &DAMAGE_BIG);
        assert!(cases > 400, "{cases}");
    });
}

// ---- allocation bounds -------------------------------------------------

/// The shortest length encoding of `n` (6, 14, 32 or 64 bits).
fn len(n: u64) -> Vec<u8> {
    match n {
        0..=0x3f => vec![n as u8],
        0x40..=0x3fff => vec![0x40 | (n >> 8) as u8, n as u8],
        0x4000..=0xffff_ffff => [vec![0x80], (n as u32).to_be_bytes().to_vec()].concat(),
        _ => [vec![0x81], n.to_be_bytes().to_vec()].concat(),
    }
}

fn raw(s: &[u8]) -> Vec<u8> {
    [len(s.len() as u64), s.to_vec()].concat()
}

/// Magic, body, EOF and a correct CRC-64.
fn file(magic: &[u8], body: &[u8]) -> Vec<u8> {
    let mut out = [magic, body, &[0xff]].concat();
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn first_record_error(data: &[u8]) -> Error {
    match Rdb::new(data).unwrap().records().next().unwrap() {
        Ok(r) => panic!("expected an error, got {r:?}"),
        Err(e) => e,
    }
}

#[test]
fn lzf_length_the_input_cannot_produce_fails_before_allocating() {
    let started = Instant::now();
    let compressed = [9u8, b'a', b'b', b'c', b'd', b'e', b'f', b'g', b'h', b'i'];
    let huge = 1u64 << 40;
    let lzf = [vec![0xc3], len(10), len(huge), compressed.to_vec()].concat();
    // 9 magic + type + key "k" (2 bytes) + 0xC3 + clen (1 byte): ulen at 14.
    for (ty, what) in [(0u8, "string"), (10, "ziplist blob"), (11, "intset blob")] {
        let data = file(b"REDIS0011", &[vec![ty], raw(b"k"), lzf.clone()].concat());
        let err = first_record_error(&data);
        match err.kind() {
            ErrorKind::BadLzf(msg) => assert!(msg.contains("impossible"), "{what}: {msg}"),
            other => panic!("{what}: {other:?}"),
        }
        assert_eq!(err.offset(), 14, "{what}");
        assert_eq!(err.key(), Some(&b"k"[..]), "{what}");
    }
    // The same lie as a key name and as an AUX value.
    let data = file(b"REDIS0011", &[vec![0u8], lzf.clone(), raw(b"v")].concat());
    assert!(matches!(first_record_error(&data).kind(), ErrorKind::BadLzf(_)));
    let data = file(b"REDIS0011", &[vec![0xfa], raw(b"aux"), lzf.clone()].concat());
    assert!(matches!(first_record_error(&data).kind(), ErrorKind::BadLzf(_)));
    // The public decompressor refuses before touching the buffer.
    let mut out = Vec::new();
    let err = lzf_decompress(&compressed, huge as usize, &mut out).unwrap_err();
    assert!(err.contains("impossible"), "{err}");
    assert_eq!(out.capacity(), 0);
    // A length that is possible but a lie is caught when decoding, at the
    // compressed bytes, with nothing allocated beyond the declared length.
    let lying = [vec![0xc3], len(10), len(1000), compressed.to_vec()].concat();
    let data = file(b"REDIS0011", &[vec![10u8], raw(b"k"), lying].concat());
    let entry = Rdb::new(&data).unwrap().entries().next().unwrap().unwrap();
    let err = entry.visit(&mut Nothing).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::BadLzf(_)), "{err}");
    assert_eq!(err.offset(), 16);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_alloc_bounded("lzf");
}

#[test]
fn counts_of_2_pow_62_fail_at_once_as_truncated() {
    let started = Instant::now();
    let n = 1u64 << 62;
    let zero_id = [len(0), len(0)].concat();
    let stream_v3_group = [
        len(0),          // nodes
        len(0),          // length
        zero_id.clone(), // last id
        zero_id.clone(), // first id
        zero_id.clone(), // max deleted id
        len(0),          // entries added
        len(1),          // groups
        raw(b"g"),
        zero_id.clone(), // last delivered
        len(0),          // entries read
    ]
    .concat();
    // (magic, bytes before the count, what, minimum bytes per item)
    let cases: Vec<(&[u8], Vec<u8>, &'static str, u64)> = vec![
        (b"REDIS0014", [vec![1], raw(b"k")].concat(), "collection size", 1),
        (b"REDIS0014", [vec![2], raw(b"k")].concat(), "collection size", 1),
        (b"REDIS0001", [vec![3], raw(b"k")].concat(), "sorted set size", 2),
        (b"REDIS0014", [vec![4], raw(b"k")].concat(), "hash size", 2),
        (b"REDIS0014", [vec![5], raw(b"k")].concat(), "sorted set size", 9),
        (
            b"REDIS0009",
            [vec![14], raw(b"k")].concat(),
            "quicklist node count",
            1,
        ),
        (
            b"REDIS0014",
            [vec![18], raw(b"k")].concat(),
            "quicklist node count",
            2,
        ),
        (
            b"REDIS0014",
            [vec![21], raw(b"k")].concat(),
            "stream node count",
            2,
        ),
        (
            b"REDIS0011",
            [vec![21], raw(b"k"), stream_v3_group].concat(),
            "group PEL size",
            18,
        ),
        (
            b"REDIS0014",
            [vec![24], raw(b"k"), vec![0; 8]].concat(),
            "hash size",
            3,
        ),
        (b"REDIS0014", [vec![28], raw(b"k")].concat(), "array size", 3),
        (b"REDIS0013", vec![0xf3], "key metadata class count", 5),
        (b"VALKEY080", [vec![22], raw(b"k")].concat(), "hash size", 10),
        (b"VALKEY081", [vec![23], raw(b"k")].concat(), "path count", 2),
        (
            b"VALKEY080",
            [vec![0xf3], raw(b"job")].concat(),
            "slot import range count",
            2,
        ),
    ];
    for (magic, before, what, min) in cases {
        let ctx = format!("{} {what}", String::from_utf8_lossy(magic));
        let data = file(magic, &[before.clone(), len(n), vec![0; 4]].concat());
        let err = first_record_error(&data);
        let at = 9 + before.len();
        let available = (data.len() - at - 9) as u64;
        assert_eq!(
            err.kind(),
            &ErrorKind::Truncated {
                what,
                needed: n.saturating_mul(min),
                available
            },
            "{ctx}"
        );
        assert_eq!(err.offset(), at as u64, "{ctx}");
    }
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_alloc_bounded("counts");
}

// ---- arbitrary input --------------------------------------------------------

/// A compact file with every layout a server writes: a fixture's header
/// records (AUX, MODULE_AUX, FUNCTION2, SELECTDB, RESIZEDB), then per value
/// type its smallest entry and its largest one under 2 KiB, plus the first
/// entry with an expiry, an IDLE and a FREQ prefix; then EOF and CRC.
fn sampler(dir: &str, scenario: &str) -> Vec<u8> {
    let path = common::fixtures_dir().join(dir).join(format!("{scenario}.rdb"));
    let data = std::fs::read(path).unwrap();
    let rdb = Rdb::new(&data).unwrap();
    let entries: Vec<Entry<'_>> = rdb.entries().map(|e| e.unwrap()).collect();
    let mut chosen = std::collections::BTreeSet::new();
    let mut types: Vec<ValueType> = entries.iter().map(|e| e.value_type).collect();
    types.sort();
    types.dedup();
    for ty in types {
        let of_type = || entries.iter().filter(move |e| e.value_type == ty);
        chosen.extend(of_type().min_by_key(|e| e.record_len).map(|e| e.offset));
        chosen.extend(
            of_type()
                .filter(|e| e.record_len <= 2048)
                .max_by_key(|e| e.record_len)
                .map(|e| e.offset),
        );
    }
    chosen.extend(entries.iter().find(|e| e.expiry.is_some()).map(|e| e.offset));
    chosen.extend(
        entries
            .iter()
            .find(|e| e.idle_seconds.is_some())
            .map(|e| e.offset),
    );
    chosen.extend(entries.iter().find(|e| e.lfu_freq.is_some()).map(|e| e.offset));
    let mut body = data[9..entries[0].offset as usize].to_vec();
    for e in entries.iter().filter(|e| chosen.contains(&e.offset)) {
        body.extend_from_slice(&data[e.offset as usize..(e.offset + e.record_len) as usize]);
    }
    let out = file(&data[..9], &body);
    assert!(full_walk(&out).unwrap());
    out
}

const SAMPLERS: [(&str, &str); 7] = [
    ("redis-3.2.13", "all-types"),
    ("redis-4.0.14", "all-types"),
    ("redis-5.0.14", "lru"),
    ("redis-7.0.15", "lfu"),
    ("redis-7.4.5", "all-types"),
    ("redis-8.0.6", "lfu"),
    ("valkey-9.1.2", "lru"),
];

fn samplers() -> &'static [Vec<u8>] {
    static S: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        SAMPLERS
            .iter()
            .map(|(dir, scenario)| sampler(dir, scenario))
            .collect()
    })
}

/// Bytes biased towards what the format is made of: small values make
/// plausible lengths and type bytes; 0xc0-0xc3 are the special string
/// encodings; 0xf0-0xff the opcodes.
fn body() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u16>(), 0..600).prop_map(|v| {
        v.into_iter()
            .map(|x| {
                let [lo, hi] = x.to_le_bytes();
                match hi % 4 {
                    0 => lo,
                    1 => lo & 0x1f,
                    2 => 0xc0 | (lo & 3),
                    _ => 0xf0 | (lo & 0x0f),
                }
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2048 * scale() as u32,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_after_a_valid_magic_never_panic(
        magic in prop::sample::select(vec![
            &b"REDIS0011"[..], b"VALKEY080", b"REDIS0002", b"REDIS0014", b"VALKEY081",
        ]),
        body in body(),
    ) {
        let data = [magic, &body[..]].concat();
        match full_walk(&data) {
            Ok(_) => {}
            Err(e) => prop_assert!(e.offset() <= data.len() as u64, "{e}"),
        }
    }

    #[test]
    fn mutated_samplers_never_panic(
        which in 0..SAMPLERS.len(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<u8>()), 1..5),
    ) {
        let mut data = samplers()[which].clone();
        for (at, op, byte) in edits {
            let at = 9 + at.index(data.len() - 9);
            match op {
                0 => data[at] ^= byte | 1,
                1 => data[at] = byte,
                2 => apply(&mut data, at, if byte & 1 == 0 { Damage::Len32 } else { Damage::Len64 }),
                _ => data.truncate(at.max(9)),
            }
            if data.len() <= 9 {
                break;
            }
        }
        match full_walk(&data) {
            Ok(_) => {}
            Err(e) => prop_assert!(e.offset() <= data.len() as u64, "{e}"),
        }
    }
}
