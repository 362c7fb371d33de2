//! Criterion micro-benchmarks of the decoders on the hot paths of a report:
//!
//!     cargo bench -p rdblens-bench --bench decoders
//!     cargo bench -p rdblens-bench --bench decoders -- lzf   # one group
//!
//! Inputs come from the dumps in `fixtures/rdb` (real servers' output) or are
//! built here; nothing is read from outside the repository. Results:
//! `benches/README.md`.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rdblens_engine::analyze_bytes;
use rdblens_engine::key_facts;
use rdblens_memory::Profile;
use rdblens_parser::blob::{Listpack, Ziplist};
use rdblens_parser::{Element, Entry, Rdb, RdbString, Record, Scratch};
use rdblens_summary::acc::prefix::Prefixes;
use rdblens_summary::acc::Accumulate;
use rdblens_summary::{KeyFacts, Options};

/// A fixture dump, read from the repository.
fn fixture(name: &str) -> Vec<u8> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "fixtures", "rdb", name]
        .iter()
        .collect();
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn entries<'a>(rdb: &Rdb<'a>) -> Vec<Entry<'a>> {
    rdb.entries().map(|e| e.expect("fixture parses")).collect()
}

fn profile(rdb: &Rdb<'_>) -> Profile {
    let meta = rdb.metadata().expect("metadata");
    let aux = |name: &str| meta.aux_value(name).and_then(|v| v.to_vec().ok());
    let (redis, valkey) = (aux("redis-ver"), aux("valkey-ver"));
    Profile::from_aux(
        redis.as_deref().and_then(|v| std::str::from_utf8(v).ok()),
        valkey.as_deref().and_then(|v| std::str::from_utf8(v).ok()),
        rdb.version(),
        rdb.dialect(),
    )
}

/// Just enough of the RDB value layouts to pull out the strings that hold
/// compact blobs (listpacks, ziplists), LZF-compressed or not.
struct Cursor<'a> {
    b: &'a [u8],
    p: usize,
}

impl<'a> Cursor<'a> {
    fn byte(&mut self) -> u8 {
        self.p += 1;
        self.b[self.p - 1]
    }

    fn bytes(&mut self, n: usize) -> &'a [u8] {
        self.p += n;
        &self.b[self.p - n..self.p]
    }

    /// A length, or `Err` with the special encoding's number.
    fn length(&mut self) -> Result<usize, u8> {
        let first = self.byte();
        match first >> 6 {
            0 => Ok(usize::from(first & 0x3f)),
            1 => Ok((usize::from(first & 0x3f) << 8) | usize::from(self.byte())),
            2 if first == 0x80 => Ok(u32::from_be_bytes(self.bytes(4).try_into().unwrap()) as usize),
            2 => Ok(u64::from_be_bytes(self.bytes(8).try_into().unwrap()) as usize),
            _ => Err(first & 0x3f),
        }
    }

    fn string(&mut self) -> RdbString<'a> {
        match self.length() {
            Ok(n) => RdbString::Raw(self.bytes(n)),
            Err(0) => RdbString::Int(i64::from(self.byte() as i8)),
            Err(1) => RdbString::Int(i64::from(i16::from_le_bytes(self.bytes(2).try_into().unwrap()))),
            Err(2) => RdbString::Int(i64::from(i32::from_le_bytes(self.bytes(4).try_into().unwrap()))),
            Err(3) => {
                let clen = self.length().unwrap();
                let len = self.length().unwrap();
                RdbString::Lzf {
                    compressed: self.bytes(clen),
                    len,
                }
            }
            Err(e) => panic!("string encoding {e}"),
        }
    }
}

#[derive(Default)]
struct Blobs<'a> {
    listpacks: Vec<Vec<u8>>,
    ziplists: Vec<Vec<u8>>,
    /// Every LZF string: keys, string values and compressed blobs.
    lzf: Vec<RdbString<'a>>,
}

fn blobs<'a>(entries: &[Entry<'a>]) -> Blobs<'a> {
    let mut out = Blobs::default();
    for e in entries {
        if e.key.is_compressed() {
            out.lzf.push(e.key);
        }
        let mut c = Cursor { b: e.value, p: 0 };
        let mut found = Vec::new();
        match e.value_type.byte() {
            0 => {
                let s = c.string();
                if s.is_compressed() {
                    out.lzf.push(s);
                }
            }
            10 | 12 | 13 => found.push((false, c.string())),
            14 => {
                for _ in 0..c.length().unwrap() {
                    found.push((false, c.string()));
                }
            }
            16 | 17 | 20 => found.push((true, c.string())),
            18 => {
                for _ in 0..c.length().unwrap() {
                    // Container 2 is a packed listpack; 1 a plain element.
                    let container = c.length().unwrap();
                    let s = c.string();
                    if container == 2 {
                        found.push((true, s));
                    } else if s.is_compressed() {
                        out.lzf.push(s);
                    }
                }
            }
            _ => {}
        }
        for (is_listpack, s) in found {
            if s.is_compressed() {
                out.lzf.push(s);
            }
            let bytes = s.to_vec().expect("blob decompresses");
            if is_listpack {
                out.listpacks.push(bytes);
            } else {
                out.ziplists.push(bytes);
            }
        }
    }
    out
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
}

