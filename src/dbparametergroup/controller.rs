//! The DBParameterGroup reconcile: what it reads (the group, its parameters and tags, RDS's catalog
//! of its family, the DBInstances that refer to it) and how it acts; the shell and the watches are
//! the shared ones (`managed::run`, `shell::reconcile`).

use std::sync::Arc;

use crate::dbinstance::{Condition, DBInstance, LocalRef};
use crate::error::Error;
use crate::managed::{self, KindPlan, Reconciled, Shared};

use super::plan::{self, Facts, Step};
use super::{DBParameterGroup, DBParameterGroupStatus};

impl Reconciled for DBParameterGroup {
    type Facts = Facts;
    type Step = Step;
    type Status = DBParameterGroupStatus;
    const LABEL: &'static str = "DBParameterGroup";

    async fn read(&self, shared: &Shared) -> Result<Facts, Error> {
        let ctx = &shared.ctx;
        let deleting = self.metadata.deletion_timestamp.is_some();
        let catalog = match deleting {
            true => Arc::default(),
            false => ctx.catalogs.get(&ctx.rds, &self.spec.family).await?,
        };
        Ok(Facts {
            group: self.clone(),
            observed: ctx.rds.parameter_group(&self.group_name()).await?,
            catalog,
            referrers: managed::referrers(&ctx.client, self).await?,
            drift_interval: shared.drift_interval,
        })
    }

    fn plan(facts: &Facts) -> KindPlan<Step, DBParameterGroupStatus> {
        plan::plan(facts)
    }

    async fn act(&self, shared: &Shared, step: &Step) -> Result<(), Error> {
        let ctx = &shared.ctx;
        match step {
            Step::AddFinalizer => managed::set_finalizer(ctx, self, true).await,
            Step::RemoveFinalizer => managed::set_finalizer(ctx, self, false).await,
            Step::Create {
                name,
                family,
                description,
                tags,
            } => Ok((ctx.rds)
                .create_parameter_group(name, family, description, tags)
                .await?),
            Step::Modify { name, changes } => Ok(ctx.rds.modify_parameters(name, changes).await?),
            Step::Reset { name, changes } => Ok(ctx.rds.reset_parameters(name, changes).await?),
            Step::AddTags { arn, tags } => Ok(ctx.rds.add_tags(arn, tags).await?),
            Step::RemoveTags { arn, keys } => Ok(ctx.rds.remove_tags(arn, keys).await?),
            Step::Delete { name } => Ok(ctx.rds.delete_parameter_group(name).await?),
        }
    }

    fn status(&self) -> Option<&DBParameterGroupStatus> {
        self.status.as_ref()
    }

    fn conditions(status: &mut DBParameterGroupStatus) -> &mut Vec<Condition> {
        &mut status.conditions
    }

    fn observed_generation(status: &mut DBParameterGroupStatus) -> &mut Option<i64> {
        &mut status.observed_generation
    }

    fn rds_name(status: &DBParameterGroupStatus) -> Option<String> {
        status.db_parameter_group_name.clone()
    }

    fn referred_by(db: &DBInstance) -> Option<&LocalRef> {
        db.spec.db_parameter_group_ref.as_ref()
    }
}
