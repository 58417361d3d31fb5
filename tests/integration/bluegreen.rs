//! upgradePolicy BlueGreen on the emulator's blue/green deployments and a real engine: a major
//! upgrade is one CreateBlueGreenDeployment and no ModifyDBInstance, nothing is switched over
//! until a person approves, then one SwitchoverBlueGreenDeployment; the identifier and the
//! connection Secret stay the same byte for byte, the engine version is the new one, the rows are
//! still there, and the old instance is kept and reported. A failed switchover deletes nothing.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbinstance::{BlueGreenStatus, DBInstance};
use serde_json::json;

use crate::common::{
    Operator, TIMEOUT, Writer, calls, dbinstance, describe, is_ready, mariadb_keys, moto_ext_post,
    secret_data, setup, synced_reason, unique, wait_dbi, wait_gone, written_rows,
};

fn blue_green(db: &DBInstance) -> Option<&BlueGreenStatus> {
    db.status.as_ref()?.blue_green.as_ref()
}

fn secret() -> serde_json::Value {
    json!({"name": "coffee-db", "extraKeys": {
        "APP_DB_HOST": "{{ host }}", "APP_DB_USER": "{{ username }}",
        "APP_DB_PASSWORD": "{{ password }}", "APP_DB_NAME": "{{ dbname }}",
    }})
}

async fn patch(api: &Api<DBInstance>, name: &str, patch: serde_json::Value) {
    (api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await)
        .expect("patch DBInstance");
}

/// Deletes the DBInstance without a final snapshot and waits until it is gone.
async fn remove(api: &Api<DBInstance>, name: &str) {
    patch(api, name, json!({"spec": {"deletionPolicy": "Delete"}})).await;
    crate::common::delete(api, name).await;
    wait_gone(api, name, TIMEOUT).await;
}

/// Makes the next switchover of `bg` fail (moto_ext stops green's replication), approves it with
/// `approve`, and waits until the DBInstance reports the failure with RDS's message.
async fn switchover_fails(
    api: &Api<DBInstance>,
    bg: &BlueGreenStatus,
    approve: serde_json::Value,
) -> DBInstance {
    let fail = format!(
        "/_rds_ext/blue-green?fail-switchover={}",
        bg.deployment.deployment_identifier
    );
    assert!(moto_ext_post(&fail));
    patch(api, "db", approve).await;
    let failed = wait_dbi(api, "db", "the failed switchover reported", TIMEOUT, |db| {
        synced_reason(db) == "SwitchoverFailed"
    })
    .await;
    let message = crate::common::condition(&failed, "Synced").unwrap().2;
    assert!(
        message.contains("did not catch up"),
        "RDS's message: {message}"
    );
    failed
}

/// Asks for MySQL 8.4 and waits until the deployment RDS made for it awaits approval.
async fn upgrade_awaiting_approval(api: &Api<DBInstance>) -> BlueGreenStatus {
    let upgrade = json!({"spec": {"engineVersion": "8.4.3", "allowMajorVersionUpgrade": true}});
    patch(api, "db", upgrade).await;
    let waiting = wait_dbi(
        api,
        "db",
        "the deployment awaiting approval",
        TIMEOUT,
        |db| synced_reason(db) == "SwitchoverAwaitingApproval",
    )
    .await;
    blue_green(&waiting).unwrap().clone()
}

