//! Hand-built files for versions, types and records that no server available
//! here writes: RDB 1-8 compact encodings, Redis 13/14 (KEY_META, streams v4
//! and v5, arrays), the Redis/Valkey dialect split, modules, functions, slot
//! records, checksums, and inputs that are not RDB files at all.
//!
//! Every file is written byte by byte by the small writer below, following
//! the format reference, and every decoded value is checked exactly.

use std::borrow::Cow;

use rdblens_parser::*;

// ---- a tiny RDB writer -------------------------------------------------------

/// The shortest length encoding (what servers write).
fn len(n: u64) -> Vec<u8> {
    match n {
        0..=0x3f => vec![n as u8],
        0x40..=0x3fff => len14(n),
        0x4000..=0xffff_ffff => len32(n),
        _ => len64(n),
    }
}

/// The 14-bit form `01vvvvvv vvvvvvvv` (big-endian), even for small values.
fn len14(n: u64) -> Vec<u8> {
    assert!(n < 1 << 14);
    vec![0x40 | (n >> 8) as u8, n as u8]
}

/// The 32-bit form `0x80` + u32 big-endian, even for small values.
fn len32(n: u64) -> Vec<u8> {
    [vec![0x80], (n as u32).to_be_bytes().to_vec()].concat()
}

/// The 64-bit form `0x81` + u64 big-endian.
fn len64(n: u64) -> Vec<u8> {
    [vec![0x81], n.to_be_bytes().to_vec()].concat()
}

/// A raw string: length then bytes.
fn raw(s: &[u8]) -> Vec<u8> {
    [len(s.len() as u64), s.to_vec()].concat()
}

fn int8(i: i8) -> Vec<u8> {
    vec![0xc0, i as u8]
}

fn int16(i: i16) -> Vec<u8> {
    [vec![0xc1], i.to_le_bytes().to_vec()].concat()
}

fn int32(i: i32) -> Vec<u8> {
    [vec![0xc2], i.to_le_bytes().to_vec()].concat()
}

/// An LZF string from an already compressed stream.
fn lzf(compressed: &[u8], ulen: usize) -> Vec<u8> {
    [
        vec![0xc3],
        len(compressed.len() as u64),
        len(ulen as u64),
        compressed.to_vec(),
    ]
    .concat()
}

/// LZF "compression" with literal runs only: control byte n-1, then n bytes.
fn lzf_literal(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in data.chunks(32) {
        out.push(chunk.len() as u8 - 1);
        out.extend_from_slice(chunk);
    }
    out
}

fn lzf_str(data: &[u8]) -> Vec<u8> {
    lzf(&lzf_literal(data), data.len())
}

/// "abc" as a literal, then a long back reference (length byte follows the
/// control byte) copying 27 bytes from 3 back: "abc" x 10.
const LZF_ABC: [u8; 7] = [2, b'a', b'b', b'c', 0xe0, 25 - 7, 2];
/// "xy" as a literal, then a short back reference of 4 bytes from 2 back.
const LZF_XY: [u8; 5] = [1, b'x', b'y', 2 << 5, 1];

fn u32le(n: u32) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}

