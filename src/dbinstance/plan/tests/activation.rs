//! spec.activation (plan/activation.rs), a rule a row.

use super::*;
use crate::database::activation::{
    ActivationSchedule, OVERRIDE_ANNOTATION, OverrideStatus, RunningWindow,
};
use crate::database::choices::{Activation, ManagementPolicy};
use std::time::Duration;

fn wants(activation: Activation, status: &str) -> Facts {
    with(synced(), |f| {
        f.db.spec.run.activation = Some(activation);
        let mut o = ours();
        o.status = status.into();
        f.observed = Some(o);
    })
}

fn stopped_before(mut f: Facts, at: &str) -> Facts {
    let status = f.db.status.get_or_insert_default();
    status.common.stopped_at = Some(at.into());
    f
}

fn own(p: &Plan) -> Vec<&'static str> {
    (p.steps.iter())
        .filter_map(|s| match s {
            Step::Own(InstanceStep::Stop { .. }) => Some("Stop"),
            Step::Own(InstanceStep::Start { .. }) => Some("Start"),
            Step::Modify { .. } => Some("Modify"),
            Step::ClearAnnotation(_) => Some("ClearAnnotation"),
            _ => None,
        })
        .collect()
}

fn stopped_at(p: &Plan) -> Option<String> {
    p.status
        .as_ref()
        .and_then(|s| s.fields.common.stopped_at.clone())
}

#[test]
fn an_available_instance_to_be_stopped_is_stopped_and_the_time_kept() {
    let p = plan(&wants(Activation::Stopped, "available"));
    assert_eq!(own(&p), ["Stop"]);
    assert_eq!(p.events.last().map(|e| e.reason.as_str()), Some("Stopping"));
    assert_eq!(stopped_at(&p).as_deref(), Some(NOW));
    assert_eq!(p.requeue, BUSY);
}

#[test]
fn an_instance_rds_started_by_itself_is_stopped_again_and_said_so() {
    let f = stopped_before(
        wants(Activation::Stopped, "available"),
        "2026-11-23T10:00:00Z",
    );
    let p = plan(&f);
    assert_eq!(own(&p), ["Stop"]);
    let event = p.events.last().unwrap();
    assert_eq!(event.reason, "StoppedAgain");
    assert!(
        event.note.contains("2026-11-23T10:00:00Z"),
        "{}",
        event.note
    );
}

#[test]
fn a_stopped_instance_to_stay_stopped_is_left_not_ready_and_synced() {
    let f = stopped_before(
        wants(Activation::Stopped, "stopped"),
        "2026-11-29T10:00:00Z",
    );
    let p = plan(&f);
    assert_eq!(own(&p), Vec::<&str>::new());
    let s = p.status.as_ref().unwrap();
    let ready = s.ready.as_ref().unwrap();
    assert_eq!((ready.ok, ready.reason.as_str()), (false, "Stopped"));
    assert!(s.synced.ok, "{:?}", s.synced);
    assert_eq!(
        stopped_at(&p).as_deref(),
        Some("2026-11-29T10:00:00Z"),
        "kept"
    );
}

#[test]
fn a_stopped_instance_to_run_is_started() {
    let f = stopped_before(
        wants(Activation::Running, "stopped"),
        "2026-11-29T10:00:00Z",
    );
    let p = plan(&f);
    assert_eq!(own(&p), ["Start"]);
    assert_eq!(p.events.last().map(|e| e.reason.as_str()), Some("Starting"));
    assert_eq!(stopped_at(&p), None);
}

#[test]
fn with_activation_left_out_an_instance_stopped_by_hand_is_reported_and_never_started() {
    let f = with(synced(), |f| {
        f.db.spec.run.activation = None;
        let mut o = ours();
        o.status = "stopped".into();
        f.observed = Some(o);
    });
    let p = plan(&f);
    assert_eq!(own(&p), Vec::<&str>::new());
    assert_eq!(stopped_at(&p), None);
}

#[test]
fn what_rds_cannot_stop_is_refused_with_its_reason_and_nothing_sent() {
    let replica = with(wants(Activation::Stopped, "available"), |f| {
        f.observed.as_mut().unwrap().replica_source = Some("source".into());
    });
    let source = with(wants(Activation::Stopped, "available"), |f| {
        f.observed.as_mut().unwrap().read_replicas = vec!["replica".into()];
    });
    let sqlserver = with(wants(Activation::Stopped, "available"), |f| {
        f.db.spec.engine = "sqlserver-se".into();
        f.observed.as_mut().unwrap().multi_az = Some(true);
    });
    // A read replica is refused at apply (CEL) and, observed as one, is a replica mismatch before
    // any activation: the rule itself says why.
    let o = replica.observed.clone().unwrap();
    let why = crate::dbinstance::plan::activation::not_stoppable(&replica, &o);
    assert!(why.is_some_and(|w| w.contains("read replica")), "{why:?}");
    for (why, f, words) in [
        ("a source of replicas", source, "has read replicas"),
        ("Multi-AZ SQL Server", sqlserver, "SQL Server"),
    ] {
        let p = plan(&f);
        assert_eq!(own(&p), Vec::<&str>::new(), "{why}");
        let s = p.status.as_ref().unwrap();
        assert_eq!(
            (s.synced.ok, s.synced.reason.as_str()),
            (false, "CannotStop"),
            "{why}"
        );
        assert!(
            s.synced.message.contains(words),
            "{why}: {}",
            s.synced.message
        );
        assert_eq!(p.requeue, Requeue::AwaitChange, "{why}: no hot loop");
    }
}

