//! Safe by default: deletion keeps a final snapshot and the automated backups, an instance deleted
//! out of band is restored (never replaced by an empty one unless asked), protection stronger in
//! AWS than in the spec is kept, fights stop, and a hanging AWS endpoint fails /healthz without
//! leaving anything stuck.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use crate::common::TIMEOUT;
use crate::common::{
    self, Operator, Proxy, calls, condition, dbinstance, is_ready, operator_calls, patch_spec,
    setup, synced_reason, unique, wait_dbi, wait_for,
};

/// (identifier, type) of every snapshot of an instance identifier.
async fn snapshots(rds: &aws_sdk_rds::Client, identifier: &str) -> Vec<(String, String)> {
    let out = (rds.describe_db_snapshots())
        .db_instance_identifier(identifier)
        .send()
        .await
        .expect("DescribeDBSnapshots");
    (out.db_snapshots().iter())
        .map(|s| {
            let id = s.db_snapshot_identifier().unwrap_or_default().to_owned();
            (id, s.snapshot_type().unwrap_or_default().to_owned())
        })
        .collect()
}

/// A namespace, an operator with these arguments, and the DBInstance `db` over a new identifier,
/// Ready. Bind `operator` when taking it apart: dropped, it kills the operator.
struct Bed {
    client: kube::Client,
    ns: String,
    api: Api<DBInstance>,
    rds: aws_sdk_rds::Client,
    id: String,
    operator: Operator,
    db: DBInstance,
}

async fn ready(prefix: &str, operator_args: &[&str], spec: serde_json::Value) -> Bed {
    let (client, ns, api, rds) = setup(prefix).await;
    let id = unique(prefix);
    let operator = Operator::start_with(&ns, operator_args);
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create");
    let db = wait_dbi(&api, "db", "ready", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Synced"
    })
    .await;
    Bed {
        client,
        ns,
        api,
        rds,
        id,
        operator,
        db,
    }
}

#[tokio::test]
async fn deleting_the_namespace_leaves_a_final_snapshot_and_the_backups() {
    let (client, ns, api, rds) = setup("nsdel").await;
    let id = unique("nsdel");
    let _operator = Operator::start(&ns);
    // The default deletionPolicy: none is given.
    let db = api
        .create(
            &PostParams::default(),
            &dbinstance("db", &id, json!({"backupRetentionPeriod": 1})),
        )
        .await
        .expect("create");
    assert_eq!(
        db.spec.deletion.deletion_policy,
        rds_operator::dbinstance::DeletionPolicy::Snapshot
    );
    wait_dbi(&api, "db", "ready", TIMEOUT, is_ready).await;

    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .delete(&ns, &Default::default())
        .await
        .expect("delete namespace");
    wait_for(
        "the namespace to finish terminating",
        Duration::from_secs(150),
        || {
            let namespaces = namespaces.clone();
            let ns = ns.clone();
            async move { matches!(namespaces.get_opt(&ns).await, Ok(None)).then_some(()) }
        },
    )
    .await;
    assert!(
        common::describe(&rds, &id).await.is_none(),
        "the instance is deleted"
    );
    let snaps = snapshots(&rds, &id).await;
    let final_prefix = format!("{id}-final-{}", &db.uid().unwrap()[..8]);
    assert!(
        snaps
            .iter()
            .any(|(s, kind)| s.starts_with(&final_prefix) && kind == "manual"),
        "a final snapshot {final_prefix}-...: {snaps:?}"
    );
    assert!(
        snaps.iter().any(|(_, kind)| kind == "automated"),
        "the automated backups are kept: {snaps:?}"
    );
    assert_eq!(calls(&id, "DeleteDBInstance"), 1);
}

