//! The documents against what they describe: the README's sample report is
//! what its command prints, every documented `cargo install` keeps the
//! committed Cargo.lock (`--locked`), and fixtures/README.md's table of
//! server builds is the one the `meta.json` files in fixtures/rdb/ give,
//! and every crate is named in README.md's layout and in
//! docs/architecture.md, with the dependencies its Cargo.toml declares.
//!
//! `cargo test -p rdblens --test docs -- --ignored write_fixtures_table`
//! rewrites that table from the folders.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use support::{rdblens, root};

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The text after the heading `heading` up to the next heading of any level.
fn section<'t>(text: &'t str, heading: &str) -> &'t str {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no {heading:?}"))
        + heading.len()
        + 2;
    let end = text[start..].find("\n#").map_or(text.len(), |i| start + i);
    &text[start..end]
}

/// The body of the first fenced code block in `text`.
fn first_code_block(text: &str) -> &str {
    let open = text.find("```").expect("a code block");
    let body = open + text[open..].find('\n').unwrap() + 1;
    let close = body + text[body..].find("\n```").expect("the block's end");
    &text[body..close]
}

#[test]
fn readme_sample_report_is_what_its_command_prints() {
    let readme = read("README.md");
    let sample = section(&readme, "## What a report looks like");
    // The command is the section's first inline code: "An excerpt of `rdblens report ...`".
    let command = sample.split('`').nth(1).unwrap();
    let args: Vec<&str> = command
        .strip_prefix("rdblens ")
        .unwrap_or_else(|| panic!("not an rdblens command: {command:?}"))
        .split_whitespace()
        .collect();
    let out = rdblens().args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{command}");
    let printed = String::from_utf8(out.stdout).unwrap();
    let printed: Vec<&str> = printed.lines().collect();
    // Each line of the excerpt, in order; "..." marks lines left out.
    let mut at = 0;
    let mut compared = 0;
    for line in first_code_block(sample).lines() {
        if line.trim() == "..." {
            continue;
        }
        match printed[at..].iter().position(|p| *p == line) {
            Some(i) => at += i + 1,
            None => panic!(
                "README.md's sample line is not in the output of `{command}` (after its line {at}):\n\
                 {line}\nthe output:\n{}",
                printed.join("\n")
            ),
        }
        compared += 1;
    }
    assert!(compared >= 40, "only {compared} lines of the sample compared");
}

/// The commands in a Markdown text: each line of a fenced code block, and
/// each inline code span (its line breaks made spaces).
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, part) in text.split("```").enumerate() {
        if i % 2 == 1 {
            out.extend(part.lines().map(str::to_string));
        } else {
            out.extend(
                part.split('`')
                    .skip(1)
                    .step_by(2)
                    .map(|code| code.split_whitespace().collect::<Vec<_>>().join(" ")),
            );
        }
    }
    out
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

#[test]
fn every_documented_cargo_install_is_locked() {
    let mut files = Vec::new();
    markdown_files(&root(), &mut files);
    assert!(files.len() >= 20, "{} Markdown files", files.len());
    let mut installs = 0;
    let mut unlocked = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for command in commands(&text) {
            // "cargo install" followed by what to install (prose names the
            // command alone).
            let Some(at) = command.find("cargo install ") else {
                continue;
            };
            installs += 1;
            if !command[at..].contains(" --locked") {
                unlocked.push(format!("{}: {command}", file.display()));
            }
        }
    }
    assert!(unlocked.is_empty(), "without --locked:\n{}", unlocked.join("\n"));
    assert!(installs >= 6, "only {installs} cargo install commands found");
}

// ---- the crates: README.md's layout and docs/architecture.md ---------------

