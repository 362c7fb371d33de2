//! The file header (magic, dialect, version) and the value-type table, which
//! depends on both: bytes 22/23 mean different things to Redis and Valkey.

use crate::error::{Dialect, ErrorKind};

/// The versions this parser reads, as printed in version errors and `--version`.
pub const SUPPORTED: &str = "Redis RDB 1-14 (REDIS0001-REDIS0014), Valkey RDB 80-81 (VALKEY080, VALKEY081)";

/// Dialect and version: everything the byte-level meaning depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    /// Server family, from the magic.
    pub dialect: Dialect,
    /// RDB version from the magic (Redis 1-14, Valkey 80-81; higher only when newer versions are allowed).
    pub version: u32,
}

/// The newest RDB version of each dialect whose layout this parser knows.
pub const NEWEST_REDIS: u32 = 14;
pub const NEWEST_VALKEY: u32 = 81;

impl Format {
    /// Reads the 9-byte magic.
    pub fn from_magic(data: &[u8]) -> Result<Format, ErrorKind> {
        Self::read_magic(data, false)
    }

    /// As [`Format::from_magic`], but also accepts versions newer than any
    /// this parser knows (Redis 15+, Valkey 82+). Such a file is read with
    /// the newest layout known: servers add types and opcodes in new versions
    /// but keep the old ones, so everything up to the first type byte or
    /// opcode this parser does not know reads as it would in the newest
    /// known version, and that byte stops the walk with an error.
    pub fn from_magic_allowing_newer(data: &[u8]) -> Result<Format, ErrorKind> {
        Self::read_magic(data, true)
    }

    /// The newest version of `dialect` whose layout is known.
    pub fn newest_known(dialect: Dialect) -> u32 {
        match dialect {
            Dialect::Redis => NEWEST_REDIS,
            Dialect::Valkey => NEWEST_VALKEY,
        }
    }

    /// A version newer than any this parser knows (only from
    /// [`Format::from_magic_allowing_newer`]).
    pub fn is_newer_than_known(&self) -> bool {
        self.version > Self::newest_known(self.dialect)
    }

    fn read_magic(data: &[u8], allow_newer: bool) -> Result<Format, ErrorKind> {
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
                    Dialect::Redis => (1..=NEWEST_REDIS).contains(&version),
                    Dialect::Valkey => (80..=NEWEST_VALKEY).contains(&version),
                } || allow_newer && version > Self::newest_known(dialect);
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

    /// Whether the file ends with a CRC-64 after EOF (RDB 5+).
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
    /// Strings (type 0).
    String,
    /// Lists, in any encoding.
    List,
    /// Sets, in any encoding.
    Set,
    /// Sorted sets, in any encoding.
    ZSet,
    /// Hashes, in any encoding, with or without field expiry.
    Hash,
    /// Streams (layout versions 1-5).
    Stream,
    /// Module data types (types 6 and 7).
    Module,
    /// Redis 8.8 arrays (type 28).
    Array,
}

impl TypeKind {
    /// Lower-case name: `string`, `list`, `set`, `zset`, `hash`, `stream`, `module` or `array`.
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

    /// Every kind, in the order [`TypeKind::name`] lists them.
    pub const ALL: [TypeKind; 8] = [
        TypeKind::String,
        TypeKind::List,
        TypeKind::Set,
        TypeKind::ZSet,
        TypeKind::Hash,
        TypeKind::Stream,
        TypeKind::Module,
        TypeKind::Array,
    ];

