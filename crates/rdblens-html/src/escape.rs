//! Everything untrusted (key names, paths, AUX fields, messages) goes
//! through here on its way into the page: HTML text and attributes, and the
//! JSON embedded in a `<script>` block.

use serde_json::Value;

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

/// JSON for a `<script type="application/json">` block: `<`, `>` and `&`
/// as `\u003c`, `\u003e`, `\u0026` so that neither `</script>` nor `<!--`
/// in a key name can end or change the block (they only occur inside
/// strings, where the escapes mean the same characters).
pub fn script_json(v: &Value) -> String {
    let text = v.to_string();
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
    out
}

/// The bytes of a JSON key name: `{"key": "..."}` or `{"key_hex": "..."}`
/// (docs/json-schema.md), also as fields of a key record.
pub fn key_bytes(v: &Value) -> Option<Vec<u8>> {
    if let Some(s) = v.get("key").and_then(Value::as_str) {
        return Some(s.as_bytes().to_vec());
    }
    let hex = v.get("key_hex")?.as_str()?;
    let digits = hex.as_bytes();
    if digits.len() % 2 != 0 {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| {
            let s = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(s, 16).ok()
        })
        .collect()
}

/// A key name as redis-cli quotes it (`"bin:\xff"`), not yet HTML-escaped;
/// `?` when the value holds no key name.
pub fn key_text(v: &Value) -> String {
    match key_bytes(v) {
        Some(bytes) => rdblens_report::format::quote_key(&bytes),
        None => "?".into(),
    }
}

/// [`key_text`] without the quotes, for namespace labels (`user`, `bin\xff`).
pub fn prefix_text(v: &Value) -> String {
    match key_bytes(v) {
        Some(bytes) => rdblens_parser::escape_bytes(&bytes),
        None => "?".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes() {
        assert_eq!(
            html(r#"<script>alert("x")</script>&'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"
        );
        let v = json!({"k": "</script><!--&"});
        assert_eq!(script_json(&v), r#"{"k":"\u003c/script\u003e\u003c!--\u0026"}"#);
        let back: Value = serde_json::from_str(&script_json(&v)).unwrap(); // ok: unit test
        assert_eq!(back, v);
        assert_eq!(key_text(&json!({"key_hex": "62696eff00"})), r#""bin\xff\x00""#);
        assert_eq!(key_text(&json!({"key": "a\"b"})), r#""a\"b""#);
        assert_eq!(prefix_text(&json!({"key": "user"})), "user");
        assert_eq!(key_text(&json!({"key_hex": "6"})), "?");
    }
}