#[test]
fn nothing_is_stopped_while_rds_is_busy_observing_only_or_a_change_goes_first() {
    let busy = wants(Activation::Stopped, "stopping");
    let observed = with(wants(Activation::Stopped, "available"), |f| {
        f.db.spec.policies.management_policy = ManagementPolicy::ObserveOnly;
    });
    let changing = with(wants(Activation::Stopped, "available"), |f| {
        f.db.spec.db_instance_class = "db.t3.small".into();
    });
    assert_eq!(own(&plan(&busy)), Vec::<&str>::new());
    assert_eq!(own(&plan(&observed)), Vec::<&str>::new());
    assert_eq!(
        own(&plan(&changing)),
        ["Modify"],
        "the change first, the stop next pass"
    );
}

/// A schedule in UTC that stopped the instance at 09:00 and starts it at 10:00:05 (NOW is
/// 10:00:00 on a Monday); `status` is what RDS shows.
fn scheduled(status: &str) -> Facts {
    with(synced(), |f| {
        f.db.spec.run.activation_schedule = Some(ActivationSchedule {
            time_zone: None,
            running: vec![RunningWindow {
                start: "5 0 10 * * *".into(),
                stop: "0 0 9 * * *".into(),
            }],
        });
        let mut o = ours();
        o.status = status.into();
        f.observed = Some(o);
    })
}

fn annotated(mut f: Facts, value: &str, recorded: Option<OverrideStatus>) -> Facts {
    (f.db.metadata.annotations.get_or_insert_default())
        .insert(OVERRIDE_ANNOTATION.into(), value.into());
    f.db.status
        .get_or_insert_default()
        .common
        .activation_override = recorded;
    f
}

fn recorded(p: &Plan) -> Option<OverrideStatus> {
    (p.status.as_ref()).and_then(|s| s.fields.common.activation_override.clone())
}

#[test]
fn outside_its_window_a_schedule_stops_the_instance_and_says_so() {
    let p = plan(&scheduled("available"));
    assert_eq!(own(&p), ["Stop"]);
    let event = p.events.last().unwrap();
    assert_eq!(event.reason, "Stopping");
    assert!(
        event.note.contains("spec.activationSchedule"),
        "{}",
        event.note
    );
}

#[test]
fn a_stopped_instance_is_looked_at_again_just_after_the_window_opens() {
    let p = plan(&scheduled("stopped"));
    assert_eq!(own(&p), Vec::<&str>::new());
    let s = p.status.as_ref().unwrap();
    assert_eq!(s.ready.as_ref().map(|r| r.reason.as_str()), Some("Stopped"));
    assert_eq!(
        p.requeue,
        Requeue::After(Duration::from_secs(6)),
        "5 s, and a second past"
    );
}

#[test]
fn an_override_runs_the_instance_until_the_next_boundary_and_is_recorded() {
    let f = annotated(scheduled("stopped"), "Running", None);
    let p = plan(&f);
    assert_eq!(own(&p), ["Start"]);
    let note = &p.events.last().unwrap().note;
    assert!(
        note.contains("rds.operator.rs/activation annotation"),
        "{note}"
    );
    let until = Some("2026-11-30T10:00:05Z".to_owned());
    let want = OverrideStatus {
        activation: Activation::Running,
        until,
    };
    assert_eq!(recorded(&p), Some(want));
}

#[test]
fn an_override_past_its_end_is_removed_and_the_schedule_says_again() {
    let ended = OverrideStatus {
        activation: Activation::Running,
        until: Some("2026-11-30T09:00:00Z".into()),
    };
    let f = annotated(scheduled("available"), "Running", Some(ended.clone()));
    let p = plan(&f);
    assert_eq!(own(&p), ["Stop", "ClearAnnotation"]);
    let reasons: Vec<_> = p.events.iter().map(|e| e.reason.as_str()).collect();
    assert!(reasons.contains(&"OverrideEnded"), "{reasons:?}");
    assert_eq!(
        recorded(&p),
        Some(ended),
        "kept until the annotation is gone"
    );
    let gone = with(scheduled("stopped"), |f| {
        f.db.status
            .get_or_insert_default()
            .common
            .activation_override = recorded(&p);
    });
    assert_eq!(recorded(&plan(&gone)), None, "then forgotten");
}

#[test]
fn a_schedule_that_cannot_be_read_changes_nothing_and_is_reported_once() {
    let f = with(scheduled("available"), |f| {
        let schedule = f.db.spec.run.activation_schedule.as_mut().unwrap();
        schedule.time_zone = Some("Mars/Olympus".into());
    });
    let p = plan(&f);
    assert_eq!(own(&p), Vec::<&str>::new());
    let s = p.status.as_ref().unwrap();
    assert_eq!(
        (s.synced.ok, s.synced.reason.as_str()),
        (false, "InvalidActivation")
    );
    assert!(
        s.synced.message.contains("Mars/Olympus"),
        "{}",
        s.synced.message
    );
    let warned = |p: &Plan| p.events.iter().any(|e| e.reason == "InvalidActivation");
    assert!(warned(&p));
    let again = with(f, |f| {
        let status = f.db.status.get_or_insert_default();
        let synced = crate::managed::conditions::condition("Synced", &s.synced, None);
        status.reported.conditions = vec![synced];
    });
    assert!(!warned(&plan(&again)), "once");
}
