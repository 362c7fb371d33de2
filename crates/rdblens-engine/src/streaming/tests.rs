//! A stream gives the summary the same bytes give in memory (a mapped
//! file's pass), whatever its chunk size and thread count: records cut
//! by a chunk's end, records longer than a chunk, a stream cut short.

use super::*;

/// A chunk walker over `source`, the bytes of a dump after its 9-byte
/// magic, in chunks of `chunk_bytes`.
fn walker_after_magic<'s>(
    format: Rdb<'s>,
    source: &'s mut (dyn Read + Send),
    chunk_bytes: usize,
) -> ChunkWalker<'s> {
    ChunkWalker {
        format,
        feed: Feed {
            source,
            read: 9,
            ended: false,
            error: None,
            progress: None,
        },
        pending: Vec::new(),
        start: 0,
        base: 9,
        db: 0,
        crc: Crc64Digest::new(),
        out: WalkOutcome::default(),
        lens: Vec::new(),
        checksum_status: None,
        eof_end: None,
        done: false,
        chunk_bytes,
    }
}

/// Every dump under fixtures/rdb, by path.
pub(super) fn fixtures() -> Vec<std::path::PathBuf> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/rdb");
    let mut found = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(root)];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).expect("fixtures dir"); // ok: unit test
        for entry in entries {
            let path = entry.expect("entry").path(); // ok: unit test
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rdb") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

pub(super) fn opts(threads: usize, sample_evidence_from: usize) -> Options {
    Options {
        threads,
        now_ms: Some(1_700_000_000_000),
        sample_evidence_from,
        batch_entries: 7,
        ..Options::default()
    }
}

/// The first line where the two summaries' JSON differ, if any.
fn first_difference(got: &Summary, want: &Summary) -> Option<String> {
    let json = |s: &Summary| serde_json::to_string_pretty(s).expect("json"); // ok: unit test
    let (g, w) = (json(got), json(want));
    let diff = g.lines().zip(w.lines()).enumerate().find(|(_, (a, b))| a != b);
    match diff {
        Some((i, (a, b))) => Some(format!("line {i}: streamed {a} / mapped {b}")),
        None if got != want => Some("equal JSON, unequal summaries".into()),
        None => None,
    }
}

fn streamed(data: &[u8], opts: &Options, chunk_bytes: usize) -> Summary {
    let mut source: &[u8] = data;
    analyze(&mut source, "dump", opts, chunk_bytes).expect("streamed") // ok: unit test
}

fn mapped(data: &[u8], opts: &Options) -> Summary {
    crate::mainpass::analyze_bytes(data, "dump", opts).expect("mapped") // ok: unit test
}

/// Every fixture, streamed in chunks of 61 bytes (most records cut, many
/// longer than a chunk) and of 64 KiB, on one and two threads, with the
/// evidence sampled as on a big dump, as on a small one (every key's
/// evidence, summed exactly), and from half the dump on (the first half
/// summed exactly, the rest sampled), each key folded for both builds in
/// one pass: the summary of the bytes.
#[test]
fn every_fixture_streamed_gives_the_summary_of_its_bytes() {
    let files = fixtures();
    assert!(files.len() >= 50, "{} fixtures", files.len());
    let mut deferred = 0;
    for path in files {
        let data = std::fs::read(&path).expect("fixture"); // ok: unit test
        let half = data.len() / 2;
        for (threads, sample_from, chunk) in [
            (2, 0, 61),
            (1, 0, 64 << 10),
            (2, usize::MAX, 61),
            (2, half, 61),
            (1, half, 4096),
        ] {
            let opts = opts(threads, sample_from);
            let want = mapped(&data, &opts);
            let got = streamed(&data, &opts, chunk);
            let diff = first_difference(&got, &want);
            assert!(
                diff.is_none(),
                "{}: {threads} threads, chunks of {chunk}: {diff:?}",
                path.display()
            );
            // With a used-mem to compare with, the evidence decides the build.
            if sample_from < data.len() && want.files[0].aux.contains_key("used-mem") {
                deferred += 1;
            }
        }
    }
    // The fold for both builds decided by the evidence ran on many of them.
    assert!(deferred >= 80, "{deferred} dumps decided by the evidence");
}

/// A dump cut anywhere (in a key, a value, the trailer) streamed gives
/// the partial summary the cut bytes give: the same keys, the same offset
/// where it stops.
#[test]
fn a_stream_cut_short_gives_the_partial_summary_of_its_bytes() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/rdb/valkey-7.2.7/all-types.rdb"
    );
    let data = std::fs::read(path).expect("fixture"); // ok: unit test
    let opts = opts(2, 0);
    let mut cuts: Vec<usize> = (0..20)
        .map(|i| 10 + (i * 7919 + 13) % (data.len() - 10))
        .collect();
    cuts.extend([data.len() - 1, data.len() - 8, 9, 5]);
    let mut stopped = 0;
    for cut in cuts {
        let part = &data[..cut];
        match (crate::mainpass::analyze_bytes(part, "dump", &opts), {
            let mut source: &[u8] = part;
            analyze(&mut source, "dump", &opts, 97)
        }) {
            (Ok(want), Ok(got)) => {
                assert_eq!(first_difference(&got, &want), None, "cut at {cut}");
                assert_eq!(got.files[0].size, cut as u64);
                stopped += usize::from(got.files[0].incomplete.is_some());
            }
            (Err(want), Err(got)) => assert_eq!(got.to_string(), want.to_string(), "cut at {cut}"),
            (want, got) => panic!("cut at {cut}: {want:?} vs {got:?}"), // ok: unit test
        }
    }
    assert!(stopped >= 20, "{stopped} cuts reported where they stop");
}

