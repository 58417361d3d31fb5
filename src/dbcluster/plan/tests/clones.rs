//! Clones (restoreFrom.cloneOf) and their expiry (expireAfter, plan/expiry.rs), a rule a row.
//! now is 2026-12-01T00:00:00Z.

use super::*;
use crate::crd::LocalRef;

/// A clone of the DBCluster "coffee-main", which resolves to RDS cluster "coffee-src".
fn clone(resolved: Result<&str, &str>) -> Facts {
    with(facts(), |f| {
        f.cluster.spec.restore_from = Some(ClusterRestoreFrom {
            clone_of: Some(LocalRef {
                name: "coffee-main".into(),
            }),
            ..Default::default()
        });
        f.snapshot_ref = Some(resolved.map(str::to_owned).map_err(str::to_owned));
        f.restore_source = Some(source(&owner_tags()));
    })
}

/// An expiring clone made at `made` with expireAfter 24h, observed as ours, with one member.
fn expiring(made: &str) -> Facts {
    with(synced(), |f| {
        f.cluster.spec.restore_from = Some(ClusterRestoreFrom {
            clone_of: Some(LocalRef {
                name: "coffee-main".into(),
            }),
            ..Default::default()
        });
        f.cluster.spec.expire_after = Some("24h".parse().unwrap());
        let at: k8s_openapi::jiff::Timestamp = made.parse().unwrap();
        f.cluster.metadata.creation_timestamp = Some(Time(at));
        f.referrers = vec!["DBInstance preview-1".into()];
    })
}

#[test]
fn a_clone_is_a_point_in_time_restore_of_its_resolved_source_at_the_latest_time() {
    let p = plan(&clone(Ok("coffee-src")));
    let restored = (p.steps.iter()).find_map(|s| match s {
        Step::RestoreToPointInTime {
            source, time, spec, ..
        } => Some((source.as_str(), time.clone(), spec.restore_from.clone())),
        _ => None,
    });
    let (source, time, from) = restored.expect("a RestoreDBClusterToPointInTime");
    assert_eq!(
        (source, time),
        ("coffee-src", None),
        "the latest restorable time"
    );
    assert!(
        from.is_some_and(|r| r.clone_of.is_some()),
        "sent as copy-on-write"
    );
    let fields = &p.status.as_ref().unwrap().fields;
    let from = fields.restored_from.as_deref().unwrap_or_default();
    assert!(
        from.contains("copy-on-write clone of DBCluster coffee-main"),
        "{from}"
    );
}

#[test]
fn a_clone_waits_for_its_source_to_be_ready_and_restores_nothing() {
    let p = plan(&clone(Err("DBCluster coffee-main is not Ready yet")));
    assert!(
        names(&p).iter().all(|n| *n != "RestoreToPointInTime"),
        "{:?}",
        names(&p)
    );
    assert_eq!(synced_reason(&p), "ReferencesUnresolved");
}

#[test]
fn an_expired_clone_deletes_its_members_and_itself_and_nothing_else() {
    let p = plan(&expiring("2026-11-30T00:00:00Z"));
    let steps: Vec<_> = p.steps.iter().collect();
    assert_eq!(
        steps,
        [&Step::Own(ClusterStep::Expire {
            members: vec!["preview-1".into()]
        })]
    );
    let event = p.events.last().unwrap();
    assert_eq!(event.reason, "Expired");
    assert!(event.note.contains("2026-12-01T00:00:00Z") && event.note.contains("preview-1"));
}

#[test]
fn a_clone_not_yet_expired_says_when_and_is_looked_at_again_by_then() {
    let p = plan(&expiring("2026-11-30T23:59:30Z"));
    assert!(names(&p).iter().all(|n| *n != "Expire"));
    let at = p.status.as_ref().unwrap().fields.expires_at.clone();
    assert_eq!(at.as_deref(), Some("2026-12-01T23:59:30Z"));
    let not_expiring = plan(&with(expiring("2026-11-30T23:59:30Z"), |f| {
        f.cluster.spec.expire_after = None;
    }));
    assert_eq!(not_expiring.status.unwrap().fields.expires_at, None);
    let soon = plan(&expiring("2026-11-30T00:00:20Z"));
    let due = crate::managed::plan::Requeue::After(std::time::Duration::from_secs(21));
    assert_eq!(soon.requeue, due, "20 s left, and a second past");
}
