//! The RDS calls of the GlobalCluster kind (counted and classified as every call, in `rds/`):
//! DescribeGlobalClusters (one, or every one of the account: the observer's listing, 100 a page,
//! with their tags: RDS's GlobalCluster carries its TagList,
//! https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_GlobalCluster.html),
//! CreateGlobalCluster (tagged), ModifyGlobalCluster and DeleteGlobalCluster.

use aws_sdk_rds::operation::describe_global_clusters::builders::DescribeGlobalClustersFluentBuilder;

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, arn_part, rds_tags, tag_map};

use super::plan::Own;
use super::{GlobalMember, ObservedGlobalCluster};

impl crate::observer::listing::Listed for ObservedGlobalCluster {
    const WHAT: &'static str = "the global databases";
    fn key(&self) -> String {
        self.identifier.to_lowercase()
    }
    fn settled(&self) -> bool {
        self.status == "available"
    }
    async fn list(rds: &Rds) -> Result<Vec<Self>, AwsError> {
        global_cluster_pages(rds, rds.client.describe_global_clusters()).await
    }
}

/// The RDS calls of the GlobalCluster kind.
pub(crate) trait GlobalClusterCalls {
    /// One global database by identifier, with its members and tags; None when RDS has none.
    fn global_cluster(
        &self,
        identifier: &str,
    ) -> impl Future<Output = Result<Option<ObservedGlobalCluster>, AwsError>> + Send;

    /// The calls only this kind makes.
    fn global_cluster_call(&self, step: &Own) -> impl Future<Output = Result<(), AwsError>> + Send;

    /// DeleteGlobalCluster; one already gone is deleted.
    fn delete_global_cluster(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<(), AwsError>> + Send;
}

impl GlobalClusterCalls for Rds {
    async fn global_cluster(
        &self,
        identifier: &str,
    ) -> Result<Option<ObservedGlobalCluster>, AwsError> {
        let request =
            (self.client.describe_global_clusters()).global_cluster_identifier(identifier);
        match global_cluster_pages(self, request).await {
            Ok(found) => Ok(found.into_iter().next()),
            Err(e) if e.gone() => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn global_cluster_call(&self, step: &Own) -> Result<(), AwsError> {
        match step {
            Own::Create {
                name,
                source_arn,
                engine,
                engine_version,
                deletion_protection,
                storage_encrypted,
                tags,
            } => {
                // Tagged from its first moment: a crash after it finds it as this object's.
                let result = (self.client.create_global_cluster())
                    .global_cluster_identifier(name)
                    .set_source_db_cluster_identifier(source_arn.clone())
                    .set_engine(engine.clone())
                    .set_engine_version(engine_version.clone())
                    .set_deletion_protection(*deletion_protection)
                    .set_storage_encrypted(*storage_encrypted)
                    .set_tags(Some(rds_tags(tags)))
                    .send()
                    .await
                    .map_err(|e| aws_error("CreateGlobalCluster", e, None));
                let result = self.counted("CreateGlobalCluster", result);
                result.map(|_| ())
            }
            Own::Modify {
                name,
                deletion_protection,
                engine_version,
                allow_major_version_upgrade,
            } => {
                let result = (self.client.modify_global_cluster())
                    .global_cluster_identifier(name)
                    .set_deletion_protection(*deletion_protection)
                    .set_engine_version(engine_version.clone())
                    .set_allow_major_version_upgrade(allow_major_version_upgrade.then_some(true))
                    .send()
                    .await
                    .map_err(|e| aws_error("ModifyGlobalCluster", e, None));
                let result = self.counted("ModifyGlobalCluster", result);
                result.map(|_| ())
            }
            Own::Switchover { name, target_arn } => {
                let result = (self.client.switchover_global_cluster())
                    .global_cluster_identifier(name)
                    .target_db_cluster_identifier(target_arn)
                    .send()
                    .await
                    .map_err(|e| aws_error("SwitchoverGlobalCluster", e, None));
                let result = self.counted("SwitchoverGlobalCluster", result);
                result.map(|_| ())
            }
            Own::Failover {
                name, target_arn, ..
            } => {
                let result = (self.client.failover_global_cluster())
                    .global_cluster_identifier(name)
                    .target_db_cluster_identifier(target_arn)
                    .allow_data_loss(true)
                    .send()
                    .await
                    .map_err(|e| aws_error("FailoverGlobalCluster", e, None));
                let result = self.counted("FailoverGlobalCluster", result);
                result.map(|_| ())
            }
        }
    }

    async fn delete_global_cluster(&self, name: &str) -> Result<(), AwsError> {
        let result = (self.client.delete_global_cluster())
            .global_cluster_identifier(name)
            .send()
            .await
            .map_err(|e| aws_error("DeleteGlobalCluster", e, None));
        let result = self.counted("DeleteGlobalCluster", result);
        match result {
            Err(e) if e.gone() => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

async fn global_cluster_pages(
    rds: &Rds,
    request: DescribeGlobalClustersFluentBuilder,
) -> Result<Vec<ObservedGlobalCluster>, AwsError> {
    let mut all = Vec::new();
    let mut pages = request.max_records(100).into_paginator().send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| aws_error("DescribeGlobalClusters", e, None));
        let page = rds.counted("DescribeGlobalClusters", page);
        all.extend(page?.global_clusters().iter().map(observed));
    }
    Ok(all)
}

fn observed(g: &aws_sdk_rds::types::GlobalCluster) -> ObservedGlobalCluster {
    let text = |v: Option<&str>| v.map(str::to_owned);
    let members = (g.global_cluster_members().iter())
        .map(|m| {
            let arn = m.db_cluster_arn().unwrap_or_default();
            GlobalMember {
                db_cluster_identifier: arn.rsplit(':').next().unwrap_or_default().to_owned(),
                region: arn_part(arn, 3).unwrap_or_default().to_owned(),
                role: match m.is_writer() {
                    Some(true) => "writer",
                    _ => "reader",
                }
                .to_owned(),
                synchronization_status: m.synchronization_status().map(|s| s.as_str().to_owned()),
                db_cluster_arn: text(m.db_cluster_arn()),
            }
        })
        .collect();
    ObservedGlobalCluster {
        identifier: g.global_cluster_identifier().unwrap_or_default().to_owned(),
        arn: text(g.global_cluster_arn()),
        status: g.status().unwrap_or_default().to_owned(),
        engine: text(g.engine()),
        engine_version: text(g.engine_version()),
        deletion_protection: g.deletion_protection(),
        storage_encrypted: g.storage_encrypted(),
        endpoint: text(g.endpoint()),
        members,
        tags: tag_map(g.tag_list()),
    }
}
