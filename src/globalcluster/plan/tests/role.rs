//! Switchover and failover: sent once per target, decided on what RDS shows, a row each.

use super::*;
use crate::globalcluster::{FAILOVER_ANNOTATION, FailoverTo, RoleChange};

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
            "Switchover" => f.group.spec.switchover_to = Some(target),
            _ => {
                f.group.spec.failover_to = Some(FailoverTo {
                    name: "coffee-eu".into(),
                    allow_data_loss: true,
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
    })
}

fn recorded(mut f: Facts, change: Option<RoleChange>) -> Facts {
    f.group.status.get_or_insert_default().role_change = change;
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

#[test]
fn a_failover_is_sent_once_approved_in_its_targets_region() {
    let approved = |f: &mut Facts| {
        let annotations = f.group.metadata.annotations.get_or_insert_default();
        annotations.insert(FAILOVER_ANNOTATION.into(), "coffee-eu".into());
    };
    let cases: [(&str, Facts, usize, &str); 5] = [
        (
            "not approved",
            asking("Failover"),
            0,
            "FailoverAwaitingApproval",
        ),
        (
            "approved for another target",
            with(asking("Failover"), |f| {
                let annotations = f.group.metadata.annotations.get_or_insert_default();
                annotations.insert(FAILOVER_ANNOTATION.into(), "coffee-ap".into());
            }),
            0,
            "FailoverAwaitingApproval",
        ),
        (
            "approved",
            with(asking("Failover"), approved),
            1,
            "SwitchingOver",
        ),
        (
            "the primary's region is down",
            with(asking("Failover"), |f| f.extra.primary_region_down = true),
            1,
            "SwitchingOver",
        ),
        (
            "approved and sent",
            with(
                recorded(asking("Failover"), sent("Failover", false)),
                approved,
            ),
            0,
            "SwitchingOver",
        ),
    ];
    for (case, f, calls, reason) in cases {
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
        assert_eq!(p.status.as_ref().unwrap().synced.reason, reason, "{case}");
    }
}
