//! Runs the structural walk with strings and blobs opened, handing elements
//! to a [`ValueVisitor`]. LZF data is decompressed into reusable buffers, so
//! a value costs no allocation per element.

use super::walk::{BlobRole, RawArrayItem, Structure};
use super::{ArrayItem, BlobSummary, NodeInfo, NodeKind, ValueVisitor};
use crate::blob::{BlobError, BlobResult, Intset, Listpack, Ziplist, Zipmap};
use crate::element::Element;
use crate::error::{Error, ErrorKind, Result};
use crate::module::ModuleValue;
use crate::stream::{StreamId, StreamValue};
use crate::string::RdbString;

/// Reusable buffers for decompressed data; keep one per thread.
#[derive(Default, Debug)]
pub struct Scratch {
    blob: Vec<u8>,
    first: Vec<u8>,
    second: Vec<u8>,
}

impl Scratch {
    /// Empty buffers, grown on demand.
    pub fn new() -> Self {
        Self::default()
    }
}

pub(crate) struct Decoder<'a, 's, V> {
    pub file: &'a [u8],
    /// The file offset of `file[0]` (0 for a whole file; a chunk's start
    /// for a chunk of a stream).
    pub base: u64,
    pub scratch: &'s mut Scratch,
    pub visitor: &'s mut V,
}

/// Offset of a slice borrowed from `file`.
pub(crate) fn offset_in(file: &[u8], part: &[u8]) -> u64 {
    (part.as_ptr() as usize).wrapping_sub(file.as_ptr() as usize) as u64
}

fn string_offset(file: &[u8], s: &RdbString<'_>) -> u64 {
    match s {
        RdbString::Raw(b) => offset_in(file, b),
        RdbString::Lzf { compressed, .. } => offset_in(file, compressed),
        RdbString::Int(_) => 0,
    }
}

fn blob_error(base: u64, file: &[u8], s: &RdbString<'_>, e: BlobError) -> Error {
    let at = base + string_offset(file, s);
    match s {
        RdbString::Lzf { .. } => Error::new(at, e.kind).with_blob_offset(e.pos as u64),
        _ => Error::new(at + e.pos as u64, e.kind),
    }
}

impl<'a, V: ValueVisitor> Structure<'a> for Decoder<'a, '_, V> {
    fn string(&mut self, s: RdbString<'a>) -> Result<()> {
        self.visitor.string(s);
        Ok(())
    }

    fn member(&mut self, s: RdbString<'a>) -> Result<()> {
        let e = s.element_in(&mut self.scratch.first, self.base + string_offset(self.file, &s))?;
        self.visitor.member(e);
        Ok(())
    }

    fn scored(&mut self, s: RdbString<'a>, score: f64) -> Result<()> {
        let e = s.element_in(&mut self.scratch.first, self.base + string_offset(self.file, &s))?;
        self.visitor.scored(e, score);
        Ok(())
    }

    fn field(&mut self, f: RdbString<'a>, v: RdbString<'a>, expire_ms: Option<i64>) -> Result<()> {
        let fe = f.element_in(&mut self.scratch.first, self.base + string_offset(self.file, &f))?;
        let ve = v.element_in(&mut self.scratch.second, self.base + string_offset(self.file, &v))?;
        self.visitor.field(fe, ve, expire_ms);
        Ok(())
    }

    fn path(&mut self, path: RdbString<'a>, fields: u64) -> Result<()> {
        let p = path.element_in(
            &mut self.scratch.first,
            self.base + string_offset(self.file, &path),
        )?;
        self.visitor.path(p, fields);
        Ok(())
    }

    fn array_item(&mut self, index: u64, item: RawArrayItem<'a>) -> Result<()> {
        let item = match item {
            RawArrayItem::Bytes(s) => ArrayItem::Bytes(
                s.element_in(&mut self.scratch.first, self.base + string_offset(self.file, &s))?,
            ),
            RawArrayItem::Int(i) => ArrayItem::Int(i),
            RawArrayItem::Float(f) => ArrayItem::Float(f),
        };
        self.visitor.array_item(index, item);
        Ok(())
    }

    fn module(&mut self, m: ModuleValue<'a>) -> Result<()> {
        self.visitor.module(&m);
        Ok(())
    }

    fn wants_stream_details(&self) -> bool {
        true
    }

