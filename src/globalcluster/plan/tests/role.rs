//! Switchover and failover: sent once per target, decided on what RDS shows, a row each.

use super::*;
use crate::globalcluster::{
    FAILOVER_ANNOTATION, FailoverTo, RegionHeard, RegionSilence, RoleChange,
};

fn members() -> Vec<GlobalMember> {
    let mut eu = member("coffee-eu", "eu-west-1", "reader");
    eu.db_cluster_arn = Some("arn:aws:rds:eu-west-1:123456789012:cluster:coffee-eu".into());
    eu.synchronization_status = Some("connected".into());
    vec![member("coffee-db", "us-east-1", "writer"), eu]
}

/// The global database with its secondary coffee-eu; the spec asks `action` to it.
fn asking(action: &str) -> Facts {
    with(existing(members()), |f| {
        let target = LocalRef {
            name: "coffee-eu".into(),
        };
        match action {
            "Switchover" => f.object.spec.switchover_to = Some(target),
            _ => {
                f.object.spec.failover_to = Some(FailoverTo {
                    name: "coffee-eu".into(),
                    allow_data_loss: true,
                    failover_after: None,
                })
            }
        }
        f.extra.target = Some(Ok("coffee-eu".into()));
    })
}

fn sent(action: &str, completed: bool) -> Option<RoleChange> {
    Some(RoleChange {
        action: action.into(),
        target: "coffee-eu".into(),
        db_cluster_identifier: "coffee-eu".into(),
        completed,
        approved_by: None,
    })
}

fn recorded(mut f: Facts, change: Option<RoleChange>) -> Facts {
    f.object.status.get_or_insert_default().role_change = change;
    f
}

fn swapped(f: &mut Facts) {
    let o = f.observed.as_mut().unwrap();
    o.members[0].role = "reader".into();
    o.members[1].role = "writer".into();
}

#[test]
fn a_switchover_is_sent_once_and_reported_until_rds_shows_the_new_writer() {
    let cases: [(&str, Facts, usize, &str, Option<RoleChange>); 8] = [
        (
            "asked, all available",
            asking("Switchover"),
            1,
            "SwitchingOver",
            sent("Switchover", false),
        ),
        (
            "sent, RDS switching over",
            with(
                recorded(asking("Switchover"), sent("Switchover", false)),
                |f| f.observed.as_mut().unwrap().status = "switching-over".into(),
            ),
            0,
            "SwitchingOver",
            sent("Switchover", false),
        ),
        (
            "killed after sending, before recording: RDS busy, nothing sent",
            with(asking("Switchover"), |f| {
                f.observed.as_mut().unwrap().status = "switching-over".into()
            }),
            0,
            "RoleChangeWaiting",
            None,
        ),
        (
            "sent, and RDS shows it the writer: done",
            with(
                recorded(asking("Switchover"), sent("Switchover", false)),
                swapped,
            ),
            0,
            "Synced",
            sent("Switchover", true),
        ),
        (
            "killed after sending, before recording, and RDS done: recorded as done",
            with(asking("Switchover"), swapped),
            0,
            "Synced",
            sent("Switchover", true),
        ),
        (
            "done, and the writer moved back outside: reported, not moved",
            recorded(asking("Switchover"), sent("Switchover", true)),
            0,
            "WriterMoved",
            sent("Switchover", true),
        ),
        (
            "a member not connected yet",
            with(asking("Switchover"), |f| {
                let o = f.observed.as_mut().unwrap();
                o.members[1].synchronization_status = Some("pending-resync".into());
            }),
            0,
            "RoleChangeWaiting",
            None,
        ),
        (
            "the target is not Ready",
            with(asking("Switchover"), |f| {
                f.extra.target = Some(Err("DBCluster coffee-eu is not Ready yet".into()))
            }),
            0,
            "ReferencesUnresolved",
            None,
        ),
    ];
    for (case, f, calls, reason, record) in cases {
        let p = plan(&f);
        let switchovers = (own(&p).iter())
            .filter(|s| matches!(s, Own::Switchover { .. }))
            .count();
        assert_eq!(switchovers, calls, "{case}");
        let status = p.status.as_ref().expect("a status");
        assert_eq!(status.synced.reason, reason, "{case}");
        assert_eq!(status.fields.role_change, record, "{case}");
    }
}

