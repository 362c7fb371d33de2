//! The sections defined in their own file (`rdblens_report::section`),
//! drawn from their typed view: a section with its heading and intro,
//! then paragraphs, key tables and tables of figures.

use std::io::{self, Write};

use rdblens_report::section::{SectionView, ViewCell, ViewPart};
use rdblens_report::table::{access_cell, ttl_cell};
use rdblens_report::ReportJson;

use crate::escape::html;
use crate::page::{bytes_cell, count_cell, key, num, part, section, text, Col, Part, Table};

/// The page's parts for the registered sections the model holds.
pub(super) fn registered<'a>(m: &'a ReportJson<'a>) -> Vec<Part<'a>> {
    m.registered
        .views()
        .into_iter()
        .map(|view| {
            let (id, title) = (view.id, view.title);
            part(id, title, move |w| write_view(w, &view, m.now_ms))
        })
        .collect()
}

fn write_view(w: &mut dyn Write, view: &SectionView<'_>, now_ms: i64) -> io::Result<()> {
    section(w, view.id, view.title, &html(&view.intro), |w| {
        for p in &view.parts {
            match p {
                ViewPart::Text(t) => write!(w, "<p>{}</p>", html(t))?,
                ViewPart::Keys { id, title, keys } => {
                    write!(w, "<h3>{}</h3>", html(title))?;
                    let cols = [
                        Col("#", true),
                        Col("db", true),
                        Col("key", false),
                        Col("type", false),
                        Col("encoding", false),
                        Col("elements", true),
                        Col("memory", true),
                        Col("access", false),
                        Col("ttl", false),
                    ];
                    let mut t = Table::new(w, id, &cols, true, false)?;
                    for (i, k) in keys.iter().enumerate() {
                        t.row(&[
                            num(i + 1, &(i + 1).to_string()),
                            num(k.db, &k.db.to_string()),
                            key(&k.key),
                            text(&k.type_name),
                            text(&k.encoding),
                            count_cell(k.elements),
                            bytes_cell(k.memory),
                            text(&access_cell(k)),
                            text(&ttl_cell(k, now_ms)),
                        ])?;
                    }
                    t.finish()?;
                }
                ViewPart::Table {
                    id,
                    title,
                    columns,
                    rows,
                } => {
                    write!(w, "<h3>{}</h3>", html(title))?;
                    let cols: Vec<Col> = columns.iter().map(|c| Col(c.title, c.numeric)).collect();
                    let mut t = Table::new(w, id, &cols, false, false)?;
                    for row in rows {
                        let cells: Vec<String> = row
                            .iter()
                            .map(|c| match c {
                                ViewCell::Text(s) => text(s),
                                ViewCell::Count(n) => count_cell(*n),
                                ViewCell::Bytes(n) => bytes_cell(*n),
                            })
                            .collect();
                        t.row(&cells)?;
                    }
                    t.finish()?;
                }
            }
        }
        Ok(())
    })
}
