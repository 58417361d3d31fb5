//! upgradePolicy BlueGreen: a change RDS applies with an outage goes through one blue/green
//! deployment, switched over only once approved and AVAILABLE; a failure deletes nothing; the
//! old instance is kept for the retention the spec sets; a deletion takes the deployment first.

use super::*;
use crate::database::blue_green::{Call, DeploymentStatus};
use crate::dbinstance::plan::blue_green::SWITCHOVER_ANNOTATION;
use crate::dbinstance::{BlueGreenStatus, SwitchoverPolicy, UpgradePolicy};
use crate::rds_state::{BlueGreenTargets, ObservedDeployment};

const BGD: &str = "bgd-0123456789abcdef";

/// Our instance under upgradePolicy BlueGreen, the read step having found no deployment of it.
fn blue_green_policy() -> Facts {
    with(synced(), |f| {
        f.db.spec.upgrade.upgrade_policy = UpgradePolicy::BlueGreen;
        f.blue_green = Some(BlueGreenFacts::default());
    })
}

/// Our instance under upgradePolicy BlueGreen, the spec just edited to MySQL 8.4.
fn upgrade() -> Facts {
    blue_green_policy().edited(|s| {
        s.engine_version = Some("8.4.3".into());
        s.maintenance.allow_major_version_upgrade = Some(true);
    })
}

fn deployment(status: &str) -> ObservedDeployment {
    let green = "arn:aws:rds:us-east-1:123456789012:db:coffee-green-abcdef";
    crate::database::blue_green::observed(BGD, [ARN.into(), green.into()], status)
}

/// The upgrade once its deployment was made and recorded, RDS reporting it in `status`.
fn running(status: &str) -> Facts {
    with(upgrade(), |f| {
        let s = f.db.status.as_mut().unwrap();
        s.reported.observed_generation = Some(2);
        s.blue_green = Some(BlueGreenStatus {
            deployment: DeploymentStatus::made(BGD, "coffee-2"),
            ..Default::default()
        });
        f.blue_green = Some(BlueGreenFacts {
            deployment: Some(deployment(status)),
            ..Default::default()
        });
    })
}

/// When status says the switchover was seen completed.
fn switched_at(f: &mut Facts) -> &mut Option<String> {
    let status = f.db.status.as_mut().unwrap();
    &mut status
        .blue_green
        .as_mut()
        .unwrap()
        .deployment
        .switched_over_at
}

fn reason(p: &Plan) -> String {
    (p.status.as_ref()).map_or_else(String::new, |s| s.synced.reason.clone())
}

fn switchover() -> Step {
    Step::BlueGreen {
        identifier: "coffee".into(),
        call: Call::Switchover {
            deployment: BGD.into(),
            timeout: None,
        },
    }
}

#[test]
fn a_major_upgrade_is_one_deployment_and_in_place_is_unchanged() {
    let p = plan(&upgrade());
    assert_eq!(
        p.steps,
        vec![Step::BlueGreen {
            identifier: "coffee".into(),
            call: Call::Create {
                name: "coffee-2".into(),
                source: ARN.into(),
                targets: Box::new(BlueGreenTargets {
                    engine_version: Some("8.4.3".into()),
                    ..Default::default()
                }),
                tags: spec::tags_of(&upgrade().db),
            },
        }]
    );
    assert_eq!(reason(&p), "BlueGreenProvisioning");
    let recorded = p.status.unwrap().fields.blue_green.unwrap();
    assert_eq!(recorded.deployment.changes[0].field, "engineVersion");
    assert_eq!(
        recorded.deployment.deployment_identifier, "",
        "read by its source next time"
    );
    // The same edit InPlace: one ModifyDBInstance, as before.
    let in_place = with(upgrade(), |f| {
        f.db.spec.upgrade.upgrade_policy = UpgradePolicy::InPlace
    });
    assert!(
        matches!(&plan(&in_place).steps[..], [Step::Modify { modification, .. }]
            if modification.engine_version.as_deref() == Some("8.4.3")),
        "{:?}",
        plan(&in_place).steps
    );
    // A change with no outage (the backup window) is sent in place first, without the version.
    let both = upgrade().edited(|s| s.backups.preferred_backup_window = Some("03:00-04:00".into()));
    let p = plan(&both);
    assert!(
        matches!(&p.steps[..], [Step::Modify { modification, .. }]
            if modification.engine_version.is_none() && modification.preferred_backup_window.is_some()),
        "{:?}",
        p.steps
    );
    // Never made without a read of this reconcile that found none.
    let unread = with(upgrade(), |f| f.blue_green = None);
    assert_eq!(plan(&unread).steps, vec![]);
    // What RDS refuses (SourceDatabaseNotSupportedFault) is reported, never sent.
    let managed = with(upgrade(), |f| {
        f.db.spec.password.master_user_password = None;
        f.db.spec.password.manage_master_user_password = Some(true);
        f.password = PasswordFacts::Managed(Some(pw("Sup3r-Secret")));
    });
    assert_eq!(plan(&managed).steps, vec![]);
    assert_eq!(reason(&plan(&managed)), "BlueGreenUnsupported");
    // In sync, BlueGreen costs no call: no deployment is looked for.
    let quiet = with(synced(), |f| {
        f.db.spec.upgrade.upgrade_policy = UpgradePolicy::BlueGreen
    });
    assert_eq!(reads(&quiet.db, quiet.observed.as_ref()).blue_green, None);
    // Made before a crash, unrecorded: found by its source, never made twice.
    let found = with(upgrade(), |f| {
        f.blue_green = Some(BlueGreenFacts {
            deployment: Some(deployment("PROVISIONING")),
            ..Default::default()
        })
    });
    assert_eq!(plan(&found).steps, vec![]);
    assert_eq!(
        reads(&upgrade().db, upgrade().observed.as_ref()).blue_green,
        Some(BlueGreenRead::OfSource(ARN.into()))
    );
}

