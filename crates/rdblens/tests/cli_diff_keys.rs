//! `diff` names the keys that appeared, disappeared, grew or shrank most
//! (by memory), in its JSON, tables and HTML: a deleted 1 MiB key is named,
//! not only counted as one key fewer.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};
use support::{rdblens, RdbBuilder};

const KIB: usize = 1024;

/// Two snapshots of one server: `blob:gone` (1 MiB) deleted, `blob:new`
/// (1 MiB) added, `blob:grow` 10 -> 200 KiB, `blob:shrink` 100 -> 20 KiB,
/// `blob:same` and five small keys unchanged.
fn snapshots(dir: &Path) -> (String, String) {
    let small = |b: RdbBuilder| (1..=5).fold(b, |b, i| b.string(format!("s:{i}").as_bytes(), b"v", None));
    let old = small(RdbBuilder::new())
        .string(b"blob:gone", &vec![b'g'; 1024 * KIB], None)
        .string(b"blob:grow", &vec![b'a'; 10 * KIB], None)
        .string(b"blob:shrink", &vec![b'b'; 100 * KIB], None)
        .string(b"blob:same", &vec![b'c'; 50 * KIB], None)
        .finish();
    let new = small(RdbBuilder::new())
        .string(b"blob:new", &vec![b'n'; 1024 * KIB], None)
        .string(b"blob:grow", &vec![b'a'; 200 * KIB], None)
        .string(b"blob:shrink", &vec![b'b'; 20 * KIB], None)
        .string(b"blob:same", &vec![b'c'; 50 * KIB], None)
        .finish();
    let (o, n) = (dir.join("old.rdb"), dir.join("new.rdb"));
    std::fs::write(&o, old).unwrap();
    std::fs::write(&n, new).unwrap();
    (o.to_str().unwrap().into(), n.to_str().unwrap().into())
}

fn stdout(args: &[&str]) -> String {
    let out = rdblens().args(args).arg("-q").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Each key's memory estimate, as `rdblens keys` gives it.
fn memory(dump: &str) -> BTreeMap<String, u64> {
    stdout(&["keys", dump, "--format", "jsonl"])
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["key"].as_str().unwrap().to_string(),
                v["size_in_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `[change, key, old_memory, new_memory, old_at_most, new_at_most, delta]` rows.
fn changes(doc: &Value) -> Vec<Value> {
    let kc = &doc["key_changes"];
    ["appeared", "disappeared", "grew", "shrank"]
        .iter()
        .flat_map(|kind| kc[kind].as_array().unwrap())
        .map(|c| {
            json!([
                c["change"],
                c["key"],
                c["old_memory"],
                c["new_memory"],
                c["old_at_most"],
                c["new_at_most"],
                c["delta"]
            ])
        })
        .collect()
}

#[test]
fn diff_names_the_keys_added_deleted_grown_and_shrunk() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = snapshots(dir.path());
    let (o, n) = (memory(&old), memory(&new));
    let d = |a: u64, b: u64| b as i64 - a as i64;

    // Every string fits the lists: the absent side is known to be absent.
    let doc: Value = serde_json::from_str(&stdout(&["diff", &old, &new, "--format", "json"])).unwrap();
    assert_eq!(
        changes(&doc),
        [
            json!([
                "appeared",
                "blob:new",
                null,
                n["blob:new"],
                null,
                null,
                n["blob:new"]
            ]),
            json!([
                "disappeared",
                "blob:gone",
                o["blob:gone"],
                null,
                null,
                null,
                -(o["blob:gone"] as i64)
            ]),
            json!([
                "grew",
                "blob:grow",
                o["blob:grow"],
                n["blob:grow"],
                null,
                null,
                d(o["blob:grow"], n["blob:grow"])
            ]),
            json!([
                "shrank",
                "blob:shrink",
                o["blob:shrink"],
                n["blob:shrink"],
                null,
                null,
                d(o["blob:shrink"], n["blob:shrink"])
            ]),
        ]
    );
    assert!(o["blob:gone"] > 1024 * 1024);

    // Lists of three: a key off one side's full list was at most its smallest.
    let doc: Value =
        serde_json::from_str(&stdout(&["diff", &old, &new, "--format", "json", "--top", "3"])).unwrap();
    let (old_min, new_min) = (o["blob:same"], n["blob:same"]);
    assert_eq!(
        changes(&doc),
        [
            json!([
                "appeared",
                "blob:new",
                null,
                n["blob:new"],
                old_min,
                null,
                n["blob:new"]
            ]),
            json!([
                "appeared",
                "blob:grow",
                null,
                n["blob:grow"],
                old_min,
                null,
                n["blob:grow"]
            ]),
            json!([
                "disappeared",
                "blob:gone",
                o["blob:gone"],
                null,
                null,
                new_min,
                -(o["blob:gone"] as i64)
            ]),
            json!([
                "disappeared",
                "blob:shrink",
                o["blob:shrink"],
                null,
                null,
                new_min,
                -(o["blob:shrink"] as i64)
            ]),
        ]
    );

    let text = stdout(&["diff", &old, &new]);
    let section: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("== Keys that appeared, disappeared, grew or shrank most (memory) =="))
        .take_while(|l| !l.starts_with("== New expiry clusters"))
        .filter(|l| l.starts_with("| "))
        .map(|l| l.split('|').nth(3).unwrap().trim())
        .collect();
    assert_eq!(
        section,
        [
            "key",
            "\"blob:new\"",
            "\"blob:gone\"",
            "\"blob:grow\"",
            "\"blob:shrink\""
        ]
    );
    assert!(
        text.contains("| disappeared |  0 | \"blob:gone\"   | string |"),
        "{text}"
    );

    let page = stdout(&["diff", &old, &new, "--format", "html"]);
    let table = &page[page
        .find("id=\"key-changes-table\"")
        .expect("the key changes table")..];
    let table = &table[..table.find("</table>").unwrap()];
    for key in ["blob:new", "blob:gone", "blob:grow", "blob:shrink"] {
        assert!(
            table.contains(&format!("&quot;{key}&quot;")),
            "{key} in the HTML table"
        );
    }
    assert!(table.contains(">absent<"));
}
