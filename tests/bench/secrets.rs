//! The Secret-watch memory benchmark: the operator's peak RSS while the cluster holds 300 Secrets of
//! about 900 KiB in a namespace it has nothing to do with (Helm release Secrets, say). A
//! `cargo bench` target (tests/bench/secrets.sh); `cargo test` builds it but does not run it.
//!
//! Environment: BENCH_SECRETS (300), BENCH_SECRET_KIB (900), RDS_OPERATOR_BIN (the binary to
//! measure; by default this build's, so an older build can be measured for comparison).

use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};

// The benchmark uses part of the test bed (common allows what a binary leaves unused).
#[path = "../integration/common/mod.rs"]
mod common;

use common::Operator;

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

/// Peak resident memory (VmHWM) of a process, in MiB.
fn peak_rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    (status.lines())
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map(|kib| kib / 1024.0)
        .unwrap_or(0.0)
}

#[tokio::main]
async fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("the Secret-watch benchmark runs under `cargo bench` (tests/bench/secrets.sh)");
        return;
    }
    let count: usize = env_or("BENCH_SECRETS", "300")
        .parse()
        .expect("BENCH_SECRETS");
    let kib: usize = env_or("BENCH_SECRET_KIB", "900")
        .parse()
        .expect("BENCH_SECRET_KIB");
    let client = common::client_with_crd().await;
    let elsewhere = common::namespace(&client, "bench-secrets").await;
    let api: Api<Secret> = Api::namespaced(client.clone(), &elsewhere);
    for i in 0..count {
        let bytes: Vec<u8> = (0..kib * 1024).map(|j| (i * 31 + j * 7) as u8).collect();
        let secret = Secret {
            metadata: kube::api::ObjectMeta {
                name: Some(format!("release-{i}")),
                ..Default::default()
            },
            data: Some([("release".to_owned(), ByteString(bytes))].into()),
            ..Default::default()
        };
        api.create(&PostParams::default(), &secret)
            .await
            .expect("create Secret");
    }
    println!("\n{count} Secrets of {kib} KiB in namespace {elsewhere}");

    // The operator watches every namespace, as a cluster-wide install does.
    let args: Vec<String> = ["--drift-interval", "10s"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    let operator = Operator::spawn(&args, common::kubeconfig(), &[]);
    common::wait_for("/readyz", Duration::from_secs(120), || {
        let r = operator.get("/readyz");
        async move { (r?.0 == 200).then_some(()) }
    })
    .await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let rss = peak_rss_mib(operator.pid());
    println!("operator peak RSS with its caches synced: {rss:.1} MiB");
    drop(operator);
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client);
    let _ = namespaces.delete(&elsewhere, &Default::default()).await;
}
