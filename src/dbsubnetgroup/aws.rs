//! The RDS calls of the DBSubnetGroup kind (counted and classified as every call, in `rds.rs`).

use std::collections::BTreeMap;

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, rds_tags};

use super::{ObservedSubnetGroup, SubnetStatus};

// The subnet groups as the observer lists them (`observer::listing`), their tags from GetResources.
crate::listed_by_name!(
    ObservedSubnetGroup,
    "the DB subnet groups",
    "rds:subgrp",
    subnet_group_pages
);

/// The RDS calls of the DBSubnetGroup kind.
pub(super) trait SubnetGroupCalls {
    /// DescribeDBSubnetGroups of one group, with its tags (ListTagsForResource); None when RDS
    /// has none of that name.
    fn subnet_group(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<ObservedSubnetGroup>, AwsError>> + Send;

    /// Every DB subnet group of the account and region, 100 a page (DescribeDBSubnetGroups),
    /// without their tags (GetResources has them: `rds::tagging`).
    fn subnet_group_pages(
        &self,
    ) -> impl Future<Output = Result<Vec<ObservedSubnetGroup>, AwsError>> + Send;

    /// CreateDBSubnetGroup, tagged.
    fn create_subnet_group(
        &self,
        name: &str,
        description: &str,
        subnet_ids: &[String],
        tags: &BTreeMap<String, String>,
    ) -> impl Future<Output = Result<(), AwsError>> + Send;

    /// ModifyDBSubnetGroup: RDS takes the whole list of subnets every time.
    fn modify_subnet_group(
        &self,
        name: &str,
        description: &str,
        subnet_ids: &[String],
    ) -> impl Future<Output = Result<(), AwsError>> + Send;

    /// DeleteDBSubnetGroup; RDS refuses it while an instance uses the group
    /// (InvalidDBSubnetGroupStateFault).
    fn delete_subnet_group(&self, name: &str) -> impl Future<Output = Result<(), AwsError>> + Send;
}

impl SubnetGroupCalls for Rds {
    async fn subnet_group(&self, name: &str) -> Result<Option<ObservedSubnetGroup>, AwsError> {
        self.described_with_tags(
            || describe_subnet_group(self, name),
            |o| o.arn.as_deref(),
            |o| &mut o.tags,
        )
        .await
    }

    async fn subnet_group_pages(&self) -> Result<Vec<ObservedSubnetGroup>, AwsError> {
        let mut groups = Vec::new();
        let mut pages = (self.client.describe_db_subnet_groups())
            .max_records(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeDBSubnetGroups", e, None));
            let page = self.counted("DescribeDBSubnetGroups", page);
            groups.extend(page?.db_subnet_groups().iter().map(observed));
        }
        Ok(groups)
    }

    async fn create_subnet_group(
        &self,
        name: &str,
        description: &str,
        subnet_ids: &[String],
        tags: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        let result = (self.client.create_db_subnet_group())
            .db_subnet_group_name(name)
            .db_subnet_group_description(description)
            .set_subnet_ids(Some(subnet_ids.to_vec()))
            .set_tags(Some(rds_tags(tags)))
            .send()
            .await
            .map_err(|e| aws_error("CreateDBSubnetGroup", e, None));
        let result = self.counted("CreateDBSubnetGroup", result);
        result.map(|_| ())
    }

    async fn modify_subnet_group(
        &self,
        name: &str,
        description: &str,
        subnet_ids: &[String],
    ) -> Result<(), AwsError> {
        let result = (self.client.modify_db_subnet_group())
            .db_subnet_group_name(name)
            .db_subnet_group_description(description)
            .set_subnet_ids(Some(subnet_ids.to_vec()))
            .send()
            .await
            .map_err(|e| aws_error("ModifyDBSubnetGroup", e, None));
        let result = self.counted("ModifyDBSubnetGroup", result);
        result.map(|_| ())
    }

    async fn delete_subnet_group(&self, name: &str) -> Result<(), AwsError> {
        let result = (self.client.delete_db_subnet_group())
            .db_subnet_group_name(name)
            .send()
            .await
            .map_err(|e| aws_error("DeleteDBSubnetGroup", e, None));
        let result = self.counted("DeleteDBSubnetGroup", result);
        match result {
            Err(e) if e.gone() => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

async fn describe_subnet_group(
    rds: &Rds,
    name: &str,
) -> Result<Option<ObservedSubnetGroup>, AwsError> {
    let result = (rds.client.describe_db_subnet_groups())
        .db_subnet_group_name(name)
        .send()
        .await
        .map_err(|e| aws_error("DescribeDBSubnetGroups", e, None));
    let result = rds.counted("DescribeDBSubnetGroups", result);
    match result {
        Ok(out) => Ok(out.db_subnet_groups().first().map(observed)),
        Err(e) if e.gone() => Ok(None),
        Err(e) => Err(e),
    }
}

/// A group as RDS describes it, without its tags.
fn observed(g: &aws_sdk_rds::types::DbSubnetGroup) -> ObservedSubnetGroup {
    ObservedSubnetGroup {
        name: g.db_subnet_group_name().unwrap_or_default().to_owned(),
        arn: g.db_subnet_group_arn().map(str::to_owned),
        description: g
            .db_subnet_group_description()
            .unwrap_or_default()
            .to_owned(),
        vpc_id: g.vpc_id().map(str::to_owned),
        state: g.subnet_group_status().unwrap_or_default().to_owned(),
        subnets: (g.subnets().iter())
            .map(|s| SubnetStatus {
                subnet_id: s.subnet_identifier().unwrap_or_default().to_owned(),
                availability_zone: (s.subnet_availability_zone())
                    .and_then(|z| z.name())
                    .unwrap_or_default()
                    .to_owned(),
                status: s.subnet_status().unwrap_or_default().to_owned(),
            })
            .collect(),
        tags: BTreeMap::new(),
    }
}
