//! The operator core on the bed: create -> available -> delete, deletion policies, crash safety,
//! ownership, invalid input.

use std::time::Duration;

use kube::ResourceExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::ApiResource;
use rds_operator::dbinstance::{DBInstance, OWNER_NAME_TAG, OWNER_TAG};
use serde_json::json;

use crate::common::{self, Operator, condition, dbinstance, is_ready, setup, wait_dbi, wait_for};

const READY_TIMEOUT: Duration = Duration::from_secs(90);

#[tokio::test]
async fn create_observe_delete() {
    let (client, ns, api, rds) = setup("life").await;
    let id = common::unique("coffee");
    let operator = Operator::start(&ns);
    api.create(
        &PostParams::default(),
        &dbinstance("coffee", &id, json!({})),
    )
    .await
    .expect("create");

    let db = wait_dbi(&api, "coffee", "Ready=True", READY_TIMEOUT, is_ready).await;

    // What RDS holds.
    let instance = common::describe(&rds, &id)
        .await
        .expect("the RDS instance exists");
    assert_eq!(instance.db_instance_class(), Some("db.t3.micro"));
    assert_eq!(instance.allocated_storage(), Some(20));
    assert_eq!(instance.engine(), Some("mysql"));
    assert_eq!(instance.storage_type(), Some("gp2"));
    assert_eq!(instance.master_username(), Some("admin"));
    let tags: std::collections::BTreeMap<_, _> = instance
        .tag_list()
        .iter()
        .map(|t| (t.key().unwrap_or_default(), t.value().unwrap_or_default()))
        .collect();
    assert_eq!(tags.get("app"), Some(&"coffee-manage"));
    assert_eq!(tags.get(OWNER_TAG).copied(), db.metadata.uid.as_deref());
    assert_eq!(
        tags.get(OWNER_NAME_TAG).copied(),
        Some(format!("{ns}/coffee").as_str())
    );

    // What Kubernetes reports.
    let status = db.status.clone().expect("status");
    assert_eq!(status.db_instance_status.as_deref(), Some("available"));
    assert_eq!(status.db_instance_identifier.as_deref(), Some(id.as_str()));
    assert_eq!(status.common.arn.as_deref(), instance.db_instance_arn());
    let endpoint = status.common.endpoint.expect("endpoint in status");
    assert_eq!(
        Some(endpoint.address.as_str()),
        instance.endpoint().and_then(|e| e.address())
    );
    assert_eq!(endpoint.port, 3306);
    assert_eq!(status.reported.observed_generation, db.metadata.generation);
    assert_eq!(condition(&db, "Synced").map(|c| c.0), Some("True".into()));
    assert!(
        db.finalizers()
            .contains(&"rds.operator.rs/cleanup".to_string())
    );
    let reasons = common::event_reasons(&client, &ns, "coffee").await;
    assert!(reasons.contains(&"Creating".into()), "events: {reasons:?}");
    assert!(reasons.contains(&"Available".into()), "events: {reasons:?}");

    // Delete: the CR goes only once the instance is gone.
    common::delete_and_wait(&api, "coffee").await;
    assert!(
        common::describe(&rds, &id).await.is_none(),
        "RDS instance deleted before the CR went"
    );
    let reasons = common::event_reasons(&client, &ns, "coffee").await;
    assert!(
        reasons.contains(&"Deleting".into()) && reasons.contains(&"Deleted".into()),
        "events: {reasons:?}"
    );
    if common::has_moto_ext() {
        assert_eq!(common::server_calls(&id).get("CreateDBInstance"), Some(&1));
    }
    let logs = operator.logs();
    assert!(
        !logs.contains("Sup3r-Secret-Passw0rd"),
        "password leaked into the operator log"
    );
}

