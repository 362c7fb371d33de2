//! The fuzz targets' inputs, replayed: every crash input the fuzzers found
//! (`tests/fuzz_regressions/<target>/`, each a bug that was fixed) and the
//! committed seed corpus (`fuzz/seeds/`), through the same code the targets
//! run (`tests/exercise/mod.rs`). See docs/fuzzing.md.
//!
//! `cargo test -p rdblens --test fuzz_regressions -- --ignored write_fuzz_seeds`
//! regenerates the seeds taken from the fixtures.

mod exercise;

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rdblens_parser::{crc64, lzf_decompress, Entry, Rdb, RdbString, Record, ValueType};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fuzz target name, the function it runs, and its seed directory.
type Target = (&'static str, fn(&[u8]), &'static str);

const TARGETS: [Target; 9] = [
    ("whole_file", exercise::whole_file, "rdb"),
    ("analyze", exercise::analyze, "rdb"),
    ("listpack", exercise::listpack, "listpack"),
    ("ziplist", exercise::ziplist, "ziplist"),
    ("intset", exercise::intset, "intset"),
    ("zipmap", exercise::zipmap, "zipmap"),
    ("lzf", exercise::lzf, "lzf"),
    ("stream", exercise::stream_value, "stream"),
    ("module", exercise::module_value, "module"),
];

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}

