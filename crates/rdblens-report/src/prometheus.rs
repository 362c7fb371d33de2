//! The Prometheus renderer: the report model in the Prometheus text
//! exposition format (version 0.0.4, what node_exporter's textfile
//! collector reads), for a nightly analysis that a monitoring system
//! scrapes and alerts on (docs/monitoring.md).
//!
//! Every family is a gauge (each value describes the snapshot, none counts
//! up over time, so no name ends in `_total`), in base units (`_bytes`,
//! `_seconds`), with `# HELP` and `# TYPE` lines and no sample timestamps
//! (node_exporter refuses them). The number of series does not depend on
//! the key names: namespaces, databases, types and encodings are capped at
//! [`MetricsOptions::key_groups`] rows each (the rest summed in one
//! `overflow` row), big keys at [`MetricsOptions::big_keys`], and label
//! values at [`MAX_LABEL_BYTES`].

use std::collections::HashSet;
use std::fmt::{Display, Write};

use rdblens_summary::acc::counter::Counter;
use rdblens_summary::acc::top::{KeyRecord, SharedRecord};
use rdblens_summary::{Checksum, KeyName};

use crate::diff::DiffJson;
use crate::model::{Group, ReportJson};
pub use crate::options::MetricsOptions;

/// Label values (key names, namespaces, file names) longer than this are
/// cut, with `... (N bytes)` appended: a 1 MB key name is not a label.
pub const MAX_LABEL_BYTES: usize = 200;

/// The group that sums the rows beyond a cap.
pub const OVERFLOW: &str = "overflow";
/// The group of keys whose name has no separator.
pub const NO_NAMESPACE: &str = "no_namespace";

/// The metrics of a report model. Families whose section is not in the
/// model (big keys, key groups, findings, shards, encodings, expiry
/// clusters) are left out.
pub fn render(report: &ReportJson<'_>, opts: &MetricsOptions) -> String {
    let mut out = Exposition::default();
    run(&mut out, report, opts);
    files(&mut out, report);
    totals(&mut out, report);
    groups(&mut out, report, opts);
    key_groups(&mut out, report, opts);
    big_keys(&mut out, report, opts);
    heat(&mut out, report, opts);
    findings(&mut out, report);
    out.text
}

/// The metrics of a diff (`rdblens diff --format prometheus`): both
/// sides' totals, the expiry clusters the new side has and the old had
/// not, and with `--fail-on-growth` how many figures grew past their limit
/// and, for the first [`MetricsOptions::big_keys`] of them, by how much.
pub fn render_diff(diff: &DiffJson<'_>, opts: &MetricsOptions) -> String {
    let mut out = Exposition::default();
    // Not `rdblens_build_info`: the report's file in the same textfile
    // directory has that series, and node_exporter refuses a series two
    // files both write.
    let mut info = Family::new(
        "rdblens_diff_build_info",
        "The rdblens version that wrote the diff's metrics",
    );
    info.sample(&[("version", diff.tool_version)], 1);
    out.push(info);
    let mut time = Family::new(
        "rdblens_diff_timestamp_seconds",
        "Each side's reference time (of its TTLs), unix seconds",
    );
    let mut memory = Family::new(
        "rdblens_diff_memory_bytes",
        "Estimated memory of each side's keys (as MEMORY USAGE sums it)",
    );
    let mut keys = Family::new("rdblens_diff_keys", "Keys of each side");
    for (side, now_ms, totals) in [
        ("old", diff.old.now_ms, &diff.totals.old),
        ("new", diff.new.now_ms, &diff.totals.new),
    ] {
        time.sample(&[("side", side)], Seconds(now_ms));
        memory.sample(&[("side", side)], totals.memory);
        keys.sample(&[("side", side)], totals.keys);
    }
    out.push(time);
    out.push(memory);
    out.push(keys);
    out.single(
        "rdblens_diff_new_expiry_clusters",
        "Expiry clusters of the new side that overlap none of the old side's",
        diff.expiry.new_clusters.len(),
    );
    if let Some(alerts) = &diff.growth_alerts {
        out.single(
            "rdblens_growth_alerts",
            "Figures that grew by more than their --fail-on-growth limit (the diff exits 1 when any did)",
            alerts.len(),
        );
        let mut change = Family::new(
            "rdblens_growth_alert_change",
            "How much a figure past its --fail-on-growth limit grew: bytes of memory, or keys (what: total, keys, namespace, namespace-keys, key, expiry-clusters; name: the namespace, key or cluster window)",
        );
        for a in alerts.iter().take(opts.big_keys) {
            let name = label_text(a.name.as_deref().unwrap_or_default().as_bytes());
            let db = a.db.map(|d| d.to_string());
            let mut labels = vec![("what", a.what.name()), ("name", name.as_str())];
            if let Some(db) = &db {
                labels.push(("db", db));
            }
            labels.push(("limit", &a.threshold));
            change.sample(&labels, a.change);
        }
        out.push(change);
    }
    out.text
}

