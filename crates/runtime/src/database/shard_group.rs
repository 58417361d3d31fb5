//! A DB shard group as RDS reports it (Aurora PostgreSQL Limitless Database), read by two kinds:
//! the DBShardGroup that manages it, and the limitless DBCluster whose connection Secret carries
//! its endpoint. One shared listing serves both (DescribeDBShardGroups, 100 a page, with the tags
//! its pages carry): the cluster finds its group in it by cluster identifier, at no call of its own.

use std::collections::BTreeMap;

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, tag_map};

/// The shard group as RDS reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObservedShardGroup {
    pub name: String,
    pub arn: Option<String>,
    pub cluster: String,
    pub max_acu: Option<f64>,
    pub min_acu: Option<f64>,
    pub compute_redundancy: Option<i32>,
    pub publicly_accessible: Option<bool>,
    pub status: String,
    pub endpoint: Option<String>,
    pub tags: BTreeMap<String, String>,
}

impl crate::observer::listing::Listed for ObservedShardGroup {
    const WHAT: &'static str = "the DB shard groups";
    fn key(&self) -> String {
        self.name.to_lowercase()
    }
    fn arn(&self) -> Option<&str> {
        self.arn.as_deref()
    }
    async fn list(rds: &Rds) -> Result<Vec<Self>, AwsError> {
        pages(rds).await
    }
}

/// Every shard group of the account and region, 100 a page, with their tags. The SDK has no
/// paginator for DescribeDBShardGroups: Marker by hand.
pub async fn pages(rds: &Rds) -> Result<Vec<ObservedShardGroup>, AwsError> {
    let mut all = Vec::new();
    let mut marker = None;
    loop {
        let result = (rds.client.describe_db_shard_groups())
            .max_records(100)
            .set_marker(marker)
            .send()
            .await
            .map_err(|e| aws_error("DescribeDBShardGroups", e, None));
        let result = rds.counted("DescribeDBShardGroups", result);
        let page = result?;
        all.extend(page.db_shard_groups().iter().map(observed));
        marker = page.marker().map(str::to_owned);
        if marker.is_none() {
            return Ok(all);
        }
    }
}

/// RDS's shard group, as the kinds read it.
pub fn observed(g: &aws_sdk_rds::types::DbShardGroup) -> ObservedShardGroup {
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

/// The endpoint a limitless cluster's connection Secret carries: its shard group's, once RDS
/// reports one and the group is neither being made nor deleted.
pub fn endpoint_of(groups: &[ObservedShardGroup], cluster: &str) -> Option<String> {
    (groups.iter())
        .filter(|g| g.cluster.eq_ignore_ascii_case(cluster))
        .find(|g| g.status != "creating" && g.status != "deleting")
        .and_then(|g| g.endpoint.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clusters_endpoint_is_its_own_groups_once_made_and_until_deleted() {
        let group = |cluster: &str, status: &str| ObservedShardGroup {
            cluster: cluster.into(),
            status: status.into(),
            endpoint: Some(format!("{cluster}.limitless-abc")),
            ..Default::default()
        };
        let rows: Vec<(&str, Vec<ObservedShardGroup>, Option<&str>)> = vec![
            ("none", vec![], None),
            (
                "its own, available",
                vec![group("coffee", "available")],
                Some("coffee.limitless-abc"),
            ),
            (
                "its own, modifying",
                vec![group("coffee", "modifying")],
                Some("coffee.limitless-abc"),
            ),
            (
                "its own, still being made",
                vec![group("coffee", "creating")],
                None,
            ),
            (
                "its own, being deleted",
                vec![group("coffee", "deleting")],
                None,
            ),
            ("another cluster's", vec![group("tea", "available")], None),
        ];
        for (what, groups, want) in rows {
            assert_eq!(endpoint_of(&groups, "coffee").as_deref(), want, "{what}");
        }
    }
}
