//! The DBSubnetGroup reconcile: what it reads (the group and its tags in RDS, the DBInstances that
//! refer to it) and how it acts; the shell around them, and the watches, are the shared ones
//! (`managed::skeleton`, `managed::groups`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::dbinstance::DBInstance;
use crate::error::Error;
use crate::managed::crd::{LocalRef, Tag};
use crate::managed::groups::{Group, GroupPlan, Shared};
use crate::managed::references;

use super::plan::{self, Facts, Own};
use super::{DBSubnetGroup, DBSubnetGroupStatus};

impl Group for DBSubnetGroup {
    type Facts = Facts;
    type Own = Own;
    type Status = DBSubnetGroupStatus;
    const LABEL: &'static str = "DBSubnetGroup";
    const WHAT: &'static str = "DB subnet group";
    const NAME_FIELD: &'static str = "dbSubnetGroupName";

    async fn read(&self, shared: &Shared) -> Result<Facts, Error> {
        Ok(Facts {
            group: self.clone(),
            observed: shared.ctx.rds.subnet_group(&self.group_name()).await?,
            referrers: references::referrers(&shared.ctx.client, self).await?,
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
                description,
                subnet_ids,
                tags,
            } => Ok((ctx.rds)
                .create_subnet_group(name, description, subnet_ids, tags)
                .await?),
            Own::Modify {
                name,
                description,
                subnet_ids,
            } => Ok((ctx.rds)
                .modify_subnet_group(name, description, subnet_ids)
                .await?),
            Own::Delete { name } => Ok(ctx.rds.delete_subnet_group(name).await?),
        }
    }

    fn status(&self) -> Option<&DBSubnetGroupStatus> {
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

    fn applied_tag_keys(status: &DBSubnetGroupStatus) -> &[String] {
        &status.applied_tag_keys
    }

    fn read_at(facts: &Facts) -> &str {
        &facts.now
    }

    fn conditions(status: &DBSubnetGroupStatus) -> &[Condition] {
        &status.conditions
    }

    fn conditions_mut(status: &mut DBSubnetGroupStatus) -> &mut Vec<Condition> {
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
