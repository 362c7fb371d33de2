//! Stream values (types 15, 19, 21, 26, 27): the node listpacks, stored
//! lazily, and the metadata, consumer groups, PELs and consumers.

use crate::error::{ErrorKind, Result};
use crate::reader::Reader;
use crate::string::RdbString;

/// A stream entry ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamId {
    /// Milliseconds part.
    pub ms: u64,
    /// Sequence number within the millisecond.
    pub seq: u64,
}

impl std::fmt::Display for StreamId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

impl StreamId {
    /// The 16-byte big-endian form used in node keys and PELs.
    pub fn from_raw(raw: [u8; 16]) -> StreamId {
        let mut ms = [0u8; 8];
        let mut seq = [0u8; 8];
        ms.copy_from_slice(&raw[..8]);
        seq.copy_from_slice(&raw[8..]);
        StreamId {
            ms: u64::from_be_bytes(ms),
            seq: u64::from_be_bytes(seq),
        }
    }

    fn read(r: &mut Reader<'_>, what: &'static str) -> Result<StreamId> {
        Ok(StreamId {
            ms: r.length(what)?,
            seq: r.length(what)?,
        })
    }

    fn read_raw(r: &mut Reader<'_>, what: &'static str) -> Result<StreamId> {
        Ok(StreamId::from_raw(r.array(what)?))
    }
}

/// An entry of a consumer group's pending entries list (PEL): delivered, not yet acknowledged.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingEntry {
    /// ID of the delivered entry.
    pub id: StreamId,
    /// Last delivery time, unix milliseconds.
    pub delivery_time_ms: i64,
    /// Times the entry was delivered.
    pub delivery_count: u64,
}

/// A consumer of a consumer group.
#[derive(Clone, Debug, PartialEq)]
pub struct Consumer<'a> {
    /// Consumer name.
    pub name: RdbString<'a>,
    /// Last time the consumer was seen, unix milliseconds.
    pub seen_time_ms: i64,
    /// Stream v3+.
    pub active_time_ms: Option<i64>,
    /// IDs of the group PEL entries this consumer owns.
    pub pending: Vec<StreamId>,
}

/// A consumer group of a stream.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerGroup<'a> {
    /// Group name.
    pub name: RdbString<'a>,
    /// ID of the last entry delivered to the group.
    pub last_delivered: StreamId,
    /// Stream v2+; `u64::MAX` means unknown (-1).
    pub entries_read: Option<u64>,
    /// The group's pending entries list (PEL), sorted by ID.
    pub pending: Vec<PendingEntry>,
    /// The group's consumers.
    pub consumers: Vec<Consumer<'a>>,
    /// Stream v5: PEL entries owned by no consumer (the NACK zone).
    pub nacked: Vec<StreamId>,
}

/// One idempotent producer of a stream (IDMP) and the IDs it added.
#[derive(Clone, Debug, PartialEq)]
pub struct IdempotentProducer<'a> {
    /// The producer's id.
    pub producer_id: RdbString<'a>,
    /// Remembered (idempotency id, stream entry ID) pairs.
    pub entries: Vec<(RdbString<'a>, StreamId)>,
}

/// Stream v4+ idempotent-producer ("IDMP") state.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamIdmp<'a> {
    /// Seconds an idempotency id is remembered (1-86400).
    pub duration_s: u64,
    /// Idempotency ids remembered per producer at most (1-10000).
    pub max_entries: u64,
    /// The producers with their remembered ids.
    pub producers: Vec<IdempotentProducer<'a>>,
    /// Idempotency ids ever added to the stream.
    pub iids_added: u64,
    /// XADDs whose idempotency id was already remembered (so nothing was added).
    pub iids_duplicates: u64,
}

/// A stream value. Node listpacks are kept as raw bytes and walked on demand.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamValue<'a> {
    /// Layout version 1-5.
    pub version: u8,
    /// Number of node listpacks.
    pub node_count: u64,
    nodes: &'a [u8],
    nodes_offset: u64,
    /// Live entries (XLEN).
    pub length: u64,
    /// The last ID ever added (`XADD *` continues after it), even if deleted.
    pub last_id: StreamId,
    /// v2+ (for v1 it is derived from the data by the server).
    pub first_id: Option<StreamId>,
    /// v2+: the largest ID ever deleted.
    pub max_deleted_id: Option<StreamId>,
    /// v2+: entries ever added, deleted ones included.
    pub entries_added: Option<u64>,
    /// Consumer groups; left empty by the boundary walk.
    pub groups: Vec<ConsumerGroup<'a>>,
    /// v4+: idempotent-producer state.
    pub idmp: Option<StreamIdmp<'a>>,
}

/// One node of a stream: its master ID and its listpack.
#[derive(Clone, Copy, Debug)]
pub struct StreamNode<'a> {
    /// ID every entry of the node is stored relative to (the node key).
    pub master_id: StreamId,
    /// The node's listpack, undecoded.
    pub listpack: RdbString<'a>,
}

