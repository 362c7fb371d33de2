//! The [`ValueVisitor`] that streams a value once and keeps only what the
//! formulas need: counts, longest element, per-element allocation sums for
//! the target version, the sizes the compact encodings would take, and the
//! quicklist nodes as the target would pack them. Nothing is stored per
//! element, so memory stays constant however big the collection is
//! (streams aside: their PEL IDs are already materialised by the parser).

use rdblens_parser::{
    BlobSummary, Element, NodeInfo, NodeKind, RdbString, StreamValue, TypeKind, ValueType, ValueVisitor,
};

use crate::compact::{self, Packed, Ziplist, LP_EMPTY};
use crate::costs;
use crate::limits::Limits;
use crate::quicklist::{exceeds_limit, size_limit, Compression, MIN_COMPRESS_BYTES, SIZE_SAFETY_LIMIT};
use crate::rules::{Era, Rules};
use crate::score::{score_entry, ScoreFormat};
use crate::sds;
use crate::version::Family;

/// A string value.
/// `OBJ_SHARED_INTEGERS` (server.h): the integers a server keeps one
/// object each of.
const SHARED_INTEGERS: i64 = 10_000;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StringFacts {
    pub len: u64,
    /// Loads as an `int` object (canonical decimal i64).
    pub int: bool,
    /// An `int` of 0-9999: a server may point the key at its shared object.
    pub small_int: bool,
}

impl StringFacts {
    pub fn of(value: RdbString<'_>) -> StringFacts {
        let len = value.len() as u64;
        let int = match value {
            RdbString::Int(v) => Some(v),
            RdbString::Raw(b) => rdblens_parser::parse_canonical_int(b),
            // Writers compress only strings over 20 bytes; an i64 has at most 20.
            RdbString::Lzf { len, .. } if len > 20 => None,
            RdbString::Lzf { .. } => value
                .to_cow()
                .ok()
                .and_then(|b| rdblens_parser::parse_canonical_int(&b)),
        };
        StringFacts {
            len,
            int: int.is_some(),
            small_int: int.is_some_and(|v| (0..SHARED_INTEGERS).contains(&v)),
        }
    }
}

/// The quicklist the target builds, node by node.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ListFacts {
    pub nodes: u64,
    /// Sum of node sizes, rounded / as requested.
    pub bytes_rounded: u64,
    pub bytes_raw: u64,
    pub elements: u64,
    /// The first node: (packed, bytes, elements); decides the 7.2+
    /// conversion of single-node lists to a plain listpack.
    pub first: Option<(bool, u64, u64)>,
    /// Change to the node sizes (in the era's units) when a target with
    /// `list-compress-depth` > 0 compresses the interior nodes.
    pub compressed_delta: i64,
}

/// What one value contributes to its estimate. The sums only some targets
/// or encodings read (`lp_bytes`, `zl`, `lpex_bytes`, `member_alloc` of
/// lists) are left at their initial values where the model does not read
/// them (see [`Collector::new`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Facts {
    pub string: Option<StringFacts>,
    /// Members, pairs or list elements.
    pub count: u64,
    /// Longest member, field or value.
    pub max_len: u64,
    /// The value's one compact blob as stored (intset, listpack, ziplist,
    /// zipmap): its kind and bytes.
    pub blob: Option<(NodeKind, u64)>,
    /// Bytes of one listpack holding every element (hash: field, value; zset:
    /// member, score text).
    pub lp_bytes: u64,
    /// The same as a ziplist.
    pub zl: Ziplist,
    /// Hash as a listpackex: field, value, TTL (0 = none) per field.
    pub lpex_bytes: u64,
    /// Every member is an integer (intset candidate), and the widest width.
    pub all_int: bool,
    pub int_width: u64,
    /// Sum of the target's per-member allocation (set and zset members; list
    /// elements, for linked lists before 3.2).
    pub member_alloc: u64,
    /// Valkey 9+: expected skiplist node sizes (member embedded).
    pub zsl_nodes: f64,
    /// Sum of the target's per-pair allocation (hash field + value).
    pub pair_alloc: u64,
    /// Pairs whose field has a TTL the target keeps.
    pub ttl_fields: u64,
    /// Index of the first pair with a field or value longer than
    /// `hash-max-listpack-value`: where a plain hash converts while loading.
    pub first_long_pair: Option<u64>,
    pub list: ListFacts,
    pub stream: Option<crate::stream_facts::StreamFacts>,
    pub module: bool,
    /// A sorted set's listpack entry bytes along its order (empty unless
    /// its members were walked in score order).
    pub zset_rank: crate::rank::RankProfile,
}

