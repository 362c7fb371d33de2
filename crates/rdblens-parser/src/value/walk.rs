//! The layout of every value type, walked once. The boundary walker runs it
//! with a no-op [`Structure`] (no decompression, no allocation); the decoder
//! runs it with one that opens strings and blobs.

use crate::error::{ErrorKind, Result};
use crate::format::ValueType;
use crate::module::{skip_opcodes, ModuleId, ModuleValue};
use crate::reader::Reader;
use crate::stream::StreamValue;
use crate::string::RdbString;

/// What a string holding a compact blob contains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlobRole {
    ListZiplist,
    SetIntset,
    SetListpack,
    ZSetZiplist,
    ZSetListpack,
    HashZipmap,
    HashZiplist,
    HashListpack,
    /// field, value, expiry triples.
    HashListpackEx,
    QuicklistZiplist,
    QuicklistListpack,
    QuicklistPlain,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum RawArrayItem<'a> {
    Bytes(RdbString<'a>),
    Int(i64),
    Float(f64),
}

/// Callbacks of the structural walk; strings arrive undecoded.
pub(crate) trait Structure<'a> {
    /// Wants no element of a plain collection: they are stepped over
    /// ([`Reader::skip_string`]), not read.
    const SKIPS_ELEMENTS: bool = false;

    fn string(&mut self, _s: RdbString<'a>) -> Result<()> {
        Ok(())
    }
    fn member(&mut self, _s: RdbString<'a>) -> Result<()> {
        Ok(())
    }
    fn scored(&mut self, _s: RdbString<'a>, _score: f64) -> Result<()> {
        Ok(())
    }
    fn field(&mut self, _f: RdbString<'a>, _v: RdbString<'a>, _expire_ms: Option<i64>) -> Result<()> {
        Ok(())
    }
    fn blob(&mut self, _role: BlobRole, _s: RdbString<'a>) -> Result<()> {
        Ok(())
    }
    fn path(&mut self, _path: RdbString<'a>, _fields: u64) -> Result<()> {
        Ok(())
    }
    fn array_item(&mut self, _index: u64, _item: RawArrayItem<'a>) -> Result<()> {
        Ok(())
    }
    fn module(&mut self, _m: ModuleValue<'a>) -> Result<()> {
        Ok(())
    }
    /// Whether stream groups should be collected (allocates).
    fn wants_stream_details(&self) -> bool {
        false
    }
    fn stream(&mut self, _s: StreamValue<'a>) -> Result<()> {
        Ok(())
    }
}

/// Finds the end of a value: no decompression, no allocation.
pub(crate) struct Skip;

impl<'a> Structure<'a> for Skip {
    const SKIPS_ELEMENTS: bool = true;
}

