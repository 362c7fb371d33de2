use super::{BlobSummary, NodeInfo, ValueVisitor};
use crate::element::Element;
use crate::module::ModuleValue;
use crate::stream::{StreamId, StreamValue};
use crate::string::RdbString;

/// Size figures of one value, gathered in one decoding pass without
/// allocating per element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValueStats {
    /// STRLEN for strings; members, fields or entries for collections
    /// (LLEN, SCARD, ZCARD, HLEN, XLEN); VCARD for vector sets; 0 for other
    /// module values.
    pub elements: u64,
    /// Longest element (a member, field, value, or stream field/value), in bytes.
    pub max_element_len: u64,
    /// Sum of element lengths (fields and values both count for hashes).
    pub payload_bytes: u64,
    /// Sum of the in-memory sizes of compact blobs (listpack, ziplist,
    /// intset, zipmap; quicklist and stream nodes).
    pub compact_bytes: u64,
    /// Compact blobs walked: 1 for a listpack/ziplist/intset value, one per
    /// quicklist node or stream node.
    pub nodes: u64,
    /// Stored bytes of LZF-compressed strings and blobs.
    pub lzf_stored_bytes: u64,
    /// Their uncompressed size.
    pub lzf_uncompressed_bytes: u64,
    /// Hash fields that carry their own expiry.
    pub fields_with_expiry: u64,
}

impl ValueStats {
    fn element(&mut self, len: usize) {
        let len = len as u64;
        self.payload_bytes += len;
        self.max_element_len = self.max_element_len.max(len);
    }

    fn lzf(&mut self, stored: usize, len: usize) {
        self.lzf_stored_bytes += stored as u64;
        self.lzf_uncompressed_bytes += len as u64;
    }
}

impl ValueVisitor for ValueStats {
    fn string(&mut self, value: RdbString<'_>) {
        self.elements = value.len() as u64;
        self.element(value.len());
        if value.is_compressed() {
            self.lzf(value.stored_len(), value.len());
        }
    }

    fn node(&mut self, node: &NodeInfo) {
        self.nodes += 1;
        if node.kind != super::NodeKind::Plain {
            self.compact_bytes += node.len as u64;
        }
        if node.compressed {
            self.lzf(node.stored_len, node.len);
        }
    }

    fn member(&mut self, member: Element<'_>) {
        self.elements += 1;
        self.element(member.len());
    }

    fn scored(&mut self, member: Element<'_>, _score: f64) {
        self.elements += 1;
        self.element(member.len());
    }

    fn field(&mut self, field: Element<'_>, value: Element<'_>, expire_ms: Option<i64>) {
        self.elements += 1;
        self.element(field.len());
        self.element(value.len());
        if expire_ms.is_some() {
            self.fields_with_expiry += 1;
        }
    }

    fn stream(&mut self, stream: &StreamValue<'_>) {
        self.elements = stream.length;
    }

    fn stream_entry(&mut self, _id: StreamId, pairs: &[(Element<'_>, Element<'_>)]) {
        for (f, v) in pairs {
            self.element(f.len());
            self.element(v.len());
        }
    }

    fn summary_only(&self) -> bool {
        true
    }

    fn summary(&mut self, s: &BlobSummary) {
        self.elements += s.elements;
        self.payload_bytes += s.payload;
        self.max_element_len = self.max_element_len.max(s.max_len);
        self.fields_with_expiry += s.fields_with_expiry;
    }

    fn module(&mut self, module: &ModuleValue<'_>) {
        self.payload_bytes = module.len() as u64;
        self.elements = module.element_count().unwrap_or(0);
    }

    fn array_item(&mut self, _index: u64, item: super::ArrayItem<'_>) {
        self.elements += 1;
        match item {
            super::ArrayItem::Bytes(b) => self.element(b.len()),
            _ => self.element(8),
        }
    }
}
