//! A DBSnapshot taking over a manual snapshot made outside the operator: only when a platform admin
//! granted it, kept when the object goes, and taken back by a DBSnapshot of the same name.

use std::collections::BTreeMap;

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::crd::{ADOPTABLE_BY_TAG, ADOPTED_TAG, OWNER_TAG, RETAINED_TAG};
use rds_operator::dbsnapshot::DBSnapshot;
use serde_json::json;

use crate::common::{self, Operator, dbinstance, is_ready, setup, unique, wait_dbi};
use crate::snapshots::{snapshot, synced_reason};

/// The snapshot's ARN and tags in RDS; None when RDS has no such snapshot.
async fn in_rds(
    rds: &aws_sdk_rds::Client,
    identifier: &str,
) -> Option<(String, BTreeMap<String, String>)> {
    let out = (rds.describe_db_snapshots())
        .db_snapshot_identifier(identifier)
        .send()
        .await
        .ok()?;
    let s = out.db_snapshots().first()?;
    let tags = (s.tag_list().iter())
        .map(|t| {
            let text = |v: Option<&str>| v.unwrap_or_default().to_owned();
            (text(t.key()), text(t.value()))
        })
        .collect();
    Some((s.db_snapshot_arn().unwrap_or_default().to_owned(), tags))
}

/// Takes the manual snapshot `snapshot` of `instance` by hand, outside the operator (no tags
/// given: RDS copies the instance's, with copyTagsToSnapshot), and waits until it is available:
/// its ARN.
async fn by_hand(rds: &aws_sdk_rds::Client, instance: &str, snapshot: &str) -> String {
    (rds.create_db_snapshot())
        .db_snapshot_identifier(snapshot)
        .db_instance_identifier(instance)
        .send()
        .await
        .expect("take a snapshot by hand");
    common::wait_for("the hand snapshot", common::TIMEOUT, || async {
        let out = (rds.describe_db_snapshots()).db_snapshot_identifier(snapshot);
        let out = out.send().await.ok()?;
        let s = out.db_snapshots().first()?;
        let arn = s.db_snapshot_arn().map(str::to_owned);
        arn.filter(|_| s.status() == Some("available"))
    })
    .await
}

async fn create(api: &Api<DBSnapshot>, name: &str, spec: serde_json::Value) {
    (api.create(&PostParams::default(), &snapshot(name, spec)))
        .await
        .expect("create the DBSnapshot");
}

async fn synced(api: &Api<DBSnapshot>, name: &str, reason: &str) -> DBSnapshot {
    common::wait_object(api, name, reason, |s| synced_reason(s) == reason).await
}

