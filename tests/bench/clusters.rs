//! The clusters row of the scale benchmark (BENCH_CLUSTERS=C): C DBClusters with two member
//! DBInstances each, against moto at zero delays. It prints the time from applying them all to all
//! Ready, the DescribeDBClusters and DescribeDBInstances of the steady state per shared poll (their
//! floor: one page per 100), every other RDS call, and the operator's peak RSS.

use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, PostParams};
use rds_operator::dbcluster::DBCluster;
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use super::common;
use super::{Settings, peak_rss_mib, row, steady_state};

fn ready(c: &DBCluster) -> bool {
    (c.status.iter().flat_map(|s| &s.reported.conditions))
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

/// Creates C clusters and their 2C members, waits until all are Ready, and measures.
pub async fn run(client: &kube::Client, settings: &Settings, c: usize) {
    let (ns, operator) = row(client, settings, &format!("benchc{c}")).await;
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let instances: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    let pid = operator.pid();
    let prefix = common::unique("c");
    println!("C = {c} clusters, {} members", 2 * c);
    let started = Instant::now();
    futures::stream::iter(0..c)
        .map(|i| {
            let (clusters, instances, prefix) = (clusters.clone(), instances.clone(), prefix.clone());
            async move {
                let cluster: DBCluster = serde_json::from_value(json!({
                    "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBCluster",
                    "metadata": {"name": format!("c-{i}")},
                    "spec": {"dbClusterIdentifier": format!("{prefix}-{i}"), "engine": "aurora-mysql",
                             "masterUsername": "admin", "deletionProtection": true,
                             "masterUserPassword": {"name": "db-password", "key": "password"}},
                }))
                .unwrap();
                (clusters.create(&PostParams::default(), &cluster).await).expect("create DBCluster");
                for m in 0..2 {
                    let member: DBInstance = serde_json::from_value(json!({
                        "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBInstance",
                        "metadata": {"name": format!("c-{i}-{m}")},
                        "spec": {"dbInstanceIdentifier": format!("{prefix}-{i}-{m}"),
                                 "engine": "aurora-mysql", "dbInstanceClass": "db.r6g.large",
                                 "dbClusterRef": {"name": format!("c-{i}")}},
                    }))
                    .unwrap();
                    (instances.create(&PostParams::default(), &member).await).expect("create member");
                }
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    let applied = started.elapsed();
    loop {
        let clusters_ready = (clusters.list(&Default::default()).await)
            .map(|l| l.items.iter().filter(|c| ready(c)).count())
            .unwrap_or(0);
        let members_ready = (instances.list(&Default::default()).await)
            .map(|l| l.items.iter().filter(|d| common::is_ready(d)).count())
            .unwrap_or(0);
        if clusters_ready == c && members_ready == 2 * c {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(1800),
            "{clusters_ready} clusters and {members_ready} members Ready"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    println!(
        "  apply all: {:.1} s; all {c} clusters and {} members Ready: {:.1} s after the first apply",
        applied.as_secs_f64(),
        2 * c,
        started.elapsed().as_secs_f64()
    );
    let floors = [
        ("DescribeDBClusters", c.div_ceil(100)),
        ("DescribeDBInstances", (2 * c).div_ceil(100)),
    ];
    steady_state(settings, &floors).await;
    println!("  operator peak RSS: {:.1} MiB", peak_rss_mib(pid));
    drop(operator);
    assert!(common::moto_ext_post("/moto-api/reset"), "reset moto");
}
