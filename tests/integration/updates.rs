//! Spec updates and drift: the spec wins, visibly and without loops.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use crate::common::dbinstance;
use crate::common::setup;
use crate::common::{
    self, Operator, calls, condition, is_ready, operator_calls, patch_spec, wait_dbi, wait_for,
};

const TIMEOUT: Duration = Duration::from_secs(90);

fn synced(db: &DBInstance) -> bool {
    condition(db, "Synced").is_some_and(|c| c.0 == "True")
        && db
            .status
            .as_ref()
            .and_then(|s| s.reported.observed_generation)
            == db.metadata.generation
        && is_ready(db)
}

async fn network_security_group() -> String {
    common::coffee_network(&["--get", "security_group_id"])
}

#[tokio::test]
async fn every_updatable_field_reaches_rds_in_one_modification() {
    let (_client, ns, api, rds) = setup("update").await;
    let id = common::unique("update");
    let group = common::unique("params");
    rds.create_db_parameter_group()
        .db_parameter_group_name(&group)
        .db_parameter_group_family("mysql8.0")
        .description("test")
        .send()
        .await
        .expect("parameter group");
    let sg = network_security_group().await;
    let _operator = Operator::start(&ns);
    api.create(
        &PostParams::default(),
        &dbinstance("update", &id, json!({})),
    )
    .await
    .expect("create");
    wait_dbi(&api, "update", "in sync", TIMEOUT, synced).await;
    assert_eq!(
        calls(&id, "ModifyDBInstance"),
        0,
        "a new instance in sync needs no modification"
    );

    patch_spec(
        &api,
        "update",
        json!({
            "dbInstanceClass": "db.t3.small",
            "allocatedStorage": 30,
            "maxAllocatedStorage": 100,
            "storageType": "gp3",
            "iops": 3000,
            "engineVersion": "8.0.43",
            "backupRetentionPeriod": 7,
            "preferredBackupWindow": "04:00-04:30",
            "preferredMaintenanceWindow": "mon:05:00-mon:05:30",
            "multiAZ": true,
            "publiclyAccessible": true,
            "dbParameterGroupName": group,
            "vpcSecurityGroupIDs": [sg],
            "port": 3307,
            "autoMinorVersionUpgrade": false,
            "copyTagsToSnapshot": true,
            "tags": [{"key": "team", "value": "baristas"}],
        }),
    )
    .await;
    let db = wait_dbi(&api, "update", "the update in sync", TIMEOUT, synced).await;
    let i = common::describe(&rds, &id).await.expect("instance");
    assert_eq!(i.db_instance_class(), Some("db.t3.small"));
    assert_eq!(i.allocated_storage(), Some(30));
    assert_eq!(i.max_allocated_storage(), Some(100));
    assert_eq!(i.storage_type(), Some("gp3"));
    assert_eq!(i.iops(), Some(3000));
    assert_eq!(i.engine_version(), Some("8.0.43"));
    assert_eq!(i.backup_retention_period(), Some(7));
    assert_eq!(i.preferred_backup_window(), Some("04:00-04:30"));
    assert_eq!(
        i.preferred_maintenance_window(),
        Some("mon:05:00-mon:05:30")
    );
    assert_eq!(i.multi_az(), Some(true));
    assert_eq!(i.publicly_accessible(), Some(true));
    assert_eq!(
        i.db_parameter_groups()
            .first()
            .and_then(|g| g.db_parameter_group_name()),
        Some(group.as_str())
    );
    let sgs: Vec<_> = i
        .vpc_security_groups()
        .iter()
        .filter_map(|g| g.vpc_security_group_id())
        .collect();
    assert_eq!(sgs, vec![sg.as_str()]);
    assert_eq!(i.endpoint().and_then(|e| e.port()), Some(3307));
    assert_eq!(
        db.status
            .as_ref()
            .and_then(|s| s.common.endpoint.as_ref())
            .map(|e| e.port),
        Some(3307)
    );
    assert_eq!(i.auto_minor_version_upgrade(), Some(false));
    assert_eq!(i.copy_tags_to_snapshot(), Some(true));
    let tags = common::tags_of(&i);
    assert_eq!(tags.get("team").map(String::as_str), Some("baristas"));
    assert!(
        !tags.contains_key("app"),
        "the removed spec tag is gone from RDS: {tags:?}"
    );
    assert!(tags.contains_key(rds_operator::dbinstance::OWNER_TAG));
    assert_eq!(
        calls(&id, "ModifyDBInstance"),
        1,
        "one spec change, one ModifyDBInstance"
    );
    assert_eq!(calls(&id, "AddTagsToResource"), 1);
    assert_eq!(calls(&id, "RemoveTagsFromResource"), 1);

    // Shrinking storage is refused with a clear condition and nothing is sent. (With
    // maxAllocatedStorage set, a smaller allocatedStorage is what autoscaling grew past: no drift.)
    patch_spec(
        &api,
        "update",
        json!({"allocatedStorage": 25, "maxAllocatedStorage": null}),
    )
    .await;
    let db = wait_dbi(
        &api,
        "update",
        "Synced=False UnsupportedChange",
        TIMEOUT,
        |db| condition(db, "Synced").is_some_and(|c| c.1 == "UnsupportedChange"),
    )
    .await;
    assert!(
        condition(&db, "Synced")
            .unwrap()
            .2
            .contains("cannot shrink from 30 to 25")
    );
    assert_eq!(calls(&id, "ModifyDBInstance"), 1);
    // A major upgrade needs allowMajorVersionUpgrade.
    patch_spec(
        &api,
        "update",
        json!({"allocatedStorage": 30, "engineVersion": "8.4.3"}),
    )
    .await;
    let db = wait_dbi(&api, "update", "major upgrade refused", TIMEOUT, |db| {
        condition(db, "Synced").is_some_and(|c| c.2.contains("allowMajorVersionUpgrade"))
    })
    .await;
    assert!(db.status.is_some());
    patch_spec(&api, "update", json!({"allowMajorVersionUpgrade": true})).await;
    wait_dbi(&api, "update", "major upgrade in sync", TIMEOUT, synced).await;
    let i = common::describe(&rds, &id).await.expect("instance");
    assert_eq!(i.engine_version(), Some("8.4.3"));
    common::delete_and_wait(&api, "update").await;
}

