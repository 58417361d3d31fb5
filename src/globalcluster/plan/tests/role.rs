//! Switchover and failover: sent once per target, decided on what RDS shows, a row each.

use super::*;
use crate::globalcluster::{FAILOVER_ANNOTATION, FailoverTo, RegionSilence, RoleChange};

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

/// The primary's region silent for `secs` (no answer or a 5xx to every call since).
fn silent(secs: u64) -> impl FnOnce(&mut Facts) {
    move |f: &mut Facts| {
        f.extra.primary_breaker_open = true;
        f.extra.primary_region_silent = Some(RegionSilence {
            region: "us-east-1".into(),
            since: "2026-12-05T10:00:00Z".into(),
            silent_for: std::time::Duration::from_secs(secs),
            calls: 40,
            last: "NoResponse".into(),
        });
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
        "the primary's region us-east-1 answered no call for 300 s (failoverAfter 300 s): 40 \
         calls since 2026-12-05T10:00:00Z went unanswered, the last with NoResponse"
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
            "the primary's region throttles (its breaker open, no silence): never approved",
            with(asking("Failover"), |f| f.extra.primary_breaker_open = true),
            0,
            "FailoverAwaitingApproval",
            None,
        ),
        (
            "the primary's region silent for less than failoverAfter: waits",
            with(asking("Failover"), silent(299)),
            0,
            "FailoverAwaitingApproval",
            None,
        ),
        (
            "the primary's region silent for failoverAfter: approved, with its evidence",
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
                "the primary's region us-east-1 answered no call for 60 s (failoverAfter 60 s): \
                 40 calls since 2026-12-05T10:00:00Z went unanswered, the last with NoResponse"
                    .to_owned(),
            ),
        ),
        (
            "the region answers again before failoverAfter: the silence is gone, nothing sent",
            with(with(asking("Failover"), silent(200)), |f| {
                f.extra.primary_region_silent = None
            }),
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
        "failoverTo coffee-eu waits for approval: the primary's region us-east-1 has answered no \
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