/// The metrics of an analysis that failed before there was any figure:
/// `rdblens_analysis_success 0`, when (unix ms) and how long it took.
pub fn failure(now_ms: i64, analysis_seconds: f64) -> String {
    let mut out = Exposition::default();
    out.single("rdblens_analysis_success", SUCCESS_HELP, 0);
    out.single(
        "rdblens_analysis_timestamp_seconds",
        TIMESTAMP_HELP,
        Seconds(now_ms),
    );
    out.single(
        "rdblens_analysis_duration_seconds",
        DURATION_HELP,
        Float(analysis_seconds),
    );
    out.text
}

const SUCCESS_HELP: &str = "1 when every file was read whole and every value decoded; 0 when a file is damaged or truncated (the figures then cover what could be read) or the analysis failed";
const TIMESTAMP_HELP: &str = "The time of the analysis (the reference time of TTLs, --now), unix seconds";
const DURATION_HELP: &str = "How long reading and analysing the files took";

/// The run itself: whether it read everything, when, how long it took.
fn run(out: &mut Exposition, r: &ReportJson<'_>, opts: &MetricsOptions) {
    let whole = r.damaged_keys == 0
        && r.files
            .iter()
            .all(|f| f.incomplete.is_none() && f.checksum != Checksum::Mismatch);
    out.single("rdblens_analysis_success", SUCCESS_HELP, u8::from(whole));
    out.single(
        "rdblens_analysis_timestamp_seconds",
        TIMESTAMP_HELP,
        Seconds(r.now_ms),
    );
    if let Some(s) = opts.analysis_seconds {
        out.single("rdblens_analysis_duration_seconds", DURATION_HELP, Float(s));
    }
    let mut info = Family::new("rdblens_build_info", "The rdblens version that wrote the metrics");
    info.sample(&[("version", r.tool_version)], 1);
    out.push(info);
}

