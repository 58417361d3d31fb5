//! The DBSubnetGroup reconcile: what it reads (the group and its tags in RDS, the DBInstances that
//! refer to it) and how it acts; the shell around them, and the watches, are the shared ones
//! (`managed::skeleton`, `managed::named`).

use crate::error::Error;
use crate::locations::Location;
use crate::managed::named::{NamedKind, Shared};

use super::plan::Own;
use super::{DBSubnetGroup, DBSubnetGroupStatus, ObservedSubnetGroup};
use crate::dbsubnetgroup::aws::SubnetGroupCalls;

impl NamedKind for DBSubnetGroup {
    type Observed = ObservedSubnetGroup;
    type Extra = ();
    type Own = Own;
    type Status = DBSubnetGroupStatus;
    const LABEL: &'static str = "DBSubnetGroup";
    const WHAT: &'static str = "DB subnet group";
    const NAME_FIELD: &'static str = "dbSubnetGroupName";

    async fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> Result<(Option<ObservedSubnetGroup>, ()), Error> {
        let name = self.name_in_rds();
        // The shared listing's entry while it may serve; at deletion, RDS is asked directly.
        if self.metadata.deletion_timestamp.is_none()
            && let Some(group) =
                (at.observer.listing::<ObservedSubnetGroup>()).get(&name, shared.drift_interval)
        {
            return Ok((Some(group), ()));
        }
        Ok((at.rds.subnet_group(&name).await?, ()))
    }

    async fn act(&self, _: &Shared, at: &Location, step: &Own) -> Result<(), Error> {
        match step {
            Own::Create {
                name,
                description,
                subnet_ids,
                tags,
            } => Ok((at.rds)
                .create_subnet_group(name, description, subnet_ids, tags)
                .await?),
            Own::Modify {
                name,
                description,
                subnet_ids,
            } => Ok((at.rds)
                .modify_subnet_group(name, description, subnet_ids)
                .await?),
        }
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        Ok(at.rds.delete_subnet_group(name).await?)
    }

    crate::named_fields!(DBSubnetGroupStatus, db_subnet_group_name);
}