/// Walking a set of 100,000 members without decoding them: a length (6-bit,
/// 14-bit or an INT16 special encoding) and a skip per member.
fn rdb_length(c: &mut Criterion) {
    fn len(n: usize, out: &mut Vec<u8>) {
        match n {
            0..=63 => out.push(n as u8),
            64..=16383 => out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]),
            _ => {
                out.push(0x80);
                out.extend_from_slice(&(n as u32).to_be_bytes());
            }
        }
    }
    const MEMBERS: usize = 100_000;
    let mut data = b"REDIS0011\xfe\x00\x02".to_vec();
    len(9, &mut data);
    data.extend_from_slice(b"bench:set");
    len(MEMBERS, &mut data);
    let long = [b'x'; 100];
    for i in 0..MEMBERS {
        match i % 10 {
            0..=6 => {
                let m = format!("member:{i}");
                len(m.len(), &mut data);
                data.extend_from_slice(m.as_bytes());
            }
            7 | 8 => {
                len(long.len(), &mut data);
                data.extend_from_slice(&long);
            }
            _ => {
                data.push(0xc1);
                data.extend_from_slice(&(i as i16).to_le_bytes());
            }
        }
    }
    data.push(0xff);
    data.extend_from_slice(&[0; 8]);
    let rdb = Rdb::new(&data).expect("built dump");

    let mut g = c.benchmark_group("rdb_length");
    g.throughput(Throughput::Elements(MEMBERS as u64));
    g.bench_function("walk_set_100k_members", |b| {
        b.iter(|| {
            let mut n = 0;
            for r in rdb.records() {
                if let Record::Entry(e) = r.expect("parse") {
                    n += black_box(e.value).len();
                }
            }
            n
        })
    });
    g.finish();
}

/// A small xorshift generator, so inputs are the same on every run.
fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// A greedy LZF compressor in the manner of liblzf (a hash of the next 3
/// bytes finds the last position they occurred at, up to 8 KiB back).
fn lzf_compress(input: &[u8]) -> Vec<u8> {
    fn literals(out: &mut Vec<u8>, bytes: &[u8]) {
        for run in bytes.chunks(32) {
            out.push(run.len() as u8 - 1);
            out.extend_from_slice(run);
        }
    }
    let hash = |i: usize| {
        let v = u32::from(input[i]) << 16 | u32::from(input[i + 1]) << 8 | u32::from(input[i + 2]);
        (v.wrapping_mul(2654435761) >> 18) as usize
    };
    let mut table = vec![usize::MAX; 1 << 14];
    let mut out = Vec::new();
    let (mut i, mut pending) = (0, 0);
    while i + 2 < input.len() {
        let candidate = std::mem::replace(&mut table[hash(i)], i);
        if candidate != usize::MAX
            && i - candidate <= 8192
            && input[candidate..candidate + 3] == input[i..i + 3]
        {
            let max = (input.len() - i).min(264);
            let mut n = 3;
            while n < max && input[candidate + n] == input[i + n] {
                n += 1;
            }
            literals(&mut out, &input[pending..i]);
            let (d, l) = (i - candidate - 1, n - 2);
            if l < 7 {
                out.push((l << 5 | d >> 8) as u8);
            } else {
                out.push((7 << 5 | d >> 8) as u8);
                out.push((l - 7) as u8);
            }
            out.push(d as u8);
            for j in i + 1..(i + n).min(input.len() - 2) {
                table[hash(j)] = j;
            }
            i += n;
            pending = i;
        } else {
            i += 1;
        }
    }
    literals(&mut out, &input[pending..]);
    out
}

