//! Rule settings from a TOML rules file, `--set rule.field=value` flags
//! and a redis.conf, with errors that name the rule and the field.
//!
//! ```toml
//! cap = 50                      # every rule's cap on listed findings
//!
//! [big-string]
//! warn = "20KiB"
//! crit = "50MiB"
//!
//! [key-no-namespace]
//! enabled = false
//!
//! [expiry-cluster]
//! second-keys = 500
//! severity = "crit"             # every finding of the rule
//! ```
//!
//! Later sources win: the rules file, then the redis.conf, then each
//! `--set` in order.

use std::collections::BTreeMap;
use std::path::Path;

use rdblens_summary::rules::{RuleConfig, RuleId};
use serde::Deserialize;
use toml::{Table, Value};

/// A mistake in the rule settings; the message names where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RulesError(pub String);

impl std::fmt::Display for RulesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RulesError {}

fn err(msg: impl Into<String>) -> RulesError {
    RulesError(msg.into())
}

/// Edit distance, for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

fn unknown_rule(name: &str, origin: &str) -> RulesError {
    let best = RuleId::ALL
        .iter()
        .map(|r| (distance(name, r.name()), r.name()))
        .min()
        .filter(|(d, _)| *d <= 3)
        .map(|(_, n)| format!(" (did you mean '{n}'?)"))
        .unwrap_or_default();
    err(format!(
        "{origin}: unknown rule '{name}'{best}; rules are: {}",
        RuleId::ALL
            .iter()
            .map(|r| r.name())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Gathers settings from every source, then checks them all at once.
#[derive(Clone, Debug, Default)]
pub struct RulesBuilder {
    /// Rule name -> its fields.
    rules: BTreeMap<String, Table>,
    /// `cap` for every rule that sets none.
    cap: Option<Value>,
}

impl RulesBuilder {
    /// A builder with no settings: every rule at its defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads a TOML rules file.
    pub fn file(&mut self, path: &Path) -> Result<&mut Self, RulesError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| err(format!("cannot read rules file {}: {e}", path.display())))?;
        self.toml(&text, &path.display().to_string())
    }

    /// Adds the settings of a rules file's text; `origin` names it in errors.
    pub fn toml(&mut self, text: &str, origin: &str) -> Result<&mut Self, RulesError> {
        let table: Table = text
            .parse()
            .map_err(|e: toml::de::Error| err(format!("{origin}: {}", e.to_string().trim_end())))?;
        for (name, value) in table {
            if name == "cap" {
                self.cap = Some(value);
                continue;
            }
            if name == GROWTH_TABLE {
                // The limits of `diff --fail-on-growth` ([`growth_limits`]), not a rule.
                continue;
            }
            if RuleId::parse(&name).is_none() {
                return Err(unknown_rule(&name, origin));
            }
            let Value::Table(fields) = value else {
                return Err(err(format!(
                    "{origin}: '{name}' must be a table ([{name}] followed by its fields)"
                )));
            };
            let into = self.rule_table(&name);
            for (field, v) in fields {
                into.insert(field, v);
            }
        }
        Ok(self)
    }

    fn rule_table(&mut self, rule: &str) -> &mut Table {
        self.rules.entry(rule.to_string()).or_default()
    }

    /// Applies one `rule.field=value` (or `cap=N` for every rule). Values
    /// are TOML (`true`, `0.05`, `"20KiB"`); anything that is not valid
    /// TOML is taken as a string, so `warn=20KiB` works unquoted.
    pub fn set(&mut self, assignment: &str) -> Result<&mut Self, RulesError> {
        let origin = format!("--set {assignment}");
        let (path, value) = assignment
            .split_once('=')
            .ok_or_else(|| err(format!("{origin}: expected rule.field=value")))?;
        let value = parse_value(value.trim());
        let path = path.trim();
        if path == "cap" {
            self.cap = Some(value);
            return Ok(self);
        }
        let (rule, field) = path.split_once('.').ok_or_else(|| {
            err(format!(
                "{origin}: expected rule.field=value, e.g. big-string.warn=20KiB"
            ))
        })?;
        // Names are kebab-case; accept snake_case as typed in shells.
        let rule = rule.trim().replace('_', "-");
        if RuleId::parse(&rule).is_none() {
            return Err(unknown_rule(&rule, &origin));
        }
        let field = field.trim().replace('_', "-");
        self.rule_table(&rule).insert(field, value);
        Ok(self)
    }

    /// Takes what the audit needs from a redis.conf's directives:
    /// `lazyfree-lazy-expire` (bigkey-expiry is info, not warn, when it is on).
    pub fn server_config(&mut self, directives: &[(String, String)]) -> Result<&mut Self, RulesError> {
        for (name, value) in directives {
            if name.eq_ignore_ascii_case("lazyfree-lazy-expire") {
                let on = match value.trim().to_ascii_lowercase().as_str() {
                    "yes" => true,
                    "no" => false,
                    other => {
                        return Err(err(format!(
                            "config lazyfree-lazy-expire: expected yes or no, got {other:?}"
                        )))
                    }
                };
                self.rule_table(RuleId::BigkeyExpiry.name())
                    .insert("lazyfree-lazy-expire".into(), Value::Boolean(on));
            }
        }
        Ok(self)
    }

    /// Checks every setting and gives the configuration.
    pub fn build(&self) -> Result<RuleConfig, RulesError> {
        let mut rules = self.rules.clone();
        if let Some(cap) = &self.cap {
            for &rule in RuleId::ALL {
                rules
                    .entry(rule.name().to_string())
                    .or_default()
                    .entry("cap".to_string())
                    .or_insert_with(|| cap.clone());
            }
        }
        let mut table = Table::new();
        // Rule by rule, so that an error names its rule.
        for (name, fields) in rules {
            let mut one = Table::new();
            one.insert(name.clone(), Value::Table(fields.clone()));
            RuleConfig::deserialize(Value::Table(one))
                .map_err(|e| err(format!("rule '{name}': {}", e.to_string().trim_end())))?;
            table.insert(name, Value::Table(fields));
        }
        RuleConfig::deserialize(Value::Table(table)).map_err(|e| err(e.to_string().trim_end().to_string()))
    }
}

fn parse_value(text: &str) -> Value {
    format!("v = {text}")
        .parse::<Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(text.trim_matches('"').to_string()))
}