#[tokio::test]
async fn a_change_without_apply_immediately_waits_in_pending_and_is_not_resent() {
    let (_client, ns, api, rds) = setup("pending").await;
    let id = common::unique("pending");
    let operator = Operator::start_with(&ns, &["--drift-interval", "1s"]);
    api.create(
        &PostParams::default(),
        &dbinstance("pending", &id, json!({})),
    )
    .await
    .expect("create");
    wait_dbi(&api, "pending", "in sync", TIMEOUT, synced).await;
    patch_spec(
        &api,
        "pending",
        json!({"dbInstanceClass": "db.t3.small", "applyImmediately": false}),
    )
    .await;
    let db = wait_dbi(&api, "pending", "the class pending", TIMEOUT, |db| {
        db.status.as_ref().is_some_and(|s| {
            s.common
                .pending_modified_values
                .get("dbInstanceClass")
                .map(String::as_str)
                == Some("db.t3.small")
        }) && condition(db, "Synced").is_some_and(|c| c.1 == "Pending")
    })
    .await;
    assert!(is_ready(&db));
    let i = common::describe(&rds, &id).await.expect("instance");
    assert_eq!(
        i.db_instance_class(),
        Some("db.t3.micro"),
        "not applied before the window"
    );
    let once = || async { calls(&id, "ModifyDBInstance") == 1 };
    let what = "a pending change is not sent again every poll";
    common::holds_over_polls(&operator, what, once).await;

    // The maintenance window comes.
    assert!(common::moto_ext_post(&format!(
        "/_rds_ext/apply-pending?identifier={id}"
    )));
    let db = wait_dbi(&api, "pending", "in sync after the window", TIMEOUT, |db| {
        synced(db)
            && db
                .status
                .as_ref()
                .is_some_and(|s| s.common.pending_modified_values.is_empty())
    })
    .await;
    assert!(db.status.is_some());
    assert_eq!(
        common::describe(&rds, &id)
            .await
            .unwrap()
            .db_instance_class(),
        Some("db.t3.small")
    );
    assert_eq!(calls(&id, "ModifyDBInstance"), 1);
    common::delete_and_wait(&api, "pending").await;
}

