//! The diff as tables: totals, then groups, namespaces, keys that became
//! big, keys that changed most and new expiry clusters, each old against new.

use std::fmt::Write;

use comfy_table::Cell;
use rdblens_summary::acc::top::Metric;
use rdblens_summary::Summary;

use super::growth::{GrowthAlert, GrowthWhat};
use super::model::{build, GroupDiff, KeyChange, KeyChangeKind, KeyChanges, SideJson};
use crate::cells::{cut_middle, fitted_dropping, heading, key_text, right, table, MIN_TEXT_WIDTH};
use crate::format::{duration, human_bytes, short_key, thousands, utc};
use crate::options::ReportOptions;
use crate::words::wrap_prose;

/// `+1.5 KiB`, `-512 B`, `0 B`.
pub fn signed_bytes(d: i64) -> String {
    match d {
        0 => "0 B".into(),
        d if d > 0 => format!("+{}", human_bytes(d.unsigned_abs())),
        d => format!("-{}", human_bytes(d.unsigned_abs())),
    }
}

/// `+1,234`, `-5`, `0`.
pub fn signed_count(d: i64) -> String {
    match d {
        0 => "0".into(),
        d if d > 0 => format!("+{}", thousands(d.unsigned_abs())),
        d => format!("-{}", thousands(d.unsigned_abs())),
    }
}

/// Change relative to the old value: `+12.5%`, `new`, `-`.
pub(super) fn change(old: u64, delta: i64) -> String {
    if delta == 0 {
        return "-".into();
    }
    if old == 0 {
        return "new".into();
    }
    format!("{:+.1}%", delta as f64 * 100.0 / old as f64)
}

/// Columns of a table of groups left out, in this order, while it is wider
/// than the terminal: the old and new figures before the changes (of the
/// two `change` columns, the keys' first).
const GROUP_DROP: &[&str] = &["keys old", "memory old", "keys new", "memory new", "change"];

/// Columns of a table of groups before and after.
fn old_new_header(label: &str) -> [&str; 8] {
    [
        label,
        "keys old",
        "keys new",
        "change",
        "memory old",
        "memory new",
        "change",
        "",
    ]
}

fn group_table(out: &mut String, opts: &ReportOptions, title: &str, label: &str, rows: &[GroupDiff]) {
    heading(out, title);
    let mut t = table(opts, &old_new_header(label));
    for r in rows {
        t.add_row(vec![
            Cell::new(&r.name),
            right(thousands(r.old.keys)),
            right(thousands(r.new.keys)),
            right(signed_count(r.delta.keys)),
            right(human_bytes(r.old.memory)),
            right(human_bytes(r.new.memory)),
            right(signed_bytes(r.delta.memory)),
            right(change(r.old.memory, r.delta.memory)),
        ]);
    }
    let _ = writeln!(out, "{}", fitted_dropping(&mut t, opts, GROUP_DROP));
}

fn files_line(s: &SideJson<'_>) -> String {
    let mut names: Vec<&str> = s.files.iter().take(3).copied().collect();
    if s.files.len() > 3 {
        names.push("...");
    }
    let files = match s.files.len() {
        1 => String::new(),
        n => format!("{n} files, "),
    };
    format!("{} ({files}snapshot {} UTC)", names.join(", "), utc(s.now_ms))
}