/// One ziplist entry, by encoding.
#[derive(Clone, Copy)]
enum Zl<'a> {
    /// 6-bit length string.
    S(&'a [u8]),
    /// 14-bit length string.
    S14(&'a [u8]),
    /// 32-bit (big-endian) length string.
    S32(&'a [u8]),
    I16(i16),
    I32(i32),
    I64(i64),
    /// RDB 6+: 24-bit, 8-bit, 4-bit immediate (0-12).
    I24(i32),
    I8(i8),
    Imm(u8),
}

fn zl_encoding(e: Zl<'_>) -> Vec<u8> {
    match e {
        Zl::S(s) => {
            assert!(s.len() < 64);
            [vec![s.len() as u8], s.to_vec()].concat()
        }
        Zl::S14(s) => [vec![0x40 | (s.len() >> 8) as u8, s.len() as u8], s.to_vec()].concat(),
        Zl::S32(s) => [vec![0x80], (s.len() as u32).to_be_bytes().to_vec(), s.to_vec()].concat(),
        Zl::I16(i) => [vec![0xc0], i.to_le_bytes().to_vec()].concat(),
        Zl::I32(i) => [vec![0xd0], i.to_le_bytes().to_vec()].concat(),
        Zl::I64(i) => [vec![0xe0], i.to_le_bytes().to_vec()].concat(),
        Zl::I24(i) => [vec![0xf0], i.to_le_bytes()[..3].to_vec()].concat(),
        Zl::I8(i) => vec![0xfe, i as u8],
        Zl::Imm(v) => {
            assert!(v <= 12);
            vec![0xf1 + v]
        }
    }
}

fn ziplist(entries: &[Zl<'_>]) -> Vec<u8> {
    let mut body = Vec::new();
    let mut prev = 0usize;
    let mut tail = 10;
    for &e in entries {
        tail = 10 + body.len();
        let start = body.len();
        if prev < 254 {
            body.push(prev as u8);
        } else {
            body.push(0xfe);
            body.extend_from_slice(&u32le(prev as u32));
        }
        body.extend(zl_encoding(e));
        prev = body.len() - start;
    }
    let total = 10 + body.len() + 1;
    [
        u32le(total as u32),
        u32le(tail as u32),
        (entries.len() as u16).to_le_bytes().to_vec(),
        body,
        vec![0xff],
    ]
    .concat()
}

/// One listpack element.
#[derive(Clone, Copy)]
enum Lp<'a> {
    S(&'a [u8]),
    I(i64),
}

fn lp_encoding(e: Lp<'_>) -> Vec<u8> {
    match e {
        Lp::S(s) if s.len() < 64 => [vec![0x80 | s.len() as u8], s.to_vec()].concat(),
        Lp::S(s) if s.len() < 4096 => [vec![0xe0 | (s.len() >> 8) as u8, s.len() as u8], s.to_vec()].concat(),
        Lp::S(s) => [vec![0xf0], u32le(s.len() as u32), s.to_vec()].concat(),
        Lp::I(i @ 0..=127) => vec![i as u8],
        Lp::I(i @ -4096..=4095) => {
            let u = if i < 0 { i + 8192 } else { i } as u16;
            vec![0xc0 | (u >> 8) as u8, u as u8]
        }
        Lp::I(i) if i16::try_from(i).is_ok() => [vec![0xf1], (i as i16).to_le_bytes().to_vec()].concat(),
        Lp::I(i) if (-(1 << 23)..1 << 23).contains(&i) => {
            [vec![0xf2], (i as i32).to_le_bytes()[..3].to_vec()].concat()
        }
        Lp::I(i) if i32::try_from(i).is_ok() => [vec![0xf3], (i as i32).to_le_bytes().to_vec()].concat(),
        Lp::I(i) => [vec![0xf4], i.to_le_bytes().to_vec()].concat(),
    }
}

fn listpack(entries: &[Lp<'_>]) -> Vec<u8> {
    let mut body = Vec::new();
    for &e in entries {
        let enc = lp_encoding(e);
        let s = enc.len();
        body.extend(enc);
        match s {
            0..=127 => body.push(s as u8),
            128..=16383 => body.extend([(s >> 7) as u8, (s & 127) as u8 | 128]),
            _ => body.extend([
                (s >> 14) as u8,
                ((s >> 7) & 127) as u8 | 128,
                (s & 127) as u8 | 128,
            ]),
        }
    }
    let total = 6 + body.len() + 1;
    [
        u32le(total as u32),
        (entries.len() as u16).to_le_bytes().to_vec(),
        body,
        vec![0xff],
    ]
    .concat()
}

fn intset(width: u32, members: &[i64]) -> Vec<u8> {
    let mut out = [u32le(width), u32le(members.len() as u32)].concat();
    for m in members {
        out.extend_from_slice(&m.to_le_bytes()[..width as usize]);
    }
    out
}

/// A zipmap of (field, value, free bytes after the value).
fn zipmap(pairs: &[(&[u8], &[u8], u8)]) -> Vec<u8> {
    let zm_len = |n: usize| -> Vec<u8> {
        if n < 254 {
            vec![n as u8]
        } else {
            [vec![254], u32le(n as u32)].concat()
        }
    };
    let mut out = vec![pairs.len() as u8];
    for (k, v, free) in pairs {
        out.extend(zm_len(k.len()));
        out.extend_from_slice(k);
        out.extend(zm_len(v.len()));
        out.push(*free);
        out.extend_from_slice(v);
        out.extend(vec![0u8; usize::from(*free)]);
    }
    out.push(0xff);
    out
}

/// A module type id from its 9-character name and encoding version (§8.1).
fn module_id(name: &str, encver: u64) -> u64 {
    const CHARSET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    assert_eq!(name.len(), 9);
    let mut id = 0u64;
    for (i, c) in name.bytes().enumerate() {
        let index = CHARSET.iter().position(|&x| x == c).unwrap() as u64;
        id |= index << (58 - 6 * i);
    }
    id | encver
}

/// A 16-byte raw stream ID (ms, seq big-endian).
fn raw_id(ms: u64, seq: u64) -> Vec<u8> {
    [ms.to_be_bytes(), seq.to_be_bytes()].concat()
}

fn id(ms: u64, seq: u64) -> StreamId {
    StreamId { ms, seq }
}

/// Where an entry was written.
#[derive(Clone, Copy, Debug)]
struct Placed {
    offset: u64,
    value_offset: u64,
    end: u64,
}

/// Builds a file: the magic, then records, then (on `finish`) EOF and the
/// CRC-64 when the version has one.
struct W {
    buf: Vec<u8>,
    checksum: bool,
}

impl W {
    fn new(magic: &str) -> W {
        assert_eq!(magic.len(), 9);
        let checksum = match magic.strip_prefix("REDIS") {
            Some(digits) => digits.parse::<u32>().unwrap() >= 5,
            None => true,
        };
        W {
            buf: magic.as_bytes().to_vec(),
            checksum,
        }
    }

    fn at(&self) -> u64 {
        self.buf.len() as u64
    }

    /// Appends raw bytes; returns where they start.
    fn put(&mut self, bytes: &[u8]) -> u64 {
        let at = self.at();
        self.buf.extend_from_slice(bytes);
        at
    }

    /// Appends `prefix` (expiry/idle/freq/key-meta opcodes), the type byte,
    /// the encoded key and the encoded value.
    fn entry(&mut self, prefix: &[u8], ty: u8, key: &[u8], value: &[u8]) -> Placed {
        let offset = self.put(prefix);
        self.put(&[ty]);
        self.put(key);
        let value_offset = self.put(value);
        Placed {
            offset,
            value_offset,
            end: self.at(),
        }
    }

    fn aux(&mut self, key: &[u8], value: &[u8]) {
        self.put(&[&[0xfa][..], key, value].concat());
    }

    fn finish(mut self) -> Vec<u8> {
        self.buf.push(0xff);
        if self.checksum {
            let crc = crc64(&self.buf);
            self.buf.extend_from_slice(&crc.to_le_bytes());
        }
        dump_vector(&self.buf);
        self.buf
    }
}

/// `RDBLENS_DUMP_VECTORS=DIR` writes every file built here to DIR (named by
/// a hash): the hand-built part of the fuzz seed corpus (docs/fuzzing.md).
fn dump_vector(data: &[u8]) {
    if let Some(dir) = std::env::var_os("RDBLENS_DUMP_VECTORS") {
        // Salted in front: the CRC-64 of a file that ends in its own valid
        // CRC is always the same residue.
        let name = format!("vector-{:016x}.rdb", crc64(&[b"#", data].concat()));
        let path = std::path::Path::new(&dir).join(name);
        std::fs::write(&path, data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

// ---- reading it back ---------------------------------------------------------

/// An element as the visitor saw it: bytes or an integer.
#[derive(Clone, Debug, PartialEq)]
enum Own {
    B(Vec<u8>),
    I(i64),
}

fn own(e: Element<'_>) -> Own {
    match e {
        Element::Bytes(b) => Own::B(b.to_vec()),
        Element::Int(i) => Own::I(i),
    }
}

fn b(s: &str) -> Own {
    Own::B(s.as_bytes().to_vec())
}

#[derive(Clone, Debug, PartialEq)]
enum Item {
    B(Own),
    I(i64),
    F(f64),
}

/// Collects every callback of a visit.
#[derive(Default, Debug)]
struct Got {
    strings: Vec<Vec<u8>>,
    nodes: Vec<NodeInfo>,
    members: Vec<Own>,
    scored: Vec<(Own, f64)>,
    fields: Vec<(Own, Own, Option<i64>)>,
    streams: Vec<u64>,
    entries: Vec<(StreamId, Vec<(Own, Own)>)>,
    modules: Vec<(ModuleId, usize)>,
    array: Vec<(u64, Item)>,
    paths: Vec<(Own, u64)>,
}

impl ValueVisitor for Got {
    fn string(&mut self, value: RdbString<'_>) {
        self.strings.push(value.to_vec().unwrap());
    }
    fn node(&mut self, node: &NodeInfo) {
        self.nodes.push(*node);
    }
    fn member(&mut self, member: Element<'_>) {
        self.members.push(own(member));
    }
    fn scored(&mut self, member: Element<'_>, score: f64) {
        self.scored.push((own(member), score));
    }
    fn field(&mut self, field: Element<'_>, value: Element<'_>, expire_ms: Option<i64>) {
        self.fields.push((own(field), own(value), expire_ms));
    }
    fn stream(&mut self, stream: &StreamValue<'_>) {
        self.streams.push(stream.length);
    }
    fn stream_entry(&mut self, id: StreamId, pairs: &[(Element<'_>, Element<'_>)]) {
        self.entries
            .push((id, pairs.iter().map(|(f, v)| (own(*f), own(*v))).collect()));
    }
    fn module(&mut self, module: &ModuleValue<'_>) {
        self.modules.push((module.id, module.len()));
    }
    fn array_item(&mut self, index: u64, item: ArrayItem<'_>) {
        self.array.push((
            index,
            match item {
                ArrayItem::Bytes(e) => Item::B(own(e)),
                ArrayItem::Int(i) => Item::I(i),
                ArrayItem::Float(f) => Item::F(f),
            },
        ));
    }
    fn path(&mut self, path: Element<'_>, fields: u64) {
        self.paths.push((own(path), fields));
    }
}

fn got(e: &Entry<'_>) -> Got {
    let mut g = Got::default();
    e.visit(&mut g)
        .unwrap_or_else(|err| panic!("{:?}: {err}", e.key_bytes()));
    g
}

fn records(data: &[u8]) -> Vec<Record<'_>> {
    Rdb::new(data)
        .unwrap()
        .records()
        .collect::<Result<Vec<_>>>()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn entries(data: &[u8]) -> Vec<Entry<'_>> {
    Rdb::new(data)
        .unwrap()
        .entries()
        .collect::<Result<Vec<_>>>()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn eof<'a>(data: &'a [u8]) -> Eof<'a> {
    match records(data).pop() {
        Some(Record::Eof(eof)) => eof,
        other => panic!("last record is not EOF: {other:?}"),
    }
}

/// The first error of a record walk.
fn walk_error(data: &[u8]) -> Error {
    for r in Rdb::new(data).unwrap().records() {
        if let Err(e) = r {
            return e;
        }
    }
    panic!("the file parsed without error")
}

fn key(e: &Entry<'_>) -> Vec<u8> {
    e.key_bytes().unwrap().into_owned()
}

/// The entry sits exactly where the writer put it.
fn check_placed(e: &Entry<'_>, p: Placed, data: &[u8]) {
    assert_eq!(e.offset, p.offset, "{:?} offset", key(e));
    assert_eq!(e.value_offset, p.value_offset, "{:?} value offset", key(e));
    assert_eq!(e.record_len, p.end - p.offset, "{:?} record length", key(e));
    assert_eq!(
        e.value,
        &data[p.value_offset as usize..p.end as usize],
        "{:?}",
        key(e)
    );
}

fn unknown_type(byte: u8, dialect: Dialect, version: u32) -> ErrorKind {
    ErrorKind::UnknownType {
        byte,
        dialect,
        version,
    }
}

// ---- RDB 1-8 ---------------------------------------------------------------------

#[test]
fn rdb1_plain_types_with_expiretime_seconds() {
    let secs: i32 = 1_700_000_000;
    let mut w = W::new("REDIS0001");
    let expire = [vec![0xfd], secs.to_le_bytes().to_vec()].concat();
    let p_str = w.entry(&expire, 0, &raw(b"s"), &raw(b"hello"));
    let list = [
        len(6),
        raw(b"a"),
        int8(-5),
        [len14(5), b"fives".to_vec()].concat(),
        [len32(3), b"xyz".to_vec()].concat(),
        lzf(&LZF_ABC, 30),
        lzf(&LZF_XY, 6),
    ]
    .concat();
    let p_list = w.entry(&[], 1, &raw(b"l"), &list);
    let p_set = w.entry(&[], 2, &raw(b"st"), &[len(2), raw(b"m1"), int16(1000)].concat());
    let zset = [
        len(5),
        raw(b"m1"),
        vec![3],
        b"1.5".to_vec(),
        raw(b"m2"),
        vec![253],
        raw(b"m3"),
        vec![254],
        raw(b"m4"),
        vec![255],
        raw(b"m5"),
        vec![2],
        b"-3".to_vec(),
    ]
    .concat();
    let p_zset = w.entry(&[], 3, &raw(b"z"), &zset);
    let hash = [len(2), raw(b"f1"), raw(b"v1"), raw(b"f2"), int32(70000)].concat();
    let p_hash = w.entry(&[], 4, &raw(b"h"), &hash);
    let data = w.finish();

    let rdb = Rdb::new(&data).unwrap();
    assert_eq!(rdb.version(), 1);
    assert_eq!(rdb.dialect(), Dialect::Redis);
    assert_eq!(
        rdb.format(),
        Format {
            dialect: Dialect::Redis,
            version: 1
        }
    );
    let es = entries(&data);
    assert_eq!(es.len(), 5);
    for (e, p) in es.iter().zip([p_str, p_list, p_set, p_zset, p_hash]) {
        check_placed(e, p, &data);
        assert_eq!(e.db, 0);
        assert_eq!(e.idle_seconds, None);
        assert_eq!(e.lfu_freq, None);
        assert!(e.key_meta.is_none());
    }

    let s = &es[0];
    assert_eq!(key(s), b"s");
    assert_eq!(s.value_type, ValueType::String);
    assert_eq!(
        s.expiry,
        Some(Expiry {
            unix_ms: i64::from(secs) * 1000,
            unit: ExpiryUnit::Seconds
        })
    );
    assert_eq!(s.string().unwrap(), Some(RdbString::Raw(b"hello")));
    assert_eq!(got(s).strings, vec![b"hello".to_vec()]);
    assert_eq!(s.stats().unwrap().elements, 5);

    let l = &es[1];
    assert_eq!((l.value_type, l.kind()), (ValueType::List, TypeKind::List));
    assert_eq!(l.expiry, None, "the expiry applies to one key only");
    assert_eq!(
        got(l).members,
        vec![
            b("a"),
            Own::I(-5),
            b("fives"),
            b("xyz"),
            b(&"abc".repeat(10)),
            b("xyxyxy")
        ]
    );
    let stats = l.stats().unwrap();
    assert_eq!(stats.elements, 6);
    assert_eq!(stats.max_element_len, 30);
    assert_eq!(stats.payload_bytes, 1 + 2 + 5 + 3 + 30 + 6);
    assert_eq!(stats.nodes, 0);

    assert_eq!(got(&es[2]).members, vec![b("m1"), Own::I(1000)]);

    let z = got(&es[3]).scored;
    assert_eq!(z.len(), 5);
    assert_eq!(z[0], (b("m1"), 1.5));
    assert_eq!(z[1].0, b("m2"));
    assert!(z[1].1.is_nan());
    assert_eq!(z[2], (b("m3"), f64::INFINITY));
    assert_eq!(z[3], (b("m4"), f64::NEG_INFINITY));
    assert_eq!(z[4], (b("m5"), -3.0));

    assert_eq!(
        got(&es[4]).fields,
        vec![(b("f1"), b("v1"), None), (b("f2"), Own::I(70000), None)]
    );

    // No checksum before RDB 5: the file ends at the EOF opcode.
    let end = eof(&data);
    assert_eq!(
        end,
        Eof {
            offset: data.len() as u64 - 1,
            checksum: None,
            trailing: b""
        }
    );
    assert_eq!(rdb.checksum_status(&end), ChecksumStatus::Absent);
}

#[test]
fn rdb1_rejects_types_from_later_versions() {
    for (magic, byte, version) in [("REDIS0001", 9u8, 1), ("REDIS0001", 5, 1), ("REDIS0007", 15, 7)] {
        let mut w = W::new(magic);
        w.entry(&[], 0, &raw(b"ok"), &raw(b"1"));
        let at = w.put(&[byte]);
        w.put(&raw(b"k"));
        let err = walk_error(&w.finish());
        assert_eq!(
            err.kind(),
            &unknown_type(byte, Dialect::Redis, version),
            "{magic} {byte}"
        );
        assert_eq!(err.offset(), at);
    }
}

#[test]
fn rdb2_compact_encodings() {
    let mut w = W::new("REDIS0002");
    let big = vec![b'v'; 300];
    let zm = zipmap(&[(b"name", b"redis", 2), (b"big", &big, 0), (b"e", b"", 0)]);
    let p_zm = w.entry(&[], 9, &raw(b"zm"), &raw(&zm));
    let q100 = vec![b'q'; 100];
    let zl = ziplist(&[
        Zl::S(b"a"),
        Zl::S14(&q100),
        Zl::I16(-300),
        Zl::I32(100_000),
        Zl::I64(1 << 40),
        Zl::S32(b"xyz"),
    ]);
    let expire = [vec![0xfd], 2_000_000_000i32.to_le_bytes().to_vec()].concat();
    let p_zl = w.entry(&expire, 10, &raw(b"zl"), &lzf_str(&zl));
    let set2 = intset(2, &[-3, 7, 300]);
    let set4 = intset(4, &[-70_000, 70_000]);
    let set8 = intset(8, &[i64::MIN, 0, i64::MAX]);
    w.entry(&[], 11, &raw(b"is2"), &raw(&set2));
    w.entry(&[], 11, &raw(b"is4"), &raw(&set4));
    w.entry(&[], 11, &raw(b"is8"), &raw(&set8));
    let zz = ziplist(&[
        Zl::S(b"a"),
        Zl::S(b"1.5"),
        Zl::S(b"b"),
        Zl::I16(3),
        Zl::S(b"c"),
        Zl::S(b"inf"),
        Zl::S(b"d"),
        Zl::S(b"-inf"),
    ]);
    w.entry(&[], 12, &raw(b"zz"), &raw(&zz));
    let data = w.finish();

    let es = entries(&data);
    assert_eq!(es.len(), 6);
    check_placed(&es[0], p_zm, &data);
    check_placed(&es[1], p_zl, &data);

    let g = got(&es[0]);
    assert_eq!(es[0].value_type, ValueType::HashZipmap);
    assert_eq!(
        g.fields,
        vec![
            (b("name"), b("redis"), None),
            (b("big"), Own::B(big.clone()), None),
            (b("e"), b(""), None)
        ]
    );
    assert_eq!(
        g.nodes,
        vec![NodeInfo {
            kind: NodeKind::Zipmap,
            len: zm.len(),
            stored_len: zm.len(),
            compressed: false,
            header_count: Some(3)
        }]
    );

    let l = &es[1];
    assert_eq!(l.value_type, ValueType::ListZiplist);
    assert_eq!(
        l.expiry,
        Some(Expiry {
            unix_ms: 2_000_000_000_000,
            unit: ExpiryUnit::Seconds
        })
    );
    let g = got(l);
    assert_eq!(
        g.members,
        vec![
            b("a"),
            Own::B(q100.clone()),
            Own::I(-300),
            Own::I(100_000),
            Own::I(1 << 40),
            b("xyz")
        ]
    );
    let compressed_len = lzf_literal(&zl).len();
    assert_eq!(
        g.nodes,
        vec![NodeInfo {
            kind: NodeKind::Ziplist,
            len: zl.len(),
            stored_len: compressed_len,
            compressed: true,
            header_count: Some(6)
        }]
    );
    let stats = l.stats().unwrap();
    assert_eq!(stats.elements, 6);
    assert_eq!(stats.nodes, 1);
    assert_eq!(stats.compact_bytes, zl.len() as u64);
    assert_eq!(stats.lzf_stored_bytes, compressed_len as u64);
    assert_eq!(stats.lzf_uncompressed_bytes, zl.len() as u64);
    assert_eq!(stats.max_element_len, 100);

    for (e, want, width_len) in [
        (&es[2], vec![-3, 7, 300], set2.len()),
        (&es[3], vec![-70_000, 70_000], set4.len()),
        (&es[4], vec![i64::MIN, 0, i64::MAX], set8.len()),
    ] {
        assert_eq!(e.value_type, ValueType::SetIntset);
        let g = got(e);
        assert_eq!(g.members, want.iter().map(|&i| Own::I(i)).collect::<Vec<_>>());
        assert_eq!(g.nodes[0].kind, NodeKind::Intset);
        assert_eq!(g.nodes[0].len, width_len);
        assert_eq!(g.nodes[0].header_count, Some(want.len() as u64));
    }

    assert_eq!(es[5].value_type, ValueType::ZSetZiplist);
    assert_eq!(
        got(&es[5]).scored,
        vec![
            (b("a"), 1.5),
            (b("b"), 3.0),
            (b("c"), f64::INFINITY),
            (b("d"), f64::NEG_INFINITY)
        ]
    );
    assert_eq!(
        Rdb::new(&data).unwrap().checksum_status(&eof(&data)),
        ChecksumStatus::Absent
    );

    // 13 (hash ziplist) came with RDB 4.
    for magic in ["REDIS0002", "REDIS0003"] {
        let mut w = W::new(magic);
        let at = w.put(&[13]);
        w.put(&raw(b"h"));
        let err = walk_error(&w.finish());
        let version = magic[5..].parse().unwrap();
        assert_eq!(err.kind(), &unknown_type(13, Dialect::Redis, version));
        assert_eq!(err.offset(), at);
    }
}

#[test]
fn rdb4_ziplist_hash_with_expiretime_ms() {
    let mut w = W::new("REDIS0004");
    let zl = ziplist(&[
        Zl::S(b"name"),
        Zl::S(b"redis"),
        Zl::S(b"n"),
        Zl::I16(-2),
        Zl::S(b"big"),
        Zl::I64(1 << 40),
    ]);
    let expire = [vec![0xfc], 1_900_000_000_123i64.to_le_bytes().to_vec()].concat();
    let p = w.entry(&expire, 13, &raw(b"h"), &raw(&zl));
    let data = w.finish();
    let es = entries(&data);
    let h = &es[0];
    check_placed(h, p, &data);
    assert_eq!(h.value_type, ValueType::HashZiplist);
    assert_eq!(
        h.expiry,
        Some(Expiry {
            unix_ms: 1_900_000_000_123,
            unit: ExpiryUnit::Milliseconds
        })
    );
    assert_eq!(
        got(h).fields,
        vec![
            (b("name"), b("redis"), None),
            (b("n"), Own::I(-2), None),
            (b("big"), Own::I(1 << 40), None)
        ]
    );
    assert_eq!(h.stats().unwrap().elements, 3);
    assert_eq!(eof(&data).checksum, None);
}

#[test]
fn rdb6_ziplist_small_integer_encodings() {
    let mut w = W::new("REDIS0006");
    let zl = ziplist(&[
        Zl::Imm(0),
        Zl::Imm(12),
        Zl::I24(-8_388_608),
        Zl::I24(8_388_607),
        Zl::I8(-128),
        Zl::I8(127),
        Zl::S(b"end"),
    ]);
    let p = w.entry(&[], 10, &raw(b"l"), &raw(&zl));
    let data = w.finish();
    let es = entries(&data);
    check_placed(&es[0], p, &data);
    assert_eq!(
        got(&es[0]).members,
        vec![
            Own::I(0),
            Own::I(12),
            Own::I(-8_388_608),
            Own::I(8_388_607),
            Own::I(-128),
            Own::I(127),
            b("end")
        ]
    );
    let end = eof(&data);
    let crc = crc64(&data[..data.len() - 8]);
    assert_eq!(end.checksum, Some(crc));
    assert_eq!(
        Rdb::new(&data).unwrap().checksum_status(&end),
        ChecksumStatus::Valid(crc)
    );
}

#[test]
fn rdb7_quicklist_with_lzf_node_aux_and_resizedb() {
    let mut w = W::new("REDIS0007");
    w.aux(&raw(b"redis-ver"), &raw(b"3.2.13"));
    w.aux(&raw(b"redis-bits"), &int8(64));
    w.aux(&raw(b"ctime"), &int32(1_700_000_000));
    w.aux(&raw(b"used-mem"), &int16(-1000));
    w.put(&[0xfe, 0]);
    w.put(&[vec![0xfb], len(2), len(1)].concat());
    let zl1 = ziplist(&[Zl::S(b"a"), Zl::S(b"b")]);
    let long = vec![b'L'; 40];
    let zl2 = ziplist(&[Zl::I16(1000), Zl::S(&long), Zl::Imm(3)]);
    let zl2_lzf = lzf_literal(&zl2);
    let ql = [len(2), raw(&zl1), lzf(&zl2_lzf, zl2.len())].concat();
    let expire = [vec![0xfc], 1_900_000_000_000i64.to_le_bytes().to_vec()].concat();
    let p_ql = w.entry(&expire, 14, &raw(b"ql"), &ql);
    w.entry(&[], 0, &raw(b"s"), &raw(b"v"));
    w.put(&[vec![0xfe], len(15)].concat());
    w.put(&[vec![0xfb], len(1), len(0)].concat());
    w.entry(&[], 0, &raw(b"x"), &raw(b"in db 15"));
    let data = w.finish();

    let recs = records(&data);
    let kinds: Vec<&str> = recs
        .iter()
        .map(|r| match r {
            Record::Aux { .. } => "aux",
            Record::SelectDb { .. } => "select",
            Record::ResizeDb { .. } => "resize",
            Record::Entry(_) => "entry",
            Record::Eof(_) => "eof",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "aux", "aux", "aux", "aux", "select", "resize", "entry", "entry", "select", "resize", "entry",
            "eof"
        ]
    );
    assert!(matches!(recs[8], Record::SelectDb { db: 15 }));
    assert!(matches!(
        recs[5],
        Record::ResizeDb {
            db_size: 2,
            expires_size: 1
        }
    ));

    let es = entries(&data);
    let q = &es[0];
    check_placed(q, p_ql, &data);
    assert_eq!(q.value_type, ValueType::ListQuicklist);
    let g = got(q);
    assert_eq!(
        g.members,
        vec![b("a"), b("b"), Own::I(1000), Own::B(long.clone()), Own::I(3)]
    );
    assert_eq!(
        g.nodes,
        vec![
            NodeInfo {
                kind: NodeKind::Ziplist,
                len: zl1.len(),
                stored_len: zl1.len(),
                compressed: false,
                header_count: Some(2)
            },
            NodeInfo {
                kind: NodeKind::Ziplist,
                len: zl2.len(),
                stored_len: zl2_lzf.len(),
                compressed: true,
                header_count: Some(3)
            }
        ]
    );
    let stats = q.stats().unwrap();
    assert_eq!(stats.elements, 5);
    assert_eq!(stats.nodes, 2);
    assert_eq!(stats.compact_bytes, (zl1.len() + zl2.len()) as u64);
    assert_eq!(stats.lzf_stored_bytes, zl2_lzf.len() as u64);
    assert_eq!(stats.lzf_uncompressed_bytes, zl2.len() as u64);
    assert_eq!(es[2].db, 15);
    assert_eq!(es[1].db, 0);

    let meta = Rdb::new(&data).unwrap().metadata().unwrap();
    assert_eq!(meta.aux.len(), 4);
    assert_eq!(meta.aux_value("redis-ver"), Some(RdbString::Raw(b"3.2.13")));
    assert_eq!(meta.aux_value("redis-bits"), Some(RdbString::Int(64)));
    assert_eq!(meta.aux_value("ctime"), Some(RdbString::Int(1_700_000_000)));
    assert_eq!(meta.aux_value("used-mem"), Some(RdbString::Int(-1000)));
    assert_eq!(meta.aux_value("used-mem").unwrap().to_vec().unwrap(), b"-1000");
    assert_eq!(meta.aux_value("missing"), None);
    assert_eq!(
        meta.databases,
        vec![
            DbInfo {
                db: 0,
                keys: 2,
                expires: 1,
                resize_hint: Some((2, 1))
            },
            DbInfo {
                db: 15,
                keys: 1,
                expires: 0,
                resize_hint: Some((1, 0))
            }
        ]
    );
    let end = meta.eof.unwrap();
    assert_eq!(end.offset, data.len() as u64 - 9);
    assert_eq!(
        Rdb::new(&data).unwrap().checksum_status(&end),
        ChecksumStatus::Valid(crc64(&data[..data.len() - 8]))
    );
}

#[test]
fn rdb8_length_forms_zset2_and_encoded_keys() {
    let mut w = W::new("REDIS0008");
    // A key and value whose lengths use the 32-bit and 64-bit forms.
    let p1 = w.entry(
        &[],
        0,
        &[len32(3), b"k32".to_vec()].concat(),
        &[len64(5), b"hello".to_vec()].concat(),
    );
    // A 100-byte key: 14-bit length.
    let long_key = vec![b'k'; 100];
    w.entry(&[], 0, &raw(&long_key), &raw(b"v"));
    // An LZF-compressed key and an integer key.
    let lzf_key = b"a-long-key-name-that-was-compressed".to_vec();
    w.entry(&[], 0, &lzf_str(&lzf_key), &raw(b"v"));
    w.entry(&[], 0, &int8(42), &raw(b"v"));
    let zset2 = [
        len64(2),
        raw(b"a"),
        1.5f64.to_le_bytes().to_vec(),
        raw(b"b"),
        f64::NEG_INFINITY.to_le_bytes().to_vec(),
    ]
    .concat();
    w.entry(&[], 5, &raw(b"z2"), &zset2);
    w.entry(&[], 1, &raw(b"l"), &[len14(2), raw(b"x"), int32(-7)].concat());
    let data = w.finish();

    let es = entries(&data);
    check_placed(&es[0], p1, &data);
    assert_eq!(es[0].key, RdbString::Raw(b"k32"));
    assert_eq!(es[0].string().unwrap(), Some(RdbString::Raw(b"hello")));
    assert_eq!(key(&es[1]), long_key);
    assert!(matches!(es[2].key_bytes().unwrap(), Cow::Owned(_)));
    assert_eq!(key(&es[2]), lzf_key);
    assert!(es[2].key.is_compressed());
    assert_eq!(es[2].key.len(), lzf_key.len());
    assert_eq!(es[3].key, RdbString::Int(42));
    assert_eq!(key(&es[3]), b"42");
    assert_eq!(es[4].value_type, ValueType::ZSet2);
    assert_eq!(
        got(&es[4]).scored,
        vec![(b("a"), 1.5), (b("b"), f64::NEG_INFINITY)]
    );
    assert_eq!(got(&es[5]).members, vec![b("x"), Own::I(-7)]);

    // Type 6 (module values of the 4.0 release candidates) cannot be skipped.
    let mut w = W::new("REDIS0008");
    w.entry(&[], 6, &raw(b"m"), &len64(module_id("hellotype", 0)));
    let err = walk_error(&w.finish());
    assert!(matches!(err.kind(), ErrorKind::UnsupportedType(..)), "{err}");
    assert_eq!(err.key(), Some(&b"m"[..]));
}

// ---- modules -----------------------------------------------------------------------

#[test]
fn module_id_name_and_encver_round_trip() {
    for (name, encver) in [
        ("ReJSON-RL", 3),
        ("vectorset", 0),
        ("TSDB-TYPE", 1),
        ("MBbloom--", 1023),
        ("test__rdb", 7),
        ("AAAAAAAAA", 0),
        ("_________", 1023),
    ] {
        let id = ModuleId(module_id(name, encver));
        assert_eq!(id.name(), name);
        assert_eq!(u64::from(id.encver()), encver);
    }
    assert_eq!(ModuleId(0).name(), "AAAAAAAAA");
    assert_eq!(ModuleId(u64::MAX).name(), "_________");
    assert_eq!(ModuleId(u64::MAX).encver(), 1023);
}

#[test]
fn rdb9_module_value_module_aux_idle_and_freq() {
    let json = module_id("ReJSON-RL", 3);
    let aux_id = module_id("test__rdb", 1);
    let mut w = W::new("REDIS0009");
    let aux_body = [
        vec![2],
        len(7),
        vec![5],
        raw(b"aux"),
        vec![4],
        0.5f64.to_le_bytes().to_vec(),
        vec![0],
    ]
    .concat();
    w.put(&[vec![0xf7], len(aux_id), len(2), len(1), aux_body.clone()].concat());
    let body = [
        vec![1],
        len((-5i64) as u64),
        vec![2],
        len(300),
        vec![3],
        1.5f32.to_le_bytes().to_vec(),
        vec![4],
        (-2.25f64).to_le_bytes().to_vec(),
        vec![5],
        raw(b"hello"),
        vec![5],
        int8(42),
        vec![5],
        lzf_str(b"a module string long enough"),
        vec![0],
    ]
    .concat();
    let value = [len(json), body.clone()].concat();
    assert_eq!(value[0], 0x81, "module ids are written in the 64-bit form");
    let p = w.entry(&[], 7, &raw(b"json"), &value);
    let idle = [vec![0xf8], len(3600)].concat();
    w.entry(&idle, 0, &raw(b"idle"), &raw(b"v"));
    w.entry(&[0xf9, 200], 0, &raw(b"freq"), &raw(b"v"));
    w.put(&[vec![0xf7], len(aux_id), len(2), len(2), vec![0]].concat());
    let data = w.finish();

    let es = entries(&data);
    let m = &es[0];
    check_placed(m, p, &data);
    assert_eq!((m.value_type, m.kind()), (ValueType::Module2, TypeKind::Module));
    assert_eq!(m.module_id(), Some(ModuleId(json)));
    assert_eq!(m.module_id().unwrap().name(), "ReJSON-RL");
    let mv = m.module().unwrap().unwrap();
    assert_eq!(mv.id, ModuleId(json));
    assert_eq!(mv.body, &body[..]);
    assert_eq!(mv.len(), body.len());
    assert!(!mv.is_empty());
    let items = mv.items().collect::<Result<Vec<_>>>().unwrap();
    assert_eq!(
        items,
        vec![
            ModuleItem::SignedInt(-5),
            ModuleItem::UnsignedInt(300),
            ModuleItem::Float(1.5),
            ModuleItem::Double(-2.25),
            ModuleItem::String(RdbString::Raw(b"hello")),
            ModuleItem::String(RdbString::Int(42)),
            ModuleItem::String(RdbString::Lzf {
                compressed: &lzf_literal(b"a module string long enough")[..],
                len: 27
            }),
        ]
    );
    let g = got(m);
    assert_eq!(g.modules, vec![(ModuleId(json), body.len())]);
    let stats = m.stats().unwrap();
    assert_eq!(stats.elements, 0);
    assert_eq!(stats.payload_bytes, body.len() as u64);
    assert_eq!(es[1].module().unwrap().map(|m| m.id), None);
    assert_eq!(es[1].module_id(), None);

    assert_eq!(es[1].idle_seconds, Some(3600));
    assert_eq!(es[1].lfu_freq, None);
    assert_eq!(es[2].lfu_freq, Some(200));
    assert_eq!(es[2].idle_seconds, None);
    assert_eq!(es[2].offset + 2 + 1, es[2].value_offset - 5);

    let meta = Rdb::new(&data).unwrap().metadata().unwrap();
    assert_eq!(meta.module_aux.len(), 2);
    let (before, after) = (&meta.module_aux[0], &meta.module_aux[1]);
    assert_eq!(before.module, ModuleId(aux_id));
    assert_eq!(before.module.name(), "test__rdb");
    assert_eq!(before.module.encver(), 1);
    assert_eq!(before.when, 1);
    assert_eq!(before.body, &aux_body[..]);
    assert_eq!(after.when, 2);
    assert_eq!(after.body, &[0u8][..]);

    // A MODULE_AUX whose first opcode is not UINT, and a module value with an
    // opcode outside 0-5, are corrupt.
    let mut w = W::new("REDIS0009");
    let at = w.put(&[vec![0xf7], len(aux_id)].concat());
    w.put(&[vec![5], len(1), vec![0]].concat());
    let err = walk_error(&w.finish());
    assert!(matches!(err.kind(), ErrorKind::BadModule(_)), "{err}");
    assert_eq!(err.offset(), at + 10, "the opcode after the 9-byte id");
    let mut w = W::new("REDIS0009");
    let p = w.entry(&[], 7, &raw(b"m"), &[len(json), vec![2], len(1)].concat());
    w.put(&[6, 0]);
    let err = walk_error(&w.finish());
    assert!(matches!(err.kind(), ErrorKind::BadModule(_)), "{err}");
    assert_eq!(err.offset(), p.end);
    assert_eq!(err.key(), Some(&b"m"[..]));
}

// ---- Redis 13 and 14 ------------------------------------------------------------

/// A KEY_META class spec for a 4-character name (charset with `-`/`_`
/// swapped), class version and flags.
fn class_spec(name: &str, version: u32, flags: u32) -> Vec<u8> {
    const CHARSET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    let mut spec = 0u32;
    for (i, c) in name.bytes().enumerate() {
        spec |= (CHARSET.iter().position(|&x| x == c).unwrap() as u32) << (26 - 6 * i);
    }
    u32le(spec | (version << 3) | flags)
}

#[test]
fn rdb13_key_meta_prefix() {
    let mut w = W::new("REDIS0013");
    let class1 = [
        class_spec("test", 1, 1),
        vec![2],
        len(42),
        vec![5],
        raw(b"meta"),
        vec![0],
    ]
    .concat();
    let class2 = [class_spec("abcd", 0, 0), vec![0]].concat();
    let expire = [vec![0xfc], 1_900_000_000_000i64.to_le_bytes().to_vec()].concat();
    let meta1 = [vec![0xf3], len(1), class1.clone()].concat();
    let p1 = w.entry(&[expire, meta1].concat(), 0, &raw(b"km"), &raw(b"v"));
    w.entry(&[], 0, &raw(b"plain"), &raw(b"v2"));
    let meta2 = [vec![0xf3], len(2), class1.clone(), class2.clone()].concat();
    let p3 = w.entry(&meta2, 4, &raw(b"h"), &[len(1), raw(b"f"), raw(b"v")].concat());
    let data = w.finish();

    let es = entries(&data);
    assert_eq!(es.len(), 3);
    check_placed(&es[0], p1, &data);
    assert_eq!(key(&es[0]), b"km");
    assert_eq!(es[0].string().unwrap(), Some(RdbString::Raw(b"v")));
    assert_eq!(es[0].expiry.map(|e| e.unix_ms), Some(1_900_000_000_000));
    assert_eq!(
        es[0].key_meta,
        Some(KeyMeta {
            classes: 1,
            bytes: &class1[..]
        })
    );
    assert_eq!(key(&es[1]), b"plain");
    assert_eq!(es[1].key_meta, None, "key metadata applies to one key only");
    assert_eq!(es[1].expiry, None);
    check_placed(&es[2], p3, &data);
    let km = es[2].key_meta.unwrap();
    assert_eq!(km.classes, 2);
    assert_eq!(km.bytes, &[class1, class2].concat()[..]);
    assert_eq!(got(&es[2]).fields, vec![(b("f"), b("v"), None)]);

    // KEY_META is Redis 13+; before that 0xF3 is no opcode.
    let mut w = W::new("REDIS0012");
    let at = w.put(&[0xf3, 1]);
    let err = walk_error(&w.finish());
    assert_eq!(err.kind(), &unknown_type(0xf3, Dialect::Redis, 12));
    assert_eq!(err.offset(), at);
    // A class count outside 1-7 is corrupt.
    for count in [0u64, 8] {
        let mut w = W::new("REDIS0013");
        w.put(&[vec![0xf3], len(count), vec![0; 64]].concat());
        let err = walk_error(&w.finish());
        assert!(matches!(err.kind(), ErrorKind::BadValue(_)), "{count}: {err}");
        assert_eq!(err.offset(), 10);
    }
}

const MS: u64 = 1_700_000_000_000;

/// One stream node: master (MS, 5) with fields f1, f2; a SAMEFIELDS entry,
/// a deleted one, and one with its own fields whose seq delta is negative.
fn stream_node() -> (Vec<u8>, Vec<u8>) {
    let lp = listpack(&[
        // master entry: count, deleted, master field count, fields, 0
        Lp::I(2),
        Lp::I(1),
        Lp::I(2),
        Lp::S(b"f1"),
        Lp::S(b"f2"),
        Lp::I(0),
        // (MS, 5): SAMEFIELDS
        Lp::I(2),
        Lp::I(0),
        Lp::I(0),
        Lp::S(b"a"),
        Lp::I(1000),
        Lp::I(5),
        // (MS+1, 5): deleted
        Lp::I(3),
        Lp::I(1),
        Lp::I(0),
        Lp::S(b"c"),
        Lp::S(b"d"),
        Lp::I(5),
        // (MS+5, 1): own fields
        Lp::I(0),
        Lp::I(5),
        Lp::I(-4),
        Lp::I(1),
        Lp::S(b"x"),
        Lp::S(b"y"),
        Lp::I(6),
    ]);
    (raw_id(MS, 5), lp)
}

/// A stream of layout `version` (4 or 5) around [`stream_node`], with one
/// group; version 5 adds one NACKed entry.
fn stream_value(version: u8) -> Vec<u8> {
    let (node_key, lp) = stream_node();
    let mut v = [len(1), raw(&node_key), raw(&lp)].concat();
    v.extend(len(2)); // length
    v.extend([len(MS + 5), len(1)].concat()); // last id
    v.extend([len(MS), len(5)].concat()); // first id
    v.extend([len(MS + 1), len(5)].concat()); // max deleted id
    v.extend(len(3)); // entries added
    v.extend(len(1)); // groups
    v.extend(raw(b"g1"));
    v.extend([len(MS + 5), len(1)].concat()); // last delivered
    v.extend(len(u64::MAX)); // entries read: -1, unknown
    let pel = if version >= 5 { 2 } else { 1 };
    v.extend(len(pel));
    v.extend(raw_id(MS, 5));
    v.extend((MS as i64 + 1000).to_le_bytes());
    v.extend(len(2));
    if version >= 5 {
        v.extend(raw_id(MS + 5, 1));
        v.extend((MS as i64 + 1100).to_le_bytes());
        v.extend(len(1));
    }
    v.extend(len(1)); // consumers
    v.extend(raw(b"alice"));
    v.extend((MS as i64 + 2000).to_le_bytes()); // seen
    v.extend((MS as i64 + 1500).to_le_bytes()); // active
    v.extend(len(1));
    v.extend(raw_id(MS, 5));
    if version >= 5 {
        v.extend(len(1)); // NACK zone
        v.extend(raw_id(MS + 5, 1));
    }
    // IDMP
    v.extend(len(100));
    v.extend(len(50));
    v.extend(len(2));
    v.extend(raw(b"p1"));
    v.extend(len(2));
    v.extend(raw(b"i1"));
    v.extend([len(MS), len(5)].concat());
    v.extend(int16(777));
    v.extend([len(MS + 5), len(1)].concat());
    v.extend(raw(b"p2"));
    v.extend(len(0));
    v.extend(len(2)); // iids added
    v.extend(len(1)); // iids duplicates
    v
}

fn check_stream(e: &Entry<'_>, version: u8) {
    let (node_key, lp) = stream_node();
    let s = e.stream().unwrap().unwrap();
    assert_eq!(s.version, version);
    assert_eq!(s.node_count, 1);
    let nodes = s.nodes().collect::<Result<Vec<_>>>().unwrap();
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].master_id, id(MS, 5));
    assert_eq!(nodes[0].listpack, RdbString::Raw(&lp[..]));
    assert_eq!(node_key, raw_id(MS, 5));
    assert_eq!(s.length, 2);
    assert_eq!(s.last_id, id(MS + 5, 1));
    assert_eq!(s.first_id, Some(id(MS, 5)));
    assert_eq!(s.max_deleted_id, Some(id(MS + 1, 5)));
    assert_eq!(s.entries_added, Some(3));
    let mut pending = vec![PendingEntry {
        id: id(MS, 5),
        delivery_time_ms: MS as i64 + 1000,
        delivery_count: 2,
    }];
    let mut nacked = Vec::new();
    if version >= 5 {
        pending.push(PendingEntry {
            id: id(MS + 5, 1),
            delivery_time_ms: MS as i64 + 1100,
            delivery_count: 1,
        });
        nacked.push(id(MS + 5, 1));
    }
    assert_eq!(
        s.groups,
        vec![ConsumerGroup {
            name: RdbString::Raw(b"g1"),
            last_delivered: id(MS + 5, 1),
            entries_read: Some(u64::MAX),
            pending,
            consumers: vec![Consumer {
                name: RdbString::Raw(b"alice"),
                seen_time_ms: MS as i64 + 2000,
                active_time_ms: Some(MS as i64 + 1500),
                pending: vec![id(MS, 5)],
            }],
            nacked,
        }]
    );
    assert_eq!(
        s.idmp,
        Some(StreamIdmp {
            duration_s: 100,
            max_entries: 50,
            producers: vec![
                IdempotentProducer {
                    producer_id: RdbString::Raw(b"p1"),
                    entries: vec![
                        (RdbString::Raw(b"i1"), id(MS, 5)),
                        (RdbString::Int(777), id(MS + 5, 1))
                    ],
                },
                IdempotentProducer {
                    producer_id: RdbString::Raw(b"p2"),
                    entries: vec![],
                },
            ],
            iids_added: 2,
            iids_duplicates: 1,
        })
    );
    let g = got(e);
    assert_eq!(g.streams, vec![2]);
    assert_eq!(
        g.entries,
        vec![
            (id(MS, 5), vec![(b("f1"), b("a")), (b("f2"), Own::I(1000))]),
            (id(MS + 5, 1), vec![(b("x"), b("y"))]),
        ]
    );
    assert_eq!(
        g.nodes,
        vec![NodeInfo {
            kind: NodeKind::Listpack,
            len: lp.len(),
            stored_len: lp.len(),
            compressed: false,
            header_count: Some(25)
        }]
    );
    let stats = e.stats().unwrap();
    assert_eq!(stats.elements, 2);
    assert_eq!(stats.nodes, 1);
    assert_eq!(stats.compact_bytes, lp.len() as u64);
}

#[test]
fn rdb13_stream_v4_with_idmp() {
    let mut w = W::new("REDIS0013");
    let p = w.entry(&[], 26, &raw(b"stream"), &stream_value(4));
    w.entry(&[], 0, &raw(b"after"), &raw(b"ok"));
    let data = w.finish();
    let es = entries(&data);
    assert_eq!(es.len(), 2, "the key after the stream parses");
    check_placed(&es[0], p, &data);
    assert_eq!(es[0].value_type, ValueType::StreamListpacks4);
    assert_eq!(es[0].value_type.stream_version(), Some(4));
    check_stream(&es[0], 4);
    assert_eq!(es[1].string().unwrap(), Some(RdbString::Raw(b"ok")));
    assert_eq!(
        Rdb::new(&data).unwrap().checksum_status(&eof(&data)),
        ChecksumStatus::Valid(crc64(&data[..data.len() - 8]))
    );
    // Type 26 is RDB 13+, 27 and 28 are RDB 14+.
    for (magic, byte) in [
        ("REDIS0012", 26u8),
        ("REDIS0013", 27),
        ("REDIS0013", 28),
        ("REDIS0014", 29),
    ] {
        let mut w = W::new(magic);
        let at = w.put(&[byte]);
        w.put(&raw(b"k"));
        let err = walk_error(&w.finish());
        let version = magic[5..].parse().unwrap();
        assert_eq!(
            err.kind(),
            &unknown_type(byte, Dialect::Redis, version),
            "{magic}"
        );
        assert_eq!(err.offset(), at);
    }
}

#[test]
fn rdb14_stream_v5_with_nack_zone() {
    let mut w = W::new("REDIS0014");
    let p = w.entry(&[], 27, &raw(b"stream"), &stream_value(5));
    w.entry(&[], 0, &raw(b"after"), &raw(b"ok"));
    let data = w.finish();
    let es = entries(&data);
    assert_eq!(es.len(), 2);
    check_placed(&es[0], p, &data);
    assert_eq!(es[0].value_type, ValueType::StreamListpacks5);
    check_stream(&es[0], 5);
    assert_eq!(key(&es[1]), b"after");
}

#[test]
fn rdb14_array() {
    let mut w = W::new("REDIS0014");
    let big_index = 1u64 << 40;
    let array = [
        len(5),
        len(1), // has insert index
        len(10),
        len(0),
        len(0),
        raw(b"sds-value"),
        len(3),
        len(1),
        (-7i64).to_le_bytes().to_vec(),
        len(7),
        len(2),
        2.5f64.to_le_bytes().to_vec(),
        len(9),
        len(3),
        raw(b"small"),
        len(big_index),
        len(0),
        int8(123),
    ]
    .concat();
    let p = w.entry(&[], 28, &raw(b"arr"), &array);
    let no_insert = [len(1), len(0), len(4), len(1), i64::MIN.to_le_bytes().to_vec()].concat();
    w.entry(&[], 28, &raw(b"arr2"), &no_insert);
    w.entry(&[], 0, &raw(b"after"), &raw(b"ok"));
    let data = w.finish();

    let es = entries(&data);
    assert_eq!(es.len(), 3);
    check_placed(&es[0], p, &data);
    assert_eq!(
        (es[0].value_type, es[0].kind(), es[0].value_type.name()),
        (ValueType::Array, TypeKind::Array, "array")
    );
    assert_eq!(
        got(&es[0]).array,
        vec![
            (0, Item::B(b("sds-value"))),
            (3, Item::I(-7)),
            (7, Item::F(2.5)),
            (9, Item::B(b("small"))),
            (big_index, Item::B(Own::I(123))),
        ]
    );
    let stats = es[0].stats().unwrap();
    assert_eq!(stats.elements, 5);
    assert_eq!(stats.max_element_len, 9);
    assert_eq!(got(&es[1]).array, vec![(4, Item::I(i64::MIN))]);

    // A tag outside 0-3 and an insert-index flag outside 0-1 are corrupt.
    let mut w = W::new("REDIS0014");
    let p = w.entry(&[], 28, &raw(b"bad"), &[len(1), len(0), len(0)].concat());
    w.put(&[4, 0, 0]);
    let err = walk_error(&w.finish());
    assert!(matches!(err.kind(), ErrorKind::BadValue(_)), "{err}");
    assert_eq!(err.offset(), p.end);
    assert_eq!(err.key(), Some(&b"bad"[..]));
    let mut w = W::new("REDIS0014");
    let p = w.entry(&[], 28, &raw(b"bad"), &len(1));
    w.put(&[2, 0, 0, 0]);
    let err = walk_error(&w.finish());
    assert!(matches!(err.kind(), ErrorKind::BadValue(_)), "{err}");
    assert_eq!(err.offset(), p.end);
}

// ---- versions and dialects ------------------------------------------------------

#[test]
fn unsupported_versions() {
    for (magic, dialect, version) in [
        ("REDIS0015", Dialect::Redis, 15),
        ("REDIS0099", Dialect::Redis, 99),
        ("REDIS0000", Dialect::Redis, 0),
        ("VALKEY082", Dialect::Valkey, 82),
        ("VALKEY079", Dialect::Valkey, 79),
        ("VALKEY011", Dialect::Valkey, 11),
    ] {
        let data = [magic.as_bytes(), &[0xff], &[0; 8]].concat();
        let err = Rdb::new(&data).unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::UnsupportedVersion {
                dialect,
                version,
                supported: SUPPORTED
            },
            "{magic}"
        );
        assert_eq!(err.offset(), 0);
        let text = err.to_string();
        assert!(
            text.contains(&format!("unsupported RDB version {version}")),
            "{text}"
        );
        assert!(text.contains(SUPPORTED), "{text}");
        assert!(text.contains(&dialect.to_string()), "{text}");
    }
    assert!(SUPPORTED.contains("REDIS0001-REDIS0014"));
    assert!(SUPPORTED.contains("VALKEY080, VALKEY081"));
    for magic in ["REDIS0001", "REDIS0014", "VALKEY080", "VALKEY081"] {
        assert!(Rdb::new(W::new(magic).finish().as_slice()).is_ok(), "{magic}");
    }
}

#[test]
fn valkey80_hash2_with_field_ttls() {
    let mut w = W::new("VALKEY080");
    let hash2 = [
        len(3),
        raw(b"f1"),
        raw(b"v1"),
        1_700_000_000_123i64.to_le_bytes().to_vec(),
        raw(b"f2"),
        int8(7),
        (-1i64).to_le_bytes().to_vec(),
        raw(b"f3"),
        raw(b""),
        0i64.to_le_bytes().to_vec(),
    ]
    .concat();
    let p = w.entry(&[], 22, &raw(b"h2"), &hash2);
    w.entry(&[], 0, &raw(b"after"), &raw(b"ok"));
    let data = w.finish();
    let rdb = Rdb::new(&data).unwrap();
    assert_eq!((rdb.dialect(), rdb.version()), (Dialect::Valkey, 80));
    let es = entries(&data);
    check_placed(&es[0], p, &data);
    let h = &es[0];
    assert_eq!(
        (h.value_type, h.value_type.name(), h.kind(), h.value_type.byte()),
        (ValueType::ValkeyHash2, "hash_2", TypeKind::Hash, 22)
    );
    assert_eq!(
        got(h).fields,
        vec![
            (b("f1"), b("v1"), Some(1_700_000_000_123)),
            (b("f2"), Own::I(7), None),
            (b("f3"), b(""), Some(0)),
        ]
    );
    let stats = h.stats().unwrap();
    assert_eq!(stats.elements, 3);
    assert_eq!(stats.fields_with_expiry, 2);
    assert_eq!(key(&es[1]), b"after");
}

#[test]
fn byte_22_in_redis_11_is_an_unknown_type() {
    let mut w = W::new("REDIS0011");
    w.aux(&raw(b"redis-ver"), &raw(b"7.2.4"));
    w.entry(&[], 0, &raw(b"ok"), &raw(b"1"));
    let prefix = w.put(&[vec![0xfc], 1_900_000_000_000i64.to_le_bytes().to_vec()].concat());
    let at = w.put(&[22]);
    w.put(&[len(1), raw(b"f"), raw(b"v"), (-1i64).to_le_bytes().to_vec()].concat());
    let data = w.finish();
    let err = walk_error(&data);
    assert_eq!(err.kind(), &unknown_type(22, Dialect::Redis, 11));
    assert_eq!(
        err.offset(),
        at,
        "the offset is the type byte's, not the prefix's"
    );
    assert_eq!(at, prefix + 9);
    assert_eq!(
        err.to_string(),
        format!(
            "unknown value type byte 22 (0x16) for Redis RDB version 11, which has types 0-7, 9-21 \
             (22 is hash_metadata_pre_ga only from Redis RDB 12 on): a record's length cannot be found \
             without its type, so the walk stops here at byte offset {at}"
        )
    );
    // The entry before it was delivered first.
    let mut it = Rdb::new(&data).unwrap().entries();
    assert_eq!(key(&it.next().unwrap().unwrap()), b"ok");
    assert!(it.next().unwrap().is_err());
    assert!(it.next().is_none(), "the walk stops after an error");
}

#[test]
fn redis12_hash_field_expiration_types() {
    let min: i64 = 1_800_000_000_000;
    let mut w = W::new("REDIS0012");
    // 22: HASH_METADATA_PRE_GA, absolute TTLs.
    let pre_ga = [
        len(2),
        len(0),
        raw(b"a"),
        raw(b"1"),
        len(min as u64),
        raw(b"b"),
        raw(b"2"),
    ]
    .concat();
    let p22 = w.entry(&[], 22, &raw(b"h22"), &pre_ga);
    // 23: HASH_LISTPACK_EX_PRE_GA, triples only.
    let lp23 = listpack(&[
        Lp::S(b"a"),
        Lp::S(b"x"),
        Lp::I(min + 7),
        Lp::S(b"b"),
        Lp::I(5),
        Lp::I(0),
    ]);
    w.entry(&[], 23, &raw(b"h23"), &raw(&lp23));
    // 24: HASH_METADATA, TTLs relative to the minimum.
    let meta = [
        min.to_le_bytes().to_vec(),
        len(3),
        len(0),
        raw(b"a"),
        raw(b"x"),
        len(1),
        raw(b"b"),
        raw(b"y"),
        len(1001),
        raw(b"c"),
        raw(b"z"),
    ]
    .concat();
    let p24 = w.entry(&[], 24, &raw(b"h24"), &meta);
    // 25: HASH_LISTPACK_EX, with a stale minimum that must be ignored.
    let lp25 = listpack(&[
        Lp::S(b"f1"),
        Lp::S(b"v1"),
        Lp::I(0),
        Lp::S(b"f2"),
        Lp::I(42),
        Lp::I(min + 500),
    ]);
    let p25 = w.entry(
        &[],
        25,
        &raw(b"h25"),
        &[5i64.to_le_bytes().to_vec(), lzf_str(&lp25)].concat(),
    );
    let data = w.finish();

    let es = entries(&data);
    assert_eq!(es.len(), 4);
    check_placed(&es[0], p22, &data);
    check_placed(&es[2], p24, &data);
    check_placed(&es[3], p25, &data);
    assert_eq!(
        (es[0].value_type, es[0].value_type.name()),
        (ValueType::HashMetadataPreGa, "hash_metadata_pre_ga")
    );
    assert_eq!(
        got(&es[0]).fields,
        vec![(b("a"), b("1"), None), (b("b"), b("2"), Some(min))]
    );
    assert_eq!(es[1].value_type, ValueType::HashListpackExPreGa);
    assert_eq!(
        got(&es[1]).fields,
        vec![(b("a"), b("x"), Some(min + 7)), (b("b"), Own::I(5), None)]
    );
    assert_eq!(es[2].value_type, ValueType::HashMetadata);
    assert_eq!(
        got(&es[2]).fields,
        vec![
            (b("a"), b("x"), None),
            (b("b"), b("y"), Some(min)),
            (b("c"), b("z"), Some(min + 1000))
        ]
    );
    assert_eq!(es[3].value_type, ValueType::HashListpackEx);
    let g = got(&es[3]);
    assert_eq!(
        g.fields,
        vec![(b("f1"), b("v1"), None), (b("f2"), Own::I(42), Some(min + 500))]
    );
    assert_eq!(g.nodes[0].kind, NodeKind::Listpack);
    assert_eq!(g.nodes[0].header_count, Some(6));
    assert!(g.nodes[0].compressed);
    let stats = es[3].stats().unwrap();
    assert_eq!((stats.elements, stats.fields_with_expiry), (2, 1));
}

#[test]
fn valkey80_slot_import_record() {
    let job = b"0123456789abcdef0123456789abcdef01234567";
    let mut w = W::new("VALKEY080");
    w.aux(&raw(b"valkey-ver"), &raw(b"9.1.2"));
    w.put(
        &[
            vec![0xf3],
            raw(job),
            len(2),
            len(0),
            len(100),
            len(200),
            len(16383),
        ]
        .concat(),
    );
    w.put(&[0xfe, 0]);
    w.entry(&[], 0, &raw(b"k"), &raw(b"v"));
    let data = w.finish();
    let recs = records(&data);
    match &recs[1] {
        Record::SlotImport { job: j, ranges } => {
            assert_eq!(*j, RdbString::Raw(&job[..]));
            assert_eq!(ranges, &vec![(0, 100), (200, 16383)]);
        }
        other => panic!("{other:?}"),
    }
    let meta = Rdb::new(&data).unwrap().metadata().unwrap();
    assert_eq!(meta.other_records, 1);
    assert_eq!(meta.databases[0].keys, 1);
    assert_eq!(entries(&data)[0].key, RdbString::Raw(b"k"));

    // 23, 24 and 0xF2 mean nothing to Valkey 80.
    for byte in [23u8, 24, 0xf2] {
        let mut w = W::new("VALKEY080");
        let at = w.put(&[byte]);
        w.put(&raw(b"k"));
        let err = walk_error(&w.finish());
        assert_eq!(err.kind(), &unknown_type(byte, Dialect::Valkey, 80), "{byte}");
        assert_eq!(err.offset(), at);
    }
}

#[test]
fn valkey81_path_hash_and_update_record() {
    let command = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nva\r\nl\r\n";
    let mut w = W::new("VALKEY081");
    let at = w.put(&[0xf2]);
    w.put(command);
    let path_hash = [
        len(2),
        raw(b"/a"),
        len(1),
        raw(b"f"),
        raw(b"v"),
        raw(b"/b/c"),
        len(2),
        raw(b"x"),
        raw(b"1"),
        raw(b"y"),
        int8(2),
    ]
    .concat();
    let p = w.entry(&[], 23, &raw(b"ph"), &path_hash);
    w.entry(
        &[],
        22,
        &raw(b"h2"),
        &[len(1), raw(b"f"), raw(b"v"), (-1i64).to_le_bytes().to_vec()].concat(),
    );
    let data = w.finish();

    let recs = records(&data);
    match &recs[0] {
        Record::Update { command: c } => assert_eq!(*c, &command[..]),
        other => panic!("{other:?}"),
    }
    assert_eq!(at, 9);
    let es = entries(&data);
    check_placed(&es[0], p, &data);
    assert_eq!(
        (es[0].value_type, es[0].value_type.name(), es[0].kind()),
        (ValueType::ValkeyPathHash, "path_hash", TypeKind::Hash)
    );
    let g = got(&es[0]);
    assert_eq!(g.paths, vec![(b("/a"), 1), (b("/b/c"), 2)]);
    assert_eq!(
        g.fields,
        vec![
            (b("f"), b("v"), None),
            (b("x"), b("1"), None),
            (b("y"), Own::I(2), None)
        ]
    );
    assert_eq!(es[0].stats().unwrap().elements, 3);
    assert_eq!(es[1].value_type, ValueType::ValkeyHash2);
    assert_eq!(Rdb::new(&data).unwrap().metadata().unwrap().other_records, 1);

    // A command that is not RESP multibulk is corrupt.
    for bad in [&b"SET k v\r\n"[..], b"*1\r\n$3\r\nSETX\r\n", b"*1\r\n$x\r\n"] {
        let mut w = W::new("VALKEY081");
        w.put(&[0xf2]);
        w.put(bad);
        let err = walk_error(&w.finish());
        assert!(matches!(err.kind(), ErrorKind::BadValue(_)), "{err}");
    }
}

// ---- other records ----------------------------------------------------------------

#[test]
fn functions_and_slot_info() {
    let lib = b"#!lua name=mylib\nredis.register_function('f', function() return 1 end)";
    let mut w = W::new("REDIS0012");
    w.put(&[vec![0xf5], raw(lib)].concat());
    w.put(&[0xfe, 0]);
    w.put(&[vec![0xf4], len(1234), len(5), len(1)].concat());
    w.entry(&[], 0, &raw(b"k"), &raw(b"v"));
    w.put(&[vec![0xf4], len(16383), len(300), len(0)].concat());
    w.entry(&[], 0, &raw(b"k2"), &raw(b"v"));
    let data = w.finish();
    let recs = records(&data);
    assert!(matches!(&recs[0], Record::Function { source } if *source == RdbString::Raw(&lib[..])));
    assert!(matches!(
        recs[2],
        Record::SlotInfo {
            slot: 1234,
            keys: 5,
            expires: 1
        }
    ));
    let meta = Rdb::new(&data).unwrap().metadata().unwrap();
    assert_eq!(meta.functions, vec![RdbString::Raw(&lib[..])]);
    assert_eq!(meta.slot_info, vec![(1234, 5, 1), (16383, 300, 0)]);
    assert_eq!(meta.databases.len(), 1);
    assert_eq!(meta.databases[0].keys, 2);

    // FUNCTION (Redis 7.0 release candidates), with and without a description.
    let mut w = W::new("REDIS0010");
    w.put(
        &[
            vec![0xf6],
            raw(b"myfunc"),
            raw(b"LUA"),
            len(1),
            raw(b"desc"),
            raw(b"return 1"),
        ]
        .concat(),
    );
    w.put(&[vec![0xf6], raw(b"other"), raw(b"LUA"), len(0), raw(b"return 2")].concat());
    let data = w.finish();
    let recs = records(&data);
    match &recs[0] {
        Record::FunctionPreGa {
            name,
            engine,
            description,
            code,
        } => {
            assert_eq!(*name, RdbString::Raw(b"myfunc"));
            assert_eq!(*engine, RdbString::Raw(b"LUA"));
            assert_eq!(*description, Some(RdbString::Raw(b"desc")));
            assert_eq!(*code, RdbString::Raw(b"return 1"));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        &recs[1],
        Record::FunctionPreGa {
            description: None,
            ..
        }
    ));
    let meta = Rdb::new(&data).unwrap().metadata().unwrap();
    assert_eq!(
        meta.functions,
        vec![RdbString::Raw(b"return 1"), RdbString::Raw(b"return 2")]
    );
}

#[test]
fn checksum_valid_mismatch_disabled_and_trailing_bytes() {
    let mut w = W::new("REDIS0011");
    w.aux(&raw(b"redis-bits"), &int8(64));
    let p = w.entry(&[], 0, &raw(b"k"), &raw(b"hello"));
    let good = w.finish();
    let stored = u64::from_le_bytes(good[good.len() - 8..].try_into().unwrap());
    assert_eq!(stored, crc64(&good[..good.len() - 8]));

    let rdb = Rdb::new(&good).unwrap();
    let end = eof(&good);
    assert_eq!(end.offset, good.len() as u64 - 9);
    assert_eq!(end.checksum, Some(stored));
    assert!(end.trailing.is_empty());
    assert_eq!(rdb.checksum_status(&end), ChecksumStatus::Valid(stored));
    assert_eq!(rdb.metadata().unwrap().eof, Some(end));

    // One body byte flipped: still parses, the checksum says so.
    let mut flipped = good.clone();
    flipped[p.value_offset as usize + 1] ^= 0x20; // "hello" -> "Hello"
    let es = entries(&flipped);
    assert_eq!(es[0].string().unwrap(), Some(RdbString::Raw(b"Hello")));
    let computed = crc64(&flipped[..flipped.len() - 8]);
    assert_ne!(computed, stored);
    assert_eq!(
        Rdb::new(&flipped).unwrap().checksum_status(&eof(&flipped)),
        ChecksumStatus::Mismatch { stored, computed }
    );

    // A flipped checksum byte is a mismatch too.
    let mut bad_crc = good.clone();
    *bad_crc.last_mut().unwrap() ^= 1;
    assert!(matches!(
        Rdb::new(&bad_crc).unwrap().checksum_status(&eof(&bad_crc)),
        ChecksumStatus::Mismatch { computed, .. } if computed == stored
    ));

    // Stored 0: written with rdbchecksum no.
    let mut disabled = good.clone();
    let n = disabled.len();
    disabled[n - 8..].fill(0);
    assert_eq!(
        Rdb::new(&disabled).unwrap().checksum_status(&eof(&disabled)),
        ChecksumStatus::Disabled
    );

    // Bytes after the checksum (an AOF tail) are handed back, not parsed.
    let tail = b"*1\r\n$4\r\nPING\r\n";
    let with_tail = [&good[..], tail].concat();
    let end = eof(&with_tail);
    assert_eq!(end.trailing, tail);
    assert_eq!(
        Rdb::new(&with_tail).unwrap().checksum_status(&end),
        ChecksumStatus::Valid(stored)
    );

    // A checksum cut short is a truncation, not a silently absent checksum.
    let err = walk_error(&good[..good.len() - 3]);
    assert_eq!(
        err.kind(),
        &ErrorKind::Truncated {
            what: "checksum",
            needed: 8,
            available: 5
        }
    );
    assert_eq!(err.offset(), good.len() as u64 - 8);

    // Before RDB 5 everything after EOF is trailing.
    let mut w = W::new("REDIS0004");
    w.entry(&[], 0, &raw(b"k"), &raw(b"v"));
    let old = [&w.finish()[..], b"junk"].concat();
    let end = eof(&old);
    assert_eq!((end.checksum, end.trailing), (None, &b"junk"[..]));
    assert_eq!(
        Rdb::new(&old).unwrap().checksum_status(&end),
        ChecksumStatus::Absent
    );
}

#[test]
fn inputs_that_are_not_rdb_files() {
    let cases: Vec<(&[u8], String)> = vec![
        (b"", "the file is empty".into()),
        (
            &[0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x01],
            "it is gzip-compressed: decompress it first (gunzip)".into(),
        ),
        (&[0x1f, 0x8b], "it is gzip-compressed: decompress it first (gunzip)".into()),
        (
            &[0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0, 0, 0],
            "it is zstd-compressed: decompress it first (unzstd)".into(),
        ),
        (
            b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
            "it looks like an AOF file (Redis commands), not an RDB snapshot".into(),
        ),
        (
            b"$EOF:0123456789012345678901234567890123456789\r\nREDIS0011",
            "it looks like a replication stream: strip the '$' framing line first".into(),
        ),
        (
            b"hello world, this is not an rdb file\n",
            "it starts with text \"hello world, thi\", expected the magic REDIS00NN or VALKEYNNN".into(),
        ),
        (b"REDIS", "malformed magic \"REDIS\"".into()),
        (b"REDIS00x1\xff", "malformed magic \"REDIS00x1\"".into()),
        (b"VALKEY8.0\xff", "malformed magic \"VALKEY8.0\"".into()),
        (
            &[0, 1, 2, 3, 0xfe, 0xff, 0x80, 0x7f, 0x10, 0x11],
            "it starts with bytes [00, 01, 02, 03, fe, ff, 80, 7f, 10, 11], expected the magic REDIS00NN or VALKEYNNN"
                .into(),
        ),
    ];
    for (input, message) in cases {
        let err = Rdb::new(input).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::NotRdb(message.clone()), "{input:?}");
        assert_eq!(err.offset(), 0);
        assert_eq!(
            err.to_string(),
            format!("not an RDB file: {message} at byte offset 0")
        );
    }
}

/// Redis Enterprise's RAM_LRU (opcode 107): one length before a key, kept
/// as the key's RAM_LRU value, not as its idle time (no published source
/// defines it; librdb reads and discards it); the walk goes on to the next
/// key. In a VALKEY-magic file 107 is no opcode: an unknown type byte, at
/// its offset.
#[test]
fn rdb9_ram_lru_opcode_107_is_kept_apart_from_the_idle_time() {
    let mut w = W::new("REDIS0009");
    let ram_lru = [vec![107], len(90_000)].concat();
    let p = w.entry(&ram_lru, 0, &raw(b"enterprise"), &raw(b"v"));
    w.entry(&[], 0, &raw(b"next"), &raw(b"w"));
    let data = w.finish();
    let es = entries(&data);
    assert_eq!(es.len(), 2);
    check_placed(&es[0], p, &data);
    assert_eq!((es[0].ram_lru, es[0].idle_seconds), (Some(90_000), None));
    assert_eq!(es[0].key, RdbString::Raw(b"enterprise"));
    assert_eq!((es[1].ram_lru, es[1].idle_seconds), (None, None));

    let mut w = W::new("VALKEY080");
    w.entry(&[107, 1], 0, &raw(b"k"), &raw(b"v"));
    let data = w.finish();
    let e = Rdb::new(&data).unwrap().entries().find_map(|r| r.err()).unwrap(); // ok: unit test
    assert_eq!(e.offset(), 9, "{e}");
}
