//! Value decoding. [`walk`] knows the layout of every value type and finds
//! where a value ends without decompressing anything; [`decode`] runs the
//! same walk but opens strings and blobs and hands elements to a
//! [`ValueVisitor`]; [`stats`] is the visitor that measures a value.

pub(crate) mod decode;
mod stats;
pub(crate) mod walk;

pub use stats::ValueStats;

use crate::element::Element;
use crate::module::ModuleValue;
use crate::stream::{StreamId, StreamValue};
use crate::string::RdbString;

/// Which container a run of elements came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// A listpack (hash, set, sorted set, quicklist-2 or stream node).
    Listpack,
    /// A ziplist (list, hash, sorted set or quicklist v1 node).
    Ziplist,
    /// An intset (set of integers).
    Intset,
    /// A zipmap (Redis 2.4 hash).
    Zipmap,
    /// A quicklist-2 PLAIN node: one element stored as a bare string.
    Plain,
}

/// A compact blob (or quicklist node, or stream node) about to be walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    /// The container's encoding.
    pub kind: NodeKind,
    /// Size of the blob as it sits in memory (uncompressed).
    pub len: usize,
    /// Bytes it takes in the file (less than `len` when LZF-compressed).
    pub stored_len: usize,
    /// True when the blob is LZF-compressed in the file.
    pub compressed: bool,
    /// Element count from the blob's own header, where it has one.
    pub header_count: Option<u64>,
}

/// What the elements of one compact blob add up to, for visitors that need
/// no single element (see [`ValueVisitor::summary_only`]). Counted as the
/// per-element calls would count them: pairs for hashes and sorted sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlobSummary {
    /// Members, list elements, or pairs.
    pub elements: u64,
    /// Longest member, field or value (sorted sets: member), in bytes.
    pub max_len: u64,
    /// Sum of the lengths `max_len` is taken over.
    pub payload: u64,
    /// Every member or list element is an integer ([`Element::as_int`]);
    /// true for an empty blob. Always false for hashes and sorted sets.
    pub all_int: bool,
    /// Hash fields with an expiry.
    pub fields_with_expiry: u64,
}

/// One element of a Redis 8.8 array.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArrayItem<'b> {
    /// A string item (tags 0 and 3); integer-encoded strings arrive as [`Element::Int`].
    Bytes(Element<'b>),
    /// An 8-byte signed integer item (tag 1).
    Int(i64),
    /// An 8-byte double item (tag 2).
    Float(f64),
}

/// Receives the decoded content of a value. Every method has an empty
/// default; elements borrow from the file or a scratch buffer only for the
/// duration of the call.
pub trait ValueVisitor {
    /// A string value (type 0), undecoded: its length is known without decompressing.
    fn string(&mut self, _value: RdbString<'_>) {}
    /// A compact blob or quicklist node, before its elements.
    fn node(&mut self, _node: &NodeInfo) {}
    /// A list element or set member.
    fn member(&mut self, _member: Element<'_>) {}
    /// A sorted-set member and its score.
    fn scored(&mut self, _member: Element<'_>, _score: f64) {}
    /// A hash field, its value, and its absolute expiry (unix ms) if it has one.
    fn field(&mut self, _field: Element<'_>, _value: Element<'_>, _expire_ms: Option<i64>) {}
    /// A stream's metadata, before its entries.
    fn stream(&mut self, _stream: &StreamValue<'_>) {}
    /// A live stream entry with its field/value pairs.
    fn stream_entry(&mut self, _id: StreamId, _pairs: &[(Element<'_>, Element<'_>)]) {}
    /// A module value (opaque to the parser beyond its opcode stream).
    fn module(&mut self, _module: &ModuleValue<'_>) {}
    /// An element of a Redis 8.8 array at its (sparse) index.
    fn array_item(&mut self, _index: u64, _item: ArrayItem<'_>) {}
    /// A Valkey 9.2 path-hash path, before its `fields` fields.
    fn path(&mut self, _path: Element<'_>, _fields: u64) {}
    /// Asked right after [`ValueVisitor::node`] for a listpack, ziplist or
    /// intset: `true` hands its elements over as one [`BlobSummary`] instead
    /// of a call per element. The decoder still walks and checks every
    /// element; it only skips the calls (most of the cost of a compact
    /// value whose elements the visitor would merely count). Skipping the
    /// walk too is [`ValueVisitor::header_suffices`].
    fn summary_only(&self) -> bool {
        false
    }
    /// The elements of the blob announced by the last `node`, summed.
    fn summary(&mut self, _summary: &BlobSummary) {}
    /// Whether this visitor may count some compact blobs by their header
    /// alone ([`ValueVisitor::header_suffices`]); only then does the
    /// decoder read a blob's header ahead of its walk.
    fn counts_by_header(&self) -> bool {
        false
    }
    /// Asked, when [`ValueVisitor::counts_by_header`], before
    /// [`ValueVisitor::node`] for a listpack, ziplist or intset whose
    /// header gives its element count: `true` skips the walk of its
    /// elements and its LZF decompression past the header. `node` then
    /// comes with a [`BlobSummary`] of the count alone (no lengths;
    /// `all_int` true only for intsets). The header is checked as a server
    /// loading the blob without deep sanitization checks it (size and
    /// count), not entry by entry.
    fn header_suffices(&self, _node: &NodeInfo) -> bool {
        false
    }
}

/// Two visitors fed by one decoding pass (so a value is never decoded twice).
pub struct Tee<'v, A, B>(pub &'v mut A, pub &'v mut B);

impl<A: ValueVisitor, B: ValueVisitor> ValueVisitor for Tee<'_, A, B> {
    fn string(&mut self, value: RdbString<'_>) {
        self.0.string(value);
        self.1.string(value);
    }
    fn node(&mut self, node: &NodeInfo) {
        self.0.node(node);
        self.1.node(node);
    }
    fn member(&mut self, member: Element<'_>) {
        self.0.member(member);
        self.1.member(member);
    }
    fn scored(&mut self, member: Element<'_>, score: f64) {
        self.0.scored(member, score);
        self.1.scored(member, score);
    }
    fn field(&mut self, field: Element<'_>, value: Element<'_>, expire_ms: Option<i64>) {
        self.0.field(field, value, expire_ms);
        self.1.field(field, value, expire_ms);
    }
    fn stream(&mut self, stream: &StreamValue<'_>) {
        self.0.stream(stream);
        self.1.stream(stream);
    }
    fn stream_entry(&mut self, id: StreamId, pairs: &[(Element<'_>, Element<'_>)]) {
        self.0.stream_entry(id, pairs);
        self.1.stream_entry(id, pairs);
    }
    fn module(&mut self, module: &ModuleValue<'_>) {
        self.0.module(module);
        self.1.module(module);
    }
    fn array_item(&mut self, index: u64, item: ArrayItem<'_>) {
        self.0.array_item(index, item);
        self.1.array_item(index, item);
    }
    fn path(&mut self, path: Element<'_>, fields: u64) {
        self.0.path(path, fields);
        self.1.path(path, fields);
    }
    fn summary_only(&self) -> bool {
        self.0.summary_only() && self.1.summary_only()
    }
    fn summary(&mut self, summary: &BlobSummary) {
        self.0.summary(summary);
        self.1.summary(summary);
    }
    fn counts_by_header(&self) -> bool {
        self.0.counts_by_header() && self.1.counts_by_header()
    }
    fn header_suffices(&self, node: &NodeInfo) -> bool {
        self.0.header_suffices(node) && self.1.header_suffices(node)
    }
}
