//! What the fuzz targets do with an input, shared with the regression tests.
//!
//! The fuzz crate (`fuzz/`, its own workspace) includes this file with
//! `#[path]`, and `tests/fuzz_regressions.rs` runs every saved crash input
//! through the same functions, so a regression test is exactly the fuzz case
//! that found the bug. Each function panics (a fuzz finding) only when the
//! code under test panics or breaks one of these invariants:
//!
//! - an error names a byte offset inside the input (`at byte offset N`,
//!   `N <= input length`), and blob errors a position inside the blob;
//! - a value that decodes agrees with what the boundary walk found;
//! - decompression produces exactly the declared length, or an error;
//! - an analysis counting blobs by their headers (sections reading no
//!   length) stops where the full one stops and loses no key.
#![allow(dead_code)]

use rdblens_engine::{analyze_bytes, map_keys_in_order, AnalysisError, KeyItem};
use rdblens_parser::blob::{Intset, Listpack, Ziplist, Zipmap};
use rdblens_parser::{Error, Rdb, Record, Scratch, ValueVisitor};
use rdblens_report::ReportOptions;
use rdblens_summary::{Accumulators, Damage, Options};

struct Nothing;
impl ValueVisitor for Nothing {}

fn check_error(e: &Error, len: usize) {
    assert!(
        e.offset() <= len as u64,
        "error offset past the end of {len} bytes: {e}"
    );
    let text = e.to_string();
    assert!(text.contains(&format!("at byte offset {}", e.offset())), "{text}");
}

/// Every record; for each entry its key, a decoding visit, the stats pass,
/// the string, stream and module views; the checksum; the metadata walk.
pub fn whole_file(data: &[u8]) {
    let Ok(rdb) = Rdb::new(data) else { return };
    let mut scratch = Scratch::new();
    let mut records = rdb.records();
    for record in records.by_ref() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                check_error(&e, data.len());
                break;
            }
        };
        match record {
            Record::Entry(e) => {
                let end = e.offset + e.record_len;
                assert!(end <= data.len() as u64 && e.value_offset >= e.offset);
                if let Err(err) = e.key_bytes() {
                    check_error(&err, data.len());
                }
                let visited = e.visit_with(&mut scratch, &mut Nothing);
                let stats = e.stats_with(&mut scratch);
                assert_eq!(visited.is_ok(), stats.is_ok(), "visit and stats disagree");
                for r in [visited.err(), stats.err()].into_iter().flatten() {
                    check_error(&r, data.len());
                }
                match e.stream() {
                    Ok(Some(s)) => {
                        for node in s.nodes() {
                            if let Err(err) = node {
                                check_error(&err, data.len());
                            }
                        }
                    }
                    Ok(None) => {}
                    Err(err) => check_error(&err, data.len()),
                }
                match e.module() {
                    Ok(Some(m)) => {
                        m.element_count();
                        for item in m.items() {
                            if let Err(err) = item {
                                check_error(&err, data.len());
                            }
                        }
                    }
                    Ok(None) => {}
                    Err(err) => check_error(&err, data.len()),
                }
                e.module_id().map(|m| m.name());
                if let Err(err) = e.string() {
                    check_error(&err, data.len());
                }
            }
            Record::ModuleAux(aux) => {
                aux.module.name();
            }
            Record::Eof(eof) => {
                rdb.checksum_status(&eof);
            }
            _ => {}
        }
    }
    assert!(
        records.next().is_none(),
        "the record iterator goes on after the end"
    );
    if let Err(e) = rdb.metadata() {
        check_error(&e, data.len());
    }
}

/// Wraps `value` as the value of one key of type `ty` in a `magic` file
/// (checksum disabled), so value decoders are fuzzed through the public API.
pub fn file_with_value(magic: &[u8], ty: u8, value: &[u8]) -> Vec<u8> {
    let mut out = magic.to_vec();
    out.extend_from_slice(&[0xfe, 0x00, ty, 0x01, b'k']);
    out.extend_from_slice(value);
    out.push(0xff);
    out.extend_from_slice(&[0; 8]);
    out
}

