//! The RDS calls of the DBClusterParameterGroup kind: the DB cluster parameter group
//! counterparts of `dbparametergroup/aws.rs`, its catalog, create, modify, reset and delete made
//! by the same `parameter_group_calls!` as a DB parameter group's.

use crate::aws_error::{AwsError, aws_error};
use crate::dbparametergroup::ObservedParameterGroup;
use crate::rds::Rds;

/// The RDS calls of the DBClusterParameterGroup kind.
pub(super) trait ClusterParameterGroupCalls {
    /// The cluster parameter group of this name with its parameters set (source user) and its
    /// tags; None when RDS has none.
    fn cluster_parameter_group(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<ObservedParameterGroup>, AwsError>> + Send;
}

impl ClusterParameterGroupCalls for Rds {
    async fn cluster_parameter_group(
        &self,
        name: &str,
    ) -> Result<Option<ObservedParameterGroup>, AwsError> {
        let result = (self.client.describe_db_cluster_parameter_groups())
            .db_cluster_parameter_group_name(name)
            .send()
            .await
            .map_err(|e| aws_error("DescribeDBClusterParameterGroups", e, None));
        let result = self.counted("DescribeDBClusterParameterGroups", result);
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
            Err(e) if e.gone() => None,
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
            let page = self.counted("DescribeDBClusterParameters", page);
            for p in page?.parameters() {
                if let (Some(n), Some(v)) = (p.parameter_name(), p.parameter_value()) {
                    group.parameters.insert(n.to_owned(), v.to_owned());
                }
            }
        }
        Ok(Some(group))
    }
}

crate::dbparametergroup::aws::parameter_group_calls!(
    trait: ClusterParameterGroupChanges,
    name: db_cluster_parameter_group_name,
    create: create_cluster_parameter_group = create_db_cluster_parameter_group "CreateDBClusterParameterGroup",
    modify: modify_cluster_parameters = modify_db_cluster_parameter_group "ModifyDBClusterParameterGroup",
    reset: reset_cluster_parameters = reset_db_cluster_parameter_group "ResetDBClusterParameterGroup",
    delete: delete_cluster_parameter_group = delete_db_cluster_parameter_group "DeleteDBClusterParameterGroup",
);
