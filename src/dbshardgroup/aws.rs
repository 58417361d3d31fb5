//! The RDS calls of the DBShardGroup kind: DescribeDBShardGroups (one, or every shard group 100 a
//! page, with their tags), CreateDBShardGroup, ModifyDBShardGroup and DeleteDBShardGroup (counted
//! and classified as every call).

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, rds_tags, tag_map};

use super::ObservedShardGroup;
use super::plan::{Create, Own};

/// RDS's code for a shard group that does not exist.
const NOT_FOUND: &str = "DBShardGroupNotFound";

// The shard groups as the observer lists them (`observer::listing`), with the tags their pages
// carry.
crate::listed_by_name!(ObservedShardGroup, "the DB shard groups", shard_group_pages);

/// The RDS calls of the DBShardGroup kind.
pub(super) trait ShardGroupCalls {
    /// DescribeDBShardGroups of one shard group, with its tags; None when RDS has none.
    fn shard_group(
        &self,
        identifier: &str,
    ) -> impl Future<Output = Result<Option<ObservedShardGroup>, AwsError>> + Send;

    /// Every shard group of the account and region, 100 a page, with their tags.
    fn shard_group_pages(
        &self,
    ) -> impl Future<Output = Result<Vec<ObservedShardGroup>, AwsError>> + Send;

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
        self.count("DescribeDBShardGroups", &result);
        match result {
            Ok(out) => Ok(out.db_shard_groups().first().map(observed)),
            Err(e) if e.code == NOT_FOUND => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn shard_group_pages(&self) -> Result<Vec<ObservedShardGroup>, AwsError> {
        let mut all = Vec::new();
        let mut marker = None;
        // The SDK has no paginator for DescribeDBShardGroups: Marker by hand.
        loop {
            let result = (self.client.describe_db_shard_groups())
                .max_records(100)
                .set_marker(marker)
                .send()
                .await
                .map_err(|e| aws_error("DescribeDBShardGroups", e, None));
            self.count("DescribeDBShardGroups", &result);
            let page = result?;
            all.extend(page.db_shard_groups().iter().map(observed));
            marker = page.marker().map(str::to_owned);
            if marker.is_none() {
                return Ok(all);
            }
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
                self.count("ModifyDBShardGroup", &result);
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
        self.count("DeleteDBShardGroup", &result);
        match result {
            Err(e) if e.code == NOT_FOUND => Ok(()),
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
    rds.count("CreateDBShardGroup", &result);
    result.map(|_| ())
}

fn observed(g: &aws_sdk_rds::types::DbShardGroup) -> ObservedShardGroup {
    let text = |v: Option<&str>| v.unwrap_or_default().to_owned();
    ObservedShardGroup {
        name: text(g.db_shard_group_identifier()),
        arn: g.db_shard_group_arn().map(str::to_owned),
        cluster: text(g.db_cluster_identifier()),
        max_acu: g.max_acu(),
        min_acu: g.min_acu(),
        compute_redundancy: g.compute_redundancy(),
        publicly_accessible: g.publicly_accessible(),
        status: text(g.status()),
        endpoint: g.endpoint().map(str::to_owned),
        tags: tag_map(g.tag_list()),
    }
}