#[tokio::test]
async fn retain_keeps_the_instance_and_snapshot_leaves_a_snapshot() {
    let (_client, ns, api, rds) = setup("policy").await;
    let retained = common::unique("retain");
    let snapped = common::unique("snap");
    let _operator = Operator::start(&ns);
    for (name, id, policy) in [
        ("retained", &retained, "Retain"),
        ("snapped", &snapped, "Snapshot"),
    ] {
        api.create(
            &PostParams::default(),
            &dbinstance(name, id, json!({"deletionPolicy": policy})),
        )
        .await
        .expect("create");
    }
    for name in ["retained", "snapped"] {
        let db = wait_dbi(&api, name, "Ready=True", READY_TIMEOUT, is_ready).await;
        assert!(db.status.is_some());
        common::delete(&api, name).await;
    }
    for name in ["retained", "snapped"] {
        common::wait_gone(&api, name, READY_TIMEOUT).await;
    }
    let kept = common::describe(&rds, &retained)
        .await
        .expect("Retain keeps the RDS instance");
    assert_eq!(kept.db_instance_status(), Some("available"));
    assert!(
        common::describe(&rds, &snapped).await.is_none(),
        "Snapshot deletes the instance"
    );
    let snapshots = rds
        .describe_db_snapshots()
        .db_instance_identifier(&snapped)
        .send()
        .await
        .expect("DescribeDBSnapshots");
    let names: Vec<_> = snapshots
        .db_snapshots()
        .iter()
        .filter_map(|s| s.db_snapshot_identifier())
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n.starts_with(&format!("{snapped}-final-"))),
        "final snapshot missing: {names:?}"
    );
    rds.delete_db_instance()
        .db_instance_identifier(&retained)
        .skip_final_snapshot(true)
        .send()
        .await
        .expect("clean up the retained instance");
}

#[tokio::test]
async fn crash_right_after_create_does_not_create_a_second_instance() {
    let (_client, ns, api, rds) = setup("crash").await;
    if !common::has_moto_ext() {
        eprintln!("this test needs moto_ext's call counts; the emulator has none");
    }
    let id = common::unique("crash");
    let mut operator = Operator::start(&ns);
    api.create(&PostParams::default(), &dbinstance("crash", &id, json!({})))
        .await
        .expect("create");
    // Kill the operator the moment the emulator has served CreateDBInstance.
    wait_for(
        "CreateDBInstance to reach the emulator",
        Duration::from_secs(30),
        || {
            let id = id.clone();
            async move {
                (common::server_calls(&id)
                    .get("CreateDBInstance")
                    .copied()
                    .unwrap_or(0)
                    >= 1)
                    .then_some(())
            }
        },
    )
    .await;
    operator.kill();
    drop(operator);

    let _restarted = Operator::start(&ns);
    let db = wait_dbi(
        &api,
        "crash",
        "Ready=True after restart",
        READY_TIMEOUT,
        is_ready,
    )
    .await;
    assert_eq!(
        common::server_calls(&id).get("CreateDBInstance"),
        Some(&1),
        "a second create was sent"
    );
    let instance = common::describe(&rds, &id).await.expect("instance");
    let owner = instance
        .tag_list()
        .iter()
        .find(|t| t.key() == Some(OWNER_TAG))
        .and_then(|t| t.value());
    assert_eq!(owner, db.metadata.uid.as_deref());
    common::delete_and_wait(&api, "crash").await;
}

/// The ownership tag the operator puts on the instances it creates for `db`.
fn owner_tag(db: &DBInstance) -> aws_sdk_rds::types::Tag {
    aws_sdk_rds::types::Tag::builder()
        .key(OWNER_TAG)
        .value(db.metadata.uid.clone().unwrap())
        .build()
}