/// A region silent for `secs` (no answer, a broken connection or a 5xx to every call since).
fn silence(secs: u64) -> RegionHeard {
    RegionHeard {
        silence: Some(RegionSilence {
            since: "2026-12-05T10:00:00Z".into(),
            silent_for: std::time::Duration::from_secs(secs),
            calls: 40,
            last: "NoResponse".into(),
        }),
        answered_ago: Some((std::time::Duration::from_secs(secs + 1), false)),
    }
}

/// A region that answered `secs` ago (`throttled`: that answer was a throttle).
fn answering(secs: u64, throttled: bool) -> RegionHeard {
    RegionHeard {
        silence: None,
        answered_ago: Some((std::time::Duration::from_secs(secs), throttled)),
    }
}

/// What was heard from `region`.
fn hearing(region: &str, heard: RegionHeard) -> impl FnOnce(&mut Facts) {
    move |f: &mut Facts| {
        f.extra.regions.insert(region.into(), heard);
    }
}

/// The writer's region (us-east-1) silent for `secs`, the target's (eu-west-1) answering.
fn silent(secs: u64) -> impl FnOnce(&mut Facts) {
    move |f: &mut Facts| {
        hearing("us-east-1", silence(secs))(f);
        hearing("eu-west-1", answering(0, false))(f);
    }
}

