//! Growth alerts: `rdblens diff --fail-on-growth
//! total=10%,keys=5%,namespace=20%,namespace-keys=20%,key=50MiB,expiry-clusters=0`.
//! Each limit is a percentage of the old figure or an absolute amount
//! (`expiry-clusters`: how many new expiry clusters are let pass); a figure
//! that grew by more than its limit is an alert, and the run fails (exit 1)
//! so that a nightly job or a CI step notices.

//! The limits and the alert type live here; `model` checks the figures
//! (`growth_alerts`) and `table` words an alert (its `Display`).

use rdblens_summary::rules::ByteSize;
use serde::Serialize;

/// How much a figure may grow.
#[derive(Clone, Debug, PartialEq)]
pub enum Amount {
    /// Percent of the old figure (not applied when the old figure is 0:
    /// growth from nothing has no percentage; an absolute limit catches it).
    Percent(f64),
    /// Bytes for memory limits, keys for `keys`.
    Absolute(u64),
}

/// One limit as given, e.g. `namespace=20%`.
#[derive(Clone, Debug, PartialEq)]
pub struct Limit {
    /// The amount parsed.
    pub amount: Amount,
    /// The text given (`20%`, `50MiB`), shown in alerts.
    pub text: String,
}

impl Limit {
    /// True if growing from `old` to `new` is more than this limit allows.
    pub(super) fn crossed(&self, old: u64, new: u64) -> bool {
        let Some(growth) = new.checked_sub(old).filter(|&g| g > 0) else {
            return false;
        };
        match self.amount {
            Amount::Percent(p) => old > 0 && growth as f64 * 100.0 > p * old as f64,
            Amount::Absolute(n) => growth > n,
        }
    }
}

/// The limits of `--fail-on-growth`; `None` is a figure not checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrowthLimits {
    /// Total estimated memory.
    pub total: Option<Limit>,
    /// Total number of keys.
    pub keys: Option<Limit>,
    /// Estimated memory of any namespace prefix (levels 1 and 2).
    pub namespace: Option<Limit>,
    /// Keys of any namespace prefix (levels 1 and 2).
    pub namespace_keys: Option<Limit>,
    /// Estimated memory of any key of the top lists.
    pub key: Option<Limit>,
    /// Expiry clusters the new snapshot has and the old one had not (an
    /// absolute number: `expiry-clusters=0` alerts on any new cluster).
    pub expiry_clusters: Option<Limit>,
}

const EXAMPLE: &str = "e.g. total=10%,keys=5%,namespace=20%,key=50MiB";

/// The figures `--fail-on-growth` limits, as it names them.
const FIGURES: &str = "total, keys, namespace, namespace-keys, key or expiry-clusters";

impl GrowthLimits {
    /// These limits, and `base`'s for the figures these leave out (the
    /// flag's limits over a rules file's).
    pub fn over(self, base: GrowthLimits) -> GrowthLimits {
        GrowthLimits {
            total: self.total.or(base.total),
            keys: self.keys.or(base.keys),
            namespace: self.namespace.or(base.namespace),
            namespace_keys: self.namespace_keys.or(base.namespace_keys),
            key: self.key.or(base.key),
            expiry_clusters: self.expiry_clusters.or(base.expiry_clusters),
        }
    }

    /// Parses `what=amount[,what=amount...]`; an error naming the part that is wrong.
    pub fn parse(spec: &str) -> Result<GrowthLimits, String> {
        let mut limits = GrowthLimits::default();
        for part in spec.split(',').map(str::trim) {
            let Some((what, value)) = part.split_once('=') else {
                return Err(format!("{part:?} is not WHAT=LIMIT ({EXAMPLE})"));
            };
            let (what, value) = (what.trim(), value.trim());
            let slot = match what {
                "total" => &mut limits.total,
                "keys" => &mut limits.keys,
                "namespace" => &mut limits.namespace,
                "namespace-keys" => &mut limits.namespace_keys,
                "key" => &mut limits.key,
                "expiry-clusters" => &mut limits.expiry_clusters,
                _ => return Err(format!("{what:?} is not a figure to limit ({FIGURES})")),
            };
            if slot.is_some() {
                return Err(format!("{what} is given more than once"));
            }
            let counts = what == "keys" || what == "namespace-keys";
            let amount = match value.strip_suffix('%') {
                Some(_) if what == "expiry-clusters" => {
                    return Err(format!(
                        "{what}={value}: new expiry clusters are counted, not a percentage (e.g. expiry-clusters=0)"
                    ))
                }
                Some(p) => match p.trim().parse::<f64>() {
                    Ok(p) if p.is_finite() && p >= 0.0 => Amount::Percent(p),
                    _ => return Err(format!("{what}={value}: {p:?} is not a percentage ({EXAMPLE})")),
                },
                None if counts => match value.parse::<u64>() {
                    Ok(n) => Amount::Absolute(n),
                    Err(_) => {
                        return Err(format!(
                            "{what}={value}: {value:?} is not a percentage or a number of keys (e.g. {what}=5% or {what}=1000)"
                        ))
                    }
                },
                None if what == "expiry-clusters" => match value.parse::<u64>() {
                    Ok(n) => Amount::Absolute(n),
                    Err(_) => {
                        return Err(format!(
                            "{what}={value}: {value:?} is not a number of clusters (e.g. expiry-clusters=0)"
                        ))
                    }
                },
                None => match ByteSize::parse(value) {
                    Ok(size) => Amount::Absolute(size.0),
                    Err(_) => {
                        return Err(format!(
                            "{what}={value}: {value:?} is not a percentage or a size (e.g. {what}=10% or {what}=50MiB)"
                        ))
                    }
                },
            };
            *slot = Some(Limit {
                amount,
                text: value.to_string(),
            });
        }
        Ok(limits)
    }
}