#[tokio::test]
async fn a_major_upgrade_switches_over_only_once_approved_and_keeps_the_old_instance() {
    let (client, ns, instances, rds) = setup("bluegreen").await;
    let operator = Operator::start(&ns);
    let id = unique("bg");
    let mut db = dbinstance(
        "db",
        &id,
        json!({"upgradePolicy": "BlueGreen", "backupRetentionPeriod": 1, "connectionSecret": secret()}),
    );
    db.spec.tags.push(rds_operator::crd::Tag {
        key: "moto-ext:real-engine".into(),
        value: "true".into(),
    });
    instances
        .create(&PostParams::default(), &db)
        .await
        .expect("create");
    wait_dbi(&instances, "db", "the instance Ready", TIMEOUT, is_ready).await;
    let s = secret_data(&client, &ns, "coffee-db")
        .await
        .expect("the Secret");
    let sql =
        "CREATE TABLE suppliers (name VARCHAR(40)); INSERT INTO suppliers VALUES ('Beans & Co');";
    let (ok, out) = mariadb_keys(&s, &s["password"], sql);
    assert!(ok, "write before the upgrade: {out}");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let before = secrets.get("coffee-db").await.expect("the Secret").data;

    // A client writes a row every 0.5 s through the Secret from before the edit until 10 s after
    // the switchover: green replicates blue all along, and the switchover waits until it has
    // everything, so every acknowledged row is there afterwards.
    let writer = Writer::start(&s, Duration::from_millis(500));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let bg = upgrade_awaiting_approval(&instances).await;
    assert_eq!(bg.deployment.status, "AVAILABLE");
    assert!(
        bg.green_instance
            .as_deref()
            .is_some_and(|g| g.starts_with(&format!("{id}-green-"))),
        "{bg:?}"
    );
    assert!(bg.green_endpoint.is_some(), "{bg:?}");
    assert_eq!(bg.deployment.changes[0].field, "engineVersion");
    assert!(
        bg.deployment
            .tasks
            .iter()
            .any(|t| t.name == "DB_ENGINE_VERSION_UPGRADE"),
        "{bg:?}"
    );
    let deployment = bg.deployment.deployment_identifier.clone();
    assert_eq!(calls(&id, "CreateBlueGreenDeployment"), 1);
    assert_eq!(calls(&id, "ModifyDBInstance"), 0, "no in-place upgrade");
    // No switchover without approval, over three passes of the operator's.
    let unapproved = || async {
        calls(&deployment, "SwitchoverBlueGreenDeployment") == 0
            && calls(&id, "CreateBlueGreenDeployment") == 1
    };
    crate::common::holds_over_passes(
        &operator,
        ("DBInstance", "db"),
        "no switchover, made once",
        unapproved,
    )
    .await;

    patch(
        &instances,
        "db",
        json!({"spec": {"switchover": deployment}}),
    )
    .await;
    let done = wait_dbi(
        &instances,
        "db",
        "switched over and in sync",
        TIMEOUT,
        |db| {
            synced_reason(db) == "Synced"
                && blue_green(db).is_some_and(|b| b.deployment.status == "SWITCHOVER_COMPLETED")
                && db.status.as_ref().unwrap().common.engine_version.as_deref() == Some("8.4.3")
        },
    )
    .await;
    assert_eq!(calls(&deployment, "SwitchoverBlueGreenDeployment"), 1);
    let status = done.status.clone().unwrap();
    assert_eq!(status.db_instance_identifier.as_deref(), Some(id.as_str()));
    let old = format!("{id}-old1");
    assert_eq!(
        blue_green(&done).unwrap().old_instance.as_deref(),
        Some(old.as_str())
    );
    let rds_now = describe(&rds, &id)
        .await
        .expect("the instance under its name");
    assert_eq!(rds_now.engine_version(), Some("8.4.3"));
    assert!(
        describe(&rds, &old).await.is_some(),
        "the old instance is kept"
    );
    // The same Secret, byte for byte, and the rows are still there.
    tokio::time::sleep(Duration::from_secs(10)).await;
    crate::common::nothing_lost(writer, &s, "blue/green");
    let after = secrets.get("coffee-db").await.expect("the Secret").data;
    assert_eq!(after, before, "the connection Secret is unchanged");
    assert_eq!(
        calls(&old, "DeleteDBInstance"),
        0,
        "the old instance is never deleted on its own"
    );
    remove(&instances, "db").await;
}

