//! A database's CloudWatch alarms (spec.alarms): one per metric that matters (free storage, CPU,
//! connections, and a replica's lag), made with PutMetricAlarm, tagged as the operator's, kept as
//! the spec says, their states in status and as Events, and deleted with the object. Pure: what
//! CloudWatch holds (the observer's listing) and the spec in, the calls and the reports out.
//! Doc comments here become `kubectl explain` text.

use std::collections::BTreeMap;

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use crate::rds::cloudwatch::ALARM_PREFIX;
use crate::rds_state::{AlarmConfig, Metric, ObservedAlarm};

/// Defaults: free storage under 10 %, CPU over 90 %, over 100 connections, a replica over 300 s
/// behind.
pub const DEFAULT_FREE_STORAGE: &str = "10%";
pub const DEFAULT_CPU_PERCENT: i32 = 90;
pub const DEFAULT_CONNECTIONS: i32 = 100;
pub const DEFAULT_LAG_SECONDS: i32 = 300;

/// CloudWatch alarms on the database's metrics (docs/health.md), each over one minute, made with
/// the operator's ownership tags and deleted with the object. Every alarm has a default; set one
/// to change it.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct AlarmsSpec {
    /// The SNS topic CloudWatch notifies when an alarm goes to ALARM and back to OK.
    #[x_kube(validation = kube::core::Rule::new("self.startsWith('arn:aws') && self.contains(':sns:')").message("topicArn is an SNS topic's ARN (arn:aws:sns:REGION:ACCOUNT:NAME)"))]
    pub topic_arn: Option<String>,
    /// Alarm when free storage (FreeStorageSpace, the lowest in the minute) is below this: a
    /// percent of the allocated storage ("10%", the default) or a size ("2Gi", "500Mi").
    #[x_kube(validation = kube::core::Rule::new("self.matches('^[0-9]+(\\\\.[0-9]+)?(%|Ki|Mi|Gi|Ti)$')").message("freeStorageBelow is a percent of the allocated storage (10%) or a size (2Gi, 500Mi)"))]
    pub free_storage_below: Option<String>,
    /// Alarm when CPU (CPUUtilization, the average over the minute) is above this percent
    /// (default 90).
    #[schemars(range(min = 1, max = 100))]
    pub cpu_above_percent: Option<i32>,
    /// Alarm when client connections (DatabaseConnections, the highest in the minute) are above
    /// this (default 100).
    #[schemars(range(min = 1))]
    pub connections_above: Option<i32>,
    /// Of a replica: alarm when it is further behind its source than this many seconds
    /// (ReplicaLag, the highest in the minute; default 300).
    #[schemars(range(min = 1))]
    pub replica_lag_above_seconds: Option<i32>,
}

/// An alarm's state as status shows it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct AlarmStatus {
    /// The alarm's name in CloudWatch (rds-operator:IDENTIFIER:METRIC).
    pub name: String,
    /// The metric it watches.
    pub metric: String,
    /// OK, ALARM or INSUFFICIENT_DATA (no figures yet).
    pub state: String,
}

/// An alarm's name: `rds-operator:<identifier>:<metric>`.
pub fn name(identifier: &str, metric: Metric) -> String {
    format!("{ALARM_PREFIX}{identifier}:{}", metric.name())
}

/// The size `freeStorageBelow` says, in bytes, of an allocation of `allocated` GiB; None for one
/// it cannot read, or a percent of an unknown allocation.
pub fn free_storage_bytes(below: &str, allocated: Option<i32>) -> Option<f64> {
    let units = [("Ki", 10), ("Mi", 20), ("Gi", 30), ("Ti", 40)];
    if let Some(percent) = below.strip_suffix('%') {
        let allocated = f64::from(allocated.filter(|a| *a > 0)?) * (1u64 << 30) as f64;
        return Some(percent.parse::<f64>().ok()? / 100.0 * allocated);
    }
    let (number, shift) = (units.iter()).find_map(|(u, s)| Some((below.strip_suffix(u)?, *s)))?;
    Some(number.parse::<f64>().ok()? * (1u64 << shift) as f64)
}

