//! Summary files are hostile input: every field of a real summary (walked
//! through its JSON) is set to hostile values (huge, negative, of another
//! type, null, lists shortened or lengthened, fields deleted), and the
//! summary is merged with another and diffed against it, through the
//! library calls `rdblens merge` and `rdblens diff` make (in process: a
//! process per mutation took minutes). Every mutation must end cleanly: refused
//! with an error naming the file, or rendered; never a panic.
//!
//! By default every [`DEFAULT_STRIDE`]-th mutation runs (a fixed, spread
//! subset, well under a minute in a debug build);
//! `RDBLENS_MUTATION_STRIDE=1` runs all of them.

use std::panic::{catch_unwind, AssertUnwindSafe};

use rdblens_report::ReportOptions;
use rdblens_summary::{Options, SummaryError, SummaryFile};
use serde_json::{json, Value};

const DEFAULT_STRIDE: usize = 25;

fn fixture(path: &str) -> String {
    format!("{}/../../fixtures/rdb/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn summary_of(path: &str) -> SummaryFile {
    let data = std::fs::read(fixture(path)).unwrap();
    let opts = Options {
        threads: 1,
        top: 3,
        ..Options::default()
    };
    SummaryFile::new(rdblens_engine::analyze_bytes(&data, path, &opts).unwrap())
}

/// A step into a JSON document.
#[derive(Clone, Debug)]
enum Step {
    Field(String),
    Index(usize),
}

fn at<'v>(doc: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    path.iter().try_fold(doc, |v, step| match step {
        Step::Field(f) => v.get_mut(f.as_str()),
        Step::Index(i) => v.get_mut(*i),
    })
}

