//! The replicas row of the scale benchmark (BENCH_REPLICAS=R): R DBInstances under upgradePolicy
//! BlueGreen, each with a read replica (`replicaOf` by name), all applied at once against moto at
//! zero delays. It prints the time from applying them all to all Ready (a replica waits for its
//! source), the DescribeDBInstances of the steady state per shared poll against their floor (one
//! page per 100), every other RDS call (a source in sync under BlueGreen should read no
//! deployment, a replica nothing of its own), and the operator's peak RSS.

use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use super::common::{self, dbinstance};
use super::{Settings, peak_rss_mib, row, steady_state};

/// A source (backups on, which RDS needs of a replica's source) and its replica, without what a
/// replica inherits.
fn pair(prefix: &str, i: usize) -> [DBInstance; 2] {
    let source = dbinstance(
        &format!("db-{i}"),
        &format!("{prefix}-{i}"),
        json!({"upgradePolicy": "BlueGreen", "backupRetentionPeriod": 1,
               "deletionProtection": true}),
    );
    let mut replica = dbinstance(
        &format!("db-{i}-replica"),
        &format!("{prefix}-{i}-replica"),
        json!({"replicaOf": {"name": format!("db-{i}")}}),
    );
    replica.spec.master_username = None;
    replica.spec.password.master_user_password = None;
    replica.spec.db_name = None;
    replica.spec.engine_version = None;
    [source, replica]
}

/// Creates R sources and their R replicas, waits until all are Ready, and measures.
pub async fn run(client: &kube::Client, settings: &Settings, r: usize) {
    let (ns, operator) = row(client, settings, &format!("benchr{r}")).await;
    let instances: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    let pid = operator.pid();
    let prefix = common::unique("r");
    println!("R = {r} sources under upgradePolicy BlueGreen, {r} replicas");
    let started = Instant::now();
    futures::stream::iter(0..r)
        .map(|i| {
            let (instances, prefix) = (instances.clone(), prefix.clone());
            async move {
                for db in pair(&prefix, i) {
                    (instances.create(&PostParams::default(), &db).await).expect("create");
                }
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    let applied = started.elapsed();
    loop {
        let ready = (instances.list(&Default::default()).await)
            .map(|l| l.items.iter().filter(|d| common::is_ready(d)).count())
            .unwrap_or(0);
        if ready == 2 * r {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(1800),
            "{ready} of {} Ready",
            2 * r
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    println!(
        "  apply all: {:.1} s; all {r} sources and {r} replicas Ready: {:.1} s after the first apply",
        applied.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    steady_state(settings, &[("DescribeDBInstances", (2 * r).div_ceil(100))]).await;
    println!("  operator peak RSS: {:.1} MiB", peak_rss_mib(pid));
    drop(operator);
    assert!(common::moto_ext_post("/moto-api/reset"), "reset moto");
}