#[test]
fn a_switchover_waits_for_approval_and_for_available() {
    let waiting = plan(&running("AVAILABLE"));
    assert_eq!(waiting.steps, vec![]);
    assert_eq!(reason(&waiting), "SwitchoverAwaitingApproval");
    assert_eq!(waiting.events[0].reason, "SwitchoverReady");
    let by_spec = with(running("AVAILABLE"), |f| {
        f.db.spec.upgrade.switchover = Some(BGD.into())
    });
    assert_eq!(plan(&by_spec).steps, vec![switchover()]);
    let other = with(running("AVAILABLE"), |f| {
        f.db.spec.upgrade.switchover = Some("bgd-other".into())
    });
    assert_eq!(plan(&other).steps, vec![]);
    let by_annotation = with(running("AVAILABLE"), |f| {
        f.db.metadata.annotations = Some([(SWITCHOVER_ANNOTATION.into(), "true".into())].into())
    });
    assert_eq!(
        plan(&by_annotation).steps,
        vec![switchover(), Step::ClearAnnotation(SWITCHOVER_ANNOTATION)],
        "the annotation approves once"
    );
    let auto = |status: &str| {
        with(running(status), |f| {
            f.db.spec.upgrade.switchover_policy = SwitchoverPolicy::Auto
        })
    };
    assert_eq!(plan(&auto("AVAILABLE")).steps, vec![switchover()]);
    for state in [
        "PROVISIONING",
        "SWITCHOVER_IN_PROGRESS",
        "INVALID_CONFIGURATION",
        "DELETING",
    ] {
        assert_eq!(
            plan(&auto(state)).steps,
            vec![],
            "Auto switches over only when AVAILABLE, not {state}"
        );
    }
    // While it runs, no ModifyDBInstance of what it carries, even of drift.
    let drifted = running("PROVISIONING").rds_shows(|o| o.engine_version = Some("8.0.41".into()));
    assert_eq!(plan(&drifted).steps, vec![]);
}

/// (maxLagSeconds, green's lag) -> whether the approved switchover goes: with maxLagSeconds set,
/// it waits while green is further behind, its lag is not known, or its replication is not active
/// (-1), and Synced gives the figure; the annotation that approved it stays until it goes.
#[test]
fn an_approved_switchover_waits_while_green_lags_over_max_lag_seconds() {
    let rows: [(Option<i32>, Option<f64>, bool, &str); 7] = [
        (None, None, true, ""),
        (None, Some(900.0), true, ""),
        (Some(30), Some(12.4), true, ""),
        (Some(30), Some(30.0), true, ""),
        (
            Some(30),
            Some(31.0),
            false,
            "green is 31 s behind blue, over maxLagSeconds 30",
        ),
        (Some(30), None, false, "not known yet"),
        (Some(30), Some(-1.0), false, "replication is not active"),
    ];
    for (max, lag, goes, words) in rows {
        let f = with(running("AVAILABLE"), |f| {
            f.db.metadata.annotations =
                Some([(SWITCHOVER_ANNOTATION.into(), "true".into())].into());
            f.db.spec.upgrade.max_lag_seconds = max;
            f.blue_green.as_mut().unwrap().green_lag_seconds = lag;
        });
        let p = plan(&f);
        match goes {
            true => assert_eq!(
                p.steps,
                vec![switchover(), Step::ClearAnnotation(SWITCHOVER_ANNOTATION)],
                "{max:?} {lag:?}"
            ),
            false => {
                assert_eq!(
                    p.steps,
                    vec![],
                    "{max:?} {lag:?}: waits, the annotation kept"
                );
                assert_eq!(reason(&p), "SwitchoverWaitingForLag");
                let message = &p.status.as_ref().unwrap().synced.message;
                assert!(
                    message.contains(words) && message.contains(BGD),
                    "{message}"
                );
                assert!(p.events.iter().all(|e| e.reason != "SwitchingOver"));
            }
        }
    }
}