/// Stream values of every layout: the first byte picks the type (15, 19,
/// 21, 26, 27), the rest is the value.
pub fn stream_value(data: &[u8]) {
    let Some((&pick, value)) = data.split_first() else {
        return;
    };
    let ty = [15u8, 19, 21, 26, 27][usize::from(pick) % 5];
    whole_file(&file_with_value(b"REDIS0014", ty, value));
}

/// Module opcode streams: the first byte picks where they sit: a module
/// value (type 7), a MODULE_AUX record, or a KEY_META prefix (RDB 13+).
pub fn module_value(data: &[u8]) {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let file = match pick % 3 {
        0 => file_with_value(b"REDIS0014", 7, body),
        1 => {
            let mut out = b"REDIS0009".to_vec();
            out.push(0xf7);
            out.extend_from_slice(body);
            out.extend_from_slice(&[0x00, 0x01, b'k', 0x01, b'v', 0xff]);
            out.extend_from_slice(&[0; 8]);
            out
        }
        _ => {
            let mut out = b"REDIS0013".to_vec();
            out.push(0xf3);
            out.extend_from_slice(body);
            out.extend_from_slice(&[0x00, 0x01, b'k', 0x01, b'v', 0xff]);
            out.extend_from_slice(&[0; 8]);
            out
        }
    };
    whole_file(&file);
}

fn check_pos(pos: usize, len: usize) {
    assert!(pos <= len, "blob error at {pos}, past the end of {len} bytes");
}

pub fn listpack(data: &[u8]) {
    match Listpack::new(data) {
        Ok(lp) => {
            lp.header_count();
            let mut n = 0usize;
            for e in lp.iter() {
                match e {
                    Ok(e) => {
                        e.len();
                        e.as_int();
                        n += 1;
                    }
                    Err(err) => {
                        check_pos(err.pos, data.len());
                        assert!(lp.count().is_err(), "count succeeds where the walk failed");
                        return;
                    }
                }
            }
            assert_eq!(lp.count().ok(), Some(n));
        }
        Err(err) => check_pos(err.pos, data.len()),
    }
}

pub fn ziplist(data: &[u8]) {
    match Ziplist::new(data) {
        Ok(zl) => {
            zl.header_count();
            let mut n = 0usize;
            for e in zl.iter() {
                match e {
                    Ok(e) => {
                        e.len();
                        n += 1;
                    }
                    Err(err) => {
                        check_pos(err.pos, data.len());
                        assert!(zl.count().is_err(), "count succeeds where the walk failed");
                        return;
                    }
                }
            }
            assert_eq!(zl.count().ok(), Some(n));
        }
        Err(err) => check_pos(err.pos, data.len()),
    }
}

pub fn intset(data: &[u8]) {
    match Intset::new(data) {
        Ok(set) => {
            let mut seen = 0;
            for m in set.iter() {
                match m {
                    Ok(_) => seen += 1,
                    Err(err) => {
                        check_pos(err.pos, data.len());
                        return;
                    }
                }
            }
            assert_eq!(seen, set.len());
        }
        Err(err) => check_pos(err.pos, data.len()),
    }
}

pub fn zipmap(data: &[u8]) {
    match Zipmap::new(data) {
        Ok(map) => {
            map.header_count();
            for pair in map.iter() {
                if let Err(err) = pair {
                    check_pos(err.pos, data.len());
                    break;
                }
            }
        }
        Err(err) => check_pos(err.pos, data.len()),
    }
}

