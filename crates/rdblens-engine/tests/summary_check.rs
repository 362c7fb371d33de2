//! Summary files are hostile input: every summary rdblens makes passes
//! [`Summary::check`] (every fixture, damaged and truncated dumps, merges),
//! and the known ways a hand-edited summary used to crash `merge` are
//! refused with the file and the JSON field named.

use std::path::PathBuf;

use rdblens_engine::*;
use rdblens_summary::*;
use serde_json::Value;

fn fixtures() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rdb");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).into_iter().flatten())
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rdb"))
        .collect();
    out.sort();
    assert!(out.len() >= 40);
    out
}

const ALL_TYPES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fixtures/rdb/redis-7.4.5/all-types.rdb"
);

fn analyze(path: &str, opts: &Options) -> Summary {
    let data = std::fs::read(path).unwrap();
    analyze_bytes(&data, path, opts).unwrap()
}

#[test]
fn every_summary_rdblens_makes_passes_the_check() {
    let mut merged: Option<Summary> = None;
    for path in fixtures() {
        let name = path.display().to_string();
        let s = analyze(&name, &Options::default());
        s.check().unwrap_or_else(|e| panic!("{name}: {e}"));
        // Merged one by one, every intermediate summary passes too.
        match &mut merged {
            None => merged = Some(s),
            Some(m) => m.merge(s).unwrap_or_else(|e| panic!("{name}: {e}")),
        }
    }
    assert!(merged.unwrap().files.len() >= 40);
    // The deepest prefix tree, short lists, through the file's JSON.
    let deep = Options {
        top: 3,
        prefix_depth: 4,
        ..Options::default()
    };
    let s = analyze(ALL_TYPES, &deep);
    let text = SummaryFile::new(s.clone()).to_json().unwrap();
    let back = SummaryFile::parse(text.as_bytes(), "deep.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.summary, s);
}

#[test]
fn damaged_and_truncated_dumps_make_valid_summaries() {
    let data = std::fs::read(ALL_TYPES).unwrap();
    let mut damaged = 0;
    for i in 1..40 {
        let cut = data.len() * i / 40;
        // A cut, and a flipped byte (damage inside a value, the walk goes on).
        let mut flipped = data.clone();
        flipped[cut] ^= 0x5a;
        for bytes in [&data[..cut], &flipped[..]] {
            let Ok(s) = analyze_bytes(bytes, "cut.rdb", &Options::default()) else {
                continue;
            };
            damaged += usize::from(s.keys.damaged_keys > 0);
            s.check().unwrap_or_else(|e| panic!("at {cut}: {e}"));
        }
    }
    assert!(damaged > 0, "no summary with damaged keys");
}

/// The summary of all-types as its file's JSON, edited by `edit`, parsed.
fn parse_edited(edit: impl FnOnce(&mut Value)) -> Result<SummaryFile, SummaryError> {
    let s = analyze(ALL_TYPES, &Options::default());
    let mut doc: Value = serde_json::from_str(&SummaryFile::new(s).to_json().unwrap()).unwrap();
    edit(&mut doc);
    SummaryFile::parse(&serde_json::to_vec(&doc).unwrap(), "a.json")
}

fn invalid(message: &str) -> Result<SummaryFile, SummaryError> {
    Err(SummaryError::Invalid(format!(
        "a.json: damaged rdblens summary file: {message}"
    )))
}

#[test]
fn damage_without_records_is_refused() {
    let r = parse_edited(|d| d["summary"]["keys"]["damaged_keys"] = 3.into());
    assert_eq!(
        r,
        invalid("summary.keys.damage: 0 records, damaged_keys 3 (the first 10 are kept)")
    );
}

#[test]
fn slot_lists_of_other_lengths_are_refused() {
    let r = parse_edited(|d| {
        let memory = d["summary"]["keys"]["slots"]["memory"].as_array_mut().unwrap();
        memory.truncate(100);
    });
    let e = r.unwrap_err().to_string();
    assert!(
        e.starts_with(
            "a.json: damaged rdblens summary file: summary.keys.slots: memory: 100 entries, keys has 16384"
        ),
        "{e}"
    );
}

#[test]
fn counts_past_the_bound_are_refused_and_merges_never_wrap() {
    let r = parse_edited(|d| d["summary"]["keys"]["totals"]["keys"] = (u64::MAX - 9).into());
    assert_eq!(
        r,
        invalid("summary.keys.totals.keys: 18446744073709551606 is over the limit of summaries (2^53)")
    );
    let r = parse_edited(|d| {
        d["summary"]["keys"]["prefixes"]["unprefixed"]["keys_with_expiry"] = (1u64 << 52).into()
    });
    assert_eq!(
        r,
        invalid("summary.keys.prefixes.unprefixed.keys_with_expiry: 4503599627370496, more than keys (8)")
    );
    // Two valid summaries whose sum passes the bound: the merge names the field.
    let big = |d: &mut Value| {
        let keys = &mut d["summary"]["keys"];
        let n = (1u64 << 52) + 1;
        keys["compression"]["stored_bytes"] = n.into();
    };
    let a = parse_edited(big).unwrap();
    let b = parse_edited(big).unwrap();
    let e = SummaryFile::merge_all(vec![(a, "a.json".into()), (b, "b.json".into())]).err();
    assert_eq!(
        e,
        Some(SummaryError::Invalid(
            "b.json: cannot merge: the merged summary would not be valid: summary.keys.compression.stored_bytes: 9007199254740994 is over the limit of summaries (2^53)".into()
        ))
    );
}

#[test]
fn summaries_of_other_filters_or_targets_do_not_merge() {
    let a = analyze(ALL_TYPES, &Options::default());
    let mut opts = Options::default();
    opts.filter.prefix = Some(b"user:".to_vec());
    let b = analyze(ALL_TYPES, &opts);
    let e = a.clone().merge(b).unwrap_err();
    assert_eq!(
        e.to_string(),
        "summaries were made with different settings: --prefix (none) vs \"user:\""
    );
    // The shaping options travel in the file, beside the summary.
    let text = SummaryFile::new(analyze(ALL_TYPES, &opts)).to_json().unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["shaping"]["prefix"], serde_json::json!({"key": "user:"}));
    assert!(doc["summary"]["settings"].get("shaping").is_none());
    let back = SummaryFile::parse(text.as_bytes(), "b.json").unwrap();
    let e = SummaryFile::merge_all(vec![
        (SummaryFile::new(a), "a.json".into()),
        (back, "b.json".into()),
    ])
    .unwrap_err();
    assert_eq!(
        e,
        SummaryError::Mismatch(
            "b.json: cannot merge: made with other settings than a.json: --prefix (none) vs \"user:\"".into()
        )
    );
}

#[test]
fn a_used_memory_prediction_whose_parts_do_not_add_up_is_refused() {
    let r = parse_edited(|d| {
        let u = &mut d["summary"]["files"][0]["used_memory"];
        let predicted = u["predicted"].as_u64().unwrap();
        u["predicted"] = (predicted + 1).into();
    });
    let e = r.unwrap_err().to_string();
    assert!(
        e.starts_with("a.json: damaged rdblens summary file: summary.files[0].used_memory.predicted: "),
        "{e}"
    );
    assert!(
        e.contains("but values + keyspace + value_rounding + baseline - usage_overcount is"),
        "{e}"
    );
    let r = parse_edited(|d| d["summary"]["files"][0]["used_memory"]["keyspace"] = (u64::MAX / 2).into());
    assert_eq!(
        r,
        invalid("summary.files[0].used_memory.keyspace: 9223372036854775807 is over the limit of summaries (2^53)")
    );
    // Summaries of versions before it have none: the report leaves it out.
    let r = parse_edited(|d| {
        d["summary"]["files"][0]
            .as_object_mut()
            .unwrap()
            .remove("used_memory");
    });
    assert!(r.unwrap().summary.files[0].used_memory.is_none());
}
