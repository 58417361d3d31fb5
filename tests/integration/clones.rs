//! A clone that expires (restoreFrom.cloneOf, expireAfter), on the emulator's real engine: the
//! clone has the source's rows, the source does not see the clone's writes, RDS groups the two as
//! clones, and the clone and its member are deleted once expireAfter has passed.

use kube::api::{Api, PostParams};
use rds_operator::dbcluster::DBCluster;
use serde_json::json;

use crate::clusters::{cluster, member, ready};
use crate::common::{self, *};

#[tokio::test]
async fn a_clone_has_the_sources_rows_keeps_its_writes_and_is_deleted_when_it_expires() {
    let (client, ns, instances, rds) = setup("clones").await;
    let _operator = Operator::start(&ns);
    let (id, one) = (common::unique("clsrc"), common::unique("clsrc-1"));
    let (clone_id, clone_one) = (common::unique("clone"), common::unique("clone-1"));
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let real = json!({"tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    (clusters
        .create(&PostParams::default(), &cluster(&id, real))
        .await)
        .expect("create source");
    (instances
        .create(&PostParams::default(), &member("one", &one, json!({})))
        .await)
        .expect("create the source's member");
    wait_object(&clusters, "coffee", "the source Ready", ready).await;
    let source = (common::secret_data(&client, &ns, "coffee-db").await).expect("source Secret");
    let (made, out) = common::mariadb_keys(
        &source,
        &source["password"],
        "CREATE TABLE beans (id INT PRIMARY KEY); INSERT INTO beans VALUES (7)",
    );
    assert!(made, "{out}");

    let preview: DBCluster = serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBCluster",
        "metadata": {"name": "preview"},
        "spec": {"dbClusterIdentifier": clone_id, "engine": "aurora-mysql", "masterUsername": "admin",
                 "restoreFrom": {"cloneOf": {"name": "coffee"}}, "expireAfter": "75s",
                 "deletionPolicy": "Delete",
                 "masterUserPassword": {"name": "db-password", "key": "password"},
                 "connectionSecret": {"name": "preview-db"}},
    }))
    .unwrap();
    (clusters.create(&PostParams::default(), &preview).await).expect("create the clone");
    let mut preview_member = member("preview-1", &clone_one, json!({}));
    preview_member.spec.db_cluster_ref = Some(rds_operator::crd::LocalRef {
        name: "preview".into(),
    });
    (instances
        .create(&PostParams::default(), &preview_member)
        .await)
        .expect("clone member");
    let made = wait_object(&clusters, "preview", "the clone Ready", ready).await;
    let expires = made.status.as_ref().and_then(|s| s.expires_at.clone());
    assert!(expires.is_some(), "status.expiresAt");
    assert_eq!(common::calls(&clone_id, "RestoreDBClusterToPointInTime"), 1);
    let group = |c: &str| {
        let rds = rds.clone();
        let c = c.to_owned();
        async move {
            let out = (rds
                .describe_db_clusters()
                .db_cluster_identifier(&c)
                .send()
                .await)
                .unwrap();
            out.db_clusters()[0].clone_group_id().map(str::to_owned)
        }
    };
    let (a, b) = (group(&id).await, group(&clone_id).await);
    assert!(a.is_some() && a == b, "one clone group: {a:?} {b:?}");

    let copy = (common::secret_data(&client, &ns, "preview-db").await).expect("clone Secret");
    let (read, out) = wait_sql(&copy, &copy["host"], "SELECT id FROM beans", "7", TIMEOUT).await;
    assert!(
        read && out.trim() == "7",
        "the clone has the source's row: {out}"
    );
    let (wrote, out) =
        common::mariadb_keys(&copy, &copy["password"], "INSERT INTO beans VALUES (8)");
    assert!(wrote, "{out}");
    let (_, out) = common::mariadb_keys(&source, &source["password"], "SELECT COUNT(*) FROM beans");
    assert_eq!(out.trim(), "1", "the source does not see the clone's write");

    // expireAfter: the clone and its member go, the source stays.
    wait_object_gone(&clusters, "preview").await;
    assert!(
        instances.get_opt("preview-1").await.unwrap().is_none(),
        "the member went first"
    );
    let gone = rds
        .describe_db_clusters()
        .db_cluster_identifier(&clone_id)
        .send()
        .await;
    assert!(gone.is_err(), "RDS has no clone any more");
    let reasons = common::event_reasons(&client, &ns, "preview").await;
    assert!(reasons.contains(&"Expired".to_owned()), "{reasons:?}");
    assert!(
        clusters.get_opt("coffee").await.unwrap().is_some(),
        "the source stays"
    );
    common::delete_and_wait(&instances, "one").await;
    (clusters.delete("coffee", &Default::default()).await).unwrap();
    wait_object_gone(&clusters, "coffee").await;
}
