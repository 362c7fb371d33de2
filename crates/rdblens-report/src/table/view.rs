//! The sections defined in their own file (`crate::section`), drawn from
//! their [`SectionView`]: a heading, then text, key lists and tables.

use comfy_table::Cell;
use rdblens_summary::acc::top::KeyRecord;

use crate::cells::{fitted, heading, key_text, right, table};
use crate::format::{duration, human_bytes, thousands};
use crate::model::ReportJson;
use crate::section::{SectionView, ViewCell, ViewPart};

/// Writes `view` as text.
pub(crate) fn render(out: &mut String, r: &ReportJson<'_>, view: &SectionView<'_>) {
    let opts = r.options;
    heading(out, view.title);
    out.push_str(&view.intro);
    out.push('\n');
    for part in &view.parts {
        match part {
            ViewPart::Text(text) => {
                out.push_str(text);
                out.push('\n');
            }
            ViewPart::Keys { title, keys, .. } => {
                heading(out, title);
                let mut t = table(
                    opts,
                    &[
                        "#", "db", "key", "type", "encoding", "elements", "memory", "access", "ttl",
                    ],
                );
                for (i, k) in keys.iter().enumerate() {
                    t.add_row(vec![
                        right(i + 1),
                        right(k.db),
                        Cell::new(key_text(opts, k.key.as_bytes())),
                        Cell::new(&k.type_name),
                        Cell::new(&k.encoding),
                        right(thousands(k.elements)),
                        right(human_bytes(k.memory)),
                        right(access(k)),
                        right(ttl(k, r.now_ms)),
                    ]);
                }
                out.push_str(&fitted(&mut t, opts));
                out.push('\n');
            }
            ViewPart::Table {
                title, columns, rows, ..
            } => {
                heading(out, title);
                let header: Vec<&str> = columns.iter().map(|c| c.title).collect();
                let mut t = table(opts, &header);
                for row in rows {
                    t.add_row(
                        row.iter()
                            .zip(columns.iter())
                            .map(|(cell, col)| {
                                let shown = match cell {
                                    ViewCell::Text(s) => s.clone(),
                                    ViewCell::Count(n) => thousands(*n),
                                    ViewCell::Bytes(n) => human_bytes(*n),
                                };
                                if col.numeric {
                                    right(shown)
                                } else {
                                    Cell::new(shown)
                                }
                            })
                            .collect::<Vec<_>>(),
                    );
                }
                out.push_str(&fitted(&mut t, opts));
                out.push('\n');
            }
        }
    }
}

/// A key's idle time or LFU counter, as the dump records it.
pub fn access(k: &KeyRecord) -> String {
    match (k.lfu_freq, k.idle_seconds) {
        (Some(lfu), _) => format!("LFU {lfu}"),
        (None, Some(idle)) => format!(
            "idle {}",
            duration(
                i64::try_from(idle)
                    .unwrap_or(i64::MAX / 1000)
                    .saturating_mul(1000)
            )
        ),
        (None, None) => "-".into(),
    }
}

/// A key's time to live at the snapshot, `-` without one.
pub fn ttl(k: &KeyRecord, now_ms: i64) -> String {
    match k.expiry_ms {
        None => "-".into(),
        Some(t) if t <= now_ms => "expired".into(),
        Some(t) => duration(t.saturating_sub(now_ms)),
    }
}
