//! spec.activation on a DBInstance, on the emulator's real MariaDB: stopped (the server stops,
//! its data kept), stopped again when RDS starts it by itself (the 7 days are
//! `auto_start_after` seconds here), and started with its rows.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::common::{self, *};
use crate::users::{as_master, real};

fn state(db: &rds_operator::dbinstance::DBInstance) -> String {
    (db.status.as_ref())
        .and_then(|s| s.db_instance_status.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_stopped_instance_stays_stopped_through_rdss_own_start_and_runs_again_with_its_rows() {
    let (client, ns, api, _rds) = setup("activation").await;
    let id = common::unique("activation");
    let _operator = Operator::start(&ns);
    let spec = json!({"connectionSecret": {"name": "db-connection"}, "tags": real()["tags"]});
    (api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await)
        .expect("create");
    let db = wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let (made, out) = as_master(
        &db,
        "CREATE TABLE beans (id INT PRIMARY KEY); INSERT INTO beans VALUES (7)",
    );
    assert!(made, "{out}");

    // RDS starts a stopped instance by itself after 7 days: here after 15 s.
    assert!(common::moto_ext_post(
        "/_rds_ext/config?auto_start_after=15"
    ));
    let stop = json!({"spec": {"activation": "Stopped"}});
    (api.patch("db", &PatchParams::default(), &Patch::Merge(&stop))
        .await)
        .unwrap();
    let stopped = wait_dbi(&api, "db", "stopped, not Ready, Synced", TIMEOUT, |db| {
        state(db) == "stopped"
            && condition(db, "Ready").is_some_and(|c| c.0 == "False" && c.1 == "Stopped")
            && condition(db, "Synced").is_some_and(|c| c.0 == "True")
    })
    .await;
    let at = stopped
        .status
        .as_ref()
        .and_then(|s| s.common.stopped_at.clone());
    assert!(at.is_some(), "the stop is recorded");
    let (served, _) = as_master(&stopped, "SELECT 1");
    assert!(!served, "a stopped instance serves no one");
    assert_eq!(common::calls(&id, "StopDBInstance"), 1);

    // The first stop's own start is 15 s away; later stops wait the 7 days again.
    assert!(common::moto_ext_post(
        "/_rds_ext/config?auto_start_after=604800"
    ));
    // RDS starts it by itself: the operator stops it again, and says so.
    wait_for("RDS's own start, stopped again", TIMEOUT, || async {
        let reasons = common::event_reasons(&client, &ns, "db").await;
        reasons.contains(&"StoppedAgain".to_owned()).then_some(())
    })
    .await;
    wait_dbi(&api, "db", "stopped again", TIMEOUT, |db| {
        state(db) == "stopped"
    })
    .await;
    assert!(common::calls(&id, "StopDBInstance") >= 2);

    let run = json!({"spec": {"activation": "Running"}});
    (api.patch("db", &PatchParams::default(), &Patch::Merge(&run))
        .await)
        .unwrap();
    // Ready once the operator has acted on Running (an instance RDS started by itself meanwhile
    // is Ready for a moment too, and stopped again while the spec still said Stopped).
    let running = wait_dbi(&api, "db", "Ready again, as Running says", TIMEOUT, |db| {
        let seen = (db.status.as_ref()).and_then(|s| s.reported.observed_generation);
        is_ready(db) && seen == db.metadata.generation
    })
    .await;
    assert_eq!(
        running
            .status
            .as_ref()
            .and_then(|s| s.common.stopped_at.clone()),
        None
    );
    let (read, out) = as_master(&running, "SELECT id FROM beans");
    assert!(read && out.trim() == "7", "the row is there: {out}");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    assert!(secrets.get_opt("db-connection").await.unwrap().is_some());
    common::delete_and_wait(&api, "db").await;
}
