//! Number formatting for finding messages and, through the report crate,
//! for tables: one definition of how rdblens writes bytes and counts.

/// `512 B`, `1.5 KiB`, `3.2 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// `1,234,567`.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `12.5%`.
pub fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// `45s`, `12m`, `3.5h`, `30.0d`.
pub fn duration_secs(s: u64) -> String {
    let s = s as f64;
    if s < 60.0 {
        format!("{s:.0}s")
    } else if s < 3600.0 {
        format!("{:.0}m", s / 60.0)
    } else if s < 86_400.0 {
        format!("{:.1}h", s / 3600.0)
    } else {
        format!("{:.1}d", s / 86_400.0)
    }
}

/// A size as a rules file writes it: `10MiB`, `4KiB`, `100`.
pub fn size_setting(n: u64) -> String {
    match n {
        0 => "0".into(),
        n if n % (1 << 30) == 0 => format!("{}GiB", n >> 30),
        n if n % (1 << 20) == 0 => format!("{}MiB", n >> 20),
        n if n % (1 << 10) == 0 => format!("{}KiB", n >> 10),
        n => n.to_string(),
    }
}

/// A duration as a rules file writes it: `30d`, `12h`, `90m`, `45s`.
pub fn duration_setting(s: u64) -> String {
    match s {
        0 => "0".into(),
        s if s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// A namespace as reported: the marker for keys without the separator
/// becomes `(no namespace)`.
pub fn namespace(ns: &[u8], separator: u8) -> String {
    if ns == [separator] {
        "(no namespace)".to_string()
    } else {
        String::from_utf8_lossy(ns).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(percent(0.125), "12.5%");
        assert_eq!(duration_secs(2_592_000), "30.0d");
        assert_eq!(namespace(b":", b':'), "(no namespace)");
        assert_eq!(namespace(b"user", b':'), "user");
        assert_eq!(size_setting(10 << 20), "10MiB");
        assert_eq!(size_setting(4096), "4KiB");
        assert_eq!(size_setting(100), "100");
        assert_eq!(duration_setting(2_592_000), "30d");
        assert_eq!(duration_setting(5400), "90m");
    }
}
