//! The DBClusterSnapshot kind: a snapshot of an Aurora cluster (a real MariaDB behind the
//! emulator) restored by reference with its rows; a copy, a share only to a granted account, a
//! retained snapshot; another namespace's cluster refused with no call; a schedule that keeps
//! `keep` of its own, shares each, and deletes with deletionPolicy Delete only its own.

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::dbcluster::DBCluster;
use rds_operator::dbclustersnapshot::DBClusterSnapshot;
use serde_json::json;

use crate::clusters::{cluster, ready as cluster_ready};
use crate::common::{
    self, Operator, TIMEOUT, mariadb_keys, object_condition, secret_data, setup, unique, wait_for,
    wait_object, wait_object_gone,
};

/// The DBClusterSnapshot `name` of this spec.
fn snapshot(name: &str, spec: serde_json::Value) -> DBClusterSnapshot {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBClusterSnapshot",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("valid DBClusterSnapshot")
}

fn ready(s: &DBClusterSnapshot) -> bool {
    object_condition(s, "Ready").is_some_and(|c| c.0 == "True")
}

fn synced_reason(s: &DBClusterSnapshot) -> String {
    object_condition(s, "Synced").map_or_else(String::new, |c| c.1)
}

/// The manual cluster snapshots RDS has of `cluster`: (identifier, state, tagged as the object
/// `uid`'s).
async fn cluster_snapshots(
    rds: &aws_sdk_rds::Client,
    cluster: &str,
    uid: &str,
) -> Vec<(String, String, bool)> {
    let out = (rds.describe_db_cluster_snapshots())
        .db_cluster_identifier(cluster)
        .snapshot_type("manual")
        .send()
        .await
        .expect("DescribeDBClusterSnapshots");
    (out.db_cluster_snapshots().iter())
        .map(|s| {
            let ours = (s.tag_list().iter())
                .any(|t| t.key() == Some(rds_operator::crd::OWNER_TAG) && t.value() == Some(uid));
            (
                s.db_cluster_snapshot_identifier()
                    .unwrap_or_default()
                    .to_owned(),
                s.status().unwrap_or_default().to_owned(),
                ours,
            )
        })
        .collect()
}

/// The accounts RDS lets restore the cluster snapshot (its restore attribute).
async fn restorers(rds: &aws_sdk_rds::Client, identifier: &str) -> Vec<String> {
    (restorers_now(rds, identifier).await).expect("DescribeDBClusterSnapshotAttributes")
}

/// The same, or None when RDS has no such snapshot now (a schedule deleted it since it was
/// listed).
async fn restorers_now(rds: &aws_sdk_rds::Client, identifier: &str) -> Option<Vec<String>> {
    let attributes = (rds.describe_db_cluster_snapshot_attributes())
        .db_cluster_snapshot_identifier(identifier)
        .send()
        .await;
    let attributes = match attributes {
        Ok(found) => found,
        Err(e)
            if aws_sdk_rds::error::ProvideErrorMetadata::code(&e)
                == Some("DBClusterSnapshotNotFoundFault") =>
        {
            return None;
        }
        Err(e) => panic!("DescribeDBClusterSnapshotAttributes: {e:?}"),
    };
    let found = (attributes.db_cluster_snapshot_attributes_result().iter())
        .flat_map(|r| r.db_cluster_snapshot_attributes())
        .filter(|a| a.attribute_name() == Some("restore"))
        .flat_map(|a| a.attribute_values().to_vec())
        .collect();
    Some(found)
}

/// The cluster snapshot of this identifier: (state, its tags); None when RDS has none.
async fn in_rds(
    rds: &aws_sdk_rds::Client,
    identifier: &str,
) -> Option<(String, Vec<(String, String)>)> {
    let out = (rds.describe_db_cluster_snapshots())
        .db_cluster_snapshot_identifier(identifier)
        .send()
        .await
        .ok()?;
    let s = out.db_cluster_snapshots().first()?;
    let tags = (s.tag_list().iter())
        .map(|t| {
            let text = |v: Option<&str>| v.unwrap_or_default().to_owned();
            (text(t.key()), text(t.value()))
        })
        .collect();
    Some((s.status().unwrap_or_default().to_owned(), tags))
}

