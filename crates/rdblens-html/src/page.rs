//! The page around the sections (template, stylesheet and script, all
//! inline) and the small builders the sections are written with.

use serde_json::Value;

use crate::escape::{html, key_text, script_json};

const TEMPLATE: &str = include_str!("assets/page.html");
const STYLE: &str = include_str!("assets/page.css");
const SCRIPT: &str = include_str!("assets/page.js");

/// The Content-Security-Policy of every page: nothing may be fetched, only
/// the inline stylesheet and script run, images only as data: URIs.
pub const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// A finished page's parts.
pub struct Page {
    pub title: String,
    pub subtitle: String,
    /// `(section id, label)` for the navigation bar.
    pub nav: Vec<(&'static str, &'static str)>,
    pub body: String,
    /// What the script draws the charts from.
    pub data: Value,
}

impl Page {
    pub fn render(&self) -> String {
        let nav: String = self
            .nav
            .iter()
            .map(|(id, label)| format!("<a href=\"#{id}\">{label}</a>"))
            .collect();
        fill(
            TEMPLATE,
            &[
                ("csp", CSP),
                ("title", &html(&self.title)),
                ("subtitle", &html(&self.subtitle)),
                ("style", STYLE),
                ("nav", &nav),
                ("body", &self.body),
                ("data", &script_json(&self.data)),
                ("script", SCRIPT),
                ("version", env!("CARGO_PKG_VERSION")),
            ],
        )
    }
}

/// The template with each `{{name}}` replaced, in one pass over the
/// template (a value that itself contains `{{...}}` is not looked into).
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let extra: usize = values.iter().map(|(_, v)| v.len()).sum();
    let mut out = String::with_capacity(template.len() + extra);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}").and_then(|end| {
            let name = &after[..end];
            values.iter().find(|(n, _)| *n == name).map(|(_, v)| (end, *v))
        }) {
            Some((end, value)) => {
                out.push_str(value);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// An unsigned field (0 when absent or not a number).
pub fn u(v: &Value, field: &str) -> u64 {
    v.get(field).and_then(Value::as_u64).unwrap_or(0)
}

/// A signed field (0 when absent).
pub fn i(v: &Value, field: &str) -> i64 {
    v.get(field).and_then(Value::as_i64).unwrap_or(0)
}

/// A string field ("" when absent).
pub fn s<'v>(v: &'v Value, field: &str) -> &'v str {
    v.get(field).and_then(Value::as_str).unwrap_or("")
}

/// An array field (empty when absent).
pub fn arr<'v>(v: &'v Value, field: &str) -> &'v [Value] {
    v.get(field)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
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

/// A table with a header; `sortable` tables sort on a header click,
/// `filter` adds a text box that hides the rows not containing its text.
pub struct Table {
    out: String,
    rows: usize,
}

impl Table {
    pub fn new(id: &str, cols: &[Col], sortable: bool, filter: bool) -> Table {
        let mut out = String::new();
        if filter {
            out.push_str(&format!(
                "<div class=\"tablebar\"><input class=\"filter\" type=\"search\" placeholder=\"Filter rows\" data-filter=\"{id}\" aria-label=\"Filter rows\"></div>"
            ));
        }
        let class = if sortable { "data sortable" } else { "data" };
        out.push_str(&format!(
            "<div class=\"scroll\"><table id=\"{id}\" class=\"{class}\"><thead><tr>"
        ));
        for Col(label, numeric) in cols {
            let class = if *numeric { " class=\"n\"" } else { "" };
            out.push_str(&format!("<th{class}>{label}</th>"));
        }
        out.push_str("</tr></thead><tbody>");
        Table { out, rows: 0 }
    }

    /// One row of cells made with [`num`], [`text`], [`key`], [`bar`].
    pub fn row(&mut self, cells: &[String]) {
        self.row_with("", cells);
    }

    /// A row with attributes (` id="..."`, ` data-...`).
    pub fn row_with(&mut self, attrs: &str, cells: &[String]) {
        self.out.push_str(&format!("<tr{attrs}>"));
        for c in cells {
            self.out.push_str(c);
        }
        self.out.push_str("</tr>");
        self.rows += 1;
    }

    pub fn finish(mut self) -> String {
        self.out.push_str("</tbody></table></div>");
        self.out
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
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
pub fn key(record: &Value) -> String {
    format!("<td class=\"key\"><code>{}</code></td>", html(&key_text(record)))
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

/// A section with its heading and a one-line explanation.
pub fn section(id: &str, title: &str, intro: &str, body: &str) -> String {
    format!(
        "<section id=\"{id}\"><h2>{title}</h2>{}{body}</section>\n",
        if intro.is_empty() {
            String::new()
        } else {
            format!("<p class=\"intro\">{intro}</p>")
        }
    )
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
        assert_eq!(fill(t, &[("x", "{{y}}"), ("y", "Y")]), "a{{y}}bYc{{unknown}}");
    }
}
