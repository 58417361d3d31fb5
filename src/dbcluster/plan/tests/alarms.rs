//! spec.alarms of a DBCluster (plan/alarms.rs), a rule a row: put on the cluster's dimension,
//! kept, deleted when no more asked and with the DBCluster, their states in status and Events;
//! nothing before the first listing.

use super::*;
use crate::database::alarms::{self as shared, AlarmsSpec};
use crate::rds_state::ObservedAlarm;

fn listed(configs: Vec<crate::rds_state::AlarmConfig>, state: &str) -> Vec<ObservedAlarm> {
    (configs.into_iter())
        .map(|config| ObservedAlarm {
            config,
            state: state.into(),
            reason: Some("Threshold Crossed".into()),
        })
        .collect()
}

fn with_alarms(spec: Option<AlarmsSpec>, held: Option<Vec<ObservedAlarm>>) -> Facts {
    with(synced(), |f| {
        f.cluster.spec.alarms = spec;
        f.alarms = held;
    })
}

fn alarm_step(p: &Plan) -> Option<&shared::AlarmChanges> {
    p.steps.iter().find_map(|s| match s {
        Step::Alarms { changes, .. } => Some(changes),
        _ => None,
    })
}

#[test]
fn a_clusters_alarms_are_put_kept_and_deleted_as_the_spec_says() {
    let wanted = shared::desired_cluster("coffee", &AlarmsSpec::default(), true, None);
    let metrics =
        |c: &shared::AlarmChanges| -> Vec<&str> { c.put.iter().map(|a| a.metric.name()).collect() };
    // (spec, listing) -> puts, deletions, states in status.
    let first = plan(&with_alarms(Some(AlarmsSpec::default()), Some(vec![])));
    let put = alarm_step(&first).expect("the alarms are put");
    assert_eq!(
        metrics(put),
        [
            "AuroraReplicaLagMaximum",
            "CPUUtilization",
            "DatabaseConnections"
        ]
    );
    assert!(
        put.put
            .iter()
            .all(|a| a.cluster && a.identifier == "coffee")
    );
    let shown = &first.status.as_ref().unwrap().fields.common.alarms;
    assert!(
        shown.iter().all(|a| a.state == "INSUFFICIENT_DATA"),
        "{shown:?}"
    );
    let tags = first.steps.iter().find_map(|s| match s {
        Step::Alarms { tags, .. } => Some(tags.clone()),
        _ => None,
    });
    assert_eq!(tags.unwrap().get(OWNER_TAG).map(String::as_str), Some(UID));

    let kept = plan(&with_alarms(
        Some(AlarmsSpec::default()),
        Some(listed(wanted.clone(), "OK")),
    ));
    assert_eq!(alarm_step(&kept), None, "as wanted: nothing sent");

    let no_listing = plan(&with_alarms(Some(AlarmsSpec::default()), None));
    assert_eq!(alarm_step(&no_listing), None, "no guess before the listing");

    let dropped = plan(&with_alarms(None, Some(listed(wanted.clone(), "OK"))));
    let deleted = alarm_step(&dropped).expect("no more asked: deleted");
    assert_eq!(deleted.delete.len(), 3);
    assert!(deleted.put.is_empty());

    // A Multi-AZ DB cluster: its standbys' lag and its storage, of its allocation.
    let multi_az = with(
        with_alarms(Some(AlarmsSpec::default()), Some(vec![])),
        |f| {
            f.cluster.spec.engine = ClusterEngine::Mysql;
            f.observed.as_mut().unwrap().allocated_storage = Some(100);
        },
    );
    let p = plan(&multi_az);
    assert_eq!(
        metrics(alarm_step(&p).expect("put")),
        [
            "ReplicaLag",
            "FreeStorageSpace",
            "CPUUtilization",
            "DatabaseConnections"
        ]
    );
}

#[test]
fn a_firing_cluster_alarm_shows_in_status_with_a_warning_event_once() {
    let wanted = shared::desired_cluster("coffee", &AlarmsSpec::default(), true, None);
    let firing = with_alarms(
        Some(AlarmsSpec::default()),
        Some(listed(wanted.clone(), "ALARM")),
    );
    let p = plan(&firing);
    let shown = &p.status.as_ref().unwrap().fields.common.alarms;
    assert!(shown.iter().all(|a| a.state == "ALARM"));
    let warnings = (p.events.iter())
        .filter(|e| e.reason == "AlarmFiring")
        .count();
    assert_eq!(warnings, 3);
    let again = with(firing, |f| {
        f.cluster.status.as_mut().unwrap().common.alarms = shown.clone();
    });
    let p = plan(&again);
    assert!(
        p.events.iter().all(|e| e.reason != "AlarmFiring"),
        "told once"
    );
}

#[test]
fn deleting_the_dbcluster_deletes_its_alarms_before_the_finalizer_goes() {
    let wanted = shared::desired_cluster("coffee", &AlarmsSpec::default(), true, None);
    let gone = deleting(with_alarms(
        Some(AlarmsSpec::default()),
        Some(listed(wanted.clone(), "OK")),
    ));
    let gone = with(gone, |f| f.observed = None);
    let p = plan(&gone);
    assert_eq!(names(&p), ["Alarms", "RemoveFinalizer"]);
    assert_eq!(alarm_step(&p).unwrap().delete.len(), 3);

    // No listing: what status recorded is deleted.
    let recorded = with(gone.clone(), |f| {
        f.alarms = None;
        let status = f.cluster.status.as_mut().unwrap();
        status.common.alarms = shared::status(&listed(wanted.clone(), "OK"));
    });
    assert_eq!(alarm_step(&plan(&recorded)).unwrap().delete.len(), 3);

    // Still deleting RDS's cluster: the alarms stay until the finalizer goes.
    let waiting = deleting(with_alarms(None, Some(listed(wanted, "OK"))));
    let waiting = with(waiting, |f| {
        f.observed.as_mut().unwrap().status = "deleting".into()
    });
    assert_eq!(alarm_step(&plan(&waiting)), None);
}
