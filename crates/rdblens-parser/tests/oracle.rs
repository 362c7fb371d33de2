//! Every shipped fixture against its oracle: keys per db, type, element
//! count, expiry, idle/freq, field TTLs, stream metadata, serialized size,
//! the content digest of every value, and the file metadata.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use rdblens_parser::*;
use serde_json::Value;
use sha2::{Digest, Sha256};

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// Collects a value's content in the oracle's canonical digest form, and
/// the flat element count of every blob for the header-count check.
#[derive(Default)]
struct Content {
    /// Blob elements per hash field: 2, or 3 for listpack-ex triples; 1 for zipmaps.
    per_field: u64,
    string: Vec<u8>,
    members: Vec<Vec<u8>>,
    scored: Vec<(Vec<u8>, f64)>,
    fields: Vec<(Vec<u8>, Vec<u8>, Option<i64>)>,
    entries: Vec<(StreamId, Pairs)>,
    nodes: Vec<(NodeInfo, u64)>,
}

impl Content {
    fn bump(&mut self, n: u64) {
        if let Some((_, count)) = self.nodes.last_mut() {
            *count += n;
        }
    }
}

impl ValueVisitor for Content {
    fn string(&mut self, value: RdbString<'_>) {
        self.string = value.to_vec().unwrap();
    }
    fn node(&mut self, node: &NodeInfo) {
        self.nodes.push((*node, 0));
    }
    fn member(&mut self, member: Element<'_>) {
        self.members.push(member.to_vec());
        self.bump(1);
    }
    fn scored(&mut self, member: Element<'_>, score: f64) {
        self.scored.push((member.to_vec(), score));
        self.bump(2);
    }
    fn field(&mut self, field: Element<'_>, value: Element<'_>, expire_ms: Option<i64>) {
        self.fields.push((field.to_vec(), value.to_vec(), expire_ms));
        self.bump(self.per_field);
    }
    fn stream_entry(&mut self, id: StreamId, pairs: &[(Element<'_>, Element<'_>)]) {
        self.entries
            .push((id, pairs.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()));
    }
}

fn ns(out: &mut Sha256, b: &[u8]) {
    out.update(b.len().to_string().as_bytes());
    out.update(b":");
    out.update(b);
    out.update(b",");
}

fn digest(kind: TypeKind, c: &Content) -> String {
    let mut h = Sha256::new();
    match kind {
        TypeKind::String => h.update(&c.string),
        TypeKind::List => c.members.iter().for_each(|m| ns(&mut h, m)),
        TypeKind::Set => {
            let mut m = c.members.clone();
            m.sort();
            m.iter().for_each(|m| ns(&mut h, m));
        }
        TypeKind::ZSet => {
            let mut s = c.scored.clone();
            s.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
            for (m, score) in s {
                ns(&mut h, &m);
                h.update(score.to_be_bytes());
            }
        }
        TypeKind::Hash => {
            let mut f = c.fields.clone();
            f.sort();
            for (k, v, _) in f {
                ns(&mut h, &k);
                ns(&mut h, &v);
            }
        }
        TypeKind::Stream => {
            for (id, pairs) in &c.entries {
                ns(&mut h, id.to_string().as_bytes());
                ns(&mut h, pairs.len().to_string().as_bytes());
                for (f, v) in pairs {
                    ns(&mut h, f);
                    ns(&mut h, v);
                }
            }
        }
        _ => return String::new(),
    }
    hex::encode(h.finalize())
}

fn parse_id(s: &str) -> StreamId {
    let (ms, seq) = s.split_once('-').unwrap();
    StreamId {
        ms: ms.parse().unwrap(),
        seq: seq.parse().unwrap(),
    }
}

/// The oracle's `type` for an entry: TYPE, or the module's type name.
fn type_name(e: &Entry<'_>) -> String {
    match e.module_id() {
        Some(id) => id.name(),
        None => e.kind().name().to_string(),
    }
}