/// Values like the benchmark corpus's (JSON documents, prose, HTML), 100 B
/// to 4 KiB each, each compressed on its own as Redis does.
fn text_values() -> Vec<(Vec<u8>, Vec<u8>)> {
    const WORDS: [&str; 24] = [
        "the", "order", "shipped", "customer", "session", "cache", "page", "quick", "brown", "fox",
        "latency", "redis", "memory", "value", "lorem", "ipsum", "dolor", "amet", "review", "stars",
        "account", "premium", "delivery", "status",
    ];
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let word = |next: &mut dyn FnMut() -> u64| WORDS[(next() % WORDS.len() as u64) as usize];
    (0..400)
        .map(|v| {
            let target = 100 + (next() % 3900) as usize;
            let mut s = String::new();
            while s.len() < target {
                match v % 3 {
                    0 => {
                        let id = next() % 1_000_000;
                        s += &format!(
                            r#"{{"id":{id},"name":"{} {}","email":"{}{id}@example.com","score":{}.{},"tags":["{}","{}"],"active":{}}}"#,
                            word(&mut next),
                            word(&mut next),
                            word(&mut next),
                            next() % 1000,
                            next() % 100,
                            word(&mut next),
                            word(&mut next),
                            next().is_multiple_of(2)
                        );
                    }
                    1 => {
                        s += word(&mut next);
                        s += if next().is_multiple_of(9) { ". " } else { " " };
                    }
                    _ => {
                        s += &format!(
                            r#"<div class="{}"><a href="/{}/{}">{} {}</a></div>"#,
                            word(&mut next),
                            word(&mut next),
                            next() % 10_000,
                            word(&mut next),
                            word(&mut next)
                        );
                        s += "\n    ";
                    }
                }
            }
            let raw = s.into_bytes();
            (lzf_compress(&raw), raw)
        })
        .collect()
}

fn lzf(c: &mut Criterion) {
    let text = text_values();
    let synthetic: Vec<RdbString<'_>> = text
        .iter()
        .map(|(compressed, raw)| RdbString::Lzf {
            compressed,
            len: raw.len(),
        })
        .collect();
    for (s, (_, raw)) in synthetic.iter().zip(&text) {
        assert_eq!(
            &s.to_vec().expect("valid LZF"),
            raw,
            "the bench's compressor is wrong"
        );
    }
    let data = fixture("redis-7.4.5/all-types.rdb");
    let rdb = Rdb::new(&data).expect("fixture");
    let entries = entries(&rdb);
    let all = blobs(&entries).lzf;
    // The 1 MiB string of one repeated pattern apart: it would outweigh the rest.
    let (big, small): (Vec<RdbString<'_>>, Vec<RdbString<'_>>) = all.iter().partition(|s| s.len() > 65536);
    let mut g = c.benchmark_group("lzf");
    for (name, set) in [
        ("text_json_html", &synthetic),
        ("fixture_strings_and_nodes", &small),
        ("1mib_repetitive", &big),
    ] {
        let out: usize = set.iter().map(|s| s.len()).sum();
        g.throughput(Throughput::Bytes(out as u64));
        let mut scratch = Vec::new();
        g.bench_function(format!("{name}_{}x", set.len()), |b| {
            b.iter(|| {
                let mut sum = 0usize;
                for s in set {
                    sum += s.bytes_in(&mut scratch, 0).expect("valid LZF").len();
                }
                sum
            })
        });
        // The crates.io decoders on the same input: `lzf` (deprecated; a
        // fresh zeroed Vec per call) and `lzf-rust` (into a buffer).
        let raw: Vec<(&[u8], usize)> = set
            .iter()
            .filter_map(|s| match s {
                RdbString::Lzf { compressed, len } => Some((*compressed, *len)),
                _ => None,
            })
            .collect();
        g.bench_function(format!("{name}_{}x_lzf_crate", set.len()), |b| {
            b.iter(|| {
                let mut sum = 0usize;
                for (compressed, len) in &raw {
                    sum += lzf::decompress(compressed, *len).expect("valid LZF").len();
                }
                sum
            })
        });
        let mut buf = Vec::new();
        g.bench_function(format!("{name}_{}x_lzf_rust_crate", set.len()), |b| {
            b.iter(|| {
                let mut sum = 0usize;
                for (compressed, len) in &raw {
                    if buf.len() < *len {
                        buf.resize(*len, 0);
                    }
                    sum += lzf_rust::decompress(compressed, &mut buf[..*len]).expect("valid LZF");
                }
                sum
            })
        });
    }
    g.finish();
}