#[test]
fn a_failed_switchover_is_reported_and_deletes_nothing() {
    let failed = with(running("SWITCHOVER_FAILED"), |f| {
        if let Some(d) = f.blue_green.as_mut().and_then(|b| b.deployment.as_mut()) {
            d.status_details = Some("Switchover failed: green did not catch up".into());
        }
        f.db.spec.upgrade.switchover = Some(BGD.into());
    });
    let p = plan(&failed);
    assert_eq!(p.steps, vec![]);
    assert_eq!(reason(&p), "SwitchoverFailed");
    let message = &p.status.as_ref().unwrap().synced.message;
    assert!(
        message.contains("green did not catch up") && message.contains("nothing is deleted"),
        "{message}"
    );
    assert_eq!(p.events[0].type_, Warning);
}

#[test]
fn the_old_instance_is_kept_until_its_retention_then_deleted_by_the_deletion_policy() {
    let old = ObservedInstance {
        identifier: "coffee-old1".into(),
        arn: Some("arn:aws:rds:us-east-1:123456789012:db:coffee-old1".into()),
        ..ours()
    };
    let completed = |retention: Option<&str>, switched: &str| {
        with(running("SWITCHOVER_COMPLETED"), |f| {
            let d = f.blue_green.as_mut().unwrap();
            let deployment = d.deployment.as_mut().unwrap();
            deployment.source = old.arn.clone().unwrap();
            deployment.target = Some(ARN.into());
            d.old = Some(old.clone());
            *switched_at(f) = Some(switched.into());
            f.db.spec.old_instance_retention = retention.map(|r| r.parse().unwrap());
            f.observed.as_mut().unwrap().engine_version = Some("8.4.3".into());
        })
    };
    let kept = plan(&completed(None, "2026-11-30T08:00:00Z"));
    assert_eq!(kept.steps, vec![], "kept when no retention is set");
    let bg = kept
        .status
        .as_ref()
        .unwrap()
        .fields
        .blue_green
        .clone()
        .unwrap();
    assert_eq!(bg.old_instance.as_deref(), Some("coffee-old1"));
    assert_eq!(reason(&kept), "Synced");
    assert_eq!(
        plan(&completed(Some("4h"), "2026-11-30T08:00:00Z")).steps,
        vec![],
        "not due yet"
    );
    let due = plan(&completed(Some("1h"), "2026-11-30T08:00:00Z"));
    assert_eq!(
        due.steps,
        vec![
            Step::Own(InstanceStep::DeleteInstance {
                identifier: "coffee-old1".into(),
                final_snapshot: Some("coffee-old1-final-6b0f1c2e-20261130100000".into()),
                delete_automated_backups: false,
            }),
            Step::BlueGreen {
                identifier: "coffee".into(),
                call: Call::Delete {
                    deployment: BGD.into()
                },
            },
        ]
    );
    let retained = with(completed(Some("1h"), "2026-11-30T08:00:00Z"), |f| {
        f.db.spec.deletion.deletion_policy = DeletionPolicy::Retain
    });
    assert_eq!(plan(&retained).steps, vec![], "Retain never deletes it");
    // First seen completed: the time is recorded now.
    let fresh = with(completed(None, NOW), |f| *switched_at(f) = None);
    let bg = plan(&fresh).status.unwrap().fields.blue_green.unwrap();
    assert_eq!(bg.deployment.switched_over_at.as_deref(), Some(NOW));
}