/// The diff as tables, its prose folded to a terminal's width as the
/// report's is.
pub fn to_table(old: &Summary, new: &Summary, opts: &ReportOptions) -> String {
    let d = build(old, new, opts);
    let mut out = String::new();
    let _ = writeln!(out, "old: {}", files_line(&d.old));
    let _ = writeln!(out, "new: {}", files_line(&d.new));
    let t0 = &d.totals;
    let _ = writeln!(
        out,
        "keys {} -> {} ({}), estimated memory {} -> {} ({}), serialized {} -> {} ({})",
        thousands(t0.old.keys),
        thousands(t0.new.keys),
        signed_count(t0.delta.keys),
        human_bytes(t0.old.memory),
        human_bytes(t0.new.memory),
        signed_bytes(t0.delta.memory),
        human_bytes(t0.old.serialized_bytes),
        human_bytes(t0.new.serialized_bytes),
        signed_bytes(t0.delta.serialized_bytes)
    );
    if let Some(u) = &d.used_memory {
        let _ = writeln!(
            out,
            "predicted used_memory once loaded {} -> {} ({})",
            human_bytes(u.old),
            human_bytes(u.new),
            signed_bytes(u.delta)
        );
    }
    group_table(&mut out, opts, "Databases", "db", &d.databases);
    group_table(&mut out, opts, "Types", "type", &d.types);
    group_table(&mut out, opts, "Encodings", "type encoding", &d.encodings);

    heading(&mut out, "Namespaces: largest changes");
    if d.namespaces.is_empty() {
        let _ = writeln!(out, "no namespace changed");
    } else {
        let mut t = table(opts, &old_new_header("prefix"));
        let unknown = || "?".to_string();
        for r in d.namespaces.iter().take(opts.top) {
            let indent = if r.level > 1 { "  " } else { "" };
            let room = usize::from(MIN_TEXT_WIDTH) - indent.len();
            t.add_row(vec![
                Cell::new(format!(
                    "{indent}{}",
                    cut_middle(opts, short_key(r.prefix.as_bytes()), room)
                )),
                right(r.old.map_or_else(unknown, |c| thousands(c.keys))),
                right(r.new.map_or_else(unknown, |c| thousands(c.keys))),
                right(r.delta.map_or_else(unknown, |x| signed_count(x.keys))),
                right(r.old.map_or_else(unknown, |c| human_bytes(c.memory))),
                right(r.new.map_or_else(unknown, |c| human_bytes(c.memory))),
                right(r.delta.map_or_else(unknown, |x| signed_bytes(x.memory))),
                right(match (r.old, r.delta) {
                    (Some(o), Some(x)) => change(o.memory, x.memory),
                    _ => unknown(),
                }),
            ]);
        }
        let _ = writeln!(out, "{}", fitted_dropping(&mut t, opts, GROUP_DROP));
        if d.namespaces.len() > opts.top {
            let _ = writeln!(
                out,
                "(+{} more changed prefixes in the JSON output)",
                thousands((d.namespaces.len() - opts.top) as u64)
            );
        }
    }

    heading(&mut out, "Keys that became big");
    if d.became_big.is_empty() {
        let _ = writeln!(out, "none: every key of the new top lists was as big before");
    } else {
        let mut t = table(opts, &["by", "db", "key", "type", "old", "new"]);
        let show = |metric: Metric, v: u64| match metric {
            Metric::Elements => thousands(v),
            _ => human_bytes(v),
        };
        for metric in [Metric::Memory, Metric::Serialized, Metric::Elements] {
            for r in d.became_big.iter().filter(|r| r.metric == metric).take(opts.top) {
                let old = match (r.old_value, r.old_at_most) {
                    (Some(v), _) => show(metric, v),
                    (None, Some(v)) => format!("<= {}", show(metric, v)),
                    (None, None) => "absent".into(),
                };
                t.add_row(vec![
                    Cell::new(match metric {
                        Metric::Serialized => "serialized",
                        Metric::Elements => "elements",
                        _ => "memory",
                    }),
                    right(r.key.db),
                    Cell::new(key_text(opts, r.key.key.as_bytes())),
                    Cell::new(&r.key.type_name),
                    right(old),
                    right(show(metric, r.new_value)),
                ]);
            }
        }
        // The new size is what made the key big: the old one goes last.
        let _ = writeln!(out, "{}", fitted_dropping(&mut t, opts, &["db", "type", "old"]));
    }

    key_changes(&mut out, opts, &d.key_changes);

    heading(
        &mut out,
        &format!("New expiry clusters ({} buckets)", duration(d.expiry.bucket_ms)),
    );
    if d.expiry.new_clusters.is_empty() {
        let _ = writeln!(
            out,
            "none ({} clusters in the old snapshot)",
            d.expiry.old_clusters
        );
    } else {
        let mut t = table(opts, &["from (UTC)", "to", "keys", "memory", "namespaces"]);
        for c in &d.expiry.new_clusters {
            let ns: Vec<String> = c
                .namespaces
                .iter()
                .take(3)
                .map(|(n, k)| format!("{n} ({k})"))
                .collect();
            t.add_row(vec![
                Cell::new(utc(c.start_ms)),
                Cell::new(utc(c.end_ms)),
                right(thousands(c.keys)),
                right(human_bytes(c.memory)),
                Cell::new(ns.join(", ")),
            ]);
        }
        let _ = writeln!(out, "{}", fitted_dropping(&mut t, opts, &["to", "namespaces"]));
    }
    if let Some(alerts) = &d.growth_alerts {
        heading(&mut out, "Growth alerts (--fail-on-growth)");
        if alerts.is_empty() {
            let _ = writeln!(out, "none: no figure grew by more than its limit");
        }
        for a in alerts {
            let _ = writeln!(out, "{a}");
        }
    }
    wrap_prose(&out, opts.width)
}

