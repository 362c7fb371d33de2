//! Streams with consumer groups of the shapes the all-types fixtures lack
//! (fixtures/streams/README.md): every key byte-exact against `MEMORY
//! USAGE` of the server that loaded the file, with the profile its AUX
//! fields name. Redis 8.4 counts groups by allocation (`s->alloc_size`),
//! Valkey 7.2 with the older rough rax formula: both rules are on trial.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rdblens_memory::{estimate, Profile};
use rdblens_parser::{Rdb, Scratch};

fn folder(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/streams")
        .join(name)
}

/// key -> `MEMORY USAGE`.
fn oracle(name: &str) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(folder(name).join("groups.oracle.jsonl")).expect("oracle");
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("oracle line is JSON");
            (
                v["key"].as_str().expect("key").to_string(),
                v["memory_usage"].as_u64().expect("memory_usage"),
            )
        })
        .collect()
}

/// key -> estimate, with the profile the file's AUX fields name (both
/// servers use the bundled jemalloc: quantum 8).
fn estimates(name: &str) -> (String, BTreeMap<String, u64>) {
    let data = std::fs::read(folder(name).join("groups.rdb")).expect("dump");
    let rdb = Rdb::new(&data).expect("parses");
    let meta = rdb.metadata().expect("metadata");
    let aux = |field: &str| {
        meta.aux_value(field)
            .and_then(|v| v.to_vec().ok())
            .map(|v| String::from_utf8_lossy(&v).into_owned())
    };
    let (redis_ver, valkey_ver) = (aux("redis-ver"), aux("valkey-ver"));
    let profile = Profile::from_aux(
        redis_ver.as_deref(),
        valkey_ver.as_deref(),
        rdb.version(),
        rdb.dialect(),
    );
    let mut scratch = Scratch::new();
    let mut out = BTreeMap::new();
    for entry in rdb.entries() {
        let entry = entry.expect("entry");
        let key = String::from_utf8(entry.key_bytes().expect("key").into_owned()).expect("utf-8 key");
        let e = estimate(&entry, &profile, &mut scratch).expect("estimate");
        out.insert(key, e.memory.expect("streams are estimated"));
    }
    (profile.name(), out)
}

#[test]
fn consumer_groups_are_exact_on_redis_8_4_and_valkey_7_2() {
    for (name, profile) in [("redis-8.4.0", "redis-8.4.0"), ("valkey-7.2.7", "valkey-7.2.7")] {
        let expected = oracle(name);
        let (writer, got) = estimates(name);
        assert_eq!(writer, profile);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            ["sg:acked", "sg:consumers", "sg:idle", "sg:sametime", "sg:shared"],
            "{name}"
        );
        assert_eq!(got, expected, "{name}: estimates vs MEMORY USAGE");
    }
}
