//! Durations as the operator's flags and the CRD write them (Go syntax: "60s", "5m", "1m30s").

use std::time::Duration;

/// Parses a Go-style duration as the CRD accepts it: "60s", "5m", "1m30s", "500ms", "1h".
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?} is not a duration such as 60s, 5m, 1m30s or 500ms");
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    if let Ok(seconds) = rest.parse::<f64>() {
        return Ok(Duration::from_secs_f64(seconds));
    }
    let mut total = 0.0;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(bad)?;
        let (number, tail) = rest.split_at(split);
        let value: f64 = number.parse().map_err(|_| bad())?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        total += value
            * match unit {
                "ns" => 1e-9,
                "us" | "µs" => 1e-6,
                "ms" => 1e-3,
                "s" => 1.0,
                "m" => 60.0,
                "h" => 3600.0,
                _ => return Err(bad()),
            };
        rest = tail;
    }
    Ok(Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_go_syntax() {
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("3d").is_err());
        assert!(parse_duration("").is_err());
    }
}
