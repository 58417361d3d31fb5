//! Pending maintenance on DBInstance: an action injected in the emulator is listed in status;
//! under Report it is never applied (until an annotation approves it, then at once, once); under
//! NextWindow it is opted in once and applied by RDS inside the instance's maintenance window,
//! not before.

use std::time::Duration;

use chrono::{Datelike, Timelike, Utc};
use kube::api::{Patch, PatchParams, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use crate::common::{
    self, Operator, TIMEOUT, calls, dbinstance, is_ready, patch_spec, setup, unique, wait_dbi,
    wait_for,
};

const ACTION: &str = "system-update";

/// How soon a listing's change reaches status: a few polls, under the settled requeue.
const WOKEN: Duration = Duration::from_secs(30);

/// The actions the emulator applied to an instance: (opt-in type, when, epoch seconds).
fn applied(identifier: &str) -> Vec<(String, f64)> {
    let body = common::moto_ext_get(&format!("/_rds_ext/maintenance?identifier={identifier}"))
        .expect("the emulator lists applied maintenance");
    let list: Vec<serde_json::Value> = serde_json::from_str(&body).expect("JSON");
    (list.iter())
        .map(|a| {
            let opt_in = a["opt_in"].as_str().unwrap_or_default().to_owned();
            (opt_in, a["at"].as_f64().unwrap_or_default())
        })
        .collect()
}

/// The pending actions the DBInstance's status lists: (action, opt-in status).
fn listed(db: &DBInstance) -> Vec<(String, Option<String>)> {
    let status = db.status.as_ref();
    (status
        .map(|s| s.common.pending_maintenance_actions.clone())
        .unwrap_or_default())
    .into_iter()
    .map(|a| (a.action, a.opt_in_status))
    .collect()
}

/// A weekly window (ddd:hh24:mi-ddd:hh24:mi, UTC) of an hour from `start`.
fn window(start: chrono::DateTime<Utc>) -> String {
    let end = start + chrono::Duration::minutes(60);
    let part = |t: chrono::DateTime<Utc>| {
        let day = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
        let day = day[t.weekday().num_days_from_monday() as usize];
        format!("{day}:{:02}:{:02}", t.hour(), t.minute())
    };
    format!("{}-{}", part(start), part(end))
}

#[tokio::test]
async fn pending_maintenance_is_listed_never_applied_under_report_and_applied_once_in_the_window_under_next_window()
 {
    let (_client, ns, api, _rds) = setup("maint").await;
    let operator = Operator::start(&ns);
    let (report, next) = (unique("maint-r"), unique("maint-n"));
    let later = window(Utc::now() + chrono::Duration::days(2));
    // RDS refuses a maintenance window that overlaps the daily backup window (the emulator too):
    // the backup window is set six hours away from every window this test uses.
    let backup_hour = (Utc::now().hour() + 6) % 24;
    let backup = format!("{backup_hour:02}:00-{backup_hour:02}:30");
    api.create(
        &PostParams::default(),
        &dbinstance("report", &report, json!({})),
    )
    .await
    .expect("create");
    let spec = json!({
        "maintenancePolicy": "NextWindow",
        "preferredMaintenanceWindow": later,
        "preferredBackupWindow": backup,
    });
    api.create(&PostParams::default(), &dbinstance("next", &next, spec))
        .await
        .expect("create");
    wait_dbi(&api, "report", "ready", TIMEOUT, is_ready).await;
    wait_dbi(&api, "next", "ready", TIMEOUT, is_ready).await;
    for id in [&report, &next] {
        let path = format!("/_rds_ext/maintenance?identifier={id}&action={ACTION}");
        assert!(common::moto_ext_post(&path), "inject {path}");
    }

    // Listed in status; under NextWindow opted in once for a window two days away. The listing
    // that finds the action wakes the DBInstance (a poll is 5 s here), long before its settled
    // requeue (ten drift intervals, 50 s) would look again.
    wait_dbi(&api, "report", "the action listed", WOKEN, |db| {
        listed(db) == vec![(ACTION.to_owned(), None)]
    })
    .await;
    let opted = Some("next-maintenance".to_owned());
    wait_dbi(&api, "next", "the action opted in", WOKEN, |db| {
        listed(db) == vec![(ACTION.to_owned(), opted.clone())]
    })
    .await;
    // Sent once, while the operator lists the location three times.
    let once = || async { calls(&next, "ApplyPendingMaintenanceAction") == 1 };
    crate::common::holds_over_polls(&operator, "sent once", once).await;
    assert_eq!(applied(&next), vec![], "not applied before its window");
    assert_eq!(calls(&report, "ApplyPendingMaintenanceAction"), 0);
    assert_eq!(applied(&report), vec![], "never applied under Report");

    // The window comes (moved to now): RDS applies the action inside it, with no second call.
    let start = Utc::now() - chrono::Duration::minutes(1);
    patch_spec(
        &api,
        "next",
        json!({"preferredMaintenanceWindow": window(start)}),
    )
    .await;
    let done = wait_for("the action applied in the window", TIMEOUT, || async {
        let a = applied(&next);
        (!a.is_empty()).then_some(a)
    })
    .await;
    let (from, to) = (start.timestamp() as f64, (start.timestamp() + 3600) as f64);
    assert!(
        done.len() == 1 && done[0].0 == "next-maintenance" && (from..to).contains(&done[0].1),
        "applied once, inside {from}..{to}: {done:?}"
    );
    wait_dbi(&api, "next", "no action pending", TIMEOUT, |db| {
        listed(db).is_empty()
    })
    .await;
    assert_eq!(calls(&next, "ApplyPendingMaintenanceAction"), 1);

    // Under Report, an approval applies the one action it names, at once, once.
    let approve =
        json!({"metadata": {"annotations": {"rds.operator.rs/apply-maintenance": ACTION}}});
    (api.patch("report", &PatchParams::default(), &Patch::Merge(&approve))
        .await)
        .expect("approve");
    wait_for("the approved action applied", TIMEOUT, || async {
        (!applied(&report).is_empty()).then_some(())
    })
    .await;
    wait_dbi(&api, "report", "no action pending", TIMEOUT, |db| {
        listed(db).is_empty() && is_ready(db)
    })
    .await;
    let done = applied(&report);
    assert!(done.len() == 1 && done[0].0 == "immediate", "{done:?}");
    assert_eq!(calls(&report, "ApplyPendingMaintenanceAction"), 1);
}

/// A DBCluster under `Immediate`: the action injected is listed, then applied at once, once.
#[tokio::test]
async fn a_clusters_pending_maintenance_is_applied_at_once_under_immediate_and_only_once() {
    use rds_operator::dbcluster::DBCluster;
    let (client, ns, _api, _rds) = setup("cmaint").await;
    let operator = Operator::start(&ns);
    let id = unique("cmaint");
    let clusters: kube::Api<DBCluster> = kube::Api::namespaced(client.clone(), &ns);
    let spec = json!({"maintenancePolicy": "Immediate"});
    let cluster = crate::clusters::cluster(&id, spec);
    (clusters.create(&PostParams::default(), &cluster).await).expect("the DBCluster");
    common::wait_object(&clusters, "coffee", "Ready", crate::clusters::ready).await;
    let path = format!("/_rds_ext/maintenance?identifier={id}&cluster=1&action=db-upgrade");
    assert!(common::moto_ext_post(&path), "inject {path}");
    let done = wait_for("the action applied", TIMEOUT, || async {
        let a = applied(&id);
        (!a.is_empty()).then_some(a)
    })
    .await;
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].0, "immediate");
    common::wait_object(&clusters, "coffee", "no action pending", |c| {
        c.status
            .as_ref()
            .is_some_and(|s| s.common.pending_maintenance_actions.is_empty())
    })
    .await;
    // Sent once, over three passes of the operator's.
    let once = || async { calls(&id, "ApplyPendingMaintenanceAction") == 1 };
    crate::common::holds_over_passes(&operator, ("DBCluster", "coffee"), "sent once", once).await;
    assert_eq!(applied(&id).len(), 1);
    (clusters.delete("coffee", &Default::default()).await).expect("delete");
    common::wait_object_gone(&clusters, "coffee").await;
}
