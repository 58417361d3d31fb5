//! Aurora blue/green upgrades (upgradePolicy BlueGreen): a row each.

use super::*;
use crate::database::blue_green::{Call, DeploymentStatus, Facts as Found, SWITCHOVER_ANNOTATION};
use crate::database::choices::{SwitchoverPolicy, UpgradePolicy};
use crate::dbcluster::ClusterBlueGreen;
use crate::dbcluster::plan::blue_green::BlueGreenFacts;
use crate::rds_state::{BlueGreenTargets, ObservedDeployment, ObservedInstance};

const FIVE: &str = "5.7.mysql_aurora.2.11.2";
const EIGHT: &str = "8.0.mysql_aurora.3.08.0";
const BGD: &str = "bgd-1";

/// Our 5.7 cluster, its spec edited to 8.0 (a major upgrade) under upgradePolicy BlueGreen; no
/// deployment found.
fn upgrade() -> Facts {
    with(synced(), |f| {
        let mut o = ours();
        o.engine_version = Some(FIVE.into());
        f.observed = Some(o);
        let spec = &mut f.cluster.spec;
        spec.engine_version = Some(EIGHT.into());
        spec.maintenance.allow_major_version_upgrade = Some(true);
        spec.upgrade.upgrade_policy = UpgradePolicy::BlueGreen;
        spec.db_cluster_parameter_group_name = Some("coffee-80".into());
        spec.db_instance_parameter_group_name = Some("coffee-members-80".into());
        f.cluster.metadata.generation = Some(2);
        f.blue_green = Some(BlueGreenFacts::default());
    })
}

fn deployment(status: &str) -> ObservedDeployment {
    let completed = status == "SWITCHOVER_COMPLETED";
    let arn = |id: &str| format!("arn:aws:rds:us-east-1:123456789012:cluster:{id}");
    let arns = match completed {
        true => [arn("coffee-old1"), arn("coffee")],
        false => [arn("coffee"), arn("coffee-green-abcdef")],
    };
    crate::database::blue_green::observed(BGD, arns, status)
}

/// The deployment RDS has in `status`, recorded in status as made at generation 2.
fn running(status: &str) -> Facts {
    with(upgrade(), |f| {
        let s = f.cluster.status.as_mut().unwrap();
        s.reported.observed_generation = Some(2);
        s.blue_green = Some(ClusterBlueGreen {
            deployment: DeploymentStatus::made(BGD, "coffee-2"),
            ..Default::default()
        });
        f.blue_green = Some(BlueGreenFacts {
            found: Found {
                deployment: Some(deployment(status)),
                ..Default::default()
            },
            ..Default::default()
        });
    })
}

fn old_cluster(members: &[&str]) -> ObservedCluster {
    ObservedCluster {
        identifier: "coffee-old1".into(),
        engine_version: Some(FIVE.into()),
        members: (members.iter())
            .map(|m| member(m, false, "in-sync"))
            .collect(),
        ..ours()
    }
}

fn instance(identifier: &str, namespace: &str) -> ObservedInstance {
    ObservedInstance {
        identifier: identifier.into(),
        status: "available".into(),
        tags: [
            (OWNER_TAG.to_owned(), "uid-of-the-member".to_owned()),
            (OWNER_NAME_TAG.to_owned(), format!("{namespace}/writer")),
        ]
        .into(),
        ..Default::default()
    }
}

/// Switched over an hour ago; the old cluster (with `members`, read directly) is still there, and
/// the spec keeps it for `retention`.
fn switched(retention: Option<&str>, members: &[&str], read: Vec<ObservedInstance>) -> Facts {
    with(running("SWITCHOVER_COMPLETED"), |f| {
        let o = f.observed.as_mut().unwrap();
        o.engine_version = Some(EIGHT.into());
        o.db_cluster_parameter_group_name = Some("coffee-80".into());
        let bg = f.cluster.status.as_mut().unwrap().blue_green.as_mut();
        bg.unwrap().deployment.switched_over_at = Some("2026-11-30T23:00:00Z".into());
        f.cluster.spec.old_cluster_retention = retention.map(|r| r.parse().unwrap());
        let facts = f.blue_green.as_mut().unwrap();
        facts.found.old = Some(old_cluster(members));
        facts.members = read;
    })
}

fn created(p: &Plan) -> &BlueGreenTargets {
    (p.steps.iter())
        .find_map(|s| match s {
            Step::BlueGreen {
                call: Call::Create { targets, .. },
                ..
            } => Some(&**targets),
            _ => None,
        })
        .expect("a CreateBlueGreenDeployment")
}

