//! The health poll: every `--health-interval` (60 s by default), beside the instance poll, RDS's
//! metrics of every instance of ours, the replica lag of each instance a reconcile asked for (a
//! blue/green deployment's green), and the figures of each cluster of ours that asked, from
//! CloudWatch: one GetMetricData per 500 figures for the whole account and region, never one per
//! object. A reconcile reads what the last poll found
//! ([`Observer::health`]); a failed poll forgets every figure, so nothing is decided on an old one.
//! While any object has alarms, the poll also lists the operator's alarms (one DescribeAlarms per
//! 100), which the reconciles read ([`Observer::alarms_of`]) instead of asking CloudWatch each.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tracing::{debug, warn};

use super::{Observer, Owner, owner};
use crate::crd::OWNER_TAG;
use crate::lock;
use crate::rds_state::{AlarmConfig, Metric, ObservedAlarm, ObservedHealth, ObservedInstance};

/// What the health poll keeps.
#[derive(Default)]
pub(super) struct HealthState {
    /// By identifier, from the last poll.
    figures: HashMap<String, ObservedHealth>,
    /// Instances whose replica lag a reconcile asked for, whom to wake when it moves, and when
    /// they last asked.
    lag_wanted: HashMap<String, (Owner, Instant)>,
    /// Clusters whose figures a reconcile asked for (by `database_key`), which metrics, and
    /// when they last asked.
    clusters_wanted: HashMap<String, (Vec<Metric>, Instant)>,
    /// The operator's alarms by instance, from the last listing (None: none yet, or it failed).
    alarms: Option<HashMap<String, Vec<ObservedAlarm>>>,
    /// When a reconcile last asked for the alarms to be listed.
    alarms_wanted: Option<Instant>,
    /// The instances whose reconciles found no listing yet: woken once one is in.
    alarms_waiting: HashSet<String>,
}

/// How many drift intervals a request for an instance's lag stands without being made again.
const LAG_WANTED_FOR: u32 = 3;
/// RDS publishes its metrics once a minute: reading them more often learns nothing new.
pub const DEFAULT_EVERY: Duration = Duration::from_secs(60);

impl Observer {
    /// What CloudWatch said of the instance at the last health poll; None before one, after a
    /// failed one, or for an instance it does not read.
    pub fn health(&self, identifier: &str) -> Option<ObservedHealth> {
        lock(&self.health).figures.get(identifier).cloned()
    }

    /// The next health polls read the replica lag of `identifier` (not ours: a green), and wake
    /// `owner` when it moves; asked again by each reconcile that needs it.
    pub fn want_lag(&self, identifier: &str, owner: Owner) {
        let mut health = lock(&self.health);
        health
            .lag_wanted
            .insert(identifier.to_owned(), (owner, Instant::now()));
    }

    /// The next health polls read these metrics of the cluster `identifier` (dimension
    /// DBClusterIdentifier, the figures of all its instances), found by [`Observer::health`] of
    /// its `database_key`; asked again by each reconcile of the cluster. No one is woken when
    /// they move: the cluster reads them at its next pass.
    pub fn want_cluster_health(&self, identifier: &str, metrics: Vec<Metric>) {
        let key = crate::rds_state::database_key(identifier, true);
        let mut health = lock(&self.health);
        health
            .clusters_wanted
            .insert(key, (metrics, Instant::now()));
    }

    /// A database's alarms at the last listing (with what the operator sent since), by its key
    /// (`rds_state::database_key`: an instance's identifier, or `cluster/<identifier>`); None
    /// before a listing, or after a failed one. Asks for the listings to go on.
    pub fn alarms_of(&self, key: &str) -> Option<Vec<ObservedAlarm>> {
        let mut health = lock(&self.health);
        health.alarms_wanted = Some(Instant::now());
        if health.alarms.is_none() {
            health.alarms_waiting.insert(key.to_owned());
            return None;
        }
        let alarms = health.alarms.as_ref()?;
        Some(alarms.get(key).cloned().unwrap_or_default())
    }

    /// The operator put these alarms and deleted those: the listing holds them so until the next
    /// one (a put alarm keeps its state, a new one has none yet).
    pub fn alarms_sent(&self, put: &[AlarmConfig], deleted: &[String]) {
        let mut health = lock(&self.health);
        let Some(alarms) = health.alarms.as_mut() else {
            return;
        };
        for config in put {
            let held = alarms.entry(config.owner_key()).or_default();
            match held.iter_mut().find(|a| a.config.name == config.name) {
                Some(a) => a.config = config.clone(),
                None => held.push(ObservedAlarm {
                    config: config.clone(),
                    state: "INSUFFICIENT_DATA".into(),
                    reason: None,
                }),
            }
        }
        for held in alarms.values_mut() {
            held.retain(|a| !deleted.contains(&a.config.name));
        }
    }

