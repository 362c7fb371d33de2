//! In-memory encodings, named as `OBJECT ENCODING` names them.

use std::fmt;

/// A value's in-memory encoding on the target server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// A string holding an integer, kept in the object itself.
    Int,
    /// A short string allocated together with its object.
    Embstr,
    /// A string in its own allocation, apart from its object.
    Raw,
    /// A small hash or sorted set (7.0+), set or list (7.2+) as one listpack.
    Listpack,
    /// Redis 7.4+ hash whose fields carry TTLs.
    ListpackEx,
    /// A small hash or sorted set (before 7.0) or list (before 3.2) as one ziplist.
    Ziplist,
    /// A list as a quicklist of compact nodes (3.2+).
    Quicklist,
    /// A list as a linked list of string objects (before 3.2).
    Linkedlist,
    /// A small set of integers as one intset.
    Intset,
    /// A hash or set as a hash table.
    Hashtable,
    /// A sorted set as a skiplist plus a hash table.
    Skiplist,
    /// A stream (6.0+; 5.0 has no name for it).
    Stream,
    /// A small hash as one zipmap (before 2.6).
    Zipmap,
    /// What Redis 5.0 answers for streams; also types this crate does not model.
    Unknown,
}

impl Encoding {
    /// The `OBJECT ENCODING` reply.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Int => "int",
            Encoding::Embstr => "embstr",
            Encoding::Raw => "raw",
            Encoding::Listpack => "listpack",
            Encoding::ListpackEx => "listpackex",
            Encoding::Ziplist => "ziplist",
            Encoding::Quicklist => "quicklist",
            Encoding::Linkedlist => "linkedlist",
            Encoding::Intset => "intset",
            Encoding::Hashtable => "hashtable",
            Encoding::Skiplist => "skiplist",
            Encoding::Stream => "stream",
            Encoding::Zipmap => "zipmap",
            Encoding::Unknown => "unknown",
        }
    }

    /// Whether this is one of the compact single-allocation encodings.
    pub fn is_compact(self) -> bool {
        matches!(
            self,
            Encoding::Listpack
                | Encoding::ListpackEx
                | Encoding::Ziplist
                | Encoding::Intset
                | Encoding::Zipmap
        )
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
