//! The one syntax of times on the command line: `--now` and both ends of
//! `--expiry-window` take the same spellings, parsed here.

use std::time::{SystemTime, UNIX_EPOCH};

use rdblens_summary::rules::Seconds;

/// The spellings [`parse`] takes, for error messages (the `--now` help
/// says the same).
pub const SYNTAX: &str = "unix seconds or milliseconds, YYYY-MM-DD[Thh:mm[:ss]] (UTC), \
     now, today, yesterday, tomorrow (midnight UTC), or now-DURATION / now+DURATION (e.g. now-12h)";

/// Numbers below this are seconds, above milliseconds (1e11 s is the year 5138).
const MS_FROM: i64 = 100_000_000_000;

const DAY_MS: i64 = 86_400_000;

/// A time as unix ms; the relative spellings count from the clock.
pub fn parse(s: &str) -> Result<i64, String> {
    let clock = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    parse_at(s, clock)
}

/// [`parse`] with the clock at `clock_ms`.
pub fn parse_at(s: &str, clock_ms: i64) -> Result<i64, String> {
    let bad = |why: &str| format!("'{s}' is not a time ({why}; expected {SYNTAX})");
    let t = s.trim();
    let midnight = clock_ms.div_euclid(DAY_MS) * DAY_MS;
    match t {
        "now" => return Ok(clock_ms),
        "today" => return Ok(midnight),
        "yesterday" => return Ok(midnight - DAY_MS),
        "tomorrow" => return Ok(midnight + DAY_MS),
        _ => {}
    }
    if let Some(offset) = t.strip_prefix("now") {
        let (sign, duration) = match offset.as_bytes().first() {
            Some(b'-') => (-1, &offset[1..]),
            Some(b'+') => (1, &offset[1..]),
            _ => return Err(bad("after `now` comes -DURATION or +DURATION")),
        };
        let secs = Seconds::parse(duration).map_err(|e| bad(&e))?.0;
        let ms = i64::try_from(secs)
            .ok()
            .and_then(|s| s.checked_mul(1000))
            .ok_or_else(|| bad("too far"))?;
        return clock_ms.checked_add(sign * ms).ok_or_else(|| bad("too far"));
    }
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        let n: i64 = t.parse().map_err(|_| bad("too large"))?;
        return if n < MS_FROM { Ok(n * 1000) } else { Ok(n) };
    }
    date_time(t).map_err(|why| bad(&why))
}

/// `YYYY-MM-DD[Thh:mm[:ss]][Z]` (UTC; a space may replace the `T`) as unix ms.
fn date_time(s: &str) -> Result<i64, String> {
    let (date, time) = match s.split_once(['T', ' ']) {
        Some((d, t)) => (d, t.strip_suffix('Z').unwrap_or(t)),
        None => (s, "00:00:00"),
    };
    let num = |p: &str, lo: i64, hi: i64| -> Result<i64, String> {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("'{p}' is not a number"));
        }
        match p.parse::<i64>() {
            Ok(v) if (lo..=hi).contains(&v) => Ok(v),
            _ => Err(format!("'{p}' out of range {lo}-{hi}")),
        }
    };
    let d: Vec<&str> = date.split('-').collect();
    let t: Vec<&str> = time.split(':').collect();
    if d.len() != 3 || !(2..=3).contains(&t.len()) {
        return Err("not a date".into());
    }
    let (y, m, day) = (num(d[0], 1970, 9999)?, num(d[1], 1, 12)?, num(d[2], 1, 31)?);
    let (h, min) = (num(t[0], 0, 23)?, num(t[1], 0, 59)?);
    let sec = if t.len() == 3 { num(t[2], 0, 59)? } else { 0 };
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(((days * 86_400) + h * 3600 + min * 60 + sec) * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-29T08:30:15.250Z.
    const CLOCK: i64 = 1_795_941_015_250;

    #[test]
    fn every_spelling() {
        let at = |s: &str| parse_at(s, CLOCK);
        assert_eq!(at("2026-11-29T08:30:15"), Ok(1_795_941_015_000));
        assert_eq!(at("2026-11-29 08:30:15Z"), Ok(1_795_941_015_000));
        assert_eq!(at("2026-11-29T08:30"), Ok(1_795_941_000_000));
        assert_eq!(at("2026-11-29"), Ok(1_795_910_400_000));
        assert_eq!(at("1795910400"), Ok(1_795_910_400_000));
        assert_eq!(at("1795910400000"), Ok(1_795_910_400_000));
        assert_eq!(at("now"), Ok(CLOCK));
        assert_eq!(at("today"), Ok(1_795_910_400_000));
        assert_eq!(at("yesterday"), Ok(1_795_910_400_000 - DAY_MS));
        assert_eq!(at("tomorrow"), Ok(1_795_910_400_000 + DAY_MS));
        assert_eq!(at("now-12h"), Ok(CLOCK - 12 * 3_600_000));
        assert_eq!(at("now+7d"), Ok(CLOCK + 7 * DAY_MS));
        assert_eq!(at("1970-01-01"), Ok(0));
        assert_eq!(at("2000-02-29T23:59:59"), Ok(951_868_799_000));
    }

    #[test]
    fn what_is_not_a_time_says_why() {
        let err = |s: &str| parse_at(s, CLOCK).unwrap_err();
        assert_eq!(
            err("soon"),
            format!("'soon' is not a time (not a date; expected {SYNTAX})")
        );
        assert!(err("2026-13-01").starts_with("'2026-13-01' is not a time ('13' out of range 1-12;"));
        assert!(err("now-3x").contains("\"3x\" is not a duration"));
        assert!(err("nowish").contains("after `now` comes -DURATION or +DURATION"));
        assert!(err("99999999999999999999").contains("too large"));
        assert!(err("").contains("not a date"));
    }
}