/// One series per input file, labelled with its name (path or `--label`).
fn files(out: &mut Exposition, r: &ReportJson<'_>) {
    let mut snapshot = Family::new(
        "rdblens_snapshot_timestamp_seconds",
        "When the server wrote the dump (its ctime aux field), unix seconds",
    );
    let mut age = Family::new(
        "rdblens_snapshot_age_seconds",
        "The dump's age at the analysis: analysis time minus the dump's ctime",
    );
    let mut size = Family::new("rdblens_file_size_bytes", "Size of the dump file");
    let mut keys = Family::new(
        "rdblens_file_keys",
        "Key entries in the file, before any key filter",
    );
    let mut damaged = Family::new(
        "rdblens_file_damaged",
        "1 when the file stopped early or fails its checksum",
    );
    let mut info = Family::new(
        "rdblens_file_info",
        "Who wrote the file and the server profile its memory is estimated for",
    );
    let mut used = Family::new(
        "rdblens_used_memory_predicted_bytes",
        "used_memory predicted once a server has loaded the file (absent with key filters or a damaged file)",
    );
    for f in &r.files {
        let file = label_text(f.path.as_bytes());
        let by_file = [("file", file.as_str())];
        if let Some(ctime) = f.aux.get("ctime").and_then(|c| c.parse::<i64>().ok()) {
            snapshot.sample(&by_file, ctime);
            age.sample(&by_file, r.now_ms.div_euclid(1000) - ctime);
        }
        size.sample(&by_file, f.size);
        keys.sample(&by_file, f.keys);
        damaged.sample(
            &by_file,
            u8::from(f.incomplete.is_some() || f.checksum == Checksum::Mismatch),
        );
        let server = label_text(f.aux.get("redis-ver").map_or(&b""[..], |v| v.as_bytes()));
        let rdb_version = f.rdb_version.to_string();
        let profile = f.profile.to_string();
        info.sample(
            &[
                ("file", file.as_str()),
                ("dialect", f.dialect.as_str()),
                ("rdb_version", rdb_version.as_str()),
                ("server_version", server.as_str()),
                ("profile", profile.as_str()),
            ],
            1,
        );
        if let Some(u) = &f.used_memory {
            used.sample(&by_file, u.predicted);
        }
    }
    out.push(snapshot);
    out.push(age);
    out.push(size);
    out.push(keys);
    out.push(damaged);
    out.push(info);
    out.push(used);
    if let Some(shards) = &r.shards {
        let mut memory = Family::new(
            "rdblens_file_memory_bytes",
            "Estimated MEMORY USAGE of the file's keys",
        );
        for s in &shards.shards {
            memory.sample(
                &[("file", label_text(s.path.as_bytes()).as_str())],
                s.totals.memory,
            );
        }
        out.push(memory);
    }
}

/// Figures of every key.
fn totals(out: &mut Exposition, r: &ReportJson<'_>) {
    let t = r.totals;
    out.single("rdblens_keys", "Keys in the dumps", t.keys);
    out.single(
        "rdblens_expiring_keys",
        "Keys with a time to live",
        t.keys_with_expiry,
    );
    out.single(
        "rdblens_memory_bytes",
        "Estimated MEMORY USAGE of every key, summed",
        t.memory,
    );
    out.single(
        "rdblens_serialized_bytes",
        "Bytes the values take in the dump files",
        t.serialized_bytes,
    );
    out.single(
        "rdblens_damaged_keys",
        "Keys whose value could not be decoded (left out of every other figure)",
        r.damaged_keys,
    );
    if let Some(expiry) = &r.expiry {
        out.single(
            "rdblens_expiry_clusters",
            "Expiry clusters: many keys expiring at about the same time (docs/expiry-clusters.md)",
            expiry.clusters.len(),
        );
    }
}