/// Runs every file of `dir_of(target)` through its target; each input must
/// finish without a panic, within `limit`.
fn replay(dir_of: impl Fn(&Target) -> PathBuf, limit: Duration) -> usize {
    let mut failures = Vec::new();
    let mut cases = 0;
    for target in TARGETS {
        let (name, run, _) = target;
        for path in files_in(&dir_of(&target)) {
            cases += 1;
            let data = std::fs::read(&path).unwrap();
            let started = Instant::now();
            if catch_unwind(AssertUnwindSafe(|| run(&data))).is_err() {
                failures.push(format!("{name}: {} panics", path.display()));
            }
            if started.elapsed() > limit {
                failures.push(format!("{name}: {} took {:?}", path.display(), started.elapsed()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    cases
}

#[test]
fn fuzz_crash_inputs_stay_fixed() {
    let dir = root().join("crates/rdblens/tests/fuzz_regressions");
    let cases = replay(|(name, _, _)| dir.join(name), Duration::from_secs(2));
    // The five inputs committed under analyze/: fewer means the folder was
    // moved or emptied and nothing was replayed.
    assert!(
        cases >= 5,
        "{cases} crash inputs replayed from {}: expected at least 5",
        dir.display()
    );
}

#[test]
fn fuzz_seeds_run_clean() {
    let dir = root().join("fuzz/seeds");
    let cases = replay(|(_, _, seeds)| dir.join(seeds), Duration::from_secs(5));
    assert!(cases > 100, "{cases} seeds: run write_fuzz_seeds");
}

// ---- the seed corpus -------------------------------------------------------

/// A length field: `Ok(n)`, or `Err(e)` for the special encoding `0xC0 | e`.
fn length(b: &[u8], pos: &mut usize) -> Option<Result<u64, u8>> {
    let first = *b.get(*pos)?;
    *pos += 1;
    let take = |pos: &mut usize, n: usize| -> Option<u64> {
        let bytes = b.get(*pos..*pos + n)?;
        *pos += n;
        Some(bytes.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    };
    Some(match first >> 6 {
        0 => Ok(u64::from(first & 0x3f)),
        1 => Ok((u64::from(first & 0x3f) << 8) | take(pos, 1)?),
        2 if first == 0x80 => Ok(take(pos, 4)?),
        2 => Ok(take(pos, 8)?),
        _ => Err(first & 0x3f),
    })
}

/// Reads a string; LZF strings are decompressed and also kept as LZF seeds
/// (declared length as u16 LE, then the compressed bytes).
fn string(b: &[u8], pos: &mut usize, lzf: &mut Vec<Vec<u8>>) -> Option<Vec<u8>> {
    match length(b, pos)? {
        Ok(n) => {
            let s = b.get(*pos..*pos + n as usize)?.to_vec();
            *pos += n as usize;
            Some(s)
        }
        Err(3) => {
            let clen = length(b, pos)?.ok()? as usize;
            let ulen = length(b, pos)?.ok()? as usize;
            let compressed = b.get(*pos..*pos + clen)?;
            *pos += clen;
            if let Ok(short) = u16::try_from(ulen) {
                lzf.push([&short.to_le_bytes()[..], compressed].concat());
            }
            let mut out = Vec::new();
            lzf_decompress(compressed, ulen, &mut out).ok()?;
            Some(out)
        }
        Err(e) => {
            *pos += [1, 2, 4].get(usize::from(e)).copied()?;
            None
        }
    }
}

#[derive(Default)]
struct Seeds {
    by_kind: BTreeMap<&'static str, Vec<Vec<u8>>>,
}

impl Seeds {
    fn add(&mut self, kind: &'static str, bytes: Vec<u8>) {
        self.by_kind.entry(kind).or_default().push(bytes);
    }

    /// The blobs inside one entry's value.
    fn add_entry(&mut self, e: &Entry<'_>) {
        use ValueType::*;
        let v = e.value;
        let mut lzf = Vec::new();
        let mut pos = 0;
        match e.value_type {
            HashZipmap => self.add_blob("zipmap", string(v, &mut pos, &mut lzf)),
            ListZiplist | ZSetZiplist | HashZiplist => {
                self.add_blob("ziplist", string(v, &mut pos, &mut lzf))
            }
            SetIntset => self.add_blob("intset", string(v, &mut pos, &mut lzf)),
            HashListpack | ZSetListpack | SetListpack | HashListpackExPreGa => {
                self.add_blob("listpack", string(v, &mut pos, &mut lzf))
            }
            HashListpackEx => {
                pos = 8;
                self.add_blob("listpack", string(v, &mut pos, &mut lzf))
            }
            ListQuicklist | ListQuicklist2 => {
                let n = length(v, &mut pos).and_then(Result::ok).unwrap_or(0);
                for _ in 0..n {
                    let kind = if e.value_type == ListQuicklist {
                        "ziplist"
                    } else if length(v, &mut pos) == Some(Ok(2)) {
                        "listpack"
                    } else {
                        "plain"
                    };
                    let blob = string(v, &mut pos, &mut lzf);
                    if kind != "plain" {
                        self.add_blob(kind, blob);
                    }
                }
            }
            String => {
                string(v, &mut pos, &mut lzf);
            }
            Module2 => self.add("module", [&[0u8][..], v].concat()),
            ty => {
                if let Some(version) = ty.stream_version() {
                    self.add("stream", [&[version - 1][..], v].concat());
                    for node in e.stream().unwrap().unwrap().nodes() {
                        let lp = node.unwrap().listpack;
                        self.add("listpack", lp.to_vec().unwrap());
                        if let RdbString::Lzf { compressed, len } = lp {
                            if let Ok(short) = u16::try_from(len) {
                                lzf.push([&short.to_le_bytes()[..], compressed].concat());
                            }
                        }
                    }
                }
            }
        }
        for l in lzf {
            self.add("lzf", l);
        }
    }

    fn add_blob(&mut self, kind: &'static str, blob: Option<Vec<u8>>) {
        if let Some(b) = blob {
            self.add(kind, b);
        }
    }

    /// At most `max` distinct seeds of at most `max_len` bytes, spread over the sizes.
    fn pick(&self, kind: &str, max: usize, max_len: usize) -> Vec<Vec<u8>> {
        let all: BTreeSet<(usize, &Vec<u8>)> = self
            .by_kind
            .get(kind)
            .into_iter()
            .flatten()
            .filter(|b| b.len() <= max_len)
            .map(|b| (b.len(), b))
            .collect();
        let all: Vec<&Vec<u8>> = all.into_iter().map(|(_, b)| b).collect();
        if all.len() <= max {
            return all.into_iter().cloned().collect();
        }
        (0..max)
            .map(|i| all[i * (all.len() - 1) / (max - 1)].clone())
            .collect()
    }
}

/// A small file with every layout a fixture has: its header records, then per
/// value type its smallest entry and its largest under 512 bytes, the first
/// entries with an expiry, IDLE or FREQ prefix, then EOF and a valid CRC.
fn sampler(data: &[u8]) -> Vec<u8> {
    let rdb = Rdb::new(data).unwrap();
    let entries: Vec<Entry<'_>> = rdb.entries().map(|e| e.unwrap()).collect();
    let Some(first) = entries.first() else {
        return data.to_vec();
    };
    let mut chosen = BTreeSet::new();
    let types: BTreeSet<ValueType> = entries.iter().map(|e| e.value_type).collect();
    for ty in types {
        let of_type = || entries.iter().filter(move |e| e.value_type == ty);
        chosen.extend(of_type().min_by_key(|e| e.record_len).map(|e| e.offset));
        chosen.extend(
            of_type()
                .filter(|e| e.record_len <= 512)
                .max_by_key(|e| e.record_len)
                .map(|e| e.offset),
        );
    }
    for has in [
        |e: &Entry<'_>| e.expiry.is_some(),
        |e: &Entry<'_>| e.idle_seconds.is_some(),
        |e: &Entry<'_>| e.lfu_freq.is_some(),
    ] {
        chosen.extend(entries.iter().find(|e| has(e)).map(|e| e.offset));
    }
    let mut out = data[..first.offset as usize].to_vec();
    for e in entries.iter().filter(|e| chosen.contains(&e.offset)) {
        out.extend_from_slice(&data[e.offset as usize..(e.offset + e.record_len) as usize]);
    }
    out.push(0xff);
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn fixture_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in files_in_dirs(&root().join("fixtures/rdb")) {
        out.extend(
            files_in(&dir)
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "rdb")),
        );
    }
    out
}

fn files_in_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

fn write_dir(dir: &Path, seeds: &[Vec<u8>]) {
    std::fs::create_dir_all(dir).unwrap();
    for old in files_in(dir) {
        if old.file_name().unwrap().to_string_lossy().starts_with("fx-") {
            std::fs::remove_file(old).unwrap();
        }
    }
    for s in seeds {
        // Salted in front: the CRC-64 of a file that ends in its own valid
        // CRC is always the same residue.
        let name = format!("fx-{:016x}", crc64(&[&b"#"[..], s].concat()));
        std::fs::write(dir.join(name), s).unwrap();
    }
}

#[test]
#[ignore = "writes fuzz/seeds; run by hand (docs/fuzzing.md)"]
fn write_fuzz_seeds() {
    let mut seeds = Seeds::default();
    let mut rdb_seeds = Vec::new();
    for path in fixture_files() {
        let data = std::fs::read(&path).unwrap();
        let scenario = path.file_stem().unwrap().to_string_lossy().into_owned();
        if scenario == "all-types" || scenario == "empty" && path.to_string_lossy().contains("redis-8.4") {
            rdb_seeds.push(sampler(&data));
        }
        let rdb = Rdb::new(&data).unwrap();
        let mut records = rdb.records();
        loop {
            let start = records.offset() as usize;
            let Some(record) = records.next() else { break };
            match record.unwrap() {
                Record::Entry(e) => seeds.add_entry(&e),
                Record::ModuleAux(_) => {
                    let end = records.offset() as usize;
                    seeds.add("module", [&[1u8][..], &data[start + 1..end]].concat());
                }
                _ => {}
            }
        }
    }
    // A KEY_META prefix (RDB 13+; no fixture has one): one class, its
    // 4-byte spec, UINT 5, EOF.
    seeds.add("module", vec![2, 1, 0, 0, 0, 0, 2, 5, 0]);
    // Zipmaps (RDB 2-6 hashes; no fixture is that old): "a" => "xy" with a
    // free byte, "bc" => ""; and a 300-byte value behind a 5-byte length.
    seeds.add(
        "zipmap",
        vec![2, 1, b'a', 2, 1, b'x', b'y', 0, 2, b'b', b'c', 0, 0, 0xff],
    );
    let mut long = vec![1, 3, b'k', b'e', b'y', 254];
    long.extend_from_slice(&300u32.to_le_bytes());
    long.push(0);
    long.extend_from_slice(&[b'v'; 300]);
    long.push(0xff);
    seeds.add("zipmap", long);
    let dir = root().join("fuzz/seeds");
    write_dir(&dir.join("rdb"), &rdb_seeds);
    for (kind, max, max_len) in [
        ("listpack", 40, 1024),
        ("ziplist", 40, 1024),
        ("intset", 20, 1024),
        ("zipmap", 20, 1024),
        ("lzf", 30, 2048),
        ("stream", 30, 4096),
        ("module", 30, 2048),
    ] {
        let picked = seeds.pick(kind, max, max_len);
        assert!(!picked.is_empty(), "no {kind} seeds");
        write_dir(&dir.join(kind), &picked);
    }
}