/// A cluster's alarm's name: `rds-operator:cluster:<identifier>:<metric>` (an instance may have
/// the cluster's identifier; neither holds a colon).
pub fn cluster_name(identifier: &str, metric: Metric) -> String {
    format!("{ALARM_PREFIX}cluster:{identifier}:{}", metric.name())
}

/// The alarms the spec asks for on the instance `identifier` (`allocated` GiB of storage, a
/// replica or not).
pub fn desired(
    identifier: &str,
    spec: &AlarmsSpec,
    allocated: Option<i32>,
    replica: bool,
) -> Vec<AlarmConfig> {
    let lag = replica.then_some(Metric::ReplicaLag);
    wanted(identifier, false, spec, lag, allocated)
}

/// The alarms the spec asks for on the cluster `identifier`, on the figures of all its instances
/// (dimension DBClusterIdentifier): CPU and connections; of an Aurora cluster, its furthest
/// reader (AuroraReplicaLagMaximum, in milliseconds), and no storage alarm (its volume grows by
/// itself); of a Multi-AZ DB cluster, its standbys' lag (ReplicaLag) and its free storage of
/// `allocated` GiB.
pub fn desired_cluster(
    identifier: &str,
    spec: &AlarmsSpec,
    aurora: bool,
    allocated: Option<i32>,
) -> Vec<AlarmConfig> {
    match aurora {
        true => wanted(
            identifier,
            true,
            spec,
            Some(Metric::AuroraReplicaLagMaximum),
            None,
        ),
        false => wanted(identifier, true, spec, Some(Metric::ReplicaLag), allocated),
    }
}

/// The alarms of one database: its lag on `lag` (in seconds, or milliseconds for Aurora's), its
/// free storage, CPU and connections.
fn wanted(
    identifier: &str,
    cluster: bool,
    spec: &AlarmsSpec,
    lag: Option<Metric>,
    allocated: Option<i32>,
) -> Vec<AlarmConfig> {
    let topic = spec.topic_arn.clone();
    let alarm = |metric: Metric, above: bool, threshold: f64| AlarmConfig {
        name: match cluster {
            true => cluster_name(identifier, metric),
            false => name(identifier, metric),
        },
        identifier: identifier.to_owned(),
        cluster,
        metric,
        above,
        threshold,
        topic: topic.clone(),
    };
    let below = spec
        .free_storage_below
        .as_deref()
        .unwrap_or(DEFAULT_FREE_STORAGE);
    let mut wanted = Vec::new();
    if let Some(metric) = lag {
        let seconds = spec
            .replica_lag_above_seconds
            .unwrap_or(DEFAULT_LAG_SECONDS);
        let unit = match metric {
            Metric::AuroraReplicaLagMaximum | Metric::AuroraReplicaLag => 1000.0,
            _ => 1.0,
        };
        wanted.push(alarm(metric, true, f64::from(seconds) * unit));
    }
    // A cluster without an allocation (Aurora) has no storage alarm, even of a size.
    let storage = !cluster || allocated.is_some();
    if let Some(bytes) = storage
        .then(|| free_storage_bytes(below, allocated))
        .flatten()
    {
        wanted.push(alarm(Metric::FreeStorageSpace, false, bytes.floor()));
    }
    let cpu = spec.cpu_above_percent.unwrap_or(DEFAULT_CPU_PERCENT);
    wanted.push(alarm(Metric::CpuUtilization, true, f64::from(cpu)));
    let connections = spec.connections_above.unwrap_or(DEFAULT_CONNECTIONS);
    wanted.push(alarm(
        Metric::DatabaseConnections,
        true,
        f64::from(connections),
    ));
    wanted
}

/// What to send so CloudWatch holds what is wanted: the alarms to put (missing or configured
/// otherwise) and the names of the instance's alarms to delete (no more wanted).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AlarmChanges {
    pub put: Vec<AlarmConfig>,
    pub delete: Vec<String>,
}

impl AlarmChanges {
    pub fn is_empty(&self) -> bool {
        self.put.is_empty() && self.delete.is_empty()
    }
}