#[tokio::test]
async fn instance_created_before_the_status_write_is_adopted() {
    // The state a crash between CreateDBInstance and the status write leaves: an RDS instance tagged
    // with the DBInstance's uid, and a DBInstance without status.
    let (_client, ns, api, rds) = setup("adopt").await;
    let id = common::unique("adopt");
    let db = api
        .create(&PostParams::default(), &dbinstance("adopt", &id, json!({})))
        .await
        .expect("create");
    rds.create_db_instance()
        .db_instance_identifier(&id)
        .engine("mysql")
        .db_instance_class("db.t3.micro")
        .allocated_storage(20)
        .tags(owner_tag(&db))
        .send()
        .await
        .expect("pre-create");
    let _operator = Operator::start(&ns);
    wait_dbi(&api, "adopt", "Ready=True", READY_TIMEOUT, is_ready).await;
    assert_eq!(
        common::server_calls(&id).get("CreateDBInstance"),
        Some(&1),
        "the operator created again"
    );
    common::delete_and_wait(&api, "adopt").await;
    assert!(common::describe(&rds, &id).await.is_none());
}

/// A new MySQL instance outside the operator (password The-Snapsh0t-Password, 7 days of backups)
/// of `storage` GiB, and a manual snapshot of it, once available (as against RDS, a restore waits
/// until its snapshot is available): the snapshot's identifier.
async fn snapshot_of_a_new_instance(
    rds: &aws_sdk_rds::Client,
    source: &str,
    storage: i32,
) -> String {
    (rds.create_db_instance())
        .db_instance_identifier(source)
        .engine("mysql")
        .engine_version("8.0.42")
        .db_instance_class("db.t3.micro")
        .allocated_storage(storage)
        .master_username("admin")
        .master_user_password("The-Snapsh0t-Password")
        .backup_retention_period(7)
        .send()
        .await
        .expect("source instance");
    let snapshot = format!("{source}-snap");
    (rds.create_db_snapshot())
        .db_instance_identifier(source)
        .db_snapshot_identifier(&snapshot)
        .send()
        .await
        .expect("snapshot");
    common::wait_snapshot_available(rds, &snapshot).await;
    snapshot
}

#[tokio::test]
async fn a_restore_whose_status_write_was_lost_still_gets_the_specs_password_and_settings() {
    // The state a crash between RestoreDBInstanceFromDBSnapshot and the status write leaves: the
    // restored instance, tagged with the DBInstance's uid, and a DBInstance without status. The
    // instance has the snapshot's password, class and retention; the spec asks for others.
    let (_client, ns, api, rds) = setup("lostrestore").await;
    let source = common::unique("lostsrc");
    let id = common::unique("lostrestore");
    let snapshot = snapshot_of_a_new_instance(&rds, &source, 20).await;
    let spec = json!({
        "dbInstanceClass": "db.t3.small",
        "backupRetentionPeriod": 2,
        "deletionPolicy": "Delete",
        "restoreFrom": {"dbSnapshotIdentifier": snapshot},
    });
    let db = api
        .create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create");
    rds.restore_db_instance_from_db_snapshot()
        .db_instance_identifier(&id)
        .db_snapshot_identifier(&snapshot)
        .tags(owner_tag(&db))
        .send()
        .await
        .expect("the restore before the crash");
    let _operator = Operator::start(&ns);
    let db = wait_dbi(&api, "db", "Ready and Synced", READY_TIMEOUT, |db| {
        is_ready(db) && common::synced_reason(db) == "Synced"
    })
    .await;
    let restore = db.status.unwrap().restore.expect("status.restore");
    assert!(
        restore.settings_applied && restore.source.contains(&snapshot),
        "{restore:?}"
    );
    let instance = common::describe(&rds, &id).await.expect("instance");
    assert_eq!(instance.db_instance_class(), Some("db.t3.small"));
    assert_eq!(instance.backup_retention_period(), Some(2));
    if common::has_moto_ext() {
        assert_eq!(
            common::rds_master_password(&id).as_deref(),
            Some("Sup3r-Secret-Passw0rd"),
            "the spec's password replaced the snapshot's"
        );
        assert_eq!(
            common::server_calls(&id).get("RestoreDBInstanceFromDBSnapshot"),
            Some(&1),
            "restored again"
        );
    }
    common::delete_and_wait(&api, "db").await;
    rds.delete_db_instance()
        .db_instance_identifier(&source)
        .skip_final_snapshot(true)
        .send()
        .await
        .expect("clean up the source");
}