fn show(path: &[Step]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Step::Field(f) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(f);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Objects whose members are data (names of types, rules, databases...),
/// not fields: each member is like the others, so only the first and the
/// last are walked (every member is still mutated as a whole).
const MAPS: [&str; 13] = [
    "databases",
    "value_sizes",
    "types",
    "encodings",
    "rdb_types",
    "elements",
    "groups",
    "per_type",
    "problems",
    "details",
    "aux",
    "buckets",
    "summary.keys.rules.rules",
];

fn is_map(path: &[Step]) -> bool {
    let shown = show(path);
    MAPS.iter()
        .any(|m| shown == *m || shown.ends_with(&format!(".{m}")))
}

/// Every node's path: every member of an object (the first and last of a
/// map's), the first and last element of every list (the others are alike).
fn paths(v: &Value, here: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        Value::Object(m) => {
            let map = is_map(here);
            let n = m.len();
            for (i, (k, child)) in m.iter().enumerate() {
                here.push(Step::Field(k.clone()));
                out.push(here.clone());
                if !map || i == 0 || i + 1 == n {
                    paths(child, here, out);
                }
                here.pop();
            }
        }
        Value::Array(a) => {
            let mut indexes = vec![0, a.len().saturating_sub(1)];
            indexes.dedup();
            for i in indexes.into_iter().filter(|&i| i < a.len()) {
                here.push(Step::Index(i));
                out.push(here.clone());
                paths(&a[i], here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

/// How a node is made hostile.
#[derive(Clone, Debug)]
enum Mutation {
    Set(Value),
    Delete,
    Shorten,
    Lengthen,
    Empty,
}

fn mutations(v: &Value) -> Vec<Mutation> {
    let set = |v: Value| Mutation::Set(v);
    let mut out: Vec<Mutation> = match v {
        Value::Number(_) => [
            json!((1u64 << 53) + 1),
            json!(1u64 << 63),
            json!(u64::MAX),
            json!(-1),
            json!(i64::MIN),
            json!(0.5),
            json!(0),
            json!("x"),
            json!(true),
            json!({}),
        ]
        .into_iter()
        .map(set)
        .collect(),
        Value::String(s) => vec![set(json!("")), set(json!(format!("{s}{s}"))), set(json!(5))],
        Value::Bool(b) => vec![set(json!(!b)), set(json!("x"))],
        Value::Array(a) if !a.is_empty() => vec![
            Mutation::Shorten,
            Mutation::Lengthen,
            Mutation::Empty,
            set(json!("x")),
        ],
        Value::Array(_) => vec![set(json!([0])), set(json!("x"))],
        Value::Object(_) => vec![set(json!({})), set(json!([])), set(json!("x"))],
        Value::Null => vec![set(json!(u64::MAX)), set(json!("x")), set(json!({}))],
    };
    if !v.is_null() {
        out.push(set(Value::Null));
    }
    out.push(Mutation::Delete);
    out
}

/// What undoes a mutation.
enum Undo {
    Put(Value),
    Reinsert(String, Value),
    ReinsertAt(usize, Value),
    Push(Value),
    Pop,
}

/// Applies `m` at `path`; what undoes it, or `None` if it does not apply.
fn apply(doc: &mut Value, path: &[Step], m: &Mutation) -> Option<Undo> {
    let (last, parent) = path.split_last()?;
    let parent = at(doc, parent)?;
    if let Mutation::Delete = m {
        return match (last, parent) {
            (Step::Field(f), Value::Object(o)) => o.remove(f).map(|v| Undo::Reinsert(f.clone(), v)),
            (Step::Index(i), Value::Array(a)) if *i < a.len() => Some(Undo::ReinsertAt(*i, a.remove(*i))),
            _ => None,
        };
    }
    let node = match last {
        Step::Field(f) => parent.get_mut(f.as_str()),
        Step::Index(i) => parent.get_mut(*i),
    }?;
    Some(match (m, node) {
        (Mutation::Set(v), node) => Undo::Put(std::mem::replace(node, v.clone())),
        (Mutation::Shorten, Value::Array(a)) => Undo::Push(a.pop()?),
        (Mutation::Lengthen, Value::Array(a)) => {
            a.push(a.last().cloned()?);
            Undo::Pop
        }
        (Mutation::Empty, node @ Value::Array(_)) => Undo::Put(std::mem::replace(node, json!([]))),
        _ => return None,
    })
}

fn undo(doc: &mut Value, path: &[Step], u: Undo) {
    let (last, parent) = path.split_last().unwrap();
    let parent = at(doc, parent).unwrap();
    match u {
        Undo::Reinsert(f, v) => {
            parent.as_object_mut().unwrap().insert(f, v);
        }
        Undo::ReinsertAt(i, v) => parent.as_array_mut().unwrap().insert(i, v),
        u => {
            let node = match last {
                Step::Field(f) => parent.get_mut(f.as_str()),
                Step::Index(i) => parent.get_mut(*i),
            }
            .unwrap();
            match u {
                Undo::Put(v) => *node = v,
                Undo::Push(v) => node.as_array_mut().unwrap().push(v),
                Undo::Pop => {
                    node.as_array_mut().unwrap().pop();
                }
                _ => unreachable!(),
            }
        }
    }
}

/// The namespace sketch (a million base64 characters) stands in the
/// document as this marker and is put back into the text: serializing it
/// for every mutation took most of the time.
const SKETCH_MARK: &str = "@@sketch@@";

fn sketch_path() -> Vec<Step> {
    ["summary", "keys", "expiry", "namespaces"]
        .iter()
        .map(|f| Step::Field(f.to_string()))
        .collect()
}

/// The document's text with the sketch (`quoted`, its JSON) in place of
/// its marker, if the marker is still there.
fn text_of(doc: &Value, quoted: &[u8]) -> Vec<u8> {
    let text = serde_json::to_vec(doc).unwrap();
    let mark = format!("\"{SKETCH_MARK}\"");
    match text.windows(mark.len()).position(|w| w == mark.as_bytes()) {
        Some(i) => [&text[..i], quoted, &text[i + mark.len()..]].concat(),
        None => text,
    }
}

/// What `rdblens merge` and `rdblens diff` do with a summary that passed
/// the reader: merge with `other` and render every format (or write the
/// merged summary), audit; diff both ways in every format.
fn merge_and_diff(file: SummaryFile, other: &SummaryFile) -> Result<(), SummaryError> {
    let opts = ReportOptions {
        top: 3,
        ..ReportOptions::default()
    };
    let diffed = file.summary.clone();
    let merged = SummaryFile::merge_all(vec![(file, "a.json".into()), (other.clone(), "b.json".into())]);
    if let Ok(m) = &merged {
        let s = &m.summary;
        let _ = rdblens_report::to_table(s, &opts);
        let _ = rdblens_report::to_json(s, &opts);
        let _ = rdblens_html::report(s, &opts);
        let _ = rdblens_audit::audit(s);
        let _ = m.to_json();
    }
    for (old, new) in [(&diffed, &other.summary), (&other.summary, &diffed)] {
        let _ = rdblens_report::diff::to_table(old, new, &opts);
        let _ = rdblens_report::diff::to_json(old, new, &opts);
        let _ = rdblens_html::diff(old, new, &opts);
    }
    merged.map(|_| ())
}

#[test]
fn every_field_set_to_hostile_values_ends_cleanly() {
    let stride: usize = std::env::var("RDBLENS_MUTATION_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&s| s > 0)
        .unwrap_or(DEFAULT_STRIDE);
    let base = summary_of("redis-7.4.5/all-types.rdb");
    let other = summary_of("redis-7.4.5/lfu.rdb");
    // The unmutated summary passes and renders.
    let text = base.to_json().unwrap();
    let parsed = SummaryFile::parse(text.as_bytes(), "a.json").unwrap();
    merge_and_diff(parsed, &other).unwrap();

    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let mut all = Vec::new();
    paths(&doc, &mut Vec::new(), &mut all);
    let mut cases: Vec<(Vec<Step>, Mutation)> = Vec::new();
    for path in all {
        let Some(node) = at(&mut doc, &path) else { continue };
        cases.extend(mutations(node).into_iter().map(|m| (path.clone(), m)));
    }
    assert!(cases.len() > 5_000, "{} cases", cases.len());
    let sketch = at(&mut doc, &sketch_path()).unwrap();
    let quoted = serde_json::to_vec(&*sketch).unwrap();
    *sketch = json!(SKETCH_MARK);

    let (mut refused, mut accepted, mut panics) = (0usize, 0usize, Vec::new());
    // The mutations that once crashed `merge` or `diff` run every time.
    let field = |p: &str| {
        p.split('.')
            .map(|f| Step::Field(f.to_string()))
            .collect::<Vec<_>>()
    };
    let known = [
        ("summary.keys.damaged_keys", Mutation::Set(json!(3))),
        ("summary.keys.slots.memory", Mutation::Shorten),
        ("summary.keys.totals.keys", Mutation::Set(json!(u64::MAX - 9))),
        (
            "summary.keys.prefixes.unprefixed.keys_with_expiry",
            Mutation::Set(json!(1u64 << 52)),
        ),
        ("summary.settings.now_ms", Mutation::Set(json!(i64::MIN))),
    ];
    let known: Vec<(Vec<Step>, Mutation)> = known.into_iter().map(|(p, m)| (field(p), m)).collect();
    let spread = cases.iter().skip(cases.len() % stride / 2).step_by(stride);
    for (path, m) in known.iter().chain(spread) {
        let Some(u) = apply(&mut doc, path, m) else {
            continue;
        };
        let bytes = text_of(&doc, &quoted);
        undo(&mut doc, path, u);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            SummaryFile::parse(&bytes, "a.json").and_then(|file| merge_and_diff(file, &other))
        }));
        match outcome {
            Ok(Ok(())) => accepted += 1,
            Ok(Err(e)) => {
                let text = e.to_string();
                assert!(
                    text.starts_with("a.json: ") || text.starts_with("b.json: "),
                    "{}: {m:?}: the error does not name the file: {text}",
                    show(path)
                );
                refused += 1;
            }
            Err(p) => {
                let why = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panics.push(format!("{}: {m:?}: {why}", show(path)));
            }
        }
    }
    eprintln!(
        "{} cases, stride {stride}: {refused} refused, {accepted} accepted, {} panics",
        cases.len(),
        panics.len()
    );
    assert!(
        panics.is_empty(),
        "{} panics:\n{}",
        panics.len(),
        panics.join("\n")
    );
    assert!(
        refused > 100 && accepted > 10,
        "{refused} refused, {accepted} accepted"
    );
}

#[test]
fn a_limit_groups_figure_of_another_type_is_named_by_its_path() {
    let base = summary_of("redis-7.0.15/all-types.rdb");
    let mut doc: Value = serde_json::from_str(&base.to_json().unwrap()).unwrap();
    let group = "hash-max-listpack-entries";
    doc["summary"]["keys"]["limits"]["groups"][group]["counts"]["over_keys"] = json!("x");
    let err = SummaryFile::parse(doc.to_string().as_bytes(), "a.json").unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "a.json: damaged rdblens summary file: summary.keys.limits.groups.{group}.counts.over_keys: \
             invalid type: string \"x\", expected u64 at line 1 column "
        )),
        "{text}"
    );
}