#[tokio::test]
async fn a_failed_switchover_is_reported_and_deletes_nothing() {
    let (_client, ns, instances, rds) = setup("bluegreen-fail").await;
    let operator = Operator::start(&ns);
    let id = unique("bgf");
    let db = dbinstance(
        "db",
        &id,
        json!({"upgradePolicy": "BlueGreen", "backupRetentionPeriod": 1}),
    );
    instances
        .create(&PostParams::default(), &db)
        .await
        .expect("create");
    wait_dbi(&instances, "db", "the instance Ready", TIMEOUT, is_ready).await;
    let bg = upgrade_awaiting_approval(&instances).await;
    let green = bg.green_instance.clone().unwrap();
    let approve = json!({"metadata": {"annotations": {"rds.operator.rs/switchover": "true"}}});
    let failed = switchover_fails(&instances, &bg, approve).await;
    let annotations = failed.metadata.annotations.clone().unwrap_or_default();
    assert!(
        !annotations.contains_key("rds.operator.rs/switchover"),
        "the approval is used up"
    );
    let kept = || async {
        let mut kept = calls(
            &bg.deployment.deployment_identifier,
            "DeleteBlueGreenDeployment",
        ) == 0;
        for instance in [&id, &green] {
            kept &= calls(instance, "DeleteDBInstance") == 0;
        }
        kept
    };
    crate::common::holds_over_polls(&operator, "nothing deleted", kept).await;
    for instance in [&id, &green] {
        assert_eq!(
            calls(instance, "DeleteDBInstance"),
            0,
            "{instance} is not deleted"
        );
        assert!(
            describe(&rds, instance).await.is_some(),
            "{instance} is still there"
        );
    }
    assert_eq!(
        calls(
            &bg.deployment.deployment_identifier,
            "DeleteBlueGreenDeployment"
        ),
        0
    );
    // Deleting the DBInstance takes the deployment (never its target), then green, then blue.
    remove(&instances, "db").await;
    assert_eq!(
        calls(
            &bg.deployment.deployment_identifier,
            "DeleteBlueGreenDeployment"
        ),
        1
    );
    assert_eq!(calls(&green, "DeleteDBInstance"), 1);
}

/// A switchover whose green cannot catch up (its replication stopped, injected) rolls back after
/// the switchover timeout, as RDS does: SwitchoverFailed with RDS's message, blue takes writes
/// again, nothing is renamed, and every row a client was told was written is on blue.
#[tokio::test]
async fn a_switchover_that_cannot_catch_up_rolls_back_and_loses_nothing() {
    let (client, ns, instances, rds) = setup("bluegreen-rollback").await;
    let _operator = Operator::start(&ns);
    let id = unique("bgr");
    let extra = json!({"upgradePolicy": "BlueGreen", "backupRetentionPeriod": 1,
        "connectionSecret": secret(), "switchoverTimeout": 30});
    let mut db = dbinstance("db", &id, extra);
    db.spec.tags.push(rds_operator::crd::Tag {
        key: "moto-ext:real-engine".into(),
        value: "true".into(),
    });
    (instances.create(&PostParams::default(), &db).await).expect("create");
    wait_dbi(&instances, "db", "the instance Ready", TIMEOUT, is_ready).await;
    let s = secret_data(&client, &ns, "coffee-db")
        .await
        .expect("the Secret");
    let writer = Writer::start(&s, Duration::from_millis(500));
    let bg = upgrade_awaiting_approval(&instances).await;
    let approve = json!({"spec": {"switchover": bg.deployment.deployment_identifier}});
    switchover_fails(&instances, &bg, approve).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let written = writer.stop();
    println!("rolled back with a writer: {}", written.summary());
    let lost = written.lost(&written_rows(&s));
    assert!(
        lost.is_empty(),
        "acknowledged rows lost by the rollback: {lost:?}"
    );
    let (ok, out) = mariadb_keys(&s, &s["password"], "INSERT INTO writes VALUES (1000000)");
    assert!(ok, "blue takes writes again after the rollback: {out}");
    let blue = describe(&rds, &id).await.expect("blue under its name");
    assert_eq!(
        blue.engine_version(),
        Some("8.0.42"),
        "nothing switched over"
    );
    assert!(
        describe(&rds, &format!("{id}-old1")).await.is_none(),
        "nothing renamed"
    );
    remove(&instances, "db").await;
}