    /// The health poll every `health_every` (none when zero), once the first instance poll is in,
    /// until `shutdown` turns true; each bounded by two of its intervals.
    pub(super) async fn run_health(&self, mut shutdown: watch::Receiver<bool>) {
        if self.health_every.is_zero() {
            return;
        }
        self.wait_loaded().await;
        loop {
            let started = Instant::now();
            self.poll_health(self.health_every * 2).await;
            let next = self.health_every.saturating_sub(started.elapsed());
            tokio::select! {
                _ = tokio::time::sleep(next) => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
        }
    }

    /// One health poll, bounded by `bound`: the metrics, then the alarms.
    async fn poll_health(&self, bound: Duration) {
        self.poll_metrics(bound).await;
        self.poll_alarms(bound).await;
    }

    /// The alarms' listing, while the last one found any of the operator's alarms (their states
    /// are watched: a settled object reconciles only when woken) or a reconcile asked for it
    /// within the last intervals; the objects whose alarms changed state are woken.
    async fn poll_alarms(&self, bound: Duration) {
        let stale = self.intervals.settled * LAG_WANTED_FOR;
        let wanted = {
            let health = lock(&self.health);
            let held = (health.alarms.as_ref()).is_some_and(|a| a.values().any(|v| !v.is_empty()));
            held || health.alarms_wanted.is_some_and(|at| at.elapsed() <= stale)
        };
        if !wanted {
            lock(&self.health).alarms = None;
            return;
        }
        let listed = match tokio::time::timeout(bound, self.rds.operator_alarms()).await {
            Ok(Ok(listed)) => listed,
            Ok(Err(e)) => {
                warn!(error = %e, "listing the alarms failed; their states are unknown until the next poll");
                lock(&self.health).alarms = None;
                return;
            }
            Err(_) => {
                warn!(?bound, "listing the alarms did not finish in time");
                lock(&self.health).alarms = None;
                return;
            }
        };
        let mut by_instance: HashMap<String, Vec<ObservedAlarm>> = HashMap::new();
        for alarm in listed {
            by_instance
                .entry(alarm.config.owner_key())
                .or_default()
                .push(alarm);
        }
        let moved: Vec<String> = {
            let mut health = lock(&self.health);
            let before = health.alarms.take().unwrap_or_default();
            let states = |alarms: Option<&Vec<ObservedAlarm>>| {
                let mut s: Vec<(String, String)> = (alarms.into_iter().flatten())
                    .map(|a| (a.config.name.clone(), a.state.clone()))
                    .collect();
                s.sort();
                s
            };
            let waiting = std::mem::take(&mut health.alarms_waiting);
            let moved = (by_instance.keys().chain(before.keys()))
                .filter(|id| states(before.get(*id)) != states(by_instance.get(*id)))
                .chain(waiting.iter())
                .cloned()
                .collect();
            health.alarms = Some(by_instance);
            moved
        };
        let state = lock(&self.state);
        let woken: Vec<Owner> = (moved.iter())
            .filter_map(|id| state.snapshot.get(id).and_then(|e| owner(&e.instance)))
            .collect();
        drop(state);
        self.wake_all(woken);
    }

    /// RDS's metrics of the instances of ours and the lags asked for.
    async fn poll_metrics(&self, bound: Duration) {
        let (wanted, lag_owners) = {
            let state = lock(&self.state);
            let mut health = lock(&self.health);
            let stale = self.intervals.settled * LAG_WANTED_FOR;
            health.lag_wanted.retain(|_, (_, at)| at.elapsed() <= stale);
            health
                .clusters_wanted
                .retain(|_, (_, at)| at.elapsed() <= stale);
            let lag: Vec<&String> = health.lag_wanted.keys().collect();
            let instances = state.snapshot.values().map(|e| &e.instance);
            let owners: HashMap<String, Owner> = (health.lag_wanted.iter())
                .map(|(id, (o, _))| (id.clone(), o.clone()))
                .collect();
            let mut wanted = wanted(instances, &lag);
            for (key, (metrics, _)) in &health.clusters_wanted {
                wanted.extend(metrics.iter().map(|m| (key.clone(), *m)));
            }
            (wanted, owners)
        };
        if wanted.is_empty() {
            lock(&self.health).figures.clear();
            return;
        }
        let values = match tokio::time::timeout(bound, self.rds.latest_metrics(&wanted)).await {
            Ok(Ok(values)) => values,
            Ok(Err(e)) => {
                warn!(error = %e, "reading RDS's metrics from CloudWatch failed; health is unknown until the next poll");
                lock(&self.health).figures.clear();
                return;
            }
            Err(_) => {
                warn!(
                    ?bound,
                    "reading RDS's metrics did not finish in time; health is unknown until the next poll"
                );
                lock(&self.health).figures.clear();
                return;
            }
        };
        let found = figures(&wanted, &values);
        let moved = {
            let mut health = lock(&self.health);
            let moved = moved(&health.figures, &found);
            health.figures = found;
            moved
        };
        let state = lock(&self.state);
        let woken: Vec<Owner> = (moved.iter())
            .filter_map(|id| {
                (state.snapshot.get(id).and_then(|e| owner(&e.instance)))
                    .or_else(|| lag_owners.get(id).cloned())
            })
            .collect();
        drop(state);
        debug!(
            figures = wanted.len(),
            woken = woken.len(),
            "RDS health read"
        );
        self.wake_all(woken);
    }
}

/// What to ask CloudWatch: every metric of each instance of ours that runs (ReplicaLag of a
/// replica only), and the lag of each instance asked for.
fn wanted<'a>(
    instances: impl Iterator<Item = &'a ObservedInstance>,
    lag: &[&String],
) -> Vec<(String, Metric)> {
    let mut wanted = Vec::new();
    let mut lagging: Vec<&str> = lag.iter().map(|s| s.as_str()).collect();
    for i in instances {
        if !i.tags.contains_key(OWNER_TAG) || matches!(i.status.as_str(), "creating" | "deleting") {
            continue;
        }
        wanted.extend(metrics_of(i).into_iter().map(|m| (i.identifier.clone(), m)));
        lagging.retain(|id| *id != i.identifier || i.replica_source.is_none());
    }
    lagging.sort_unstable();
    lagging.dedup();
    wanted.extend(
        lagging
            .into_iter()
            .map(|id| (id.to_owned(), Metric::ReplicaLag)),
    );
    wanted
}