fn check_stream(ctx: &str, e: &Entry<'_>, o: &Value, content: &Content) {
    let s = e.stream().unwrap().unwrap();
    let os = &o["stream"];
    assert_eq!(s.length, os["length"].as_u64().unwrap(), "{ctx}: length");
    assert_eq!(
        s.length as usize,
        content.entries.len(),
        "{ctx}: live entries walked"
    );
    assert_eq!(
        s.last_id,
        parse_id(os["last-generated-id"].as_str().unwrap()),
        "{ctx}"
    );
    assert_eq!(
        s.node_count,
        o["rdb_stream_listpacks"].as_u64().unwrap(),
        "{ctx}: nodes"
    );
    if let Some(first) = content.entries.first() {
        assert_eq!(first.0, parse_id(os["first-entry-id"].as_str().unwrap()), "{ctx}");
    }
    if let Some(added) = os.get("entries-added") {
        assert_eq!(s.entries_added, added.as_u64(), "{ctx}: entries-added");
        let max_del = parse_id(os["max-deleted-entry-id"].as_str().unwrap());
        assert_eq!(s.max_deleted_id, Some(max_del), "{ctx}");
    }
    assert_eq!(
        s.groups.len() as u64,
        os["groups"].as_u64().unwrap(),
        "{ctx}: groups"
    );
    let empty = Vec::new();
    let ogroups = os["group_list"].as_array().unwrap_or(&empty);
    for og in ogroups {
        let name = og["name"].as_str().unwrap().as_bytes();
        let g = s
            .groups
            .iter()
            .find(|g| g.name.to_vec().unwrap() == name)
            .unwrap_or_else(|| panic!("{ctx}: group missing"));
        assert_eq!(g.pending.len() as u64, og["pending"].as_u64().unwrap(), "{ctx}");
        assert_eq!(
            g.consumers.len() as u64,
            og["consumers"].as_u64().unwrap(),
            "{ctx}"
        );
        assert_eq!(
            g.last_delivered,
            parse_id(og["last-delivered-id"].as_str().unwrap()),
            "{ctx}"
        );
        if let Some(read) = og.get("entries-read").and_then(|v| v.as_u64()) {
            assert_eq!(g.entries_read, Some(read), "{ctx}: entries-read");
        }
        for oc in og["consumer_list"].as_array().unwrap_or(&empty) {
            let c = g
                .consumers
                .iter()
                .find(|c| c.name.to_vec().unwrap() == oc["name"].as_str().unwrap().as_bytes())
                .unwrap();
            assert_eq!(c.pending.len() as u64, oc["pending"].as_u64().unwrap(), "{ctx}");
        }
        for (pe, ope) in g.pending.iter().zip(og["pel"].as_array().unwrap_or(&empty)) {
            assert_eq!(pe.id, parse_id(ope["id"].as_str().unwrap()), "{ctx}");
            assert_eq!(
                pe.delivery_count,
                ope["delivery_count"].as_u64().unwrap(),
                "{ctx}"
            );
            if let Some(t) = ope.get("delivery_time_ms").and_then(|v| v.as_i64()) {
                assert_eq!(pe.delivery_time_ms, t, "{ctx}");
            }
        }
    }
}

fn check_entry(ctx: &str, e: &Entry<'_>, o: &Value) {
    assert_eq!(type_name(e), o["type"].as_str().unwrap(), "{ctx}: type");
    assert_eq!(
        u64::from(e.value_type.byte()),
        o["rdb_type"].as_u64().unwrap(),
        "{ctx}"
    );
    assert_eq!(e.value_type.name(), o["rdb_type_name"].as_str().unwrap(), "{ctx}");
    assert_eq!(
        e.value.len() as u64,
        o["rdb_value_bytes"].as_u64().unwrap(),
        "{ctx}: value bytes"
    );
    assert_eq!(
        e.expiry.map(|x| x.unix_ms),
        o["expire_ms"].as_i64(),
        "{ctx}: expiry"
    );
    if let Some(idle) = o.get("rdb_idle_s") {
        assert_eq!(e.idle_seconds, idle.as_u64(), "{ctx}: idle");
    }
    if let Some(freq) = o.get("rdb_freq") {
        assert_eq!(e.lfu_freq.map(u64::from), freq.as_u64(), "{ctx}: freq");
    }
    let stats = e.stats().unwrap_or_else(|err| panic!("{ctx}: {err}"));
    let mut content = Content {
        per_field: match e.value_type {
            ValueType::HashListpackEx | ValueType::HashListpackExPreGa => 3,
            ValueType::HashZipmap => 1,
            _ => 2,
        },
        ..Content::default()
    };
    e.visit(&mut content).unwrap_or_else(|err| panic!("{ctx}: {err}"));
    for (node, walked) in &content.nodes {
        if let (Some(header), false) = (node.header_count, e.kind() == TypeKind::Stream) {
            assert_eq!(header, *walked, "{ctx}: blob header count vs walk");
        }
    }
    if let Some(module) = o.get("rdb_module") {
        let id = e.module_id().unwrap();
        assert_eq!(id.name(), module["name"].as_str().unwrap(), "{ctx}");
        assert_eq!(
            u64::from(id.encver()),
            module["encver"].as_u64().unwrap(),
            "{ctx}"
        );
        return;
    }
    assert_eq!(Some(stats.elements), o["count"].as_u64(), "{ctx}: element count");
    if let Some(expected) = o["digest"].as_str() {
        assert_eq!(digest(e.kind(), &content), expected, "{ctx}: content digest");
    }
    if let Some(ttls) = o.get("field_ttls").and_then(|t| t.as_object()) {
        let got: BTreeMap<String, i64> = content
            .fields
            .iter()
            .filter_map(|(f, _, t)| {
                let name = match std::str::from_utf8(f) {
                    Ok(s) => s.to_string(),
                    Err(_) => format!("hex:{}", hex::encode(f)),
                };
                t.map(|t| (name, t))
            })
            .collect();
        let want: BTreeMap<String, i64> = ttls
            .iter()
            .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
            .collect();
        assert_eq!(got, want, "{ctx}: field TTLs");
        assert_eq!(stats.fields_with_expiry as usize, want.len(), "{ctx}");
    }
    if e.kind() == TypeKind::Stream {
        check_stream(ctx, e, o, &content);
    }
}