#[tokio::test]
async fn a_manual_snapshot_nobody_owns_is_adopted_only_once_granted_kept_when_the_object_goes_and_taken_back()
 {
    let (client, ns, _api, rds) = setup("snapadopt").await;
    let _operator = Operator::start(&ns);
    // An instance and its snapshot made outside the operator: no ownership tags on either.
    let id = unique("handdb");
    (rds.create_db_instance())
        .db_instance_identifier(&id)
        .engine("mysql")
        .db_instance_class("db.t3.micro")
        .allocated_storage(20)
        .send()
        .await
        .expect("create an instance by hand");
    common::wait_for("the hand instance", common::TIMEOUT, || async {
        let i = common::describe(&rds, &id).await?;
        (i.db_instance_status() == Some("available")).then_some(())
    })
    .await;
    let hand = unique("hand");
    let arn = by_hand(&rds, &id, &hand).await;

    // Adoption asked, nothing grants it: refused, the snapshot untouched.
    let snapshots: Api<DBSnapshot> = Api::namespaced(client.clone(), &ns);
    create(
        &snapshots,
        "hand",
        json!({"dbSnapshotIdentifier": hand, "adoptionPolicy": "Adopt"}),
    )
    .await;
    synced(&snapshots, "hand", "NotGranted").await;
    let (_, tags) = in_rds(&rds, &hand).await.expect("the snapshot");
    assert!(!tags.contains_key(OWNER_TAG), "untouched: {tags:?}");

    // A platform admin grants it to the namespace: adopted, the ownership tags its only change.
    (rds.add_tags_to_resource())
        .resource_name(&arn)
        .tags(
            aws_sdk_rds::types::Tag::builder()
                .key(ADOPTABLE_BY_TAG)
                .value(&ns)
                .build(),
        )
        .send()
        .await
        .expect("grant the adoption");
    let adopted = synced(&snapshots, "hand", "Synced").await;
    let (_, tags) = in_rds(&rds, &hand).await.expect("the snapshot");
    assert_eq!(tags.get(OWNER_TAG), adopted.metadata.uid.as_ref());
    assert!(tags.contains_key(ADOPTED_TAG), "{tags:?}");
    let status = adopted.status.clone().expect("a status");
    assert_eq!(status.report.state.as_deref(), Some("available"));
    assert_eq!(status.db_instance_identifier.as_deref(), Some(id.as_str()));

    // Deleted with no deletionPolicy: an adopted snapshot stays, tagged retained.
    (snapshots.delete("hand", &DeleteParams::default()))
        .await
        .expect("delete the DBSnapshot");
    common::wait_object_gone(&snapshots, "hand").await;
    let (_, tags) = in_rds(&rds, &hand).await.expect("the snapshot stays");
    assert!(tags.contains_key(RETAINED_TAG), "{tags:?}");
    assert_eq!(common::calls(&hand, "DeleteDBSnapshot"), 0);

    // The object applied again, with a source and no adoptionPolicy: taken back without asking,
    // and no second snapshot taken.
    let spec = json!({"dbSnapshotIdentifier": hand, "source": {"dbInstanceIdentifier": id}});
    create(&snapshots, "hand", spec).await;
    let back = synced(&snapshots, "hand", "Synced").await;
    let (_, tags) = in_rds(&rds, &hand).await.expect("the snapshot");
    assert_eq!(tags.get(OWNER_TAG), back.metadata.uid.as_ref());
    assert!(!tags.contains_key(RETAINED_TAG), "{tags:?}");
    assert_eq!(
        common::calls(&id, "CreateDBSnapshot"),
        1,
        "only the hand snapshot was ever taken"
    );

    // deletionPolicy Delete, said: the snapshot goes with the object.
    let patch = json!({"spec": {"deletionPolicy": "Delete"}});
    (snapshots.patch("hand", &PatchParams::default(), &Patch::Merge(&patch)))
        .await
        .expect("set deletionPolicy Delete");
    common::wait_object(&snapshots, "hand", "Delete seen", |s| {
        s.status
            .as_ref()
            .and_then(|s| s.reported.observed_generation)
            == s.metadata.generation
    })
    .await;
    (snapshots.delete("hand", &DeleteParams::default()))
        .await
        .expect("delete the DBSnapshot");
    common::wait_object_gone(&snapshots, "hand").await;
    common::wait_for("the snapshot deleted", common::TIMEOUT, || async {
        in_rds(&rds, &hand).await.is_none().then_some(())
    })
    .await;
    assert_eq!(common::calls(&hand, "DeleteDBSnapshot"), 1);
    (rds.delete_db_instance())
        .db_instance_identifier(&id)
        .skip_final_snapshot(true)
        .send()
        .await
        .expect("delete the hand instance");
}

#[tokio::test]
async fn a_hand_snapshot_of_the_namespaces_own_instance_is_adopted_when_asked_with_no_grant() {
    let (client, ns, api, rds) = setup("snapinherit").await;
    let _operator = Operator::start(&ns);
    let id = unique("snapinherit");
    let db = dbinstance("db", &id, json!({"deletionPolicy": "Delete"}));
    (api.create(&PostParams::default(), &db))
        .await
        .expect("create the DBInstance");
    let db = wait_dbi(&api, "db", "ready", common::TIMEOUT, is_ready).await;
    // Taken by hand: RDS copied the DBInstance's ownership tags to it.
    let hand = unique("hand");
    by_hand(&rds, &id, &hand).await;
    let (_, tags) = in_rds(&rds, &hand).await.expect("the snapshot");
    assert_eq!(tags.get(OWNER_TAG), db.metadata.uid.as_ref(), "copied");

    // Not asked: left alone. Asked: adopted, no grant needed (the namespace's own data).
    let snapshots: Api<DBSnapshot> = Api::namespaced(client.clone(), &ns);
    let spec = json!({"dbSnapshotIdentifier": hand, "source": {"name": "db"}});
    create(&snapshots, "hand", spec).await;
    synced(&snapshots, "hand", "NameInUse").await;
    let (_, tags) = in_rds(&rds, &hand).await.expect("the snapshot");
    assert_eq!(tags.get(OWNER_TAG), db.metadata.uid.as_ref(), "untouched");
    let patch = json!({"spec": {"adoptionPolicy": "Adopt"}});
    (snapshots.patch("hand", &PatchParams::default(), &Patch::Merge(&patch)))
        .await
        .expect("ask for the adoption");
    let adopted = synced(&snapshots, "hand", "Synced").await;
    let (_, tags) = in_rds(&rds, &hand).await.expect("the snapshot");
    assert_eq!(tags.get(OWNER_TAG), adopted.metadata.uid.as_ref());
    assert_eq!(common::calls(&id, "CreateDBSnapshot"), 1);
    common::delete_and_wait(&api, "db").await;
}