/// What CloudWatch has of an instance: an Aurora member's storage is its cluster's (no
/// FreeStorageSpace), and its lag is AuroraReplicaLag (a reader's); a replica's is ReplicaLag.
fn metrics_of(i: &ObservedInstance) -> Vec<Metric> {
    let member = i.db_cluster_identifier.is_some();
    let lag = match (member, i.replica_source.is_some()) {
        (true, _) => Some(Metric::AuroraReplicaLag),
        (false, true) => Some(Metric::ReplicaLag),
        (false, false) => None,
    };
    let storage = (!member).then_some(Metric::FreeStorageSpace);
    (lag.into_iter().chain(storage))
        .chain([Metric::CpuUtilization, Metric::DatabaseConnections])
        .collect()
}

/// The answers, by instance.
fn figures(wanted: &[(String, Metric)], values: &[Option<f64>]) -> HashMap<String, ObservedHealth> {
    let mut found: HashMap<String, ObservedHealth> = HashMap::new();
    for ((identifier, metric), value) in wanted.iter().zip(values) {
        let health = found.entry(identifier.clone()).or_default();
        if let Some(v) = value {
            health.set(*metric, *v);
        }
    }
    found
}

/// The figures a decision or a warning reads, as status shows them: whole seconds of lag, MiB of
/// free storage. CPU and connections move all the time and decide nothing: they reach status at
/// the object's next reconcile, and wake no one (a woken object whose status changes wakes the
/// objects that watch it in turn).
fn deciding(h: &ObservedHealth) -> [Option<i64>; 2] {
    let round = |v: Option<f64>, unit: f64| v.map(|v| (v / unit).round() as i64);
    [
        round(h.replica_lag_seconds, 1.0),
        round(h.free_storage_bytes, (1u64 << 20) as f64),
    ]
}