#[test]
fn an_engine_version_change_goes_blue_green_never_in_place() {
    let p = plan(&upgrade());
    assert_eq!(names(&p), ["CreateBlueGreen"], "no ModifyDBCluster");
    assert_eq!(synced_reason(&p), "BlueGreenProvisioning");
    let targets = created(&p);
    assert_eq!(targets.engine_version.as_deref(), Some(EIGHT));
    assert_eq!(
        targets.db_cluster_parameter_group_name.as_deref(),
        Some("coffee-80")
    );
    assert_eq!(
        targets.db_parameter_group_name.as_deref(),
        Some("coffee-members-80"),
        "the members' group RDS asks for on a major upgrade"
    );
    let status = p
        .status
        .as_ref()
        .unwrap()
        .fields
        .blue_green
        .clone()
        .unwrap();
    assert_eq!(status.deployment.changes[0].field, "engineVersion");
    assert_eq!(status.deployment.deployment_name, "coffee-2");

    // (case, facts, steps, reason)
    let table: Vec<(&str, Facts, Vec<&str>, &str)> = vec![
        (
            "InPlace: one ModifyDBCluster",
            with(upgrade(), |f| {
                f.cluster.spec.upgrade.upgrade_policy = UpgradePolicy::InPlace
            }),
            vec!["Modify"],
            "Synced",
        ),
        (
            "not looked for in this reconcile: waits",
            with(upgrade(), |f| f.blue_green = None),
            vec![],
            "Waiting",
        ),
        (
            "another change in the same edit is sent in place first",
            with(upgrade(), |f| {
                f.cluster.spec.backup_retention_period = Some(7);
                f.observed.as_mut().unwrap().backup_retention_period = Some(1);
            }),
            vec!["Modify"],
            "Synced",
        ),
        (
            "the cluster busy: waits",
            with(upgrade(), |f| {
                f.observed.as_mut().unwrap().status = "backing-up".into()
            }),
            vec![],
            "Synced",
        ),
        (
            "a password RDS manages: refused, never in place",
            with(upgrade(), |f| {
                f.cluster.spec.password.manage_master_user_password = Some(true);
                f.password = PasswordFacts::Managed(None);
            }),
            vec![],
            "BlueGreenUnsupported",
        ),
        (
            "a member of a global database: refused",
            with(upgrade(), |f| {
                f.observed.as_mut().unwrap().global_cluster = Some("coffee-global".into())
            }),
            vec![],
            "BlueGreenUnsupported",
        ),
        (
            "drift of the version (not an edit) goes blue/green too",
            with(upgrade(), |f| {
                f.cluster
                    .status
                    .as_mut()
                    .unwrap()
                    .reported
                    .observed_generation = Some(2)
            }),
            vec!["CreateBlueGreen"],
            "BlueGreenProvisioning",
        ),
    ];
    for (case, f, steps, reason) in table {
        let p = plan(&f);
        let modify = modification(&p).map(|m| m.fields());
        assert_eq!(names(&p), steps, "{case}");
        assert_eq!(synced_reason(&p), reason, "{case}");
        if let Some(fields) = modify.filter(|_| case.starts_with("another")) {
            assert!(!fields.contains(&"engineVersion"), "{case}: {fields:?}");
        }
    }
}

#[test]
fn a_deployment_is_reported_and_switched_over_only_once_approved() {
    let annotated = |f: &mut Facts, v: &str| {
        let a = f.cluster.metadata.annotations.get_or_insert_default();
        a.insert(SWITCHOVER_ANNOTATION.into(), v.into());
    };
    // (case, facts, steps, reason)
    let table: Vec<(&str, Facts, Vec<&str>, &str)> = vec![
        (
            "provisioning",
            running("PROVISIONING"),
            vec![],
            "BlueGreenProvisioning",
        ),
        (
            "available, not approved",
            running("AVAILABLE"),
            vec![],
            "SwitchoverAwaitingApproval",
        ),
        (
            "approved by spec.switchover",
            with(running("AVAILABLE"), |f| {
                f.cluster.spec.upgrade.switchover = Some(BGD.into())
            }),
            vec!["Switchover"],
            "SwitchingOver",
        ),
        (
            "another deployment's approval",
            with(running("AVAILABLE"), |f| {
                f.cluster.spec.upgrade.switchover = Some("bgd-other".into())
            }),
            vec![],
            "SwitchoverAwaitingApproval",
        ),
        (
            "approved by the annotation, which is then removed",
            with(running("AVAILABLE"), |f| annotated(f, "true")),
            vec!["Switchover", "ClearAnnotation"],
            "SwitchingOver",
        ),
        (
            "switchoverPolicy Auto",
            with(running("AVAILABLE"), |f| {
                f.cluster.spec.upgrade.switchover_policy = SwitchoverPolicy::Auto
            }),
            vec!["Switchover"],
            "SwitchingOver",
        ),
        (
            "approved but still provisioning: nothing sent",
            with(running("PROVISIONING"), |f| annotated(f, "true")),
            vec![],
            "BlueGreenProvisioning",
        ),
        (
            "switching over",
            running("SWITCHOVER_IN_PROGRESS"),
            vec![],
            "SwitchingOver",
        ),
        (
            "a failed switchover deletes nothing",
            running("SWITCHOVER_FAILED"),
            vec![],
            "SwitchoverFailed",
        ),
        (
            "an invalid green deletes nothing",
            running("INVALID_CONFIGURATION"),
            vec![],
            "BlueGreenInvalid",
        ),
        (
            "switched over: in sync, the old cluster kept",
            switched(None, &[], vec![]),
            vec![],
            "Synced",
        ),
    ];
    for (case, f, steps, reason) in table {
        let p = plan(&f);
        assert_eq!(names(&p), steps, "{case}");
        assert_eq!(synced_reason(&p), reason, "{case}");
    }
    let done = plan(&switched(None, &[], vec![]));
    let bg = done.status.unwrap().fields.blue_green.unwrap();
    assert_eq!(bg.old_cluster.as_deref(), Some("coffee-old1"));
    assert_eq!(bg.green_cluster, None);
    let waiting = plan(&running("AVAILABLE"))
        .status
        .unwrap()
        .fields
        .blue_green;
    let waiting = waiting.unwrap();
    assert_eq!(
        waiting.green_cluster.as_deref(),
        Some("coffee-green-abcdef")
    );
}

