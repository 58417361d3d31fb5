//! The databases' health as Prometheus gauges: the figures status.health shows (replica lag, free
//! storage and its headroom, CPU, connections), when the server certificate expires, and the
//! alarms' states. Unlike the operator's other metrics (`metrics.rs`), these are per database,
//! labelled by the object's namespace, name and kind, as kube-state-metrics labels its objects:
//! a figure of one database means nothing summed over others. One series per database and figure,
//! gone when the object goes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::lock;

/// The labels of a database's series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DatabaseLabels {
    pub object_namespace: String,
    pub object_name: String,
    /// DBInstance or DBCluster.
    pub kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AlarmLabels {
    object_namespace: String,
    object_name: String,
    kind: &'static str,
    metric: String,
    state: String,
}

/// One database's figures, as its last status showed them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DatabaseHealth {
    pub replica_lag_seconds: Option<f64>,
    pub free_storage_bytes: Option<f64>,
    pub storage_headroom_percent: Option<f64>,
    pub cpu_percent: Option<f64>,
    pub connections: Option<f64>,
    /// When the server certificate expires, in seconds since the epoch.
    pub certificate_expiry_seconds: Option<f64>,
    /// (metric, state) of each alarm.
    pub alarms: Vec<(String, String)>,
}

/// The gauges' families: (name, help, the figure).
type Figure = fn(&DatabaseHealth) -> Option<f64>;
const FIGURES: &[(&str, &str, Figure)] = &[
    (
        "rds_operator_database_replica_lag_seconds",
        "Seconds a replica is behind its source (CloudWatch ReplicaLag; -1: replication not active)",
        |h| h.replica_lag_seconds,
    ),
    (
        "rds_operator_database_free_storage_bytes",
        "Free storage (CloudWatch FreeStorageSpace)",
        |h| h.free_storage_bytes,
    ),
    (
        "rds_operator_database_storage_headroom_percent",
        "Free storage and room to grow, as a percent of what the storage may reach",
        |h| h.storage_headroom_percent,
    ),
    (
        "rds_operator_database_cpu_percent",
        "CPU in use (CloudWatch CPUUtilization)",
        |h| h.cpu_percent,
    ),
    (
        "rds_operator_database_connections",
        "Client connections (CloudWatch DatabaseConnections)",
        |h| h.connections,
    ),
    (
        "rds_operator_database_certificate_expiry_timestamp_seconds",
        "When the server certificate expires (RDS's CertificateDetails.ValidTill)",
        |h| h.certificate_expiry_seconds,
    ),
];

/// The databases' health by object uid, written at each scrape.
#[derive(Clone, Debug, Default)]
pub struct Healths(Arc<Mutex<HashMap<String, (DatabaseLabels, DatabaseHealth)>>>);

impl Healths {
    /// The health of the object with this uid (None: it is gone).
    pub fn set(&self, uid: &str, health: Option<(DatabaseLabels, DatabaseHealth)>) {
        let mut all = lock(&self.0);
        match health {
            Some(h) => all.insert(uid.to_owned(), h),
            None => all.remove(uid),
        };
    }
}

impl Collector for Healths {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let all = lock(&self.0).clone();
        let mut rows: Vec<&(DatabaseLabels, DatabaseHealth)> = all.values().collect();
        rows.sort_by(|a, b| {
            (&a.0.object_namespace, &a.0.object_name)
                .cmp(&(&b.0.object_namespace, &b.0.object_name))
        });
        for (name, help, figure) in FIGURES {
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
            for (labels, health) in &rows {
                if let Some(v) = figure(health) {
                    ConstGauge::new(v).encode(family.encode_family(labels)?)?;
                }
            }
        }
        let mut family = encoder.encode_descriptor(
            "rds_operator_database_alarm",
            "1 for each of a database's CloudWatch alarms, by metric and state (OK, ALARM, INSUFFICIENT_DATA)",
            None,
            MetricType::Gauge,
        )?;
        for (labels, health) in &rows {
            for (metric, state) in &health.alarms {
                let labels = AlarmLabels {
                    object_namespace: labels.object_namespace.clone(),
                    object_name: labels.object_name.clone(),
                    kind: labels.kind,
                    metric: metric.clone(),
                    state: state.clone(),
                };
                ConstGauge::new(1i64).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::registry::Registry;

    /// Each figure a database has is one series of its own; a figure it lacks is none; a database
    /// gone takes its series with it.
    #[test]
    fn each_database_has_a_series_per_figure_and_loses_them_when_gone() {
        let healths = Healths::default();
        let labels = |name: &str| DatabaseLabels {
            object_namespace: "coffee".into(),
            object_name: name.into(),
            kind: "DBInstance",
        };
        let health = DatabaseHealth {
            replica_lag_seconds: Some(12.0),
            free_storage_bytes: Some(1e9),
            alarms: vec![("FreeStorageSpace".into(), "ALARM".into())],
            ..Default::default()
        };
        healths.set("a", Some((labels("replica"), health)));
        healths.set("b", Some((labels("main"), DatabaseHealth::default())));
        let mut registry = Registry::default();
        registry.register_collector(Box::new(healths.clone()));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(text.contains(
            "rds_operator_database_replica_lag_seconds{object_namespace=\"coffee\",object_name=\"replica\",kind=\"DBInstance\"} 12"
        ), "{text}");
        assert!(
            text.contains("metric=\"FreeStorageSpace\",state=\"ALARM\"} 1"),
            "{text}"
        );
        assert!(
            !text.contains("object_name=\"main\""),
            "no figures, no series: {text}"
        );
        healths.set("a", None);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(!text.contains("object_name=\"replica\""), "{text}");
    }
}
