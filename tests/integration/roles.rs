//! spec.associatedRoles on both database kinds: a listed role is associated once; one associated
//! outside the operator is reported and kept; one the spec drops is removed.

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbcluster::DBCluster;
use serde_json::json;

use crate::clusters::{cluster, ready};
use crate::common::{self, *};

const IMPORT: &str = "arn:aws:iam::123456789012:role/rds-s3-import";
const EXPORT: &str = "arn:aws:iam::123456789012:role/rds-s3-export";

async fn instance_roles(rds: &aws_sdk_rds::Client, id: &str) -> Vec<String> {
    let i = common::describe(rds, id).await.expect("instance");
    (i.associated_roles().iter())
        .filter_map(|r| r.role_arn().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_listed_role_is_associated_one_added_by_hand_kept_and_a_dropped_one_removed() {
    let (_client, ns, api, rds) = setup("roles").await;
    let id = common::unique("roles");
    let operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    let spec = json!({"engine": "postgres", "engineVersion": "16.4",
                      "associatedRoles": [{"roleARN": IMPORT, "featureName": "s3Import"}]});
    (api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await)
        .expect("create");
    wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    wait_for("the role associated", TIMEOUT, || async {
        (instance_roles(&rds, &id).await == [IMPORT]).then_some(())
    })
    .await;
    // One associated outside the operator, for an export.
    (rds.add_role_to_db_instance())
        .db_instance_identifier(&id)
        .role_arn(EXPORT)
        .feature_name("s3Export")
        .send()
        .await
        .expect("a role added by hand");
    let db = wait_dbi(&api, "db", "both roles in status", TIMEOUT, |db| {
        (db.status.as_ref()).is_some_and(|s| s.common.associated_roles.len() == 2)
    })
    .await;
    let managed: Vec<_> = (db.status.unwrap().common.associated_roles.iter())
        .map(|r| (r.role_arn.clone(), r.managed))
        .collect();
    assert!(managed.contains(&(EXPORT.to_owned(), None)), "{managed:?}");
    assert!(
        managed.contains(&(IMPORT.to_owned(), Some(true))),
        "{managed:?}"
    );

    let drop = json!({"spec": {"associatedRoles": null}});
    (api.patch("db", &PatchParams::default(), &Patch::Merge(&drop))
        .await)
        .unwrap();
    wait_for("ours removed", TIMEOUT, || async {
        (instance_roles(&rds, &id).await == [EXPORT]).then_some(())
    })
    .await;
    let kept = || async { instance_roles(&rds, &id).await == [EXPORT] };
    crate::common::holds_over_passes(
        &operator,
        ("DBInstance", "db"),
        "the one added by hand is kept",
        kept,
    )
    .await;
    assert_eq!(
        common::calls(&id, "AddRoleToDBInstance"),
        2,
        "ours once, and the hand's"
    );
    assert_eq!(common::calls(&id, "RemoveRoleFromDBInstance"), 1);
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn a_clusters_role_is_associated_and_removed_with_the_spec() {
    let (client, ns, _api, rds) = setup("cluster-roles").await;
    let id = common::unique("croles");
    let _operator = Operator::start(&ns);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let roles = json!({"associatedRoles": [{"roleARN": IMPORT, "featureName": "s3Import"}]});
    (clusters
        .create(&PostParams::default(), &cluster(&id, roles))
        .await)
        .expect("create");
    wait_object(&clusters, "coffee", "Ready", ready).await;
    let listed = |c: &DBCluster| (c.status.as_ref()).map_or(0, |s| s.common.associated_roles.len());
    wait_object(&clusters, "coffee", "the role in status", |c| {
        listed(c) == 1
    })
    .await;
    let c = (rds
        .describe_db_clusters()
        .db_cluster_identifier(&id)
        .send()
        .await)
        .unwrap();
    let arns: Vec<_> = (c.db_clusters()[0].associated_roles().iter())
        .filter_map(|r| r.role_arn())
        .collect();
    assert_eq!(arns, [IMPORT]);
    let drop = json!({"spec": {"associatedRoles": []}});
    (clusters
        .patch("coffee", &PatchParams::default(), &Patch::Merge(&drop))
        .await)
        .unwrap();
    wait_object(&clusters, "coffee", "the role gone", |c| listed(c) == 0).await;
    assert_eq!(common::calls(&id, "AddRoleToDBCluster"), 1);
    assert_eq!(common::calls(&id, "RemoveRoleFromDBCluster"), 1);
    (clusters.delete("coffee", &Default::default()).await).unwrap();
    wait_object_gone(&clusters, "coffee").await;
}
