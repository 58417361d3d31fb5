//! A row of N objects of one kind over ten DBInstances of the namespace (the snapshots row, the
//! event subscriptions row), against moto at zero delays: the time from applying them all to all
//! Ready, the steady state's calls per shared poll against their floor (one page of the kind's
//! listing per 100, one of the instances'), every other RDS call, and the operator's peak RSS.

use std::fmt::Debug;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::common;
use super::{Settings, peak_rss_mib, row, steady_state};

/// The DBInstances the objects are of.
pub const SOURCES: usize = 10;

/// What a row makes and waits for.
pub struct Objects<K> {
    /// The row's name (its namespace's prefix).
    pub name: &'static str,
    /// The kind, plural, in the row's lines.
    pub what: &'static str,
    /// The kind's listing call (its floor: a page per 100).
    pub listing: &'static str,
    /// The i-th object, its RDS identifier prefixed; of DBInstance `db-{i % SOURCES}`.
    pub make: fn(usize, &str) -> K,
    pub ready: fn(&K) -> bool,
}

/// Creates ten DBInstances and N objects of them, waits until all are Ready, and measures.
pub async fn run<K>(client: &kube::Client, settings: &Settings, n: usize, objects: Objects<K>)
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    K: Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static,
{
    let (ns, operator) = row(client, settings, &format!("{}{n}", objects.name)).await;
    let instances: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    let api: Api<K> = Api::namespaced(client.clone(), &ns);
    let pid = operator.pid();
    let prefix = common::unique("o");
    println!("N = {n} {} of {SOURCES} DBInstances", objects.what);
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
    futures::stream::iter(0..n)
        .map(|i| {
            let (api, object) = (api.clone(), (objects.make)(i, &prefix));
            async move {
                (api.create(&PostParams::default(), &object).await).expect("create the object");
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    let applied = started.elapsed();
    loop {
        let ready = (api.list(&Default::default()).await)
            .map(|l| l.items.iter().filter(|o| (objects.ready)(o)).count())
            .unwrap_or(0);
        if ready == n {
            break;
        }
        let what = objects.what;
        assert!(
            started.elapsed() < Duration::from_secs(1800),
            "{ready} {what} Ready"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    println!(
        "  apply all: {:.1} s; all {n} {} Ready: {:.1} s after the first apply",
        applied.as_secs_f64(),
        objects.what,
        started.elapsed().as_secs_f64()
    );
    let floors = [
        (objects.listing, n.div_ceil(100)),
        ("DescribeDBInstances", SOURCES.div_ceil(100)),
    ];
    steady_state(settings, &floors).await;
    println!("  operator peak RSS: {:.1} MiB", peak_rss_mib(pid));
    drop(operator);
    assert!(common::moto_ext_post("/moto-api/reset"), "reset moto");
}