/// Walks one value of type `ty`, leaving `r` right after it.
pub(crate) fn walk<'a, S: Structure<'a>>(r: &mut Reader<'a>, ty: ValueType, s: &mut S) -> Result<()> {
    use ValueType::*;
    match ty {
        String => s.string(r.string("string value")?)?,
        List | Set if S::SKIPS_ELEMENTS => {
            for _ in 0..r.count("collection size", 1)? {
                r.skip_string("collection element")?;
            }
        }
        List | Set => {
            for _ in 0..r.count("collection size", 1)? {
                s.member(r.string("collection element")?)?;
            }
        }
        ZSet => {
            for _ in 0..r.count("sorted set size", 2)? {
                let member = r.string("sorted set member")?;
                let score = text_score(r)?;
                s.scored(member, score)?;
            }
        }
        ZSet2 if S::SKIPS_ELEMENTS => {
            for _ in 0..r.count("sorted set size", 9)? {
                r.skip_string("sorted set member")?;
                r.take(8, "sorted set score")?;
            }
        }
        ZSet2 => {
            for _ in 0..r.count("sorted set size", 9)? {
                let member = r.string("sorted set member")?;
                let score = f64::from_le_bytes(r.array("sorted set score")?);
                s.scored(member, score)?;
            }
        }
        Hash if S::SKIPS_ELEMENTS => {
            for _ in 0..r.count("hash size", 2)? {
                r.skip_string("hash field")?;
                r.skip_string("hash value")?;
            }
        }
        Hash => {
            for _ in 0..r.count("hash size", 2)? {
                let field = r.string("hash field")?;
                s.field(field, r.string("hash value")?, None)?;
            }
        }
        ModulePreGa => {
            let at = r.pos();
            let id = ModuleId(r.length("module id")?);
            return Err(r.err_at(
                at,
                ErrorKind::UnsupportedType(
                    "module (type 6)",
                    format!(
                        "a value of module {} (encoding version {}), as only Redis 4.0 release candidates \
                         wrote them: its length is not recorded, so the walk stops here",
                        id.name(),
                        id.encver()
                    ),
                ),
            ));
        }
        Module2 => {
            let id = ModuleId(r.length("module id")?);
            let start = r.pos();
            let body_offset = r.offset();
            skip_opcodes(r)?;
            s.module(ModuleValue {
                id,
                body: r.since(start),
                body_offset,
            })?;
        }
        HashZipmap => s.blob(BlobRole::HashZipmap, r.string("zipmap")?)?,
        ListZiplist => s.blob(BlobRole::ListZiplist, r.string("ziplist")?)?,
        SetIntset => s.blob(BlobRole::SetIntset, r.string("intset")?)?,
        ZSetZiplist => s.blob(BlobRole::ZSetZiplist, r.string("ziplist")?)?,
        HashZiplist => s.blob(BlobRole::HashZiplist, r.string("ziplist")?)?,
        HashListpack => s.blob(BlobRole::HashListpack, r.string("listpack")?)?,
        ZSetListpack => s.blob(BlobRole::ZSetListpack, r.string("listpack")?)?,
        SetListpack => s.blob(BlobRole::SetListpack, r.string("listpack")?)?,
        ListQuicklist => {
            for _ in 0..r.count("quicklist node count", 1)? {
                s.blob(BlobRole::QuicklistZiplist, r.string("quicklist ziplist node")?)?;
            }
        }
        ListQuicklist2 => {
            for _ in 0..r.count("quicklist node count", 2)? {
                let at = r.pos();
                let role = match r.length("quicklist node container")? {
                    1 => BlobRole::QuicklistPlain,
                    2 => BlobRole::QuicklistListpack,
                    other => {
                        return Err(r.err_at(
                            at,
                            ErrorKind::BadValue(format!(
                                "quicklist node container {other} (expected 1 = plain or 2 = packed)"
                            )),
                        ))
                    }
                };
                s.blob(role, r.string("quicklist node")?)?;
            }
        }
        StreamListpacks | StreamListpacks2 | StreamListpacks3 | StreamListpacks4 | StreamListpacks5 => {
            let version = ty.stream_version().unwrap_or(1);
            let stream = StreamValue::read(r, version, s.wants_stream_details())?;
            s.stream(stream)?;
        }
        HashMetadataPreGa => {
            for _ in 0..r.count("hash size", 3)? {
                let ttl = r.length("hash field expiry")?;
                let field = r.string("hash field")?;
                let value = r.string("hash value")?;
                s.field(field, value, (ttl != 0).then_some(ttl as i64))?;
            }
        }
        HashMetadata => {
            let min = r.i64_le("hash minimum expiry")?;
            for _ in 0..r.count("hash size", 3)? {
                let ttl = r.length("hash field expiry")?;
                let field = r.string("hash field")?;
                let value = r.string("hash value")?;
                let expire = (ttl != 0).then(|| min.wrapping_add(ttl as i64).wrapping_sub(1));
                s.field(field, value, expire)?;
            }
        }
        HashListpackExPreGa => s.blob(BlobRole::HashListpackEx, r.string("listpack")?)?,
        HashListpackEx => {
            // The minimum expiry is advisory and may be stale: TTLs come from the triples.
            r.i64_le("hash minimum expiry")?;
            s.blob(BlobRole::HashListpackEx, r.string("listpack")?)?;
        }
        ValkeyHash2 => {
            for _ in 0..r.count("hash size", 10)? {
                let field = r.string("hash field")?;
                let value = r.string("hash value")?;
                let expire = r.i64_le("hash field expiry")?;
                s.field(field, value, (expire != -1).then_some(expire))?;
            }
        }
        ValkeyPathHash => {
            for _ in 0..r.count("path count", 2)? {
                let path = r.string("path")?;
                let fields = r.count("path field count", 2)?;
                s.path(path, fields)?;
                for _ in 0..fields {
                    let field = r.string("hash field")?;
                    s.field(field, r.string("hash value")?, None)?;
                }
            }
        }
        Array => walk_array(r, s)?,
    }
    Ok(())
}