    fn stream(&mut self, s: StreamValue<'a>) -> Result<()> {
        self.visitor.stream(&s);
        for node in s.nodes() {
            let node = node?;
            let lp = &node.listpack;
            let bytes = lp.bytes_in(&mut self.scratch.blob, self.base + string_offset(self.file, lp))?;
            let walk = Listpack::new(bytes).and_then(|list| {
                self.visitor.node(&node_info(
                    NodeKind::Listpack,
                    lp,
                    bytes.len(),
                    list.header_count().map(u64::from),
                ));
                stream_node(list, node.master_id, self.visitor)
            });
            walk.map_err(|e| blob_error(self.base, self.file, lp, e))?;
        }
        Ok(())
    }

    fn blob(&mut self, role: BlobRole, s: RdbString<'a>) -> Result<()> {
        if self.visitor.counts_by_header() {
            if let Some((info, groups)) = header_of(role, &s) {
                if self.visitor.header_suffices(&info) {
                    self.visitor.node(&info);
                    self.visitor.summary(&BlobSummary {
                        elements: groups,
                        all_int: role == BlobRole::SetIntset,
                        ..BlobSummary::default()
                    });
                    return Ok(());
                }
            }
        }
        let bytes = s.bytes_in(&mut self.scratch.blob, self.base + string_offset(self.file, &s))?;
        open_blob(role, &s, bytes, self.visitor).map_err(|e| blob_error(self.base, self.file, &s, e))
    }
}

/// A compact blob's node and its groups (members, pairs, list elements)
/// from its header alone (see [`ValueVisitor::header_suffices`]): an LZF
/// blob is decompressed no further than the header. `None` for roles whose
/// groups the header does not give (zipmaps, hashes with field TTLs, plain
/// nodes, flat ziplist lists), for a count left to walking, and for a
/// header that does not check: the full walk then names the fault.
fn header_of(role: BlobRole, s: &RdbString<'_>) -> Option<(NodeInfo, u64)> {
    use BlobRole::*;
    // Ziplists have the longest header.
    const HEAD: usize = 10;
    let buf;
    let (head, total, ends) = match *s {
        RdbString::Raw(b) => (b, b.len(), b.last() == Some(&0xff)),
        // Where the decompression would end is not looked at.
        RdbString::Lzf { compressed, len } => {
            buf = crate::lzf::prefix(compressed, len, HEAD)?;
            (&buf[..HEAD.min(len)], len, true)
        }
        RdbString::Int(_) => return None,
    };
    let (kind, count) = match role {
        SetIntset => (NodeKind::Intset, u64::from(Intset::count_in_header(head, total)?)),
        SetListpack | ZSetListpack | HashListpack | QuicklistListpack if ends => (
            NodeKind::Listpack,
            u64::from(Listpack::count_in_header(head, total)?),
        ),
        ZSetZiplist | HashZiplist | QuicklistZiplist if ends => (
            NodeKind::Ziplist,
            u64::from(Ziplist::count_in_header(head, total)?),
        ),
        _ => return None,
    };
    let groups = match role {
        ZSetListpack | HashListpack | ZSetZiplist | HashZiplist => (count % 2 == 0).then_some(count / 2)?,
        _ => count,
    };
    Some((node_info(kind, s, total, Some(count)), groups))
}

fn node_info(kind: NodeKind, s: &RdbString<'_>, len: usize, header_count: Option<u64>) -> NodeInfo {
    NodeInfo {
        kind,
        len,
        stored_len: s.stored_len(),
        compressed: s.is_compressed(),
        header_count,
    }
}

fn open_blob<V: ValueVisitor>(role: BlobRole, s: &RdbString<'_>, bytes: &[u8], v: &mut V) -> BlobResult<()> {
    use BlobRole::*;
    match role {
        QuicklistPlain => {
            v.node(&node_info(NodeKind::Plain, s, bytes.len(), Some(1)));
            v.member(Element::Bytes(bytes));
        }
        SetIntset => {
            let set = Intset::new(bytes)?;
            v.node(&node_info(
                NodeKind::Intset,
                s,
                bytes.len(),
                Some(set.len() as u64),
            ));
            if v.summary_only() {
                v.summary(&set.summary()?);
            } else {
                for m in set.iter() {
                    v.member(Element::Int(m?));
                }
            }
        }
        HashZipmap => {
            let map = Zipmap::new(bytes)?;
            v.node(&node_info(
                NodeKind::Zipmap,
                s,
                bytes.len(),
                map.header_count().map(u64::from),
            ));
            for pair in map.iter() {
                let (f, val) = pair?;
                v.field(Element::Bytes(f), Element::Bytes(val), None);
            }
        }
        ListZiplist | QuicklistZiplist | ZSetZiplist | HashZiplist => {
            let list = Ziplist::new(bytes)?;
            v.node(&node_info(
                NodeKind::Ziplist,
                s,
                bytes.len(),
                list.header_count().map(u64::from),
            ));
            if v.summary_only() {
                v.summary(&summarize(role, list.iter(), bytes.len())?);
            } else {
                elements(role, list.iter(), bytes.len(), v)?;
            }
        }
        SetListpack | ZSetListpack | HashListpack | HashListpackEx | QuicklistListpack => {
            let list = Listpack::new(bytes)?;
            v.node(&node_info(
                NodeKind::Listpack,
                s,
                bytes.len(),
                list.header_count().map(u64::from),
            ));
            if v.summary_only() {
                v.summary(&summarize(role, list.iter(), bytes.len())?);
            } else {
                elements(role, list.iter(), bytes.len(), v)?;
            }
        }
    }
    Ok(())
}

