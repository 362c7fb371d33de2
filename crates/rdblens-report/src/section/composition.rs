//! Section `composition` (only when named): what the biggest top-level
//! namespaces are made of, by type and encoding, so that a namespace's
//! memory can be traced to the values that hold it (a namespace of hash
//! tables that missed their listpack limit, of raw strings that could be
//! compressed, of quicklists grown into queues).

use rdblens_summary::acc::composition::{Composition, Mix, Part};
use rdblens_summary::{KeyName, Summary};
use serde::Serialize;

/// Parts named per row of the table (the JSON has them all).
const PARTS_SHOWN: usize = 4;

use super::{BuildContext, Column, SectionModel, SectionView, ViewCell, ViewPart};
use crate::format::{human_bytes, percent};

/// The section's model (JSON field `composition`).
#[derive(Serialize)]
pub struct CompositionJson<'s> {
    /// The namespace separator.
    pub separator: char,
    /// The biggest namespaces by estimated memory, at most `--top`.
    pub namespaces: Vec<NamespaceMix<'s>>,
    /// Keys whose names hold no separator.
    pub unprefixed: MixJson<'s>,
    /// The namespaces left out of `namespaces`: those past `--top`, and
    /// those past the 1,000 kept exactly (`folded`).
    pub others: Totals,
    /// Whether namespaces past the 1,000 kept were folded together.
    pub folded: bool,
}

/// One namespace and what it is made of.
#[derive(Serialize)]
pub struct NamespaceMix<'s> {
    /// The namespace (the key names up to the first separator).
    pub namespace: &'s KeyName,
    /// Its keys, memory and parts.
    #[serde(flatten)]
    pub mix: MixJson<'s>,
}

/// Keys and their estimated memory.
#[derive(Serialize)]
pub struct Totals {
    /// Keys.
    pub keys: u64,
    /// Their estimated memory.
    pub memory: u64,
}

/// A group's keys and memory by type and encoding, biggest part first.
#[derive(Serialize)]
pub struct MixJson<'s> {
    /// Keys.
    pub keys: u64,
    /// Their estimated memory.
    pub memory: u64,
    /// By type and encoding, by memory (largest first).
    pub parts: Vec<&'s Part>,
}

fn mix_json(mix: &Mix) -> MixJson<'_> {
    let mut parts: Vec<&Part> = mix.parts.iter().collect();
    parts.sort_by(|a, b| (b.memory, &a.kind, &a.encoding).cmp(&(a.memory, &b.kind, &b.encoding)));
    MixJson {
        keys: mix.keys(),
        memory: mix.memory(),
        parts,
    }
}

impl<'s> SectionModel<'s> for CompositionJson<'s> {
    fn build(s: &'s Summary, cx: &BuildContext) -> Option<Self> {
        let c: &Composition = &s.keys.composition;
        let mut namespaces: Vec<NamespaceMix<'s>> = c
            .namespaces
            .entries
            .iter()
            .map(|(namespace, mix)| NamespaceMix {
                namespace,
                mix: mix_json(mix),
            })
            .collect();
        namespaces.sort_by(|a, b| (b.mix.memory, a.namespace).cmp(&(a.mix.memory, b.namespace)));
        // The namespaces past `--top` are told as one group with the folded ones.
        let (folded, past_top) = (&c.namespaces.other, namespaces.iter().skip(cx.top));
        let others = past_top.fold(
            Totals {
                keys: folded.keys(),
                memory: folded.memory(),
            },
            |t, n| Totals {
                keys: t.keys.saturating_add(n.mix.keys),
                memory: t.memory.saturating_add(n.mix.memory),
            },
        );
        namespaces.truncate(cx.top);
        Some(CompositionJson {
            separator: char::from(c.separator),
            namespaces,
            unprefixed: mix_json(&c.unprefixed),
            others,
            folded: c.namespaces.folded,
        })
        .filter(|j| !j.namespaces.is_empty() || j.unprefixed.keys > 0)
    }

    fn view(&self) -> SectionView<'_> {
        const COLUMNS: &[Column] = &[
            Column {
                title: "namespace",
                numeric: false,
            },
            Column {
                title: "keys",
                numeric: true,
            },
            Column {
                title: "memory",
                numeric: true,
            },
            Column {
                title: "made of (type/encoding: share of its memory)",
                numeric: false,
            },
        ];
        let row = |name: String, m: &MixJson<'_>| {
            let mut made_of: Vec<String> = m
                .parts
                .iter()
                .take(PARTS_SHOWN)
                .map(|p| format!("{}/{} {}", p.kind, p.encoding, percent(p.memory, m.memory)))
                .collect();
            if m.parts.len() > PARTS_SHOWN {
                made_of.push(format!("{} more", m.parts.len() - PARTS_SHOWN));
            }
            vec![
                ViewCell::Text(name),
                ViewCell::Count(m.keys),
                ViewCell::Bytes(m.memory),
                ViewCell::Text(made_of.join(", ")),
            ]
        };
        let mut rows: Vec<Vec<ViewCell>> = self
            .namespaces
            .iter()
            .map(|n| {
                let name = String::from_utf8_lossy(n.namespace.as_bytes());
                row(format!("{name}{}*", self.separator), &n.mix)
            })
            .collect();
        if self.unprefixed.keys > 0 {
            rows.push(row("(no separator)".to_string(), &self.unprefixed));
        }
        if self.others.keys > 0 {
            rows.push(vec![
                ViewCell::Text("(other namespaces)".to_string()),
                ViewCell::Count(self.others.keys),
                ViewCell::Bytes(self.others.memory),
                ViewCell::Text(String::new()),
            ]);
        }
        SectionView {
            id: "composition",
            title: "Namespace composition",
            intro: format!(
                "What the biggest top-level namespaces are made of: each one's estimated memory by type and \
                 encoding (biggest first){}.",
                if self.others.keys > 0 {
                    format!("; {} more in other namespaces", human_bytes(self.others.memory))
                } else {
                    String::new()
                }
            ),
            parts: vec![ViewPart::Table {
                id: "namespace-composition",
                title: "By namespace",
                columns: COLUMNS,
                rows,
            }],
        }
    }
}