fn check_metadata(ctx: &str, rdb: &Rdb<'_>, meta: &Value) {
    let m = rdb.metadata().unwrap();
    assert_eq!(
        rdb.version() as u64,
        meta["rdb_version"].as_u64().unwrap(),
        "{ctx}"
    );
    let aux: BTreeMap<String, String> = m
        .aux
        .iter()
        .map(|(k, v)| {
            (
                String::from_utf8(k.to_vec().unwrap()).unwrap(),
                String::from_utf8(v.to_vec().unwrap()).unwrap(),
            )
        })
        .collect();
    let want: BTreeMap<String, String> = meta["rdb_aux"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    assert_eq!(aux, want, "{ctx}: aux fields");
    let eof = m.eof.unwrap();
    match rdb.checksum_status(&eof) {
        ChecksumStatus::Valid(crc) => {
            assert_eq!(
                hex::encode(crc.to_le_bytes()),
                meta["rdb_checksum"].as_str().unwrap(),
                "{ctx}"
            )
        }
        other => panic!("{ctx}: checksum {other:?}"),
    }
    assert!(eof.trailing.is_empty(), "{ctx}: bytes after the checksum");
    let resize: BTreeMap<String, (u64, u64)> = m
        .databases
        .iter()
        .filter_map(|d| d.resize_hint.map(|h| (d.db.to_string(), h)))
        .collect();
    if let Some(want) = meta["rdb_resizedb"].as_object() {
        let want: BTreeMap<String, (u64, u64)> = want
            .iter()
            .map(|(k, v)| (k.clone(), (v[0].as_u64().unwrap(), v[1].as_u64().unwrap())))
            .collect();
        assert_eq!(resize, want, "{ctx}: RESIZEDB");
    }
    for d in &m.databases {
        let db = d.db.to_string();
        assert_eq!(
            Some(d.keys),
            meta["keys_per_db"][&db].as_u64(),
            "{ctx}: keys in db {db}"
        );
        assert_eq!(
            d.expires,
            meta["expires_per_db"][&db].as_u64().unwrap_or(0),
            "{ctx}"
        );
    }
    let want_aux = meta["rdb_module_aux"].as_array().map_or(0, |a| a.len());
    assert_eq!(m.module_aux.len(), want_aux, "{ctx}: module aux records");
    for (got, want) in m
        .module_aux
        .iter()
        .zip(meta["rdb_module_aux"].as_array().into_iter().flatten())
    {
        assert_eq!(got.module.name(), want["name"].as_str().unwrap(), "{ctx}");
        assert_eq!(got.when, want["uints"][0].as_u64().unwrap(), "{ctx}");
    }
    let want_fn = meta["functions"].as_array().map_or(0, |a| a.len());
    assert_eq!(m.functions.len(), want_fn, "{ctx}: function libraries");
    let got: BTreeSet<String> = m
        .functions
        .iter()
        .map(|src| hex::encode(Sha256::digest(src.to_vec().unwrap())))
        .collect();
    let want: BTreeSet<String> = meta["functions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| f["library_code_sha256"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, want, "{ctx}: function library sources");
}

#[test]
fn every_fixture_matches_its_oracle() {
    let mut checked_keys = 0;
    for path in fixture_files() {
        let ctx = name(&path);
        let file = RdbFile::open(&path).unwrap();
        let rdb = file.rdb().unwrap_or_else(|e| panic!("{ctx}: {e}"));
        let oracle = oracle(&path);
        let mut by_key: BTreeMap<(u64, Vec<u8>), &Value> = BTreeMap::new();
        for o in &oracle {
            by_key.insert((o["db"].as_u64().unwrap(), oracle_key(o)), o);
        }
        let mut seen = BTreeSet::new();
        for entry in rdb.entries() {
            let e = entry.unwrap_or_else(|err| panic!("{ctx}: {err}"));
            let key = e.key_bytes().unwrap().into_owned();
            let o = by_key.get(&(e.db, key.clone())).unwrap_or_else(|| {
                panic!(
                    "{ctx}: key {:?} in db {} not in the oracle",
                    escape_bytes(&key),
                    e.db
                )
            });
            let kctx = format!("{ctx} db{} {}", e.db, escape_bytes(&key));
            check_entry(&kctx, &e, o);
            assert!(seen.insert((e.db, key)), "{kctx}: duplicate key");
            checked_keys += 1;
        }
        assert_eq!(
            seen.len(),
            by_key.len(),
            "{ctx}: oracle keys missing from the parse"
        );
        check_metadata(&ctx, &rdb, &meta(&path));
    }
    assert!(checked_keys > 5000, "only {checked_keys} keys checked");
}
