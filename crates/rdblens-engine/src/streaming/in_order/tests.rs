//! A stream's records are the mapped file's, in the same order, whatever
//! its chunk size and thread count, cut short or whole.

use super::*;
use crate::streaming::tests::{fixtures, opts};

/// What the tests compare of a key: its name, estimate and encoding.
fn line(f: &KeyFacts<'_>, _: &Settings, _: &mut Vec<u8>) -> String {
    format!(
        "{:?} db{} {} {:?} {} {:?} {}",
        f.key, f.db, f.memory, f.encoding, f.elements, f.expiry_ms, f.serialized_bytes
    )
}

type Records = Vec<KeyItem<String>>;

fn streamed(data: &[u8], opts: &Options, chunk_bytes: usize) -> Result<(Records, FileInfo), AnalysisError> {
    let mut source: &[u8] = data;
    let mut records = Vec::new();
    let (info, read_error) = in_order(&mut source, "dump", opts, chunk_bytes, line, |item, _| {
        records.push(item);
        true
    })?;
    assert!(read_error.is_none());
    Ok((records, info))
}

fn mapped(data: &[u8], opts: &Options) -> Result<(Records, FileInfo), AnalysisError> {
    let mut records = Vec::new();
    let info = crate::map_keys_in_order(
        data,
        "dump",
        opts,
        |f, s| line(f, s, &mut Vec::new()),
        |item| {
            records.push(item);
            true
        },
    )?;
    Ok((records, info))
}

/// With the build given, every fixture streamed in chunks of 61 bytes
/// (most records cut, many longer than a chunk) and of 64 KiB, on one and
/// two threads, gives the mapped file's records and what it learnt of it.
#[test]
fn every_fixture_streamed_gives_the_records_of_its_bytes() {
    let files = fixtures();
    assert!(files.len() >= 50, "{} fixtures", files.len());
    let mut keys = 0;
    for path in files {
        let data = std::fs::read(&path).expect("fixture"); // ok: unit test
        for (threads, chunk, quantum) in [(2, 61, 16), (1, 64 << 10, 8), (2, 4096, 8)] {
            let opts = Options {
                quantum: Some(quantum),
                ..opts(threads, 0)
            };
            let (want, want_info) = mapped(&data, &opts).expect("mapped"); // ok: unit test
            let (got, got_info) = streamed(&data, &opts, chunk).expect("streamed"); // ok: unit test
            let at = format!("{}: {threads} threads, chunks of {chunk}", path.display());
            assert_eq!(got, want, "{at}");
            assert_eq!(got_info, want_info, "{at}");
            keys += got.len();
        }
    }
    assert!(keys > 10_000, "{keys} records");
}

/// The Valkey 7.2.7 fixture of every type, and options that estimate it
/// for quantum 16 on two threads.
fn all_types_on_two_threads() -> (Vec<u8>, Options) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/rdb/valkey-7.2.7/all-types.rdb"
    );
    let data = std::fs::read(path).expect("fixture"); // ok: unit test
    let opts = Options {
        quantum: Some(16),
        ..opts(2, 0)
    };
    (data, opts)
}

/// A dump cut anywhere gives the records before the cut and stops where
/// the mapped file's walk stops.
#[test]
fn a_stream_cut_short_gives_the_records_before_the_cut() {
    let (data, opts) = all_types_on_two_threads();
    let mut stopped = 0;
    for i in 0..24 {
        let cut = 10 + (i * 7919 + 13) % (data.len() - 10);
        match (mapped(&data[..cut], &opts), streamed(&data[..cut], &opts, 97)) {
            (Ok(want), Ok(got)) => {
                assert_eq!(got, want, "cut at {cut}");
                stopped += usize::from(got.1.incomplete.is_some());
            }
            (Err(want), Err(got)) => assert_eq!(got.to_string(), want.to_string(), "cut at {cut}"),
            (want, got) => panic!("cut at {cut}: {want:?} vs {got:?}"), // ok: unit test
        }
    }
    assert!(stopped >= 20, "{stopped} cuts reported where they stop");
}

/// A sink that stops takes no more records, and the stream is read no
/// further than the chunks the workers had taken.
#[test]
fn a_sink_that_stops_ends_the_walk() {
    let (data, opts) = all_types_on_two_threads();
    let mut source: &[u8] = &data;
    let mut taken = 0;
    let (info, _) = in_order(&mut source, "dump", &opts, 61, line, |_, _| {
        taken += 1;
        taken < 3
    })
    .expect("streamed"); // ok: unit test
    assert_eq!(taken, 3);
    // Two workers, two chunks ahead each, of about 61 bytes.
    assert!(
        info.size < data.len() as u64 / 2,
        "read {} of {}",
        info.size,
        data.len()
    );
}

/// Whether a stream's records need the whole dump's evidence: with a
/// `used-mem` and no build given, yes; with `--jemalloc-quantum`, no.
/// Either way the bytes read to tell are the dump's first.
#[test]
fn a_stream_needs_the_evidence_only_where_its_build_is_unknown() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/rdb/redis-7.0.15/all-types.rdb"
    );
    let data = std::fs::read(path).expect("fixture"); // ok: unit test
    for (quantum, needs) in [(None, true), (Some(8), false), (Some(16), false)] {
        let opts = Options {
            quantum,
            ..opts(1, 0)
        };
        let mut source: &[u8] = &data;
        let (got, head) = stream_needs_evidence(&mut source, &opts).expect("header"); // ok: unit test
        assert_eq!(got, needs, "quantum {quantum:?}");
        assert!(head.len() >= 9 && data.starts_with(&head), "{} bytes", head.len());
    }
    // Asked to write them all the same, the stream is refused.
    let opts = opts(1, 0);
    let err = streamed(&data, &opts, 4096).expect_err("needs the evidence"); // ok: unit test
    assert!(
        err.to_string().contains("needs the whole dump's evidence"),
        "{err}"
    );
}

/// A source that fails after some bytes ends the stream there: the
/// records before, where the walk stops, and the error.
#[test]
fn a_read_error_ends_the_stream_where_it_happens() {
    struct Failing<'a>(&'a [u8]);
    impl Read for Failing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Err(std::io::Error::other("connection reset"));
            }
            let n = buf.len().min(self.0.len()).min(1000);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let (data, opts) = all_types_on_two_threads();
    let cut = data.len() / 2;
    let mut records = Vec::new();
    let (info, read_error) = in_order(
        &mut Failing(&data[..cut]),
        "dump",
        &opts,
        4096,
        line,
        |item, _| {
            records.push(item);
            true
        },
    )
    .expect("partial"); // ok: unit test
    assert_eq!(
        read_error.map(|e| e.to_string()).as_deref(),
        Some("connection reset")
    );
    assert_eq!(info.size, cut as u64);
    let (want, want_info) = mapped(&data[..cut], &opts).expect("mapped"); // ok: unit test
    assert_eq!(records, want);
    assert_eq!(info.incomplete, want_info.incomplete);
    assert!(info.incomplete.is_some());
}