/// Creates the DBCluster coffee (identifier `id`, `extra` merged into its spec) and waits until
/// it is Ready.
async fn ready_cluster(clusters: &Api<DBCluster>, id: &str, extra: serde_json::Value) {
    let mut extra = extra;
    extra["deletionPolicy"] = json!("Delete");
    (clusters.create(&PostParams::default(), &cluster(id, extra)))
        .await
        .expect("create the DBCluster");
    wait_object(clusters, "coffee", "the cluster Ready", cluster_ready).await;
}

async fn delete_clusters(clusters: &Api<DBCluster>, names: &[&str]) {
    for name in names {
        let _ = clusters.delete(name, &DeleteParams::default()).await;
    }
    for name in names {
        wait_object_gone(clusters, name).await;
    }
}

#[tokio::test]
async fn a_dbclustersnapshot_of_an_aurora_cluster_restores_by_reference_with_the_row_written_before_it()
 {
    let (client, ns, _instances, rds) = setup("aurcsnap").await;
    let _operator = Operator::start(&ns);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let (id, copy) = (unique("aurcs"), unique("aurcs-copy"));
    let real = json!({"tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    ready_cluster(&clusters, &id, real).await;
    let s = secret_data(&client, &ns, "coffee-db")
        .await
        .expect("Secret");
    let sql =
        "CREATE TABLE suppliers (name VARCHAR(40)); INSERT INTO suppliers VALUES ('Beans & Co');";
    let (ok, out) = mariadb_keys(&s, &s["password"], sql);
    assert!(ok, "{out}");

    let snapshots: Api<DBClusterSnapshot> = Api::namespaced(client.clone(), &ns);
    let name = unique("before-change");
    let spec = json!({"dbClusterSnapshotIdentifier": name, "source": {"name": "coffee"}});
    (snapshots.create(&PostParams::default(), &snapshot("before-change", spec)))
        .await
        .expect("create the DBClusterSnapshot");
    // The status follows RDS through creating to available.
    let states = std::sync::Mutex::new(Vec::new());
    let taken = wait_object(&snapshots, "before-change", "available", |s| {
        let state = s.status.as_ref().and_then(|s| s.report.state.clone());
        states.lock().expect("states").extend(state);
        ready(s)
    })
    .await;
    let status = taken.status.expect("a status");
    assert_eq!(status.report.state.as_deref(), Some("available"));
    assert_eq!(status.report.percent_progress, Some(100));
    assert_eq!(status.db_cluster_identifier.as_deref(), Some(id.as_str()));
    assert_eq!(status.report.engine.as_deref(), Some("aurora-mysql"));
    let arn = status.report.arn.expect("an ARN");
    assert!(arn.ends_with(&format!(":cluster-snapshot:{name}")), "{arn}");
    let states = states.into_inner().expect("states");
    assert!(states.iter().any(|s| s == "creating"), "{states:?}");
    assert_eq!(common::calls(&id, "CreateDBClusterSnapshot"), 1);

    // A row written after the snapshot is not in it.
    let (ok, out) = mariadb_keys(
        &s,
        &s["password"],
        "INSERT INTO suppliers VALUES ('Later Ltd')",
    );
    assert!(ok, "{out}");
    common::secret(
        &client,
        &ns,
        "copy-password",
        "password",
        "An0ther-Passw0rd",
    )
    .await;
    let mut restored = cluster(
        &copy,
        json!({
            "masterUserPassword": {"name": "copy-password", "key": "password"},
            "restoreFrom": {"dbClusterSnapshotRef": {"name": "before-change"}},
            "connectionSecret": {"name": "copy-db"},
            "deletionPolicy": "Delete",
        }),
    );
    restored.metadata.name = Some("copy".into());
    (clusters.create(&PostParams::default(), &restored).await).expect("create the restore");
    wait_object(&clusters, "copy", "the restore Ready", |c| {
        cluster_ready(c) && c.status.as_ref().unwrap().restored_from.is_some()
    })
    .await;
    assert_eq!(common::calls(&copy, "RestoreDBClusterFromSnapshot"), 1);
    let out = wait_for("the restore's rows", TIMEOUT, || async {
        let s = secret_data(&client, &ns, "copy-db").await?;
        let (ok, out) = mariadb_keys(&s, "An0ther-Passw0rd", "SELECT name FROM suppliers");
        ok.then_some(out)
    })
    .await;
    assert_eq!(
        out.trim(),
        "Beans & Co",
        "the row written before the snapshot, and not the one after"
    );

    // deletionPolicy Delete (the default): the snapshot goes with the object.
    (snapshots.delete("before-change", &DeleteParams::default()))
        .await
        .expect("delete the DBClusterSnapshot");
    wait_object_gone(&snapshots, "before-change").await;
    assert_eq!(in_rds(&rds, &name).await, None);
    delete_clusters(&clusters, &["copy", "coffee"]).await;
}

#[tokio::test]
async fn a_cluster_snapshot_copy_is_shared_only_with_a_granted_account_kept_when_retained_and_another_namespaces_cluster_is_refused()
 {
    let (client, ns, _instances, rds) = setup("aurcscopy").await;
    let other = common::namespace(&client, "aurcsother").await;
    let args = ["--namespace", &other, "--grant-share-to=444455556666"];
    let _operator = Operator::start_with(&ns, &args);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let id = unique("aurcc");
    ready_cluster(&clusters, &id, json!({})).await;
    let snapshots: Api<DBClusterSnapshot> = Api::namespaced(client.clone(), &ns);
    let (base, copy) = (unique("base"), unique("copy"));
    let spec = json!({"dbClusterSnapshotIdentifier": base, "source": {"dbClusterIdentifier": id}});
    (snapshots.create(&PostParams::default(), &snapshot("base", spec)))
        .await
        .expect("create the DBClusterSnapshot");
    // A copy of it, shared with an account nobody granted: copied, nothing shared.
    let spec = json!({
        "dbClusterSnapshotIdentifier": copy,
        "copyFrom": {"name": "base"},
        "sharedWith": ["111122223333"],
        "deletionPolicy": "Retain",
    });
    (snapshots.create(&PostParams::default(), &snapshot("copy", spec)))
        .await
        .expect("create the copy");
    wait_object(&snapshots, "copy", "ShareNotGranted", |s| {
        synced_reason(s) == "ShareNotGranted"
    })
    .await;
    assert_eq!(common::calls(&copy, "CopyDBClusterSnapshot"), 1);
    assert_eq!(common::calls(&copy, "ModifyDBClusterSnapshotAttribute"), 0);
    // Shared with the account the operator's --grant-share-to lists: RDS has it.
    let patch = json!({"spec": {"sharedWith": ["444455556666"]}});
    (snapshots.patch("copy", &PatchParams::default(), &Patch::Merge(&patch)))
        .await
        .expect("share with a granted account");
    let shared = wait_object(&snapshots, "copy", "shared", |s| {
        ready(s) && synced_reason(s) == "Synced"
    })
    .await;
    assert_eq!(
        shared.status.expect("a status").report.shared_with,
        vec!["444455556666"]
    );
    assert_eq!(restorers(&rds, &copy).await, vec!["444455556666"]);

    // Another namespace names this namespace's cluster: refused, no CreateDBClusterSnapshot.
    let theirs: Api<DBClusterSnapshot> = Api::namespaced(client.clone(), &other);
    let stolen = unique("stolen");
    let spec =
        json!({"dbClusterSnapshotIdentifier": stolen, "source": {"dbClusterIdentifier": id}});
    (theirs.create(&PostParams::default(), &snapshot("stolen", spec)))
        .await
        .expect("create the other namespace's DBClusterSnapshot");
    wait_object(&theirs, "stolen", "SourceNotOwned", |s| {
        synced_reason(s) == "SourceNotOwned"
    })
    .await;
    assert_eq!(in_rds(&rds, &stolen).await, None);
    assert_eq!(
        common::calls(&id, "CreateDBClusterSnapshot"),
        1,
        "only this namespace's own snapshot was taken"
    );

    // Retain: the copy stays in RDS, tagged retained; Delete (base's default): gone.
    for name in ["copy", "base"] {
        (snapshots.delete(name, &DeleteParams::default()))
            .await
            .expect("delete");
        wait_object_gone(&snapshots, name).await;
    }
    let (state, tags) = in_rds(&rds, &copy).await.expect("the retained copy");
    assert_eq!(state, "available");
    assert!(
        tags.iter().any(|t| t.0 == rds_operator::crd::RETAINED_TAG),
        "{tags:?}"
    );
    assert_eq!(in_rds(&rds, &base).await, None);
    (rds.delete_db_cluster_snapshot())
        .db_cluster_snapshot_identifier(&copy)
        .send()
        .await
        .expect("clean up the retained copy");
    delete_clusters(&clusters, &["coffee"]).await;
}

#[tokio::test]
async fn a_cluster_snapshot_schedule_keeps_keep_of_its_own_shares_them_and_deletes_only_its_own() {
    let (client, ns, _instances, rds) = setup("aurcssched").await;
    let _operator = Operator::start_with(&ns, &["--grant-share-to=444455556666"]);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let id = unique("aurcsched");
    ready_cluster(&clusters, &id, json!({})).await;
    // A snapshot made by hand, named like the schedule's.
    let base = unique("every6s");
    let by_hand = format!("{base}-20000101000000");
    (rds.create_db_cluster_snapshot())
        .db_cluster_identifier(&id)
        .db_cluster_snapshot_identifier(&by_hand)
        .send()
        .await
        .expect("a cluster snapshot by hand");
    let snapshots: Api<DBClusterSnapshot> = Api::namespaced(client.clone(), &ns);
    // Every 6 s (the emulator takes 3 s per snapshot), keeping 2, each shared with a granted
    // account, deleted with the object.
    let spec = json!({
        "dbClusterSnapshotIdentifier": base,
        "source": {"name": "coffee"},
        "schedule": {"cron": "*/6 * * * * *", "keep": 2},
        "sharedWith": ["444455556666"],
        "deletionPolicy": "Delete",
    });
    (snapshots.create(&PostParams::default(), &snapshot("every6s", spec)))
        .await
        .expect("create the scheduled DBClusterSnapshot");
    let uid = (snapshots
        .get("every6s")
        .await
        .expect("the object")
        .metadata
        .uid)
        .expect("a uid");
    // Three ticks taken (four creates with the one by hand), none being taken, exactly two of
    // its own kept, both shared, and the one by hand untouched.
    let settled = wait_for("three ticks taken, two kept and shared", TIMEOUT, || {
        let (rds, id, uid) = (rds.clone(), id.clone(), uid.clone());
        async move {
            let all = cluster_snapshots(&rds, &id, &uid).await;
            let ours: Vec<_> = all.iter().filter(|s| s.2 && s.1 == "available").collect();
            let creating = all.iter().any(|s| s.1 != "available");
            let ticks = common::calls(&id, "CreateDBClusterSnapshot") >= 4;
            let mut shared = true;
            // A snapshot the schedule deleted since the listing is not settled yet: look again.
            for s in &ours {
                shared &= restorers_now(&rds, &s.0).await.as_deref()
                    == Some(&["444455556666".to_owned()][..]);
            }
            (ticks && !creating && ours.len() == 2 && shared).then_some(all)
        }
    })
    .await;
    assert!(
        restorers(&rds, &by_hand).await.is_empty(),
        "the one by hand is not shared"
    );
    assert_eq!(settled.iter().filter(|s| s.2).count(), 2, "{settled:?}");
    assert!(
        settled.iter().any(|s| s.0 == by_hand && !s.2),
        "{settled:?}"
    );
    assert_eq!(common::calls(&by_hand, "DeleteDBClusterSnapshot"), 0);
    // deletionPolicy Delete: each one it made goes, the one by hand stays.
    (snapshots.delete("every6s", &DeleteParams::default()))
        .await
        .expect("delete the scheduled DBClusterSnapshot");
    wait_object_gone(&snapshots, "every6s").await;
    let left = cluster_snapshots(&rds, &id, &uid).await;
    assert!(left.iter().all(|s| !s.2), "none of its own left: {left:?}");
    assert!(left.iter().any(|s| s.0 == by_hand), "{left:?}");
    (rds.delete_db_cluster_snapshot())
        .db_cluster_snapshot_identifier(&by_hand)
        .send()
        .await
        .expect("clean up the one by hand");
    delete_clusters(&clusters, &["coffee"]).await;
}
