//! The DBClusterParameterGroup reconcile: what it reads (the group, its parameters and tags, RDS's
//! cluster catalog of its family) and how it acts; the shell, the watches and the plan are the
//! shared ones (`managed::skeleton`, `managed::named`, `dbparametergroup::plan`).

use std::sync::Arc;

use crate::dbparametergroup::catalog::Catalogs;
use crate::dbparametergroup::plan::Own;
use crate::dbparametergroup::{Catalog, ObservedParameterGroup};
use crate::error::Error;
use crate::locations::Location;
use crate::managed::named::{NamedKind, Shared};

use super::{DBClusterParameterGroup, DBClusterParameterGroupStatus};
use crate::dbclusterparametergroup::aws::ClusterParameterGroupCalls;
use crate::dbclusterparametergroup::aws::ClusterParameterGroupChanges;

impl NamedKind for DBClusterParameterGroup {
    type Observed = ObservedParameterGroup;
    type Extra = Arc<Catalog>;
    type Own = Own;
    type Status = DBClusterParameterGroupStatus;
    const LABEL: &'static str = "DBClusterParameterGroup";
    const WHAT: &'static str = "DB cluster parameter group";
    const NAME_FIELD: &'static str = "dbClusterParameterGroupName";

    async fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> Result<(Option<ObservedParameterGroup>, Arc<Catalog>), Error> {
        let catalog = match self.metadata.deletion_timestamp {
            Some(_) => Arc::default(),
            None => {
                (shared.ctx.shared::<Catalogs>())
                    .get_of(&at.rds, &self.spec.family, true)
                    .await?
            }
        };
        let observed = at.rds.cluster_parameter_group(&self.name_in_rds()).await?;
        Ok((observed, catalog))
    }

    async fn act(&self, _: &Shared, at: &Location, step: &Own) -> Result<(), Error> {
        match step {
            Own::Create {
                name,
                family,
                description,
                tags,
            } => Ok((at.rds)
                .create_cluster_parameter_group(name, family, description, tags)
                .await?),
            Own::Modify { name, changes } => {
                Ok(at.rds.modify_cluster_parameters(name, changes).await?)
            }
            Own::Reset { name, changes } => {
                Ok(at.rds.reset_cluster_parameters(name, changes).await?)
            }
        }
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        Ok(at.rds.delete_cluster_parameter_group(name).await?)
    }

    fn records_after_failure(
        fields: &mut DBClusterParameterGroupStatus,
        previous: &DBClusterParameterGroupStatus,
    ) {
        crate::managed::named::keep_applied(
            &mut fields.applied_parameters,
            &previous.applied_parameters,
        );
    }

    crate::named_fields!(
        DBClusterParameterGroupStatus,
        db_cluster_parameter_group_name,
        crate::dbparametergroup::plan::plan
    );
}
