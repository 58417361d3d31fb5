//! Table tests of the plan: the status written: errors by class, RDS answers, readiness, conditions, the restorable time, failures, backoff.

use super::*;
use crate::managed::conditions;

#[test]
fn aws_errors_are_reported_by_class() {
    let reasons = [
        (ErrorClass::InvalidInput, "InvalidRequest"),
        (ErrorClass::Retryable, "AWSUnavailable"),
        (ErrorClass::AlreadyExists, "AlreadyExists"),
        (ErrorClass::NotFound, "NotFound"),
    ];
    for (class, reason) in reasons {
        let error = Error::Aws(AwsError {
            operation: "CreateDBInstance",
            class,
            code: "Code".into(),
            message: "AWS says no".into(),
            wait: None,
            location: None,
        });
        let (got_reason, message) = error.user_facing().expect("user-facing");
        assert_eq!(got_reason, reason);
        assert_eq!(message, "CreateDBInstance failed: Code: AWS says no");
        let previous = synced().db.status;
        let (status, event) = status::failure(previous.as_ref(), &got_reason, &message);
        assert_eq!(Some(status), failed(previous.as_ref(), reason, &message));
        assert_eq!(event.map(|e| e.reason), Some(reason.to_owned()));
    }
    // The same failure again publishes no second Event.
    let mut previous = synced().db.status.unwrap();
    previous.reported.conditions = vec![conditions::condition(
        "Synced",
        &ConditionPlan::new(false, "AWSUnavailable", "m"),
        None,
    )];
    assert_eq!(
        status::failure(Some(&previous), "AWSUnavailable", "m").1,
        None
    );
}

#[test]
fn the_written_status_takes_rds_answers() {
    let planned = StatusPlan {
        secret_pending: None,
        held: false,
        fields: creating_fields(Some("pw")),
        ready: None,
        synced: ConditionPlan::new(true, "Synced", CREATING_SYNCED),
    };
    let mut created = ours();
    created.status = "creating".into();
    let written = status::finish(
        &planned,
        None,
        Some(&Response::Created(created)),
        Some(1),
        NOW,
    );
    assert_eq!(written.common.arn.as_deref(), Some(ARN));
    assert_eq!(
        written.common.master_user_password_hash,
        Some(spec::password_hash(&key(), UID, "pw"))
    );
    assert_eq!(written.reported.observed_generation, Some(1));
    let ready = written
        .reported
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "Creating")
    );
    assert_eq!(ready.last_transition_time, at(NOW));

    // Rebooting: Ready stays False (modifying now counts as serving clients, so it would flip).
    let mut rebooting = ours();
    rebooting.status = "rebooting".into();
    let after = status::finish(
        &planned,
        Some(&written),
        Some(&Response::Modified(rebooting)),
        Some(1),
        "later",
    );
    assert_eq!(after.db_instance_status.as_deref(), Some("rebooting"));
    let ready = after
        .reported
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .unwrap();
    assert_eq!(
        ready.last_transition_time,
        at(NOW),
        "unchanged status keeps its time"
    );
}

#[test]
fn backoff_grows_and_caps() {
    assert_eq!(backoff_delay(1), Duration::from_secs(2));
    assert_eq!(backoff_delay(2), Duration::from_secs(4));
    assert_eq!(backoff_delay(5), Duration::from_secs(32));
    assert_eq!(backoff_delay(30), Duration::from_secs(300));
}

#[test]
fn readiness_by_state() {
    assert!(status::readiness("available").0);
    assert_eq!(status::readiness("backing-up").1, "BackingUp");
    assert_eq!(
        status::readiness("incompatible-parameters").1,
        "IncompatibleParameters"
    );
}

#[test]
fn unchanged_condition_keeps_its_transition_time() {
    let (t1, t2, t3) = (
        "2026-11-30T10:00:00Z",
        "2026-11-30T10:01:00Z",
        "2026-11-30T10:02:00Z",
    );
    let creating = ConditionPlan::new(false, "Creating", "m");
    let first = conditions::merge_conditions(
        &[],
        vec![conditions::condition("Ready", &creating, Some(1))],
        t1,
    );
    assert_eq!(first[0].last_transition_time, at(t1));
    let same = conditions::merge_conditions(
        &first,
        vec![conditions::condition("Ready", &creating, Some(1))],
        t2,
    );
    assert_eq!(same, first);
    let available = ConditionPlan::new(true, "Available", "m");
    let flipped = conditions::merge_conditions(
        &same,
        vec![conditions::condition("Ready", &available, Some(1))],
        t3,
    );
    assert_eq!(flipped[0].last_transition_time, at(t3));
    // The schema is Kubernetes's: lastTransitionTime required, a date-time.
    let crd = serde_json::to_value(<DBInstance as kube::CustomResourceExt>::crd()).unwrap();
    let conditions = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
        ["properties"]["conditions"]["items"];
    assert!(
        conditions["required"]
            .as_array()
            .unwrap()
            .contains(&"lastTransitionTime".into()),
        "{conditions}"
    );
    assert_eq!(
        conditions["properties"]["lastTransitionTime"]["format"],
        "date-time"
    );
}

