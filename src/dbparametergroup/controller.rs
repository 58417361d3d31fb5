//! The DBParameterGroup reconcile: what it reads (the group, its parameters and tags, RDS's catalog
//! of its family, the DBInstances that refer to it) and how it acts; the shell and the watches are
//! the shared ones (`managed::skeleton`, `managed::named`).

use std::sync::Arc;

use crate::error::Error;
use crate::locations::Location;
use crate::managed::named::{NamedKind, Shared};

use super::catalog::Catalogs;
use super::plan::Own;
use super::{Catalog, DBParameterGroup, DBParameterGroupStatus, ObservedParameterGroup};
use crate::dbparametergroup::aws::ParameterGroupCalls;
use crate::dbparametergroup::aws::ParameterGroupChanges;

impl NamedKind for DBParameterGroup {
    type Observed = ObservedParameterGroup;
    type Extra = Arc<Catalog>;
    type Own = Own;
    type Status = DBParameterGroupStatus;
    const LABEL: &'static str = "DBParameterGroup";
    const WHAT: &'static str = "DB parameter group";
    const NAME_FIELD: &'static str = "dbParameterGroupName";

    async fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> Result<(Option<ObservedParameterGroup>, Arc<Catalog>), Error> {
        let ctx = &shared.ctx;
        let deleting = self.metadata.deletion_timestamp.is_some();
        let catalog = match deleting {
            true => Arc::default(),
            false => {
                (ctx.shared::<Catalogs>())
                    .get(&at.rds, &self.spec.family)
                    .await?
            }
        };
        let name = self.name_in_rds();
        // The shared listing's entry (with its tags) while it may serve; only the parameters are
        // read then. At deletion, RDS is asked directly.
        let known = match deleting {
            true => None,
            false => {
                (at.observer.listing::<ObservedParameterGroup>()).get(&name, shared.drift_interval)
            }
        };
        let observed = at.rds.parameter_group(&name, known).await?;
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
                .create_parameter_group(name, family, description, tags)
                .await?),
            Own::Modify { name, changes } => Ok(at.rds.modify_parameters(name, changes).await?),
            Own::Reset { name, changes } => Ok(at.rds.reset_parameters(name, changes).await?),
        }
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        Ok(at.rds.delete_parameter_group(name).await?)
    }

    fn records_after_failure(
        fields: &mut DBParameterGroupStatus,
        previous: &DBParameterGroupStatus,
    ) {
        crate::managed::named::keep_applied(
            &mut fields.applied_parameters,
            &previous.applied_parameters,
        );
    }

    crate::named_fields!(DBParameterGroupStatus, db_parameter_group_name);
}
