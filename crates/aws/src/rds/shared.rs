//! The instance and cluster calls more than one part of the operator makes, as RDS answers them:
//! DescribeDBInstances (one, some, every page) for the shared instance poll and the snapshot
//! kinds' sources, DescribeDBClusters of one cluster, and DeleteDBInstance. A kind reads an answer
//! into its own model (DBInstance's `observed`, DBCluster's `ObservedCluster`); the plumbing does
//! not know those models.

use aws_sdk_rds::types::{DbCluster, DbInstance, Filter};

use super::Rds;
use crate::aws_error::{AwsError, ErrorClass, aws_error};

impl Rds {
    /// DescribeDBInstances for one identifier (or an ARN of this region); None when RDS has no
    /// such instance.
    pub async fn db_instance(&self, identifier: &str) -> Result<Option<DbInstance>, AwsError> {
        let result = (self.client.describe_db_instances())
            .db_instance_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("DescribeDBInstances", e, None));
        let result = self.counted("DescribeDBInstances", result);
        match result {
            Ok(out) => Ok(out.db_instances().first().cloned()),
            Err(e) if e.class == ErrorClass::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The instances with these identifiers (at most 100), by one DescribeDBInstances with a
    /// `db-instance-id` filter; those RDS does not have are simply absent from the answer.
    pub async fn db_instances(&self, ids: &[String]) -> Result<Vec<DbInstance>, AwsError> {
        let filter = Filter::builder()
            .name("db-instance-id")
            .set_values(Some(ids.to_vec()))
            .build();
        let result = (self.client.describe_db_instances())
            .filters(filter)
            .max_records(100)
            .send()
            .await
            .map_err(|e| aws_error("DescribeDBInstances", e, None));
        let result = self.counted("DescribeDBInstances", result);
        Ok(result?.db_instances.unwrap_or_default())
    }

    /// Every instance of the account and region: DescribeDBInstances through the SDK's paginator,
    /// 100 a page, each page counted and handed to `each` as it comes (never all N at once).
    pub async fn db_instance_pages(
        &self,
        mut each: impl FnMut(&[DbInstance]),
    ) -> Result<(), AwsError> {
        let mut pages = (self.client.describe_db_instances())
            .into_paginator()
            .page_size(100)
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeDBInstances", e, None));
            let page = self.counted("DescribeDBInstances", page);
            each(page?.db_instances());
        }
        Ok(())
    }

    /// DescribeDBClusters for one identifier; None when RDS has no such cluster.
    pub async fn db_cluster(&self, identifier: &str) -> Result<Option<DbCluster>, AwsError> {
        let result = (self.client.describe_db_clusters())
            .db_cluster_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("DescribeDBClusters", e, None));
        let result = self.counted("DescribeDBClusters", result);
        match result {
            Ok(out) => Ok(out.db_clusters().first().cloned()),
            Err(e) if e.class == ErrorClass::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// DeleteDBInstance, with a final snapshot when one is named; automated backups are deleted
    /// only when asked. A missing instance is success. DBInstance deletes its instance with it, and
    /// DBCluster the members of a cluster a blue/green deployment left.
    pub async fn delete_instance(
        &self,
        identifier: &str,
        final_snapshot: Option<&str>,
        delete_automated_backups: bool,
    ) -> Result<(), AwsError> {
        let result = self
            .client
            .delete_db_instance()
            .db_instance_identifier(identifier)
            .skip_final_snapshot(final_snapshot.is_none())
            .set_final_db_snapshot_identifier(final_snapshot.map(str::to_owned))
            .delete_automated_backups(delete_automated_backups)
            .send()
            .await
            .map_err(|e| aws_error("DeleteDBInstance", e, None));
        let result = self.counted("DeleteDBInstance", result);
        match result {
            Ok(_) => Ok(()),
            Err(e) if e.class == ErrorClass::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }
}
