//! spec.activation (plan/activation.rs), a rule a row.

use super::*;
use crate::database::choices::{Activation, ManagementPolicy};

fn wants(activation: Activation, status: &str) -> Facts {
    with(synced(), |f| {
        f.db.spec.activation = Some(activation);
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
        f.db.spec.activation = None;
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