#[tokio::test]
async fn an_instance_that_is_not_ours_is_never_adopted_or_deleted() {
    let (client, ns, api, rds) = setup("foreign").await;
    let id = common::unique("foreign");
    rds.create_db_instance()
        .db_instance_identifier(&id)
        .engine("mysql")
        .db_instance_class("db.t3.small")
        .allocated_storage(30)
        .send()
        .await
        .expect("someone else's instance");
    let _operator = Operator::start(&ns);
    api.create(
        &PostParams::default(),
        &dbinstance("foreign", &id, json!({})),
    )
    .await
    .expect("create");
    let db = wait_dbi(
        &api,
        "foreign",
        "Synced=False IdentifierInUse",
        READY_TIMEOUT,
        |db| condition(db, "Synced").is_some_and(|c| c.0 == "False" && c.1 == "IdentifierInUse"),
    )
    .await;
    let message = condition(&db, "Synced").unwrap().2;
    assert!(
        message.contains(&id) && message.contains("not managed"),
        "{message}"
    );
    assert!(
        common::event_reasons(&client, &ns, "foreign")
            .await
            .contains(&"IdentifierInUse".into())
    );
    common::delete_and_wait(&api, "foreign").await;
    let instance = common::describe(&rds, &id)
        .await
        .expect("the foreign instance survives");
    assert_eq!(instance.db_instance_class(), Some("db.t3.small"));
    assert!(
        instance
            .tag_list()
            .iter()
            .all(|t| t.key() != Some(OWNER_TAG))
    );
    rds.delete_db_instance()
        .db_instance_identifier(&id)
        .skip_final_snapshot(true)
        .send()
        .await
        .expect("clean up");
}

#[tokio::test]
async fn invalid_manifests_are_rejected_by_the_api_server() {
    let client = common::client_with_crd().await;
    let ns = common::namespace(&client, "invalid").await;
    let ar = ApiResource::erase::<DBInstance>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &ar);
    let base = json!({
        "engine": "mysql", "dbInstanceClass": "db.t3.micro", "allocatedStorage": 20,
    });
    let cases = [
        (
            "no-class",
            json!({"dbInstanceClass": null}),
            "dbInstanceClass",
        ),
        ("tiny", json!({"allocatedStorage": 5}), "allocatedStorage"),
        (
            "no-storage",
            json!({"allocatedStorage": null}),
            "allocatedStorage is required",
        ),
        (
            "policy",
            json!({"deletionPolicy": "Sometimes"}),
            "deletionPolicy",
        ),
        (
            "storage-type",
            json!({"storageType": "floppy"}),
            "storageType",
        ),
        (
            "cross-ns",
            json!({"masterUserPassword": {"name": "pw", "key": "password", "namespace": "kube-system"}}),
            "cross-namespace references are refused",
        ),
        (
            "backups-off",
            json!({"backupRetentionPeriod": 0, "automatedBackupReplication": {"region": "us-west-2"}}),
            "backupRetentionPeriod must be above 0",
        ),
    ];
    for (name, change, expected) in cases {
        let mut spec = base.clone();
        for (k, v) in change.as_object().unwrap() {
            if v.is_null() {
                spec.as_object_mut().unwrap().remove(k);
            } else {
                spec[k] = v.clone();
            }
        }
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBInstance",
            "metadata": {"name": name}, "spec": spec,
        }))
        .unwrap();
        // The admission policy is compiled asynchronously after install: retry briefly.
        let message = wait_for(
            &format!("{name} to be rejected"),
            Duration::from_secs(20),
            || {
                let api = api.clone();
                let obj = obj.clone();
                async move {
                    match api.create(&PostParams::default(), &obj).await {
                        Err(kube::Error::Api(e)) => Some(e.message),
                        Ok(_) => {
                            let _ = api.delete(name, &Default::default()).await;
                            None
                        }
                        Err(e) => panic!("unexpected error {e}"),
                    }
                }
            },
        )
        .await;
        println!("{name}: {message}");
        assert!(
            message.contains(expected),
            "{name}: {message:?} does not name {expected:?}"
        );
    }

    // Immutable fields are refused on update, naming the field.
    let dbi: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    dbi.create(
        &PostParams::default(),
        &dbinstance("immutable", &common::unique("imm"), json!({})),
    )
    .await
    .expect("create");
    for (field, value) in [
        ("engine", json!("postgres")),
        ("dbName", json!("OTHER")),
        ("masterUsername", json!("root")),
        ("dbInstanceIdentifier", json!("another-name")),
        ("storageEncrypted", json!(true)),
        ("kmsKeyID", json!("alias/other")),
    ] {
        let err = dbi
            .patch(
                "immutable",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {field: value}})),
            )
            .await
            .expect_err("immutable field changed");
        assert!(
            err.to_string().contains(&format!("{field} is immutable")),
            "{err}"
        );
    }
}

