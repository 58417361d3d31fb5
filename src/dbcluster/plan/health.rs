//! A DBCluster's health in status, pure: what CloudWatch says of all its instances (dimension
//! DBClusterIdentifier, read by the observer's health poll, batched with every other figure of
//! the location): the lag of its furthest reader (Aurora's AuroraReplicaLagMaximum), of a global
//! database's secondary behind its primary (AuroraGlobalDBReplicationLag), or of a Multi-AZ DB
//! cluster's standbys (ReplicaLag), CPU and connections, and a Multi-AZ DB cluster's free storage,
//! with a Warning Event when its headroom falls under 10 %.

use kube::runtime::events::EventType;

use super::super::observed::ObservedCluster;
use super::{Facts, Plan};
use crate::database::health::{self, HealthStatus, STORAGE_WARNING_PERCENT};
use crate::dbcluster::DBCluster;
use crate::rds_state::Metric;

/// The metrics the health poll reads of the cluster.
pub fn metrics(cluster: &DBCluster) -> Vec<Metric> {
    let lag = match (
        cluster.spec.engine.multi_az(),
        &cluster.spec.global_cluster_ref,
    ) {
        (true, _) => Metric::ReplicaLag,
        (false, Some(_)) => Metric::AuroraGlobalDbReplicationLag,
        (false, None) => Metric::AuroraReplicaLagMaximum,
    };
    let storage = (cluster.spec.engine.multi_az()).then_some(Metric::FreeStorageSpace);
    (std::iter::once(lag).chain(storage))
        .chain([Metric::CpuUtilization, Metric::DatabaseConnections])
        .collect()
}

/// status.health from the last health poll (none without figures), and the storage warning the
/// first time the headroom is under 10 %.
pub(super) fn report(f: &Facts, mut plan: Plan, o: &ObservedCluster) -> Plan {
    let Some(status) = plan.status.as_mut() else {
        return plan;
    };
    let shown = (f.health.as_ref())
        .map(|h| health::status(h, o.allocated_storage, None))
        .filter(|h| *h != HealthStatus::default());
    let low = |h: Option<&HealthStatus>| {
        h.and_then(|h| h.storage_headroom_percent)
            .is_some_and(|p| p < STORAGE_WARNING_PERCENT)
    };
    let before = (f.cluster.status.as_ref()).and_then(|s| s.common.health.as_ref());
    let warn = low(shown.as_ref()) && !low(before);
    status.fields.common.health = shown.clone();
    if let Some(h) = shown.filter(|_| warn) {
        let message = format!(
            "storage headroom is {}% ({} MiB free) of the allocated storage; raise \
             allocatedStorage",
            h.storage_headroom_percent.unwrap_or_default(),
            h.free_storage_mib.unwrap_or_default()
        );
        plan.event(EventType::Warning, "StorageHeadroomLow", "Observe", message);
    }
    plan
}
