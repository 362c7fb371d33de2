//! How the workspace's code imports itself, read from the sources.
//!
//! Between crates: the crates that read summaries (audit, advice, report,
//! HTML) depend on the contract (`rdblens-summary`) and never on the engine
//! (`rdblens-engine`), and the contract depends on neither the engine nor
//! any crate above it.
//!
//! Within each crate: no import circle of more than two files (a module
//! and its child may use each other), and in `rdblens-report` the model is
//! built once and the renderers read it; no renderer imports another.
//! Module edges are every `crate::`, `super::`, `self::` path and every
//! path through a child module a file declares (test modules at the end of
//! a file are left out: they may use their parent).

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
                                                                // Comments (doc links among them) are not imports.
            let code: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap_or_default()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| format!("{l}\n"))
                .collect();
            let module = module_name(path.strip_prefix(root).unwrap()); // ok: test
                                                                        // Test modules in their own files (`mod tests;` under
                                                                        // `#[cfg(test)]`) may use their parent and its siblings.
            if !module.ends_with("::tests") {
                out.push((module, code));
            }
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The module `path` (segments after `start`) lands in: its longest prefix
/// that is a module, or, where the next segment is a name that module
/// re-exports (`pub use error::Error;` in `lib.rs`), the module the name
/// comes from.
fn resolve(start: &str, path: &str, modules: &BTreeSet<String>, reexports: &Reexports) -> String {
    let mut at = start.to_string();
    let mut best = at.clone();
    for seg in path.split("::").filter(|s| !s.is_empty()) {
        if let Some(from) = reexports.get(&(best.clone(), seg.to_string())) {
            return from.clone();
        }
        at = format!("{at}::{seg}");
        if modules.contains(&at) {
            best = at.clone();
        } else {
            break;
        }
    }
    best
}

/// (module, name) -> the module a `pub use` in that module takes the name from.
type Reexports = BTreeMap<(String, String), String>;

/// The paths a `use` tree starting at `text` names, with `{a::B, c}` groups
/// opened: `a::{b::C, d}` gives `a::b::C` and `a::d`. Ends at the first
/// character that is not part of a path or group.
fn use_paths(text: &str) -> Vec<String> {
    let mut head = String::new();
    for (i, c) in text.char_indices() {
        if is_ident(c) || c == ':' {
            head.push(c);
        } else if c == '{' {
            let mut depth = 1;
            let mut end = text.len();
            for (j, d) in text[i + 1..].char_indices() {
                match d {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    end = i + 1 + j;
                    break;
                }
            }
            let inner = &text[i + 1..end];
            let mut items = Vec::new();
            let (mut depth, mut from) = (0, 0);
            for (j, d) in inner.char_indices() {
                match d {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(&inner[from..j]);
                        from = j + 1;
                    }
                    _ => {}
                }
            }
            items.push(&inner[from..]);
            return items
                .into_iter()
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .flat_map(|item| {
                    use_paths(item)
                        .into_iter()
                        .map(|p| format!("{head}{p}"))
                        .collect::<Vec<_>>()
                })
                .collect();
        } else {
            break;
        }
    }
    vec![head]
}

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every crate under `crates/`, by directory name.
fn crate_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(crates_dir())
        .unwrap() // ok: test
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned()) // ok: test
        .filter(|n| n.starts_with("rdblens"))
        .collect();
    names.sort();
    names
}

fn graph(crate_name: &str) -> Graph {
    let src = crates_dir().join(crate_name).join("src");
    let mut files = Vec::new();
    sources(&src, &src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    // Names each module re-exports from a child: `pub use child::{A, b::C};`.
    let mut reexports = Reexports::new();
    for (module, code) in &files {
        for (at, _) in code.match_indices("pub use ") {
            for path in use_paths(&code[at + "pub use ".len()..]) {
                let Some((from, name)) = path.rsplit_once("::") else {
                    continue;
                };
                let from = match from.strip_prefix("crate::") {
                    Some(rest) => resolve("crate", rest, &modules, &Reexports::new()),
                    None => resolve(module, from, &modules, &Reexports::new()),
                };
                if &from != module {
                    reexports.insert((module.clone(), name.to_string()), from);
                }
            }
        }
    }
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
                for path in use_paths(&code[i + prefix.len()..]) {
                    let target = resolve(base, &path, &modules, &reexports);
                    if &target != module {
                        edges.insert(target);
                    }
                }
            }
        }
    }
    graph
}

