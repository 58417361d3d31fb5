//! The integrations and shard groups rows of the scale benchmark. BENCH_INTEGRATIONS=N: N
//! Integrations (zero-ETL), each of one of ten DBClusters, each to its own Redshift namespace;
//! their DescribeIntegrations against its floor. BENCH_SHARD_GROUPS=N: N limitless DBClusters,
//! each with its DBShardGroup (one per cluster, as RDS allows); their DescribeDBShardGroups against
//! its floor, which also serves the clusters' connection Secrets' shardGroupHost.

use rds_operator::dbshardgroup::DBShardGroup;
use rds_operator::integration::Integration;
use serde_json::json;

use super::Settings;
use super::sourced::{self, Objects, SOURCES, Sources};

type Condition = k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

fn ready(conditions: &[Condition]) -> bool {
    conditions
        .iter()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

fn integration(i: usize, prefix: &str) -> Integration {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1", "kind": "Integration",
        "metadata": {"name": format!("i-{i}")},
        "spec": {"integrationName": format!("{prefix}-i-{i}"),
                 "dbClusterRef": {"name": format!("c-{}", i % SOURCES)},
                 "targetARN": format!("arn:aws:redshift-serverless:us-east-1:123456789012:namespace/{prefix}-{i}")},
    }))
    .unwrap()
}

fn shard_group(i: usize, prefix: &str) -> DBShardGroup {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBShardGroup",
        "metadata": {"name": format!("g-{i}")},
        "spec": {"dbShardGroupIdentifier": format!("{prefix}-g-{i}"),
                 "dbClusterRef": {"name": format!("c-{i}")}, "maxACU": 768},
    }))
    .unwrap()
}

pub async fn integrations(client: &kube::Client, settings: &Settings, n: usize) {
    let objects = Objects {
        sources: Sources::Clusters {
            count: SOURCES,
            limitless: false,
        },
        name: "benchi",
        what: "Integrations",
        listing: "DescribeIntegrations",
        make: integration,
        ready: |i: &Integration| ready(i.status.as_ref().map_or(&[], |s| &s.reported.conditions)),
    };
    sourced::run(client, settings, n, objects).await;
}

pub async fn shard_groups(client: &kube::Client, settings: &Settings, n: usize) {
    let objects = Objects {
        sources: Sources::Clusters {
            count: n,
            limitless: true,
        },
        name: "benchg",
        what: "DBShardGroups",
        listing: "DescribeDBShardGroups",
        make: shard_group,
        ready: |g: &DBShardGroup| ready(g.status.as_ref().map_or(&[], |s| &s.reported.conditions)),
    };
    sourced::run(client, settings, n, objects).await;
}
