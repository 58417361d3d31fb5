//! The schedules row of the scale benchmark (BENCH_SCHEDULES=N): N DBInstances on one
//! activationSchedule (windows of BENCH_WINDOW minutes, 2 by default: running from minute 0 to 2
//! of every 4, stopped from 2 to 4), against moto at zero delays. Once all follow the schedule, it
//! measures two windows, a stop and a start: the RDS calls of each (their floor: one
//! StopDBInstance, or one StartDBInstance, per instance; DescribeDBInstances one page per 100 per
//! shared poll), the time from the boundary until all N are stopped (or available), and the
//! operator's peak RSS.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use super::common;
use super::{Settings, all_calls, diff, env_or, peak_rss_mib, row};

fn state(db: &DBInstance) -> &str {
    (db.status.as_ref())
        .and_then(|s| s.db_instance_status.as_deref())
        .unwrap_or_default()
}

/// How many of the namespace's DBInstances RDS shows in `wanted`.
async fn in_state(api: &Api<DBInstance>, wanted: &str) -> usize {
    (api.list(&Default::default()).await)
        .map(|l| l.items.iter().filter(|d| state(d) == wanted).count())
        .unwrap_or(0)
}

/// The next boundary after now: a multiple of `window` since the hour began (epoch-aligned, as
/// the crons are in UTC), and what it makes of the instances.
fn next_boundary(window: u64) -> (Duration, &'static str) {
    let now = common::epoch();
    let step = (window * 60) as f64;
    let next = ((now / step).floor() + 1.0) * step;
    let running = ((next / step) as u64).is_multiple_of(2);
    (
        Duration::from_secs_f64(next - now),
        if running { "available" } else { "stopped" },
    )
}

/// Creates N scheduled DBInstances, waits until all follow the schedule, and measures two windows.
pub async fn run(client: &kube::Client, settings: &Settings, n: usize) {
    let window: u64 = env_or("BENCH_WINDOW", "2").parse().expect("minutes");
    let (ns, operator) = row(client, settings, &format!("benchsched{n}")).await;
    let api: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    let pid = operator.pid();
    let prefix = common::unique("w");
    let period = 2 * window;
    // croner takes a step from a range or a wildcard, not from a single number ("0/4").
    let schedule = json!({"running": [{"start": format!("0 */{period} * * * *"),
                                       "stop": format!("0 {window}-59/{period} * * * *")}]});
    println!("N = {n} DBInstances on a schedule of {window}-minute windows");
    let started = Instant::now();
    futures::stream::iter(0..n)
        .map(|i| {
            let (api, prefix, schedule) = (api.clone(), prefix.clone(), schedule.clone());
            async move {
                let spec = json!({"activationSchedule": schedule});
                let db = common::dbinstance(&format!("db-{i}"), &format!("{prefix}-{i}"), spec);
                (api.create(&PostParams::default(), &db).await).expect("create DBInstance");
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    println!("  applied all in {:.1} s", started.elapsed().as_secs_f64());
    // Settled: all in the state the current window says, and a boundary still ahead with time to
    // spare.
    loop {
        let (left, next) = next_boundary(window);
        let now = if next == "stopped" {
            "available"
        } else {
            "stopped"
        };
        if left > Duration::from_secs(20) && in_state(&api, now).await == n {
            break;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    println!(
        "  all {n} follow the schedule {:.1} s after the first apply",
        started.elapsed().as_secs_f64()
    );
    for _ in 0..2 {
        let (left, wanted) = next_boundary(window);
        tokio::time::sleep(left).await;
        let boundary = Instant::now();
        let before = all_calls();
        let mut all_at = None;
        while boundary.elapsed() < Duration::from_secs(window * 60 - 5) {
            if all_at.is_none() && in_state(&api, wanted).await == n {
                all_at = Some(boundary.elapsed());
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let calls: BTreeMap<String, u64> = diff(&all_calls(), &before);
        let call = if wanted == "stopped" {
            "StopDBInstance"
        } else {
            "StartDBInstance"
        };
        let polls = (window * 60 - 5) as f64 / settings.interval.as_secs_f64();
        let describes = calls.get("DescribeDBInstances").copied().unwrap_or(0) as f64;
        let others: u64 = (calls.iter())
            .filter(|(k, _)| *k != call && *k != "DescribeDBInstances")
            .map(|(_, v)| v)
            .sum();
        println!(
            "  window to {wanted}: {call} {} (floor {n}); DescribeDBInstances {:.1} per shared poll \
             (floor {}); other RDS calls {others} {calls:?}; all {n} {wanted} {} after the boundary",
            calls.get(call).copied().unwrap_or(0),
            describes / polls,
            n.div_ceil(100),
            all_at.map_or("not".into(), |t| format!("{:.1} s", t.as_secs_f64())),
        );
    }
    println!("  operator peak RSS: {:.1} MiB", peak_rss_mib(pid));
    drop(operator);
    assert!(common::moto_ext_post("/moto-api/reset"), "reset moto");
}
