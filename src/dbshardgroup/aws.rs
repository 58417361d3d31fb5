//! The RDS calls of the DBShardGroup kind: DescribeDBShardGroups of one, CreateDBShardGroup,
//! ModifyDBShardGroup and DeleteDBShardGroup (counted and classified as every call). The listing of
//! them all is shared with the DBCluster (`database::shard_group`).

use crate::aws_error::{AwsError, aws_error};
use crate::database::shard_group::observed;
use crate::rds::{Rds, rds_tags};

use super::ObservedShardGroup;
use super::plan::{Create, Own};

/// The RDS calls of the DBShardGroup kind.
pub(super) trait ShardGroupCalls {
    /// DescribeDBShardGroups of one shard group, with its tags; None when RDS has none.
    fn shard_group(
        &self,
        identifier: &str,
    ) -> impl Future<Output = Result<Option<ObservedShardGroup>, AwsError>> + Send;

    /// The step's call.
    fn shard_group_call(&self, step: &Own) -> impl Future<Output = Result<(), AwsError>> + Send;

    /// DeleteDBShardGroup; one already gone is deleted.
    fn delete_shard_group(
        &self,
        identifier: &str,
    ) -> impl Future<Output = Result<(), AwsError>> + Send;
}

impl ShardGroupCalls for Rds {
    async fn shard_group(&self, identifier: &str) -> Result<Option<ObservedShardGroup>, AwsError> {
        let result = (self.client.describe_db_shard_groups())
            .db_shard_group_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("DescribeDBShardGroups", e, None));
        let result = self.counted("DescribeDBShardGroups", result);
        match result {
            Ok(out) => Ok(out.db_shard_groups().first().map(observed)),
            Err(e) if e.gone() => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn shard_group_call(&self, step: &Own) -> Result<(), AwsError> {
        match step {
            Own::Create(c) => create(self, c).await,
            Own::Modify {
                identifier,
                max_acu,
                min_acu,
                compute_redundancy,
            } => {
                let result = (self.client.modify_db_shard_group())
                    .db_shard_group_identifier(identifier)
                    .set_max_acu(*max_acu)
                    .set_min_acu(*min_acu)
                    .set_compute_redundancy(*compute_redundancy)
                    .send()
                    .await
                    .map_err(|e| aws_error("ModifyDBShardGroup", e, None));
                let result = self.counted("ModifyDBShardGroup", result);
                result.map(|_| ())
            }
        }
    }

    async fn delete_shard_group(&self, identifier: &str) -> Result<(), AwsError> {
        let result = (self.client.delete_db_shard_group())
            .db_shard_group_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("DeleteDBShardGroup", e, None));
        let result = self.counted("DeleteDBShardGroup", result);
        match result {
            Err(e) if e.gone() => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

/// CreateDBShardGroup, tagged from its first moment.
async fn create(rds: &Rds, c: &Create) -> Result<(), AwsError> {
    let result = (rds.client.create_db_shard_group())
        .db_shard_group_identifier(&c.identifier)
        .db_cluster_identifier(&c.cluster)
        .max_acu(c.max_acu)
        .set_min_acu(c.min_acu)
        .set_compute_redundancy(c.compute_redundancy)
        .set_publicly_accessible(c.publicly_accessible)
        .set_tags(Some(rds_tags(&c.tags)))
        .send()
        .await
        .map_err(|e| aws_error("CreateDBShardGroup", e, None));
    let result = rds.counted("CreateDBShardGroup", result);
    result.map(|_| ())
}