    /// The kind [`TypeKind::name`] names, or `None`.
    pub fn from_name(name: &str) -> Option<TypeKind> {
        TypeKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

macro_rules! value_types {
    ($($(#[$doc:meta])* $variant:ident = $byte:literal, $name:literal, $kind:ident;)*) => {
        /// The on-disk value type, in the dialect of the file.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ValueType { $($(#[$doc])* $variant,)* }

        impl ValueType {
            /// The type byte as written in the file.
            pub fn byte(self) -> u8 {
                match self { $(ValueType::$variant => $byte,)* }
            }

            /// The name used in Redis' `rdb.h` (`hash_2` and `path_hash` for Valkey's).
            pub fn name(self) -> &'static str {
                match self { $(ValueType::$variant => $name,)* }
            }

            /// The logical type this value type stores.
            pub fn kind(self) -> TypeKind {
                match self { $(ValueType::$variant => TypeKind::$kind,)* }
            }
        }
    };
}

value_types! {
    /// Strings, every version.
    String = 0, "string", String;
    /// Linked lists of strings; written by Redis up to 3.0.
    List = 1, "list", List;
    /// Hashtable sets; written by every version.
    Set = 2, "set", Set;
    /// Skiplist sorted sets with scores as text; written by Redis up to 3.2.
    ZSet = 3, "zset", ZSet;
    /// Hashtable hashes without field expiry; written by every version.
    Hash = 4, "hash", Hash;
    /// Skiplist sorted sets with binary scores (RDB 8+); Redis 4.0+ and Valkey.
    ZSet2 = 5, "zset_2", ZSet;
    /// Module values of the Redis 4.0 release candidates (RDB 8+); their length is not recorded.
    ModulePreGa = 6, "module", Module;
    /// Module values (RDB 8+); Redis 4.0+ and Valkey.
    Module2 = 7, "module_2", Module;
    /// Small hashes as a zipmap (RDB 2+); written by Redis 2.4.
    HashZipmap = 9, "hash_zipmap", Hash;
    /// Small lists as a ziplist (RDB 2+); written by Redis 2.4-3.0.
    ListZiplist = 10, "list_ziplist", List;
    /// Small integer sets as an intset (RDB 2+); Redis 2.4+ and Valkey.
    SetIntset = 11, "set_intset", Set;
    /// Small sorted sets as a ziplist (RDB 2+); written by Redis 2.4-6.2.
    ZSetZiplist = 12, "zset_ziplist", ZSet;
    /// Small hashes as a ziplist (RDB 4+); written by Redis 2.6-6.2.
    HashZiplist = 13, "hash_ziplist", Hash;
    /// Quicklists of ziplist nodes (RDB 7+); written by Redis 3.2-6.2.
    ListQuicklist = 14, "list_quicklist", List;
    /// Streams, layout v1 (RDB 9+); written by Redis 5.0-6.2.
    StreamListpacks = 15, "stream_listpacks", Stream;
    /// Small hashes as a listpack (RDB 10+); Redis 7.0+ and Valkey.
    HashListpack = 16, "hash_listpack", Hash;
    /// Small sorted sets as a listpack (RDB 10+); Redis 7.0+ and Valkey.
    ZSetListpack = 17, "zset_listpack", ZSet;
    /// Quicklists of listpack or plain nodes (RDB 10+); Redis 7.0+ and Valkey.
    ListQuicklist2 = 18, "list_quicklist_2", List;
    /// Streams, layout v2 (RDB 10+); written by Redis 7.0.
    StreamListpacks2 = 19, "stream_listpacks_2", Stream;
    /// Small sets as a listpack (RDB 11+); Redis 7.2+ and Valkey.
    SetListpack = 20, "set_listpack", Set;
    /// Streams, layout v3 (RDB 11+); written by Redis 7.2-8.4 and Valkey.
    StreamListpacks3 = 21, "stream_listpacks_3", Stream;
    /// Hashes with field expiry, hashtable form of the Redis 7.4 release candidates (Redis RDB 12+).
    HashMetadataPreGa = 22, "hash_metadata_pre_ga", Hash;
    /// Hashes with field expiry, listpack form of the Redis 7.4 release candidates (Redis RDB 12+).
    HashListpackExPreGa = 23, "hash_listpack_ex_pre_ga", Hash;
    /// Hashes with field expiry, hashtable form (Redis RDB 12+); Redis 7.4+.
    HashMetadata = 24, "hash_metadata", Hash;
    /// Small hashes with field expiry as a listpack (Redis RDB 12+); Redis 7.4+.
    HashListpackEx = 25, "hash_listpack_ex", Hash;
    /// Streams, layout v4 with idempotent producers (Redis RDB 13+); written by Redis 8.6.
    StreamListpacks4 = 26, "stream_listpacks_4", Stream;
    /// Streams, layout v5 with the NACK zone (Redis RDB 14+); Redis 8.8+.
    StreamListpacks5 = 27, "stream_listpacks_5", Stream;
    /// Sparse arrays (Redis RDB 14+); Redis 8.8+.
    Array = 28, "array", Array;
    /// Hashes with field expiry (Valkey RDB 80+); Valkey 9.0+.
    ValkeyHash2 = 22, "hash_2", Hash;
    /// Path hashes (Valkey RDB 81+); Valkey 9.2+.
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

/// The name of a record opcode (0xF0-0xFF) if the records of `format` have it.
fn opcode_name(byte: u8, format: Format) -> Option<&'static str> {
    let valkey = format.dialect == Dialect::Valkey;
    Some(match byte {
        0xff => "EOF",
        0xfe => "SELECTDB",
        0xfd => "EXPIRETIME",
        0xfc => "EXPIRETIME_MS",
        0xfb => "RESIZEDB",
        0xfa => "AUX",
        0xf9 => "FREQ",
        0xf8 => "IDLE",
        0xf7 => "MODULE_AUX",
        0xf6 => "FUNCTION",
        0xf5 => "FUNCTION2",
        0xf4 => "SLOT_INFO",
        0xf3 if valkey => "SLOT_IMPORT",
        0xf3 if format.version >= 13 => "KEY_META",
        0xf2 if valkey && format.version >= 81 => "UPDATE",
        _ => return None,
    })
}

/// `0-7, 9-21` (or `0xf4-0xff`): the bytes `known` admits, as ranges.
fn byte_ranges(bytes: impl Iterator<Item = u8>, hex: bool) -> String {
    let show = |b: u8| if hex { format!("0x{b:02x}") } else { b.to_string() };
    let mut ranges: Vec<(u8, u8)> = Vec::new();
    for b in bytes {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == b => *end = b,
            _ => ranges.push((b, b)),
        }
    }
    ranges
        .iter()
        .map(|&(a, b)| {
            if a == b {
                show(a)
            } else {
                format!("{}-{}", show(a), show(b))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text of [`ErrorKind::UnknownType`]: the byte, what the file's version
/// has instead, the version that has it if a later one does, and why the
/// walk cannot go on.
pub(crate) fn describe_unknown_byte(byte: u8, dialect: Dialect, version: u32) -> String {
    let format = Format { dialect, version };
    let is_opcode = byte >= 0xf0;
    let known = if is_opcode {
        byte_ranges((0xf0..=0xff).filter(|&b| opcode_name(b, format).is_some()), true)
    } else {
        byte_ranges(
            (0..0xf0).filter(|&b| ValueType::from_byte(b, format).is_some()),
            false,
        )
    };
    let (what, kinds, shown) = if is_opcode {
        ("record opcode", "opcodes", format!("0x{byte:02x}"))
    } else {
        ("value type byte", "types", byte.to_string())
    };
    let mut out = format!(
        "unknown {what} {byte} (0x{byte:02x}) for {dialect} RDB version {version}, which has {kinds} {known}"
    );
    let later = (version + 1..=Format::newest_known(dialect)).find_map(|v| {
        let f = Format { dialect, version: v };
        let name = if is_opcode {
            opcode_name(byte, f)
        } else {
            ValueType::from_byte(byte, f).map(ValueType::name)
        };
        name.map(|n| (n, v))
    });
    if let Some((name, since)) = later {
        out.push_str(&format!(
            " ({shown} is {name} only from {dialect} RDB {since} on)"
        ));
    }
    out.push_str(": a record's length cannot be found without its type, so the walk stops here");
    out
}