/// A source that fails after some bytes ends the stream there: the walk
/// says where the dump stops, as for a stream cut short.
#[test]
fn a_read_error_ends_the_stream_where_it_happens() {
    struct Failing<'a>(&'a [u8]);
    impl Read for Failing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::Error::other("connection reset"));
            }
            let n = buf.len().min(self.0.len()).min(1000);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/rdb/valkey-7.2.7/all-types.rdb"
    );
    let data = std::fs::read(path).expect("fixture"); // ok: unit test
    let opts = opts(2, 0);
    let cut = data.len() / 2;
    let mut got = analyze(&mut Failing(&data[..cut]), "dump", &opts, 4096).expect("partial"); // ok: unit test
                                                                                              // Said among the file's warnings, the one difference from the bytes in memory.
    assert_eq!(
        got.files[0].warnings.pop().as_deref(),
        Some(format!("reading the stream failed after {cut} bytes: connection reset").as_str())
    );
    let want = mapped(&data[..cut], &opts);
    assert_eq!(first_difference(&got, &want), None);
    let stop = got.files[0].incomplete.as_ref().expect("stopped short"); // ok: unit test
    assert!(stop.offset <= cut as u64 && stop.offset > 9, "{}", stop.offset);
}

/// Chunks are buffers handed back and filled again: a long stream of
/// small records keeps a few in flight, not one per chunk.
#[test]
fn buffers_are_reused_not_accumulated() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/rdb/valkey-7.2.7/all-types.rdb"
    );
    let data = std::fs::read(path).expect("fixture"); // ok: unit test
                                                      // The walker alone, with a recycled buffer given back each time: every
                                                      // chunk after the first two comes in a buffer given back.
    let header = {
        let mut head = data.clone();
        let mut feed = Feed {
            source: &mut &data[..0],
            read: 0,
            ended: true,
            error: None,
            progress: None,
        };
        read_header(&mut feed, &mut head)
    };
    let rdb = Rdb::new(&header).expect("header"); // ok: unit test
    let mut source: &[u8] = &data[9..];
    let mut walker = walker_after_magic(rdb, &mut source, 512);
    walker.crc.update(&data[..9]);
    let mut spare: Option<Vec<u8>> = None;
    let (mut chunks, mut pointers) = (0, std::collections::BTreeSet::new());
    while let Some(chunk) = walker.next_chunk(spare.take()) {
        chunks += 1;
        pointers.insert(chunk.bytes.as_ptr() as usize);
        spare = Some(chunk.bytes);
    }
    let (outcome, size, _) = walker.finish();
    assert_eq!(size, data.len() as u64);
    assert!(outcome.error.is_none() && outcome.checksum == Some(Checksum::Valid));
    assert!(chunks > 20, "{chunks} chunks");
    // Two buffers take turns (the pending one and the one handed out),
    // plus the few that grew for a record longer than a chunk.
    assert!(
        pointers.len() < chunks / 2,
        "{} buffers for {chunks} chunks",
        pointers.len()
    );
}