/// The strongly connected components of `graph` with more than one module
/// (Tarjan's algorithm): each is a set of modules that import each other
/// round a circle.
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, node: &'g str) {
            let i = self.index.len();
            self.index.insert(node, i);
            self.low.insert(node, i);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in self.graph.get(node).into_iter().flatten() {
                let next = next.as_str();
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let l = self.low[next].min(self.low[node]);
                    self.low.insert(node, l);
                } else if self.on_stack.contains(next) {
                    let l = self.index[next].min(self.low[node]);
                    self.low.insert(node, l);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(n) = self.stack.pop() {
                    self.on_stack.remove(n);
                    component.push(n.to_string());
                    if n == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            walk.visit(node);
        }
    }
    walk.found
}

/// A circle of three or more modules inside `component` (a strongly
/// connected component), if any: a module and its child that use each
/// other are a circle of two, allowed; a parent with several such children
/// is one component but no longer circle. Depth-first from each module
/// over the later ones only, so each circle is tried once; the components
/// are small.
fn circle_longer_than_two(graph: &Graph, component: &[String]) -> Option<Vec<String>> {
    fn walk(graph: &Graph, within: &[String], path: &mut Vec<String>) -> Option<Vec<String>> {
        let (start, last) = (path[0].clone(), path[path.len() - 1].clone());
        for next in graph.get(&last).into_iter().flatten() {
            if *next == start && path.len() >= 3 {
                let mut c = path.clone();
                c.push(start.clone());
                return Some(c);
            }
            if next > &start && within.contains(next) && !path.contains(next) {
                path.push(next.clone());
                if let Some(c) = walk(graph, within, path) {
                    return Some(c);
                }
                path.pop();
            }
        }
        None
    }
    component
        .iter()
        .find_map(|start| walk(graph, component, &mut vec![start.clone()]))
}

#[test]
fn no_import_circle_of_more_than_two_files_in_any_crate() {
    let names = crate_names();
    assert!(names.len() >= 9, "crates found: {names:?}");
    let mut wrong = Vec::new();
    for name in &names {
        let g = graph(name);
        for c in circles(&g) {
            if let Some(long) = circle_longer_than_two(&g, &c) {
                wrong.push(format!("{name}: {}", long.join(" -> ")));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "import circles of more than two files:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn use_trees_are_opened() {
    assert_eq!(
        use_paths("a::{b::C, d::{E, F}}, g;"),
        ["a::b::C", "a::d::E", "a::d::F"]
    );
    assert_eq!(use_paths("x::Y;"), ["x::Y"]);
}

#[test]
fn circle_finder_finds_a_circle_of_three() {
    let mut g = Graph::new();
    for (a, b) in [
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("c", "d"),
        ("d", "e"),
        ("e", "d"),
    ] {
        g.entry(a.to_string()).or_default().insert(b.to_string());
    }
    assert_eq!(circles(&g), vec![vec!["d", "e"], vec!["a", "b", "c"]]);
    let abc = ["a", "b", "c"].map(String::from);
    assert_eq!(
        circle_longer_than_two(&g, &abc),
        Some(["a", "b", "c", "a"].map(String::from).to_vec())
    );
    // A parent and two children, each pair using each other: no circle of three.
    let mut star = Graph::new();
    for (a, b) in [("p", "x"), ("x", "p"), ("p", "y"), ("y", "p")] {
        star.entry(a.to_string()).or_default().insert(b.to_string());
    }
    let pxy = ["p", "x", "y"].map(String::from);
    assert_eq!(circles(&star), vec![pxy.to_vec()]);
    assert_eq!(circle_longer_than_two(&star, &pxy), None);
}

/// The `rdblens-*` crates a crate's `[dependencies]` (not dev) name.
fn dependencies(crate_name: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(crates_dir().join(crate_name).join("Cargo.toml")).unwrap(); // ok: test
    let mut deps = BTreeSet::new();
    let mut in_deps = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
        } else if in_deps && line.starts_with("rdblens") {
            let name = line.split(['.', ' ', '=']).next().unwrap_or_default();
            deps.insert(name.to_string());
        }
    }
    deps
}

#[test]
fn readers_of_summaries_depend_on_the_contract_not_the_engine() {
    for reader in [
        "rdblens-audit",
        "rdblens-advice",
        "rdblens-report",
        "rdblens-html",
    ] {
        let deps = dependencies(reader);
        assert!(deps.contains("rdblens-summary"), "{reader}: {deps:?}");
        assert!(!deps.contains("rdblens-engine"), "{reader} depends on the engine");
    }
    let contract = dependencies("rdblens-summary");
    assert_eq!(
        contract,
        BTreeSet::from(["rdblens-memory".to_string(), "rdblens-parser".to_string()]),
        "the contract depends only on the parser and the memory model"
    );
    assert!(dependencies("rdblens-engine").contains("rdblens-summary"));
}

#[test]
fn report_renderers_read_the_model_not_each_other() {
    let graph = graph("rdblens-report");
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