fn text_score(r: &mut Reader<'_>) -> Result<f64> {
    let at = r.pos();
    match r.u8("sorted set score")? {
        253 => Ok(f64::NAN),
        254 => Ok(f64::INFINITY),
        255 => Ok(f64::NEG_INFINITY),
        n => {
            let text = r.take(u64::from(n), "sorted set score")?;
            std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .ok_or_else(|| {
                    r.err_at(
                        at,
                        ErrorKind::BadValue(format!(
                            "score {:?} is not a number",
                            String::from_utf8_lossy(text)
                        )),
                    )
                })
        }
    }
}

fn walk_array<'a, S: Structure<'a>>(r: &mut Reader<'a>, s: &mut S) -> Result<()> {
    let count = r.count("array size", 3)?;
    let at = r.pos();
    match r.length("array insert index flag")? {
        0 => {}
        1 => {
            r.length("array insert index")?;
        }
        other => {
            return Err(r.err_at(
                at,
                ErrorKind::BadValue(format!("array insert-index flag {other}")),
            ));
        }
    }
    for _ in 0..count {
        let index = r.length("array index")?;
        let at = r.pos();
        let item = match r.length("array item tag")? {
            0 => RawArrayItem::Bytes(r.string("array item")?),
            1 => RawArrayItem::Int(r.i64_le("array item")?),
            2 => RawArrayItem::Float(f64::from_le_bytes(r.array("array item")?)),
            3 => RawArrayItem::Bytes(r.string("array item")?),
            tag => {
                return Err(r.err_at(
                    at,
                    ErrorKind::BadValue(format!("array item tag {tag} (expected 0-3)")),
                ))
            }
        };
        s.array_item(index, item)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Rdb, ValueType};

    /// Reads every element, as the decoder does.
    struct ReadAll;

    impl<'a> Structure<'a> for ReadAll {}

    /// Where each walk of `value` (at `base` in the file) ends, or the
    /// error it stops at.
    fn both(value: &[u8], base: u64, ty: ValueType) -> (Result<usize>, Result<usize>) {
        let (mut a, mut b) = (Reader::new(value, base), Reader::new(value, base));
        let skipped = walk(&mut a, ty, &mut Skip).map(|()| a.pos());
        let read = walk(&mut b, ty, &mut ReadAll).map(|()| b.pos());
        (skipped, read)
    }

    /// On every plain collection of every fixture, whole, cut short (at
    /// every byte of its first and last 128, and at 64 places between) and
    /// with bytes of its first 16 replaced by each kind of length byte:
    /// stepping over the elements ends, or fails with the same error, where
    /// reading them does.
    #[test]
    fn stepping_over_elements_ends_and_fails_where_reading_them_does() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb");
        let mut files = Vec::new();
        for server in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(server.path()).into_iter().flatten().flatten() {
                if f.path().extension().is_some_and(|e| e == "rdb") {
                    files.push(f.path());
                }
            }
        }
        assert!(files.len() >= 40, "the shipped fixtures");
        let mut values = 0;
        for path in files {
            let data = std::fs::read(&path).unwrap_or_default();
            let Ok(rdb) = Rdb::new(&data) else { continue };
            for entry in rdb.entries().flatten() {
                let ty = entry.value_type;
                if !matches!(
                    ty,
                    ValueType::List | ValueType::Set | ValueType::ZSet2 | ValueType::Hash
                ) {
                    continue;
                }
                values += 1;
                let (value, base) = (entry.value, entry.value_offset);
                let len = value.len();
                assert_eq!(both(value, base, ty), (Ok(len), Ok(len)), "{}", path.display());
                let cuts = (0..len.min(128))
                    .chain(len.saturating_sub(128)..len)
                    .chain((0..64).map(|k| k * len / 64));
                for cut in cuts {
                    let (skipped, read) = both(&value[..cut], base, ty);
                    assert!(read.is_err(), "{} cut at {cut}", path.display());
                    assert_eq!(skipped, read, "{} cut at {cut}", path.display());
                }
                let mut damaged = value.to_vec();
                for i in 0..len.min(16) {
                    for b in [
                        0x00, 0x05, 0x3f, 0x40, 0x7f, 0x80, 0x81, 0xbf, 0xc0, 0xc3, 0xc4, 0xff,
                    ] {
                        let was = std::mem::replace(&mut damaged[i], b);
                        let (skipped, read) = both(&damaged, base, ty);
                        assert_eq!(skipped, read, "{} byte {i} = {b:#04x}", path.display());
                        damaged[i] = was;
                    }
                }
            }
        }
        assert!(values >= 50, "plain collections walked: {values}");
    }
}
