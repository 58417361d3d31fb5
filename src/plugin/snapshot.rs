//! `kubectl rds snapshot NAME [--wait]`: a DBSnapshot of the DBInstance NAME (or a
//! DBClusterSnapshot of the DBCluster NAME), named `NAME-YYYYMMDDHHMMSS`, made by the operator as
//! any other; with `--wait`, until it is Ready.

use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};
use serde::de::DeserializeOwned;

use rds_operator::dbcluster::DBCluster;
use rds_operator::dbclustersnapshot::DBClusterSnapshot;
use rds_operator::dbinstance::DBInstance;
use rds_operator::dbsnapshot::DBSnapshot;

/// The snapshot object of the database `name` (`kind`), made at `now` (RFC 3339). Pure.
pub fn object(kind: &str, name: &str, now: &str) -> serde_json::Value {
    let stamp: String = now.chars().filter(char::is_ascii_digit).take(14).collect();
    let (snapshot_kind, source) = match kind {
        "DBCluster" => ("DBClusterSnapshot", "source"),
        _ => ("DBSnapshot", "source"),
    };
    // A Kubernetes name has at most 253 characters; an RDS snapshot identifier 255.
    let base: String = name.chars().take(253 - stamp.len() - 1).collect();
    serde_json::json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": snapshot_kind,
        "metadata": {"name": format!("{base}-{stamp}"),
                     "labels": {"app.kubernetes.io/created-by": "kubectl-rds"}},
        "spec": {source: {"name": name}},
    })
}

/// Makes the snapshot object; with `wait`, waits until Ready (or it fails, which is said).
pub async fn run(client: &Client, namespace: &str, name: &str, wait: bool) -> anyhow::Result<()> {
    let instances: Api<DBInstance> = Api::namespaced(client.clone(), namespace);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), namespace);
    let kind = match (
        instances.get_opt(name).await?,
        clusters.get_opt(name).await?,
    ) {
        (Some(_), _) => "DBInstance",
        (None, Some(_)) => "DBCluster",
        (None, None) => anyhow::bail!("no DBInstance or DBCluster {name} in namespace {namespace}"),
    };
    let now = chrono::Utc::now().to_rfc3339();
    let value = object(kind, name, &now);
    let made = match kind {
        "DBCluster" => make::<DBClusterSnapshot>(client, namespace, value).await?,
        _ => make::<DBSnapshot>(client, namespace, value).await?,
    };
    println!("{} {made} of {kind} {name} made", value_kind(kind));
    if !wait {
        return Ok(());
    }
    loop {
        let ready = match kind {
            "DBCluster" => ready::<DBClusterSnapshot>(client, namespace, &made).await?,
            _ => ready::<DBSnapshot>(client, namespace, &made).await?,
        };
        match ready {
            Some((true, _)) => {
                println!("{made} is Ready");
                return Ok(());
            }
            Some((false, reason)) if reason.contains("Fail") => {
                anyhow::bail!("{made} failed: {reason}")
            }
            _ => tokio::time::sleep(std::time::Duration::from_secs(2)).await,
        }
    }
}

fn value_kind(kind: &str) -> &'static str {
    match kind {
        "DBCluster" => "DBClusterSnapshot",
        _ => "DBSnapshot",
    }
}

async fn make<K>(
    client: &Client,
    namespace: &str,
    value: serde_json::Value,
) -> anyhow::Result<String>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let object: K = serde_json::from_value(value)?;
    Ok(api
        .create(&PostParams::default(), &object)
        .await?
        .name_any())
}

/// The snapshot's Ready condition: (True, its reason); None before it has one.
async fn ready<K>(
    client: &Client,
    namespace: &str,
    name: &str,
) -> anyhow::Result<Option<(bool, String)>>
where
    K: rds_operator::managed::references::Referable,
{
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let object = api.get(name).await?;
    let conditions = object.status().map(K::conditions).unwrap_or_default();
    Ok((conditions.iter())
        .find(|c| c.type_ == "Ready")
        .map(|c| (c.status == "True", c.reason.clone())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snapshot_is_of_the_kind_of_the_database_and_named_by_the_time() {
        let now = "2026-12-06T18:30:05.123+00:00";
        let db = object("DBInstance", "coffee-db", now);
        assert_eq!(db["kind"], "DBSnapshot");
        assert_eq!(db["metadata"]["name"], "coffee-db-20261206183005");
        assert_eq!(db["spec"]["source"]["name"], "coffee-db");
        let _: DBSnapshot = serde_json::from_value(db).expect("a valid DBSnapshot");
        let cluster = object("DBCluster", "coffee", now);
        assert_eq!(cluster["kind"], "DBClusterSnapshot");
        let _: DBClusterSnapshot =
            serde_json::from_value(cluster).expect("a valid DBClusterSnapshot");
    }
}
