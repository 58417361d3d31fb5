//! Durations as the operator's flags and the CRD write them: Go syntax ("60s", "5m", "1m30s"),
//! parsed by `kube::core::Duration`, refusing what would make no sense as an interval.

use std::time::Duration;

/// The shortest spec.driftInterval honoured (the CRD refuses less; older objects are raised to it),
/// so one tenant cannot make the operator throttle the whole account's RDS API.
pub const MIN_SPEC_INTERVAL: Duration = Duration::from_secs(10);

/// `d` stretched by a random factor in [1, 1 + `spread`): retries spread out instead of arriving
/// together, and never come sooner than planned.
pub fn jitter(d: Duration, spread: f64) -> Duration {
    use rand::RngExt;
    d.mul_f64(1.0 + rand::rng().random_range(0.0..spread.max(f64::EPSILON)))
}

/// Parses a positive Go-style duration: "60s", "5m", "1m30s", "500ms", "1h". Zero, negative,
/// unit-less and absurdly large values are refused with a message saying why.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = |why: &str| {
        format!(
            "{text:?} is not a usable duration ({why}); write one such as 60s, 5m, 1m30s or 500ms"
        )
    };
    let text = text.trim();
    // kube's parser multiplies floats into a std Duration, which panics past its range: refuse
    // numbers no interval needs (over a billion of any unit) before it sees them.
    let huge = text
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|n| !n.is_empty())
        .any(|n| n.parse::<f64>().map_or(true, |v| !v.is_finite() || v > 1e9));
    if text.len() > 64 || huge {
        return Err(bad("too large"));
    }
    let parsed: kube::core::Duration = text.parse().map_err(|e| bad(&format!("{e}")))?;
    if parsed.is_negative() {
        return Err(bad("negative"));
    }
    let duration = Duration::from(parsed);
    if duration.is_zero() {
        return Err(bad("zero would poll without pause"));
    }
    Ok(duration)
}

/// Now, as RFC 3339 to the second: the time a condition that changes is stamped with.
pub fn now() -> String {
    rfc3339(std::time::SystemTime::now())
}

/// A time as RFC 3339, to the second.
pub fn rfc3339(t: std::time::SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// How long ago `earlier` was at `now` (both RFC 3339); None when either cannot be read, or
/// `earlier` is later.
pub fn since(earlier: &str, now: &str) -> Option<Duration> {
    let at = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    (at(now)? - at(earlier)?).to_std().ok()
}

/// The delay after `failures` failures in a row: 2 s, 4 s, 8 s... up to 5 min.
pub fn backoff_delay(failures: u32) -> Duration {
    let secs = 2u64.saturating_pow(failures.clamp(1, 9));
    Duration::from_secs(secs.min(300))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_only_lengthens_and_spreads() {
        let d = Duration::from_secs(8);
        let waits: Vec<Duration> = (0..200).map(|_| jitter(d, 0.25)).collect();
        assert!(
            waits
                .iter()
                .all(|w| *w >= d && *w < Duration::from_secs(10))
        );
        let distinct: std::collections::BTreeSet<_> = waits.iter().collect();
        assert!(distinct.len() > 100, "spread out: {}", distinct.len());
    }

    #[test]
    fn durations_in_go_syntax() {
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration(" 5s "), Ok(Duration::from_secs(5)));
    }

    #[test]
    fn nonsense_is_refused_without_a_panic() {
        for (text, why) in [
            ("0s", "zero"),
            ("0", "zero"),
            ("-1s", "negative"),
            ("-1", "unit"),
            ("7", "unit"),
            ("inf", "number"),
            ("NaN", "number"),
            ("1e30s", "unit"),
            ("99999999999999999999h", "too large"),
            ("1e400", "unit"),
            ("soon", "number"),
            ("3d", "unit"),
            ("", "zero"),
        ] {
            let err = parse_duration(text).expect_err(text);
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }
}