/// maxLagSeconds: an approved switchover waits while green's AuroraBinlogReplicaLag is over it,
/// not known, or -1 (binlog replication stopped), with the figure; it goes once green is within.
#[test]
fn an_approved_switchover_waits_while_green_is_further_behind_than_max_lag_seconds() {
    let approved = |max: Option<i32>, lag: Option<f64>| {
        with(running("AVAILABLE"), |f| {
            f.cluster.spec.upgrade.switchover = Some(BGD.into());
            f.cluster.spec.upgrade.max_lag_seconds = max;
            f.blue_green.as_mut().unwrap().found.green_lag_seconds = lag;
        })
    };
    // (case, maxLagSeconds, green's lag, steps, reason, the message names)
    let table = [
        (
            "no maxLagSeconds: never read, never waits",
            None,
            None,
            vec!["Switchover"],
            "SwitchingOver",
            "",
        ),
        (
            "within it",
            Some(5),
            Some(2.0),
            vec!["Switchover"],
            "SwitchingOver",
            "",
        ),
        (
            "at it",
            Some(5),
            Some(5.0),
            vec!["Switchover"],
            "SwitchingOver",
            "",
        ),
        (
            "over it",
            Some(5),
            Some(42.0),
            vec![],
            "SwitchoverWaitingForLag",
            "42",
        ),
        (
            "not known",
            Some(5),
            None,
            vec![],
            "SwitchoverWaitingForLag",
            "not known",
        ),
        (
            "replication stopped",
            Some(5),
            Some(-1.0),
            vec![],
            "SwitchoverWaitingForLag",
            "not",
        ),
    ];
    for (case, max, lag, steps, reason, names_it) in table {
        let p = plan(&approved(max, lag));
        assert_eq!(names(&p), steps, "{case}");
        assert_eq!(synced_reason(&p), reason, "{case}");
        let message = p.status.as_ref().map_or("", |s| s.synced.message.as_str());
        assert!(message.contains(names_it), "{case}: {message}");
    }
}

#[test]
fn the_old_cluster_goes_after_its_retention_members_first_then_it_then_the_deployment() {
    let ours_ns = || vec![instance("writer-old1", "shop")];
    let theirs = || vec![instance("writer-old1", "tea")];
    // (case, facts, steps)
    let table: Vec<(&str, Facts, Vec<&str>)> = vec![
        (
            "no retention: kept",
            switched(None, &["writer-old1"], ours_ns()),
            vec![],
        ),
        (
            "retention not passed: kept",
            switched(Some("2h"), &["writer-old1"], ours_ns()),
            vec![],
        ),
        (
            "retention passed: the members of this namespace first",
            switched(Some("30m"), &["writer-old1"], ours_ns()),
            vec!["DeleteMember"],
        ),
        (
            "a member of another namespace is never deleted",
            switched(Some("30m"), &["writer-old1"], theirs()),
            vec![],
        ),
        (
            "no member left: the old cluster",
            switched(Some("30m"), &[], vec![]),
            vec!["Delete"],
        ),
        (
            "the old cluster gone: the deployment",
            with(switched(Some("30m"), &[], vec![]), |f| {
                f.blue_green.as_mut().unwrap().found.old = None
            }),
            vec!["DeleteBlueGreen"],
        ),
        (
            // (the Secrets let go of their owner reference, as under Retain always)
            "deletionPolicy Retain: kept",
            with(switched(Some("30m"), &[], vec![]), |f| {
                f.cluster.spec.deletion.deletion_policy = DeletionPolicy::Retain
            }),
            vec!["SetSecretOwner"],
        ),
        (
            "an old cluster not ours: kept",
            with(switched(Some("30m"), &[], vec![]), |f| {
                let old = f.blue_green.as_mut().unwrap().found.old.as_mut();
                old.unwrap().tags = other_tags();
            }),
            vec![],
        ),
    ];
    for (case, f, steps) in table {
        assert_eq!(names(&plan(&f)), steps, "{case}");
    }
    let p = plan(&switched(Some("30m"), &[], vec![]));
    let deleted = p.steps.iter().find_map(|s| match s {
        Step::Own(ClusterStep::Delete {
            identifier,
            final_snapshot,
        }) => Some((identifier.as_str(), final_snapshot.clone())),
        _ => None,
    });
    let (identifier, snapshot) = deleted.unwrap();
    assert_eq!(identifier, "coffee-old1", "never the cluster itself");
    assert!(
        snapshot.is_some_and(|s| s.starts_with("coffee-old1-final-")),
        "a final snapshot under the default deletionPolicy Snapshot"
    );
}