/// Keys, expiring keys and memory per database, type and encoding.
fn groups(out: &mut Exposition, r: &ReportJson<'_>, opts: &MetricsOptions) {
    let cap = opts.key_groups;
    let dbs = capped(r.databases.iter().map(|g| (g.name.clone(), g.counter)), cap);
    let types = capped(r.types.iter().map(|g| (g.name.clone(), g.counter)), cap);
    for (scope, label, rows) in [("db", "db", &dbs), ("type", "type", &types)] {
        let mut keys = Family::new(format!("rdblens_{scope}_keys"), format!("Keys per {scope}"));
        let mut expiring = Family::new(
            format!("rdblens_{scope}_expiring_keys"),
            format!("Keys with a time to live per {scope}"),
        );
        let mut memory = Family::new(
            format!("rdblens_{scope}_memory_bytes"),
            format!("Estimated MEMORY USAGE of the keys per {scope}"),
        );
        for (name, c) in rows {
            let labels = [(label, name.as_str())];
            keys.sample(&labels, c.keys);
            expiring.sample(&labels, c.keys_with_expiry);
            memory.sample(&labels, c.memory);
        }
        out.push(keys);
        out.push(expiring);
        out.push(memory);
    }
    if let Some(encodings) = &r.encodings {
        let rows = capped(
            encodings.iter().map(|g: &Group<'_>| (g.name.clone(), g.counter)),
            cap,
        );
        let mut keys = Family::new(
            "rdblens_encoding_keys",
            "Keys per type and encoding on the target server",
        );
        let mut memory = Family::new(
            "rdblens_encoding_memory_bytes",
            "Estimated MEMORY USAGE per type and encoding on the target server",
        );
        for (name, c) in &rows {
            // Group names are `TYPE ENCODING` (`hash listpack`).
            let (kind, encoding) = name.split_once(' ').unwrap_or((name.as_str(), OVERFLOW));
            let labels = [("type", kind), ("encoding", encoding)];
            keys.sample(&labels, c.keys);
            memory.sample(&labels, c.memory);
        }
        out.push(keys);
        out.push(memory);
    }
}

/// The first-level namespaces, heaviest first, after redis_exporter's
/// `redis_key_group_*` series.
fn key_groups(out: &mut Exposition, r: &ReportJson<'_>, opts: &MetricsOptions) {
    let Some(prefixes) = &r.prefixes else { return };
    let folded = prefixes.folded.as_ref().map_or(0, |f| f.prefixes);
    out.single(
        "rdblens_key_groups",
        "First-level namespaces (distinct prefixes before the separator; estimated past the bounded count)",
        prefixes.namespaces.len() as u64 + folded,
    );
    let mut rows: Vec<(String, Counter)> = Vec::new();
    let mut seen = HashSet::new();
    let mut overflow = prefixes.folded.as_ref().map(|f| f.totals).unwrap_or_default();
    let mut beyond = 0usize;
    for ns in &prefixes.namespaces {
        let mut name = key_label(&ns.prefix);
        // A namespace named like a reserved group gets the separator
        // appended, which no namespace contains.
        if name == OVERFLOW || name == NO_NAMESPACE {
            name.push_str(&prefixes.separator);
        }
        if rows.len() < opts.key_groups && seen.insert(name.clone()) {
            rows.push((name, ns.totals));
        } else {
            beyond += 1;
            overflow.merge(&ns.totals);
        }
    }
    if prefixes.no_namespace.keys > 0 {
        rows.push((NO_NAMESPACE.to_string(), *prefixes.no_namespace));
    }
    if beyond > 0 || folded > 0 {
        rows.push((OVERFLOW.to_string(), overflow));
    }
    let mut keys = Family::new(
        "rdblens_key_group_keys",
        "Keys per first-level namespace (no_namespace: names without the separator; overflow: the namespaces beyond --metrics-groups)",
    );
    let mut memory = Family::new(
        "rdblens_key_group_memory_usage_bytes",
        "Estimated MEMORY USAGE of the keys per first-level namespace",
    );
    for (name, c) in &rows {
        let labels = [("key_group", name.as_str())];
        keys.sample(&labels, c.keys);
        memory.sample(&labels, c.memory);
    }
    out.push(keys);
    out.push(memory);
}

/// The biggest keys by estimated memory.
fn big_keys(out: &mut Exposition, r: &ReportJson<'_>, opts: &MetricsOptions) {
    let Some(top) = &r.top_keys else { return };
    let mut memory = Family::new(
        "rdblens_big_key_memory_bytes",
        "Estimated MEMORY USAGE of the biggest keys (--metrics-keys of them)",
    );
    let mut elements = Family::new(
        "rdblens_big_key_elements",
        "STRLEN of the biggest keys that are strings, their members, fields or entries otherwise",
    );
    for (k, [db, key, kind]) in key_labels(top.by_memory, opts.big_keys) {
        let labels = [
            ("db", db.as_str()),
            ("key", key.as_str()),
            ("type", kind.as_str()),
        ];
        memory.sample(&labels, k.memory);
        elements.sample(&labels, k.elements);
    }
    out.push(memory);
    out.push(elements);
}

/// The first `cap` of `keys` with their `db`, `key` and `type` label
/// values. Two keys cut to the same labels (or the same key in two files):
/// the first, the bigger, stands for both.
fn key_labels(keys: &[SharedRecord], cap: usize) -> Vec<(&KeyRecord, [String; 3])> {
    let mut seen = HashSet::new();
    keys.iter()
        .take(cap)
        .filter_map(|k| {
            let labels = [
                k.db.to_string(),
                key_label(&k.key),
                label_text(k.type_name.as_bytes()),
            ];
            seen.insert(labels.clone()).then_some((&**k, labels))
        })
        .collect()
}

/// Hot and cold keys (section `hot-and-big`, dumps with idle times or
/// LFU counters): each group's keys and memory, and its biggest keys.
fn heat(out: &mut Exposition, r: &ReportJson<'_>, opts: &MetricsOptions) {
    let Some(h) = &r.registered.hot_and_big else {
        return;
    };
    let mut keys = Family::new(
        "rdblens_heat_keys",
        "Keys hot or cold by the hot-key and cold-key thresholds (dumps with idle times or LFU counters)",
    );
    let mut memory = Family::new(
        "rdblens_heat_memory_bytes",
        "Estimated MEMORY USAGE of the hot or cold keys, summed (cold: memory to reclaim)",
    );
    let mut big = Family::new(
        "rdblens_heat_big_key_memory_bytes",
        "Estimated MEMORY USAGE of the biggest hot and cold keys (--metrics-keys of each)",
    );
    for (group, g) in [("hot", &h.hot), ("cold", &h.cold)] {
        keys.sample(&[("group", group)], g.keys);
        memory.sample(&[("group", group)], g.memory);
        for (k, [db, key, kind]) in key_labels(g.biggest, opts.big_keys) {
            let labels = [
                ("group", group),
                ("db", db.as_str()),
                ("key", key.as_str()),
                ("type", kind.as_str()),
            ];
            big.sample(&labels, k.memory);
        }
    }
    out.push(keys);
    out.push(memory);
    out.push(big);
}

/// Findings per rule and severity (every rule of the catalogue that is on,
/// zero included, so that a finding appearing is a change of value).
fn findings(out: &mut Exposition, r: &ReportJson<'_>) {
    let Some(audit) = r.findings() else { return };
    let mut family = Family::new(
        "rdblens_findings",
        "Design-rule findings per rule and severity, listed or not (docs/audit.md)",
    );
    for rule in audit.rules.iter().filter(|s| s.enabled) {
        let c = &rule.counts;
        for (severity, n) in [("info", c.info), ("warn", c.warn), ("crit", c.crit)] {
            family.sample(&[("rule", rule.rule.name()), ("severity", severity)], n);
        }
    }
    out.push(family);
}

/// `rows` with at most `cap` of them kept (the heaviest by memory, ties by
/// name), the rest summed in one `overflow` row.
fn capped<'c>(rows: impl Iterator<Item = (String, &'c Counter)>, cap: usize) -> Vec<(String, Counter)> {
    let mut rows: Vec<(String, Counter)> = rows.map(|(n, c)| (label_text(n.as_bytes()), *c)).collect();
    if rows.len() <= cap {
        return rows;
    }
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| {
        rows[b]
            .1
            .memory
            .cmp(&rows[a].1.memory)
            .then_with(|| rows[a].0.cmp(&rows[b].0))
    });
    let keep: HashSet<usize> = order[..cap].iter().copied().collect();
    let mut overflow = Counter::default();
    let mut kept = Vec::with_capacity(cap + 1);
    for (i, row) in rows.drain(..).enumerate() {
        if keep.contains(&i) {
            kept.push(row);
        } else {
            overflow.merge(&row.1);
        }
    }
    kept.push((OVERFLOW.to_string(), overflow));
    kept
}