fn ends_early(pos: usize, what: &str) -> BlobError {
    BlobError {
        pos,
        kind: ErrorKind::BadValue(format!("the blob ends in the middle of {what}")),
    }
}

/// One member, (member, score) pair, or (field, value, expiry) triple.
enum Group<'b> {
    Member(Element<'b>),
    Scored(Element<'b>, f64),
    Field(Element<'b>, Element<'b>, Option<i64>),
}

/// Reads the rest of the group `first` opens, as `role` lays them out.
/// Inlined into both loops: as a call, a report took 10% more cycles.
/// `SCORE`: whether the caller reads scores; without, a score is only
/// checked to be a number (the same check, mostly without parsing it).
#[inline(always)]
fn group<'b, const SCORE: bool, I>(
    role: BlobRole,
    first: Element<'b>,
    it: &mut I,
    len: usize,
) -> BlobResult<Group<'b>>
where
    I: Iterator<Item = BlobResult<Element<'b>>>,
{
    use BlobRole::*;
    Ok(match role {
        ZSetZiplist | ZSetListpack => {
            let score = it
                .next()
                .ok_or_else(|| ends_early(len, "a member/score pair"))??;
            let value = if SCORE {
                score_of(score)
            } else {
                is_score(score).then_some(0.0)
            };
            Group::Scored(first, value.ok_or_else(|| bad_score(len, score))?)
        }
        HashZiplist | HashListpack => {
            let value = it.next().ok_or_else(|| ends_early(len, "a field/value pair"))??;
            Group::Field(first, value, None)
        }
        HashListpackEx => {
            let value = it
                .next()
                .ok_or_else(|| ends_early(len, "a field/value/expiry triple"))??;
            let ttl = it
                .next()
                .ok_or_else(|| ends_early(len, "a field/value/expiry triple"))??;
            let ttl = ttl.as_int().ok_or_else(|| BlobError {
                pos: len,
                kind: ErrorKind::BadValue("hash field expiry is not an integer".into()),
            })?;
            Group::Field(first, value, (ttl != 0).then_some(ttl))
        }
        _ => Group::Member(first),
    })
}

/// Hands a blob's elements to `v` grouped by role: members, (member, score)
/// pairs or (field, value, expiry) triples.
fn elements<'b, I, V>(role: BlobRole, mut it: I, len: usize, v: &mut V) -> BlobResult<()>
where
    I: Iterator<Item = BlobResult<Element<'b>>>,
    V: ValueVisitor,
{
    while let Some(first) = it.next() {
        match group::<true, _>(role, first?, &mut it, len)? {
            Group::Member(m) => v.member(m),
            Group::Scored(m, score) => v.scored(m, score),
            Group::Field(f, value, expire_ms) => v.field(f, value, expire_ms),
        }
    }
    Ok(())
}

/// The groups of [`elements`], summed instead of handed out one call at a
/// time: the same checks in the same order, so a blob fails the same way
/// on either path.
fn summarize<'b, I>(role: BlobRole, mut it: I, len: usize) -> BlobResult<BlobSummary>
where
    I: Iterator<Item = BlobResult<Element<'b>>>,
{
    #[inline(always)]
    fn add(s: &mut BlobSummary, e: Element<'_>) {
        let l = e.len() as u64;
        s.payload += l;
        s.max_len = s.max_len.max(l);
    }
    use BlobRole::*;
    let mut s = BlobSummary {
        all_int: !matches!(
            role,
            ZSetZiplist | ZSetListpack | HashZiplist | HashListpack | HashListpackEx
        ),
        ..BlobSummary::default()
    };
    while let Some(first) = it.next() {
        s.elements += 1;
        match group::<false, _>(role, first?, &mut it, len)? {
            Group::Member(m) => {
                add(&mut s, m);
                if s.all_int {
                    s.all_int = m.as_int().is_some();
                }
            }
            Group::Scored(m, _) => add(&mut s, m),
            Group::Field(f, value, expire_ms) => {
                add(&mut s, f);
                add(&mut s, value);
                s.fields_with_expiry += u64::from(expire_ms.is_some());
            }
        }
    }
    Ok(s)
}

