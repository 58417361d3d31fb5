//! The shared blue/green rules, table-tested: each state RDS reports, approval, the status record,
//! the read, the retention.

use std::collections::BTreeMap;

use super::*;
use crate::rds_state::ObservedDeployment;

fn deployment(status: &str) -> ObservedDeployment {
    ObservedDeployment {
        identifier: "bgd-1".into(),
        name: "coffee-2".into(),
        source: "arn:aws:rds:us-east-1:1:cluster:coffee".into(),
        target: Some("arn:aws:rds:us-east-1:1:cluster:coffee-green-abcdef".into()),
        status: status.into(),
        status_details: Some("why".into()),
        ..Default::default()
    }
}

#[test]
fn each_state_is_reported_waited_for_or_acted_on() {
    // (state, reason when reported, busy interval, warning Event)
    let table = [
        ("PROVISIONING", Some("BlueGreenProvisioning"), true, false),
        ("SWITCHOVER_IN_PROGRESS", Some("SwitchingOver"), true, false),
        ("SWITCHOVER_FAILED", Some("SwitchoverFailed"), false, true),
        (
            "INVALID_CONFIGURATION",
            Some("BlueGreenInvalid"),
            false,
            true,
        ),
        ("DELETING", Some("BlueGreenDeleting"), true, false),
        ("AVAILABLE", None, false, false),
        ("SWITCHOVER_COMPLETED", None, false, false),
    ];
    for (state, reason, busy, warning) in table {
        match (stage(&deployment(state)), reason) {
            (
                Stage::Report {
                    reason: r,
                    message,
                    busy: b,
                    warning: w,
                },
                Some(reason),
            ) => {
                assert_eq!((r, b, w), (reason, busy, warning), "{state}");
                assert!(message.contains("bgd-1"), "{state}: {message}");
            }
            (Stage::Available, None) => assert_eq!(state, "AVAILABLE"),
            (Stage::Completed, None) => assert_eq!(state, "SWITCHOVER_COMPLETED"),
            (other, _) => panic!("{state}: {other:?}"),
        }
    }
    let Stage::Report { message, .. } = stage(&deployment("SWITCHOVER_FAILED")) else {
        unreachable!()
    };
    assert!(message.contains("why") && message.contains("nothing is deleted"));
}

#[test]
fn a_switchover_is_approved_by_the_spec_the_annotation_or_auto() {
    let annotated = |v: &str| BTreeMap::from([(SWITCHOVER_ANNOTATION.to_owned(), v.to_owned())]);
    let named = |id: &str| Upgrade {
        switchover: Some(id.into()),
        ..Default::default()
    };
    let auto = Upgrade {
        switchover_policy: SwitchoverPolicy::Auto,
        ..Default::default()
    };
    // (spec, annotations, approved)
    let table = [
        (Upgrade::default(), None, false),
        (named("bgd-1"), None, true),
        (named("bgd-other"), None, false),
        (Upgrade::default(), Some(annotated("true")), true),
        (Upgrade::default(), Some(annotated("bgd-1")), true),
        (Upgrade::default(), Some(annotated("bgd-other")), false),
        (Upgrade::default(), Some(annotated("yes")), false),
        (auto, None, true),
    ];
    for (upgrade, annotations, want) in table {
        assert_eq!(
            approved(&upgrade, annotations.as_ref(), "bgd-1"),
            want,
            "{upgrade:?} {annotations:?}"
        );
    }
}

#[test]
fn the_status_keeps_the_changes_and_the_first_time_it_saw_the_switchover() {
    let previous = DeploymentStatus {
        changes: vec![FieldDrift {
            field: "engineVersion".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let s = status(&deployment("AVAILABLE"), Some(&previous), "T1");
    assert_eq!(
        (s.deployment_identifier.as_str(), s.status.as_str()),
        ("bgd-1", "AVAILABLE")
    );
    assert_eq!(s.changes, previous.changes);
    assert_eq!(s.switched_over_at, None);
    let done = status(&deployment("SWITCHOVER_COMPLETED"), Some(&s), "T2");
    assert_eq!(done.switched_over_at.as_deref(), Some("T2"));
    let later = status(&deployment("SWITCHOVER_COMPLETED"), Some(&done), "T3");
    assert_eq!(
        later.switched_over_at.as_deref(),
        Some("T2"),
        "kept from the first sight"
    );
}

#[test]
fn the_deployment_is_read_by_its_record_or_else_by_its_source_when_wanted() {
    let recorded = DeploymentStatus {
        deployment_identifier: "bgd-1".into(),
        ..Default::default()
    };
    let switched = DeploymentStatus {
        switched_over_at: Some("T".into()),
        ..recorded.clone()
    };
    let making = DeploymentStatus::default(); // CreateBlueGreenDeployment sent, no identifier yet
    let g = || Some("green".to_owned());
    let o = || Some("old".to_owned());
    let by_record = |green: Option<String>| {
        Some(Read::Recorded {
            deployment: "bgd-1".into(),
            green,
            old: o(),
        })
    };
    let of_source = Some(Read::OfSource("arn".into()));
    // (recorded, source, wanted, read)
    let table = [
        (
            Some((&recorded, g(), o())),
            Some("arn"),
            false,
            by_record(g()),
        ),
        // The instance or cluster gone (a deletion): the recorded deployment is still read.
        (Some((&recorded, g(), o())), None, false, by_record(g())),
        (
            Some((&switched, g(), o())),
            Some("arn"),
            false,
            by_record(None),
        ),
        (
            Some((&making, None, None)),
            Some("arn"),
            false,
            of_source.clone(),
        ),
        (None, Some("arn"), true, of_source.clone()),
        (None, Some("arn"), false, None),
        (None, None, true, None),
    ];
    for (i, (rec, source, wanted, want)) in table.into_iter().enumerate() {
        assert_eq!(read(rec, source, wanted), want, "row {i}");
    }
}

#[test]
fn the_retention_counts_from_the_switchover() {
    let hours = |h: u64| {
        Some(kube::core::Duration::from(std::time::Duration::from_secs(
            h * 3600,
        )))
    };
    let at = "2026-12-01T00:00:00Z";
    // (retention, switched over at, now, due)
    let table = [
        (None, Some(at), "2026-12-09T00:00:00Z", false),
        (hours(24), None, "2026-12-09T00:00:00Z", false),
        (hours(24), Some(at), "2026-12-01T23:59:59Z", false),
        (hours(24), Some(at), "2026-12-02T00:00:00Z", true),
        (hours(0), Some(at), at, true),
    ];
    for (retention, switched, now, due) in table {
        assert_eq!(
            retention_due(retention, switched, now),
            due,
            "{retention:?} {switched:?} {now}"
        );
    }
}

#[test]
fn names_and_identifiers() {
    assert_eq!(name("coffee", 3), "coffee-3");
    assert_eq!(name(&"x".repeat(63), 3).len(), 60);
    assert_eq!(
        identifier_of("arn:aws:rds:us-east-1:1:cluster:coffee-old1"),
        "coffee-old1"
    );
    assert_eq!(
        identifier_of("arn:aws:rds:us-east-1:1:db:db-green-abcdef"),
        "db-green-abcdef"
    );
}
