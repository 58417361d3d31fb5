//! spec.activation and spec.activationSchedule of a DBCluster (plan/activation.rs over the shared
//! rules), a rule a row.

use super::*;
use crate::database::activation::{ActivationSchedule, RunningWindow};
use crate::database::choices::Activation;
use crate::managed::plan::Requeue;

fn wants(activation: Activation, state: &str) -> Facts {
    with(synced(), |f| {
        f.cluster.spec.run.activation = Some(activation);
        f.observed.as_mut().unwrap().status = state.into();
    })
}

fn stopped_since(mut f: Facts, at: &str) -> Facts {
    f.cluster.status.as_mut().unwrap().common.stopped_at = Some(at.into());
    f
}

fn own(p: &Plan) -> Vec<&'static str> {
    (p.steps.iter())
        .filter(|s| !matches!(s, Step::Secret(_)))
        .map(Step::name)
        .collect()
}

fn last_event(p: &Plan) -> (&str, &str) {
    let e = p.events.last().expect("an Event");
    (e.reason.as_str(), e.note.as_str())
}

#[test]
fn an_available_cluster_to_be_stopped_is_stopped_and_the_time_kept() {
    let p = plan(&wants(Activation::Stopped, "available"));
    assert_eq!(own(&p), ["Stop"]);
    assert_eq!(last_event(&p).0, "Stopping");
    let status = p.status.as_ref().unwrap();
    assert_eq!(
        status.fields.common.stopped_at.as_deref(),
        Some("2026-12-01T00:00:00Z")
    );
    assert_eq!(p.requeue, Requeue::After(PollIntervals::default().busy));
}

#[test]
fn a_stopped_cluster_to_stay_stopped_is_not_ready_synced_and_settled() {
    let f = stopped_since(
        wants(Activation::Stopped, "stopped"),
        "2026-11-30T00:00:00Z",
    );
    let p = plan(&f);
    assert_eq!(own(&p), Vec::<&str>::new());
    let s = p.status.as_ref().unwrap();
    assert_eq!((s.ready.ok, s.ready.reason.as_str()), (false, "Stopped"));
    assert!(s.synced.ok && !s.busy, "{:?}", s.synced);
    assert_eq!(
        s.fields.common.stopped_at.as_deref(),
        Some("2026-11-30T00:00:00Z")
    );
    assert_eq!(p.requeue, Requeue::After(PollIntervals::default().settled));
}

#[test]
fn a_cluster_rds_started_by_itself_is_stopped_again_and_said_so() {
    let f = stopped_since(
        wants(Activation::Stopped, "available"),
        "2026-11-23T00:00:00Z",
    );
    let p = plan(&f);
    assert_eq!(own(&p), ["Stop"]);
    let (reason, note) = last_event(&p);
    assert_eq!(reason, "StoppedAgain");
    assert!(
        note.contains("2026-11-23T00:00:00Z") && note.contains("cluster"),
        "{note}"
    );
}

#[test]
fn a_stopped_cluster_to_run_is_started_and_its_stop_forgotten() {
    let f = stopped_since(
        wants(Activation::Running, "stopped"),
        "2026-11-30T00:00:00Z",
    );
    let p = plan(&f);
    assert_eq!(own(&p), ["Start"]);
    assert_eq!(last_event(&p).0, "Starting");
    assert_eq!(p.status.as_ref().unwrap().fields.common.stopped_at, None);
}

#[test]
fn a_member_of_a_global_database_is_refused_with_rdss_reason_and_nothing_sent() {
    let f = with(wants(Activation::Stopped, "available"), |f| {
        f.observed.as_mut().unwrap().global_cluster = Some("coffee-global".into());
    });
    let p = plan(&f);
    assert_eq!(own(&p), Vec::<&str>::new());
    assert_eq!(synced_reason(&p), "CannotStop");
    let message = &p.status.as_ref().unwrap().synced.message;
    assert!(message.contains("global database"), "{message}");
    assert_eq!(p.requeue, Requeue::AwaitChange, "no hot loop");
}

#[test]
fn a_change_goes_first_and_a_stopped_cluster_waits_with_its_changes() {
    let changing = with(wants(Activation::Stopped, "available"), |f| {
        f.cluster.spec.backup_retention_period = Some(7);
    });
    assert_eq!(own(&plan(&changing)), ["Modify"], "the stop next pass");
    let stopped = with(wants(Activation::Stopped, "stopped"), |f| {
        f.cluster.spec.backup_retention_period = Some(7);
    });
    assert_eq!(
        own(&plan(&stopped)),
        Vec::<&str>::new(),
        "RDS refuses to modify it"
    );
}

#[test]
fn left_out_a_cluster_stopped_by_hand_is_never_started() {
    let f = with(synced(), |f| {
        f.observed.as_mut().unwrap().status = "stopped".into()
    });
    assert_eq!(own(&plan(&f)), Vec::<&str>::new());
}

#[test]
fn a_schedule_stops_the_cluster_outside_its_window_and_looks_again_at_the_next_boundary() {
    // now is 00:00:00 UTC; the window closed at 23:00 and opens at 00:00:30.
    let schedule = ActivationSchedule {
        time_zone: None,
        running: vec![RunningWindow {
            start: "30 0 0 * * *".into(),
            stop: "0 0 23 * * *".into(),
        }],
    };
    let f = with(synced(), |f| {
        f.cluster.spec.run.activation_schedule = Some(schedule);
        f.observed.as_mut().unwrap().status = "stopped".into();
    });
    let p = plan(&f);
    assert_eq!(own(&p), Vec::<&str>::new());
    let s = p.status.as_ref().unwrap();
    assert!(
        s.ready.message.contains("spec.activationSchedule"),
        "{}",
        s.ready.message
    );
    assert_eq!(p.requeue, Requeue::After(Duration::from_secs(31)));
}
