//! The health both database kinds report from CloudWatch (the observer's health poll), and the
//! warnings it and RDS's own answers give: storage headroom running out before the storage can
//! grow, and a server certificate about to expire. Pure: the figures and the time are facts.
//! Doc comments here become `kubectl explain` text.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use crate::rds_state::ObservedHealth;

/// Below this percent of storage headroom, a warning goes out.
pub const STORAGE_WARNING_PERCENT: i64 = 10;
/// A server certificate that expires within this many days is reported.
pub const CERTIFICATE_WARNING_DAYS: i64 = 30;
/// The CA RDS recommends, whose server certificates RDS renews by itself
/// ("Rotating your SSL/TLS certificate", UsingWithRDS.SSL-certificate-rotation.html).
pub const RECOMMENDED_CA: &str = "rds-ca-rsa2048-g1";

const MIB: f64 = (1u64 << 20) as f64;
const GIB: f64 = (1u64 << 30) as f64;

/// What CloudWatch says of the database over the latest minute (RDS publishes its metrics once a
/// minute; the operator reads them every --health-interval). A figure CloudWatch has none of is
/// left out.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthStatus {
    /// Of a replica: how many seconds it is behind its source (ReplicaLag, the highest in the
    /// minute); -1 while replication is not active.
    pub replica_lag_seconds: Option<i64>,
    /// Free storage in MiB (FreeStorageSpace, the lowest in the minute).
    #[serde(rename = "freeStorageMiB")]
    pub free_storage_mib: Option<i64>,
    /// Free storage as a percent of what the storage may grow to: maxAllocatedStorage with storage
    /// autoscaling, else the allocated storage. Under 10 a warning goes out.
    pub storage_headroom_percent: Option<i64>,
    /// Percent of CPU in use (CPUUtilization, the average over the minute).
    pub cpu_percent: Option<i64>,
    /// Client connections (DatabaseConnections, the highest in the minute).
    pub connections: Option<i64>,
}

/// The figures as status shows them; `allocated` and `max_allocated` are the instance's storage
/// and its autoscaling limit, in GiB.
pub fn status(
    h: &ObservedHealth,
    allocated: Option<i32>,
    max_allocated: Option<i32>,
) -> HealthStatus {
    let whole = |v: Option<f64>| v.map(|v| v.round() as i64);
    HealthStatus {
        replica_lag_seconds: whole(h.replica_lag_seconds),
        free_storage_mib: h.free_storage_bytes.map(|b| (b / MIB).floor() as i64),
        storage_headroom_percent: headroom(h.free_storage_bytes, allocated, max_allocated),
        cpu_percent: whole(h.cpu_percent),
        connections: whole(h.connections),
    }
}

/// Free storage and room to grow, as a percent of the most the storage may reach.
fn headroom(free: Option<f64>, allocated: Option<i32>, max: Option<i32>) -> Option<i64> {
    let (free, allocated) = (free?, f64::from(allocated.filter(|a| *a > 0)?) * GIB);
    let limit = f64::from(max.unwrap_or(0)) * GIB;
    let limit = limit.max(allocated);
    let used = (allocated - free).max(0.0);
    Some((((limit - used) / limit) * 100.0).floor() as i64)
}

/// What the Prometheus gauges show of a database, from the status written (`health_metrics`).
pub fn gauges(
    status: &crate::database::status::DatabaseStatus,
    certificate_valid_till: Option<&str>,
) -> crate::health_metrics::DatabaseHealth {
    let h = status.health.clone().unwrap_or_default();
    let float = |v: Option<i64>| v.map(|v| v as f64);
    crate::health_metrics::DatabaseHealth {
        replica_lag_seconds: float(h.replica_lag_seconds),
        free_storage_bytes: h.free_storage_mib.map(|m| m as f64 * MIB),
        storage_headroom_percent: float(h.storage_headroom_percent),
        cpu_percent: float(h.cpu_percent),
        connections: float(h.connections),
        certificate_expiry_seconds: (certificate_valid_till)
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.timestamp() as f64),
        alarms: (status.alarms.iter())
            .map(|a| (a.metric.clone(), a.state.clone()))
            .collect(),
    }
}

