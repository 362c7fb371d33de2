//! The page around the sections (template, stylesheet and script, all
//! inline) and the small builders the sections are written with. A page
//! is written to its writer as it renders: the template up to the body,
//! each section row by row, then the script's data. Nothing is held whole
//! but a row's cells and the charts' data (whose size the sections'
//! constants bound, whatever `--top`).

use std::io::{self, Write};

use crate::escape::html;

const TEMPLATE: &str = include_str!("assets/page.html");
const STYLE: &str = include_str!("assets/page.css");
const SCRIPT: &str = include_str!("assets/page.js");

/// The Content-Security-Policy of every page: nothing may be fetched, only
/// the inline stylesheet and script run, images only as data: URIs.
pub const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// What writes one part of a page (a section's body, a whole section).
pub type Render<'a> = Box<dyn FnOnce(&mut dyn Write) -> io::Result<()> + 'a>;

/// One section of a page: its id and label in the navigation bar, and
/// what writes it.
pub struct Part<'a> {
    pub id: &'static str,
    pub label: &'static str,
    pub render: Render<'a>,
}

/// A page's parts, in order.
pub struct Page<'a> {
    pub title: &'static str,
    pub subtitle: String,
    pub sections: Vec<Part<'a>>,
    /// What the script draws the charts from: JSON, already escaped for a
    /// script block ([`crate::escape::script_json`]).
    pub data: String,
}

impl Page<'_> {
    /// Writes the page to `out`, section by section.
    pub fn write(self, out: &mut dyn Write) -> io::Result<()> {
        let nav: String = self
            .sections
            .iter()
            .map(|p| format!("<a href=\"#{}\">{}</a>", p.id, p.label))
            .collect();
        let (title, subtitle) = (html(self.title), html(&self.subtitle));
        let mut sections = Some(self.sections);
        fill(TEMPLATE, out, |name, out| {
            let value = match name {
                "csp" => CSP,
                "title" => &title,
                "subtitle" => &subtitle,
                "style" => STYLE,
                "nav" => &nav,
                "data" => &self.data,
                "script" => SCRIPT,
                "version" => env!("CARGO_PKG_VERSION"),
                "body" => {
                    // The template has one body: a second placeholder stays empty.
                    for part in sections.take().unwrap_or_default() {
                        (part.render)(out)?;
                    }
                    return Ok(true);
                }
                _ => return Ok(false),
            };
            out.write_all(value.as_bytes())?;
            Ok(true)
        })
    }
}

/// Writes the template with each `{{name}}` replaced by what `value`
/// writes for it, in one pass over the template (what a value writes is
/// not looked into); `value` returns false for a name it does not know,
/// which is left as it is.
fn fill(
    template: &str,
    out: &mut dyn Write,
    mut value: impl FnMut(&str, &mut dyn Write) -> io::Result<bool>,
) -> io::Result<()> {
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.write_all(&rest.as_bytes()[..start])?;
        let after = &rest[start + 2..];
        let known = match after.find("}}") {
            Some(end) if value(&after[..end], out)? => Some(end),
            _ => None,
        };
        match known {
            Some(end) => rest = &after[end + 2..],
            None => {
                out.write_all(b"{{")?;
                rest = after;
            }
        }
    }
    out.write_all(rest.as_bytes())
}

pub fn bytes(n: u64) -> String {
    rdblens_report::format::human_bytes(n)
}

pub fn count(n: u64) -> String {
    rdblens_report::format::thousands(n)
}

pub fn percent(part: u64, whole: u64) -> String {
    rdblens_report::format::percent(part, whole)
}

/// A column: its label and whether it holds numbers (right-aligned, sorted
/// by value).
#[derive(Clone, Copy)]
pub struct Col(pub &'static str, pub bool);

/// A table with a header, written row by row; `sortable` tables sort on a
/// header click, `filter` adds a text box that hides the rows not
/// containing its text.
pub struct Table<'w> {
    out: &'w mut dyn Write,
}