#[tokio::test]
async fn changes_made_behind_the_operators_back_are_put_back() {
    let (client, ns, api, rds) = setup("drift").await;
    let id = common::unique("drift");
    let _operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    api.create(
        &PostParams::default(),
        &dbinstance(
            "drift",
            &id,
            json!({"maxAllocatedStorage": 100, "backupRetentionPeriod": 1, "multiAZ": false, "deletionProtection": false}),
        ),
    )
    .await
    .expect("create");
    wait_dbi(&api, "drift", "in sync", TIMEOUT, synced).await;

    // A console user changes class, storage type and autoscaling limit, and the tags: removes the
    // spec's "app" and adds one of their own. (Changes that strengthen protection are kept, not
    // corrected: see safety.rs. This test used to flip backup retention, Multi-AZ and deletion
    // protection too, and to expect the foreign tag removed.)
    rds.modify_db_instance()
        .db_instance_identifier(&id)
        .db_instance_class("db.t3.large")
        .storage_type("gp3")
        .max_allocated_storage(200)
        .apply_immediately(true)
        .send()
        .await
        .expect("out-of-band modify");
    let arn = common::describe(&rds, &id)
        .await
        .unwrap()
        .db_instance_arn()
        .unwrap()
        .to_owned();
    rds.add_tags_to_resource()
        .resource_name(&arn)
        .tags(
            aws_sdk_rds::types::Tag::builder()
                .key("rogue")
                .value("1")
                .build(),
        )
        .send()
        .await
        .expect("out-of-band tag");
    rds.remove_tags_from_resource()
        .resource_name(&arn)
        .tag_keys("app")
        .send()
        .await
        .expect("untag");

    let db = wait_dbi(&api, "drift", "a drift correction record", TIMEOUT, |db| {
        db.status
            .as_ref()
            .and_then(|s| s.last_drift.as_ref())
            .is_some_and(|d| d.action == "Corrected")
    })
    .await;
    let record = db.status.unwrap().last_drift.unwrap();
    let fields: Vec<&str> = record.fields.iter().map(|f| f.field.as_str()).collect();
    for field in [
        "dbInstanceClass",
        "storageType",
        "maxAllocatedStorage",
        "tags",
    ] {
        assert!(
            fields.contains(&field),
            "{field} missing from the drift record {record:?}"
        );
    }
    let class = record
        .fields
        .iter()
        .find(|f| f.field == "dbInstanceClass")
        .unwrap();
    assert_eq!(
        (class.observed.as_str(), class.desired.as_str()),
        ("db.t3.large", "db.t3.micro")
    );
    assert!(!record.time.is_empty());
    assert!(
        common::event_reasons(&client, &ns, "drift")
            .await
            .contains(&"DriftCorrected".into())
    );

    wait_for("RDS back to the spec", TIMEOUT, || {
        let rds = rds.clone();
        let id = id.clone();
        async move {
            let i = common::describe(&rds, &id).await?;
            let tags = common::tags_of(&i);
            (i.db_instance_class() == Some("db.t3.micro")
                && i.storage_type() == Some("gp2")
                && i.max_allocated_storage() == Some(100)
                && i.backup_retention_period() == Some(1)
                && i.multi_az() == Some(false)
                && i.deletion_protection() == Some(false)
                && tags.get("app").map(String::as_str) == Some("coffee-manage"))
            .then_some(())
        }
    })
    .await;
    wait_dbi(&api, "drift", "in sync again", TIMEOUT, synced).await;
    let i = common::describe(&rds, &id).await.unwrap();
    assert_eq!(
        common::tags_of(&i).get("rogue").map(String::as_str),
        Some("1"),
        "a tag someone else set survives"
    );
    assert_eq!(
        calls(&id, "RemoveTagsFromResource"),
        1,
        "only the test's own untag"
    );
    common::delete_and_wait(&api, "drift").await;
}

