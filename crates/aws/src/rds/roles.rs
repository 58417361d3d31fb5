//! The IAM roles of an instance or a cluster: AddRoleToDBInstance, RemoveRoleFromDBInstance,
//! AddRoleToDBCluster and RemoveRoleFromDBCluster (`resource`: `db` or `cluster`).

use super::Rds;
use crate::aws_error::{AwsError, aws_error};

impl Rds {
    /// Associates `role_arn` (for `feature`) with the instance or cluster.
    pub async fn add_role(
        &self,
        resource: &str,
        identifier: &str,
        role_arn: &str,
        feature: Option<&str>,
    ) -> Result<(), AwsError> {
        let feature = feature.map(str::to_owned);
        if resource == "cluster" {
            let result = (self.client.add_role_to_db_cluster())
                .db_cluster_identifier(identifier)
                .role_arn(role_arn)
                .set_feature_name(feature)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| aws_error("AddRoleToDBCluster", e, None));
            let result = self.counted("AddRoleToDBCluster", result);
            return result;
        }
        let result = (self.client.add_role_to_db_instance())
            .db_instance_identifier(identifier)
            .role_arn(role_arn)
            .set_feature_name(feature)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| aws_error("AddRoleToDBInstance", e, None));
        self.counted("AddRoleToDBInstance", result)
    }

    /// Removes the association of `role_arn` (for `feature`); one already gone is success.
    pub async fn remove_role(
        &self,
        resource: &str,
        identifier: &str,
        role_arn: &str,
        feature: Option<&str>,
    ) -> Result<(), AwsError> {
        let feature = feature.map(str::to_owned);
        let result = if resource == "cluster" {
            let result = (self.client.remove_role_from_db_cluster())
                .db_cluster_identifier(identifier)
                .role_arn(role_arn)
                .set_feature_name(feature)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| aws_error("RemoveRoleFromDBCluster", e, None));
            self.counted("RemoveRoleFromDBCluster", result)
        } else {
            let result = (self.client.remove_role_from_db_instance())
                .db_instance_identifier(identifier)
                .role_arn(role_arn)
                .set_feature_name(feature)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| aws_error("RemoveRoleFromDBInstance", e, None));
            self.counted("RemoveRoleFromDBInstance", result)
        };
        match result {
            Err(e) if e.gone() => Ok(()),
            other => other,
        }
    }
}