/// A quicklist node being read from the file or packed by the target.
#[derive(Clone, Copy, Debug)]
struct OpenNode {
    kind: NodeKind,
    blob: u64,
    /// LZF length of the blob in the file, if it was stored compressed: the
    /// same LZF the target computes when it compresses the node.
    lzf: Option<u64>,
    elements: u64,
    lp: u64,
    zl: Ziplist,
    /// Whether `close_node` (or the push fill test) reads `lp` / `zl`.
    want_lp: bool,
    want_zl: bool,
}

impl OpenNode {
    fn new(kind: NodeKind, blob: u64, lzf: Option<u64>, rules: &Rules, mode: ListMode) -> OpenNode {
        let kept = kept_as_stored(kind, rules, mode);
        OpenNode {
            kind,
            blob,
            lzf,
            elements: 0,
            lp: LP_EMPTY,
            zl: Ziplist::default(),
            want_lp: rules.listpack && !kept,
            want_zl: !rules.listpack && !kept,
        }
    }

    fn push(&mut self, p: Packed) {
        self.elements += 1;
        if self.want_lp {
            self.lp += compact::lp_packed(p);
        }
        if self.want_zl {
            self.zl.push_packed(p);
        }
    }
}

/// Whether the target keeps a quicklist node of `kind` as stored, as
/// `close_node` picks: it then counts the node's blob, not its elements.
fn kept_as_stored(kind: NodeKind, rules: &Rules, mode: ListMode) -> bool {
    mode == ListMode::Nodes
        && if rules.listpack {
            matches!(kind, NodeKind::Listpack | NodeKind::Plain)
        } else {
            kind == NodeKind::Ziplist
        }
}

/// How list elements reach the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListMode {
    /// Nodes kept (types 14, 18); ziplist nodes re-encoded as listpacks on 7.0+.
    Nodes,
    /// Elements pushed one by one (types 1, 10): the target packs its own nodes.
    Push,
}

pub(crate) struct Collector<'r> {
    rules: &'r Rules,
    limits: &'r Limits,
    value_type: ValueType,
    /// `value_type` is a list (members are list elements).
    list: bool,
    score_format: ScoreFormat,
    list_mode: ListMode,
    node: Option<OpenNode>,
    compression: Option<Compression>,
    /// Which flat sums the model reads for this value and target: each
    /// costs work per element (the integer parse above all).
    want_lp: bool,
    want_zl: bool,
    want_lpex: bool,
    /// Lists: per-element allocations (linked lists before 3.2 only).
    want_list_alloc: bool,
    /// The blob announced by the last `node` is kept as stored: only its
    /// element count and longest element matter (see `keeps_blob`).
    summarize: bool,
    /// Such a blob may be counted by its header alone, unwalked: the
    /// caller reads no longest element (see `counting_by_header`).
    header_counts: bool,
    pub facts: Facts,
    /// The sums a second allocator build of the same target rounds its own
    /// way, when the caller estimates both (the allocator detection): one
    /// visit instead of two collectors side by side.
    other_build: Option<OtherBuild<'r>>,
    /// A walked sorted set's bytes along its order (`crate::rank`).
    rank: Option<Box<crate::rank::RankProfiler>>,
}

/// The facts that depend on the allocator's rounding (`Rules::j`), for a
/// second build of the target: everything else a collector gathers (counts,
/// lengths, the compact encodings' sizes) is the same for both builds.
struct OtherBuild<'r> {
    rules: &'r Rules,
    member_alloc: u64,
    pair_alloc: u64,
    zsl_nodes: f64,
    list_bytes_rounded: u64,
    compression: Option<Compression>,
    stream: Option<crate::stream_facts::StreamFacts>,
}

