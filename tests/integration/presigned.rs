//! The PreSignedUrl of a copy of an encrypted snapshot from another AWS GovCloud (US) Region: the
//! emulator refuses such a copy without one, and checks the one the operator makes (the call in
//! the source region, signed there: moto_ext/presigned.py).

use kube::api::{Api, DeleteParams, PostParams};
use rds_operator::dbsnapshot::DBSnapshot;
use serde_json::json;

use crate::common::{self, Operator, client_with_crd, namespace, unique};
use crate::snapshots::{snapshot, synced_reason};

/// An RDS client of the test bed in `region`.
async fn rds_in(region: &str) -> aws_sdk_rds::Client {
    let config = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .region(aws_config::Region::new(region.to_owned()))
        .load()
        .await;
    aws_sdk_rds::Client::new(&config)
}

#[tokio::test]
async fn an_encrypted_snapshot_is_copied_from_another_govcloud_region_with_a_presigned_url() {
    let client = client_with_crd().await;
    let ns = namespace(&client, "govcopy").await;
    let grant = format!("--grant-restore={ns}");
    let _operator = Operator::start_with(&ns, &[&grant]);
    let (east, west) = (rds_in("us-gov-east-1").await, rds_in("us-gov-west-1").await);
    // An encrypted instance and its snapshot in us-gov-east-1, granted to the namespace by the
    // operator's --grant-restore.
    let (id, original, copy) = (unique("gov"), unique("gov-orig"), unique("gov-copy"));
    (east.create_db_instance())
        .db_instance_identifier(&id)
        .engine("mysql")
        .db_instance_class("db.t3.micro")
        .master_username("admin")
        .master_user_password("Gov-Passw0rd-2026")
        .allocated_storage(20)
        .storage_encrypted(true)
        .send()
        .await
        .expect("the encrypted source instance");
    let arn = common::wait_for("the source snapshot", common::TIMEOUT, || async {
        let _ = (east.create_db_snapshot())
            .db_instance_identifier(&id)
            .db_snapshot_identifier(&original)
            .send()
            .await;
        let found = (east.describe_db_snapshots())
            .db_snapshot_identifier(&original)
            .send()
            .await
            .ok()?;
        let s = found.db_snapshots().first()?;
        (s.status() == Some("available") && s.encrypted() == Some(true))
            .then(|| s.db_snapshot_arn().unwrap_or_default().to_owned())
    })
    .await;
    // Without a PreSignedUrl the emulator refuses the copy, as RDS does in GovCloud.
    let refused = (west.copy_db_snapshot())
        .source_db_snapshot_identifier(&arn)
        .target_db_snapshot_identifier(unique("gov-bare"))
        .kms_key_id("alias/aws/rds")
        .send()
        .await;
    let code = refused
        .err()
        .and_then(|e| aws_sdk_rds::error::ProvideErrorMetadata::code(&e).map(str::to_owned));
    assert_eq!(code.as_deref(), Some("InvalidParameterCombination"));

    // The DBSnapshot in us-gov-west-1 copies it: one CopyDBSnapshot, which the emulator takes.
    let snapshots: Api<DBSnapshot> = Api::namespaced(client.clone(), &ns);
    let spec = json!({
        "dbSnapshotIdentifier": copy,
        "region": "us-gov-west-1",
        "copyFrom": {"dbSnapshotIdentifier": arn},
        "kmsKeyID": "alias/aws/rds",
    });
    (snapshots.create(&PostParams::default(), &snapshot("west", spec)))
        .await
        .expect("create the copy");
    let done = common::wait_object(&snapshots, "west", "the copy available", |s| {
        let state = s.status.as_ref().and_then(|s| s.report.state.as_deref());
        synced_reason(s) == "Synced" && state == Some("available")
    })
    .await;
    let status = done.status.expect("a status");
    assert_eq!(status.report.state.as_deref(), Some("available"));
    assert!(
        (status.report.arn.as_deref()).is_some_and(|a| a.contains(":us-gov-west-1:")),
        "{:?}",
        status.report.arn
    );
    assert_eq!(common::calls(&copy, "CopyDBSnapshot"), 1);
    (snapshots.delete("west", &DeleteParams::default()))
        .await
        .expect("delete the copy");
    common::wait_object_gone(&snapshots, "west").await;
    let _ = (east.delete_db_snapshot())
        .db_snapshot_identifier(&original)
        .send()
        .await;
    let _ = (east.delete_db_instance())
        .db_instance_identifier(&id)
        .skip_final_snapshot(true)
        .send()
        .await;
}