#[test]
fn observed_status_reports_endpoint_only_when_known() {
    let mut o = {
        let mut o = ours();
        o.status = "creating".into();
        o.address = None;
        o.port = None;
        o
    };
    assert_eq!(status::observed_status("coffee", &o).common.endpoint, None);
    o.address = Some("coffee.example".into());
    o.port = Some(3306);
    let s = status::observed_status("coffee", &o);
    assert_eq!(
        s.common.endpoint,
        Some(crate::dbinstance::Endpoint {
            address: "coffee.example".into(),
            port: 3306
        })
    );
    assert_eq!(s.db_instance_status.as_deref(), Some("creating"));
}

#[test]
fn ready_means_available_to_clients() {
    use super::status::{failure, readiness};
    use crate::managed::conditions::progress;
    let ready_before = DBInstanceStatus {
        reported: crate::crd::Reported {
            conditions: vec![conditions::condition(
                "Ready",
                &ConditionPlan::new(true, "Available", "the RDS instance is available"),
                None,
            )],
            ..Default::default()
        },
        ..Default::default()
    };
    // (previous status, failure reason, Ready after)
    let table = [
        (Some(&ready_before), "AWSUnavailable", true),
        (Some(&ready_before), "InvalidSpec", true),
        (Some(&ready_before), "InvalidRequest", true),
        (Some(&ready_before), "DeletionProtected", true),
        (Some(&ready_before), "DeletedOutOfBand", false),
        (Some(&ready_before), "ConfirmingAbsence", false),
        (Some(&ready_before), "AccountOrRegionMismatch", false),
        (None, "InvalidSpec", false),
    ];
    for (previous, reason, ready) in table {
        let (status, _) = failure(previous, reason, "why");
        assert_eq!(
            status.ready.unwrap().ok,
            ready,
            "{reason} after Ready={}",
            previous.is_some()
        );
        assert_eq!(status.synced.reason, reason, "errors are on Synced");
    }
    // RDS states in which clients are served keep Ready True.
    for (state, ready) in [
        ("available", true),
        ("backing-up", true),
        ("modifying", true),
        ("storage-optimization", true),
        ("creating", false),
        ("rebooting", false),
        ("upgrading", false),
        ("stopped", false),
        ("failed", false),
    ] {
        assert_eq!(readiness(state).0, ready, "{state}");
    }
    // (Synced reason, ok, RDS busy) -> (Reconciling, Stalled)
    let table = [
        ("Synced", true, false, false, false),
        ("Synced", true, true, true, false),
        ("Updating", false, false, true, false),
        ("AWSUnavailable", false, false, true, false),
        ("ReferencesUnresolved", false, false, true, false),
        ("InvalidSpec", false, false, false, true),
        ("InvalidParameter", false, true, false, true),
        ("IdentifierInUse", false, false, false, true),
        ("UnsupportedChange", false, false, false, true),
        ("Drifted", false, false, false, false),
        ("ReconcilePaused", false, false, false, false),
        ("PendingReboot", false, false, false, false),
    ];
    for (reason, ok, busy, reconciling, stalled) in table {
        let (r, s) = progress(&ConditionPlan::new(ok, reason, "m"), busy);
        assert_eq!((r.ok, s.ok), (reconciling, stalled), "{reason} busy={busy}");
    }
}

#[test]
fn the_latest_restorable_time_moves_in_steps_not_on_every_read() {
    use crate::rds_state::restorable_time;
    let t0 = "2026-11-30T09:00:00Z";
    type Row<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>);
    let rows: [Row; 6] = [
        ("first sight", None, Some(t0), Some(t0)),
        (
            "moved a little: kept (no status write, no reconcile it wakes)",
            Some(t0),
            Some("2026-11-30T09:00:00.738919Z"),
            Some(t0),
        ),
        (
            "moved 14 minutes: kept",
            Some(t0),
            Some("2026-11-30T09:14:00Z"),
            Some(t0),
        ),
        (
            "moved 15 minutes: shown",
            Some(t0),
            Some("2026-11-30T09:15:00Z"),
            Some("2026-11-30T09:15:00Z"),
        ),
        (
            "went back (a restore): shown",
            Some(t0),
            Some("2026-11-30T08:00:00Z"),
            Some("2026-11-30T08:00:00Z"),
        ),
        ("RDS shows none", Some(t0), None, None),
    ];
    for (what, shown, observed, want) in rows {
        assert_eq!(restorable_time(shown, observed).as_deref(), want, "{what}");
    }
}

#[test]
fn a_failed_step_is_reported_over_what_the_plan_found() {
    let was_ready = ConditionPlan::new(true, "Synced", "the DB subnet group matches the spec");
    let absent = ConditionPlan::new(false, "Creating", "the DB subnet group is being created");
    let cases = [
        (
            "the group is gone and its re-creation failed: not Ready, whatever status said",
            Some(&absent),
            "InvalidRequest",
            absent.clone(),
        ),
        (
            "the group is there and a modification failed: Ready as the plan found it",
            Some(&was_ready),
            "InvalidRequest",
            was_ready.clone(),
        ),
        (
            "no plan (the read failed): Ready as it was",
            None,
            "AWSUnavailable",
            was_ready.clone(),
        ),
        (
            "a failure that says the object cannot be reached wins",
            Some(&was_ready),
            "NotFound",
            ConditionPlan::new(false, "NotFound", "gone"),
        ),
    ];
    for (name, planned, reason, expected) in cases {
        let failed_ready = match reason {
            "NotFound" => ConditionPlan::new(false, "NotFound", "gone"),
            _ => was_ready.clone(),
        };
        let got = conditions::ready_after_failure(planned, failed_ready, reason);
        assert_eq!(got, expected, "case: {name}");
    }
}
