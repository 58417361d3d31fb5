//! The scale benchmark: N DBInstances against moto at zero delays, printing figures, asserting
//! nothing about time. A `cargo bench` target (run it with `tests/bench/scale.sh`); `cargo test`
//! builds it but does not run it.
//!
//! Environment: BENCH_SIZES ("100 1000"), BENCH_DRIFT_INTERVAL ("10s"), BENCH_SAMPLES (50),
//! BENCH_CONCURRENCY (operator reconcile concurrency, 8), BENCH_MOTO_PID (to report moto's CPU),
//! BENCH_FEED (on | off: the event feed, over the queue localstack/moto.sh creates),
//! BENCH_SAFETY_NET (the feed's safety-net interval; the operator's default when unset),
//! BENCH_PHASES ("steady drift spec restart outage": which phases follow "all Ready"; outage:
//! every RDS call fails for BENCH_OUTAGE seconds, 60 by default, as BENCH_FAULTS says: mixed,
//! http, reset or refused), BENCH_ACCOUNTS
//! ("AxR": the N spread over A AWSAccounts, each in another moto account, and R regions; the
//! steady state then reports the DescribeDBInstances of each (account, region)), BENCH_CLUSTERS
//! (C: instead of the sizes, C Aurora DBClusters with two members each; `clusters.rs`),
//! BENCH_REPLICAS (R: instead of the sizes, R DBInstances under upgradePolicy BlueGreen, each with
//! a read replica; `replicas.rs`), BENCH_SNAPSHOTS (S: instead of the sizes, S DBSnapshots of ten
//! DBInstances; `snapshots.rs`), BENCH_SCHEDULES (N: instead of the sizes, N DBInstances on a
//! stop/start schedule of BENCH_WINDOW-minute windows, a divisor of 30; `schedules.rs`),
//! BENCH_SUBSCRIPTIONS (N: instead of the sizes, N EventSubscriptions of ten DBInstances;
//! `subscriptions.rs`), BENCH_INTEGRATIONS (N Integrations of ten DBClusters) and
//! BENCH_SHARD_GROUPS (N limitless DBClusters with a DBShardGroup each; `integrations.rs`),
//! BENCH_HEALTH (N DBInstances with alarms, the health poll every drift interval; `health.rs`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

// The benchmark uses part of the test bed (common allows what a binary leaves unused).
mod clusters;
#[path = "../integration/common/mod.rs"]
mod common;
mod health;
mod integrations;
mod replicas;
mod schedules;
mod snapshots;
mod sourced;
mod subscriptions;

use common::{Operator, dbinstance, epoch, is_ready, operator_metric};

/// With BENCH_ACCOUNTS=AxR: the AWSAccounts (name, account id) made for the namespace, and the
/// regions, over which instance i is spread (account i % A, region i / A % R).
struct Spread {
    accounts: Vec<(String, String)>,
    regions: Vec<&'static str>,
}

const BENCH_REGIONS: [&str; 4] = ["us-east-1", "eu-west-1", "eu-central-1", "ap-south-1"];

impl Spread {
    async fn make(client: &kube::Client, ns: &str) -> Option<Spread> {
        let text = std::env::var("BENCH_ACCOUNTS").ok()?;
        let (a, r) = text.split_once('x').expect("BENCH_ACCOUNTS: AxR");
        let (a, r): (usize, usize) = (a.parse().unwrap(), r.parse().unwrap());
        let regions: Vec<&str> = BENCH_REGIONS.iter().take(r).copied().collect();
        let api: Api<rds_operator::awsaccount::AWSAccount> = Api::all(client.clone());
        let mut accounts = Vec::new();
        for i in 0..a {
            let id = format!("{}", 111_111_111_111u64 * (i as u64 + 1));
            let name = common::unique("bench-account");
            let role = common::create_role(&id, &name, None);
            let object = serde_json::from_value(json!({
                "metadata": {"name": name},
                "spec": {"assumeRoleChain": [{"roleARN": role}], "regions": regions,
                         "namespaceSelector": {"names": [ns]}},
            }))
            .unwrap();
            api.create(&PostParams::default(), &object)
                .await
                .expect("AWSAccount");
            accounts.push((name, id));
        }
        Some(Spread { accounts, regions })
    }

