//! The snapshots row of the scale benchmark (BENCH_SNAPSHOTS=S): S DBSnapshots of ten
//! DBInstances, against moto at zero delays. It prints the time from applying them all to all
//! Ready, the DescribeDBSnapshots and DescribeDBInstances of the steady state per shared poll
//! (their floor: one page per 100 of the location), every other RDS call, and the operator's peak
//! RSS.

use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, PostParams};
use rds_operator::dbinstance::DBInstance;
use rds_operator::dbsnapshot::DBSnapshot;
use serde_json::json;

use super::common;
use super::{Settings, peak_rss_mib, row, steady_state};

/// The DBInstances the snapshots are of.
const SOURCES: usize = 10;

fn ready(s: &DBSnapshot) -> bool {
    (s.status.iter().flat_map(|s| &s.reported.conditions))
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

/// Creates ten DBInstances and S DBSnapshots of them, waits until all are Ready, and measures.
pub async fn run(client: &kube::Client, settings: &Settings, s: usize) {
    let (ns, operator) = row(client, settings, &format!("benchs{s}")).await;
    let instances: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    let snapshots: Api<DBSnapshot> = Api::namespaced(client.clone(), &ns);
    let pid = operator.pid();
    let prefix = common::unique("s");
    println!("S = {s} DBSnapshots of {SOURCES} DBInstances");
    for i in 0..SOURCES {
        let db = common::dbinstance(&format!("db-{i}"), &format!("{prefix}-db-{i}"), json!({}));
        (instances.create(&PostParams::default(), &db).await).expect("create DBInstance");
    }
    loop {
        let ready_instances = (instances.list(&Default::default()).await)
            .map(|l| l.items.iter().filter(|d| common::is_ready(d)).count())
            .unwrap_or(0);
        if ready_instances == SOURCES {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let started = Instant::now();
    futures::stream::iter(0..s)
        .map(|i| {
            let (snapshots, prefix) = (snapshots.clone(), prefix.clone());
            async move {
                let snapshot: DBSnapshot = serde_json::from_value(json!({
                    "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBSnapshot",
                    "metadata": {"name": format!("s-{i}")},
                    "spec": {"dbSnapshotIdentifier": format!("{prefix}-s-{i}"),
                             "source": {"name": format!("db-{}", i % SOURCES)},
                             "deletionPolicy": "Delete"},
                }))
                .unwrap();
                (snapshots.create(&PostParams::default(), &snapshot).await)
                    .expect("create DBSnapshot");
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    let applied = started.elapsed();
    loop {
        let ready_snapshots = (snapshots.list(&Default::default()).await)
            .map(|l| l.items.iter().filter(|s| ready(s)).count())
            .unwrap_or(0);
        if ready_snapshots == s {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(1800),
            "{ready_snapshots} DBSnapshots Ready"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    println!(
        "  apply all: {:.1} s; all {s} DBSnapshots Ready: {:.1} s after the first apply",
        applied.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    let floors = [
        ("DescribeDBSnapshots", s.div_ceil(100)),
        ("DescribeDBInstances", SOURCES.div_ceil(100)),
    ];
    steady_state(settings, &floors).await;
    println!("  operator peak RSS: {:.1} MiB", peak_rss_mib(pid));
    drop(operator);
    assert!(common::moto_ext_post("/moto-api/reset"), "reset moto");
}