#[tokio::test]
async fn aws_invalid_input_is_reported_backed_off_and_retried_on_spec_change() {
    let (client, ns, api, rds) = setup("awsinvalid").await;
    let id = common::unique("badnet");
    let _operator = Operator::start(&ns);
    api.create(
        &PostParams::default(),
        &dbinstance(
            "badnet",
            &id,
            json!({"dbSubnetGroupName": "no-such-subnet-group"}),
        ),
    )
    .await
    .expect("create");
    let db = wait_dbi(
        &api,
        "badnet",
        "Synced=False InvalidRequest",
        READY_TIMEOUT,
        |db| condition(db, "Synced").is_some_and(|c| c.1 == "InvalidRequest"),
    )
    .await;
    let message = condition(&db, "Synced").unwrap().2;
    assert!(
        message.contains("no-such-subnet-group"),
        "AWS's message is shown: {message}"
    );
    assert!(!message.contains("Sup3r-Secret-Passw0rd"));
    assert!(
        common::event_reasons(&client, &ns, "badnet")
            .await
            .contains(&"InvalidRequest".into())
    );

    // Backoff, not a retry storm: 2+4+8+16 s -> at most 6 attempts in 20 s.
    tokio::time::sleep(Duration::from_secs(20)).await;
    let creates = common::server_calls(&id)
        .get("CreateDBInstance")
        .copied()
        .unwrap_or(0);
    assert!(
        (1..=6).contains(&creates),
        "{creates} CreateDBInstance calls in ~20 s"
    );

    // A corrected spec is retried at once, whatever the backoff.
    api.patch(
        "badnet",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"dbSubnetGroupName": "coffee-manage-db-subnets"}})),
    )
    .await
    .expect("fix spec");
    wait_dbi(
        &api,
        "badnet",
        "Ready=True after the fix",
        READY_TIMEOUT,
        is_ready,
    )
    .await;
    let instance = common::describe(&rds, &id)
        .await
        .expect("created after the fix");
    assert_eq!(
        instance
            .db_subnet_group()
            .and_then(|g| g.db_subnet_group_name()),
        Some("coffee-manage-db-subnets")
    );
    common::delete_and_wait(&api, "badnet").await;
}

