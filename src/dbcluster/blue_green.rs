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
    Ok(Some(BlueGreenFacts {
        found: facts.with(green, old),
        members,
    }))
}

async fn cluster_of(at: &Location, id: Option<String>) -> Result<Option<ObservedCluster>, Error> {
    Ok(match id {
        Some(id) => at.rds.describe_cluster(&id).await?,
        None => None,
    })
}
