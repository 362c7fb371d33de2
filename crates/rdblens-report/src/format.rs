//! Small text helpers shared by the table renderer.

/// Bytes in binary units (`512 B`, `1.5 KiB`) and counts with thousands
/// separators (`1,234,567`), written as in finding messages.
pub use rdblens_audit::text::{bytes as human_bytes, count as thousands};

/// `part` as a percentage of `whole` with one decimal (`12.5%`); `-` when `whole` is 0.
pub fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// A key as redis-cli quotes it: never raw control bytes on a terminal.
pub fn quote_key(key: &[u8]) -> String {
    format!("\"{}\"", rdblens_parser::escape_bytes(key))
}

/// Keys longer than this are shortened in tables (JSON keeps them whole).
pub const KEY_DISPLAY_BYTES: usize = 64;

/// [`quote_key`], shortened with "..." and the full length for long keys.
pub fn short_key(key: &[u8]) -> String {
    if key.len() <= KEY_DISPLAY_BYTES {
        return quote_key(key);
    }
    format!(
        "{}... ({} bytes)",
        quote_key(&key[..KEY_DISPLAY_BYTES]).trim_end_matches('"'),
        key.len()
    )
}

/// A horizontal bar of `width` cells for `value` out of `max`, in eighths.
pub fn bar(value: u64, max: u64, width: usize) -> String {
    if max == 0 || value == 0 {
        return String::new();
    }
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = ((value as f64 / max as f64) * (width * 8) as f64).round() as usize;
    let eighths = eighths.max(1);
    let mut s = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        s.push(PARTS[eighths % 8]);
    }
    s
}

/// Unix ms as `YYYY-MM-DD HH:MM:SS` UTC.
pub fn utc(ms: i64) -> String {
    let (y, m, d, hh, mm, ss) = civil(ms);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}")
}

/// Unix ms as (year, month, day, hour, minute, second), UTC
/// (civil-from-days, Howard Hinnant's algorithm; a date crate would be the
/// only dependency it needs).
pub fn civil(ms: i64) -> (i64, i64, i64, i64, i64, i64) {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, sod / 3600, (sod % 3600) / 60, sod % 60)
}

/// A duration in the largest sensible unit: `45s`, `12m`, `3.5h`, `9.2d`.
pub fn duration(ms: i64) -> String {
    let s = ms as f64 / 1000.0;
    if s.abs() < 60.0 {
        format!("{s:.0}s")
    } else if s.abs() < 3600.0 {
        format!("{:.0}m", s / 60.0)
    } else if s.abs() < 86_400.0 {
        format!("{:.1}h", s / 3600.0)
    } else {
        format!("{:.1}d", s / 86_400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(quote_key(b"a\x00\n\"b"), "\"a\\x00\\n\\\"b\"");
        assert_eq!(utc(0), "1970-01-01 00:00:00");
        assert_eq!(utc(1_950_000_000_000), "2031-10-17 10:40:00");
        assert_eq!(bar(8, 8, 4), "████");
        assert_eq!(bar(1, 8, 4), "▌");
        assert_eq!(duration(90_000), "2m");
    }
}
