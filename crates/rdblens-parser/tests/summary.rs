//! A visitor that takes blob summaries (`ValueVisitor::summary_only`) sees
//! the same value as one that takes every element: the same figures on every
//! fixture, and the same error, at the same offset, on damaged blobs.

mod common;

use rdblens_parser::*;

/// Forwards everything to `ValueStats`, element by element.
#[derive(Default)]
struct PerElement(ValueStats);

impl ValueVisitor for PerElement {
    fn string(&mut self, v: RdbString<'_>) {
        self.0.string(v)
    }
    fn node(&mut self, n: &NodeInfo) {
        self.0.node(n)
    }
    fn member(&mut self, m: Element<'_>) {
        self.0.member(m)
    }
    fn scored(&mut self, m: Element<'_>, s: f64) {
        self.0.scored(m, s)
    }
    fn field(&mut self, f: Element<'_>, v: Element<'_>, e: Option<i64>) {
        self.0.field(f, v, e)
    }
    fn stream(&mut self, s: &StreamValue<'_>) {
        self.0.stream(s)
    }
    fn stream_entry(&mut self, id: StreamId, pairs: &[(Element<'_>, Element<'_>)]) {
        self.0.stream_entry(id, pairs)
    }
    fn module(&mut self, m: &ModuleValue<'_>) {
        self.0.module(m)
    }
    fn array_item(&mut self, i: u64, item: ArrayItem<'_>) {
        self.0.array_item(i, item)
    }
}

/// Takes summaries, counting them, and records whether all members were
/// integers; with `by_header`, counts every blob whose header gives its
/// count by that header alone.
#[derive(Default)]
struct Summed {
    stats: ValueStats,
    summaries: u64,
    all_int: Vec<bool>,
    by_header: bool,
}

impl Summed {
    fn by_header() -> Self {
        Summed {
            by_header: true,
            ..Summed::default()
        }
    }
}

impl ValueVisitor for Summed {
    fn string(&mut self, v: RdbString<'_>) {
        self.stats.string(v)
    }
    fn node(&mut self, n: &NodeInfo) {
        self.stats.node(n)
    }
    fn member(&mut self, m: Element<'_>) {
        self.stats.member(m)
    }
    fn scored(&mut self, m: Element<'_>, s: f64) {
        self.stats.scored(m, s)
    }
    fn field(&mut self, f: Element<'_>, v: Element<'_>, e: Option<i64>) {
        self.stats.field(f, v, e)
    }
    fn stream(&mut self, s: &StreamValue<'_>) {
        self.stats.stream(s)
    }
    fn stream_entry(&mut self, id: StreamId, pairs: &[(Element<'_>, Element<'_>)]) {
        self.stats.stream_entry(id, pairs)
    }
    fn module(&mut self, m: &ModuleValue<'_>) {
        self.stats.module(m)
    }
    fn array_item(&mut self, i: u64, item: ArrayItem<'_>) {
        self.stats.array_item(i, item)
    }
    fn summary_only(&self) -> bool {
        true
    }
    fn summary(&mut self, s: &BlobSummary) {
        self.summaries += 1;
        self.all_int.push(s.all_int);
        self.stats.summary(s)
    }
    fn counts_by_header(&self) -> bool {
        self.by_header
    }
    fn header_suffices(&self, _node: &NodeInfo) -> bool {
        self.by_header
    }
}

/// Whether every member of each summarizable blob is an integer, element
/// by element (`None` for plain quicklist nodes, never summarized).
#[derive(Default)]
struct IntMembers {
    nodes: Vec<Option<bool>>,
}

impl IntMembers {
    fn last(&mut self, int: bool) {
        if let Some(Some(last)) = self.nodes.last_mut() {
            *last &= int;
        }
    }
}

impl ValueVisitor for IntMembers {
    fn node(&mut self, n: &NodeInfo) {
        self.nodes.push((n.kind != NodeKind::Plain).then_some(true));
    }
    fn member(&mut self, m: Element<'_>) {
        self.last(m.as_int().is_some())
    }
    fn scored(&mut self, _m: Element<'_>, _s: f64) {
        self.last(false)
    }
    fn field(&mut self, _f: Element<'_>, _v: Element<'_>, _e: Option<i64>) {
        self.last(false)
    }
}

fn both(
    e: &Entry<'_>,
) -> (
    std::result::Result<ValueStats, String>,
    std::result::Result<ValueStats, String>,
) {
    let mut per = PerElement::default();
    let mut sum = Summed::default();
    let a = e.visit(&mut per).map(|_| per.0).map_err(|e| e.to_string());
    let b = e.visit(&mut sum).map(|_| sum.stats).map_err(|e| e.to_string());
    (a, b)
}

