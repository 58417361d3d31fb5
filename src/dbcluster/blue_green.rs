//! The read step's look at a DBCluster's blue/green deployment: the deployment (by the identifier
//! status recorded, or by the cluster's ARN), the green or old cluster read directly, and their
//! members when one may be deleted.

use super::plan::blue_green::{BlueGreenFacts, members_wanted};
use super::{DBCluster, ObservedCluster};
use crate::database::blue_green::{Read, aws};
use crate::dbcluster::aws::ClusterCalls;
use crate::error::Error;
use crate::locations::Location;

/// The deployment `read` names (None: none asked), with the clusters it made or left.
pub(super) async fn read(
    at: &Location,
    cluster: &DBCluster,
    read: Option<&Read>,
) -> Result<Option<BlueGreenFacts>, Error> {
    let Some(read) = read else { return Ok(None) };
    let (facts, [green, old]) = aws::read(&at.rds, read).await?;
    let (green, old) = (cluster_of(at, green).await?, cluster_of(at, old).await?);
    let mut members = Vec::new();
    if members_wanted(cluster, &crate::duration::now()) {
        for c in [&green, &old].into_iter().flatten() {
            for m in &c.members {
                members.extend(at.observer.observe_directly(&m.identifier).await?.instance);
            }
        }
    }
    let mut found = facts.with(green, old);
    found.green_lag_seconds = green_lag(at, cluster, &found).await?;
    Ok(Some(BlueGreenFacts { found, members }))
}

/// Green's lag behind blue (its AuroraBinlogReplicaLag, the highest of the last minute), read
/// while a switchover may wait on it: maxLagSeconds set and the deployment AVAILABLE. One
/// GetMetricData per reconcile then; None (not known, so a switchover waits) otherwise.
async fn green_lag(
    at: &Location,
    cluster: &DBCluster,
    found: &crate::database::blue_green::Facts<ObservedCluster>,
) -> Result<Option<f64>, Error> {
    let available = (found.deployment.as_ref()).is_some_and(|d| d.status == "AVAILABLE");
    let (Some(green), Some(_), true) = (
        found.green.as_ref(),
        cluster.spec.upgrade.max_lag_seconds,
        available,
    ) else {
        return Ok(None);
    };
    let metric = crate::rds_state::Metric::AuroraBinlogReplicaLag;
    Ok(at
        .rds
        .latest_cluster_metric(&green.identifier, metric)
        .await?)
}

async fn cluster_of(at: &Location, id: Option<String>) -> Result<Option<ObservedCluster>, Error> {
    Ok(match id {
        Some(id) => at.rds.describe_cluster(&id).await?,
        None => None,
    })
}