#[test]
fn a_failover_is_sent_once_approved_in_its_targets_region() {
    let approved = |f: &mut Facts| {
        let annotations = f.object.metadata.annotations.get_or_insert_default();
        annotations.insert(FAILOVER_ANNOTATION.into(), "coffee-eu".into());
    };
    let by_annotation = Some(format!("the annotation {FAILOVER_ANNOTATION}"));
    let by_silence = Some(
        "the writer's region us-east-1 answered no call for 300 s (failoverAfter 300 s): 40 \
         calls since 2026-12-05T10:00:00Z went unanswered, the last with NoResponse; the \
         target's region eu-west-1 answered 0 s ago"
            .to_owned(),
    );
    let cases: [(&str, Facts, usize, &str, Option<String>); 9] = [
        (
            "not approved",
            asking("Failover"),
            0,
            "FailoverAwaitingApproval",
            None,
        ),
        (
            "approved for another target",
            with(asking("Failover"), |f| {
                let annotations = f.object.metadata.annotations.get_or_insert_default();
                annotations.insert(FAILOVER_ANNOTATION.into(), "coffee-ap".into());
            }),
            0,
            "FailoverAwaitingApproval",
            None,
        ),
        (
            "approved",
            with(asking("Failover"), approved),
            1,
            "SwitchingOver",
            by_annotation.clone(),
        ),
        (
            "the writer's region throttles (its breaker open, no silence): never approved",
            with(
                with(asking("Failover"), hearing("us-east-1", answering(1, true))),
                hearing("eu-west-1", answering(0, false)),
            ),
            0,
            "FailoverAwaitingApproval",
            None,
        ),
        (
            "the writer's region silent for less than failoverAfter: waits",
            with(asking("Failover"), silent(299)),
            0,
            "FailoverAwaitingApproval",
            None,
        ),
        (
            "the writer's region silent for failoverAfter: approved, with its evidence",
            with(asking("Failover"), silent(300)),
            1,
            "SwitchingOver",
            by_silence,
        ),
        (
            "a failoverAfter of the spec's own",
            with(with(asking("Failover"), silent(60)), |f| {
                let to = f.object.spec.failover_to.as_mut().unwrap();
                to.failover_after = Some("1m".parse().unwrap());
            }),
            1,
            "SwitchingOver",
            Some(
                "the writer's region us-east-1 answered no call for 60 s (failoverAfter 60 s): \
                 40 calls since 2026-12-05T10:00:00Z went unanswered, the last with NoResponse; \
                 the target's region eu-west-1 answered 0 s ago"
                    .to_owned(),
            ),
        ),
        (
            "the region answers again before failoverAfter: the silence is gone, nothing sent",
            with(
                with(asking("Failover"), silent(200)),
                hearing("us-east-1", answering(0, false)),
            ),
            0,
            "FailoverAwaitingApproval",
            None,
        ),
        (
            "approved and sent: not sent again, its approval kept",
            with(
                recorded(
                    asking("Failover"),
                    Some(RoleChange {
                        approved_by: by_annotation.clone(),
                        ..sent("Failover", false).unwrap()
                    }),
                ),
                approved,
            ),
            0,
            "SwitchingOver",
            by_annotation.clone(),
        ),
    ];
    for (case, f, calls, reason, approval) in cases {
        let p = plan(&f);
        let failovers: Vec<_> = (own(&p).into_iter())
            .filter_map(|s| match s {
                Own::Failover {
                    target_arn, region, ..
                } => Some((target_arn.clone(), region.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(failovers.len(), calls, "{case}");
        if let Some((arn, region)) = failovers.first() {
            assert!(arn.ends_with(":cluster:coffee-eu"), "{case}: {arn}");
            assert_eq!(region, "eu-west-1", "{case}");
        }
        let status = p.status.as_ref().unwrap();
        assert_eq!(status.synced.reason, reason, "{case}");
        let recorded = status.fields.role_change.as_ref();
        assert_eq!(
            recorded.and_then(|r| r.approved_by.clone()),
            approval,
            "{case}"
        );
    }
}

#[test]
fn a_failover_waiting_on_a_silence_says_how_long_and_looks_again_soon() {
    let p = plan(&with(asking("Failover"), silent(40)));
    let synced = &p.status.as_ref().unwrap().synced;
    assert_eq!(
        synced.message,
        "failoverTo coffee-eu waits for approval: the writer's region us-east-1 has answered no \
         call for 40 s of the 300 s failoverAfter asks; set the annotation \
         rds.operator.rs/failover: coffee-eu to fail over anyway (writes coffee-eu has not \
         received are lost)"
    );
    assert_eq!(p.requeue, Requeue::After(std::time::Duration::from_secs(5)));
}

/// (maxLagSeconds, the target's AuroraGlobalDBReplicationLag in ms) -> whether the switchover is
/// sent: with maxLagSeconds set it waits while the target is further behind or its lag is not
/// known, and Synced gives the figure.
#[test]
fn a_switchover_waits_while_its_target_lags_over_max_lag_seconds() {
    let rows: [(Option<i32>, Option<i64>, Option<&str>); 5] = [
        (None, None, None),
        (Some(5), Some(1_200), None),
        (
            Some(5),
            Some(42_000),
            Some("is 42 s behind the primary, over maxLagSeconds 5"),
        ),
        (Some(5), None, Some("not known yet")),
        (Some(5), Some(-1), Some("not active")),
    ];
    for (max, lag_ms, waits) in rows {
        let f = with(asking("Switchover"), |f| {
            f.object.spec.max_lag_seconds = max;
            f.extra.target_lag_ms = lag_ms;
        });
        let p = plan(&f);
        let status = p.status.as_ref().expect("a status");
        match waits {
            None => assert_eq!(own(&p).len(), 1, "{max:?} {lag_ms:?}: sent"),
            Some(words) => {
                assert_eq!(own(&p).len(), 0, "{max:?} {lag_ms:?}: waits");
                assert_eq!(synced(&p), "SwitchoverWaitingForLag");
                let message = &status.synced.message;
                assert!(message.contains(words), "{max:?} {lag_ms:?}: {message}");
            }
        }
    }
}

/// The writer moved to us-west-2 by an earlier switchover; the GlobalCluster's own region is still
/// us-east-1.
fn moved_west(f: &mut Facts) {
    let o = f.observed.as_mut().unwrap();
    o.members[0].role = "reader".into();
    let mut west = member("coffee-west", "us-west-2", "writer");
    west.synchronization_status = Some("connected".into());
    o.members.push(west);
}

/// The silence that approves a failover is the writer's region's, as RDS reports it now, never
/// the GlobalCluster's own region's; the target's region must answer in the same window; each
/// kind of silence approves alike, and the evidence names the last.
#[test]
fn a_failover_is_approved_on_the_writers_region_with_the_target_answering() {
    let moved = || with(asking("Failover"), moved_west);
    let rows: Vec<(&str, Facts, usize, &str)> = vec![
        (
            "the home region silent past failoverAfter, the writer elsewhere answering",
            with(
                with(
                    with(moved(), hearing("us-east-1", silence(900))),
                    hearing("us-west-2", answering(0, false)),
                ),
                hearing("eu-west-1", answering(0, false)),
            ),
            0,
            "the writer's region us-west-2 answers: its last call was answered",
        ),
        (
            "the writer's region silent past failoverAfter, the target answering: approved",
            with(
                with(
                    with(moved(), hearing("us-east-1", answering(0, false))),
                    hearing("us-west-2", silence(300)),
                ),
                hearing("eu-west-1", answering(2, false)),
            ),
            1,
            "the writer's region us-west-2 answered no call for 300 s",
        ),
        (
            "the writer's region and the target's both silent: waits",
            with(
                with(moved(), hearing("us-west-2", silence(300))),
                hearing("eu-west-1", silence(300)),
            ),
            0,
            "the target's region eu-west-1 has answered none for 300 s either",
        ),
        (
            "the target's region not heard since the writer's went silent: waits",
            with(
                with(moved(), hearing("us-west-2", silence(300))),
                hearing("eu-west-1", answering(301, false)),
            ),
            0,
            "the target's region eu-west-1 has not answered since",
        ),
        (
            "the target's region never heard from: waits",
            with(moved(), hearing("us-west-2", silence(300))),
            0,
            "the target's region eu-west-1 has not answered since",
        ),
        (
            "the writer's region answered a call 2 s ago (a brownout): waits",
            with(
                with(moved(), hearing("us-west-2", answering(2, false))),
                hearing("eu-west-1", answering(0, false)),
            ),
            0,
            "the writer's region us-west-2 answers: its last call was answered",
        ),
        (
            "the writer's region throttles: waits, and says a throttle is an answer",
            with(
                with(moved(), hearing("us-west-2", answering(1, true))),
                hearing("eu-west-1", answering(0, false)),
            ),
            0,
            "it throttled its last call (a throttle is an answer",
        ),
        (
            "a failoverAfter under the floor, stored before CEL held it: 60 s still",
            with(
                with(
                    with(moved(), hearing("us-west-2", silence(30))),
                    hearing("eu-west-1", answering(0, false)),
                ),
                |f| {
                    let to = f.object.spec.failover_to.as_mut().unwrap();
                    to.failover_after = Some("8s".parse().unwrap());
                },
            ),
            0,
            "has answered no call for 30 s of the 60 s failoverAfter asks",
        ),
        (
            "nothing heard from the writer's region yet: waits",
            with(moved(), hearing("eu-west-1", answering(0, false))),
            0,
            "the writer's region us-west-2 has not been heard from yet",
        ),
    ];
    for (case, f, sent, says) in rows {
        let p = plan(&f);
        let failovers = (own(&p).iter())
            .filter(|s| matches!(s, Own::Failover { .. }))
            .count();
        assert_eq!(failovers, sent, "{case}");
        let status = p.status.as_ref().unwrap();
        let evidence = (status.fields.role_change.as_ref()).and_then(|r| r.approved_by.clone());
        let text = evidence.unwrap_or_else(|| status.synced.message.clone());
        assert!(text.contains(says), "{case}: {text}");
    }
    // Each kind of silence (a reset, refused, closed or timed-out connection is NoResponse; a
    // 503, a 500) approves alike, and the evidence names the last one heard.
    for last in ["NoResponse", "ServiceUnavailable", "InternalFailure"] {
        let mut heard = silence(300);
        heard.silence.as_mut().unwrap().last = last.into();
        let f = with(
            with(asking("Failover"), hearing("us-east-1", heard)),
            hearing("eu-west-1", answering(0, false)),
        );
        let p = plan(&f);
        let failovers = (own(&p).iter())
            .filter(|s| matches!(s, Own::Failover { .. }))
            .count();
        assert_eq!(failovers, 1, "{last}");
        let change = p.status.as_ref().unwrap().fields.role_change.clone();
        let evidence = change.and_then(|r| r.approved_by).unwrap_or_default();
        assert!(
            evidence.contains(&format!("the last with {last}")),
            "{evidence}"
        );
    }
}

/// A step is recorded as done only once RDS took it: when the Switchover or Failover the plan
/// recorded fails to send (a 503 in the target's region, a connection reset), the status written
/// keeps the previous record (none), so the next pass decides again from a fresh read and sends
/// again; a send whose answer was lost but which RDS took is found busy or done, never re-sent.
#[test]
fn a_role_change_whose_send_failed_is_not_recorded_and_is_sent_again() {
    use crate::managed::named::failed;
    let approved = |f: &mut Facts| {
        let annotations = f.object.metadata.annotations.get_or_insert_default();
        annotations.insert(FAILOVER_ANNOTATION.into(), "coffee-eu".into());
    };
    for (action, f) in [
        ("Switchover", asking("Switchover")),
        ("Failover", with(asking("Failover"), approved)),
    ] {
        let first = plan(&f);
        assert_eq!(own(&first).len(), 1, "{action}: sent");
        let recorded = first.status.as_ref().unwrap().fields.role_change.clone();
        assert!(recorded.is_some(), "{action}: the plan records it");
        // The send fails: what the skeleton writes keeps no record of it.
        let (status, _) = failed::<GlobalCluster>(
            f.object.status.as_ref(),
            first.status.as_ref(),
            Some(1),
            "ServiceUnavailable",
            "FailoverGlobalCluster: ServiceUnavailable: Service unavailable",
            "2026-12-05T10:00:00Z",
        );
        assert_eq!(status.role_change, None, "{action}: not recorded as sent");
        // The next pass, RDS unchanged (it never took it): sent again.
        let again = with(f.clone(), |f| f.object.status = Some(status.clone()));
        let second = plan(&again);
        assert_eq!(own(&second).len(), 1, "{action}: sent again");
        // Had RDS taken it (the answer lost), the next pass finds it busy: nothing sent.
        let busy = with(again, |f| {
            f.observed.as_mut().unwrap().status = "failing-over".into()
        });
        let third = plan(&busy);
        assert!(own(&third).is_empty(), "{action}: RDS busy, not re-sent");
        assert_eq!(
            third.status.as_ref().unwrap().synced.reason,
            "RoleChangeWaiting"
        );
    }
}

/// After a failed step the status keeps the previous pass's fields, with what may be in RDS
/// kept from the plan: tag keys it applied (so a tag is removed when it leaves the spec, even if
/// the pass that added it failed later), and a role change RDS showed done (a fact of the pass).
#[test]
fn a_failed_pass_keeps_what_may_be_in_rds_and_drops_what_was_only_planned() {
    use crate::managed::named::failed;
    let mut previous = GlobalClusterStatus {
        applied_tag_keys: vec!["app".into()],
        ..Default::default()
    };
    let mut planned = plan(&with(asking("Switchover"), swapped))
        .status
        .expect("a status");
    planned.fields.applied_tag_keys = vec!["app".into(), "team".into()];
    let (status, _) = failed::<GlobalCluster>(
        Some(&previous),
        Some(&planned),
        Some(1),
        "AWSUnavailable",
        "AddTagsToResource failed: NoResponse",
        "2026-12-05T10:00:00Z",
    );
    assert_eq!(status.applied_tag_keys, vec!["app", "team"]);
    assert_eq!(
        status.role_change,
        sent("Switchover", true),
        "done, seen in RDS"
    );
    // A role change only planned (sent in this pass, whose later step failed) is not kept.
    planned.fields.role_change = sent("Switchover", false);
    previous.role_change = None;
    let (status, _) = failed::<GlobalCluster>(
        Some(&previous),
        Some(&planned),
        Some(1),
        "AWSUnavailable",
        "FailoverGlobalCluster failed: NoResponse",
        "2026-12-05T10:00:00Z",
    );
    assert_eq!(status.role_change, None);
}