#[tokio::test]
async fn drift_policy_report_only_reports() {
    let (client, ns, api, rds) = setup("report").await;
    let id = common::unique("report");
    let operator = Operator::start_with(&ns, &["--drift-interval", "1s"]);
    api.create(
        &PostParams::default(),
        &dbinstance("report", &id, json!({"driftPolicy": "Report"})),
    )
    .await
    .expect("create");
    wait_dbi(&api, "report", "in sync", TIMEOUT, synced).await;
    rds.modify_db_instance()
        .db_instance_identifier(&id)
        .db_instance_class("db.t3.large")
        .apply_immediately(true)
        .send()
        .await
        .expect("out-of-band modify");
    let db = wait_dbi(&api, "report", "a drift report", TIMEOUT, |db| {
        condition(db, "Synced").is_some_and(|c| c.1 == "Drifted")
    })
    .await;
    let record = db.status.unwrap().last_drift.expect("drift record");
    assert_eq!(record.action, "Reported");
    assert_eq!(record.fields[0].field, "dbInstanceClass");
    assert!(
        common::event_reasons(&client, &ns, "report")
            .await
            .contains(&"DriftDetected".into())
    );
    let once = || async { calls(&id, "ModifyDBInstance") == 1 };
    let what = "only the out-of-band change itself";
    common::holds_over_polls(&operator, what, once).await;
    assert_eq!(
        common::describe(&rds, &id)
            .await
            .unwrap()
            .db_instance_class(),
        Some("db.t3.large")
    );

    // Deleted out of band: reported, not recreated.
    rds.delete_db_instance()
        .db_instance_identifier(&id)
        .skip_final_snapshot(true)
        .send()
        .await
        .expect("out-of-band delete");
    wait_dbi(
        &api,
        "report",
        "Ready=False DeletedOutOfBand",
        TIMEOUT,
        |db| condition(db, "Ready").is_some_and(|c| c.1 == "DeletedOutOfBand"),
    )
    .await;
    let once = || async { calls(&id, "CreateDBInstance") == 1 };
    common::holds_over_passes(&operator, ("DBInstance", "report"), "not made again", once).await;
    common::delete_and_wait(&api, "report").await;
}

#[tokio::test]
async fn an_instance_in_sync_costs_no_mutating_calls() {
    let (_client, ns, api, rds) = setup("quiet").await;
    let id = common::unique("quiet");
    // 1 s drift interval: 30 s of polling is 30 drift checks, the same count as 30 minutes at the
    // default interval. (At 200 ms, a shared poll that took more than three intervals, 600 ms,
    // under the whole suite's load counted as one that stopped coming, and was read past
    // directly, as it should be.)
    let operator = Operator::start_with(&ns, &["--drift-interval", "1s"]);
    api.create(
        &PostParams::default(),
        &dbinstance(
            "quiet",
            &id,
            json!({"engineVersion": "8.0", "multiAZ": false, "publiclyAccessible": false, "backupRetentionPeriod": 1,
                   "deletionProtection": false, "copyTagsToSnapshot": false, "autoMinorVersionUpgrade": true}),
        ),
    )
    .await
    .expect("create");
    let db = wait_dbi(&api, "quiet", "in sync", TIMEOUT, synced).await;
    // "8.0" is a major version alone: RDS runs, and reports, the newest 8.0 release it has; the
    // spec still names it, so that version is no drift to correct (the ModifyDBInstance count
    // below).
    let running = common::describe(&rds, &id).await.expect("instance");
    assert_eq!(running.engine_version(), Some("8.0.43"));
    let reported = db.status.as_ref().unwrap().common.engine_version.as_deref();
    assert_eq!(reported, Some("8.0.43"));
    // Let the targeted reads that follow the creation settle.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let polls_before = operator_calls(&operator, "DescribeDBInstances");
    let server_before = common::server_calls(&id);
    tokio::time::sleep(Duration::from_secs(30)).await;
    let polls = operator_calls(&operator, "DescribeDBInstances") - polls_before;
    let server_after = common::server_calls(&id);
    println!(
        "in sync for 30 s at a 1 s drift interval: {polls} shared DescribeDBInstances polls, \
         {server_after:?} calls naming the instance (unchanged: {})",
        server_after == server_before
    );
    assert!(polls >= 15, "the operator kept polling ({polls} polls)");
    assert_eq!(
        server_after, server_before,
        "no call named the instance while it was in sync: no targeted describe, no mutation"
    );
    assert_eq!(calls(&id, "ModifyDBInstance"), 0);
    let other: u64 = [
        "ModifyDBInstance",
        "AddTagsToResource",
        "RemoveTagsFromResource",
        "CreateDBInstance",
    ]
    .iter()
    .map(|op| operator_calls(&operator, op))
    .sum();
    assert_eq!(
        other, 1,
        "the operator's only mutating call was the creation"
    );
    common::delete_and_wait(&api, "quiet").await;
}

