//! Taking over what exists: pausing a DBInstance during an incident.

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::crd::{DBInstance, PAUSED_ANNOTATION};
use serde_json::json;

use crate::common::{
    self, Operator, dbinstance, is_ready, setup, synced_reason, unique, wait_dbi, wait_for,
};

const TIMEOUT: Duration = Duration::from_secs(90);

async fn annotate(api: &Api<DBInstance>, value: Option<&str>) {
    let patch = json!({"metadata": {"annotations": {PAUSED_ANNOTATION: value}}});
    api.patch("db", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("annotate");
}

#[tokio::test]
async fn a_paused_dbinstance_makes_no_rds_call_until_it_resumes() {
    let (client, ns, api, rds) = setup("paused").await;
    let _operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    let id = unique("paused");
    api.create(&PostParams::default(), &dbinstance("db", &id, json!({})))
        .await
        .expect("create");
    wait_dbi(&api, "db", "ready", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Synced"
    })
    .await;

    annotate(&api, Some("true")).await;
    wait_dbi(&api, "db", "ReconcilePaused", TIMEOUT, |db| {
        synced_reason(db) == "ReconcilePaused"
    })
    .await;
    assert!(
        common::event_reasons(&client, &ns, "db")
            .await
            .contains(&"ReconcilePaused".into())
    );
    // Someone changes the instance during the incident.
    (rds.modify_db_instance())
        .db_instance_identifier(&id)
        .db_instance_class("db.t3.large")
        .apply_immediately(true)
        .send()
        .await
        .expect("out-of-band modify");
    let before = common::server_calls(&id);
    // Three drift intervals and more.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let after = common::server_calls(&id);
    assert_eq!(after, before, "no RDS call named the instance while paused");
    let db = api.get("db").await.expect("get");
    assert!(is_ready(&db), "Ready stays what was last observed");

    // Unpaused: the drift is corrected.
    annotate(&api, None).await;
    wait_for("the class put back", TIMEOUT, || {
        let (rds, id) = (rds.clone(), id.clone());
        async move {
            let i = common::describe(&rds, &id).await?;
            (i.db_instance_class() == Some("db.t3.micro")).then_some(())
        }
    })
    .await;
    common::delete_and_wait(&api, "db").await;
}