/// The keys that appeared, disappeared, grew or shrank most, one table.
fn key_changes(out: &mut String, opts: &ReportOptions, c: &KeyChanges<'_>) {
    heading(
        out,
        "Keys that appeared, disappeared, grew or shrank most (memory)",
    );
    let rows: Vec<&KeyChange<'_>> = [&c.appeared, &c.disappeared, &c.grew, &c.shrank]
        .into_iter()
        .flatten()
        .collect();
    if rows.is_empty() {
        let _ = writeln!(
            out,
            "none: the keys of both sides' top lists are the same, as big"
        );
        return;
    }
    let mut t = table(opts, &["change", "db", "key", "type", "old", "new", "delta"]);
    for r in rows {
        // A side the key is not listed on: absent, or at most its list's smallest.
        let side = |memory: Option<u64>, at_most: Option<u64>| match (memory, at_most) {
            (Some(v), _) => human_bytes(v),
            (None, Some(v)) => format!("<= {}", human_bytes(v)),
            (None, None) => "absent".into(),
        };
        t.add_row(vec![
            Cell::new(match r.change {
                KeyChangeKind::Appeared => "appeared",
                KeyChangeKind::Disappeared => "disappeared",
                KeyChangeKind::Grew => "grew",
                KeyChangeKind::Shrank => "shrank",
            }),
            right(r.db),
            Cell::new(key_text(opts, r.key.as_bytes())),
            Cell::new(r.type_name),
            right(side(r.old_memory, r.old_at_most)),
            right(side(r.new_memory, r.new_at_most)),
            right(signed_bytes(r.delta)),
        ]);
    }
    let _ = writeln!(
        out,
        "{}",
        fitted_dropping(&mut t, opts, &["db", "type", "old", "new"])
    );
}

/// One alert, as the tables and standard error show it.
impl GrowthAlert {
    /// The name quoted and shortened as the tables show keys.
    fn shown_name(&self) -> String {
        short_key(self.name.as_deref().unwrap_or_default().as_bytes())
    }
}

impl std::fmt::Display for GrowthAlert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counts = |figure: String| {
            (
                figure,
                thousands(self.old),
                thousands(self.new),
                signed_count(self.change),
            )
        };
        let bytes = |figure: String| {
            (
                figure,
                human_bytes(self.old),
                human_bytes(self.new),
                signed_bytes(self.change),
            )
        };
        let (figure, old, new, delta) = match self.what {
            GrowthWhat::ExpiryCluster => {
                // A cluster is new, not grown: its window and its keys.
                let window = self.name.as_deref().unwrap_or_default().replace('/', " to ");
                return write!(
                    f,
                    "new expiry cluster {window}: {} keys, above {}={}",
                    thousands(self.new),
                    self.what.name(),
                    self.threshold
                );
            }
            GrowthWhat::Keys => counts("keys".to_string()),
            GrowthWhat::NamespaceKeys => counts(format!("namespace {} keys", self.shown_name())),
            GrowthWhat::Total => bytes("total memory".to_string()),
            GrowthWhat::Namespace => bytes(format!("namespace {} memory", self.shown_name())),
            GrowthWhat::Key => bytes(format!(
                "key {} (db {}) memory",
                self.shown_name(),
                self.db.unwrap_or_default()
            )),
        };
        let percent = match self.old {
            0 => String::new(),
            old => format!(", {}", change(old, self.change)),
        };
        write!(
            f,
            "{figure} {old} -> {new} ({delta}{percent}), above {}={}",
            self.what.name(),
            self.threshold
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_formats() {
        assert_eq!(signed_bytes(0), "0 B");
        assert_eq!(signed_bytes(2048), "+2.0 KiB");
        assert_eq!(signed_bytes(-10), "-10 B");
        assert_eq!(signed_count(-1234), "-1,234");
        assert_eq!(change(200, 50), "+25.0%");
        assert_eq!(change(0, 5), "new");
        assert_eq!(change(5, 0), "-");
    }
}