impl<'r> Collector<'r> {
    /// `rdb_version` is the writer's, for scores stored as text in listpacks.
    pub fn new(rules: &'r Rules, limits: &'r Limits, value_type: ValueType, rdb_version: u32) -> Self {
        use ValueType::*;
        // Scores re-rendered on load use the target's d2string; scores
        // copied out of a stored ziplist/listpack keep the writer's text,
        // which only the writer's rules reproduce.
        let score_format = match value_type {
            ZSetZiplist => ScoreFormat::Printf17,
            ZSetListpack if rdb_version <= 10 => ScoreFormat::Printf17,
            ZSetListpack => ScoreFormat::Shortest,
            _ => rules.score_format,
        };
        let list_mode = match value_type {
            List | ListZiplist => ListMode::Push,
            _ => ListMode::Nodes,
        };
        let kind = value_type.kind();
        // What the estimators in `model` read: lists the flat ziplist only
        // before quicklists (3.2); sets a listpack (never a ziplist);
        // hashes and sorted sets the target's compact blob (sorted sets not
        // when the stored one is kept, see `node`); `listpackex` only Redis
        // targets with field TTLs.
        let (want_lp, want_zl) = match kind {
            TypeKind::List => (false, !rules.quicklist),
            TypeKind::Set => (rules.listpack || rules.set_listpack, false),
            _ => (rules.listpack, !rules.listpack),
        };
        Collector {
            rules,
            limits,
            value_type,
            list: kind == TypeKind::List,
            score_format,
            list_mode,
            want_lp,
            want_zl,
            want_lpex: kind == TypeKind::Hash && rules.hash_ttl && rules.family == Family::Redis,
            want_list_alloc: !rules.quicklist,
            summarize: false,
            header_counts: false,
            node: None,
            compression: compression(limits),
            facts: Facts {
                lp_bytes: LP_EMPTY,
                lpex_bytes: LP_EMPTY,
                all_int: true,
                int_width: 2,
                ..Facts::default()
            },
            other_build: None,
            rank: None,
        }
    }

    /// Also gathers the sums `other` (the same target with another
    /// allocator build: only `Rules::j` differs) rounds its own way; see
    /// [`Collector::finish_both`].
    pub fn with_other_build(mut self, other: &'r Rules) -> Self {
        self.other_build = Some(OtherBuild {
            rules: other,
            member_alloc: 0,
            pair_alloc: 0,
            zsl_nodes: 0.0,
            list_bytes_rounded: 0,
            compression: compression(self.limits),
            stream: None,
        });
        self
    }

    /// With `on`, a blob the target keeps as stored is counted by its
    /// header alone when its header gives the count: neither walked nor
    /// decompressed past the header, so its longest element stays
    /// unmeasured (0). The estimate is the same: the model reads only the
    /// count and size of such a blob (the first arm of each estimator).
    pub fn counting_by_header(mut self, on: bool) -> Self {
        self.header_counts = on;
        self
    }

    /// Closes the last open node; call after the visit.
    pub fn finish(mut self) -> Facts {
        self.close();
        self.facts
    }

    fn close(&mut self) {
        self.close_node();
        if let Some(rank) = self.rank.take() {
            self.facts.zset_rank = rank.finish();
        }
        if let Some(c) = &self.compression {
            self.facts.list.compressed_delta = c.interior();
        }
    }

    /// The facts for this collector's build and for the other build
    /// ([`Collector::with_other_build`]); without one, both are this
    /// build's.
    pub fn finish_both(mut self) -> (Facts, Facts) {
        self.close();
        let other = match self.other_build.take() {
            None => self.facts.clone(),
            Some(o) => {
                let mut facts = self.facts.clone();
                facts.member_alloc = o.member_alloc;
                facts.pair_alloc = o.pair_alloc;
                facts.zsl_nodes = o.zsl_nodes;
                facts.list.bytes_rounded = o.list_bytes_rounded;
                if let Some(c) = &o.compression {
                    facts.list.compressed_delta = c.interior();
                }
                if facts.stream.is_some() {
                    facts.stream = o.stream;
                }
                facts
            }
        };
        (self.facts, other)
    }