/// A record far longer than a chunk grows the buffer by what it lacks:
/// a 1 MiB string read in chunks of 4 KiB takes a buffer of about its own
/// size, not the next power of two, and gives the mapped summary.
#[test]
fn a_giant_record_grows_the_buffer_by_what_it_lacks() {
    const LEN: usize = 1 << 20;
    let mut data = b"REDIS0009\xfe\x00\x00\x01k\x80".to_vec();
    data.extend_from_slice(&(LEN as u32).to_be_bytes());
    data.extend((0..LEN).map(|i| (i % 251) as u8));
    data.extend_from_slice(b"\x00\x01z\x01v\xff\0\0\0\0\0\0\0\0");
    let header = data[..11].to_vec();
    let rdb = Rdb::new(&header).expect("header"); // ok: unit test
    let mut source: &[u8] = &data[9..];
    let mut walker = walker_after_magic(rdb, &mut source, 4096);
    let mut largest = 0;
    let mut chunks = 0;
    while let Some(chunk) = walker.next_chunk(None) {
        largest = largest.max(chunk.bytes.capacity());
        chunks += 1;
    }
    assert!(chunks >= 2, "{chunks}");
    assert!(
        largest > LEN && largest < LEN + (64 << 10),
        "a buffer of {largest} bytes"
    );
    let (outcome, size, _) = walker.finish();
    assert_eq!(
        (outcome.keys, outcome.error.is_none(), size),
        (2, true, data.len() as u64)
    );
    let opts = opts(2, 0);
    assert_eq!(
        first_difference(&streamed(&data, &opts, 4096), &mapped(&data, &opts)),
        None
    );
}

/// A damaged length that claims far more than memory holds (2^60 bytes)
/// ends the stream as the same bytes in memory do, without trying to
/// hold what it claims.
#[test]
fn a_length_claiming_more_than_memory_ends_the_stream_as_in_memory() {
    let mut data = b"REDIS0009\xfe\x00\x00\x01k\x81".to_vec();
    data.extend_from_slice(&(1u64 << 60).to_be_bytes());
    data.extend((0..100_000).map(|i| (i % 251) as u8));
    let opts = opts(2, 0);
    let want = mapped(&data, &opts);
    let got = streamed(&data, &opts, 4096);
    assert_eq!(first_difference(&got, &want), None);
    let stop = got.files[0].incomplete.as_ref().expect("stopped"); // ok: unit test
    assert!(
        stop.message.contains("needed 1152921504606846976 bytes"),
        "{}",
        stop.message
    );
}

/// What a walk of a dump's records gave: each record's kind, offset and
/// key, then how it ended (the error, the checksum, the bytes after it).
fn records_of(records: impl IntoIterator<Item = String>, end: String) -> Vec<String> {
    records.into_iter().chain([end]).collect()
}

fn describe(record: &Record<'_>) -> String {
    match record {
        Record::Entry(e) => format!("entry {} db {} {:?} {}", e.offset, e.db, e.key, e.record_len),
        Record::Eof(e) => format!("eof {} {:?}", e.offset, e.checksum),
        other => format!("{other:?}"),
    }
}

/// The records of a walk in memory, as the mapped file's `check` walks them.
fn walked_in_memory(data: &[u8]) -> Vec<String> {
    let Ok(rdb) = Rdb::new(data) else {
        return records_of([], "no header".into());
    };
    let mut seen = Vec::new();
    let mut end = None;
    for record in rdb.records() {
        match record {
            Ok(record) => {
                if let Record::Eof(e) = &record {
                    let status = rdb.checksum_status(e);
                    end = Some(format!("ok {status:?} trailing {}", e.trailing.len()));
                }
                seen.push(describe(&record));
            }
            Err(e) => {
                end = Some(format!("error {e}"));
                break;
            }
        }
    }
    records_of(seen, end.unwrap_or_else(|| "no EOF".into()))
}