#[tokio::test]
async fn deletion_protection_holds_the_deletion_without_a_hot_loop() {
    let (client, ns, api, rds) = setup("protect").await;
    let id = common::unique("protect");
    let operator = Operator::start(&ns);
    api.create(
        &PostParams::default(),
        &dbinstance("protected", &id, json!({"deletionProtection": true})),
    )
    .await
    .expect("create");
    wait_dbi(&api, "protected", "Ready=True", READY_TIMEOUT, is_ready).await;
    common::delete(&api, "protected").await;
    let db = wait_dbi(
        &api,
        "protected",
        "Synced=False DeletionProtected",
        READY_TIMEOUT,
        |db| condition(db, "Synced").is_some_and(|c| c.1 == "DeletionProtected"),
    )
    .await;
    assert!(db.metadata.deletion_timestamp.is_some());
    assert!(
        is_ready(&db),
        "the protected database still serves clients: Ready stays True"
    );
    assert!(
        common::event_reasons(&client, &ns, "protected")
            .await
            .contains(&"DeletionProtected".into())
    );
    // No DeleteDBInstance is even tried while protection is on, and no describe storm either
    // (poll interval 5 s in tests).
    let (before, started) = (common::server_calls(&id), std::time::Instant::now());
    let untried = || async { common::calls(&id, "DeleteDBInstance") == 0 };
    common::holds_over_polls(&operator, "no DeleteDBInstance while protected", untried).await;
    let after = common::server_calls(&id);
    let describes = after.get("DescribeDBInstances").unwrap_or(&0)
        - before.get("DescribeDBInstances").unwrap_or(&0);
    let secs = started.elapsed().as_secs();
    assert!(
        describes <= secs / 2 + 1,
        "{describes} describes in {secs} s"
    );
    assert!(common::describe(&rds, &id).await.is_some());

    // A person turns protection off in AWS: the deletion goes through.
    common::console_modify(&rds, &id, |m| m.deletion_protection(false)).await;
    common::wait_gone(&api, "protected", READY_TIMEOUT).await;
    assert!(common::describe(&rds, &id).await.is_none());
}

/// What the API server can check is refused at `kubectl apply`, with RDS's rule, and nothing is
/// sent: an identifier RDS refuses (two hyphens in a row, a first digit, an underscore), an engine
/// RDS does not have. An identifier that defaults to a metadata.name RDS refuses is InvalidSpec
/// within 5 s, with no call. What only RDS can refuse (a version it lacks) is reported with AWS's
/// code, InvalidParameter and Stalled, and not retried until the spec changes.
#[tokio::test]
async fn bad_input_is_refused_at_apply_or_before_a_call_and_aws_refusals_are_reported() {
    let (_client, ns, api, _rds) = setup("badid").await;
    let operator = Operator::start(&ns);
    for (identifier, extra) in [
        ("bad--identifier", json!({})),
        ("1bad-ident", json!({})),
        ("bad_ident", json!({})),
        ("engine-typo", json!({"engine": "mysqll"})),
    ] {
        let refused = (api.create(
            &PostParams::default(),
            &dbinstance("badid", identifier, extra),
        ))
        .await
        .expect_err(identifier)
        .to_string();
        let rule = if identifier == "engine-typo" {
            "engine must be one RDS has"
        } else {
            "dbInstanceIdentifier: RDS takes 1 to 63 letters, digits or hyphens"
        };
        assert!(refused.contains(rule), "{identifier}: {refused}");
        assert_eq!(common::calls(identifier, "CreateDBInstance"), 0);
    }
    // metadata.name as the identifier: Kubernetes takes a dot, RDS does not.
    let mut dotted = dbinstance("coffee.db", "unused", json!({}));
    dotted.spec.db_instance_identifier = None;
    (api.create(&PostParams::default(), &dotted))
        .await
        .expect("a name Kubernetes takes");
    let db = wait_dbi(
        &api,
        "coffee.db",
        "InvalidSpec",
        Duration::from_secs(5),
        |db| condition(db, "Synced").is_some_and(|c| c.1 == "InvalidSpec"),
    )
    .await;
    let message = condition(&db, "Synced").unwrap().2;
    assert!(
        message
            .contains("metadata.name (the default dbInstanceIdentifier) \"coffee.db\" holds '.'"),
        "{message}"
    );
    assert_eq!(common::calls("coffee.db", "CreateDBInstance"), 0);
    common::delete_and_wait(&api, "coffee.db").await;

    // A region AWS's partitions do not have: a typo, not an outage (no call, so no breaker).
    let id = common::unique("badregion");
    let typo = dbinstance("typo", &id, json!({"region": "eu-west-9"}));
    (api.create(&PostParams::default(), &typo))
        .await
        .expect("a region the schema's pattern takes");
    let db = wait_dbi(&api, "typo", "InvalidSpec", Duration::from_secs(5), |db| {
        condition(db, "Synced").is_some_and(|c| c.1 == "InvalidSpec")
    })
    .await;
    let message = condition(&db, "Synced").unwrap().2;
    assert!(
        message.contains("region eu-west-9 is not a region"),
        "{message}"
    );
    assert_eq!(
        condition(&db, "Stalled").map(|c| c.0).as_deref(),
        Some("True")
    );
    assert!(
        common::server_calls(&id).is_empty(),
        "{:?}",
        common::server_calls(&id)
    );
    common::delete_and_wait(&api, "typo").await;

    // A version RDS does not have: only RDS says so (InvalidParameterCombination).
    let id = common::unique("badversion");
    let spec = json!({"engineVersion": "8.0.99"});
    (api.create(&PostParams::default(), &dbinstance("badid", &id, spec)))
        .await
        .expect("create");
    // A refused parameter needs a spec change: Stalled, and not retried until the spec changes.
    let db = wait_dbi(
        &api,
        "badid",
        "Synced=False InvalidParameter",
        READY_TIMEOUT,
        |db| condition(db, "Synced").is_some_and(|c| c.1 == "InvalidParameter"),
    )
    .await;
    let message = condition(&db, "Synced").unwrap().2;
    assert!(
        message.contains("CreateDBInstance failed")
            && message.contains("Cannot find version 8.0.99"),
        "{message}"
    );
    assert_eq!(
        condition(&db, "Stalled").map(|c| c.0).as_deref(),
        Some("True")
    );
    common::not_retried(&operator, &id, "CreateDBInstance").await;
    // Deleting it is immediate: there is nothing in RDS.
    common::delete_and_wait(&api, "badid").await;
}