/// A key name as a label value: as it is when it is UTF-8 without control
/// characters, else as redis-cli quotes it (`\xff`, `\n`...); cut at
/// [`MAX_LABEL_BYTES`].
pub fn key_label(key: &KeyName) -> String {
    label_text(key.as_bytes())
}

/// Any text from a dump as a label value (see [`key_label`]).
fn label_text(bytes: &[u8]) -> String {
    let text = match std::str::from_utf8(bytes) {
        Ok(s) if !s.chars().any(char::is_control) => s.to_string(),
        _ => rdblens_parser::escape_bytes(bytes),
    };
    if text.len() <= MAX_LABEL_BYTES {
        return text;
    }
    let mut cut = MAX_LABEL_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}... ({} bytes)", &text[..cut], bytes.len())
}

/// A label value escaped as the exposition format requires: backslash,
/// double quote and line feed.
pub fn escape_label_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Unix ms as whole seconds.
struct Seconds(i64);

impl Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.div_euclid(1000))
    }
}

/// A float as the format writes it (`0.125`, `NaN`, `+Inf`).
struct Float(f64);

impl Display for Float {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            v if v.is_nan() => f.write_str("NaN"),
            v if v == f64::INFINITY => f.write_str("+Inf"),
            v if v == f64::NEG_INFINITY => f.write_str("-Inf"),
            v => write!(f, "{v}"),
        }
    }
}

