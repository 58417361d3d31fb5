//! The health row of the scale benchmark. BENCH_HEALTH=N: N DBInstances with CloudWatch alarms
//! (`alarms: {}`: three each, with their defaults), the health poll every drift interval: the time
//! until all are Ready with their alarms made, then the steady state's CloudWatch calls per interval
//! against their floors (GetMetricData: one per 500 figures, three figures an instance;
//! DescribeAlarms: one page per 100 alarms), no PutMetricAlarm once made, and the peak RSS.

use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use super::common;
use super::{Settings, peak_rss_mib, row_with, steady_state};

/// Ready, with its three alarms made.
fn watched(db: &DBInstance) -> bool {
    common::is_ready(db)
        && db
            .status
            .as_ref()
            .is_some_and(|s| s.common.alarms.len() == 3)
}

pub async fn run(client: &kube::Client, settings: &Settings, n: usize) {
    let every = ["--health-interval", settings.interval_text.as_str()];
    let (ns, operator) = row_with(client, settings, &format!("benchh{n}"), &every).await;
    let api: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    let (pid, prefix) = (operator.pid(), common::unique("h"));
    println!("N = {n} DBInstances with alarms, the health poll every drift interval");
    let started = Instant::now();
    futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            let db = common::dbinstance(
                &format!("db-{i}"),
                &format!("{prefix}-{i}"),
                json!({"alarms": {}, "deletionPolicy": "Delete"}),
            );
            async move { (api.create(&PostParams::default(), &db).await).expect("create") }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    loop {
        let done = (api.list(&Default::default()).await)
            .map(|l| l.items.iter().filter(|d| watched(d)).count())
            .unwrap_or(0);
        if done == n {
            break;
        }
        let waited = started.elapsed();
        assert!(
            waited < Duration::from_secs(3600),
            "{done} of {n} with their alarms"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    println!(
        "  all {n} Ready with their alarms: {:.1} s after the first apply",
        started.elapsed().as_secs_f64()
    );
    let floors = [
        ("GetMetricData", (3 * n).div_ceil(500)),
        ("DescribeAlarms", (3 * n).div_ceil(100)),
        ("DescribeDBInstances", n.div_ceil(100)),
    ];
    steady_state(settings, &floors).await;
    println!("  operator peak RSS: {:.1} MiB", peak_rss_mib(pid));
    drop(operator);
    assert!(common::moto_ext_post("/moto-api/reset"), "reset moto");
}
