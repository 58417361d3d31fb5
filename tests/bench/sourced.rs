//! A row of N objects of one kind over DBInstances or DBClusters of the namespace (the snapshots,
//! event subscriptions, integrations and shard groups rows), against moto at zero delays: the time from applying them all to all
//! Ready, the steady state's calls per shared poll against their floor (one page of the kind's
//! listing per 100, one of the instances'), every other RDS call, and the operator's peak RSS.

use std::fmt::Debug;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, PostParams};
use rds_operator::dbcluster::DBCluster;
use rds_operator::dbinstance::DBInstance;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::common;
use super::{Settings, peak_rss_mib, row, steady_state};

/// The DBInstances the objects are of.
pub const SOURCES: usize = 10;

/// What the objects are of: ten DBInstances `db-{i}`, or DBClusters `c-{i}` (aurora-postgresql,
/// limitless when asked), as many as given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sources {
    Instances,
    Clusters { count: usize, limitless: bool },
}

/// What a row makes and waits for.
pub struct Objects<K> {
    /// What the objects are of.
    pub sources: Sources,
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
    let api: Api<K> = Api::namespaced(client.clone(), &ns);
    let pid = operator.pid();
    let prefix = common::unique("o");
    let source_floor = make_sources(client, &ns, &prefix, objects.sources).await;
    println!(
        "N = {n} {} of {} {}",
        objects.what, source_floor.1, source_floor.2
    );
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
        (source_floor.0, source_floor.1.div_ceil(100)),
    ];
    steady_state(settings, &floors).await;
    println!("  operator peak RSS: {:.1} MiB", peak_rss_mib(pid));
    drop(operator);
    assert!(common::moto_ext_post("/moto-api/reset"), "reset moto");
}

/// Makes the sources and waits until all are Ready: their listing call, how many, and what.
async fn make_sources(
    client: &kube::Client,
    ns: &str,
    prefix: &str,
    sources: Sources,
) -> (&'static str, usize, &'static str) {
    let pp = PostParams::default();
    match sources {
        Sources::Instances => {
            let instances: Api<DBInstance> = Api::namespaced(client.clone(), ns);
            for i in 0..SOURCES {
                let id = format!("{prefix}-db-{i}");
                let db = common::dbinstance(&format!("db-{i}"), &id, json!({}));
                (instances.create(&pp, &db).await).expect("create DBInstance");
            }
            all_ready(&instances, SOURCES, common::is_ready).await;
            ("DescribeDBInstances", SOURCES, "DBInstances")
        }
        Sources::Clusters { count, limitless } => {
            let clusters: Api<DBCluster> = Api::namespaced(client.clone(), ns);
            let scalability = if limitless { "limitless" } else { "standard" };
            for i in 0..count {
                let cluster: DBCluster = serde_json::from_value(json!({
                    "metadata": {"name": format!("c-{i}")},
                    "spec": {"dbClusterIdentifier": format!("{prefix}-c-{i}"),
                             "engine": "aurora-postgresql", "masterUsername": "admin",
                             "clusterScalabilityType": scalability, "deletionPolicy": "Delete",
                             "masterUserPassword": {"name": "db-password", "key": "password"},
                             // A limitless cluster's Secret carries its shard group's endpoint,
                             // read from the shard groups' listing.
                             "connectionSecret": {"name": format!("c-{i}-db")}},
                }))
                .unwrap();
                (clusters.create(&pp, &cluster).await).expect("create DBCluster");
            }
            let ready = |c: &DBCluster| {
                (c.status.iter().flat_map(|s| &s.reported.conditions))
                    .any(|c| c.type_ == "Ready" && c.status == "True")
            };
            all_ready(&clusters, count, ready).await;
            ("DescribeDBClusters", count, "DBClusters")
        }
    }
}

async fn all_ready<S>(api: &Api<S>, count: usize, ready: impl Fn(&S) -> bool)
where
    S: kube::Resource + Clone + Debug + DeserializeOwned,
{
    loop {
        let found = (api.list(&Default::default()).await)
            .map(|l| l.items.iter().filter(|s| ready(s)).count())
            .unwrap_or(0);
        if found == count {
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
