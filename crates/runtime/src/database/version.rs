//! Engine versions: whether the spec's asks for an upgrade, and how RDS's versions compare. Pure.

use std::cmp::Ordering;

/// What a spec engine version asks of the observed one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VersionChange {
    /// In sync: equal, a prefix ("8.0" of "8.0.42"), or older within the same major version
    /// (RDS upgraded the minor version itself).
    None,
    Upgrade,
    Refused(String),
}

pub fn engine_version_change(
    engine: &str,
    want: &str,
    have: &str,
    allow_major: bool,
) -> VersionChange {
    if want == have || have.starts_with(&format!("{want}.")) {
        return VersionChange::None;
    }
    let same_major = major_version(engine, want) == major_version(engine, have);
    match compare_versions(want, have) {
        Ordering::Equal => VersionChange::None,
        Ordering::Less if same_major => VersionChange::None,
        Ordering::Less => VersionChange::Refused(format!(
            "engineVersion {want} is older than the running {have}: RDS cannot downgrade"
        )),
        Ordering::Greater if same_major || allow_major => VersionChange::Upgrade,
        Ordering::Greater => VersionChange::Refused(format!(
            "engineVersion {want} is a major upgrade from {have}: set allowMajorVersionUpgrade: true to allow it"
        )),
    }
}

/// The major version: "8.0" for MySQL 8.0.42, "16" for PostgreSQL 16.3, "9.6" for PostgreSQL 9.6.
pub fn major_version(engine: &str, version: &str) -> String {
    let parts: Vec<&str> = version.split('.').collect();
    let first_is_major =
        engine.contains("postgres") && parts[0].parse::<u32>().is_ok_and(|v| v >= 10);
    let n = if first_is_major { 1 } else { 2 };
    parts.iter().take(n).copied().collect::<Vec<_>>().join(".")
}

/// Numeric comparison component by component; a missing component counts as 0.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    let parse = |v: &str| -> Vec<u64> {
        v.split(['.', '-', '_'])
            .map(|p| p.trim_start_matches(|c: char| !c.is_ascii_digit()))
            .map(|p| {
                p.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
                    .parse()
                    .unwrap_or(0)
            })
            .collect()
    };
    let (a, b) = (parse(a), parse(b));
    for i in 0..a.len().max(b.len()) {
        match a.get(i).unwrap_or(&0).cmp(b.get(i).unwrap_or(&0)) {
            Ordering::Equal => continue,
            other => return other,
        }
    }
    Ordering::Equal
}
