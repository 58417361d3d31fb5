//! Maintenance and backup windows (`ddd:hh24:mi-ddd:hh24:mi`, UTC), as both database kinds read
//! them. Pure.

/// Whether `now` is inside an RDS maintenance window (`ddd:hh24:mi-ddd:hh24:mi`, UTC, e.g.
/// `sun:05:00-sun:06:00`; a window may wrap past the end of the week). A window that cannot be
/// read is never open.
pub fn in_window(window: &str, now: &chrono::DateTime<chrono::Utc>) -> bool {
    use chrono::{Datelike, Timelike};
    fn minute_of_week(s: &str) -> Option<u32> {
        let mut parts = s.split(':');
        let day = match parts.next()?.to_ascii_lowercase().as_str() {
            "mon" => 0,
            "tue" => 1,
            "wed" => 2,
            "thu" => 3,
            "fri" => 4,
            "sat" => 5,
            "sun" => 6,
            _ => return None,
        };
        let hour: u32 = parts.next()?.parse().ok().filter(|h| *h < 24)?;
        let minute: u32 = parts.next()?.parse().ok().filter(|m| *m < 60)?;
        Some(day * 24 * 60 + hour * 60 + minute)
    }
    let Some((start, end)) = window.split_once('-') else {
        return false;
    };
    let (Some(start), Some(end)) = (minute_of_week(start), minute_of_week(end)) else {
        return false;
    };
    let now = now.weekday().num_days_from_monday() * 24 * 60 + now.hour() * 60 + now.minute();
    match start <= end {
        true => start <= now && now < end,
        false => now >= start || now < end,
    }
}