/// After a pass: the gauges of the database `meta` (of `kind`) from the status written, or none
/// once the object is let go (`removed`).
pub fn report_gauges(
    healths: &crate::health_metrics::Healths,
    (meta, kind): (&kube::api::ObjectMeta, &'static str),
    written: Option<(&crate::database::status::DatabaseStatus, Option<&str>)>,
    removed: bool,
) {
    let uid = meta.uid.as_deref().unwrap_or_default();
    if let Some((status, certificate_valid_till)) = written {
        let labels = crate::health_metrics::DatabaseLabels {
            object_namespace: meta.namespace.clone().unwrap_or_default(),
            object_name: meta.name.clone().unwrap_or_default(),
            kind,
        };
        healths.set(uid, Some((labels, gauges(status, certificate_valid_till))));
    }
    if removed {
        healths.set(uid, None);
    }
}

/// Why an operation gated on a replica's lag waits (None: it may go): with `maxLagSeconds` (`max`)
/// set, while the replica `who` is further behind its source `source` than that, its lag is not
/// known, or it is -1, replication not active ("If the ReplicaLag metric returns -1, then
/// replication is currently not active", USER_MariaDB.Replication.ReadReplicas.Monitor.html).
/// `what` is the operation, as the message names it.
pub fn lag_hold(
    max: Option<i32>,
    lag: Option<f64>,
    (who, source, what): (&str, &str, &str),
) -> Option<String> {
    let max = max?;
    let until = format!("{what} waits until {who} is at most {max} s behind (maxLagSeconds)");
    Some(match lag {
        None => format!("{who}'s replica lag is not known yet (CloudWatch ReplicaLag); {until}"),
        Some(l) if l < 0.0 => {
            format!("{who}'s replication is not active (ReplicaLag -1); {until}")
        }
        Some(l) if l > f64::from(max) => format!(
            "{who} is {} s behind {source}, over maxLagSeconds {max}; {what} waits until it \
             catches up",
            l.round() as i64
        ),
        Some(_) => return None,
    })
}

/// A warning the health gives: its Event reason and its words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub reason: &'static str,
    pub message: String,
}

/// The storage warning, when the headroom is under [`STORAGE_WARNING_PERCENT`].
pub fn storage_warning(h: &HealthStatus, autoscaling: bool) -> Option<Warning> {
    let percent = h.storage_headroom_percent?;
    if percent >= STORAGE_WARNING_PERCENT {
        return None;
    }
    let free = h.free_storage_mib.unwrap_or_default();
    let what = match autoscaling {
        true => "before storage autoscaling's limit; raise maxAllocatedStorage",
        false => "of the allocated storage; raise allocatedStorage or set maxAllocatedStorage",
    };
    Some(Warning {
        reason: "StorageHeadroomLow",
        message: format!("storage headroom is {percent}% ({free} MiB free) {what}"),
    })
}