/// A restore names no size: RestoreDBInstanceFromDBSnapshot takes the snapshot's, so the
/// DBInstance is accepted at apply without allocatedStorage, is Ready with the snapshot's 30 GiB,
/// and no storage change is sent afterwards (nothing in the spec to drift from).
#[tokio::test]
async fn a_restore_without_allocated_storage_takes_the_snapshots_size() {
    let (_client, ns, api, rds) = setup("restoresize").await;
    let (source, id) = (common::unique("sizesrc"), common::unique("restoresize"));
    let snapshot = snapshot_of_a_new_instance(&rds, &source, 30).await;
    // The snapshot is no DBInstance's: granted to the namespace by the operator's flag.
    let grant = format!("--grant-restore={ns}");
    let operator = Operator::start_with(&ns, &[&grant]);
    let spec = json!({"deletionPolicy": "Delete", "allocatedStorage": null,
                      "restoreFrom": {"dbSnapshotIdentifier": snapshot}});
    let db = dbinstance("db", &id, spec);
    assert_eq!(db.spec.allocated_storage, None);
    (api.create(&PostParams::default(), &db).await).expect("accepted without allocatedStorage");
    wait_dbi(&api, "db", "Ready and Synced", READY_TIMEOUT, |db| {
        is_ready(db) && common::synced_reason(db) == "Synced"
    })
    .await;
    let instance = common::describe(&rds, &id)
        .await
        .expect("the restored instance");
    assert_eq!(
        instance.allocated_storage(),
        Some(30),
        "the snapshot's size"
    );
    let unsent = || async {
        let params = common::moto_ext_get(&format!(
            "/_rds_ext/call-parameters?action=ModifyDBInstance&identifier={id}"
        ));
        !params.unwrap_or_default().contains("AllocatedStorage")
    };
    common::holds_over_polls(&operator, "no storage change sent", unsent).await;
    common::delete_and_wait(&api, "db").await;
    let _ = (rds.delete_db_snapshot())
        .db_snapshot_identifier(&snapshot)
        .send()
        .await;
    let _ = (rds.delete_db_instance())
        .db_instance_identifier(&source)
        .skip_final_snapshot(true)
        .send()
        .await;
}
