//! The RDS calls of the DBClusterParameterGroup kind: the DB cluster parameter group
//! counterparts of `dbparametergroup/aws.rs`.

use std::collections::BTreeMap;

use crate::aws_error::{AwsError, aws_error};
use crate::dbparametergroup::aws::{Change, catalog_pages, parameter};
use crate::dbparametergroup::{Catalog, ObservedParameterGroup};
use crate::rds::{Rds, rds_tags};

/// RDS's code for a group that does not exist.
const GROUP_NOT_FOUND: &str = "DBParameterGroupNotFound";

impl Rds {
    /// The cluster parameter group of this name with its parameters set (source user) and its
    /// tags; None when RDS has none.
    pub async fn cluster_parameter_group(
        &self,
        name: &str,
    ) -> Result<Option<ObservedParameterGroup>, AwsError> {
        let result = (self.client.describe_db_cluster_parameter_groups())
            .db_cluster_parameter_group_name(name)
            .send()
            .await
            .map_err(|e| aws_error("DescribeDBClusterParameterGroups", e, None));
        self.count("DescribeDBClusterParameterGroups", &result);
        let found = match result {
            Ok(out) => out
                .db_cluster_parameter_groups()
                .first()
                .map(|g| ObservedParameterGroup {
                    name: g
                        .db_cluster_parameter_group_name()
                        .unwrap_or_default()
                        .to_owned(),
                    arn: g.db_cluster_parameter_group_arn().map(str::to_owned),
                    family: g.db_parameter_group_family().unwrap_or_default().to_owned(),
                    ..Default::default()
                }),
            Err(e) if e.code == GROUP_NOT_FOUND => None,
            Err(e) => return Err(e),
        };
        let Some(mut group) = found else {
            return Ok(None);
        };
        if let Some(arn) = &group.arn {
            group.tags = self.tags_of(arn).await?;
        }
        let mut pages = (self.client.describe_db_cluster_parameters())
            .db_cluster_parameter_group_name(name)
            .source("user")
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeDBClusterParameters", e, None));
            self.count("DescribeDBClusterParameters", &page);
            for p in page?.parameters() {
                if let (Some(n), Some(v)) = (p.parameter_name(), p.parameter_value()) {
                    group.parameters.insert(n.to_owned(), v.to_owned());
                }
            }
        }
        Ok(Some(group))
    }

    /// RDS's catalog of a cluster family (DescribeEngineDefaultClusterParameters, every page).
    pub async fn cluster_parameter_catalog(&self, family: &str) -> Result<Catalog, AwsError> {
        catalog_pages(|marker| async move {
            let result = (self.client.describe_engine_default_cluster_parameters())
                .db_parameter_group_family(family)
                .set_marker(marker)
                .send()
                .await
                .map_err(|e| aws_error("DescribeEngineDefaultClusterParameters", e, None));
            self.count("DescribeEngineDefaultClusterParameters", &result);
            Ok(result?.engine_defaults().cloned())
        })
        .await
    }

    /// CreateDBClusterParameterGroup, tagged.
    pub async fn create_cluster_parameter_group(
        &self,
        name: &str,
        family: &str,
        description: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        let result = (self.client.create_db_cluster_parameter_group())
            .db_cluster_parameter_group_name(name)
            .db_parameter_group_family(family)
            .description(description)
            .set_tags(Some(rds_tags(tags)))
            .send()
            .await
            .map_err(|e| aws_error("CreateDBClusterParameterGroup", e, None));
        self.count("CreateDBClusterParameterGroup", &result);
        result.map(|_| ())
    }

    /// ModifyDBClusterParameterGroup with at most 20 parameters.
    pub async fn modify_cluster_parameters(
        &self,
        name: &str,
        changes: &[Change],
    ) -> Result<(), AwsError> {
        let result = (self.client.modify_db_cluster_parameter_group())
            .db_cluster_parameter_group_name(name)
            .set_parameters(Some(changes.iter().map(parameter).collect()))
            .send()
            .await
            .map_err(|e| aws_error("ModifyDBClusterParameterGroup", e, None));
        self.count("ModifyDBClusterParameterGroup", &result);
        result.map(|_| ())
    }

    /// ResetDBClusterParameterGroup of these parameters (at most 20).
    pub async fn reset_cluster_parameters(
        &self,
        name: &str,
        changes: &[Change],
    ) -> Result<(), AwsError> {
        let result = (self.client.reset_db_cluster_parameter_group())
            .db_cluster_parameter_group_name(name)
            .set_parameters(Some(changes.iter().map(parameter).collect()))
            .send()
            .await
            .map_err(|e| aws_error("ResetDBClusterParameterGroup", e, None));
        self.count("ResetDBClusterParameterGroup", &result);
        result.map(|_| ())
    }

    /// DeleteDBClusterParameterGroup; RDS refuses it while a cluster uses the group.
    pub async fn delete_cluster_parameter_group(&self, name: &str) -> Result<(), AwsError> {
        let result = (self.client.delete_db_cluster_parameter_group())
            .db_cluster_parameter_group_name(name)
            .send()
            .await
            .map_err(|e| aws_error("DeleteDBClusterParameterGroup", e, None));
        self.count("DeleteDBClusterParameterGroup", &result);
        match result {
            Err(e) if e.code == GROUP_NOT_FOUND => Ok(()),
            other => other.map(|_| ()),
        }
    }
}