/// The certificate warning, when the server certificate expires within
/// [`CERTIFICATE_WARNING_DAYS`] of `now` (RFC 3339 both), with the CA that would fix it.
pub fn certificate_warning(
    valid_till: Option<&str>,
    ca: Option<&str>,
    now: &str,
) -> Option<Warning> {
    let till = chrono::DateTime::parse_from_rfc3339(valid_till?).ok()?;
    let now = chrono::DateTime::parse_from_rfc3339(now).ok()?;
    let days = (till - now).num_days();
    if days >= CERTIFICATE_WARNING_DAYS {
        return None;
    }
    let fix = match ca {
        Some(ca) if ca.eq_ignore_ascii_case(RECOMMENDED_CA) => "rds-ca-rsa4096-g1",
        _ => RECOMMENDED_CA,
    };
    let when = match days {
        d if d < 0 => format!("expired on {}", till.to_rfc3339()),
        d => format!("expires in {d} days ({})", till.to_rfc3339()),
    };
    Some(Warning {
        reason: "CertificateExpiring",
        message: format!(
            "the server certificate (CA {}) {when}; set caCertificateIdentifier: {fix}",
            ca.unwrap_or("unknown")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(free_gib: f64) -> ObservedHealth {
        ObservedHealth {
            replica_lag_seconds: Some(12.4),
            free_storage_bytes: Some(free_gib * GIB),
            cpu_percent: Some(7.6),
            connections: Some(3.0),
        }
    }

    /// (free GiB, allocated, maxAllocated) -> headroom %, warning: with autoscaling the room to
    /// grow counts, without it only the free storage.
    #[test]
    fn storage_headroom_counts_the_room_autoscaling_leaves_and_warns_under_ten_percent() {
        let rows = [
            (10.0, 20, None, 50, false),
            (1.5, 20, None, 7, true),
            (1.5, 20, Some(100), 81, false),
            (1.5, 20, Some(20), 7, true),
            (0.0, 100, Some(105), 4, true),
        ];
        for (free, allocated, max, percent, warns) in rows {
            let h = status(&observed(free), Some(allocated), max);
            assert_eq!(
                h.storage_headroom_percent,
                Some(percent),
                "{free} {allocated} {max:?}"
            );
            let warning = storage_warning(&h, max.is_some());
            assert_eq!(warning.is_some(), warns, "{free} {allocated} {max:?}");
        }
        let h = status(&observed(1.5), Some(20), None);
        assert_eq!(
            (
                h.replica_lag_seconds,
                h.free_storage_mib,
                h.cpu_percent,
                h.connections
            ),
            (Some(12), Some(1536), Some(8), Some(3))
        );
        let w = storage_warning(&h, false).unwrap();
        assert_eq!(w.reason, "StorageHeadroomLow");
        assert!(
            w.message.contains("7%") && w.message.contains("allocatedStorage"),
            "{}",
            w.message
        );
    }

    #[test]
    fn unknown_storage_gives_no_headroom_and_no_warning() {
        let h = status(&ObservedHealth::default(), Some(20), None);
        assert_eq!(h, HealthStatus::default());
        assert_eq!(storage_warning(&h, false), None);
        let h = status(&observed(1.0), None, None);
        assert_eq!(
            h.storage_headroom_percent, None,
            "an Aurora instance has no allocation"
        );
    }

    /// (valid till, CA) -> the warning names the CA that fixes it, or none past 30 days.
    #[test]
    fn a_certificate_within_thirty_days_is_reported_with_the_ca_that_fixes_it() {
        let now = "2026-12-06T12:00:00Z";
        let rows = [
            ("2027-03-01T00:00:00Z", "rds-ca-rsa2048-g1", None),
            ("2027-01-05T12:00:00Z", "rds-ca-rsa2048-g1", None),
            ("2027-01-04T12:00:00Z", "rds-ca-2019", Some(RECOMMENDED_CA)),
            (
                "2026-12-20T00:00:00Z",
                "rds-ca-rsa2048-g1",
                Some("rds-ca-rsa4096-g1"),
            ),
            ("2024-08-22T17:08:50Z", "rds-ca-2019", Some(RECOMMENDED_CA)),
        ];
        for (till, ca, fix) in rows {
            let w = certificate_warning(Some(till), Some(ca), now);
            assert_eq!(
                w.as_ref()
                    .map(|w| w.message.ends_with(&format!(": {}", fix.unwrap_or("")))),
                fix.map(|_| true),
                "{till} {ca}: {w:?}"
            );
        }
        let expired = certificate_warning(Some("2024-08-22T17:08:50Z"), Some("rds-ca-2019"), now);
        assert!(expired.unwrap().message.contains("expired on"));
        assert_eq!(certificate_warning(None, None, now), None);
    }
}
