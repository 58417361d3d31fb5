//! The DBParameterGroup reconcile: what it reads (the group, its parameters and tags, RDS's catalog
//! of its family, the DBInstances that refer to it) and how it acts; the shell and the watches are
//! the shared ones (`managed::skeleton`, `managed::groups`).

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::dbinstance::DBInstance;
use crate::error::Error;
use crate::managed::crd::{LocalRef, Tag};
use crate::managed::groups::{Group, GroupPlan, Shared};
use crate::managed::references;

use super::plan::{self, Facts, Own};
use super::{DBParameterGroup, DBParameterGroupStatus};

impl Group for DBParameterGroup {
    type Facts = Facts;
    type Own = Own;
    type Status = DBParameterGroupStatus;
    const LABEL: &'static str = "DBParameterGroup";
    const WHAT: &'static str = "DB parameter group";
    const NAME_FIELD: &'static str = "dbParameterGroupName";

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
            referrers: references::referrers(&ctx.client, self).await?,
            drift_interval: shared.drift_interval,
            now: crate::duration::now(),
        })
    }

    fn plan(facts: &Facts) -> GroupPlan<Self> {
        plan::plan(facts)
    }

    async fn act(&self, shared: &Shared, step: &Own) -> Result<(), Error> {
        let ctx = &shared.ctx;
        match step {
            Own::Create {
                name,
                family,
                description,
                tags,
            } => Ok((ctx.rds)
                .create_parameter_group(name, family, description, tags)
                .await?),
            Own::Modify { name, changes } => Ok(ctx.rds.modify_parameters(name, changes).await?),
            Own::Reset { name, changes } => Ok(ctx.rds.reset_parameters(name, changes).await?),
            Own::Delete { name } => Ok(ctx.rds.delete_parameter_group(name).await?),
        }
    }

    fn status(&self) -> Option<&DBParameterGroupStatus> {
        self.status.as_ref()
    }

    fn rds_name_of(&self) -> String {
        self.group_name()
    }

    fn delete_step(name: String) -> Own {
        Own::Delete { name }
    }

    fn spec_tags(&self) -> &[Tag] {
        &self.spec.tags
    }

    fn applied_tag_keys(status: &DBParameterGroupStatus) -> &[String] {
        &status.applied_tag_keys
    }

    fn read_at(facts: &Facts) -> &str {
        &facts.now
    }

    fn conditions(status: &DBParameterGroupStatus) -> &[Condition] {
        &status.conditions
    }

    fn conditions_mut(status: &mut DBParameterGroupStatus) -> &mut Vec<Condition> {
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