#[tokio::test]
async fn changing_the_password_in_the_secret_rotates_it() {
    let (client, ns, api, _rds) = setup("rotate").await;
    let id = common::unique("rotate");
    let operator = Operator::start(&ns);
    api.create(
        &PostParams::default(),
        &dbinstance("rotate", &id, json!({})),
    )
    .await
    .expect("create");
    let before = wait_dbi(&api, "rotate", "in sync", TIMEOUT, synced).await;
    let hash_before = before
        .status
        .unwrap()
        .common
        .master_user_password_hash
        .expect("hash recorded");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    secrets
        .patch(
            "db-password",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"password": "Rotated-Passw0rd-2026"}})),
        )
        .await
        .expect("rotate the Secret");
    let db = wait_dbi(&api, "rotate", "a new password hash", TIMEOUT, |db| {
        db.status
            .as_ref()
            .and_then(|s| s.common.master_user_password_hash.as_ref())
            .is_some_and(|h| *h != hash_before)
    })
    .await;
    assert_eq!(
        calls(&id, "ModifyDBInstance"),
        1,
        "the new password went to RDS"
    );
    assert!(
        common::event_reasons(&client, &ns, "rotate")
            .await
            .contains(&"PasswordRotated".into())
    );
    let status = serde_json::to_string(&db.status).unwrap();
    assert!(!status.contains("Rotated-Passw0rd-2026") && !status.contains("Sup3r-Secret-Passw0rd"));
    wait_dbi(&api, "rotate", "in sync after rotation", TIMEOUT, synced).await;
    let once = || async { calls(&id, "ModifyDBInstance") == 1 };
    common::holds_over_polls(&operator, "rotated once", once).await;
    // A create and a rotation, each some seconds of RDS being busy at a 1 s busy poll: a few dozen
    // reconciles at most. (A status field RDS moves on every read once woke ~12 a second.)
    let reconciles = common::operator_metric(&operator, "rds_operator_reconciles_total{");
    assert!(
        reconciles < 60.0,
        "{reconciles} reconciles: a status write loop"
    );
    let logs = operator.logs();
    assert!(!logs.contains("Rotated-Passw0rd-2026") && !logs.contains("Sup3r-Secret-Passw0rd"));
    common::delete_and_wait(&api, "rotate").await;
}