fn walked_as_stream(data: &[u8], chunk_bytes: usize) -> (Vec<String>, u64) {
    let mut source: &[u8] = data;
    let mut seen = Vec::new();
    let (end, stopped) = walk_chunks(&mut source, false, chunk_bytes, |record| {
        seen.push(describe(&record));
        Ok::<(), ()>(())
    });
    assert!(stopped.is_none());
    let how = match (&end.error, end.checksum) {
        (Some(e), _) => format!("error {e}"),
        (None, Some(status)) => format!("ok {status:?} trailing {}", end.trailing),
        (None, None) if end.format.is_none() => "no header".into(),
        (None, None) => "no EOF".into(),
    };
    (records_of(seen, how), end.size)
}

/// `walk_stream` (`check` on a stream) gives the records, the checksum and
/// the bytes after the trailer that a walk of the same bytes in memory
/// gives, in chunks that cut records anywhere; cut short, it stops at the
/// same record with the same error; an error of the caller's stops it.
#[test]
fn a_stream_walked_in_order_gives_the_records_in_memory() {
    for path in fixtures() {
        let data = std::fs::read(&path).expect("fixture"); // ok: unit test
        let want = walked_in_memory(&data);
        assert!(
            want.last().is_some_and(|end| end.starts_with("ok ")),
            "{path:?}: {want:?}"
        );
        for chunk_bytes in [61, 4096, CHUNK_BYTES] {
            let (got, size) = walked_as_stream(&data, chunk_bytes);
            assert_eq!(got, want, "{path:?} in chunks of {chunk_bytes}");
            assert_eq!(size, data.len() as u64);
        }
    }
    let data = std::fs::read(
        fixtures()
            .into_iter()
            .find(|p| p.ends_with("valkey-8.1.1/all-types.rdb"))
            .expect("fixture"), // ok: unit test
    )
    .expect("read"); // ok: unit test
    let with_tail = [&data[..], b"tail bytes"].concat();
    let (got, _) = walked_as_stream(&with_tail, 61);
    assert_eq!(got, walked_in_memory(&with_tail));
    assert!(
        got.last().is_some_and(|end| end.ends_with("trailing 10")),
        "{got:?}"
    );
    for cut in [20, 100, data.len() / 3, data.len() / 2, data.len() - 5] {
        let (got, size) = walked_as_stream(&data[..cut], 61);
        let want = walked_in_memory(&data[..cut]);
        assert_eq!(got, want, "cut at {cut}");
        assert!(
            want.last().is_some_and(|end| end.starts_with("error ")),
            "cut at {cut}: {want:?}"
        );
        assert_eq!(size, cut as u64);
    }
    // The caller's error stops the walk at its record; the stream is read to its end.
    let mut source: &[u8] = &data;
    let mut calls = 0;
    let (end, stopped) = walk_chunks(&mut source, false, 61, |_| {
        calls += 1;
        if calls == 5 {
            Err("fifth")
        } else {
            Ok(())
        }
    });
    assert_eq!((stopped, calls, end.size), (Some("fifth"), 5, data.len() as u64));
}

/// The dumps with a `used-mem` (the evidence decides their build), and the
/// mapped summary of each with the evidence sampled.
fn decided_by_evidence() -> Vec<(std::path::PathBuf, Vec<u8>, Summary)> {
    fixtures()
        .into_iter()
        .filter_map(|path| {
            let data = std::fs::read(&path).expect("fixture"); // ok: unit test
            let want = mapped(&data, &opts(2, 0));
            want.files[0]
                .aux
                .contains_key("used-mem")
                .then_some((path, data, want))
        })
        .collect()
}

fn settled_after(batches: u64, quantum: u64) -> Options {
    Options {
        settle_evidence_after: Some((batches, quantum)),
        ..opts(2, 0)
    }
}

/// A stream settled on the build the whole dump's evidence picks (forced
/// after its first 3 batches, in chunks of 61 bytes: many keys after it
/// are folded for that build alone) gives the mapped summary, byte for
/// byte.
#[test]
fn a_stream_settled_on_the_build_the_dump_shows_gives_the_mapped_summary() {
    let dumps = decided_by_evidence();
    assert!(dumps.len() >= 30, "{} dumps", dumps.len());
    for (path, data, want) in dumps {
        let quantum = want.files[0].allocator.as_ref().map(|a| a.quantum).unwrap_or(8);
        let got = streamed(&data, &settled_after(3, quantum), 61);
        let diff = first_difference(&got, &want);
        assert!(diff.is_none(), "{}: {diff:?}", path.display());
    }
}