#[test]
fn deleting_the_dbinstance_takes_the_deployment_first_and_green_by_the_snapshot_rule() {
    let p = plan(&being_deleted(running("AVAILABLE")));
    assert_eq!(
        p.steps,
        vec![Step::BlueGreen {
            identifier: "coffee".into(),
            call: Call::Delete {
                deployment: BGD.into()
            },
        }]
    );
    assert_eq!(
        plan(&being_deleted(running("SWITCHOVER_IN_PROGRESS"))).steps,
        vec![]
    );
    let green = ObservedInstance {
        identifier: "coffee-green-abcdef".into(),
        ..ours()
    };
    let left = being_deleted(with(running("AVAILABLE"), |f| {
        f.blue_green = Some(BlueGreenFacts {
            green: Some(green.clone()),
            ..Default::default()
        })
    }));
    assert_eq!(
        plan(&left).steps,
        vec![Step::Own(InstanceStep::DeleteInstance {
            identifier: "coffee-green-abcdef".into(),
            final_snapshot: Some("coffee-green-abcdef-final-6b0f1c2e-19700101000000".into()),
            delete_automated_backups: false,
        })]
    );
    // Once nothing is left, the instance itself, as before.
    let alone = being_deleted(with(running("AVAILABLE"), |f| {
        f.blue_green = Some(BlueGreenFacts::default())
    }));
    assert!(
        matches!(&plan(&alone).steps[..], [Step::Own(InstanceStep::DeleteInstance { identifier, .. })] if identifier == "coffee")
    );
}

#[test]
fn a_dry_run_shows_the_deployment_as_a_switchover() {
    let dry = with(upgrade(), |f| {
        f.db.metadata.annotations =
            Some([(crate::dbinstance::DRY_RUN_ANNOTATION.into(), "true".into())].into())
    });
    let p = plan(&dry);
    let steps = p.status.unwrap().fields.common.dry_run.unwrap().steps;
    let bg = steps
        .iter()
        .find(|s| s.action == "CreateBlueGreenDeployment")
        .expect("the deployment step");
    assert_eq!(bg.disruption, "Switchover");
    assert_eq!(bg.fields[0].field, "engineVersion");
}

#[test]
fn under_blue_green_a_disruptive_field_is_never_sent_in_place() {
    // Drift of the class (no edit): put back through a deployment too, switched over once
    // approved, never by a ModifyDBInstance with its outage.
    let drifted =
        blue_green_policy().rds_shows(|o| o.db_instance_class = Some("db.t3.small".into()));
    let p = plan(&drifted);
    assert!(
        matches!(&p.steps[..], [Step::BlueGreen { call: Call::Create { targets, .. }, .. }]
            if targets.db_instance_class.as_deref() == Some("db.t3.micro")),
        "{:?}",
        p.steps
    );
    // A deployment recorded but not found (its CreateBlueGreenDeployment failed): made again,
    // never sent in place.
    let lost = with(running("AVAILABLE"), |f| {
        f.blue_green = Some(BlueGreenFacts::default());
        f.db.status
            .as_mut()
            .unwrap()
            .blue_green
            .as_mut()
            .unwrap()
            .deployment
            .deployment_identifier = String::new();
    });
    assert!(
        matches!(
            &plan(&lost).steps[..],
            [Step::BlueGreen {
                call: Call::Create { .. },
                ..
            }]
        ),
        "{:?}",
        plan(&lost).steps
    );
    // The last switchover's old instance is kept: another upgrade waits for it.
    let old = ObservedInstance {
        identifier: "coffee-old1".into(),
        ..ours()
    };
    let again = with(running("SWITCHOVER_COMPLETED"), |f| {
        let d = f.blue_green.as_mut().unwrap();
        d.deployment.as_mut().unwrap().source =
            "arn:aws:rds:us-east-1:123456789012:db:coffee-old1".into();
        d.old = Some(old);
    });
    let p = plan(&again);
    assert_eq!(p.steps, vec![]);
    assert_eq!(reason(&p), "BlueGreenOldInstanceKept");
}

#[test]
fn a_blue_green_deployment_under_way_keeps_the_backup_replication_record() {
    // The deployment's plan returns before the replication's own rule; the record of a
    // replication this DBInstance started stays in status, so it is stopped when the spec drops it.
    let recorded = crate::dbinstance::BackupReplicationStatus {
        region: "us-west-2".into(),
        automated_backups_arn: None,
    };
    let f = with(running("AVAILABLE"), |f| {
        f.db.status.as_mut().unwrap().automated_backup_replication = Some(recorded.clone());
    });
    let p = plan(&f);
    assert_eq!(reason(&p), "SwitchoverAwaitingApproval");
    let fields = p.status.expect("a status").fields;
    assert_eq!(fields.automated_backup_replication, Some(recorded));
}