impl<'a> StreamValue<'a> {
    /// The nodes in order.
    pub fn nodes(&self) -> StreamNodes<'a> {
        StreamNodes {
            r: Reader::new(self.nodes, self.nodes_offset),
            left: self.node_count,
        }
    }

    /// Reads a stream; with `collect` false nothing is allocated (boundary walk).
    pub(crate) fn read(r: &mut Reader<'a>, version: u8, collect: bool) -> Result<StreamValue<'a>> {
        let node_count = r.count("stream node count", 2)?;
        let nodes_start = r.pos();
        let nodes_offset = r.offset();
        for _ in 0..node_count {
            r.string("stream node key")?;
            r.string("stream node listpack")?;
        }
        let nodes = r.since(nodes_start);
        let length = r.length("stream length")?;
        let last_id = StreamId::read(r, "stream last id")?;
        let (mut first_id, mut max_deleted_id, mut entries_added) = (None, None, None);
        if version >= 2 {
            first_id = Some(StreamId::read(r, "stream first id")?);
            max_deleted_id = Some(StreamId::read(r, "stream max deleted id")?);
            entries_added = Some(r.length("stream entries added")?);
        }
        let group_count = r.count("stream group count", 4)?;
        let mut groups = Vec::new();
        for _ in 0..group_count {
            let group = read_group(r, version, collect)?;
            if collect {
                groups.push(group);
            }
        }
        let idmp = if version >= 4 {
            Some(read_idmp(r, collect)?)
        } else {
            None
        };
        Ok(StreamValue {
            version,
            node_count,
            nodes,
            nodes_offset,
            length,
            last_id,
            first_id,
            max_deleted_id,
            entries_added,
            groups,
            idmp,
        })
    }
}

fn read_group<'a>(r: &mut Reader<'a>, version: u8, collect: bool) -> Result<ConsumerGroup<'a>> {
    let name = r.string("consumer group name")?;
    let last_delivered = StreamId::read(r, "group last delivered id")?;
    let entries_read = if version >= 2 {
        Some(r.length("group entries read")?)
    } else {
        None
    };
    let pel_count = r.count("group PEL size", 18)?;
    let mut pending = Vec::new();
    for _ in 0..pel_count {
        let entry = PendingEntry {
            id: StreamId::read_raw(r, "PEL entry id")?,
            delivery_time_ms: r.i64_le("PEL delivery time")?,
            delivery_count: r.length("PEL delivery count")?,
        };
        if collect {
            pending.push(entry);
        }
    }
    let consumer_count = r.count("group consumer count", 10)?;
    let mut consumers = Vec::new();
    for _ in 0..consumer_count {
        let name = r.string("consumer name")?;
        let seen_time_ms = r.i64_le("consumer seen time")?;
        let active_time_ms = if version >= 3 {
            Some(r.i64_le("consumer active time")?)
        } else {
            None
        };
        let ids = read_raw_ids(r, "consumer PEL", collect)?;
        if collect {
            consumers.push(Consumer {
                name,
                seen_time_ms,
                active_time_ms,
                pending: ids,
            });
        }
    }
    let nacked = if version >= 5 {
        read_raw_ids(r, "group NACK zone", collect)?
    } else {
        Vec::new()
    };
    Ok(ConsumerGroup {
        name,
        last_delivered,
        entries_read,
        pending,
        consumers,
        nacked,
    })
}

fn read_raw_ids(r: &mut Reader<'_>, what: &'static str, collect: bool) -> Result<Vec<StreamId>> {
    let n = r.count(what, 16)?;
    let mut ids = Vec::new();
    for _ in 0..n {
        let id = StreamId::read_raw(r, what)?;
        if collect {
            ids.push(id);
        }
    }
    Ok(ids)
}

fn read_idmp<'a>(r: &mut Reader<'a>, collect: bool) -> Result<StreamIdmp<'a>> {
    let duration_s = r.length("stream IDMP duration")?;
    let max_entries = r.length("stream IDMP max entries")?;
    let producer_count = r.count("stream IDMP producer count", 2)?;
    let mut producers = Vec::new();
    for _ in 0..producer_count {
        let producer_id = r.string("IDMP producer id")?;
        let n = r.count("IDMP producer entry count", 3)?;
        let mut entries = Vec::new();
        for _ in 0..n {
            let iid = r.string("IDMP iid")?;
            let id = StreamId::read(r, "IDMP entry id")?;
            if collect {
                entries.push((iid, id));
            }
        }
        if collect {
            producers.push(IdempotentProducer { producer_id, entries });
        }
    }
    Ok(StreamIdmp {
        duration_s,
        max_entries,
        producers,
        iids_added: r.length("stream IDMP iids added")?,
        iids_duplicates: r.length("stream IDMP iids duplicates")?,
    })
}

/// Nodes of a stream in order. After an error it yields nothing more.
pub struct StreamNodes<'a> {
    r: Reader<'a>,
    left: u64,
}

impl<'a> Iterator for StreamNodes<'a> {
    type Item = Result<StreamNode<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let node = (|| {
            let at = self.r.pos();
            let key = self.r.string("stream node key")?;
            let master_id = match key {
                RdbString::Raw(b) if b.len() == 16 => {
                    let mut raw = [0u8; 16];
                    raw.copy_from_slice(b);
                    StreamId::from_raw(raw)
                }
                _ => {
                    return Err(self.r.err_at(
                        at,
                        ErrorKind::BadStream(format!("node key is {} bytes, expected 16", key.len())),
                    ))
                }
            };
            let listpack = self.r.string("stream node listpack")?;
            Ok(StreamNode { master_id, listpack })
        })();
        if node.is_err() {
            self.left = 0;
        }
        Some(node)
    }
}