    /// Adds a set or sorted-set member's (or pre-3.2 list element's)
    /// allocation, for each build.
    #[inline]
    fn member_alloc(&mut self, len: u64) {
        self.facts.member_alloc += costs::member(self.rules, len);
        if let Some(o) = self.other_build.as_mut() {
            o.member_alloc += costs::member(o.rules, len);
        }
    }

    /// Adds an element of `len` bytes, stored as `p`, to the flat sums.
    #[inline]
    fn element(&mut self, len: u64, p: Packed) {
        self.facts.max_len = self.facts.max_len.max(len);
        if self.want_lp {
            self.facts.lp_bytes += compact::lp_packed(p);
        }
        if self.want_zl {
            self.facts.zl.push_packed(p);
        }
    }

    /// How the compact encodings store `e`; only parsed when some sum needs it.
    #[inline]
    fn packed(&self, e: Element<'_>, needed: bool) -> Packed {
        if needed {
            Packed::of(e)
        } else {
            // Never read.
            Packed::Str(0)
        }
    }

    // ---- lists -------------------------------------------------------------

    fn list_element(&mut self, e: Element<'_>) {
        self.facts.count += 1;
        let len = e.len() as u64;
        let node_wants = match (self.list_mode, &self.node) {
            (ListMode::Nodes, Some(node)) => node.want_lp || node.want_zl,
            (ListMode::Nodes, None) => false,
            // A new node may open; the target packs its own either way.
            (ListMode::Push, _) => true,
        };
        let p = self.packed(e, self.want_zl || node_wants);
        // The flat sizes serve targets without quicklists (< 3.2).
        self.element(len, p);
        if self.want_list_alloc {
            self.member_alloc(len);
        }
        match self.list_mode {
            ListMode::Nodes => {
                if let Some(node) = self.node.as_mut() {
                    node.push(p);
                }
            }
            ListMode::Push => self.push_element(len, p),
        }
    }

    /// `quicklistPushTail` into the last node, or a new one when the node
    /// would exceed the fill limit (`_quicklistNodeAllowInsert`).
    fn push_element(&mut self, sz: u64, p: Packed) {
        let fits = match &self.node {
            None => false,
            Some(node) if self.rules.listpack => {
                // 7.0+: node->sz + sz + SIZE_ESTIMATE_OVERHEAD against the limit.
                let new_sz = node.lp + sz + 8;
                !exceeds_limit(self.limits.list_max_listpack_size, new_sz, node.elements + 1)
            }
            Some(node) => {
                // ≤ 6.2 estimates the ziplist overhead from the length.
                let overhead = if sz < 254 { 1 } else { 5 }
                    + match sz {
                        0..=63 => 1,
                        64..=16_383 => 2,
                        _ => 5,
                    };
                let new_sz = node.zl.bytes + sz + overhead;
                let fill = self.limits.list_max_listpack_size;
                if fill < 0 {
                    new_sz <= size_limit(fill)
                } else {
                    new_sz <= SIZE_SAFETY_LIMIT && (node.elements as i64) < fill
                }
            }
        };
        if !fits {
            self.close_node();
            let kind = if self.rules.listpack {
                NodeKind::Listpack
            } else {
                NodeKind::Ziplist
            };
            self.node = Some(OpenNode::new(kind, 0, None, self.rules, self.list_mode));
        }
        if let Some(node) = self.node.as_mut() {
            node.push(p);
        }
    }

    fn open_list_node(&mut self, info: &NodeInfo) {
        if self.list_mode == ListMode::Nodes {
            self.close_node();
            let lzf = info.compressed.then_some(info.stored_len as u64);
            self.node = Some(OpenNode::new(
                info.kind,
                info.len as u64,
                lzf,
                self.rules,
                self.list_mode,
            ));
        }
    }

