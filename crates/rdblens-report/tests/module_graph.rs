//! The crate's modules import each other without a circle: the model is
//! built once and the renderers read it; no renderer imports another, no
//! module imports the crate root (which re-exports them all). Read from the
//! sources: every `crate::`, `super::`, `self::` path and every path through
//! a child module a file declares (test modules at the end of a file are
//! left out: they may use their parent).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// `lib.rs` -> `crate`, `table/mod.rs` -> `crate::table`, `table/keys.rs` -> `crate::table::keys`.
fn module_name(rel: &Path) -> String {
    let mut parts = vec!["crate".to_string()];
    for c in rel.with_extension("").components() {
        let c = c.as_os_str().to_string_lossy().into_owned();
        if c != "lib" && c != "mod" {
            parts.push(c);
        }
    }
    parts.join("::")
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap() // ok: test
        .map(|e| e.unwrap().path()) // ok: test
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap(); // ok: test
            let code = text.split("#[cfg(test)]").next().unwrap_or_default().to_string();
            out.push((module_name(path.strip_prefix(root).unwrap()), code)); // ok: test
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The module `path` (segments after `start`) lands in: its longest prefix
/// that is a module.
fn resolve(start: &str, path: &str, modules: &BTreeSet<String>) -> String {
    let mut at = start.to_string();
    let mut best = at.clone();
    for seg in path.split("::").filter(|s| !s.is_empty()) {
        at = format!("{at}::{seg}");
        if modules.contains(&at) {
            best = at.clone();
        } else {
            break;
        }
    }
    best
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut graph = Graph::new();
    for (module, code) in &files {
        let parent = module.rsplit_once("::").map_or("crate", |(p, _)| p).to_string();
        let edges = graph.entry(module.clone()).or_default();
        let mut starts: Vec<(String, String)> = vec![
            ("crate::".into(), "crate".into()),
            ("super::".into(), parent),
            ("self::".into(), module.clone()),
        ];
        // Children the file declares, reached by relative paths.
        for line in code.lines().map(str::trim) {
            let decl = line.strip_prefix("pub ").unwrap_or(line);
            if let Some(child) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) {
                starts.push((format!("{child}::"), format!("{module}::{child}")));
            }
        }
        for (prefix, base) in &starts {
            for (i, _) in code.match_indices(prefix.as_str()) {
                let before = code[..i].chars().next_back();
                if before.is_some_and(|c| is_ident(c) || c == ':') {
                    continue;
                }
                let rest = &code[i + prefix.len()..];
                let end = rest
                    .find(|c: char| !(is_ident(c) || c == ':'))
                    .unwrap_or(rest.len());
                let target = resolve(base, &rest[..end], &modules);
                if &target != module {
                    edges.insert(target);
                }
            }
        }
    }
    graph
}

/// A circle through `node`, if any (depth-first).
fn circle(
    graph: &Graph,
    node: &str,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(at) = path.iter().position(|n| n == node) {
        let mut c = path[at..].to_vec();
        c.push(node.to_string());
        return Some(c);
    }
    if !done.insert(node.to_string()) {
        return None;
    }
    path.push(node.to_string());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(c) = circle(graph, next, path, done) {
            return Some(c);
        }
    }
    path.pop();
    None
}

#[test]
fn no_import_circle() {
    let graph = graph();
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(c) = circle(&graph, node, &mut Vec::new(), &mut done) {
            panic!("import circle: {}", c.join(" -> "));
        }
    }
}

#[test]
fn renderers_read_the_model_not_each_other() {
    let graph = graph();
    let imports = |m: &str| graph.get(m).cloned().unwrap_or_default();
    assert!(imports("crate::table").contains("crate::model"));
    assert!(imports("crate::json").contains("crate::model"));
    for (module, targets) in &graph {
        for t in targets {
            let from_renderer = ["crate::table", "crate::json", "crate::diff"]
                .iter()
                .find(|r| module == *r || module.starts_with(&format!("{r}::")));
            let into_renderer = ["crate::table", "crate::json"]
                .iter()
                .find(|r| t == *r || t.starts_with(&format!("{r}::")));
            if let (Some(a), Some(b)) = (from_renderer, into_renderer) {
                assert_eq!(a, b, "{module} imports {t}");
            }
            assert!(
                !module.starts_with("crate::model") || !(t.starts_with("crate::table") || t == "crate::json"),
                "the model imports a renderer: {module} -> {t}"
            );
        }
    }
}