/// A stream settled on the other build than the whole dump's evidence
/// picks (forced) cannot give the mapped summary: it gives the figures of
/// the build it settled on (those the mapped file gives with that build
/// as a flag), that build as the assumption, and a warning naming both
/// builds and where it settled.
#[test]
fn a_stream_settled_on_the_other_build_says_so() {
    // Three batches of 7 keys to settle after.
    let dumps: Vec<_> = decided_by_evidence()
        .into_iter()
        .filter(|(_, _, want)| want.files[0].keys >= 21)
        .collect();
    assert!(dumps.len() >= 30, "{} dumps", dumps.len());
    for (path, data, want) in dumps {
        let picked = want.files[0].allocator.as_ref().map(|a| a.quantum).unwrap_or(8);
        let other = if picked == 16 { 8 } else { 16 };
        let got = streamed(&data, &settled_after(3, other), 61);
        let flagged = mapped(
            &data,
            &Options {
                quantum: Some(other),
                ..opts(2, 0)
            },
        );
        let name = path.display();
        assert_eq!(got.keys, flagged.keys, "{name}: the settled build's figures");
        let file = &got.files[0];
        let allocator = file.allocator.as_ref().expect("allocator"); // ok: unit test
        assert_eq!(allocator.quantum, other, "{name}");
        let reason = &want.files[0].allocator.as_ref().expect("allocator").reason; // ok: unit test
        assert!(
            allocator.reason.ends_with(&format!(
                "(settled from the stream's first part; the whole dump's evidence picks quantum {picked})"
            )),
            "{name}: {}",
            allocator.reason
        );
        let names = |q: u64| {
            if q == 16 {
                "system jemalloc"
            } else {
                "bundled jemalloc"
            }
        };
        let warning = format!(
            "the stream settled the allocator build on quantum {other} ({}) from its first part (settled after 3 \
             batches by a test), and estimated the keys after that for that build alone; the whole dump's evidence \
             picks quantum {picked} ({}: {reason}). The figures assume quantum {other}; the same dump as a file is \
             reported for quantum {picked} (pass --jemalloc-quantum {picked} to have those figures from the stream)",
            names(other),
            names(picked),
        );
        assert_eq!(file.warnings, vec![warning], "{name}");
    }
}

/// A stream whose size is declared before it is read (an object, a
/// replication body) takes the evidence's sample from it: at or above the
/// sampling size it settles by bytes; below, every key's evidence decides
/// at the end, as for a file of that size. Either way, the mapped
/// summary, settled early or not.
#[test]
fn a_stream_of_declared_size_gives_the_mapped_summary() {
    let dumps = decided_by_evidence();
    for (path, data, _) in dumps {
        let len = data.len();
        for (sample_from, settle) in [
            (len, None),
            (len + 1, None),
            (0, None),
            (0, Some(16)),
            (0, Some(8)),
        ] {
            let opts = Options {
                settle_evidence_after: settle.map(|q| (2, q)),
                ..opts(2, sample_from)
            };
            let plain = Options {
                settle_evidence_after: None,
                ..opts.clone()
            };
            let want = mapped(&data, &plain);
            let picked = want.files[0].allocator.as_ref().map(|a| a.quantum);
            if settle.is_some() && settle != picked {
                continue;
            }
            let mut source: &[u8] = &data;
            let got = analyze_sized(&mut source, Some(len as u64), "dump", &opts, 61).expect("streamed"); // ok: unit test
            let diff = first_difference(&got, &want);
            assert!(diff.is_none(), "{}: from {sample_from}: {diff:?}", path.display());
        }
    }
}