#[test]
fn deleting_the_dbcluster_deletes_the_deployment_first_then_what_it_left() {
    let green = || ObservedCluster {
        identifier: "coffee-green-abcdef".into(),
        members: vec![member("writer-green-abcdef", true, "in-sync")],
        ..ours()
    };
    // (case, facts, steps)
    let table: Vec<(&str, Facts, Vec<&str>)> = vec![
        (
            "the deployment first",
            deleting(running("AVAILABLE")),
            vec!["DeleteBlueGreen"],
        ),
        (
            "a switchover under way is waited for",
            deleting(running("SWITCHOVER_IN_PROGRESS")),
            vec![],
        ),
        (
            "then green's members",
            deleting(with(running("AVAILABLE"), |f| {
                let facts = f.blue_green.as_mut().unwrap();
                facts.found.deployment = None;
                facts.found.green = Some(green());
                facts.members = vec![instance("writer-green-abcdef", "shop")];
            })),
            vec!["DeleteMember"],
        ),
        (
            "deletionPolicy Retain keeps all of it",
            deleting(with(running("AVAILABLE"), |f| {
                f.cluster.spec.deletion.deletion_policy = DeletionPolicy::Retain
            })),
            vec!["RemoveFinalizer"],
        ),
    ];
    for (case, f, steps) in table {
        assert_eq!(names(&plan(&f)), steps, "{case}");
    }
}

#[test]
fn the_deployment_is_looked_for_only_when_recorded_or_wanted() {
    let f = upgrade();
    let wanted = crate::dbcluster::plan::blue_green::read(&f.cluster, f.observed.as_ref());
    assert!(
        matches!(wanted, Some(crate::database::blue_green::Read::OfSource(_))),
        "{wanted:?}"
    );
    let in_place = with(upgrade(), |f| {
        f.cluster.spec.upgrade.upgrade_policy = UpgradePolicy::InPlace
    });
    assert_eq!(
        crate::dbcluster::plan::blue_green::read(&in_place.cluster, in_place.observed.as_ref()),
        None
    );
    let same = with(upgrade(), |f| {
        f.cluster.spec.engine_version = Some(FIVE.into())
    });
    assert_eq!(
        crate::dbcluster::plan::blue_green::read(&same.cluster, same.observed.as_ref()),
        None
    );
    assert!(
        matches!(
            crate::dbcluster::plan::blue_green::read(&running("AVAILABLE").cluster, None),
            Some(crate::database::blue_green::Read::Recorded { .. })
        ),
        "the cluster gone (a deletion): the recorded deployment is still read"
    );
    let recorded = running("AVAILABLE");
    assert!(matches!(
        crate::dbcluster::plan::blue_green::read(&recorded.cluster, recorded.observed.as_ref()),
        Some(crate::database::blue_green::Read::Recorded { .. })
    ));
}

#[test]
fn a_dry_run_shows_the_deployment_as_a_switchover_and_sends_nothing() {
    let dry = with(upgrade(), |f| {
        let a = f.cluster.metadata.annotations.get_or_insert_default();
        a.insert(DRY_RUN_ANNOTATION.into(), "true".into());
    });
    let p = plan(&dry);
    assert!(p.steps.is_empty(), "{:?}", p.steps);
    let fields = p.status.unwrap().fields;
    let shown: Vec<String> = (fields.common.dry_run.unwrap().steps.iter())
        .map(|s| format!("{} {}", s.action, s.disruption))
        .collect();
    assert_eq!(shown, ["CreateBlueGreenDeployment Switchover"]);
}