/// The first two bytes are the declared length (little-endian), the rest
/// the compressed stream. The same stream is also read as an LZF string
/// value of a file, where the declared length comes from the file.
pub fn lzf(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let len = usize::from(u16::from_le_bytes([data[0], data[1]]));
    let input = &data[2..];
    let mut out = Vec::new();
    match rdblens_parser::lzf_decompress(input, len, &mut out) {
        Ok(()) => assert_eq!(out.len(), len),
        Err(_) => assert!(
            out.len() <= len,
            "wrote {} bytes past the declared {len}",
            out.len()
        ),
    }
    // As a string value: 0xC3, clen, ulen, bytes (14-bit lengths).
    let clen = input.len().min(0x3fff);
    let mut value = vec![0xc3, 0x40 | (clen >> 8) as u8, clen as u8];
    value.extend_from_slice(&[0x40 | ((len >> 8) & 0x3f) as u8, len as u8]);
    value.extend_from_slice(&input[..clen]);
    whole_file(&file_with_value(b"REDIS0011", 0, &value));
}

fn check_damage(d: &Damage, len: usize) {
    assert!(
        d.offset <= len as u64,
        "damage past the end of {len} bytes: {d:?}"
    );
    assert!(
        d.message.contains(&format!("at byte offset {}", d.offset)),
        "{d:?}"
    );
}

/// The full analysis (one worker, small batches), the audit, both renderings
/// of the report, and the per-key pass, which must see the same keys, the
/// same damage and stop at the same place.
pub fn analyze(data: &[u8]) {
    let opts = Options {
        threads: 1,
        batch_entries: 3,
        ..Options::default()
    };
    let summary = match analyze_bytes(data, "fuzz.rdb", &opts) {
        Ok(s) => s,
        Err(AnalysisError::Input(e)) => {
            check_error(&e, data.len());
            assert!(map_keys_in_order(data, "fuzz.rdb", &opts, |_, _| (), |_| true).is_err());
            return;
        }
        // Hostile bytes are the file's fault, never rdblens's.
        Err(e) => panic!("a hostile file fails only as an input error, not: {e}"),
    };
    let file = &summary.files[0];
    if let Some(d) = &file.incomplete {
        check_damage(d, data.len());
    }
    for d in &summary.keys.damage {
        check_damage(d, data.len());
    }
    rdblens_audit::audit(&summary);
    let report = ReportOptions::default();
    rdblens_report::to_table(&summary, &report);
    rdblens_report::to_json(&summary, &report).expect("the JSON report serializes");

    let (mut keys, mut damaged) = (0u64, 0u64);
    let info = map_keys_in_order(
        data,
        "fuzz.rdb",
        &opts,
        |facts, _| facts.memory,
        |item| {
            match item {
                KeyItem::Key(_) => keys += 1,
                KeyItem::Damaged(_) => damaged += 1,
            }
            true
        },
    )
    .expect("the per-key pass reads the header the analysis read");
    assert_eq!(info.incomplete, file.incomplete);
    assert_eq!(info.keys, file.keys);
    // Every key has its row, the empty collections a server drops on load
    // too (the report counts those apart).
    assert_eq!(keys, summary.keys.totals.keys + summary.keys.empty.keys);
    assert_eq!(damaged, summary.keys.damaged_keys);

    // Sections reading no length count kept blobs by their header: the same
    // walk of the records, and damage inside such a blob goes unseen, so a
    // key damaged above may be counted here, never lost.
    let lean = Options {
        accumulators: Accumulators {
            ttl: true,
            expiry: true,
            prefixes: true,
            slots: true,
            ..Accumulators::NONE
        },
        ..opts
    };
    let counted = analyze_bytes(data, "fuzz.rdb", &lean).expect("the header read as before");
    assert_eq!(counted.files[0].incomplete, file.incomplete);
    let k = &counted.keys;
    assert!(k.damaged_keys <= summary.keys.damaged_keys);
    assert_eq!(
        k.totals.keys + k.damaged_keys + k.empty.keys,
        summary.keys.totals.keys + summary.keys.damaged_keys + summary.keys.empty.keys
    );
}