    /// Where instance i lives, as spec fields.
    fn spec(&self, i: usize) -> serde_json::Value {
        let (name, _) = &self.accounts[i % self.accounts.len()];
        let region = self.regions[i / self.accounts.len() % self.regions.len()];
        json!({"accountRef": {"name": name}, "region": region})
    }

    /// The operator's DescribeDBInstances in each (account id, region), and how many instances
    /// live there.
    fn describes(&self, operator: &Operator, n: usize) -> Vec<(String, &'static str, f64, usize)> {
        let mut out = Vec::new();
        for (a, (_, id)) in self.accounts.iter().enumerate() {
            for (r, region) in self.regions.iter().enumerate() {
                let here = (0..n)
                    .filter(|i| {
                        i % self.accounts.len() == a
                            && i / self.accounts.len() % self.regions.len() == r
                    })
                    .count();
                let line = format!(
                    "rds_operator_rds_api_calls_total{{operation=\"DescribeDBInstances\",outcome=\"ok\",account=\"{id}\",region=\"{region}\"}}"
                );
                out.push((id.clone(), *region, operator_metric(operator, &line), here));
            }
        }
        out
    }
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
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

/// The pids of the processes whose command line names `program` (the test control plane's
/// kube-apiserver and etcd).
fn pids_of(program: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .ok()
                .and_then(|c| {
                    let first = c.split(|b| *b == 0).next()?.to_vec();
                    String::from_utf8(first).ok()
                })
                .is_some_and(|c| c.rsplit('/').next() == Some(program))
        })
        .collect()
}

