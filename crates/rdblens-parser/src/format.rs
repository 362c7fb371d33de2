//! The file header (magic, dialect, version) and the value-type table, which
//! depends on both: bytes 22/23 mean different things to Redis and Valkey.

use crate::error::{Dialect, ErrorKind};

pub const SUPPORTED: &str = "Redis RDB 1-14 (REDIS0001-REDIS0014), Valkey RDB 80-81 (VALKEY080, VALKEY081)";

/// Dialect and version: everything the byte-level meaning depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    pub dialect: Dialect,
    pub version: u32,
}

impl Format {
    /// Reads the 9-byte magic.
    pub fn from_magic(data: &[u8]) -> Result<Format, ErrorKind> {
        if data.len() >= 9 {
            let digits = |d: &[u8]| -> Option<u32> {
                d.iter().try_fold(0u32, |acc, &c| {
                    c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
                })
            };
            let (dialect, version) = if &data[..5] == b"REDIS" {
                (Dialect::Redis, digits(&data[5..9]))
            } else if &data[..6] == b"VALKEY" {
                (Dialect::Valkey, digits(&data[6..9]))
            } else {
                (Dialect::Redis, None)
            };
            if let Some(version) = version {
                let ok = match dialect {
                    Dialect::Redis => (1..=14).contains(&version),
                    Dialect::Valkey => (80..=81).contains(&version),
                };
                if !ok {
                    return Err(ErrorKind::UnsupportedVersion {
                        dialect,
                        version,
                        supported: SUPPORTED,
                    });
                }
                return Ok(Format { dialect, version });
            }
        }
        Err(ErrorKind::NotRdb(describe_non_rdb(data)))
    }

    pub fn has_checksum(&self) -> bool {
        self.version >= 5
    }
}

/// Says what a file that is not an RDB looks like instead.
fn describe_non_rdb(data: &[u8]) -> String {
    let head = &data[..data.len().min(16)];
    if data.is_empty() {
        "the file is empty".into()
    } else if head.starts_with(&[0x1f, 0x8b]) {
        "it is gzip-compressed: decompress it first (gunzip)".into()
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        "it is zstd-compressed: decompress it first (unzstd)".into()
    } else if head.starts_with(b"BZh") {
        "it is bzip2-compressed: decompress it first (bunzip2)".into()
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z']) {
        "it is xz-compressed: decompress it first (unxz)".into()
    } else if head.starts_with(&[0x04, 0x22, 0x4d, 0x18]) {
        "it is lz4-compressed: decompress it first (unlz4)".into()
    } else if head.starts_with(b"VKCS") {
        "it is a Valkey compressed stream (VKCS): decompress it with valkey first".into()
    } else if head.starts_with(b"*") || head.starts_with(b"file ") {
        "it looks like an AOF file (Redis commands), not an RDB snapshot".into()
    } else if head.starts_with(b"$EOF:") || head.starts_with(b"$") {
        "it looks like a replication stream: strip the '$' framing line first".into()
    } else if head.starts_with(b"REDIS") || head.starts_with(b"VALKEY") {
        format!(
            "malformed magic {:?}",
            String::from_utf8_lossy(&data[..data.len().min(9)])
        )
    } else if head
        .iter()
        .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace())
    {
        format!(
            "it starts with text {:?}, expected the magic REDIS00NN or VALKEYNNN",
            String::from_utf8_lossy(head)
        )
    } else {
        format!("it starts with bytes {head:02x?}, expected the magic REDIS00NN or VALKEYNNN")
    }
}

/// Which logical type a value type byte carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeKind {
    String,
    List,
    Set,
    ZSet,
    Hash,
    Stream,
    Module,
    Array,
}

impl TypeKind {
    pub fn name(self) -> &'static str {
        match self {
            TypeKind::String => "string",
            TypeKind::List => "list",
            TypeKind::Set => "set",
            TypeKind::ZSet => "zset",
            TypeKind::Hash => "hash",
            TypeKind::Stream => "stream",
            TypeKind::Module => "module",
            TypeKind::Array => "array",
        }
    }
}

macro_rules! value_types {
    ($($variant:ident = $byte:literal, $name:literal, $kind:ident;)*) => {
        /// The on-disk value type, in the dialect of the file.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ValueType { $($variant,)* }

        impl ValueType {
            /// The type byte as written in the file.
            pub fn byte(self) -> u8 {
                match self { $(ValueType::$variant => $byte,)* }
            }

            /// The name used in Redis' `rdb.h` (`hash_2` and `path_hash` for Valkey's).
            pub fn name(self) -> &'static str {
                match self { $(ValueType::$variant => $name,)* }
            }

            pub fn kind(self) -> TypeKind {
                match self { $(ValueType::$variant => TypeKind::$kind,)* }
            }
        }
    };
}