/// One metric family: its samples are written together, after its
/// `# HELP` and `# TYPE` lines, and only if it has any.
struct Family {
    name: String,
    help: String,
    samples: String,
}

impl Family {
    fn new(name: impl Into<String>, help: impl Into<String>) -> Self {
        Family {
            name: name.into(),
            help: help.into(),
            samples: String::new(),
        }
    }

    fn sample(&mut self, labels: &[(&str, &str)], value: impl Display) {
        self.samples.push_str(&self.name);
        if !labels.is_empty() {
            self.samples.push('{');
            for (i, (name, value)) in labels.iter().enumerate() {
                if i > 0 {
                    self.samples.push(',');
                }
                // Writing to a String cannot fail.
                let _ = write!(self.samples, "{name}=\"{}\"", escape_label_value(value));
            }
            self.samples.push('}');
        }
        let _ = writeln!(self.samples, " {value}");
    }
}

/// The document being written.
#[derive(Default)]
struct Exposition {
    text: String,
}

impl Exposition {
    fn push(&mut self, family: Family) {
        if family.samples.is_empty() {
            return;
        }
        // HELP text escapes backslash and line feed only.
        let help = family.help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.text, "# HELP {} {help}", family.name);
        let _ = writeln!(self.text, "# TYPE {} gauge", family.name);
        self.text.push_str(&family.samples);
    }

    /// A family of one unlabelled series.
    fn single(&mut self, name: &str, help: &str, value: impl Display) {
        let mut family = Family::new(name, help);
        family.sample(&[], value);
        self.push(family);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped_as_the_format_requires() {
        assert_eq!(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        // Control characters and invalid UTF-8 are quoted as redis-cli does,
        // then escaped: the backslashes of `\n` and `\xff` doubled.
        let label = key_label(&KeyName::new(b"k\n\"\xff"));
        assert_eq!(label, "k\\n\\\"\\xff");
        assert_eq!(escape_label_value(&label), "k\\\\n\\\\\\\"\\\\xff");
        // UTF-8 without control characters stays as it is.
        assert_eq!(key_label(&KeyName::new("clé:\"x\"".as_bytes())), "clé:\"x\"");
        // Long names are cut on a character boundary.
        let long = "é".repeat(150);
        let cut = key_label(&KeyName::new(long.as_bytes()));
        assert_eq!(cut, format!("{}... (300 bytes)", "é".repeat(100)));
    }

    #[test]
    fn rows_beyond_the_cap_are_summed_in_overflow() {
        let c = |keys, memory| Counter {
            keys,
            memory,
            ..Counter::default()
        };
        let (a, b, d) = (c(1, 10), c(2, 30), c(4, 20));
        let rows = capped(
            [
                ("a".to_string(), &a),
                ("b".to_string(), &b),
                ("d".to_string(), &d),
            ]
            .into_iter(),
            1,
        );
        let shown: Vec<(&str, u64, u64)> = rows.iter().map(|(n, c)| (n.as_str(), c.keys, c.memory)).collect();
        assert_eq!(shown, [("b", 2, 30), ("overflow", 5, 30)]);
    }
}
