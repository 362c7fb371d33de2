//! The page is rendered from the typed report and diff models: no part of
//! the crate's source parses JSON back into untyped values or reads a
//! field by its name, so a renamed or removed model field fails to
//! compile here instead of showing 0 or an empty cell.

use std::path::{Path, PathBuf};

/// What untyped JSON access looks like in source.
const UNTYPED: &[&str] = &[
    "serde_json::Value",
    "serde_json::Map",
    "serde_json::json",
    "serde_json::to_value",
    "json!(",
    "Value::",
    ".get(\"",
    ".as_u64()",
    ".as_i64()",
    ".as_f64()",
    ".as_array()",
    ".as_object()",
];

/// The untyped accesses of one line: a pattern of [`UNTYPED`], a field
/// indexed by name (`doc["totals"]`: `["` after a name or a bracket), or
/// the type `Value` named in code (`use serde_json::{json, Value}`).
fn untyped(line: &str) -> Vec<String> {
    let mut found: Vec<String> = UNTYPED
        .iter()
        .filter(|p| line.contains(*p))
        .map(|p| p.to_string())
        .collect();
    let code = !line.trim_start().starts_with("//");
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = line.as_bytes();
    for at in line.match_indices("Value").map(|(at, _)| at) {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + "Value".len()).copied();
        // Inside a string literal (an odd number of quotes before it) it is text.
        let quotes = line[..at].matches('"').count() - line[..at].matches("\\\"").count();
        if code && quotes.is_multiple_of(2) && !before.is_some_and(word) && !after.is_some_and(word) {
            found.push("Value".to_string());
        }
    }
    for at in line.match_indices("[\"").map(|(at, _)| at) {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b')' | b']')) {
            found.push("[\"field\"]".to_string());
        }
    }
    found
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the source directory reads") {
        // ok: test
        let path = entry.expect("a directory entry").path(); // ok: test
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

#[test]
fn the_scan_finds_untyped_access() {
    assert_eq!(
        untyped(r#"let doc: serde_json::Value = serde_json::from_str(&text)?;"#),
        ["serde_json::Value", "Value"]
    );
    assert_eq!(
        untyped(r#"let keys = v.get("keys").and_then(Value::as_u64);"#),
        ["Value::", ".get(\"", "Value"]
    );
    assert_eq!(untyped("use serde_json::{json, Value};"), ["Value"]);
    assert!(untyped("//! Value sizes per type; ValueSizesJson").is_empty());
    assert!(untyped(r#"w.write_all(b"<h3>Value sizes</h3>")?;"#).is_empty());
    assert_eq!(
        untyped(r#"let t = &d["totals"]["keys"];"#),
        ["[\"field\"]", "[\"field\"]"]
    );
    assert!(untyped(r#"let t = m.totals.keys; let s = r#"["x"]";"#).is_empty());
}

#[test]
fn the_html_crate_reads_the_typed_model_only() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    // Every module of the crate is scanned (lib, page, escape, names, plans,
    // sizes, diff, and the report's six).
    assert!(files.len() >= 13, "{files:?}");
    let mut hits = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a source file reads"); // ok: test
        for (n, line) in text.lines().enumerate() {
            for what in untyped(line) {
                hits.push(format!("{}:{}: {what}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "untyped JSON access in rdblens-html:\n{}",
        hits.join("\n")
    );
}