/// Also: a blob counted by its header gives the walk's count, node and
/// sizes (all but the element lengths); values with no blob, or whose blobs
/// the header does not count (zipmaps, field TTLs, flat ziplist lists,
/// plain nodes), come out whole.
#[test]
fn summaries_match_elements_on_every_fixture() {
    let mut summaries = 0;
    let (mut entries, mut counted) = (0, 0);
    for path in common::fixture_files() {
        let data = std::fs::read(&path).unwrap();
        let rdb = Rdb::new(&data).unwrap();
        for e in rdb.entries() {
            let e = e.unwrap();
            entries += 1;
            let mut per = PerElement::default();
            e.visit(&mut per).unwrap();
            let mut sum = Summed::default();
            e.visit(&mut sum).unwrap();
            assert_eq!(per.0, sum.stats, "{}: {:?}", path.display(), e.key_bytes());
            let mut head = Summed::by_header();
            e.visit(&mut head).unwrap();
            let lengths = |s: ValueStats| ValueStats {
                max_element_len: 0,
                payload_bytes: 0,
                ..s
            };
            assert_eq!(
                lengths(head.stats),
                lengths(sum.stats),
                "{}: {:?}",
                path.display(),
                e.key_bytes()
            );
            if head.stats != sum.stats {
                counted += 1;
                // Only the lengths of what was counted are missing.
                assert!(head.stats.payload_bytes < sum.stats.payload_bytes);
            }
            // Blobs of members (sets, lists): integer-ness as the elements say.
            let mut ints = IntMembers::default();
            e.visit(&mut ints).unwrap();
            let ints: Vec<bool> = ints.nodes.into_iter().flatten().collect();
            if e.kind() != TypeKind::Stream {
                assert_eq!(ints, sum.all_int, "{}: {:?}", path.display(), e.key_bytes());
            }
            summaries += sum.summaries;
        }
    }
    // Every compact type of every version goes through the summary path.
    assert!(
        entries > 1000 && summaries > 500 && counted > 300,
        "{entries} entries, {summaries} summaries, {counted} counted by header"
    );
}

#[test]
fn summaries_fail_as_elements_do_on_damaged_blobs() {
    let mut compared = 0;
    let mut errors = 0;
    for path in common::fixture_files() {
        let name = common::name(&path);
        if !name.contains("all-types") && !name.contains("encodings") {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        let rdb = Rdb::new(&data).unwrap();
        // Where the compact values lie, from the intact file.
        let spans: Vec<(usize, usize)> = rdb
            .entries()
            .map(|e| e.unwrap())
            .filter(|e| {
                matches!(
                    e.kind(),
                    TypeKind::Hash | TypeKind::Set | TypeKind::ZSet | TypeKind::List
                )
            })
            .map(|e| (e.value_offset as usize, e.value.len()))
            .collect();
        for (n, &(start, len)) in spans.iter().enumerate() {
            // A few bytes of each value, each flipped three ways.
            for k in 0..len.min(24) {
                let at = start + (k * 7919 + n) % len;
                for flip in [0x01u8, 0x80, 0xff] {
                    let mut bad = data.clone();
                    bad[at] ^= flip;
                    let Ok(rdb) = Rdb::new(&bad) else { continue };
                    for e in rdb.entries() {
                        let Ok(e) = e else { break };
                        if (e.value_offset as usize) < start {
                            continue;
                        }
                        let (a, b) = both(&e);
                        compared += 1;
                        errors += usize::from(a.is_err());
                        assert_eq!(a, b, "{name}: byte {at} ^ {flip:#x}");
                        // Counted by header: no panic, and where the walk
                        // passes, its count (the walk checks the header's).
                        let mut head = Summed::by_header();
                        if let (Ok(a), Ok(())) = (&a, e.visit(&mut head)) {
                            assert_eq!(head.stats.elements, a.elements, "{name}: byte {at} ^ {flip:#x}");
                        }
                        break;
                    }
                }
            }
        }
    }
    assert!(
        compared > 1000 && errors > 100,
        "{compared} compared, {errors} errors"
    );
}

/// Counting by the header reads an LZF blob no further than its header, as
/// a server loading it without deep sanitization checks it: a blob whose
/// end is damaged is counted, and only a walk finds the damage.
#[test]
fn a_blob_counted_by_its_header_is_not_decompressed_past_it() {
    let path = common::fixtures_dir().join("redis-7.0.15/all-types.rdb");
    let data = std::fs::read(&path).unwrap();
    let rdb = Rdb::new(&data).unwrap();
    let mut damaged = 0;
    for e in rdb.entries() {
        let e = e.unwrap();
        let mut sum = Summed::default();
        e.visit(&mut sum).unwrap();
        let one_blob = matches!(e.value_type, ValueType::HashListpack | ValueType::ZSetListpack);
        if !one_blob || sum.stats.lzf_stored_bytes == 0 {
            continue;
        }
        // The last byte of the value is the blob's last LZF byte.
        let end = e.value_offset as usize + e.value.len() - 1;
        let mut bad = data.clone();
        bad[end] ^= 0xff;
        let rdb = Rdb::new(&bad).unwrap();
        let e = rdb
            .entries()
            .map(|e| e.unwrap())
            .find(|b| b.value_offset == e.value_offset)
            .unwrap();
        let walked = e.visit(&mut Summed::default()).map_err(|e| e.to_string());
        assert!(walked.is_err(), "{:?}", e.key_bytes());
        let mut head = Summed::by_header();
        e.visit(&mut head).unwrap();
        assert_eq!(head.stats.elements, sum.stats.elements);
        damaged += 1;
    }
    assert!(damaged >= 3, "{damaged} compressed blobs");
}
