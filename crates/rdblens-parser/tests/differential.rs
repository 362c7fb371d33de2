//! Differential test against the crates.io `rdb` crate (0.4): on every
//! fixture it can read (all `REDIS`-magic files; it refuses `VALKEY080`),
//! both parsers must agree on every key, its type, expiry and every decoded
//! element. The crate silently omits streams and module values, so those are
//! checked against the oracles only (tests/oracle.rs).

mod common;

use std::collections::BTreeMap;
use std::io::BufReader;

use common::*;
use rdb::{filter::Simple, RdbDecoder, RdbValue};
use rdblens_parser::*;

/// A value in a parser-neutral form: element bytes as clients see them.
#[derive(Debug, PartialEq)]
enum Decoded {
    String(Vec<u8>),
    List(Vec<Vec<u8>>),
    /// Sorted, since set order depends on the encoding.
    Set(Vec<Vec<u8>>),
    /// (member, score bits), sorted by member.
    ZSet(Vec<(Vec<u8>, u64)>),
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
}

#[derive(Default)]
struct Collect {
    string: Option<Vec<u8>>,
    members: Vec<Vec<u8>>,
    scored: Vec<(Vec<u8>, u64)>,
    fields: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl ValueVisitor for Collect {
    fn string(&mut self, value: RdbString<'_>) {
        self.string = Some(value.to_vec().unwrap());
    }
    fn member(&mut self, member: Element<'_>) {
        self.members.push(member.to_vec());
    }
    fn scored(&mut self, member: Element<'_>, score: f64) {
        self.scored.push((member.to_vec(), score.to_bits()));
    }
    fn field(&mut self, field: Element<'_>, value: Element<'_>, _expire_ms: Option<i64>) {
        self.fields.insert(field.to_vec(), value.to_vec());
    }
}

fn ours(e: &Entry<'_>) -> Option<Decoded> {
    let mut c = Collect::default();
    e.visit(&mut c).unwrap();
    Some(match e.kind() {
        TypeKind::String => Decoded::String(c.string.unwrap()),
        TypeKind::List => Decoded::List(c.members),
        TypeKind::Set => {
            c.members.sort();
            Decoded::Set(c.members)
        }
        TypeKind::ZSet => {
            c.scored.sort();
            Decoded::ZSet(c.scored)
        }
        TypeKind::Hash => Decoded::Hash(c.fields),
        _ => return None,
    })
}

type Key = (u64, Vec<u8>);

fn theirs(path: &std::path::Path) -> Result<BTreeMap<Key, (Decoded, Option<u64>)>, String> {
    let file = std::fs::File::open(path).unwrap();
    let decoder = RdbDecoder::new(BufReader::new(file), Simple::new()).map_err(|e| e.to_string())?;
    let mut out = BTreeMap::new();
    let mut db = 0u64;
    for item in decoder {
        let (key, value, expiry) = match item.map_err(|e| e.to_string())? {
            RdbValue::SelectDb(d) => {
                db = u64::from(d);
                continue;
            }
            RdbValue::String { key, value, expiry } => (key, Decoded::String(value), expiry),
            RdbValue::List { key, values, expiry } => (key, Decoded::List(values), expiry),
            RdbValue::Set {
                key,
                mut members,
                expiry,
            } => {
                members.sort();
                (key, Decoded::Set(members), expiry)
            }
            RdbValue::SortedSet { key, values, expiry } => {
                let mut v: Vec<_> = values.into_iter().map(|(s, m)| (m, s.to_bits())).collect();
                v.sort();
                (key, Decoded::ZSet(v), expiry)
            }
            RdbValue::Hash { key, values, expiry } => {
                (key, Decoded::Hash(values.into_iter().collect()), expiry)
            }
            _ => continue,
        };
        assert!(out.insert((db, key), (value, expiry)).is_none(), "duplicate key");
    }
    Ok(out)
}

#[test]
fn agrees_with_the_rdb_crate_on_every_key_it_reads() {
    let mut compared = 0;
    let mut files = 0;
    for path in fixture_files() {
        let ctx = name(&path);
        let data = std::fs::read(&path).unwrap();
        let rdb = Rdb::new(&data).unwrap();
        let theirs = match theirs(&path) {
            Ok(t) => t,
            Err(e) => {
                // The crate knows only the REDIS magic; everything else it must read.
                assert_eq!(rdb.dialect(), Dialect::Valkey, "{ctx}: the rdb crate failed: {e}");
                continue;
            }
        };
        files += 1;
        let mut ours_map = BTreeMap::new();
        for entry in rdb.entries() {
            let e = entry.unwrap();
            if let Some(decoded) = ours(&e) {
                let expiry = e.expiry.map(|x| x.unix_ms as u64);
                ours_map.insert((e.db, e.key_bytes().unwrap().into_owned()), (decoded, expiry));
            }
        }
        assert_eq!(
            ours_map.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>(),
            "{ctx}: key sets differ"
        );
        for (key, (value, expiry)) in &theirs {
            let (our_value, our_expiry) = &ours_map[key];
            let kctx = format!("{ctx} db{} {}", key.0, escape_bytes(&key.1));
            assert_eq!(our_expiry, expiry, "{kctx}: expiry");
            assert_eq!(our_value, value, "{kctx}: value");
            compared += 1;
        }
    }
    assert!(files >= 40, "the rdb crate read only {files} fixtures");
    assert!(compared >= 5900, "only {compared} keys compared");
}
