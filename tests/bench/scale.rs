//! The scale benchmark: N DBInstances against moto at zero delays, printing figures, asserting
//! nothing about time. A `cargo bench` target (run it with `tests/bench/scale.sh`); `cargo test`
//! builds it but does not run it.
//!
//! Environment: BENCH_SIZES ("100 1000"), BENCH_DRIFT_INTERVAL ("10s"), BENCH_SAMPLES (50),
//! BENCH_CONCURRENCY (operator reconcile concurrency, 8), BENCH_MOTO_PID (to report moto's CPU).

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use rds_operator::crd::DBInstance;
use serde_json::json;

#[path = "../integration/common/mod.rs"]
mod common;

use common::{Operator, dbinstance, is_ready};

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

fn epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// CPU seconds (user + system) a process has used, from /proc.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// Peak resident memory (VmHWM) of a process, in MiB.
fn peak_rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map(|kib| kib / 1024.0)
        .unwrap_or(0.0)
}

/// Calls the emulator served, by action, over every identifier.
fn all_calls() -> BTreeMap<String, u64> {
    common::server_calls("")
}

fn diff(after: &BTreeMap<String, u64>, before: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, v)| *v > 0)
        .collect()
}

/// Mutating calls since `since` (epoch seconds): (time, action, identifier).
fn mutations(since: f64) -> Vec<(f64, String, String)> {
    let body = common::moto_ext_get(&format!("/_rds_ext/mutations?since={since}"))
        .expect("moto_ext mutations");
    serde_json::from_str(&body).unwrap()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// For each (identifier, t0): the first ModifyDBInstance on it after t0, minus t0.
async fn modify_latencies(samples: &[(String, f64)], timeout: Duration) -> Vec<f64> {
    let since = samples.iter().map(|s| s.1).fold(f64::INFINITY, f64::min);
    let deadline = Instant::now() + timeout;
    loop {
        let log = mutations(since);
        let found: Vec<Option<f64>> = samples
            .iter()
            .map(|(id, t0)| {
                log.iter()
                    .find(|(t, action, who)| action == "ModifyDBInstance" && who == id && *t > *t0)
                    .map(|(t, _, _)| t - t0)
            })
            .collect();
        if found.iter().all(Option::is_some) || Instant::now() > deadline {
            let mut done: Vec<f64> = found.into_iter().flatten().collect();
            done.sort_by(|a, b| a.partial_cmp(b).unwrap());
            if done.len() < samples.len() {
                println!(
                    "  ({} of {} samples saw no ModifyDBInstance in {timeout:?})",
                    samples.len() - done.len(),
                    samples.len()
                );
            }
            return done;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::main]
async fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!(
            "the scale benchmark runs under `cargo bench` (tests/bench/scale.sh), not `cargo test`"
        );
        return;
    }
    let sizes: Vec<usize> = env_or("BENCH_SIZES", "100")
        .split_whitespace()
        .map(|s| s.parse().expect("BENCH_SIZES: numbers"))
        .collect();
    let interval_text = env_or("BENCH_DRIFT_INTERVAL", "10s");
    let interval = rds_operator::duration::parse_duration(&interval_text).unwrap();
    let samples: usize = env_or("BENCH_SAMPLES", "50").parse().unwrap();
    let concurrency = env_or("BENCH_CONCURRENCY", "8");
    let moto_pid: Option<u32> = std::env::var("BENCH_MOTO_PID")
        .ok()
        .and_then(|p| p.trim().parse().ok());
    let client = common::client_with_crd().await;
    let rds = common::rds().await;
    println!(
        "\nscale benchmark: drift interval {interval_text}, reconcile concurrency {concurrency}, moto at zero delays\n"
    );

    for n in sizes {
        let ns = common::namespace(&client, &format!("bench{n}")).await;
        common::secret(
            &client,
            &ns,
            "db-password",
            "password",
            "Bench-Passw0rd-2026",
        )
        .await;
        let api: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
        let args: Vec<String> = [
            "--namespace",
            &ns,
            "--drift-interval",
            &interval_text,
            "--busy-poll-interval",
            "1s",
            "--concurrency",
            &concurrency,
            "--log-level",
            "warn",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        let operator = Operator::spawn(&args, common::kubeconfig(), &[("RUST_LOG", "warn")]);
        let pid = operator.pid();
        let moto_cpu_0 = moto_pid.map(cpu_seconds).unwrap_or(0.0);
        let prefix = common::unique("b");

        // 1. Apply N, wait for all Ready.
        let started = Instant::now();
        futures::stream::iter(0..n)
            .map(|i| {
                let api = api.clone();
                let id = format!("{prefix}-{i}");
                async move {
                    api.create(
                        &PostParams::default(),
                        &dbinstance(&format!("db-{i}"), &id, json!({})),
                    )
                    .await
                    .expect("create DBInstance")
                }
            })
            .buffer_unordered(32)
            .collect::<Vec<_>>()
            .await;
        let applied = started.elapsed();
        loop {
            let list = api.list(&ListParams::default()).await.expect("list");
            let ready = list.items.iter().filter(|d| is_ready(d)).count();
            if ready == n {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(1800),
                "only {ready} of {n} Ready after 30 min"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let all_ready = started.elapsed();

        // 2. Steady state: three drift intervals with nothing to do.
        tokio::time::sleep(interval + Duration::from_secs(2)).await;
        let window = interval * 3;
        let before = all_calls();
        let operator_cpu_0 = cpu_seconds(pid);
        tokio::time::sleep(window).await;
        let steady = diff(&all_calls(), &before);
        let steady_cpu = cpu_seconds(pid) - operator_cpu_0;
        let describes = steady.get("DescribeDBInstances").copied().unwrap_or(0);
        let others: u64 = steady
            .iter()
            .filter(|(k, _)| *k != "DescribeDBInstances")
            .map(|(_, v)| v)
            .sum();
        let per_interval = describes as f64 / 3.0;
        let per_instance_hour =
            (describes + others) as f64 / n as f64 / (window.as_secs_f64() / 3600.0);

        // 3. Drift: out-of-band class changes, spread over one interval; latency to the correction.
        let k = samples.min(n);
        let gap = interval / k as u32;
        let mut drift_samples = Vec::new();
        for i in 0..k {
            let id = format!("{prefix}-{}", i * n / k);
            rds.modify_db_instance()
                .db_instance_identifier(&id)
                .db_instance_class("db.t3.small")
                .apply_immediately(true)
                .send()
                .await
                .expect("out-of-band modify");
            drift_samples.push((id, epoch()));
            tokio::time::sleep(gap).await;
        }
        let mut drift = modify_latencies(&drift_samples, interval * 4).await;
        drift.iter_mut().for_each(|d| *d = d.max(0.0));

        // 4. Spec change to ModifyDBInstance, while all N are observed.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let mut spec_samples = Vec::new();
        for i in 0..k {
            let index = (i * n / k + 1) % n;
            let id = format!("{prefix}-{index}");
            let t0 = epoch();
            api.patch(
                &format!("db-{index}"),
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"dbInstanceClass": "db.t3.medium"}})),
            )
            .await
            .expect("patch");
            spec_samples.push((id, t0));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let spec = modify_latencies(&spec_samples, Duration::from_secs(60)).await;

        let rss = peak_rss_mib(pid);
        let operator_cpu = cpu_seconds(pid);
        let moto_cpu = moto_pid.map(|p| cpu_seconds(p) - moto_cpu_0);
        println!("N = {n}");
        println!(
            "  apply all N: {:.1} s; all Ready: {:.1} s after the first apply",
            applied.as_secs_f64(),
            all_ready.as_secs_f64()
        );
        println!("  operator peak RSS: {rss:.1} MiB");
        println!(
            "  steady state over {:.0} s (3 drift intervals): {steady:?}; DescribeDBInstances per interval {per_interval:.1} (floor ceil(N/100) = {}), other calls {others}; {per_instance_hour:.2} calls per instance-hour; operator CPU {steady_cpu:.2} s",
            window.as_secs_f64(),
            n.div_ceil(100)
        );
        println!(
            "  drift found and corrected ({} samples): p50 {:.2} s, p99 {:.2} s (drift interval {:.0} s)",
            drift.len(),
            percentile(&drift, 50.0),
            percentile(&drift, 99.0),
            interval.as_secs_f64()
        );
        println!(
            "  spec change to ModifyDBInstance ({} samples): p50 {:.3} s, p99 {:.3} s",
            spec.len(),
            percentile(&spec, 50.0),
            percentile(&spec, 99.0)
        );
        match moto_cpu {
            Some(m) => {
                println!("  CPU over the whole run: operator {operator_cpu:.1} s, moto {m:.1} s")
            }
            None => println!("  CPU over the whole run: operator {operator_cpu:.1} s"),
        }
        drop(operator);
        // Leave nothing behind in moto for the next size.
        assert!(common::moto_ext_post("/moto-api/reset"), "reset moto");
    }
}