/// The table of a rules file that holds `diff --fail-on-growth`'s limits.
pub const GROWTH_TABLE: &str = "growth";

/// The `[growth]` table of a rules file: each limit of `diff
/// --fail-on-growth` as `(figure, limit)` text (`("total", "10%")`,
/// `("expiry-clusters", "0")`), by figure name; empty when the file
/// has no such table. The command parses and checks the limits.
pub fn growth_limits(path: &Path) -> Result<Vec<(String, String)>, RulesError> {
    let origin = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| err(format!("cannot read rules file {origin}: {e}")))?;
    growth_limits_of(&text, &origin)
}

fn growth_limits_of(text: &str, origin: &str) -> Result<Vec<(String, String)>, RulesError> {
    let table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| err(format!("{origin}: {}", e.to_string().trim_end())))?;
    let Some(growth) = table.get(GROWTH_TABLE) else {
        return Ok(Vec::new());
    };
    let Value::Table(fields) = growth else {
        return Err(err(format!(
            "{origin}: '{GROWTH_TABLE}' must be a table ([{GROWTH_TABLE}] followed by limits such as total = \"10%\")"
        )));
    };
    fields
        .iter()
        .map(|(figure, limit)| match limit {
            Value::String(s) => Ok((figure.clone(), s.clone())),
            Value::Integer(n) => Ok((figure.clone(), n.to_string())),
            other => Err(err(format!(
                "{origin}: [{GROWTH_TABLE}] {figure} = {other}: a limit is a string (\"10%\", \"50MiB\") or a number"
            ))),
        })
        .collect()
}