    fn close_node(&mut self) {
        let Some(node) = self.node.take() else { return };
        // Loaders skip empty nodes.
        if node.elements == 0 {
            return;
        }
        let nodes = self.list_mode == ListMode::Nodes;
        // (bytes, packed, kept as stored)
        let (bytes, packed, kept) = match (node.kind, self.rules.listpack) {
            (NodeKind::Plain, true) => (node.blob, false, nodes),
            (NodeKind::Listpack, true) if nodes => (node.blob, true, true),
            (_, true) => (node.lp, true, false),
            (NodeKind::Ziplist, false) if nodes => (node.blob, true, true),
            (_, false) => (node.zl.bytes, true, false),
        };
        // Only a packed node kept as stored has a known LZF size.
        let lzf = node.lzf.filter(|_| kept && packed);
        if let Some(c) = self.compression.as_mut() {
            c.node(lzf.map_or(0, |lzf| compressed_delta(self.rules, bytes, lzf)));
        }
        if let Some(o) = self.other_build.as_mut() {
            if let Some(c) = o.compression.as_mut() {
                c.node(lzf.map_or(0, |lzf| compressed_delta(o.rules, bytes, lzf)));
            }
            o.list_bytes_rounded += o.rules.j(bytes);
        }
        let list = &mut self.facts.list;
        if list.first.is_none() {
            list.first = Some((packed, bytes, node.elements));
        }
        list.nodes += 1;
        list.bytes_raw += bytes;
        list.bytes_rounded += self.rules.j(bytes);
        list.elements += node.elements;
    }

    /// Whether the target keeps this whole-value blob as stored, so the
    /// model reads its size and count and no per-element sum: the first arm
    /// of each estimator in `model` (hash::plain, hash::with_field_ttls,
    /// set::estimate, zset::estimate). The count is the header's, which the
    /// walk checks (a blob whose walk disagrees fails to decode).
    fn keeps_blob(&self, node: &NodeInfo) -> bool {
        use ValueType::*;
        let (r, l) = (self.rules, self.limits);
        let Some(n) = node.header_count else {
            return false;
        };
        match (self.value_type, node.kind) {
            (HashListpack, NodeKind::Listpack) => r.listpack && n / 2 <= l.hash_max_listpack_entries,
            (HashZiplist, NodeKind::Ziplist) => !r.listpack && n / 2 <= l.hash_max_listpack_entries,
            (HashListpackEx | HashListpackExPreGa, NodeKind::Listpack) => {
                r.hash_ttl && r.family == Family::Redis && n / 3 <= l.hash_max_listpack_entries
            }
            (SetIntset, NodeKind::Intset) => n <= l.set_max_intset_entries,
            (SetListpack, NodeKind::Listpack) => r.set_listpack && n <= l.set_max_listpack_entries,
            (ZSetListpack, NodeKind::Listpack) => r.listpack && n / 2 <= l.zset_max_listpack_entries,
            (ZSetZiplist, NodeKind::Ziplist) => !r.listpack && n / 2 <= l.zset_max_listpack_entries,
            _ => false,
        }
    }

    /// Whether the blob `node` announces matters by its element count (and
    /// longest element) alone: a quicklist node kept as stored, on a target
    /// with quicklists, or a whole-value blob the target keeps
    /// (`keeps_blob`). `node` sets `summarize` from it; counted by header,
    /// such a blob is not walked at all.
    fn counts_only(&self, node: &NodeInfo) -> bool {
        use ValueType::*;
        match self.value_type {
            ListQuicklist | ListQuicklist2 => {
                !self.want_zl
                    && !self.want_list_alloc
                    && kept_as_stored(node.kind, self.rules, self.list_mode)
            }
            ListZiplist | StreamListpacks | StreamListpacks2 | StreamListpacks3 | StreamListpacks4
            | StreamListpacks5 => false,
            _ => self.keeps_blob(node),
        }
    }

    // ---- sets and sorted sets ---------------------------------------------

    fn set_member(&mut self, e: Element<'_>) {
        self.facts.count += 1;
        let len = e.len() as u64;
        // The intset test needs the parse anyway.
        let p = Packed::of(e);
        self.element(len, p);
        match p.int() {
            Some(v) => self.facts.int_width = self.facts.int_width.max(compact::intset_width(v)),
            None => self.facts.all_int = false,
        }
        self.member_alloc(len);
    }

