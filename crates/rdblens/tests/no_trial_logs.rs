//! Code comments, the README and the docs say what is, not the story of
//! the trials that led there (that is in the commit messages): no
//! "session N" anywhere in them, as `grep -rniE 'session [0-9]' crates docs
//! README.md benches scripts` would find it.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Text files under `dir` (recursively), by extension; build outputs and
/// hidden directories skipped.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "corpus" {
                text_files(&path, out);
            }
        } else if ["rs", "md", "py", "sh", "toml", "json", "txt"]
            .iter()
            .any(|ext| path.extension().is_some_and(|e| e == *ext))
        {
            out.push(path);
        }
    }
}

/// `(line number, line)` of each line holding "session", a space and a
/// digit, in any case.
fn trial_references(text: &str) -> Vec<(usize, &str)> {
    let word = "session ";
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let lower = line.to_ascii_lowercase();
            lower.match_indices(word).any(|(at, _)| {
                lower
                    .as_bytes()
                    .get(at + word.len())
                    .is_some_and(u8::is_ascii_digit)
            })
        })
        .map(|(i, line)| (i + 1, line))
        .collect()
}

#[test]
fn the_matcher_finds_what_grep_finds() {
    let numbered = ["Se", "ssion 21"].concat();
    let line = format!("({numbered})");
    assert_eq!(trial_references(&format!("a\n{line}\nb")), [(2, line.as_str())]);
    assert_eq!(trial_references(&numbered.to_uppercase()).len(), 1);
    assert!(trial_references("sessions 38%, session:page, session id").is_empty());
}

#[test]
fn no_session_numbers_in_code_docs_or_readme() {
    let root = root();
    let mut files = vec![root.join("README.md")];
    for dir in ["crates", "docs", "benches", "scripts"] {
        text_files(&root.join(dir), &mut files);
    }
    assert!(
        files.len() > 100,
        "only {} files found under {}",
        files.len(),
        root.display()
    );
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for (n, line) in trial_references(&text) {
            found.push(format!(
                "{}:{n}: {line}",
                file.strip_prefix(&root).unwrap_or(file).display()
            ));
        }
    }
    assert!(
        found.is_empty(),
        "trial logs in code or docs:\n{}",
        found.join("\n")
    );
}