fn bad_score(pos: usize, score: Element<'_>) -> BlobError {
    BlobError {
        pos,
        kind: ErrorKind::BadValue(format!(
            "score {:?} is not a number",
            String::from_utf8_lossy(&score.to_vec())
        )),
    }
}

/// Whether [`score_of`] reads a number: plain decimals (`-12`, `3.25`, all
/// that servers write but for `inf` and exponents) are recognised without
/// parsing, anything else is parsed. float parsing and its UTF-8 check were
/// 2.3% of a report on the collection-heavy benchmark dump.
fn is_score(e: Element<'_>) -> bool {
    fn plain_decimal(b: &[u8]) -> bool {
        let b = b.strip_prefix(b"-").unwrap_or(b);
        let (int, frac) = match b.iter().position(|&c| c == b'.') {
            Some(dot) => (&b[..dot], Some(&b[dot + 1..])),
            None => (b, None),
        };
        let digits = |d: &[u8]| !d.is_empty() && d.iter().all(u8::is_ascii_digit);
        digits(int) && frac.is_none_or(digits)
    }
    match e {
        Element::Int(_) => true,
        Element::Bytes(b) => plain_decimal(b) || score_of(e).is_some(),
    }
}

/// Scores inside compact zsets are integers or text such as `3.5`, `inf`, `-inf`.
fn score_of(e: Element<'_>) -> Option<f64> {
    match e {
        Element::Int(i) => Some(i as f64),
        Element::Bytes(b) => std::str::from_utf8(b).ok()?.parse::<f64>().ok(),
    }
}

/// Decodes the entries of one stream node listpack (master entry, then
/// entries with IDs as deltas from the master ID, wrapping).
fn stream_node<V: ValueVisitor>(list: Listpack<'_>, master: StreamId, v: &mut V) -> BlobResult<()> {
    let mut it = list.iter();
    let end = list.bytes().len();
    let mut next = || {
        it.next()
            .unwrap_or_else(|| Err(ends_early(end, "a stream entry")))
    };
    let int = |e: Element<'_>, what: &str| -> BlobResult<i64> {
        e.as_int().ok_or_else(|| BlobError {
            pos: end,
            kind: ErrorKind::BadStream(format!("{what} is not an integer")),
        })
    };
    let count = int(next()?, "the node entry count")?;
    let deleted = int(next()?, "the node deleted count")?;
    let master_field_count = int(next()?, "the master field count")?;
    let mut master_fields = Vec::new();
    for _ in 0..master_field_count.max(0) {
        master_fields.push(next()?);
    }
    if int(next()?, "the master entry terminator")? != 0 {
        return Err(BlobError {
            pos: end,
            kind: ErrorKind::BadStream("master entry does not end with 0".into()),
        });
    }
    let mut pairs = Vec::with_capacity(master_fields.len());
    let total = count.max(0).saturating_add(deleted.max(0));
    for _ in 0..total {
        let flags = int(next()?, "entry flags")?;
        let ms = master.ms.wrapping_add(int(next()?, "entry ms delta")? as u64);
        let seq = master.seq.wrapping_add(int(next()?, "entry seq delta")? as u64);
        pairs.clear();
        if flags & 2 != 0 {
            for &field in &master_fields {
                pairs.push((field, next()?));
            }
        } else {
            let n = int(next()?, "entry field count")?;
            for _ in 0..n.max(0) {
                let field = next()?;
                pairs.push((field, next()?));
            }
        }
        int(next()?, "entry back count")?;
        if flags & 1 == 0 {
            v.stream_entry(StreamId { ms, seq }, &pairs);
        }
    }
    match it.next() {
        None => Ok(()),
        Some(Err(e)) => Err(e),
        Some(Ok(_)) => Err(BlobError {
            pos: end,
            kind: ErrorKind::BadStream(format!("node has elements past its {total} entries")),
        }),
    }
}