    fn zset_member(&mut self, e: Element<'_>, score: f64) {
        self.facts.count += 1;
        let len = e.len() as u64;
        if self.want_lp || self.want_zl {
            let before = self.facts.lp_bytes;
            self.element(len, Packed::of(e));
            // Its text is only needed for the blob sizes.
            let packed = score_entry(score, self.score_format);
            self.element(0, packed);
            if self.want_lp {
                let bytes = self.facts.lp_bytes - before;
                self.rank
                    .get_or_insert_with(|| Box::new(crate::rank::RankProfiler::new()))
                    .push(score, bytes);
            }
        } else {
            self.facts.max_len = self.facts.max_len.max(len);
        }
        if self.rules.vk_zsl_embedded {
            // Node: score, backward, levels (16 each), header-size byte, member sds.
            let base = 16 + 1 + sds::embedded(len, true);
            self.facts.zsl_nodes += self.rules.expected_zsl_node(base);
            if let Some(o) = self.other_build.as_mut() {
                o.zsl_nodes += o.rules.expected_zsl_node(base);
            }
        } else {
            self.member_alloc(len);
        }
    }

    // ---- hashes ------------------------------------------------------------

    /// Whether a field TTL survives loading into the target.
    fn keeps_ttl(&self) -> bool {
        self.rules.hash_ttl
    }

    fn hash_pair(&mut self, field: Element<'_>, value: Element<'_>, expire_ms: Option<i64>) {
        let index = self.facts.count;
        self.facts.count += 1;
        let (flen, vlen) = (field.len() as u64, value.len() as u64);
        let needed = self.want_lp || self.want_zl || self.want_lpex;
        let (pf, pv) = (self.packed(field, needed), self.packed(value, needed));
        self.element(flen, pf);
        self.element(vlen, pv);
        if self.facts.first_long_pair.is_none()
            && (flen > self.limits.hash_max_listpack_value || vlen > self.limits.hash_max_listpack_value)
        {
            self.facts.first_long_pair = Some(index);
        }
        let ttl = expire_ms.filter(|_| self.keeps_ttl());
        if self.want_lpex {
            self.facts.lpex_bytes +=
                compact::lp_packed(pf) + compact::lp_packed(pv) + compact::lp_int_entry(ttl.unwrap_or(0));
        }
        if ttl.is_some() {
            self.facts.ttl_fields += 1;
        }
        self.facts.pair_alloc += costs::pair(self.rules, flen, vlen, ttl.is_some());
        if let Some(o) = self.other_build.as_mut() {
            o.pair_alloc += costs::pair(o.rules, flen, vlen, ttl.is_some());
        }
    }
}

/// The interior-node compression a target with `list-compress-depth` > 0
/// applies.
fn compression(limits: &Limits) -> Option<Compression> {
    (limits.list_compress_depth > 0).then(|| Compression::new(limits.list_compress_depth))
}

/// What compressing a node of `bytes` into `lzf` bytes changes, in the
/// units the era's quicklist formula adds: `quicklistLZF` is a 4-byte
/// length plus the data. Up to 6.2 `ziplistBlobLen()` of a compressed node
/// reads that length field, so only the LZF bytes count. Nodes under 48
/// bytes, or that would not shrink by 8, stay uncompressed.
fn compressed_delta(r: &Rules, bytes: u64, lzf: u64) -> i64 {
    if bytes < MIN_COMPRESS_BYTES || lzf + 8 >= bytes {
        return 0;
    }
    let (before, after) = match r.era {
        Era::Legacy => (bytes, lzf),
        Era::Kvobj => (bytes, 4 + lzf),
        Era::Dict | Era::ValkeyObject => (r.j(bytes), r.j(4 + lzf)),
    };
    after as i64 - before as i64
}

