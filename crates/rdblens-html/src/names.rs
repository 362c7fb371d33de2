//! The names the JSON document gives the model's enums, for the page's
//! text: matched here so that a new variant fails to compile, not shows
//! an empty cell.

use rdblens_summary::acc::names::NameProblem;
use rdblens_summary::acc::top::Metric;

/// A naming problem's id (`key-long`...), as in the JSON.
pub fn problem(p: NameProblem) -> &'static str {
    match p {
        NameProblem::KeyLong => "key-long",
        NameProblem::KeyOver30 => "key-over30",
        NameProblem::KeyChars => "key-chars",
        NameProblem::KeyBraces => "key-braces",
        NameProblem::KeyNoNamespace => "key-no-namespace",
        NameProblem::KeyNotUtf8 => "key-not-utf8",
    }
}

/// A top list's metric (`memory`, `serialized`, `elements`...), as in the JSON.
pub fn metric(m: Metric) -> &'static str {
    match m {
        Metric::Memory => "memory",
        Metric::Serialized => "serialized",
        Metric::Elements => "elements",
        Metric::Idle => "idle",
        Metric::Freq => "freq",
        Metric::KeyOrder => "key_order",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names are the JSON's.
    #[test]
    fn names_are_the_json_names() {
        for p in NameProblem::ALL {
            let json = serde_json::to_string(&p).unwrap(); // ok: unit test
            assert_eq!(json, format!("\"{}\"", problem(p)));
        }
        for m in [
            Metric::Memory,
            Metric::Serialized,
            Metric::Elements,
            Metric::Idle,
            Metric::Freq,
            Metric::KeyOrder,
        ] {
            let json = serde_json::to_string(&m).unwrap(); // ok: unit test
            assert_eq!(json, format!("\"{}\"", metric(m)));
        }
    }
}
