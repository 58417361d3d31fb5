//! The RDS calls of the DBClusterEndpoint kind: DescribeDBClusterEndpoints (one, with its tags, or
//! every custom endpoint 100 a page), CreateDBClusterEndpoint, ModifyDBClusterEndpoint,
//! DeleteDBClusterEndpoint (counted and classified as every call, in `rds.rs`).

use std::collections::BTreeMap;

use aws_sdk_rds::types::{DbClusterEndpoint, Filter};

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, rds_tags};

use super::ObservedClusterEndpoint;
use super::plan::Own;

// The custom endpoints as the observer lists them (`observer::listing`), their tags from
// GetResources.
crate::listed_by_name!(
    ObservedClusterEndpoint,
    "the custom cluster endpoints",
    "rds:cluster-endpoint",
    cluster_endpoint_pages
);

/// Only the custom endpoints (a cluster's own writer and reader endpoints are listed too).
fn custom() -> Filter {
    Filter::builder()
        .name("db-cluster-endpoint-type")
        .values("custom")
        .build()
}

/// The RDS calls of the DBClusterEndpoint kind.
pub(super) trait ClusterEndpointCalls {
    /// DescribeDBClusterEndpoints of one endpoint, with its tags (ListTagsForResource); None when
    /// RDS has none of that name.
    fn cluster_endpoint(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<ObservedClusterEndpoint>, AwsError>> + Send;

    /// Every custom endpoint of the account and region, 100 a page, without their tags
    /// (GetResources has them: `rds::tagging`).
    fn cluster_endpoint_pages(
        &self,
    ) -> impl Future<Output = Result<Vec<ObservedClusterEndpoint>, AwsError>> + Send;

    /// CreateDBClusterEndpoint (tagged from its first moment) or ModifyDBClusterEndpoint.
    fn cluster_endpoint_call(
        &self,
        step: &Own,
    ) -> impl Future<Output = Result<(), AwsError>> + Send;

    /// DeleteDBClusterEndpoint; one already gone is deleted.
    fn delete_cluster_endpoint(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<(), AwsError>> + Send;
}

impl ClusterEndpointCalls for Rds {
    async fn cluster_endpoint(
        &self,
        name: &str,
    ) -> Result<Option<ObservedClusterEndpoint>, AwsError> {
        self.described_with_tags(
            || describe_cluster_endpoint(self, name),
            |o| o.arn.as_deref(),
            |o| &mut o.tags,
        )
        .await
    }

    async fn cluster_endpoint_pages(&self) -> Result<Vec<ObservedClusterEndpoint>, AwsError> {
        let mut all = Vec::new();
        let mut pages = (self.client.describe_db_cluster_endpoints())
            .filters(custom())
            .max_records(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeDBClusterEndpoints", e, None));
            let page = self.counted("DescribeDBClusterEndpoints", page);
            all.extend(page?.db_cluster_endpoints().iter().map(observed));
        }
        Ok(all)
    }

    async fn cluster_endpoint_call(&self, step: &Own) -> Result<(), AwsError> {
        match step {
            Own::Create {
                name,
                cluster,
                endpoint_type,
                static_members,
                excluded_members,
                tags,
            } => {
                let result = (self.client.create_db_cluster_endpoint())
                    .db_cluster_identifier(cluster)
                    .db_cluster_endpoint_identifier(name)
                    .endpoint_type(endpoint_type)
                    .set_static_members(members(static_members))
                    .set_excluded_members(members(excluded_members))
                    .set_tags(Some(rds_tags(tags)))
                    .send()
                    .await
                    .map_err(|e| aws_error("CreateDBClusterEndpoint", e, None));
                let result = self.counted("CreateDBClusterEndpoint", result);
                result.map(|_| ())
            }
            Own::Modify {
                name,
                endpoint_type,
                static_members,
                excluded_members,
            } => {
                // The whole lists: an empty one clears what RDS has.
                let result = (self.client.modify_db_cluster_endpoint())
                    .db_cluster_endpoint_identifier(name)
                    .endpoint_type(endpoint_type)
                    .set_static_members(Some(static_members.clone()))
                    .set_excluded_members(Some(excluded_members.clone()))
                    .send()
                    .await
                    .map_err(|e| aws_error("ModifyDBClusterEndpoint", e, None));
                let result = self.counted("ModifyDBClusterEndpoint", result);
                result.map(|_| ())
            }
            Own::Secret(_) => Ok(()),
        }
    }

    async fn delete_cluster_endpoint(&self, name: &str) -> Result<(), AwsError> {
        let result = (self.client.delete_db_cluster_endpoint())
            .db_cluster_endpoint_identifier(name)
            .send()
            .await
            .map_err(|e| aws_error("DeleteDBClusterEndpoint", e, None));
        let result = self.counted("DeleteDBClusterEndpoint", result);
        match result {
            Err(e) if e.gone() => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

async fn describe_cluster_endpoint(
    rds: &Rds,
    name: &str,
) -> Result<Option<ObservedClusterEndpoint>, AwsError> {
    let result = (rds.client.describe_db_cluster_endpoints())
        .db_cluster_endpoint_identifier(name)
        .send()
        .await
        .map_err(|e| aws_error("DescribeDBClusterEndpoints", e, None));
    let result = rds.counted("DescribeDBClusterEndpoints", result);
    match result {
        Ok(out) => Ok(out.db_cluster_endpoints().first().map(observed)),
        Err(e) if e.gone() => Ok(None),
        Err(e) => Err(e),
    }
}

fn members(v: &[String]) -> Option<Vec<String>> {
    (!v.is_empty()).then(|| v.to_vec())
}

fn observed(e: &DbClusterEndpoint) -> ObservedClusterEndpoint {
    let text = |v: Option<&str>| v.map(str::to_owned);
    ObservedClusterEndpoint {
        name: e
            .db_cluster_endpoint_identifier()
            .unwrap_or_default()
            .to_owned(),
        arn: text(e.db_cluster_endpoint_arn()),
        cluster: e.db_cluster_identifier().unwrap_or_default().to_owned(),
        status: e.status().unwrap_or_default().to_owned(),
        endpoint: text(e.endpoint()),
        endpoint_type: text(e.custom_endpoint_type()),
        static_members: e.static_members().to_vec(),
        excluded_members: e.excluded_members().to_vec(),
        tags: BTreeMap::new(),
    }
}
