//! The GlobalCluster reconcile: what it reads (the global database in RDS; while it is still to
//! be made of a primary, that DBCluster and its cluster) and how it acts; the shell around them,
//! the deletion and the tag steps are the group kinds' (`managed::groups`).

use crate::error::Error;
use crate::locations::Location;
use crate::managed::groups::{Group, Shared};
use crate::managed::references::Resolver;

use super::plan::Own;
use super::{GlobalCluster, GlobalClusterStatus, ObservedGlobalCluster, Primary};

/// The marker under which the DBCluster kind registers how a DBCluster's name resolves to its RDS
/// identifier (`references::Resolver`): this kind cannot name that one, which will name it.
pub struct PrimaryCluster;

impl Group for GlobalCluster {
    type Observed = ObservedGlobalCluster;
    type Extra = Primary;
    type Own = Own;
    type Status = GlobalClusterStatus;
    const LABEL: &'static str = "GlobalCluster";
    const WHAT: &'static str = "global database";
    const NAME_FIELD: &'static str = "globalClusterIdentifier";

    async fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> Result<(Option<ObservedGlobalCluster>, Primary), Error> {
        let (name, deleting) = (
            self.group_name(),
            self.metadata.deletion_timestamp.is_some(),
        );
        // The shared listing's entry while it may serve (one RDS is not busy with); otherwise,
        // and at deletion (decided on the members RDS lists now), RDS is asked directly.
        let listed = (at.observer.listing::<ObservedGlobalCluster>())
            .get(&name, shared.drift_interval)
            .filter(|_| !deleting);
        let observed = match listed {
            Some(found) => Some(found),
            None => at.rds.global_cluster(&name).await?,
        };
        let asked = observed.is_none() && !deleting;
        let primary = match (&self.spec.source_db_cluster_ref, asked) {
            (Some(r), true) => primary(shared, at, &r.name, self).await?,
            _ => Primary::NotRead,
        };
        Ok((observed, primary))
    }

    async fn act(&self, _: &Shared, at: &Location, step: &Own) -> Result<(), Error> {
        Ok(at.rds.global_cluster_call(step).await?)
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        Ok(at.rds.delete_global_cluster(name).await?)
    }

    fn retained(&self, _adopted: bool) -> bool {
        self.spec.deletion_policy == Some(super::GlobalDeletionPolicy::Retain)
    }

    crate::group_fields!(GlobalClusterStatus, global_cluster_identifier);
}

/// The primary DBCluster of the namespace, resolved once Ready, and its cluster in this location
/// (CreateGlobalCluster names it by ARN, and RDS makes the global database in its region).
async fn primary(
    shared: &Shared,
    at: &Location,
    name: &str,
    g: &GlobalCluster,
) -> Result<Primary, Error> {
    let ctx = &shared.ctx;
    let namespace = g.metadata.namespace.as_deref().unwrap_or_default();
    let resolver = ctx.shared::<Resolver<PrimaryCluster>>();
    let identifier = match resolver.resolve(&ctx.client, namespace, name).await? {
        Ok(identifier) => identifier,
        Err(why) => return Ok(Primary::Unresolved(why)),
    };
    Ok(match at.rds.describe_cluster(&identifier).await? {
        Some(c) => Primary::Found {
            arn: c.arn.unwrap_or_default(),
            status: c.status,
        },
        None => Primary::Unresolved(format!(
            "RDS has no cluster {identifier} in the GlobalCluster's account and region: the \
             global database is made where its primary is (spec.region)"
        )),
    })
}