value_types! {
    String = 0, "string", String;
    List = 1, "list", List;
    Set = 2, "set", Set;
    ZSet = 3, "zset", ZSet;
    Hash = 4, "hash", Hash;
    ZSet2 = 5, "zset_2", ZSet;
    ModulePreGa = 6, "module", Module;
    Module2 = 7, "module_2", Module;
    HashZipmap = 9, "hash_zipmap", Hash;
    ListZiplist = 10, "list_ziplist", List;
    SetIntset = 11, "set_intset", Set;
    ZSetZiplist = 12, "zset_ziplist", ZSet;
    HashZiplist = 13, "hash_ziplist", Hash;
    ListQuicklist = 14, "list_quicklist", List;
    StreamListpacks = 15, "stream_listpacks", Stream;
    HashListpack = 16, "hash_listpack", Hash;
    ZSetListpack = 17, "zset_listpack", ZSet;
    ListQuicklist2 = 18, "list_quicklist_2", List;
    StreamListpacks2 = 19, "stream_listpacks_2", Stream;
    SetListpack = 20, "set_listpack", Set;
    StreamListpacks3 = 21, "stream_listpacks_3", Stream;
    HashMetadataPreGa = 22, "hash_metadata_pre_ga", Hash;
    HashListpackExPreGa = 23, "hash_listpack_ex_pre_ga", Hash;
    HashMetadata = 24, "hash_metadata", Hash;
    HashListpackEx = 25, "hash_listpack_ex", Hash;
    StreamListpacks4 = 26, "stream_listpacks_4", Stream;
    StreamListpacks5 = 27, "stream_listpacks_5", Stream;
    Array = 28, "array", Array;
    ValkeyHash2 = 22, "hash_2", Hash;
    ValkeyPathHash = 23, "path_hash", Hash;
}

impl ValueType {
    /// Decodes a type byte for the file's dialect and version; `None` if no
    /// server of that dialect and version writes or loads it.
    pub fn from_byte(byte: u8, format: Format) -> Option<ValueType> {
        use ValueType::*;
        let v = format.version;
        let common = match byte {
            0 => Some((String, 1)),
            1 => Some((List, 1)),
            2 => Some((Set, 1)),
            3 => Some((ZSet, 1)),
            4 => Some((Hash, 1)),
            5 => Some((ZSet2, 8)),
            6 => Some((ModulePreGa, 8)),
            7 => Some((Module2, 8)),
            9 => Some((HashZipmap, 2)),
            10 => Some((ListZiplist, 2)),
            11 => Some((SetIntset, 2)),
            12 => Some((ZSetZiplist, 2)),
            13 => Some((HashZiplist, 4)),
            14 => Some((ListQuicklist, 7)),
            15 => Some((StreamListpacks, 9)),
            16 => Some((HashListpack, 10)),
            17 => Some((ZSetListpack, 10)),
            18 => Some((ListQuicklist2, 10)),
            19 => Some((StreamListpacks2, 10)),
            20 => Some((SetListpack, 11)),
            21 => Some((StreamListpacks3, 11)),
            _ => None,
        };
        if let Some((ty, since)) = common {
            return (v >= since).then_some(ty);
        }
        match format.dialect {
            Dialect::Redis => match byte {
                22 if v >= 12 => Some(HashMetadataPreGa),
                23 if v >= 12 => Some(HashListpackExPreGa),
                24 if v >= 12 => Some(HashMetadata),
                25 if v >= 12 => Some(HashListpackEx),
                26 if v >= 13 => Some(StreamListpacks4),
                27 if v >= 14 => Some(StreamListpacks5),
                28 if v >= 14 => Some(Array),
                _ => None,
            },
            Dialect::Valkey => match byte {
                22 => Some(ValkeyHash2),
                23 if v >= 81 => Some(ValkeyPathHash),
                _ => None,
            },
        }
    }

    /// Stream layout version 1-5 for stream types.
    pub fn stream_version(self) -> Option<u8> {
        match self {
            ValueType::StreamListpacks => Some(1),
            ValueType::StreamListpacks2 => Some(2),
            ValueType::StreamListpacks3 => Some(3),
            ValueType::StreamListpacks4 => Some(4),
            ValueType::StreamListpacks5 => Some(5),
            _ => None,
        }
    }
}