/// The directories under crates/, sorted.
fn crate_dirs() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The workspace crates a crate's `[dependencies]` table names, sorted.
fn workspace_dependencies(name: &str) -> Vec<String> {
    let manifest = read(&format!("crates/{name}/Cargo.toml"));
    let table = manifest
        .split("\n[")
        .find(|t| t.starts_with("dependencies]"))
        .unwrap_or_else(|| panic!("crates/{name}/Cargo.toml: no [dependencies]"));
    let mut deps: Vec<String> = table
        .lines()
        .filter(|l| l.starts_with("rdblens"))
        .map(|l| l.split(['.', ' ', '=']).next().unwrap().to_string())
        .collect();
    deps.sort();
    deps
}

#[test]
fn every_crate_is_in_the_readme_layout_and_the_architecture() {
    let crates = crate_dirs();
    assert!(crates.len() >= 8, "crates/: {crates:?}");
    let readme = read("README.md");
    let layout = section(&readme, "## Layout");
    let architecture = read("docs/architecture.md");
    assert!(
        layout.contains("docs/architecture.md"),
        "README.md's layout does not point to docs/architecture.md"
    );
    for name in &crates {
        // In backquotes: `crates/rdblens` is a prefix of every other path.
        let path = format!("`crates/{name}`");
        assert!(layout.contains(&path), "README.md's layout does not name {path}");
        // One paragraph per crate, and its row of the dependency table,
        // which lists what its Cargo.toml depends on.
        assert!(
            architecture.contains(&format!("- **{path}**: ")),
            "docs/architecture.md has no paragraph on {path}"
        );
        let row_start = format!("| {path} | ");
        let row = architecture
            .lines()
            .find(|l| l.starts_with(&row_start))
            .unwrap_or_else(|| panic!("docs/architecture.md's dependency table has no row {path}"));
        let cell = row[row_start.len()..].trim_end_matches(" |");
        let mut listed: Vec<String> = match cell {
            "none" => Vec::new(),
            _ => cell
                .split(", ")
                .map(|d| d.trim_matches('`').to_string())
                .collect(),
        };
        listed.sort();
        assert_eq!(
            listed,
            workspace_dependencies(name),
            "docs/architecture.md's dependencies of {path} are not its Cargo.toml's"
        );
    }
    // The table has no row for a crate that is gone.
    let rows = architecture
        .lines()
        .filter(|l| l.starts_with("| `crates/"))
        .count();
    assert_eq!(rows, crates.len(), "docs/architecture.md's dependency table");
}

// ---- fixtures/README.md's table of server builds ---------------------------

/// The scenarios in the order the table lists them.
const SCENARIOS: [&str; 4] = ["all-types", "lru", "lfu", "empty"];
const TABLE_START: &str = "<!-- server builds: generated from rdb/*/*.meta.json";
const TABLE_END: &str = "<!-- end of the generated server builds -->";

