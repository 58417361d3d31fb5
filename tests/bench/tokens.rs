//! The IAM token benchmark: 1,000 DBUsers with auth IAM on one real MariaDB instance, their tokens
//! kept fresh by the operator. It measures, in steady state over `BENCH_WINDOW` seconds: the
//! tokens replaced per minute, the operator's CPU time per minute, the master logins the DBUsers
//! make per minute, and how late each replacement comes after the Secret's token reached the
//! refresh age (its lag): a token is replaced `refresh + lag` after it was signed, so it still has
//! `life - refresh - lag` to go (900 - 600 - lag seconds at the defaults). The refresh is shortened
//! (`BENCH_REFRESH`, 60 s) so a window sees several rounds; the lag does not scale with it.
//! A `cargo bench` target (tests/bench/tokens.sh); `cargo test` builds it but does not run it.
//!
//! Environment: BENCH_USERS (1000), BENCH_REFRESH (60), BENCH_WINDOW (180), RDS_OPERATOR_BIN.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, PostParams};
use rds_operator::dbinstance::DBInstance;
use rds_operator::dbuser::DBUser;
use serde_json::json;

#[path = "../integration/common/mod.rs"]
mod common;

use common::Operator;

fn env_or(name: &str, default: u64) -> u64 {
    (std::env::var(name).ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The operator's CPU time so far (user + system), in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or_default();
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// When each connection Secret's token was signed (seconds since the epoch), by Secret name.
async fn signed(api: &Api<Secret>) -> BTreeMap<String, i64> {
    let list = api
        .list(&ListParams::default())
        .await
        .expect("list Secrets");
    (list.items.into_iter())
        .filter_map(|s| {
            let name = s.metadata.name.clone()?;
            let token = String::from_utf8(s.data?.get("password")?.0.clone()).ok()?;
            let date = token
                .split('&')
                .find_map(|p| p.strip_prefix("X-Amz-Date="))?;
            let at = chrono::NaiveDateTime::parse_from_str(date, "%Y%m%dT%H%M%SZ").ok()?;
            Some((name, at.and_utc().timestamp()))
        })
        .collect()
}

/// The server's count of connections made so far, read as the master user.
fn connections(host: &str, port: &str) -> u64 {
    let sql = "SHOW GLOBAL STATUS LIKE 'Connections'";
    let (_, out) = common::mariadb(host, Some(port), "admin", PASSWORD, "COFFEE", sql);
    (out.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

const PASSWORD: &str = "Sup3r-Secret-Passw0rd";

fn percentile(sorted: &[i64], p: f64) -> i64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

#[tokio::main]
async fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("the IAM token benchmark runs under `cargo bench` (tests/bench/tokens.sh)");
        return;
    }
    let (users, refresh, window) = (
        env_or("BENCH_USERS", 1000),
        env_or("BENCH_REFRESH", 60),
        env_or("BENCH_WINDOW", 180),
    );
    assert!(
        common::moto_ext_post(&format!(
            "/_rds_ext/config?iam_token_life={}",
            refresh * 3 / 2
        )),
        "the emulator's token life"
    );
    let (client, ns, api, _rds) = common::setup("bench-tokens").await;
    let refresh_arg = format!("{refresh}s");
    // The default drift interval: each DBUser reads its privileges once a minute.
    let args = [
        "--iam-token-refresh",
        &refresh_arg,
        "--drift-interval",
        "60s",
    ];
    let operator = Operator::start_with(&ns, &args);
    let spec = json!({"enableIAMDatabaseAuthentication": true,
                      "tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    let id = common::unique("bench-tokens");
    api.create(&PostParams::default(), &common::dbinstance("db", &id, spec))
        .await
        .expect("create DBInstance");
    let limit = Duration::from_secs(600);
    let db: DBInstance = common::wait_dbi(&api, "db", "Ready", limit, |db| {
        common::is_ready(db)
            && (db.status.as_ref())
                .and_then(|s| s.common.iam_database_authentication_enabled)
                .unwrap_or(false)
    })
    .await;
    let endpoint = (db.status.as_ref())
        .and_then(|s| s.common.endpoint.clone())
        .expect("endpoint");
    let (host, port) = (endpoint.address.clone(), endpoint.port.to_string());
    let dbusers: Api<DBUser> = Api::namespaced(client.clone(), &ns);
    let started = Instant::now();
    for i in 0..users {
        let user: DBUser = serde_json::from_value(json!({
            "metadata": {"name": format!("app-{i}")},
            "spec": {"dbInstanceRef": {"name": "db"}, "auth": "IAM",
                     "grants": [{"database": "COFFEE", "preset": "ReadOnly"}],
                     "connectionSecret": {"name": format!("app-{i}-db")}},
        }))
        .expect("a DBUser");
        dbusers
            .create(&PostParams::default(), &user)
            .await
            .expect("create DBUser");
    }
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    common::wait_for("every token written", limit * 3, || async {
        let n = signed(&secrets).await.len() as u64;
        (n >= users).then_some(())
    })
    .await;
    println!(
        "\n{users} IAM DBUsers applied -> every connection Secret holding a token: {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // Steady state: sample every second; a Secret whose signing time moved was replaced.
    let mut last = signed(&secrets).await;
    let (cpu0, logins0, t0) = (
        cpu_seconds(operator.pid()),
        connections(&host, &port),
        Instant::now(),
    );
    let mut lags: Vec<i64> = Vec::new();
    while t0.elapsed() < Duration::from_secs(window) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = chrono::Utc::now().timestamp();
        for (name, at) in signed(&secrets).await {
            match last.get(&name) {
                Some(before) if *before != at => {
                    lags.push(now - before - i64::try_from(refresh).unwrap());
                    last.insert(name, at);
                }
                None => {
                    last.insert(name, at);
                }
                _ => {}
            }
        }
    }
    let minutes = t0.elapsed().as_secs_f64() / 60.0;
    let cpu = (cpu_seconds(operator.pid()) - cpu0) / minutes;
    let logins = (connections(&host, &port) - logins0) as f64 / minutes;
    lags.sort();
    println!(
        "refresh {refresh} s over {window} s: {:.0} tokens replaced per minute (one per user per \
         refresh: {:.0}), operator CPU {cpu:.2} s per minute, {logins:.0} database logins per minute",
        lags.len() as f64 / minutes,
        users as f64 * 60.0 / refresh as f64,
    );
    if let (Some(min), Some(max)) = (lags.first(), lags.last()) {
        println!(
            "lag after the refresh age (sampled each second): min {min} s, p50 {} s, p99 {} s, \
             max {max} s; at the defaults a token is replaced with {} s of its 900 left (worst)",
            percentile(&lags, 0.5),
            percentile(&lags, 0.99),
            900 - 600 - max
        );
    }
    drop(operator);
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client);
    let _ = namespaces.delete(&ns, &Default::default()).await;
}