/// CPU seconds of the control plane (kube-apiserver and etcd) so far.
fn control_plane_cpu() -> f64 {
    (pids_of("kube-apiserver").into_iter())
        .chain(pids_of("etcd"))
        .map(cpu_seconds)
        .sum()
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

/// A row's namespace, with the password Secret its instances name, and its operator.
async fn row(client: &kube::Client, settings: &Settings, name: &str) -> (String, Operator) {
    row_with(client, settings, name, &[]).await
}

/// A row's namespace and operator, with these arguments too.
async fn row_with(
    client: &kube::Client,
    settings: &Settings,
    name: &str,
    extra: &[&str],
) -> (String, Operator) {
    let ns = common::namespace(client, name).await;
    common::secret(
        client,
        &ns,
        "db-password",
        "password",
        "Bench-Passw0rd-2026",
    )
    .await;
    let mut args = settings.operator_args(&ns);
    args.extend(extra.iter().map(|a| a.to_string()));
    // BENCH_RUST_LOG: the operator's log filter (warn by default: a row measures, it does not log).
    let log = env_or("BENCH_RUST_LOG", "warn");
    let operator = Operator::spawn(&args, common::kubeconfig(), &[("RUST_LOG", log.as_str())]);
    (ns, operator)
}

/// The steady state of a row, once all are Ready: the calls over three shared polls, per poll for
/// each of the listing calls given with its floor (one page per 100), and every other RDS call.
async fn steady_state(settings: &Settings, floors: &[(&str, usize)]) {
    tokio::time::sleep(settings.interval * 2 + Duration::from_secs(2)).await;
    let polls = 3;
    let before = all_calls();
    tokio::time::sleep(settings.interval * polls).await;
    let steady = diff(&all_calls(), &before);
    let per_poll: Vec<String> = (floors.iter())
        .map(|(call, floor)| {
            let count = steady.get(*call).copied().unwrap_or(0);
            format!("{call} {:.1} (floor {floor})", count as f64 / polls as f64)
        })
        .collect();
    let others: u64 = (steady.iter())
        .filter(|(k, _)| !floors.iter().any(|(call, _)| call == k))
        .map(|(_, v)| v)
        .sum();
    println!(
        "  steady state over {polls} shared polls: {steady:?}; per poll {}; other RDS calls {others}",
        per_poll.join(", ")
    );
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

/// For each (identifier, action, t0): the first call of that action on it after t0, minus t0.
async fn latencies(samples: &[(String, &str, f64)], timeout: Duration) -> Vec<f64> {
    let since = samples.iter().map(|s| s.2).fold(f64::INFINITY, f64::min);
    let deadline = Instant::now() + timeout;
    loop {
        let log = mutations(since);
        let found: Vec<Option<f64>> = samples
            .iter()
            .map(|(id, wanted, t0)| {
                log.iter()
                    .find(|(t, action, who)| action == wanted && who == id && *t > *t0)
                    .map(|(t, _, _)| (t - t0).max(0.0))
            })
            .collect();
        if found.iter().all(Option::is_some) || Instant::now() > deadline {
            let mut done: Vec<f64> = found.into_iter().flatten().collect();
            done.sort_by(|a, b| a.partial_cmp(b).unwrap());
            if done.len() < samples.len() {
                println!(
                    "  ({} of {} samples saw no correction in {timeout:?})",
                    samples.len() - done.len(),
                    samples.len()
                );
            }
            return done;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn p50_p99(values: &[f64]) -> String {
    format!(
        "p50 {:.2} s, p99 {:.2} s ({} samples)",
        percentile(values, 50.0),
        percentile(values, 99.0),
        values.len()
    )
}

struct Settings {
    interval_text: String,
    interval: Duration,
    samples: usize,
    concurrency: String,
    feed: Option<String>,
    safety_net: Option<String>,
    phases: Vec<String>,
}

impl Settings {
    fn operator_args(&self, ns: &str) -> Vec<String> {
        let mut args: Vec<String> = [
            "--namespace",
            ns,
            "--drift-interval",
            &self.interval_text,
            "--busy-poll-interval",
            "1s",
            "--concurrency",
            &self.concurrency,
            "--log-level",
            "warn",
            // All N DBInstances live in one namespace: the per-namespace read budget (a tenancy
            // bound, 600 a minute by default) would measure itself, not the operator.
            "--namespace-read-budget",
            "0",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        if let Some(queue) = &self.feed {
            args.extend(["--events-queue-url".into(), queue.clone()]);
            if let Some(net) = &self.safety_net {
                args.extend(["--safety-net-interval".into(), net.clone()]);
            }
        }
        args
    }

    /// How often the shared poll runs in steady state.
    fn poll_every(&self) -> Duration {
        match (&self.feed, &self.safety_net) {
            (None, _) => self.interval,
            (Some(_), Some(net)) => rds_operator::duration::parse_duration(net).unwrap(),
            (Some(_), None) => self.interval * 10,
        }
    }

    fn runs(&self, phase: &str) -> bool {
        self.phases.iter().any(|p| p == phase)
    }
}

/// The queue and rule localstack/moto.sh creates (again after a moto reset).
fn ensure_event_feed() {
    common::coffee_network(&["--event-feed", "rds-operator-events"]);
}

/// Feed off: no rule and no queue, as for a user without the feed.
fn ensure_no_event_feed() {
    common::coffee_network(&["--no-event-feed", "rds-operator-events"]);
}

/// Waits until all N are Ready, watching them (a list of N objects every second would load the
/// API server more than the operator does at N = 10 000).
/// Prints each tenth of the way (time, and the operator's peak RSS so far).
/// Calls moto_ext's outages have answered so far, in every account.
fn outage_answered() -> u64 {
    let body = common::moto_ext_get("/_rds_ext/outage").expect("moto_ext's outage state");
    let state: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    (state["refused"].as_object().into_iter().flatten())
        .filter_map(|(_, n)| n.as_u64())
        .sum()
}

/// The instances RDS has with the tag `key`.
async fn tagged(rds: &aws_sdk_rds::Client, key: &str) -> usize {
    let mut pages = rds
        .describe_db_instances()
        .into_paginator()
        .page_size(100)
        .send();
    let mut found = 0;
    while let Some(Ok(page)) = pages.next().await {
        found += (page.db_instances().iter())
            .filter(|i| i.tag_list().iter().any(|t| t.key() == Some(key)))
            .count();
    }
    found
}

/// The calls the operator sent to AWS so far (every RDS, tagging and Secrets Manager call it
/// counted, whatever came of it), less those its breaker did not send.
fn sent_calls(operator: &Operator) -> f64 {
    let Some((_, page)) = operator.get("/metrics") else {
        return 0.0;
    };
    (page.lines())
        .filter(|l| l.starts_with("rds_operator_rds_api_calls_total{"))
        .filter(|l| !l.contains("outcome=\"refused\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// BENCH_FAULTS: the outage's kind. `mixed` (every fault moto_ext knows, in turn: throttling, a
/// 503, a 500, a lost reply, a connection reset, a connection closed after the call was served, a
/// connection held open past the attempt timeout), `http` (throttling, 503 and 500, the faults of
/// the first benches), `reset` (every connection reset before an answer), `refused` (no listener:
/// the operator's relay refuses every connection).
fn faults() -> String {
    env_or("BENCH_FAULTS", "mixed")
}

/// The outage phase: see main's step 6.
async fn outage(
    api: &Api<DBInstance>,
    rds: &aws_sdk_rds::Client,
    n: usize,
    (operator, relay): (&Operator, Option<&common::Relay>),
) {
    let outage = Duration::from_secs(env_or("BENCH_OUTAGE", "60").parse().expect("seconds"));
    let key = common::unique("outage");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = outage_answered();
    let sent_before = sent_calls(operator);
    let kind = faults();
    let list = match kind.as_str() {
        "mixed" => Some("throttle,unavailable,internal,lost,reset,closed,hang"),
        "http" => Some("throttle,unavailable,internal"),
        "reset" => Some("reset"),
        "refused" => None,
        other => panic!("BENCH_FAULTS {other}: mixed, http, reset or refused"),
    };
    match (list, relay) {
        (Some(faults), _) => assert!(common::moto_ext_post(&format!(
            "/_rds_ext/outage?seconds={}&faults={faults}",
            outage.as_secs()
        ))),
        (None, Some(relay)) => relay.refuse(),
        (None, None) => panic!("a refused outage needs the relay"),
    }
    let (started, since) = (Instant::now(), epoch());
    let tags = json!({"spec": {"tags": [
        {"key": "app", "value": "coffee-manage"},
        {"key": key, "value": "on"},
    ]}});
    futures::stream::iter(0..n)
        .map(|i| {
            let (api, tags) = (api.clone(), tags.clone());
            async move {
                (api.patch(
                    &format!("db-{i}"),
                    &PatchParams::default(),
                    &Patch::Merge(tags),
                ))
                .await
                .expect("patch tags")
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    tokio::time::sleep(outage.saturating_sub(started.elapsed())).await;
    if let Some(relay) = relay {
        relay.forward();
    }
    let calls = outage_answered() - before;
    let sent = sent_calls(operator) - sent_before;
    let (ended, end) = (Instant::now(), epoch());
    while tagged(rds, &key).await < n {
        assert!(
            ended.elapsed() < Duration::from_secs(900),
            "tags not applied"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // When each tag reached RDS, by moto_ext's record of mutating calls (not by when this
    // benchmark's slower paginated reads saw them).
    let applied: Vec<f64> = (mutations(since).into_iter())
        .filter(|(_, action, _)| action == "AddTagsToResource")
        .map(|(at, _, _)| at - end)
        .collect();
    let last = applied.iter().copied().fold(f64::MIN, f64::max);
    let during = applied.iter().filter(|t| **t < 0.0).count();
    println!(
        "  outage of {} s ({kind}): the operator sent {sent} calls during it ({:.3} per object), {calls} of them answered by the emulator's outage; {} AddTagsToResource after it ended ({during} during it), the last {last:.1} s after it ended",
        outage.as_secs(),
        sent / n as f64,
        applied.len() - during,
    );
}

async fn all_ready(api: &Api<DBInstance>, n: usize, started: Instant, pid: u32) {
    use kube::runtime::{WatchStreamExt, watcher};
    let mut ready = std::collections::HashSet::new();
    let stream = watcher(api.clone(), watcher::Config::default()).applied_objects();
    futures::pin_mut!(stream);
    while ready.len() < n {
        let left = Duration::from_secs(3600).saturating_sub(started.elapsed());
        match tokio::time::timeout(left, stream.next()).await {
            Ok(Some(Ok(db))) => {
                let name = db.metadata.name.clone().unwrap_or_default();
                if is_ready(&db) {
                    if ready.insert(name) && n >= 1000 && ready.len() % (n / 10) == 0 {
                        println!(
                            "    {} Ready after {:.0} s; operator peak RSS {:.1} MiB",
                            ready.len(),
                            started.elapsed().as_secs_f64(),
                            peak_rss_mib(pid)
                        );
                    }
                } else {
                    ready.remove(&name);
                }
            }
            Ok(Some(Err(e))) => println!("  (watch: {e}; resuming)"),
            Ok(None) | Err(_) => panic!("only {} of {n} Ready after an hour", ready.len()),
        }
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
    let feed = (env_or("BENCH_FEED", "off") == "on").then(|| {
        format!(
            "{}/123456789012/rds-operator-events",
            common::aws_endpoint()
        )
    });
    let settings = Settings {
        interval: rds_operator::duration::parse_duration(&interval_text).unwrap(),
        interval_text,
        samples: env_or("BENCH_SAMPLES", "50").parse().unwrap(),
        concurrency: env_or("BENCH_CONCURRENCY", "8"),
        feed,
        safety_net: std::env::var("BENCH_SAFETY_NET").ok(),
        phases: env_or("BENCH_PHASES", "steady drift spec")
            .split_whitespace()
            .map(String::from)
            .collect(),
    };
    let moto_pid: Option<u32> = std::env::var("BENCH_MOTO_PID")
        .ok()
        .and_then(|p| p.trim().parse().ok());
    let client = common::client_with_crd().await;
    let rds = common::rds().await;
    println!(
        "\nscale benchmark: drift interval {}, reconcile concurrency {}, event feed {}, moto at zero delays\n",
        settings.interval_text,
        settings.concurrency,
        match &settings.feed {
            Some(_) => format!("on (shared poll every {:?})", settings.poll_every()),
            None => "off".into(),
        }
    );

    if let Some(c) = std::env::var("BENCH_CLUSTERS")
        .ok()
        .and_then(|c| c.parse().ok())
    {
        ensure_no_event_feed();
        clusters::run(&client, &settings, c).await;
        return;
    }
    if let Some(n) = std::env::var("BENCH_HEALTH")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        ensure_no_event_feed();
        health::run(&client, &settings, n).await;
        return;
    }
    if let Some(s) = std::env::var("BENCH_SNAPSHOTS")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        ensure_no_event_feed();
        snapshots::run(&client, &settings, s).await;
        return;
    }
    if let Some(n) = std::env::var("BENCH_INTEGRATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        ensure_no_event_feed();
        integrations::integrations(&client, &settings, n).await;
        return;
    }
    if let Some(n) = std::env::var("BENCH_SHARD_GROUPS")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        ensure_no_event_feed();
        integrations::shard_groups(&client, &settings, n).await;
        return;
    }
    if let Some(n) = std::env::var("BENCH_SUBSCRIPTIONS")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        ensure_no_event_feed();
        subscriptions::run(&client, &settings, n).await;
        return;
    }
    if let Some(n) = std::env::var("BENCH_SCHEDULES")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        ensure_no_event_feed();
        schedules::run(&client, &settings, n).await;
        return;
    }
    if let Some(r) = std::env::var("BENCH_REPLICAS")
        .ok()
        .and_then(|r| r.parse().ok())
    {
        ensure_no_event_feed();
        replicas::run(&client, &settings, r).await;
        return;
    }
    for n in sizes {
        match settings.feed {
            Some(_) => ensure_event_feed(),
            None => ensure_no_event_feed(),
        }
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
        let spread = std::sync::Arc::new(Spread::make(&client, &ns).await);
        let args = settings.operator_args(&ns);
        // A refused outage: the operator's calls go through a relay that can stop listening.
        let relay = (settings.runs("outage") && faults() == "refused").then(|| {
            let target = common::aws_endpoint();
            common::Relay::start(target.trim_start_matches("http://").to_owned())
        });
        let endpoint = relay
            .as_ref()
            .map_or_else(common::aws_endpoint, common::Relay::url);
        let env = [
            ("RUST_LOG", "warn"),
            ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ];
        let mut operator = Operator::spawn(&args, common::kubeconfig(), &env);
        let pid = operator.pid();
        let moto_cpu_0 = moto_pid.map(cpu_seconds).unwrap_or(0.0);
        let plane_cpu_0 = control_plane_cpu();
        let prefix = common::unique("b");
        println!("N = {n}");

        // 1. Apply N, wait for all Ready.
        let started = Instant::now();
        futures::stream::iter(0..n)
            .map(|i| {
                let api = api.clone();
                let id = format!("{prefix}-{i}");
                let mut spec = json!({"deletionProtection": true});
                if let Some(spread) = spread.as_ref() {
                    spec.as_object_mut()
                        .unwrap()
                        .extend(spread.spec(i).as_object().unwrap().clone());
                }
                async move {
                    api.create(
                        &PostParams::default(),
                        &dbinstance(&format!("db-{i}"), &id, spec),
                    )
                    .await
                    .expect("create DBInstance")
                }
            })
            .buffer_unordered(32)
            .collect::<Vec<_>>()
            .await;
        let applied = started.elapsed();
        all_ready(&api, n, started, pid).await;
        let all_ready_after = started.elapsed();
        let (operator_cpu, plane_cpu) = (cpu_seconds(pid), control_plane_cpu() - plane_cpu_0);
        let moto_cpu = moto_pid.map(|p| cpu_seconds(p) - moto_cpu_0);
        println!(
            "  apply all N: {:.1} s; all Ready: {:.1} s after the first apply",
            applied.as_secs_f64(),
            all_ready_after.as_secs_f64()
        );
        println!(
            "  CPU until all Ready: operator {operator_cpu:.1} s, API server and etcd {plane_cpu:.1} s{}",
            moto_cpu
                .map(|m| format!(", moto {m:.1} s"))
                .unwrap_or_default()
        );

        // 2. Steady state: nothing to do.
        if settings.runs("steady") {
            let every = settings.poll_every();
            tokio::time::sleep(every.min(settings.interval * 2) + Duration::from_secs(2)).await;
            // Three polls, or one when the poll is the feed's safety net (ten minutes by default).
            let polls = if settings.feed.is_some() { 1 } else { 3 };
            let window = every * polls;
            let before = all_calls();
            let sqs_before = operator_metric(
                &operator,
                "rds_operator_rds_api_calls_total{operation=\"ReceiveMessage\"",
            ) + operator_metric(
                &operator,
                "rds_operator_rds_api_calls_total{operation=\"DeleteMessageBatch\"",
            );
            let operator_cpu_0 = cpu_seconds(pid);
            let pairs_before = spread.as_ref().as_ref().map(|s| s.describes(&operator, n));
            tokio::time::sleep(window).await;
            let steady = diff(&all_calls(), &before);
            if let (Some(spread), Some(before)) = (spread.as_ref(), pairs_before) {
                for ((account, region, after, here), (_, _, before, _)) in
                    spread.describes(&operator, n).into_iter().zip(before)
                {
                    println!(
                        "  account {account} {region}: {here} instances, {:.0} DescribeDBInstances over {polls} polls (floor {})",
                        after - before,
                        polls as usize * here.div_ceil(100)
                    );
                }
            }
            let sqs = operator_metric(
                &operator,
                "rds_operator_rds_api_calls_total{operation=\"ReceiveMessage\"",
            ) + operator_metric(
                &operator,
                "rds_operator_rds_api_calls_total{operation=\"DeleteMessageBatch\"",
            ) - sqs_before;
            let steady_cpu = cpu_seconds(pid) - operator_cpu_0;
            let describes = steady.get("DescribeDBInstances").copied().unwrap_or(0);
            let others: u64 = (steady.iter())
                .filter(|(k, _)| *k != "DescribeDBInstances")
                .map(|(_, v)| v)
                .sum();
            let hours = window.as_secs_f64() / 3600.0;
            println!(
                "  steady state over {:.0} s ({polls} shared polls): {steady:?}; DescribeDBInstances per poll {:.1} (floor ceil(N/100) = {}), other RDS calls {others}; {:.3} RDS calls per instance-hour; {:.0} SQS calls per hour; operator CPU {steady_cpu:.2} s",
                window.as_secs_f64(),
                describes as f64 / polls as f64,
                n.div_ceil(100),
                (describes + others) as f64 / n as f64 / hours,
                sqs / hours,
            );
        }

        // 3. Drift: out-of-band changes to class, deletion protection and tags, spread over one
        // drift interval; latency from the change to the operator's correcting call.
        if settings.runs("drift") {
            let k = settings.samples.min(n);
            let gap = settings.interval / k as u32;
            let mut samples = Vec::new();
            for i in 0..k {
                let id = format!("{prefix}-{}", i * n / k);
                let action = match i % 3 {
                    0 => {
                        common::console_modify(&rds, &id, |m| m.db_instance_class("db.t3.small"))
                            .await;
                        "ModifyDBInstance"
                    }
                    1 => {
                        common::console_modify(&rds, &id, |m| m.deletion_protection(false)).await;
                        "ModifyDBInstance"
                    }
                    _ => {
                        let arn = common::describe(&rds, &id)
                            .await
                            .and_then(|d| d.db_instance_arn().map(String::from))
                            .expect("arn");
                        rds.remove_tags_from_resource()
                            .resource_name(&arn)
                            .tag_keys("app")
                            .send()
                            .await
                            .expect("out-of-band untag");
                        "AddTagsToResource"
                    }
                };
                samples.push((id, action, epoch()));
                tokio::time::sleep(gap).await;
            }
            let timeout = settings.poll_every() * 2 + Duration::from_secs(30);
            let all = latencies(&samples, timeout).await;
            let kind = |m: usize| -> Vec<(String, &str, f64)> {
                (samples.iter().enumerate())
                    .filter(|(i, _)| i % 3 == m)
                    .map(|(_, s)| s.clone())
                    .collect()
            };
            println!("  drift found and corrected, all: {}", p50_p99(&all));
            for (m, what) in [(0, "class"), (1, "deletion protection"), (2, "tags")] {
                let some = latencies(&kind(m), Duration::from_secs(1)).await;
                println!("    {what}: {}", p50_p99(&some));
            }
        }

        // 4. Spec change to ModifyDBInstance, while all N are observed.
        if settings.runs("spec") {
            tokio::time::sleep(Duration::from_secs(2)).await;
            let k = settings.samples.min(n);
            let mut samples = Vec::new();
            for i in 0..k {
                let index = (i * n / k + 1) % n;
                let t0 = epoch();
                api.patch(
                    &format!("db-{index}"),
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"dbInstanceClass": "db.t3.medium"}})),
                )
                .await
                .expect("patch");
                samples.push((format!("{prefix}-{index}"), "ModifyDBInstance", t0));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let spec = latencies(&samples, Duration::from_secs(60)).await;
            println!(
                "  spec change to ModifyDBInstance: p50 {:.3} s, p99 {:.3} s ({} samples)",
                percentile(&spec, 50.0),
                percentile(&spec, 99.0),
                spec.len()
            );
        }
        println!("  operator peak RSS: {:.1} MiB", peak_rss_mib(pid));

        // 5. Restart: the calls of the first drift interval, and the time until every DBInstance
        // has been reconciled again.
        if settings.runs("restart") {
            tokio::time::sleep(Duration::from_secs(3)).await;
            operator.kill();
            let before = all_calls();
            let restarted = Instant::now();
            operator = Operator::spawn(&args, common::kubeconfig(), &env);
            let success = "rds_operator_reconciles_total{result=\"success\",kind=\"DBInstance\"}";
            loop {
                if operator_metric(&operator, success) >= n as f64 {
                    break;
                }
                assert!(restarted.elapsed() < Duration::from_secs(1800));
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            let confirmed = restarted.elapsed();
            tokio::time::sleep(settings.interval.saturating_sub(restarted.elapsed())).await;
            let first = diff(&all_calls(), &before);
            let describes = first.get("DescribeDBInstances").copied().unwrap_or(0);
            let others: u64 = (first.iter())
                .filter(|(k, _)| *k != "DescribeDBInstances")
                .map(|(_, v)| v)
                .sum();
            println!(
                "  restart: every DBInstance reconciled again {:.1} s after the start; first drift interval: {first:?} ({describes} DescribeDBInstances, bound 2 x ceil(N/100) = {}; other RDS calls {others})",
                confirmed.as_secs_f64(),
                2 * n.div_ceil(100)
            );
        }
        // 6. Outage: every RDS call fails for BENCH_OUTAGE (60 s; of the kind BENCH_FAULTS says)
        // while each of the N has a tag to add: the calls the operator sent during the outage,
        // and the time from its end to the last of the N tags applied.
        if settings.runs("outage") {
            outage(&api, &rds, n, (&operator, relay.as_ref())).await;
        }
        drop(operator);
        // Leave nothing behind in moto for the next size.
        assert!(common::moto_ext_post("/moto-api/reset"), "reset moto");
    }
}
