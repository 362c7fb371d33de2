//! Everything untrusted (key names, paths, AUX fields, messages) goes
//! through here on its way into the page: HTML text and attributes, and the
//! JSON embedded in a `<script>` block.

use rdblens_summary::KeyName;
use serde::Serialize;

/// Text or attribute value escaped for HTML (`&`, `<`, `>`, `"`, `'`).
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `data` as JSON for a `<script type="application/json">` block: `<`,
/// `>` and `&` as `\u003c`, `\u003e`, `\u0026` so that neither
/// `</script>` nor `<!--` in a key name can end or change the block (they
/// only occur inside strings, where the escapes mean the same characters).
pub fn script_json(data: &impl Serialize) -> serde_json::Result<String> {
    let text = serde_json::to_string(data)?;
    let mut out = String::with_capacity(text.len() + 64);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// A key name as redis-cli quotes it (`"bin:\xff"`), not yet HTML-escaped.
pub fn key_text(key: &KeyName) -> String {
    rdblens_report::format::quote_key(key.as_bytes())
}

/// [`key_text`] without the quotes, for namespace labels (`user`, `bin\xff`).
pub fn prefix_text(key: &KeyName) -> String {
    rdblens_parser::escape_bytes(key.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(
            html(r#"<script>alert("x")</script>&'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"
        );
        let data = vec!["</script><!--&\u{2028}"];
        assert_eq!(
            script_json(&data).unwrap(), // ok: unit test
            r#"["\u003c/script\u003e\u003c!--\u0026\u2028"]"#
        );
        let back: Vec<String> = serde_json::from_str(&script_json(&data).unwrap()).unwrap(); // ok: unit test
        assert_eq!(back, data);
        assert_eq!(key_text(&KeyName::new(b"bin\xff\x00")), r#""bin\xff\x00""#);
        assert_eq!(key_text(&KeyName::new(b"a\"b")), r#""a\"b""#);
        assert_eq!(prefix_text(&KeyName::new(b"user")), "user");
    }
}