#[tokio::test]
async fn an_instance_deleted_out_of_band_is_restored_from_its_newest_snapshot() {
    let Bed {
        client,
        ns,
        api,
        rds,
        id,
        db: before,
        operator: _operator,
    } = ready("restore", &["--drift-interval", "2s"], json!({})).await;
    let by_hand = format!("{id}-by-hand");
    (rds.delete_db_instance())
        .db_instance_identifier(&id)
        .final_db_snapshot_identifier(&by_hand)
        .send()
        .await
        .expect("out-of-band delete with a final snapshot");
    let db = wait_dbi(&api, "db", "restored and ready", TIMEOUT, |db| {
        is_ready(db)
            && (db.status.as_ref().and_then(|s| s.last_drift.as_ref()))
                .is_some_and(|d| d.action == "Restored")
    })
    .await;
    let record = db.status.unwrap().last_drift.unwrap();
    assert_eq!(
        record.fields[0].desired,
        format!("restored from snapshot {by_hand}")
    );
    assert_eq!(calls(&id, "RestoreDBInstanceFromDBSnapshot"), 1);
    assert_eq!(
        calls(&id, "CreateDBInstance"),
        1,
        "no empty instance was created"
    );
    assert!(
        common::event_reasons(&client, &ns, "db")
            .await
            .contains(&"Restoring".into())
    );
    let i = common::describe(&rds, &id)
        .await
        .expect("the instance is back");
    assert_eq!(i.db_instance_class(), Some("db.t3.micro"));
    let owner = (i.tag_list().iter())
        .find(|t| t.key() == Some(rds_operator::dbinstance::OWNER_TAG))
        .and_then(|t| t.value());
    assert_eq!(
        owner,
        before.metadata.uid.as_deref(),
        "restored with our owner tag"
    );
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn with_no_snapshot_nothing_is_created_until_the_spec_opts_in() {
    let Bed {
        client,
        ns,
        api,
        rds,
        id,
        operator,
        ..
    } = ready("nosnap", &["--drift-interval", "2s"], json!({})).await;
    // No final snapshot, and (AWS's default) the automated backups go too. This used to bring an
    // empty instance back at once.
    (rds.delete_db_instance())
        .db_instance_identifier(&id)
        .skip_final_snapshot(true)
        .send()
        .await
        .expect("out-of-band delete");
    let db = wait_dbi(&api, "db", "DeletedOutOfBand", TIMEOUT, |db| {
        synced_reason(db) == "DeletedOutOfBand"
    })
    .await;
    let (_, _, message) = condition(&db, "Synced").unwrap();
    assert!(message.contains("no snapshot"), "{message}");
    let none = || async { calls(&id, "CreateDBInstance") == 1 };
    common::holds_over_passes(&operator, ("DBInstance", "db"), "nothing created", none).await;
    assert!(common::describe(&rds, &id).await.is_none());
    assert!(
        common::event_reasons(&client, &ns, "db")
            .await
            .contains(&"DeletedOutOfBand".into())
    );

    patch_spec(
        &api,
        "db",
        json!({"outOfBandDeletionPolicy": "RestoreOrCreateEmpty"}),
    )
    .await;
    wait_dbi(
        &api,
        "db",
        "an empty instance, as opted in",
        TIMEOUT,
        |db| {
            is_ready(db)
                && (db.status.as_ref().and_then(|s| s.last_drift.as_ref()))
                    .is_some_and(|d| d.action == "Recreated")
        },
    )
    .await;
    assert_eq!(calls(&id, "CreateDBInstance"), 2);
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn an_operator_pointed_at_another_region_creates_nothing() {
    let Bed {
        ns,
        api,
        rds,
        id,
        operator: mut home,
        ..
    } = ready("region", &["--drift-interval", "2s"], json!({})).await;
    home.kill();

    let args: Vec<String> = [
        "--namespace",
        &ns,
        "--busy-poll-interval",
        "1s",
        "--drift-interval",
        "2s",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    let mut away = Operator::spawn(&args, common::kubeconfig(), &[("AWS_REGION", "eu-west-1")]);
    let db = wait_dbi(&api, "db", "AccountOrRegionMismatch", TIMEOUT, |db| {
        synced_reason(db) == "AccountOrRegionMismatch"
    })
    .await;
    let (_, _, message) = condition(&db, "Synced").unwrap();
    assert!(message.contains("eu-west-1"), "{message}");
    let none = || async { calls(&id, "CreateDBInstance") == 1 };
    let what = "nothing created in either region";
    common::holds_over_pokes(&away, &api, ("DBInstance", "db"), what, none).await;
    assert_eq!(calls(&id, "RestoreDBInstanceFromDBSnapshot"), 0);
    assert!(
        common::describe(&rds, &id).await.is_some(),
        "the instance is untouched"
    );
    away.kill();

    let _home = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn protection_raised_in_aws_is_kept_and_reported() {
    let spec = json!({"backupRetentionPeriod": 1, "multiAZ": false, "deletionProtection": false});
    let Bed {
        client,
        ns,
        api,
        rds,
        id,
        operator,
        ..
    } = ready("keep", &["--drift-interval", "2s"], spec).await;
    (rds.modify_db_instance())
        .db_instance_identifier(&id)
        .deletion_protection(true)
        .backup_retention_period(7)
        .multi_az(true)
        .apply_immediately(true)
        .send()
        .await
        .expect("out-of-band modify");
    // RDS applies some of it at once and Multi-AZ after a modification phase: wait for all three.
    let db = wait_dbi(&api, "db", "ProtectionKept for all three", TIMEOUT, |db| {
        let kept = (db.status.as_ref().and_then(|s| s.last_drift.as_ref()))
            .is_some_and(|d| d.action == "Kept" && d.fields.len() == 3);
        synced_reason(db) == "ProtectionKept" && kept
    })
    .await;
    let record = db.status.unwrap().last_drift.unwrap();
    assert_eq!(record.action, "Kept");
    let fields: Vec<&str> = record.fields.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(
        fields,
        ["backupRetentionPeriod", "multiAZ", "deletionProtection"]
    );
    // Three passes of the operator's: nothing is weakened.
    let unmodified = || async { operator_calls(&operator, "ModifyDBInstance") == 0 };
    common::holds_over_passes(
        &operator,
        ("DBInstance", "db"),
        "nothing weakened",
        unmodified,
    )
    .await;
    let i = common::describe(&rds, &id).await.unwrap();
    assert_eq!(i.deletion_protection(), Some(true));
    assert_eq!(i.backup_retention_period(), Some(7));
    assert_eq!(i.multi_az(), Some(true));
    assert_eq!(operator_calls(&operator, "ModifyDBInstance"), 0);
    assert!(
        common::event_reasons(&client, &ns, "db")
            .await
            .contains(&"DriftDetected".into())
    );

    // A spec edit applies what the spec says, weakening included.
    patch_spec(&api, "db", json!({"copyTagsToSnapshot": true})).await;
    wait_for("the spec applied", TIMEOUT, || {
        let rds = rds.clone();
        let id = id.clone();
        async move {
            let i = common::describe(&rds, &id).await?;
            (i.deletion_protection() == Some(false)
                && i.backup_retention_period() == Some(1)
                && i.multi_az() == Some(false)
                && i.copy_tags_to_snapshot() == Some(true))
            .then_some(())
        }
    })
    .await;
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn a_field_changed_back_every_interval_ends_in_fighting() {
    let Bed {
        api,
        rds,
        id,
        operator,
        ..
    } = ready("fight", &["--drift-interval", "1s"], json!({})).await;
    // A script that puts its own class back whenever it sees the spec's.
    let flips = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let fighting = wait_for("Fighting", Duration::from_secs(150), || {
        let (api, rds, id, flips) = (api.clone(), rds.clone(), id.clone(), flips.clone());
        async move {
            let db = api.get("db").await.ok()?;
            if synced_reason(&db) == "Fighting" {
                return Some(db);
            }
            let i = common::describe(&rds, &id).await?;
            if i.db_instance_status() == Some("available")
                && i.db_instance_class() == Some("db.t3.micro")
            {
                let flipped = (rds.modify_db_instance())
                    .db_instance_identifier(&id)
                    .db_instance_class("db.t3.large")
                    .apply_immediately(true)
                    .send()
                    .await;
                if flipped.is_ok() {
                    flips.fetch_add(1, Ordering::SeqCst);
                }
            }
            None
        }
    })
    .await;
    let (_, _, message) = condition(&fighting, "Synced").unwrap();
    assert!(message.contains("dbInstanceClass"), "{message}");
    assert_eq!(
        operator_calls(&operator, "ModifyDBInstance"),
        3,
        "three corrections"
    );
    let three = || async { operator_calls(&operator, "ModifyDBInstance") == 3 };
    common::holds_over_polls(&operator, "and no fourth", three).await;
    let i = common::describe(&rds, &id).await.unwrap();
    assert_eq!(i.db_instance_class(), Some("db.t3.large"));
    let flips = flips.load(Ordering::SeqCst);
    assert!(flips >= 3, "{flips} flips");

    // A spec change resumes it.
    patch_spec(&api, "db", json!({"dbInstanceClass": "db.t3.small"})).await;
    wait_for("the new class", TIMEOUT, || {
        let (rds, id) = (rds.clone(), id.clone());
        async move {
            let i = common::describe(&rds, &id).await?;
            (i.db_instance_class() == Some("db.t3.small")).then_some(())
        }
    })
    .await;
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn a_hanging_aws_endpoint_fails_healthz_and_nothing_stays_stuck() {
    let (_client, ns, api, _rds) = setup("hang").await;
    let id = unique("hang");
    let target = common::aws_endpoint()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let proxy = Proxy::start(target, true);
    let endpoint = format!("http://127.0.0.1:{}", proxy.port);
    let args: Vec<String> = [
        "--namespace",
        &ns,
        "--busy-poll-interval",
        "1s",
        "--drift-interval",
        "1s",
        "--aws-attempt-timeout",
        "1s",
        "--aws-operation-timeout",
        "2s",
        "--unhealthy-after-polls",
        "2",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    let operator = Operator::spawn(
        &args,
        common::kubeconfig(),
        &[("AWS_ENDPOINT_URL", &endpoint)],
    );
    api.create(&PostParams::default(), &dbinstance("db", &id, json!({})))
        .await
        .expect("create");
    let (code, body) = wait_for("/healthz to fail", Duration::from_secs(30), || {
        let got = operator.get("/healthz");
        async move { got.filter(|(code, _)| *code == 503) }
    })
    .await;
    assert_eq!(code, 503);
    assert!(body.contains("poll"), "{body}");
    assert!(common::describe(&common::rds().await, &id).await.is_none());

    proxy.hang.store(false, Ordering::SeqCst);
    wait_dbi(&api, "db", "ready once AWS answers", TIMEOUT, is_ready).await;
    wait_for("/healthz to pass again", Duration::from_secs(30), || {
        let got = operator.get("/healthz");
        async move { got.filter(|(code, _)| *code == 200) }
    })
    .await;
    common::delete_and_wait(&api, "db").await;
}
