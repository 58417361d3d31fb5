//! A DBShardGroup of a limitless Aurora PostgreSQL DBCluster of the namespace, on the emulator
//! (moto_ext/shard_groups.py: RDS's states and refusals; no shards run): created once the cluster is
//! Ready, its endpoint in status and in the cluster's connection Secret (`shardGroupHost`, and an
//! extra key over it); nothing sent in steady state; more capacity is one ModifyDBShardGroup;
//! deleting it deletes it in RDS, and the cluster after it. A limitless cluster of another engine is
//! refused at apply.

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbcluster::DBCluster;
use rds_operator::dbshardgroup::DBShardGroup;
use serde_json::json;

use crate::clusters::ready as cluster_ready;
use crate::common::{self, *};

fn limitless(identifier: &str, engine: &str) -> DBCluster {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBCluster",
        "metadata": {"name": "coffee"},
        "spec": {"dbClusterIdentifier": identifier, "engine": engine,
                 "clusterScalabilityType": "limitless", "masterUsername": "admin",
                 "masterUserPassword": {"name": "db-password", "key": "password"},
                 "deletionPolicy": "Delete",
                 "connectionSecret": {"name": "coffee-db",
                                      "extraKeys": {"APP_DB_HOST": "{{ shardGroupHost }}"}}},
    }))
    .expect("valid DBCluster")
}

fn shard_group(identifier: &str) -> DBShardGroup {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBShardGroup",
        "metadata": {"name": "shards"},
        "spec": {"dbShardGroupIdentifier": identifier, "dbClusterRef": {"name": "coffee"},
                 "maxACU": 768, "minACU": 16, "computeRedundancy": 0},
    }))
    .expect("valid DBShardGroup")
}

fn ready(s: &DBShardGroup) -> bool {
    common::object_condition(s, "Ready").is_some_and(|r| r.0 == "True")
        && common::object_condition(s, "Synced").is_some_and(|r| r.1 == "Synced")
        && (s.status.as_ref()).and_then(|s| s.reported.observed_generation) == s.metadata.generation
}

#[tokio::test]
async fn a_shard_group_of_a_limitless_cluster_is_created_in_its_secret_changed_kept_and_deleted() {
    let (client, ns, _instances, rds) = setup("shards").await;
    let operator = Operator::start(&ns);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let pp = PostParams::default();
    let refused = clusters
        .create(&pp, &limitless(&unique("lim"), "aurora-mysql"))
        .await;
    let message = format!("{:?}", refused.expect_err("refused at apply"));
    assert!(
        message.contains("engine must be aurora-postgresql"),
        "{message}"
    );
    (clusters
        .create(&pp, &limitless(&unique("lim"), "aurora-postgresql"))
        .await)
        .expect("create the limitless DBCluster");
    let groups: Api<DBShardGroup> = Api::namespaced(client.clone(), &ns);
    let id = unique("shards");
    (groups.create(&pp, &shard_group(&id)).await).expect("create the DBShardGroup");

    let made = wait_object(&groups, "shards", "Ready", ready).await;
    wait_object(&clusters, "coffee", "the DBCluster Ready", cluster_ready).await;
    let endpoint = (made.status.as_ref())
        .and_then(|s| s.endpoint.clone())
        .expect("its endpoint");
    assert!(endpoint.contains(".limitless-"), "{endpoint}");
    let secret = common::wait_for(
        "the cluster's Secret to carry shardGroupHost",
        TIMEOUT,
        || {
            let (client, ns, endpoint) = (client.clone(), ns.clone(), endpoint.clone());
            async move {
                let data = secret_data(&client, &ns, "coffee-db").await?;
                (data.get("shardGroupHost") == Some(&endpoint)).then_some(data)
            }
        },
    )
    .await;
    assert_eq!(
        secret["APP_DB_HOST"], endpoint,
        "the app's host is the shard group's"
    );
    assert_eq!(common::calls(&id, "CreateDBShardGroup"), 1);

    // In sync: no call that changes anything over three passes of the operator's.
    common::steady_state(&operator, ("DBShardGroup", "shards"), &[&id]).await;

    // More capacity and a standby: one ModifyDBShardGroup, reported once RDS has it.
    let patch = json!({"spec": {"maxACU": 1024, "computeRedundancy": 1}});
    (groups
        .patch("shards", &PatchParams::default(), &Patch::Merge(&patch))
        .await)
        .unwrap();
    let changed = wait_object(&groups, "shards", "the new capacity reported", |s| {
        ready(s) && (s.status.as_ref()).and_then(|s| s.max_acu) == Some(1024.0)
    })
    .await;
    assert_eq!(changed.status.unwrap().compute_redundancy, Some(1));
    assert_eq!(common::calls(&id, "ModifyDBShardGroup"), 1);

    (groups.delete("shards", &Default::default()).await).expect("delete");
    common::wait_object_gone(&groups, "shards").await;
    common::wait_for("RDS has the shard group no more", TIMEOUT, || {
        let (rds, id) = (rds.clone(), id.clone());
        async move {
            let found = rds
                .describe_db_shard_groups()
                .db_shard_group_identifier(&id)
                .send()
                .await;
            found.is_err().then_some(())
        }
    })
    .await;
    (clusters.delete("coffee", &Default::default()).await).expect("delete the DBCluster");
    common::wait_object_gone(&clusters, "coffee").await;
}