impl<'w> Table<'w> {
    pub fn new(
        out: &'w mut dyn Write,
        id: &str,
        cols: &[Col],
        sortable: bool,
        filter: bool,
    ) -> io::Result<Table<'w>> {
        if filter {
            write!(
                out,
                "<div class=\"tablebar\"><input class=\"filter\" type=\"search\" placeholder=\"Filter rows\" data-filter=\"{id}\" aria-label=\"Filter rows\"></div>"
            )?;
        }
        let class = if sortable { "data sortable" } else { "data" };
        write!(
            out,
            "<div class=\"scroll\"><table id=\"{id}\" class=\"{class}\"><thead><tr>"
        )?;
        for Col(label, numeric) in cols {
            let class = if *numeric { " class=\"n\"" } else { "" };
            write!(out, "<th{class}>{label}</th>")?;
        }
        out.write_all(b"</tr></thead><tbody>")?;
        Ok(Table { out })
    }

    /// One row of cells made with [`num`], [`text`], [`key`], [`bar`].
    pub fn row(&mut self, cells: &[String]) -> io::Result<()> {
        self.row_with("", cells)
    }

    /// A row with attributes (` id="..."`, ` data-...`).
    pub fn row_with(&mut self, attrs: &str, cells: &[String]) -> io::Result<()> {
        write!(self.out, "<tr{attrs}>")?;
        for c in cells {
            self.out.write_all(c.as_bytes())?;
        }
        self.out.write_all(b"</tr>")
    }

    pub fn finish(self) -> io::Result<()> {
        self.out.write_all(b"</tbody></table></div>")
    }
}

/// A number cell: shown as `shown`, sorted by `value`.
pub fn num(value: impl std::fmt::Display, shown: &str) -> String {
    format!("<td class=\"n\" data-v=\"{value}\">{}</td>", html(shown))
}

pub fn count_cell(n: u64) -> String {
    num(n, &count(n))
}

pub fn bytes_cell(n: u64) -> String {
    num(n, &bytes(n))
}

pub fn text(t: &str) -> String {
    format!("<td>{}</td>", html(t))
}

/// A key name cell, redis-cli quoted, escaped.
pub fn key(name: &rdblens_summary::KeyName) -> String {
    code_cell(&crate::escape::key_text(name))
}

/// A cell of code (a key, a namespace), escaped.
pub fn code_cell(t: &str) -> String {
    format!("<td class=\"key\"><code>{}</code></td>", html(t))
}

/// A share of a whole as a bar with its percentage.
pub fn bar(part: u64, whole: u64) -> String {
    let pct = if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    };
    format!(
        "<td class=\"barcell\" data-v=\"{part}\"><span class=\"bar\"><i style=\"width:{pct:.2}%\"></i></span><small>{}</small></td>",
        percent(part, whole)
    )
}

/// A section with its heading and a one-line explanation, `body` written
/// between them and its end.
pub fn section(
    out: &mut dyn Write,
    id: &str,
    title: &str,
    intro: &str,
    body: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    write!(out, "<section id=\"{id}\"><h2>{title}</h2>")?;
    if !intro.is_empty() {
        write!(out, "<p class=\"intro\">{intro}</p>")?;
    }
    body(out)?;
    out.write_all(b"</section>\n")
}

/// A part of the page: a section written by `render` under `label` in
/// the navigation bar.
pub fn part<'a>(
    id: &'static str,
    label: &'static str,
    render: impl FnOnce(&mut dyn Write) -> io::Result<()> + 'a,
) -> Part<'a> {
    Part {
        id,
        label,
        render: Box::new(render),
    }
}

/// A headline figure; `id` lets tests and readers find it.
pub fn card(id: &str, label: &str, value: u64, shown: &str, note: &str) -> String {
    format!(
        "<div class=\"card\"><div class=\"label\">{label}</div><div class=\"value\" id=\"{id}\" data-v=\"{value}\">{}</div><div class=\"note\">{}</div></div>",
        html(shown),
        html(note)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_is_one_pass() {
        let t = "a{{x}}b{{y}}c{{unknown}}";
        let mut out = Vec::new();
        fill(t, &mut out, |name, out| {
            let v: &[u8] = match name {
                "x" => b"{{y}}",
                "y" => b"Y",
                _ => return Ok(false),
            };
            out.write_all(v)?;
            Ok(true)
        })
        .unwrap(); // ok: unit test
        assert_eq!(String::from_utf8(out).unwrap(), "a{{y}}bYc{{unknown}}"); // ok: unit test
    }
}