impl ValueVisitor for Collector<'_> {
    fn string(&mut self, value: RdbString<'_>) {
        self.facts.string = Some(StringFacts::of(value));
    }

    fn node(&mut self, node: &NodeInfo) {
        use ValueType::*;
        match self.value_type {
            ListQuicklist | ListQuicklist2 => {
                self.open_list_node(node);
                self.summarize = self.counts_only(node);
            }
            ListZiplist | StreamListpacks | StreamListpacks2 | StreamListpacks3 | StreamListpacks4
            | StreamListpacks5 => {}
            _ => {
                self.facts.blob = Some((node.kind, node.len as u64));
                self.summarize = self.counts_only(node);
                if self.value_type.kind() == TypeKind::ZSet && self.facts.count == 0 {
                    // A stored blob of the target's compact encoding is kept
                    // as is (`model::zset::compact_bytes`).
                    let kept = if self.rules.listpack {
                        NodeKind::Listpack
                    } else {
                        NodeKind::Ziplist
                    };
                    if node.kind == kept {
                        self.want_lp = false;
                        self.want_zl = false;
                    }
                }
            }
        }
    }

    fn member(&mut self, member: Element<'_>) {
        if self.list {
            self.list_element(member)
        } else {
            self.set_member(member)
        }
    }

    fn scored(&mut self, member: Element<'_>, score: f64) {
        self.zset_member(member, score);
    }

    fn summary_only(&self) -> bool {
        self.summarize
    }

    fn counts_by_header(&self) -> bool {
        self.header_counts
    }

    fn header_suffices(&self, node: &NodeInfo) -> bool {
        self.header_counts && self.counts_only(node)
    }

    fn summary(&mut self, s: &BlobSummary) {
        self.facts.count += s.elements;
        self.facts.max_len = self.facts.max_len.max(s.max_len);
        self.facts.all_int &= s.all_int;
        if let Some(node) = self.node.as_mut() {
            node.elements += s.elements;
        }
    }

    fn field(&mut self, field: Element<'_>, value: Element<'_>, expire_ms: Option<i64>) {
        self.hash_pair(field, value, expire_ms);
    }

    fn stream(&mut self, stream: &StreamValue<'_>) {
        self.facts.count = stream.length;
        self.facts.stream = Some(crate::stream_facts::StreamFacts::collect(self.rules, stream));
        if let Some(o) = self.other_build.as_mut() {
            o.stream = Some(crate::stream_facts::StreamFacts::collect(o.rules, stream));
        }
    }

    fn module(&mut self, _module: &rdblens_parser::ModuleValue<'_>) {
        self.facts.module = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Family, Profile, ServerVersion};

    /// Interior quicklist nodes stored compressed, of sizes the two builds
    /// round apart (the fixtures hold none a target would compress): the
    /// collector of both builds gives each build's compression change and
    /// node sizes as that build's own collector does.
    #[test]
    fn the_other_build_rounds_compressed_nodes_its_own_way() {
        for (family, version) in [
            (Family::Redis, "6.2.14"),
            (Family::Redis, "7.0.15"),
            (Family::Valkey, "9.1.2"),
        ] {
            let mut p8 = Profile::new(family, ServerVersion::parse(version).expect("version"), 8); // ok: test
            p8.limits.set("list-compress-depth", "1").expect("limit"); // ok: test
            let mut p16 = p8.clone();
            p16.quantum = 16;
            let (r8, r16) = (Rules::for_profile(&p8), Rules::for_profile(&p16));
            // Each release's own node encoding, which it keeps as stored.
            let kind = if r8.listpack {
                NodeKind::Listpack
            } else {
                NodeKind::Ziplist
            };
            let feed = |c: &mut Collector<'_>| {
                for (len, stored_len) in [(56, 40), (60, 44), (100, 50), (57, 30), (90, 70), (120, 60)] {
                    c.node(&NodeInfo {
                        kind,
                        len,
                        stored_len,
                        compressed: true,
                        header_count: Some(2),
                    });
                    c.summary(&BlobSummary {
                        elements: 2,
                        ..BlobSummary::default()
                    });
                }
            };
            let alone = |rules: &Rules| {
                let mut c = Collector::new(rules, &p8.limits, ValueType::ListQuicklist2, 11);
                feed(&mut c);
                c.finish()
            };
            let (a8, a16) = (alone(&r8), alone(&r16));
            let mut both =
                Collector::new(&r8, &p8.limits, ValueType::ListQuicklist2, 11).with_other_build(&r16);
            feed(&mut both);
            let (b8, b16) = both.finish_both();
            let key = |f: &Facts| (f.list.compressed_delta, f.list.bytes_rounded, f.list.nodes);
            assert_eq!(key(&b8), key(&a8), "{version}");
            assert_eq!(key(&b16), key(&a16), "{version}");
            assert_ne!(
                key(&a8),
                key(&a16),
                "{version}: the builds round these nodes alike"
            );
        }
    }
}