fn blob_walks(c: &mut Criterion) {
    let mut g = c.benchmark_group("blob_walk");
    for (name, file, listpack) in [
        ("listpack", "redis-7.4.5/all-types.rdb", true),
        ("ziplist", "redis-6.2.14/all-types.rdb", false),
    ] {
        let data = fixture(file);
        let rdb = Rdb::new(&data).expect("fixture");
        let entries = entries(&rdb);
        let found = blobs(&entries);
        let set = if listpack { found.listpacks } else { found.ziplists };
        // Elements and a sum over them (a length or an integer), the way a
        // visitor reads each element.
        let walk = |b: &[u8]| -> (u64, u64) {
            fn fold<'e>(acc: (u64, u64), e: Element<'e>) -> (u64, u64) {
                let v = match e {
                    Element::Bytes(b) => b.len() as u64,
                    Element::Int(i) => i as u64,
                };
                (acc.0 + 1, acc.1.wrapping_add(v))
            }
            if listpack {
                let list = Listpack::new(b).expect("listpack");
                list.iter().fold((0, 0), |acc, e| fold(acc, e.expect("element")))
            } else {
                let list = Ziplist::new(b).expect("ziplist");
                list.iter().fold((0, 0), |acc, e| fold(acc, e.expect("entry")))
            }
        };
        let count = |b: &[u8]| walk(b).0;
        let elements: u64 = set.iter().map(|b| count(b)).sum();
        g.throughput(Throughput::Elements(elements));
        g.bench_function(format!("{name}_{}_blobs", set.len()), |b| {
            b.iter(|| {
                set.iter().fold((0u64, 0u64), |acc, b| {
                    let (n, sum) = walk(b);
                    (acc.0 + n, acc.1.wrapping_add(sum))
                })
            })
        });
    }
    g.finish();
}

fn memory_estimate(c: &mut Criterion) {
    let data = fixture("redis-7.4.5/all-types.rdb");
    let rdb = Rdb::new(&data).expect("fixture");
    let entries = entries(&rdb);
    let profile = profile(&rdb);
    let mut scratch = Scratch::new();
    let mut g = c.benchmark_group("memory");
    g.measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(entries.len() as u64));
    g.bench_function(format!("estimate_all_types_{}_keys", entries.len()), |b| {
        b.iter(|| {
            let mut total = 0u64;
            for e in &entries {
                let est = rdblens_memory::estimate(e, &profile, &mut scratch).expect("estimate");
                total += est.memory.unwrap_or(0);
            }
            total
        })
    });
    g.finish();
}

/// Synthetic key names in the shapes of `benches/gen_corpus.py`.
fn key_names(n: usize) -> Vec<Vec<u8>> {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|_| {
            let r = next();
            let id = r >> 40;
            let name = match r % 10 {
                0..=2 => format!("cache:page:{id}"),
                3 | 4 => format!("session:{:016x}", next()),
                5 => format!("rate:10.{}.{}.{}", id % 256, (id >> 8) % 256, (id >> 16) % 256),
                6 => {
                    let part = ["profile", "friends", "tags", "history"][(id % 4) as usize];
                    format!("user:{id}:{part}")
                }
                7 => format!("order:{id}:items"),
                8 => format!("lb:game{}:{}", id % 20, id % 7),
                _ => format!("feed{id}"),
            };
            name.into_bytes()
        })
        .collect()
}

fn prefix_aggregation(c: &mut Criterion) {
    let data = fixture("redis-7.4.5/all-types.rdb");
    let rdb = Rdb::new(&data).expect("fixture");
    let entries = entries(&rdb);
    let profile = profile(&rdb);
    let mut scratch = Scratch::new();
    let first = &entries[0];
    let first_key = first.key_bytes().expect("key").into_owned();
    let template = key_facts(
        first,
        &first_key,
        &rdblens_memory::Estimator::new(&profile),
        &mut scratch,
    )
    .expect("facts");
    const KEYS: usize = 100_000;
    let names = key_names(KEYS);
    let facts: Vec<KeyFacts<'_>> = names
        .iter()
        .enumerate()
        .map(|(i, k)| KeyFacts {
            key: k,
            memory: 50 + (i as u64 * 7919) % 2000,
            expiry_ms: (i % 5 < 3).then_some(2_000_000_000_000 + (i as i64 % 86_400) * 1000),
            ..template.clone()
        })
        .collect();
    let now_ms = 1_900_000_000_000;
    let mut g = c.benchmark_group("prefix");
    g.throughput(Throughput::Elements(KEYS as u64));
    for depth in [2, 4] {
        g.bench_function(format!("add_100k_keys_depth_{depth}"), |b| {
            b.iter(|| {
                let mut p = Prefixes::new(b':', depth, now_ms);
                for f in &facts {
                    p.add(f);
                }
                p
            })
        });
    }
    g.finish();
}

/// The whole analysis of a fixture (one worker): every accumulator, the
/// memory model and the audit's inputs, for comparison with the parts.
fn analysis(c: &mut Criterion) {
    let data = fixture("redis-7.4.5/all-types.rdb");
    let opts = Options {
        threads: 1,
        ..Options::default()
    };
    let mut g = c.benchmark_group("analysis");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("analyze_all_types_7.4.5", |b| {
        b.iter(|| analyze_bytes(&data, "all-types.rdb", &opts).expect("analysis"))
    });
    g.finish();
}

criterion_group! {
    name = decoders;
    config = config();
    targets = rdb_length, lzf, blob_walks, memory_estimate, prefix_aggregation, analysis
}
criterion_main!(decoders);