/// The keys a stream scales by are those the dump announces, as far as
/// the chunk goes: a fixture with three databases (207, 7 and 2 keys
/// announced) walked in chunks of 512 bytes; a dump whose keys come with
/// no RESIZEDB before them (as before RDB 7) announces nothing to scale by.
#[test]
fn chunks_carry_the_keys_announced_so_far() {
    let announced = |data: &[u8]| {
        let rdb = Rdb::new(&data[..11]).expect("header"); // ok: unit test
        let mut source: &[u8] = &data[9..];
        let mut walker = walker_after_magic(rdb, &mut source, 512);
        let mut seen = Vec::new();
        let mut keys = 0;
        while let Some(chunk) = walker.next_chunk(None) {
            assert_eq!(chunk.first_key, keys, "numbered by the keys before it");
            keys += chunk.lens.len() as u64;
            if seen.last() != Some(&chunk.announced) {
                seen.push(chunk.announced);
            }
        }
        seen
    };
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/rdb/redis-7.0.15-debian/lfu.rdb"
    );
    let data = std::fs::read(path).expect("fixture"); // ok: unit test
    assert_eq!(announced(&data), vec![Some(207), Some(214), Some(216)]);
    // SELECTDB 0, then a string key "k" = "v": with RESIZEDB 1 0 before it, and without.
    let dump = |resize: &[u8]| {
        let mut d = b"REDIS0009\xfe\x00".to_vec();
        d.extend_from_slice(resize);
        d.extend_from_slice(b"\x00\x01k\x01v\xff\0\0\0\0\0\0\0\0");
        d
    };
    assert_eq!(announced(&dump(b"\xfb\x01\x00")), vec![Some(1)]);
    assert_eq!(announced(&dump(b"")), vec![None]);
}

/// A stream of unknown size does not settle within the size a sampled
/// dump starts at (it may yet prove smaller than one, whose evidence is
/// every key's): forced to settle on the other build after 2 batches, one
/// that ends there gives the mapped summary and no warning; one sampled
/// from half its bytes settles after them, on the build forced.
#[test]
fn a_stream_does_not_settle_before_it_could_be_a_sampled_dump() {
    let dumps: Vec<_> = decided_by_evidence()
        .into_iter()
        .filter(|(_, data, want)| want.files[0].keys >= 40 && data.len() > 4096)
        .collect();
    assert!(dumps.len() >= 20, "{} dumps", dumps.len());
    for (path, data, _) in dumps {
        let name = path.display();
        let small = opts(2, data.len() + 1);
        let want = mapped(&data, &small);
        let picked = want.files[0].allocator.as_ref().map(|a| a.quantum).unwrap_or(8);
        let other = if picked == 16 { 8 } else { 16 };
        let forced = |sample_from| Options {
            settle_evidence_after: Some((2, other)),
            ..opts(2, sample_from)
        };
        let got = streamed(&data, &forced(data.len() + 1), 61);
        let diff = first_difference(&got, &want);
        assert!(diff.is_none(), "{name}: {diff:?}");
        let got = streamed(&data, &forced(data.len() / 2), 61);
        let allocator = got.files[0].allocator.as_ref().expect("allocator"); // ok: unit test
        assert_eq!(allocator.quantum, other, "{name}: settled after half its bytes");
    }
}

/// With a key filter, a stream smaller than a sampled dump estimates the
/// keys the filter leaves out too (the file's evidence is every key's):
/// every dump the evidence decides, streamed with half its keys filtered
/// out by name, gives the mapped summary, small or sampled.
#[test]
fn a_filtered_stream_weighs_the_keys_left_out_as_the_file_does() {
    let mut filtered = 0;
    for (path, data, _) in decided_by_evidence() {
        for sample_from in [usize::MAX, 0, data.len() / 2] {
            let opts = Options {
                filter: rdblens_summary::KeyFilter {
                    pattern: Some(b"*[02468]*".to_vec()),
                    ..Default::default()
                },
                ..opts(2, sample_from)
            };
            let want = mapped(&data, &opts);
            let got = streamed(&data, &opts, 61);
            let diff = first_difference(&got, &want);
            assert!(diff.is_none(), "{}: from {sample_from}: {diff:?}", path.display());
            if want.files[0].keys > want.keys.totals.keys {
                filtered += 1;
            }
        }
    }
    assert!(filtered >= 60, "{filtered} runs left keys out");
}

