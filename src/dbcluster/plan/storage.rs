//! Aurora I/O-Optimized, pure: RDS switches an existing cluster to `aurora-iopt1` once every 30
//! days, and back to Standard at any time ("Storage configurations for Amazon Aurora DB clusters",
//! Aurora.Overview.StorageReliability.html#aurora-storage-type). A switch the operator made is
//! recorded (status.ioOptimizedSince); a second one within the 30 days is refused with that reason
//! before any call, and looked at again when the 30 days are over (or at once when the spec
//! changes). A switch made outside the operator is RDS's to refuse: its message is reported.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::{ClusterModification, Facts};
use crate::database::choices::ClusterStorageType;

/// How long RDS keeps a cluster from switching to I/O-Optimized again.
pub const SWITCH_EVERY: Duration = Duration::from_secs(30 * 24 * 3600);

/// Whether the modification switches the cluster to I/O-Optimized.
pub fn switches_to_io_optimized(m: &ClusterModification) -> bool {
    m.storage_type.as_deref() == Some(ClusterStorageType::AuroraIopt1.as_str())
}

/// Why the modification's switch must wait, and for how long (None: it may be sent).
pub fn too_soon(f: &Facts, m: &ClusterModification) -> Option<(String, Duration)> {
    if !switches_to_io_optimized(m) {
        return None;
    }
    let since = (f.cluster.status.as_ref()).and_then(|s| s.io_optimized_since.as_deref())?;
    let at = |t: &str| DateTime::parse_from_rfc3339(t).ok().map(|t| t.to_utc());
    let (last, now): (DateTime<Utc>, DateTime<Utc>) = (at(since)?, at(&f.now)?);
    let left = (last + SWITCH_EVERY - now)
        .to_std()
        .ok()
        .filter(|d| !d.is_zero())?;
    let why = format!(
        "RDS switches an existing cluster to Aurora I/O-Optimized once every 30 days, and this \
         one was switched at {since}: storageType aurora-iopt1 waits until {} \
         (Aurora.Overview.StorageReliability.html)",
        (last + SWITCH_EVERY).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    Some((why, left))
}