/// The generated part of fixtures/README.md, from the `meta.json` files.
fn fixtures_table() -> String {
    let rdb = root().join("fixtures/rdb");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&rdb)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    let mut families: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut rows = Vec::new();
    for folder in &folders {
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        let mut scenarios = Vec::new();
        let mut first: Option<serde_json::Value> = None;
        for scenario in SCENARIOS {
            let meta = folder.join(format!("{scenario}.meta.json"));
            if !meta.exists() {
                continue;
            }
            assert!(
                folder.join(format!("{scenario}.rdb")).exists(),
                "{}: no {scenario}.rdb",
                folder.display()
            );
            let doc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
            scenarios.push(scenario);
            first.get_or_insert(doc);
        }
        for file in std::fs::read_dir(folder).unwrap() {
            let file = file.unwrap().file_name().to_string_lossy().into_owned();
            if let Some(scenario) = file.strip_suffix(".rdb") {
                assert!(
                    SCENARIOS.contains(&scenario) && scenarios.contains(&scenario),
                    "{}: {file} is not a scenario the table knows, or has no meta.json",
                    folder.display()
                );
            }
        }
        let meta = first.unwrap_or_else(|| panic!("{}: no meta.json", folder.display()));
        let field = |k: &str| {
            meta[k]
                .as_str()
                .map(str::to_string)
                .or_else(|| meta[k].as_u64().map(|n| n.to_string()))
                .unwrap_or_else(|| panic!("{name}: no {k} in meta.json"))
        };
        let (server, version, source) = (field("server"), field("version"), field("source"));
        let built = if source.starts_with("Debian 12 binary package") {
            "Debian 12 package"
        } else {
            "source"
        };
        let label = if built == "source" {
            version.clone()
        } else {
            format!("{version} ({built})")
        };
        families.entry(server.clone()).or_default().push(label);
        rows.push(format!(
            "| {name} | {} {version} | {built} | {} | {} | {} |",
            title(&server),
            field("magic"),
            field("rdb_version"),
            scenarios.join(", ")
        ));
    }
    let names = |family: &str| {
        let versions = &families[family];
        let (last, rest) = versions.split_last().unwrap();
        if rest.is_empty() {
            format!("{} {last}", title(family))
        } else {
            format!("{} {} and {last}", title(family), rest.join(", "))
        }
    };
    assert_eq!(families.len(), 2, "servers: {:?}", families.keys());
    let intro = format!(
        "Real RDB files written by {} server builds: {}, and {}. The layout is \
         `rdb/<server>-<version>/<scenario>.rdb`.",
        folders.len(),
        names("redis"),
        names("valkey"),
    );
    let mut text = format!(
        "{TABLE_START} (`cargo test -p rdblens --test docs -- --ignored write_fixtures_table`) -->\n\
         {}\n\n\
         | folder | server | built from | magic | RDB version | scenarios |\n\
         |---|---|---|---|---|---|\n",
        wrap(&intro, 75)
    );
    for row in rows {
        text.push_str(&row);
        text.push('\n');
    }
    text.push_str(TABLE_END);
    text
}

fn title(server: &str) -> &'static str {
    match server {
        "redis" => "Redis",
        "valkey" => "Valkey",
        other => panic!("unknown server {other:?} in a meta.json"),
    }
}

/// `text` in lines of at most `width` characters, broken between words.
fn wrap(text: &str, width: usize) -> String {
    let mut lines: Vec<String> = vec![String::new()];
    for word in text.split(' ') {
        let line = lines.last_mut().unwrap();
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines.join("\n")
}

/// fixtures/README.md: its text before the generated part, the part, and after.
fn fixtures_readme() -> (String, String, String) {
    let text = read("fixtures/README.md");
    let start = text
        .find(TABLE_START)
        .expect("the generated table's start marker");
    let end = text.find(TABLE_END).expect("the generated table's end marker") + TABLE_END.len();
    (
        text[..start].to_string(),
        text[start..end].to_string(),
        text[end..].to_string(),
    )
}

#[test]
fn fixtures_readme_lists_every_server_build() {
    let (_, listed, _) = fixtures_readme();
    let expected = fixtures_table();
    assert!(
        listed == expected,
        "fixtures/README.md's table of server builds is not the folders' \
         (cargo test -p rdblens --test docs -- --ignored write_fixtures_table):\n{expected}"
    );
    // One row per folder of fixtures/rdb/.
    let folders = std::fs::read_dir(root().join("fixtures/rdb"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count();
    assert_eq!(
        listed
            .lines()
            .filter(|l| l.starts_with("| redis-") || l.starts_with("| valkey-"))
            .count(),
        folders
    );
    assert!(folders >= 16, "{folders} server builds in fixtures/rdb/");
}

#[test]
#[ignore = "writes fixtures/README.md; run by hand after adding a server build"]
fn write_fixtures_table() {
    let (before, _, after) = fixtures_readme();
    std::fs::write(
        root().join("fixtures/README.md"),
        format!("{before}{}{after}", fixtures_table()),
    )
    .unwrap();
}