/// The instances whose deciding figures moved (an instance read for the first time moved when it
/// has one).
fn moved(
    old: &HashMap<String, ObservedHealth>,
    new: &HashMap<String, ObservedHealth>,
) -> Vec<String> {
    let none = [None, None];
    let mut moved: Vec<String> = (new.iter())
        .filter(|(id, h)| old.get(*id).map_or(none, deciding) != deciding(h))
        .map(|(id, _)| id.clone())
        .collect();
    moved.sort_unstable();
    moved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(id: &str, ours: bool, status: &str, source: Option<&str>) -> ObservedInstance {
        let mut i = ObservedInstance {
            identifier: id.into(),
            status: status.into(),
            replica_source: source.map(Into::into),
            ..Default::default()
        };
        if ours {
            i.tags.insert(OWNER_TAG.into(), "uid".into());
        }
        i
    }

    /// Ours are read whole (a replica's lag, no source's), another's not at all, one being made
    /// or deleted not yet or no more; a green asked for is read for its lag alone, once.
    #[test]
    fn the_health_poll_asks_for_what_status_and_the_gates_need_and_no_more() {
        let instances = [
            instance("coffee", true, "available", None),
            instance("coffee-replica", true, "available", Some("coffee")),
            instance("theirs", false, "available", None),
            instance("new", true, "creating", None),
            instance("coffee-green-abc", false, "available", None),
            ObservedInstance {
                db_cluster_identifier: Some("coffee-aurora".into()),
                ..instance("coffee-aurora-1", true, "available", None)
            },
        ];
        let green = "coffee-green-abc".to_owned();
        let asked = wanted(instances.iter(), &[&green, &green]);
        let names = |id: &str| -> Vec<Metric> {
            (asked.iter())
                .filter(|(i, _)| i == id)
                .map(|(_, m)| *m)
                .collect()
        };
        use Metric::*;
        assert_eq!(
            names("coffee"),
            [FreeStorageSpace, CpuUtilization, DatabaseConnections]
        );
        assert_eq!(names("coffee-replica"), Metric::ALL);
        assert_eq!(names("theirs"), []);
        assert_eq!(names("new"), []);
        assert_eq!(names("coffee-green-abc"), [ReplicaLag]);
        assert_eq!(
            names("coffee-aurora-1"),
            [AuroraReplicaLag, CpuUtilization, DatabaseConnections],
            "an Aurora member: its lag in ms, no storage of its own"
        );
        assert_eq!(asked.len(), 11);
    }

    /// A deciding figure moves when it moves as status shows it (a whole second of lag, a MiB of
    /// free storage); CPU and connections wake no one; an instance read for the first time has
    /// moved when it has a figure.
    #[test]
    fn only_a_move_of_what_decides_wakes_an_object() {
        let h = |lag: f64, free: f64, cpu: f64| ObservedHealth {
            replica_lag_seconds: Some(lag),
            free_storage_bytes: Some(free),
            cpu_percent: Some(cpu),
            connections: Some(3.0),
        };
        let old = HashMap::from([
            ("a".to_owned(), h(0.0, 1e9, 5.0)),
            ("b".to_owned(), h(0.0, 1e9, 5.0)),
            ("c".to_owned(), h(0.0, 1e9, 5.0)),
        ]);
        let new = HashMap::from([
            ("a".to_owned(), h(0.2, 1e9 + 1000.0, 45.3)),
            ("b".to_owned(), h(2.0, 1e9, 5.0)),
            ("c".to_owned(), h(0.0, 1e9 - 4e6, 5.0)),
            ("d".to_owned(), h(0.0, 1e9, 5.0)),
            ("e".to_owned(), ObservedHealth::default()),
        ]);
        assert_eq!(moved(&old, &new), ["b", "c", "d"], "not e: nothing to show");
    }

    #[test]
    fn the_answers_are_taken_by_instance_and_metric_and_a_missing_one_stays_unknown() {
        let wanted = vec![
            ("a".to_owned(), Metric::ReplicaLag),
            ("a".to_owned(), Metric::FreeStorageSpace),
            ("b".to_owned(), Metric::ReplicaLag),
        ];
        let found = figures(&wanted, &[Some(12.0), None, Some(-1.0)]);
        assert_eq!(found["a"].replica_lag_seconds, Some(12.0));
        assert_eq!(found["a"].free_storage_bytes, None);
        assert_eq!(found["b"].replica_lag_seconds, Some(-1.0));
        let aurora = figures(
            &[("r".to_owned(), Metric::AuroraReplicaLag)],
            &[Some(2500.0)],
        );
        assert_eq!(
            aurora["r"].replica_lag_seconds,
            Some(2.5),
            "milliseconds to seconds"
        );
    }
}
