//! The GlobalCluster kind: a global database made once of a primary DBCluster of the namespace,
//! tagged as its own, its deletion protection kept, its members reported, and a deletion that
//! waits while a member cluster is left, with no DeleteGlobalCluster sent.

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::dbcluster::DBCluster;
use rds_operator::globalcluster::GlobalCluster;
use serde_json::json;

use crate::clusters::{cluster, ready as cluster_ready};
use crate::common::{
    self, Operator, object_condition, setup, unique, wait_object, wait_object_gone,
};

fn global(name: &str, spec: serde_json::Value) -> GlobalCluster {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "GlobalCluster",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("valid GlobalCluster")
}

fn synced_reason(g: &GlobalCluster) -> String {
    object_condition(g, "Synced").map_or_else(String::new, |c| c.1)
}

fn ready(g: &GlobalCluster) -> bool {
    object_condition(g, "Ready").is_some_and(|c| c.0 == "True") && synced_reason(g) == "Synced"
}

#[tokio::test]
async fn a_global_database_is_made_once_of_its_primary_and_waits_for_its_members_to_go() {
    let (client, ns, _instances, rds) = setup("gdb").await;
    let _operator = Operator::start(&ns);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let (id, gid) = (unique("gdb-primary"), unique("gdb"));
    (clusters.create(
        &PostParams::default(),
        &cluster(&id, json!({"deletionPolicy": "Delete"})),
    ))
    .await
    .expect("create the primary DBCluster");
    let globals: Api<GlobalCluster> = Api::namespaced(client.clone(), &ns);
    // Made of the DBCluster coffee once it is Ready.
    let spec = json!({"globalClusterIdentifier": gid, "sourceDBClusterRef": {"name": "coffee"}});
    (globals.create(&PostParams::default(), &global("coffee-global", spec)))
        .await
        .expect("create the GlobalCluster");
    let made = wait_object(&globals, "coffee-global", "Ready", ready).await;
    wait_object(&clusters, "coffee", "the primary Ready", cluster_ready).await;
    let status = made.status.expect("a status");
    assert_eq!(status.writer.as_deref(), Some(id.as_str()));
    assert_eq!(status.members.len(), 1, "{:?}", status.members);
    assert_eq!(
        (
            status.members[0].region.as_str(),
            status.members[0].role.as_str()
        ),
        ("us-east-1", "writer")
    );
    assert_eq!(status.engine.as_deref(), Some("aurora-mysql"));
    assert_eq!(common::calls(&gid, "CreateGlobalCluster"), 1);
    let found = (rds.describe_global_clusters())
        .global_cluster_identifier(&gid)
        .send()
        .await
        .expect("DescribeGlobalClusters");
    let tags = found.global_clusters()[0].tag_list();
    assert!(
        tags.iter()
            .any(|t| t.key() == Some(rds_operator::crd::OWNER_TAG)),
        "tagged as the object's: {tags:?}"
    );

    // Deletion protection asked: one ModifyGlobalCluster; taken back: another.
    for (protected, sent) in [(true, 1), (false, 2)] {
        let patch = json!({"spec": {"deletionProtection": protected}});
        (globals.patch(
            "coffee-global",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        ))
        .await
        .expect("patch deletionProtection");
        wait_object(&globals, "coffee-global", "protection as asked", |g| {
            ready(g) && g.status.as_ref().unwrap().deletion_protection == Some(protected)
        })
        .await;
        assert_eq!(common::calls(&gid, "ModifyGlobalCluster"), sent);
    }

    // Deleted while the primary is a member: waits, and sends nothing.
    (globals.delete("coffee-global", &DeleteParams::default()))
        .await
        .expect("delete the GlobalCluster");
    wait_object(&globals, "coffee-global", "InUse", |g| {
        synced_reason(g) == "InUse"
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(common::calls(&gid, "DeleteGlobalCluster"), 0);
    // Once the primary is detached (by hand here: RDS refuses to delete a member cluster), the
    // global database goes.
    let primary = (status.members[0].db_cluster_arn.clone()).expect("the primary's ARN");
    (rds.remove_from_global_cluster())
        .global_cluster_identifier(&gid)
        .db_cluster_identifier(&primary)
        .send()
        .await
        .expect("RemoveFromGlobalCluster");
    wait_object_gone(&globals, "coffee-global").await;
    assert_eq!(common::calls(&gid, "DeleteGlobalCluster"), 1);
    (clusters.delete("coffee", &DeleteParams::default()))
        .await
        .expect("delete the primary");
    wait_object_gone(&clusters, "coffee").await;
    let gone = (rds.describe_global_clusters())
        .global_cluster_identifier(&gid)
        .send()
        .await;
    assert!(gone.is_err(), "RDS has it no more: {gone:?}");
}