/// The changes from `held` (the instance's alarms CloudWatch lists) to `wanted`.
pub fn changes(wanted: &[AlarmConfig], held: &[ObservedAlarm]) -> AlarmChanges {
    let same = |a: &AlarmConfig, b: &AlarmConfig| {
        a.name == b.name
            && a.metric == b.metric
            && a.above == b.above
            && a.topic == b.topic
            && (a.threshold - b.threshold).abs() < 0.5
    };
    AlarmChanges {
        put: (wanted.iter())
            .filter(|w| !held.iter().any(|h| same(w, &h.config)))
            .cloned()
            .collect(),
        delete: (held.iter())
            .filter(|h| !wanted.iter().any(|w| w.name == h.config.name))
            .map(|h| h.config.name.clone())
            .collect(),
    }
}

/// What one pass does of a database's alarms: the calls, status, and the Events of their states.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pass {
    pub changes: AlarmChanges,
    pub status: Vec<AlarmStatus>,
    /// (warning, reason, message).
    pub told: Vec<(bool, &'static str, String)>,
}

/// The pass from `held` (CloudWatch's listing) to `wanted`, status having shown `before`: what
/// is put shows as INSUFFICIENT_DATA until listed (CloudWatch's state of a new alarm), what is
/// deleted no more.
pub fn pass(wanted: &[AlarmConfig], held: &[ObservedAlarm], before: &[AlarmStatus]) -> Pass {
    let changes = changes(wanted, held);
    let shown: Vec<ObservedAlarm> = (held.iter())
        .filter(|a| !changes.delete.contains(&a.config.name))
        .cloned()
        .chain(
            (changes.put.iter())
                .filter(|p| !held.iter().any(|h| h.config.name == p.name))
                .map(|config| ObservedAlarm {
                    config: config.clone(),
                    state: "INSUFFICIENT_DATA".into(),
                    reason: None,
                }),
        )
        .collect();
    Pass {
        told: transitions(before, &shown),
        status: status(&shown),
        changes,
    }
}

impl Pass {
    /// Into a database kind's plan: one step of the changes, with the object's `tags` (none when
    /// nothing is to be sent), and an Event for each alarm that fired or resolved; the states for
    /// the kind's status.
    pub fn plan<Sp, M, O, St, X: crate::managed::plan::Extension>(
        self,
        plan: &mut crate::managed::plan::KindPlan<crate::database::step::Step<Sp, M, O>, St, X>,
        tags: BTreeMap<String, String>,
    ) -> Vec<AlarmStatus> {
        if !self.changes.is_empty() {
            let changes = self.changes;
            plan.step(crate::database::step::Step::Alarms { changes, tags });
        }
        for (warning, reason, message) in self.told {
            let kind = match warning {
                true => kube::runtime::events::EventType::Warning,
                false => kube::runtime::events::EventType::Normal,
            };
            plan.event(kind, reason, "Observe", message);
        }
        self.status
    }
}

/// On the way out: the alarms the operator made for the database, as the listing shows them,
/// else as status recorded them.
pub fn leftover(listed: Option<&[ObservedAlarm]>, recorded: &[AlarmStatus]) -> AlarmChanges {
    let delete = match listed {
        Some(listed) => listed.iter().map(|a| a.config.name.clone()).collect(),
        None => recorded.iter().map(|a| a.name.clone()).collect(),
    };
    AlarmChanges {
        put: Vec::new(),
        delete,
    }
}

/// What a dry run shows of the alarms' puts and deletions: the action, the disruption, the names.
pub fn preview(changes: &AlarmChanges) -> (&'static str, &'static str, String) {
    let names: Vec<&str> = (changes.put.iter().map(|a| a.name.as_str()))
        .chain(changes.delete.iter().map(String::as_str))
        .collect();
    let action = match changes.put.is_empty() {
        true => "DeleteAlarms",
        false => "PutMetricAlarm",
    };
    (action, "None", names.join(", "))
}

/// The alarms' states as status shows them, by name.
pub fn status(held: &[ObservedAlarm]) -> Vec<AlarmStatus> {
    let mut shown: Vec<AlarmStatus> = (held.iter())
        .map(|a| AlarmStatus {
            name: a.config.name.clone(),
            metric: a.config.metric.name().to_owned(),
            state: a.state.clone(),
        })
        .collect();
    shown.sort_by(|a, b| a.name.cmp(&b.name));
    shown
}

