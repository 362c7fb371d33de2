//! In-memory encodings, named as `OBJECT ENCODING` names them.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    Int,
    Embstr,
    Raw,
    Listpack,
    /// Redis 7.4+ hash whose fields carry TTLs.
    ListpackEx,
    Ziplist,
    Quicklist,
    Linkedlist,
    Intset,
    Hashtable,
    Skiplist,
    Stream,
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