/// The notes told of `data` streamed with `opts` (in chunks of
/// `chunk_bytes`), and its summary.
fn notes_of(data: &[u8], opts: &Options, chunk_bytes: usize) -> (Vec<String>, Summary) {
    let told = std::sync::Arc::new(Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&told);
    let opts = Options {
        notes: Some(rdblens_summary::Notes::new(move |note| {
            sink.lock().expect("notes").push(note); // ok: unit test
        })),
        ..opts.clone()
    };
    let summary = streamed(data, &opts, chunk_bytes);
    let notes = told.lock().expect("notes").clone(); // ok: unit test
    (notes, summary)
}

/// A stream read for both allocator builds says how far, which build
/// the evidence picked and, where `used-mem` fits it, the flag that reads
/// such dumps for one build: up to the keys the build settled from (the
/// first 3 batches of 7, forced; with no flag where that was the other
/// build), or to its end (in chunks of 61 bytes). A stream smaller than a
/// sampled dump, or whose build is given, says nothing.
#[test]
fn a_stream_read_for_both_builds_says_how_far() {
    let dumps: Vec<_> = decided_by_evidence()
        .into_iter()
        .filter(|(_, _, want)| want.files[0].keys > 21)
        .collect();
    assert!(dumps.len() >= 30, "{} dumps", dumps.len());
    for (path, data, want) in dumps {
        let name = path.display();
        let allocator = want.files[0].allocator.as_ref().expect("allocator"); // ok: unit test
        let (q, keys) = (allocator.quantum, want.files[0].keys);
        let advice = if allocator.basis == Basis::UsedMem {
            format!("; where the server's build is known, --jemalloc-quantum {q} reads its dumps for one build from the start")
        } else {
            String::new()
        };
        let share = 100.0 * 21.0 / keys as f64;
        let settled = format!(
            "dump: read for both jemalloc builds (quantum 8 and 16) until the evidence settled quantum {q}, \
             after the first 21 of its {keys} keys ({share:.0} %){advice}"
        );
        // One chunk: its batches are of 7 keys each.
        let (notes, got) = notes_of(&data, &settled_after(3, q), data.len());
        assert_eq!(notes, [settled], "{name}");
        assert!(
            first_difference(&got, &want).is_none(),
            "{name}: the note changes nothing"
        );

        // Settled on the other build (forced, and `used-mem`-fitted as
        // such): the warning names the flag for the file's figures, not the note.
        let other = if q == 16 { 8 } else { 16 };
        let apart = format!(
            "dump: read for both jemalloc builds (quantum 8 and 16) until the evidence settled quantum {other}, \
             after the first 21 of its {keys} keys ({share:.0} %)"
        );
        assert_eq!(
            notes_of(&data, &settled_after(3, other), data.len()).0,
            [apart],
            "{name}"
        );

        let to_end = format!(
            "dump: read for both jemalloc builds (quantum 8 and 16) to its end, where the evidence decided quantum {q}{advice}"
        );
        assert_eq!(notes_of(&data, &opts(2, 0), 61).0, [to_end], "{name}");

        let small = opts(2, data.len() + 1);
        assert!(
            notes_of(&data, &small, CHUNK_BYTES).0.is_empty(),
            "{name}: smaller than a sampled dump"
        );
        let given = Options {
            quantum: Some(q),
            ..opts(2, 0)
        };
        assert!(
            notes_of(&data, &given, CHUNK_BYTES).0.is_empty(),
            "{name}: the build given"
        );
    }
}

/// Where `used-mem` fits the build the evidence picked (the fixtures'
/// samples are too small for that: the benchmark dumps'), the note names
/// the flag that reads such dumps for one build.
#[test]
fn the_note_names_the_flag_where_used_mem_fits() {
    assert_eq!(
        both_builds_note("-", Some(713_207), 785_828, 16, true),
        "-: read for both jemalloc builds (quantum 8 and 16) until the evidence settled quantum 16, after \
         the first 713207 of its 785828 keys (91 %); where the server's build is known, --jemalloc-quantum \
         16 reads its dumps for one build from the start"
    );
    assert_eq!(
        both_builds_note("-", None, 785_828, 8, false),
        "-: read for both jemalloc builds (quantum 8 and 16) to its end, where the evidence decided quantum 8"
    );
}