/// The figure an alert is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GrowthWhat {
    /// Total estimated memory, bytes.
    Total,
    /// Total keys.
    Keys,
    /// A namespace prefix's estimated memory, bytes.
    Namespace,
    /// A namespace prefix's keys.
    NamespaceKeys,
    /// A key's estimated memory, bytes.
    Key,
    /// An expiry cluster the old snapshot had not: `old` 0, `new` its keys.
    ExpiryCluster,
}

impl GrowthWhat {
    /// The name `--fail-on-growth` gives it.
    pub fn name(self) -> &'static str {
        match self {
            GrowthWhat::Total => "total",
            GrowthWhat::Keys => "keys",
            GrowthWhat::Namespace => "namespace",
            GrowthWhat::NamespaceKeys => "namespace-keys",
            GrowthWhat::Key => "key",
            GrowthWhat::ExpiryCluster => "expiry-clusters",
        }
    }
}

/// A figure that grew by more than its limit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GrowthAlert {
    /// `total`, `keys`, `namespace`, `namespace_keys`, `key` or `expiry_cluster`.
    pub what: GrowthWhat,
    /// The namespace prefix (`cache:page`), the key (bytes that are not
    /// UTF-8 replaced by U+FFFD), or the expiry cluster's window (ISO 8601,
    /// `2027-01-15T08:00:00Z/2027-01-15T08:01:00Z`); null for `total` and
    /// `keys`.
    pub name: Option<String>,
    /// The key's database; only for `key`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db: Option<u64>,
    /// The old figure (bytes, or keys). For a key the old top lists did not
    /// hold: the most it can have been (the smallest of its type's full
    /// list), or 0 when it was not in the old dump.
    pub old: u64,
    /// The new figure.
    pub new: u64,
    /// `new - old`.
    pub change: i64,
    /// The limit crossed, as given (`10%`, `50MiB`).
    pub threshold: String,
}

/// An alert on `what`: `name` (bytes, shown as UTF-8) grew from `old` to `new`.
pub(super) fn alert(what: GrowthWhat, name: Option<&[u8]>, limit: &Limit, old: u64, new: u64) -> GrowthAlert {
    GrowthAlert {
        what,
        name: name.map(|n| String::from_utf8_lossy(n).into_owned()),
        db: None,
        old,
        new,
        change: i64::try_from(new.saturating_sub(old)).unwrap_or(i64::MAX),
        threshold: limit.text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_and_refuse() {
        let l = GrowthLimits::parse("total=10%, keys=1000,namespace=2.5%,key=50MiB").unwrap(); // ok: unit test
        assert_eq!(l.total.map(|l| l.amount), Some(Amount::Percent(10.0)));
        assert_eq!(l.keys.map(|l| l.amount), Some(Amount::Absolute(1000)));
        assert_eq!(l.namespace.map(|l| l.amount), Some(Amount::Percent(2.5)));
        assert_eq!(l.key.map(|l| l.amount), Some(Amount::Absolute(50 << 20)));
        assert_eq!(
            GrowthLimits::parse("total=abc"),
            Err("total=abc: \"abc\" is not a percentage or a size (e.g. total=10% or total=50MiB)".into())
        );
        assert!(GrowthLimits::parse("size=10%").is_err());
        assert!(GrowthLimits::parse("total=10%,total=5%").is_err());
        assert!(GrowthLimits::parse("total=-5%").is_err());
        assert!(GrowthLimits::parse("keys=1MiB").is_err());
        assert!(GrowthLimits::parse("").is_err());
        let l = GrowthLimits::parse("namespace-keys=100,expiry-clusters=0").unwrap(); // ok: unit test
        assert_eq!(l.namespace_keys.map(|l| l.amount), Some(Amount::Absolute(100)));
        assert_eq!(l.expiry_clusters.map(|l| l.amount), Some(Amount::Absolute(0)));
        assert_eq!(
            GrowthLimits::parse("expiry-clusters=10%"),
            Err("expiry-clusters=10%: new expiry clusters are counted, not a percentage (e.g. expiry-clusters=0)".into())
        );
        assert!(GrowthLimits::parse("namespace-keys=1MiB").is_err());
        assert!(GrowthLimits::parse("expiry-clusters=1MiB").is_err());
    }

    #[test]
    fn more_than_the_limit_crosses_it() {
        let pct = Limit {
            amount: Amount::Percent(10.0),
            text: "10%".into(),
        };
        assert!(!pct.crossed(100, 110));
        assert!(pct.crossed(100, 111));
        assert!(!pct.crossed(0, 1_000_000), "no percentage of nothing");
        assert!(!pct.crossed(200, 100));
        let abs = Limit {
            amount: Amount::Absolute(50),
            text: "50".into(),
        };
        assert!(!abs.crossed(0, 50));
        assert!(abs.crossed(0, 51));
    }
}
