//! spec.activation on a DBInstance, on the emulator's real MariaDB: stopped (the server stops,
//! its data kept), stopped again when RDS starts it by itself (the 7 days are
//! `auto_start_after` seconds here), and started with its rows. spec.activationSchedule: stopped
//! and started across windows, and an override that ends at the next boundary.

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

/// Windows of 15 s: the schedule opens at :00 and :30 and closes at :15 and :45 of each minute.
fn fifteen_second_windows() -> serde_json::Value {
    json!({"timeZone": "Europe/Berlin",
           "running": [{"start": "0,30 * * * * *", "stop": "15,45 * * * * *"}]})
}

#[tokio::test]
async fn a_schedule_stops_and_starts_an_instance_across_two_windows_and_an_override_ends_at_the_next()
 {
    let (client, ns, api, _rds) = setup("schedule").await;
    let id = common::unique("schedule");
    let _operator = Operator::start(&ns);
    let spec = json!({"activationSchedule": fifteen_second_windows()});
    (api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await)
        .expect("create");
    // Whichever window it was made in, a stop, a start and a stop again follow, one call each.
    for (what, wanted, call, count) in [
        (
            "stopped as the window closes",
            "stopped",
            "StopDBInstance",
            1,
        ),
        (
            "running as the next opens",
            "available",
            "StartDBInstance",
            1,
        ),
        ("stopped as it closes", "stopped", "StopDBInstance", 2),
    ] {
        let seen = wait_dbi(&api, "db", what, TIMEOUT, |db| state(db) == wanted).await;
        let sent = common::calls(&id, call);
        assert!(sent >= count, "{what}: {call} sent {sent} times");
        if wanted == "stopped" {
            let ready = condition(&seen, "Ready").map(|c| c.1);
            assert_eq!(ready.as_deref(), Some("Stopped"), "{what}");
        }
    }
    // One call per boundary: no window sent a second stop or start.
    let (stops, starts) = (
        common::calls(&id, "StopDBInstance"),
        common::calls(&id, "StartDBInstance"),
    );
    assert!(
        stops.abs_diff(starts) <= 1,
        "{stops} stops, {starts} starts"
    );

    // A schedule whose window opens once a year keeps it stopped (a boundary each 15 s, each a
    // stop). An override runs it now, until the schedule's next boundary; then the annotation is
    // removed and the schedule says again.
    let yearly = json!({"spec": {"activationSchedule": {
        "running": [{"start": "0 0 3 1 1 *", "stop": "15,45 * * * * *"}]}}});
    (api.patch("db", &PatchParams::default(), &Patch::Merge(&yearly))
        .await)
        .unwrap();
    wait_dbi(
        &api,
        "db",
        "stopped by the yearly schedule",
        TIMEOUT,
        |db| state(db) == "stopped",
    )
    .await;
    let starts = common::calls(&id, "StartDBInstance");
    let annotate = json!({"metadata": {"annotations": {"rds.operator.rs/activation": "Running"}}});
    (api.patch("db", &PatchParams::default(), &Patch::Merge(&annotate))
        .await)
        .unwrap();
    let overridden = wait_dbi(&api, "db", "running as the override says", TIMEOUT, |db| {
        state(db) == "available"
            && (db.status.as_ref()).is_some_and(|s| s.common.activation_override.is_some())
    })
    .await;
    assert_eq!(common::calls(&id, "StartDBInstance"), starts + 1);
    let recorded = overridden
        .status
        .unwrap()
        .common
        .activation_override
        .unwrap();
    assert!(recorded.until.is_some(), "{recorded:?}");
    wait_for(
        "the override ended, its annotation removed",
        TIMEOUT,
        || async {
            let db = api.get("db").await.ok()?;
            let annotated = (db.metadata.annotations.as_ref())
                .is_some_and(|a| a.contains_key("rds.operator.rs/activation"));
            let reasons = common::event_reasons(&client, &ns, "db").await;
            (!annotated && reasons.contains(&"OverrideEnded".to_owned())).then_some(())
        },
    )
    .await;
    wait_dbi(
        &api,
        "db",
        "stopped again as the schedule says",
        TIMEOUT,
        |db| {
            state(db) == "stopped"
                && (db.status.as_ref()).is_some_and(|s| s.common.activation_override.is_none())
        },
    )
    .await;
    common::delete_and_wait(&api, "db").await;
}

/// A DBCluster with activation Stopped: StopDBCluster stops it with its member (whose DBInstance
/// reports it stopped, and sends no StopDBInstance), its writer serves no one; Running starts it
/// with its rows.
#[tokio::test]
async fn a_stopped_cluster_stops_with_its_member_and_runs_again_with_its_rows() {
    use crate::clusters::{cluster, member, ready};
    use rds_operator::dbcluster::DBCluster;

    let (client, ns, instances, _rds) = setup("aurora-stop").await;
    let _operator = Operator::start(&ns);
    let (id, one) = (common::unique("aurs"), common::unique("aurs-1"));
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let real = json!({"tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    (clusters
        .create(&PostParams::default(), &cluster(&id, real))
        .await)
        .expect("create");
    (instances
        .create(&PostParams::default(), &member("one", &one, json!({})))
        .await)
        .expect("create member");
    wait_object(&clusters, "coffee", "the cluster Ready", ready).await;
    wait_dbi(&instances, "one", "the member Ready", TIMEOUT, is_ready).await;
    let keys = (common::secret_data(&client, &ns, "coffee-db").await).expect("the Secret");
    let (made, out) = common::mariadb_keys(
        &keys,
        &keys["password"],
        "CREATE TABLE beans (id INT PRIMARY KEY); INSERT INTO beans VALUES (7)",
    );
    assert!(made, "{out}");

    let stop = json!({"spec": {"activation": "Stopped"}});
    (clusters
        .patch("coffee", &PatchParams::default(), &Patch::Merge(&stop))
        .await)
        .unwrap();
    wait_object(&clusters, "coffee", "stopped, not Ready, Synced", |c| {
        let s = c.status.as_ref();
        s.and_then(|s| s.status.as_deref()) == Some("stopped")
            && object_condition(c, "Ready").is_some_and(|r| r.0 == "False" && r.1 == "Stopped")
            && object_condition(c, "Synced").is_some_and(|r| r.0 == "True")
    })
    .await;
    wait_dbi(
        &instances,
        "one",
        "the member stopped with it",
        TIMEOUT,
        |db| state(db) == "stopped",
    )
    .await;
    assert_eq!(common::calls(&id, "StopDBCluster"), 1);
    assert_eq!(
        common::calls(&one, "StopDBInstance"),
        0,
        "the member stops with its cluster"
    );
    let (served, _) = common::mariadb_keys(&keys, &keys["password"], "SELECT 1");
    assert!(!served, "a stopped cluster serves no one");

    let run = json!({"spec": {"activation": "Running"}});
    (clusters
        .patch("coffee", &PatchParams::default(), &Patch::Merge(&run))
        .await)
        .unwrap();
    wait_object(&clusters, "coffee", "Ready again", ready).await;
    wait_dbi(&instances, "one", "the member running", TIMEOUT, is_ready).await;
    let (read, out) =
        common::wait_sql(&keys, &keys["host"], "SELECT id FROM beans", "7", TIMEOUT).await;
    assert!(read && out.trim() == "7", "the row is there: {out}");
    assert_eq!(common::calls(&id, "StartDBCluster"), 1);
    common::delete_and_wait(&instances, "one").await;
    (clusters.delete("coffee", &Default::default()).await).unwrap();
    common::wait_object_gone(&clusters, "coffee").await;
}
