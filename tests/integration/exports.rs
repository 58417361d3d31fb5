//! A DBSnapshot's export to S3 (spec.exportTo), on the emulator (moto_ext/export_tasks.py): the
//! operator is killed the moment StartExportTask reaches the emulator and its status write is
//! taken back, and the restarted operator finds the task and sends no second one; the export runs
//! to COMPLETE with its summary in the bucket. A bucket removed while an export runs fails it:
//! FAILED with RDS's cause in status, a Warning Event, and nothing sent again.

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbsnapshot::DBSnapshot;
use rds_operator::snapshot::export::ExportStatus;
use serde_json::json;

use crate::common::{self, *};
use crate::snapshots::{ready_db, snapshot};

const KEY: &str = "arn:aws:kms:us-east-1:123456789012:key/exports";

fn export_of(s: &DBSnapshot) -> Option<ExportStatus> {
    s.status.as_ref().and_then(|s| s.report.export.clone())
}

fn state(s: &DBSnapshot) -> Option<String> {
    export_of(s).and_then(|e| e.status)
}

/// The DBSnapshot `name` of the DBInstance db, exported to `bucket`.
fn exported(name: &str, identifier: &str, bucket: &str, role: &str) -> DBSnapshot {
    let to = json!({"bucket": bucket, "prefix": "coffee", "kmsKeyID": KEY, "iamRole": role});
    let spec = json!({"dbSnapshotIdentifier": identifier, "source": {"name": "db"},
                      "exportTo": to});
    snapshot(name, spec)
}

async fn sent(identifier: &str) {
    let id = identifier.to_owned();
    common::wait_for("StartExportTask to reach the emulator", TIMEOUT, || {
        let id = id.clone();
        async move { (common::calls(&id, "StartExportTask") >= 1).then_some(()) }
    })
    .await;
}

#[tokio::test]
async fn an_export_task_is_sent_once_across_an_operator_kill_and_its_failure_is_reported() {
    let (client, ns, api, _rds) = setup("export").await;
    let id = unique("export");
    let mut operator = Operator::start(&ns);
    ready_db(&api, &id).await;
    let (bucket, brief) = (unique("exports"), unique("brief"));
    common::create_bucket(&bucket);
    common::create_bucket(&brief);
    // A role of the namespace's own (managed::roles: /rds-operator/<namespace>/).
    let path = format!("/rds-operator/{ns}/");
    let role = common::create_role_at("123456789012", &path, &unique("export-role"), None);
    let snapshots: Api<DBSnapshot> = Api::namespaced(client.clone(), &ns);
    let name = unique("exported");
    let pp = PostParams::default();
    (snapshots
        .create(&pp, &exported("kept", &name, &bucket, &role))
        .await)
        .expect("create");
    sent(&name).await;
    operator.kill();
    drop(operator);
    // The kill may land after the status write that recorded the task: it is taken back, as if
    // it never happened.
    let unwritten = json!({"status": {"export": null}});
    let params = PatchParams::default();
    (snapshots
        .patch_status("kept", &params, &Patch::Merge(&unwritten))
        .await)
        .expect("take the status write back");
    assert!(export_of(&snapshots.get("kept").await.unwrap()).is_none());

    let restarted = Operator::start(&ns);
    let done = wait_object(&snapshots, "kept", "the export COMPLETE", |s| {
        state(s).as_deref() == Some("COMPLETE")
    })
    .await;
    assert_eq!(
        common::calls(&name, "StartExportTask"),
        1,
        "a second export was sent"
    );
    let export = export_of(&done).unwrap();
    assert_eq!(export.percent_progress, Some(100));
    let task = export.task_identifier;
    let key = format!("coffee/{task}/export_info_{task}.json");
    let summary = common::s3_object(&bucket, &key).expect("the export's summary in the bucket");
    assert!(summary.contains(&format!(":snapshot:{name}")), "{summary}");

    // A bucket gone before the export completes: FAILED, RDS's cause, reported once, not resent.
    let lost = unique("lost");
    (snapshots
        .create(&pp, &exported("lost", &lost, &brief, &role))
        .await)
        .expect("create");
    sent(&lost).await;
    common::delete_bucket(&brief);
    let failed = wait_object(&snapshots, "lost", "the export FAILED", |s| {
        state(s).as_deref() == Some("FAILED")
    })
    .await;
    let cause = export_of(&failed)
        .and_then(|e| e.failure_cause)
        .unwrap_or_default();
    assert!(cause.contains(&brief), "RDS's cause: {cause}");
    let synced = common::object_condition(&failed, "Synced").expect("Synced");
    assert_eq!(synced.1, "ExportFailed", "{synced:?}");
    assert!(common::object_condition(&failed, "Ready").is_some_and(|r| r.0 == "True"));
    let reasons = common::event_reasons(&client, &ns, "lost").await;
    assert!(reasons.contains(&"ExportFailed".to_owned()), "{reasons:?}");
    let once = || async { common::calls(&lost, "StartExportTask") == 1 };
    common::holds_over_passes(&restarted, ("DBSnapshot", "lost"), "not sent again", once).await;

    for name in ["kept", "lost"] {
        (snapshots.delete(name, &Default::default()).await).expect("delete");
        common::wait_object_gone(&snapshots, name).await;
    }
    common::delete_bucket(&bucket);
    common::delete_and_wait(&api, "db").await;
}
