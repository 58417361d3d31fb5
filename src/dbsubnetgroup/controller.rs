//! The DBSubnetGroup reconcile: what it reads (the group and its tags in RDS, the DBInstances that
//! refer to it) and how it acts; the shell around them, and the watches, are the shared ones
//! (`managed::run`, `shell::reconcile`).

use crate::dbinstance::{Condition, DBInstance, LocalRef};
use crate::error::Error;
use crate::managed::{self, KindPlan, Reconciled, Shared};

use super::plan::{self, Facts, Step};
use super::{DBSubnetGroup, DBSubnetGroupStatus};

impl Reconciled for DBSubnetGroup {
    type Facts = Facts;
    type Step = Step;
    type Status = DBSubnetGroupStatus;
    const LABEL: &'static str = "DBSubnetGroup";

    async fn read(&self, shared: &Shared) -> Result<Facts, Error> {
        Ok(Facts {
            group: self.clone(),
            observed: shared.ctx.rds.subnet_group(&self.group_name()).await?,
            referrers: managed::referrers(&shared.ctx.client, self).await?,
            drift_interval: shared.drift_interval,
        })
    }

    fn plan(facts: &Facts) -> KindPlan<Step, DBSubnetGroupStatus> {
        plan::plan(facts)
    }

    async fn act(&self, shared: &Shared, step: &Step) -> Result<(), Error> {
        let ctx = &shared.ctx;
        match step {
            Step::AddFinalizer => managed::set_finalizer(ctx, self, true).await,
            Step::RemoveFinalizer => managed::set_finalizer(ctx, self, false).await,
            Step::Create {
                name,
                description,
                subnet_ids,
                tags,
            } => Ok((ctx.rds)
                .create_subnet_group(name, description, subnet_ids, tags)
                .await?),
            Step::Modify {
                name,
                description,
                subnet_ids,
            } => Ok((ctx.rds)
                .modify_subnet_group(name, description, subnet_ids)
                .await?),
            Step::AddTags { arn, tags } => Ok(ctx.rds.add_tags(arn, tags).await?),
            Step::RemoveTags { arn, keys } => Ok(ctx.rds.remove_tags(arn, keys).await?),
            Step::Delete { name } => Ok(ctx.rds.delete_subnet_group(name).await?),
        }
    }

    fn status(&self) -> Option<&DBSubnetGroupStatus> {
        self.status.as_ref()
    }

    fn conditions(status: &mut DBSubnetGroupStatus) -> &mut Vec<Condition> {
        &mut status.conditions
    }

    fn observed_generation(status: &mut DBSubnetGroupStatus) -> &mut Option<i64> {
        &mut status.observed_generation
    }

    fn rds_name(status: &DBSubnetGroupStatus) -> Option<String> {
        status.db_subnet_group_name.clone()
    }

    fn referred_by(db: &DBInstance) -> Option<&LocalRef> {
        db.spec.db_subnet_group_ref.as_ref()
    }
}