/// An alarm's change of state worth an Event: (warning, reason, message).
pub fn transitions(
    before: &[AlarmStatus],
    now: &[ObservedAlarm],
) -> Vec<(bool, &'static str, String)> {
    let was: BTreeMap<&str, &str> = (before.iter())
        .map(|a| (a.name.as_str(), a.state.as_str()))
        .collect();
    let mut told = Vec::new();
    for a in now {
        let previous = was.get(a.config.name.as_str()).copied();
        let reason = a.reason.as_deref().unwrap_or_default();
        match (previous, a.state.as_str()) {
            (Some("ALARM"), "ALARM") => {}
            (_, "ALARM") => told.push((
                true,
                "AlarmFiring",
                format!(
                    "alarm {} ({}) is in ALARM: {reason}",
                    a.config.name,
                    a.config.metric.name()
                ),
            )),
            (Some("ALARM"), "OK") => told.push((
                false,
                "AlarmResolved",
                format!(
                    "alarm {} ({}) is OK again",
                    a.config.name,
                    a.config.metric.name()
                ),
            )),
            _ => {}
        }
    }
    told
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(config: AlarmConfig, state: &str) -> ObservedAlarm {
        ObservedAlarm {
            config,
            state: state.into(),
            reason: Some("Threshold Crossed".into()),
        }
    }

    /// (freeStorageBelow, allocated GiB) -> bytes: a percent of the allocation, or a size.
    #[test]
    fn free_storage_below_is_a_percent_of_the_allocation_or_a_size() {
        let gib = (1u64 << 30) as f64;
        let rows = [
            ("10%", Some(20), Some(2.0 * gib)),
            ("2.5%", Some(100), Some(2.5 * gib)),
            ("2Gi", None, Some(2.0 * gib)),
            ("500Mi", Some(20), Some(500.0 * (1u64 << 20) as f64)),
            ("10%", None, None),
            ("lots", Some(20), None),
        ];
        for (below, allocated, bytes) in rows {
            assert_eq!(
                free_storage_bytes(below, allocated),
                bytes,
                "{below} {allocated:?}"
            );
        }
    }

    /// Defaults for every alarm; a replica's lag only for a replica; the spec's figures where set.
    #[test]
    fn the_spec_gives_one_alarm_per_metric_with_defaults() {
        let defaults = desired("coffee", &AlarmsSpec::default(), Some(20), false);
        let named: Vec<(&str, bool, f64)> = (defaults.iter())
            .map(|a| (a.metric.name(), a.above, a.threshold))
            .collect();
        assert_eq!(
            named,
            [
                ("FreeStorageSpace", false, 2.0 * (1u64 << 30) as f64),
                ("CPUUtilization", true, 90.0),
                ("DatabaseConnections", true, 100.0),
            ]
        );
        assert_eq!(defaults[0].name, "rds-operator:coffee:FreeStorageSpace");
        let spec = AlarmsSpec {
            topic_arn: Some("arn:aws:sns:us-east-1:123456789012:db".into()),
            replica_lag_above_seconds: Some(60),
            cpu_above_percent: Some(75),
            ..Default::default()
        };
        let replica = desired("coffee-r", &spec, Some(20), true);
        assert_eq!(replica[0].metric, Metric::ReplicaLag);
        assert_eq!(replica[0].threshold, 60.0);
        assert_eq!(replica[2].threshold, 75.0);
        assert!(replica.iter().all(|a| a.topic == spec.topic_arn));
    }

    /// A cluster's alarms, on the figures of all its instances: an Aurora cluster's furthest
    /// reader in milliseconds and no storage alarm (not even of a size); a Multi-AZ DB cluster's
    /// standbys' lag in seconds and its free storage. Names and keys never meet an instance's.
    #[test]
    fn a_clusters_alarms_are_its_own_by_engine() {
        let spec = AlarmsSpec {
            free_storage_below: Some("2Gi".into()),
            replica_lag_above_seconds: Some(30),
            ..Default::default()
        };
        // (aurora, allocated GiB) -> (metric, threshold) of each alarm.
        type Row<'a> = (bool, Option<i32>, &'a [(&'a str, f64)]);
        let rows: [Row; 3] = [
            (
                true,
                None,
                &[
                    ("AuroraReplicaLagMaximum", 30_000.0),
                    ("CPUUtilization", 90.0),
                    ("DatabaseConnections", 100.0),
                ],
            ),
            (
                false,
                Some(100),
                &[
                    ("ReplicaLag", 30.0),
                    ("FreeStorageSpace", 2.0 * (1u64 << 30) as f64),
                    ("CPUUtilization", 90.0),
                    ("DatabaseConnections", 100.0),
                ],
            ),
            (
                false,
                None,
                &[
                    ("ReplicaLag", 30.0),
                    ("CPUUtilization", 90.0),
                    ("DatabaseConnections", 100.0),
                ],
            ),
        ];
        for (aurora, allocated, expected) in rows {
            let got = desired_cluster("coffee", &spec, aurora, allocated);
            let named: Vec<(&str, f64)> = (got.iter())
                .map(|a| (a.metric.name(), a.threshold))
                .collect();
            assert_eq!(named, expected, "aurora {aurora}, {allocated:?} GiB");
            assert!(
                got.iter()
                    .all(|a| a.cluster && a.owner_key() == "cluster/coffee")
            );
        }
        let aurora = desired_cluster("coffee", &AlarmsSpec::default(), true, None);
        assert_eq!(
            aurora[0].name,
            "rds-operator:cluster:coffee:AuroraReplicaLagMaximum"
        );
        assert_eq!(aurora[0].threshold, 300_000.0, "the default 300 s, in ms");
        let instance = desired("coffee", &AlarmsSpec::default(), Some(20), false);
        assert!(
            instance
                .iter()
                .all(|i| aurora.iter().all(|c| c.name != i.name))
        );
        assert!(
            instance
                .iter()
                .all(|a| !a.cluster && a.owner_key() == "coffee")
        );
    }

    /// Missing or configured otherwise: put (CloudWatch keeps the state); no more wanted: deleted;
    /// the same: nothing.
    #[test]
    fn only_what_differs_is_put_and_only_what_is_no_more_wanted_is_deleted() {
        let wanted = desired("coffee", &AlarmsSpec::default(), Some(20), false);
        assert_eq!(changes(&wanted, &[]).put, wanted);
        let all: Vec<ObservedAlarm> = wanted.iter().cloned().map(|c| held(c, "OK")).collect();
        assert!(changes(&wanted, &all).is_empty());
        let mut moved = all.clone();
        moved[1].config.threshold = 80.0;
        assert_eq!(changes(&wanted, &moved).put, vec![wanted[1].clone()]);
        let mut stale = all.clone();
        let mut lag = wanted[1].clone();
        lag.name = name("coffee", Metric::ReplicaLag);
        lag.metric = Metric::ReplicaLag;
        stale.push(held(lag, "OK"));
        let c = changes(&wanted, &stale);
        assert_eq!(
            (c.put.len(), c.delete),
            (0, vec![name("coffee", Metric::ReplicaLag)])
        );
        assert_eq!(
            changes(&[], &all).delete.len(),
            3,
            "the object deleted: every alarm goes"
        );
    }

    /// (before, now) -> Event: into ALARM a Warning (once), back to OK a Normal, the rest none.
    #[test]
    fn an_alarm_firing_and_resolving_are_told_once_each() {
        let config = desired("coffee", &AlarmsSpec::default(), Some(20), false).remove(0);
        let before = |state: &str| {
            vec![AlarmStatus {
                name: config.name.clone(),
                metric: "FreeStorageSpace".into(),
                state: state.into(),
            }]
        };
        let rows = [
            (vec![], "INSUFFICIENT_DATA", None),
            (before("INSUFFICIENT_DATA"), "OK", None),
            (before("OK"), "ALARM", Some("AlarmFiring")),
            (vec![], "ALARM", Some("AlarmFiring")),
            (before("ALARM"), "ALARM", None),
            (before("ALARM"), "OK", Some("AlarmResolved")),
        ];
        for (was, now, told) in rows {
            let t = transitions(&was, &[held(config.clone(), now)]);
            assert_eq!(t.first().map(|t| t.1), told, "{was:?} -> {now}");
        }
    }
}