/// The RDS feature fields: each reaches RDS at create as the spec says, with no modification
/// after; a spec edit of the modifiable ones is one ModifyDBInstance; an out-of-band change to
/// them is put back; the create-time ones are refused as edits by the API server.
#[tokio::test]
async fn the_rds_feature_fields_reach_rds_and_stay_as_the_spec_says() {
    let (client, ns, api, rds) = setup("features").await;
    let id = common::unique("features");
    let role = "arn:aws:iam::123456789012:role/rds-monitoring";
    let _operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    api.create(
        &PostParams::default(),
        &dbinstance(
            "features",
            &id,
            json!({
                "storageType": "gp3",
                "storageThroughput": 250,
                "caCertificateIdentifier": "rds-ca-rsa2048-g1",
                "enableCloudwatchLogsExports": ["error", "slowquery"],
                "enableIAMDatabaseAuthentication": true,
                "enablePerformanceInsights": true,
                "performanceInsightsRetentionPeriod": 31,
                "monitoringInterval": 30,
                "monitoringRoleARN": role,
                "networkType": "DUAL",
                "availabilityZone": "us-east-1b",
                "engineLifecycleSupport": "open-source-rds-extended-support-disabled",
            }),
        ),
    )
    .await
    .expect("create");
    let db = wait_dbi(&api, "features", "in sync", TIMEOUT, synced).await;
    let i = common::describe(&rds, &id).await.expect("instance");
    assert_eq!(i.storage_throughput(), Some(250));
    assert_eq!(i.ca_certificate_identifier(), Some("rds-ca-rsa2048-g1"));
    assert_eq!(i.enabled_cloudwatch_logs_exports(), ["error", "slowquery"]);
    assert_eq!(i.iam_database_authentication_enabled(), Some(true));
    assert_eq!(i.performance_insights_enabled(), Some(true));
    assert_eq!(i.performance_insights_retention_period(), Some(31));
    assert_eq!(i.monitoring_interval(), Some(30));
    assert_eq!(i.monitoring_role_arn(), Some(role));
    assert_eq!(i.network_type(), Some("DUAL"));
    assert_eq!(i.availability_zone(), Some("us-east-1b"));
    assert_eq!(
        i.engine_lifecycle_support(),
        Some("open-source-rds-extended-support-disabled")
    );
    assert_eq!(
        calls(&id, "ModifyDBInstance"),
        0,
        "the create gave RDS every feature: nothing to modify after"
    );
    let status = db.status.expect("status");
    assert_eq!(
        status.ca_certificate_identifier.as_deref(),
        Some("rds-ca-rsa2048-g1")
    );
    assert!(
        (status.certificate_valid_till.as_deref()).is_some_and(|t| t.starts_with("2061-05-26")),
        "{:?}",
        status.certificate_valid_till
    );

    // The user edits every modifiable feature: one ModifyDBInstance carries them all.
    patch_spec(
        &api,
        "features",
        json!({
            "storageThroughput": 500,
            "caCertificateIdentifier": "rds-ca-ecc384-g1",
            "enableCloudwatchLogsExports": ["error", "general"],
            "enableIAMDatabaseAuthentication": false,
            "performanceInsightsRetentionPeriod": 62,
            "monitoringInterval": 60,
            "networkType": "IPV4",
        }),
    )
    .await;
    wait_dbi(&api, "features", "the edit in sync", TIMEOUT, synced).await;
    let i = common::describe(&rds, &id).await.expect("instance");
    assert_eq!(i.storage_throughput(), Some(500));
    assert_eq!(i.ca_certificate_identifier(), Some("rds-ca-ecc384-g1"));
    let mut logs = i.enabled_cloudwatch_logs_exports().to_vec();
    logs.sort();
    assert_eq!(logs, ["error", "general"]);
    assert_eq!(i.iam_database_authentication_enabled(), Some(false));
    assert_eq!(i.performance_insights_retention_period(), Some(62));
    assert_eq!(i.monitoring_interval(), Some(60));
    assert_eq!(i.network_type(), Some("IPV4"));
    assert_eq!(
        calls(&id, "ModifyDBInstance"),
        1,
        "one edit, one ModifyDBInstance"
    );

    // Someone turns IAM authentication back on, changes the logs and the monitoring interval.
    rds.modify_db_instance()
        .db_instance_identifier(&id)
        .enable_iam_database_authentication(true)
        .cloudwatch_logs_export_configuration(
            aws_sdk_rds::types::CloudwatchLogsExportConfiguration::builder()
                .disable_log_types("general")
                .enable_log_types("audit")
                .build(),
        )
        .monitoring_interval(15)
        .apply_immediately(true)
        .send()
        .await
        .expect("out-of-band modify");
    let db = wait_dbi(&api, "features", "a drift correction", TIMEOUT, |db| {
        (db.status.as_ref().and_then(|s| s.last_drift.as_ref()))
            .is_some_and(|d| d.action == "Corrected")
    })
    .await;
    let record = db.status.unwrap().last_drift.unwrap();
    let fields: Vec<&str> = record.fields.iter().map(|f| f.field.as_str()).collect();
    for field in [
        "enableIAMDatabaseAuthentication",
        "enableCloudwatchLogsExports",
        "monitoringInterval",
    ] {
        assert!(fields.contains(&field), "{field} missing from {record:?}");
    }
    wait_for("RDS back to the spec", TIMEOUT, || {
        let rds = rds.clone();
        let id = id.clone();
        async move {
            let i = common::describe(&rds, &id).await?;
            let mut logs = i.enabled_cloudwatch_logs_exports().to_vec();
            logs.sort();
            (i.iam_database_authentication_enabled() == Some(false)
                && logs == ["error", "general"]
                && i.monitoring_interval() == Some(60))
            .then_some(())
        }
    })
    .await;
    assert_eq!(
        calls(&id, "ModifyDBInstance"),
        3,
        "the edit, the test's own change, and one correction"
    );

    // The create-time fields cannot be edited, added or removed: the API server refuses.
    for (field, value) in [
        ("availabilityZone", json!("us-east-1c")),
        ("characterSetName", json!("latin1")),
        (
            "engineLifecycleSupport",
            json!("open-source-rds-extended-support"),
        ),
    ] {
        let refused = api
            .patch(
                "features",
                &PatchParams::default(),
                &Patch::Merge(&json!({"spec": {field: value}})),
            )
            .await
            .expect_err(field);
        assert!(
            refused.to_string().contains("immutable"),
            "{field}: {refused}"
        );
    }
    drop(client);
    common::delete_and_wait(&api, "features").await;
}