/// The configuration from an optional rules file, a redis.conf's
/// directives and `--set` assignments.
pub fn load(
    rules_file: Option<&Path>,
    server_config: &[(String, String)],
    sets: &[String],
) -> Result<RuleConfig, RulesError> {
    let mut b = RulesBuilder::new();
    if let Some(path) = rules_file {
        b.file(path)?;
    }
    b.server_config(server_config)?;
    for s in sets {
        b.set(s)?;
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use rdblens_summary::rules::{ByteSize, Severity};

    use super::*;

    fn built(text: &str, sets: &[&str]) -> Result<RuleConfig, RulesError> {
        let mut b = RulesBuilder::new();
        b.toml(text, "rules.toml")?;
        for s in sets {
            b.set(s)?;
        }
        b.build()
    }

    #[test]
    fn growth_limits_are_read_apart_from_the_rules() {
        let text = "[growth]\ntotal = \"10%\"\nexpiry-clusters = 0\n[big-string]\nwarn = \"20KiB\"\n";
        assert_eq!(
            growth_limits_of(text, "rules.toml").unwrap(), // ok: unit test
            [
                ("expiry-clusters".to_string(), "0".to_string()),
                ("total".to_string(), "10%".to_string())
            ]
        );
        // The audit reads the same file without taking [growth] for a rule.
        assert!(built(text, &[]).is_ok());
        assert!(growth_limits_of("[big-string]\nwarn = 1\n", "r")
            .unwrap() // ok: unit test
            .is_empty()); // ok: unit test
        let bad = growth_limits_of("[growth]\ntotal = 0.5\n", "rules.toml").unwrap_err(); // ok: unit test
        assert_eq!(
            bad.to_string(),
            "rules.toml: [growth] total = 0.5: a limit is a string (\"10%\", \"50MiB\") or a number"
        );
    }

    #[test]
    fn file_then_flags() {
        let c = built(
            "cap = 7\n[big-string]\nwarn = \"20KiB\"\ncrit = 1048576\n[key-no-namespace]\nenabled = false\n[expiry-cluster]\nseverity = \"crit\"\ncap = 3\n",
            &["big-string.warn=30KiB", "expiry_cluster.second_keys=500", "no-ttl.min-share=0.5"],
        )
        .unwrap_or_else(|e| panic!("{e}")); // ok: unit test
        assert_eq!(c.big_string.warn, ByteSize(30 * 1024));
        assert_eq!(c.big_string.crit, ByteSize(1 << 20));
        assert!(!c.key_no_namespace.enabled);
        assert_eq!(c.expiry_cluster.second_keys, 500);
        assert_eq!(c.expiry_cluster.severity, Some(Severity::Crit));
        assert_eq!(c.expiry_cluster.cap, 3, "a rule's own cap wins");
        assert_eq!(c.big_member.cap, 7, "the global cap fills the rest");
        assert_eq!(c.no_ttl.min_share, 0.5);
    }

    #[test]
    fn errors_name_the_rule_and_field() {
        let e = built("[big-strng]\nwarn = 1\n", &[]).unwrap_err().0;
        assert!(
            e.contains("unknown rule 'big-strng'") && e.contains("did you mean 'big-string'"),
            "{e}"
        );
        let e = built("[big-string]\nwrn = 1\n", &[]).unwrap_err().0;
        assert!(e.contains("rule 'big-string'") && e.contains("wrn"), "{e}");
        let e = built("", &["big-string.warn=lots"]).unwrap_err().0;
        assert!(
            e.contains("rule 'big-string'") && e.contains("\"lots\" is not a size"),
            "{e}"
        );
        let e = built("", &["big-string=5"]).unwrap_err().0;
        assert!(e.contains("expected rule.field=value"), "{e}");
        let e = built("", &["hot-key.top=-1"]).unwrap_err().0;
        assert!(e.contains("rule 'hot-key'"), "{e}");
        let e = built("big-string = 5\n", &[]).unwrap_err().0;
        assert!(e.contains("must be a table"), "{e}");
        let e = built("[big-string\n", &[]).unwrap_err().0;
        assert!(e.starts_with("rules.toml:"), "{e}");
        let e = built("", &["cold-key.severity=fatal"]).unwrap_err().0;
        assert!(e.contains("rule 'cold-key'") && e.contains("fatal"), "{e}");
    }

    #[test]
    fn lazyfree_from_redis_conf() {
        let mut b = RulesBuilder::new();
        b.server_config(&[("lazyfree-lazy-expire".into(), "yes".into())])
            .unwrap_or_else(|e| panic!("{e}")); // ok: unit test
        let c = b.build().unwrap_or_else(|e| panic!("{e}")); // ok: unit test
        assert_eq!(c.bigkey_expiry.lazyfree_lazy_expire, Some(true));
        let mut b = RulesBuilder::new();
        assert!(b
            .server_config(&[("lazyfree-lazy-expire".into(), "maybe".into())])
            .is_err());
        assert_eq!(load(None, &[], &[]), Ok(RuleConfig::default()));
    }
}
