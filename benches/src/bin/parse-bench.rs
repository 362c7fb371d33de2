//! Whole-file parse throughput on one dump, side by side with the crates.io
//! `rdb` crate, in one run:
//!
//!     cargo run --release -p rdblens-bench --bin parse-bench -- FILE [--runs N]
//!
//! Each measurement is the best of N runs with the page cache warm (the
//! first touch of the file is not timed).

use std::hint::black_box;
use std::io::BufReader;
use std::time::{Duration, Instant};

use rdblens_parser::{crc64, RdbFile, Record, Scratch};

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..runs {
        let start = Instant::now();
        let v = f();
        best = best.min(start.elapsed());
        out = Some(v);
    }
    (best, out.expect("runs >= 1"))
}

fn report(name: &str, bytes: usize, t: Duration, note: &str) {
    let mb = bytes as f64 / 1e6;
    println!(
        "| {name:<40} | {:>9.3} | {:>9.0} | {note} |",
        t.as_secs_f64(),
        mb / t.as_secs_f64()
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut runs = 3usize;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(3).max(1),
            _ => path = Some(a),
        }
    }
    let Some(path) = path else {
        eprintln!("usage: parse-bench FILE [--runs N]");
        std::process::exit(2);
    };
    let file = RdbFile::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let bytes = file.bytes();
    let size = bytes.len();
    // Warm the page cache and the mapping.
    black_box(bytes.iter().fold(0u64, |a, &b| a.wrapping_add(u64::from(b))));

    println!(
        "file: {path} ({:.1} MB), best of {runs} runs, 1 thread",
        size as f64 / 1e6
    );
    println!("| measurement | seconds | MB/s | notes |");
    println!("|---|---:|---:|---|");

    let (t, sum) = best_of(runs, || {
        bytes.iter().fold(0u64, |a, &b| a.wrapping_add(u64::from(b)))
    });
    report(
        "floor: sum every byte of the mapping",
        size,
        t,
        &format!("sum {sum}"),
    );

    let (t, _) = best_of(runs, || crc64(black_box(bytes)));
    report("rdblens: CRC-64 of the file", size, t, "");

    let rdb = file.rdb().expect("a valid dump");
    let (t, keys) = best_of(runs, || {
        let mut keys = 0u64;
        for r in rdb.records() {
            if let Record::Entry(e) = r.expect("parse") {
                black_box(e.value);
                keys += 1;
            }
        }
        keys
    });
    report("rdblens: walk entry boundaries", size, t, &format!("{keys} keys"));

    let (t, elements) = best_of(runs, || {
        let mut scratch = Scratch::new();
        let mut elements = 0u64;
        for e in rdb.entries() {
            elements += e
                .expect("parse")
                .stats_with(&mut scratch)
                .expect("decode")
                .elements;
        }
        elements
    });
    report(
        "rdblens: walk + decode every value",
        size,
        t,
        &format!("{elements} elements, LZF included"),
    );

    let (t, values) = best_of(runs, || {
        let f = std::fs::File::open(&path).expect("open");
        let decoder = rdb::RdbDecoder::new(BufReader::with_capacity(1 << 20, f), rdb::filter::Simple::new())
            .expect("rdb crate decoder");
        let mut values = 0u64;
        for v in decoder {
            black_box(v.expect("rdb crate parse"));
            values += 1;
        }
        values
    });
    report(
        "rdb crate 0.4: parse only (values dropped)",
        size,
        t,
        &format!("{values} values"),
    );
}
