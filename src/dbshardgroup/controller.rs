//! The DBShardGroup reconcile: what it reads (the shard group, from the shared listing while it
//! may serve, else from RDS; its cluster, the DBCluster of the namespace it names, resolved to its
//! RDS identifier once Ready) and how it acts; the shell, the deletion and the tag steps are the
//! group kinds' (`managed::named`).

use kube::ResourceExt;

use crate::dbcluster::DBCluster;
use crate::error::Error;
use crate::locations::Location;
use crate::managed::named::{NamedKind, Shared};
use crate::managed::references::resolve;

use super::aws::ShardGroupCalls;
use super::plan::Own;
use super::{Cluster, DBShardGroup, DBShardGroupStatus, ObservedShardGroup};

impl NamedKind for DBShardGroup {
    type Observed = ObservedShardGroup;
    type Extra = Cluster;
    type Own = Own;
    type Status = DBShardGroupStatus;
    const LABEL: &'static str = "DBShardGroup";
    const WHAT: &'static str = "DB shard group";
    const NAME_FIELD: &'static str = "dbShardGroupIdentifier";

    async fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> Result<(Option<ObservedShardGroup>, Cluster), Error> {
        let (name, deleting) = (
            self.name_in_rds(),
            self.metadata.deletion_timestamp.is_some(),
        );
        let listed = (at.observer.listing::<ObservedShardGroup>())
            .get(&name, shared.drift_interval)
            .filter(|_| !deleting);
        let observed = match listed {
            Some(found) => Some(found),
            None => at.rds.shard_group(&name).await?,
        };
        let cluster = match deleting {
            true => Cluster::default(),
            false => {
                let namespace = self.namespace().unwrap_or_default();
                let name = &self.spec.db_cluster_ref.name;
                match resolve::<DBCluster>(&shared.ctx.client, &namespace, name).await? {
                    Ok(id) => Cluster {
                        identifier: Some(id),
                        unresolved: None,
                    },
                    Err(why) => Cluster {
                        identifier: None,
                        unresolved: Some(why),
                    },
                }
            }
        };
        Ok((observed, cluster))
    }

    async fn act(&self, _: &Shared, at: &Location, step: &Own) -> Result<(), Error> {
        let _stale = (at.observer.listing::<ObservedShardGroup>()).changing(&self.name_in_rds());
        Ok(at.rds.shard_group_call(step).await?)
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        let _stale = (at.observer.listing::<ObservedShardGroup>()).changing(name);
        Ok(at.rds.delete_shard_group(name).await?)
    }

    crate::named_fields!(DBShardGroupStatus, db_shard_group_identifier);
}
