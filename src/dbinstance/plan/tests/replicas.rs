//! A DBInstance that is a read replica (spec.replicaOf): made only of a source this namespace may
//! copy, never sending or drifting on what it inherits, promoted once (one-way), and a source with
//! live replicas that waits for them before its deletion.

use super::*;
use crate::dbinstance::plan::replica::ReplicaSource;
use crate::dbinstance::plan::tenancy::RestoreSource;
use crate::dbinstance::{RESTORABLE_BY_TAG, ReplicaOf, ReplicationStatus};

const SOURCE_PASSWORD: &str = "Source-Secret-1";

/// A replica of the DBInstance `coffee-main` of this namespace (RDS identifier coffee-main),
/// whose password Secret the read step found; the spec also carries what a replica inherits.
fn replica() -> Facts {
    with(facts(), |f| {
        f.db.spec.replica_of = Some(ReplicaOf {
            name: Some("coffee-main".into()),
            ..Default::default()
        });
        f.db.spec.password.master_user_password = None;
        f.password = PasswordFacts::Referenced(Ok(pw(SOURCE_PASSWORD)));
        f.replica_source = Some(Ok(ReplicaSource {
            backup_retention: Some(7),
            source: "coffee-main".into(),
            found: RestoreSource::Found {
                tags: [
                    (OWNER_TAG.to_owned(), "main-uid".to_owned()),
                    (OWNER_NAME_TAG.to_owned(), "shop/coffee-main".to_owned()),
                ]
                .into(),
                instance_tags: None,
            },
        }));
    })
}

/// The replica as RDS shows it: a copy of its source, replicating.
fn replica_in_rds() -> ObservedInstance {
    ObservedInstance {
        replica_source: Some("coffee-main".into()),
        status_infos: vec![crate::rds_state::StatusInfo {
            status_type: "read replication".into(),
            status: "replicating".into(),
            normal: true,
            message: None,
        }],
        ..ours()
    }
}

/// The replica, made and last seen replicating at generation 1 (no password hash: it sends none).
pub(super) fn synced_replica() -> Facts {
    with(replica(), |f| {
        f.observed = Some(replica_in_rds());
        f.observed_directly = true;
        let mut status = observed_status("coffee", &replica_in_rds());
        status.reported.observed_generation = Some(1);
        status.common.owned = Some(true);
        status.replication = super::super::replica::status(&f.db, &replica_in_rds(), None);
        f.db.status = Some(status);
    })
}

fn steps(f: &Facts) -> Vec<Step> {
    plan(f).steps
}

fn reason(p: &Plan) -> String {
    (p.status.as_ref()).map_or_else(String::new, |s| s.synced.reason.clone())
}

#[test]
fn a_replica_is_made_once_of_a_source_this_namespace_may_copy() {
    let replica_step = |f: &Facts| {
        let mut spec = super::super::replica::view(&f.db.spec);
        spec.backups.copy_tags_to_snapshot = Some(true);
        Step::Own(InstanceStep::CreateReplica {
            identifier: "coffee".into(),
            source: "coffee-main".into(),
            spec: Box::new(spec),
            tags: spec::creation_tags(&f.db.spec, UID, "shop", "coffee"),
        })
    };
    let made = plan(&replica());
    assert_eq!(made.steps, vec![replica_step(&replica())]);
    let fields = &made.status.as_ref().unwrap().fields;
    assert_eq!(
        fields.common.master_user_password_hash, None,
        "a replica sends no password"
    );
    let Step::Own(InstanceStep::CreateReplica { spec, .. }) = &made.steps[0] else {
        unreachable!()
    };
    assert_eq!(
        (spec.master_username.as_deref(), spec.db_name.as_deref()),
        (None, None)
    );

    let not_ready = with(replica(), |f| {
        f.replica_source = Some(Err("DBInstance coffee-main is not Ready yet".into()))
    });
    let other_namespace = with(replica(), |f| {
        f.replica_source = Some(Ok(ReplicaSource {
            backup_retention: Some(7),
            source: "their-db".into(),
            found: RestoreSource::Found {
                tags: [
                    (OWNER_TAG.to_owned(), "their-uid".to_owned()),
                    (OWNER_NAME_TAG.to_owned(), "bank/ledger".to_owned()),
                ]
                .into(),
                instance_tags: None,
            },
        }))
    });
    let granted = with(other_namespace.clone(), |f| {
        if let Some(Ok(s)) = f.replica_source.as_mut()
            && let RestoreSource::Found { tags, .. } = &mut s.found
        {
            tags.insert(RESTORABLE_BY_TAG.into(), "ops shop".into());
        }
    });
    let absent = with(replica(), |f| {
        f.replica_source = Some(Ok(ReplicaSource {
            backup_retention: Some(7),
            source: "nowhere".into(),
            found: RestoreSource::NotFound,
        }))
    });
    for (name, f, expected_reason) in [
        ("source not Ready", not_ready, "ReferencesUnresolved"),
        (
            "another namespace's source",
            other_namespace,
            "ReplicaSourceNotOwned",
        ),
        ("no such source", absent, "ReplicaSourceNotOwned"),
    ] {
        let p = plan(&f);
        assert_eq!(p.steps, vec![], "case: {name}");
        assert_eq!(reason(&p), expected_reason, "case: {name}");
    }
    let p = plan(&granted);
    assert!(
        matches!(&p.steps[..], [Step::Own(InstanceStep::CreateReplica { source, .. })] if source == "their-db"),
        "a granted source is copied: {:?}",
        p.steps
    );
}

#[test]
fn a_replica_without_allocated_storage_is_made_with_its_sources() {
    let no_storage = with(replica(), |f| f.db.spec.allocated_storage = None);
    let p = plan(&no_storage);
    assert!(
        matches!(&p.steps[..], [Step::Own(InstanceStep::CreateReplica { spec, .. })] if spec.allocated_storage.is_none()),
        "one CreateDBInstanceReadReplica, sending no storage: {:?}",
        p.steps
    );
    assert_eq!(reason(&p), "Synced");
    let standalone = with(facts(), |f| f.db.spec.allocated_storage = None);
    let p = plan(&standalone);
    assert_eq!(p.steps, vec![], "an instance that is no replica needs it");
    assert_eq!(reason(&p), "InvalidSpec");
}

#[test]
fn a_replica_never_sends_or_drifts_on_what_it_inherits() {
    // The spec names a master user and database the replica's source has otherwise, and a
    // storage encryption it does not: none of it is sent.
    let f = with(synced_replica(), |f| {
        f.db.spec.master_username = Some("someone-else".into());
        f.db.spec.db_name = Some("OTHER".into());
        f.db.spec.security.storage_encrypted = Some(true);
    });
    let p = plan(&f);
    assert_eq!(p.steps, vec![]);
    assert_eq!(reason(&p), "Synced");
    let fields = &p.status.as_ref().unwrap().fields;
    assert_eq!(fields.common.master_user_password_hash, None);
    let replication = fields.replication.clone().unwrap();
    assert_eq!(
        replication.source_db_instance_identifier.as_deref(),
        Some("coffee-main")
    );
    assert_eq!(replication.status_infos[0].status, "replicating");
    // Its own settings still drift: the class.
    let moved = synced_replica().rds_shows(|o| o.db_instance_class = Some("db.t3.small".into()));
    assert!(
        matches!(&steps(&moved)[..], [Step::Modify { modification, password: None, .. }]
            if modification.db_instance_class.as_deref() == Some("db.t3.micro") && !modification.rotate_password),
        "{:?}",
        steps(&moved)
    );
}

#[test]
fn removing_replica_of_or_setting_promote_promotes_once_on_a_direct_read() {
    let removed = synced_replica().edited(|s| {
        s.replica_of = None;
        s.backup_retention_period = Some(7);
    });
    let promote = Step::Own(InstanceStep::PromoteReplica {
        identifier: "coffee".into(),
        backup_retention_period: Some(7),
        preferred_backup_window: None,
    });
    let p = plan(&removed);
    assert_eq!(p.steps, vec![promote.clone()]);
    assert_eq!(reason(&p), "Promoting");
    let fields = &p.status.as_ref().unwrap().fields;
    assert_eq!(
        fields.replication.as_ref().and_then(|r| r.promoted),
        Some(true)
    );
    assert_eq!(fields.common.master_user_password_hash, None);

    let flagged = synced_replica().edited(|s| {
        s.promote = Some(true);
        s.backup_retention_period = Some(7);
    });
    assert_eq!(steps(&flagged), vec![promote]);

    // From the shared poll's snapshot: nothing one-way is sent; the read step reads directly.
    let stale = with(removed.clone(), |f| f.observed_directly = false);
    assert_eq!(steps(&stale), vec![]);
    assert!(reads(&stale.db, stale.observed.as_ref()).direct);
    // A busy replica is promoted once it is available.
    let busy = removed.rds_shows(|o| o.status = "modifying".into());
    assert_eq!(steps(&busy), vec![]);
    assert_eq!(reason(&plan(&busy)), "Waiting");
}

#[test]
fn a_promoted_replica_is_given_the_specs_password_once() {
    // Status last showed a replica; RDS now shows it standalone, still with its source's
    // password: the spec's (here, a Secret of its own) is sent once.
    let promoted = with(synced_replica(), |f| {
        f.observed = Some(ours());
        f.db.spec.replica_of = None;
        f.db.spec.password.master_user_password = db().spec.password.master_user_password;
        f.password = PasswordFacts::Referenced(Ok(pw("Sup3r-Secret")));
        f.db.metadata.generation = Some(2);
        f.db.status.as_mut().unwrap().reported.observed_generation = Some(2);
    });
    let p = plan(&promoted);
    assert!(
        matches!(&p.steps[..], [Step::Modify { modification, password: Some(sent), .. }]
            if modification.rotate_password && *sent == pw("Sup3r-Secret")),
        "{:?}",
        p.steps
    );
    let hash = p
        .status
        .as_ref()
        .unwrap()
        .fields
        .common
        .master_user_password_hash
        .clone();
    assert_eq!(hash, Some(spec::password_hash(&key(), UID, "Sup3r-Secret")));
}

#[test]
fn a_replica_that_rds_shows_standalone_is_reported_not_changed() {
    let standalone = synced_replica().rds_shows(|o| o.replica_source = None);
    let p = plan(&standalone);
    assert_eq!(p.steps, vec![]);
    assert_eq!(reason(&p), "ReplicaMismatch");
    let other_source = with(replica(), |f| {
        f.db.spec.replica_of = Some(ReplicaOf {
            db_instance_identifier: Some("coffee-main".into()),
            ..Default::default()
        });
        f.observed = Some(replica_in_rds());
        f.observed.as_mut().unwrap().replica_source = Some("someone-else".into());
        f.db.status = synced_replica().db.status;
    });
    assert_eq!(reason(&plan(&other_source)), "ReplicaMismatch");
    assert_eq!(steps(&other_source), vec![]);
}

#[test]
fn a_replica_deleted_outside_the_operator_is_made_again_of_its_source() {
    let gone = with(synced_replica(), |f| {
        f.observed = None;
        f.absent_for = Some(Duration::from_secs(30));
        f.db.status.as_mut().unwrap().common.arn = Some(ARN.into());
    });
    assert!(reads(&gone.db, None).replica_source);
    let p = plan(&gone);
    assert!(
        matches!(&p.steps[..], [Step::Own(InstanceStep::CreateReplica { source, .. })] if source == "coffee-main"),
        "{:?}",
        p.steps
    );
    // Never on one look: the absence is confirmed first.
    let unconfirmed = with(gone, |f| f.absent_for = Some(Duration::from_secs(1)));
    assert_eq!(steps(&unconfirmed), vec![]);
}

#[test]
fn a_source_with_live_replicas_waits_and_a_replica_takes_no_final_snapshot() {
    let source =
        being_deleted(synced().rds_shows(|o| o.read_replicas = vec!["coffee-replica".into()]));
    let p = plan(&source);
    assert_eq!(p.steps, vec![]);
    assert_eq!(
        p.status.as_ref().map(|s| s.synced.reason.as_str()),
        Some("InUse")
    );
    let replica = being_deleted(synced_replica());
    assert_eq!(
        steps(&replica),
        vec![Step::Own(InstanceStep::DeleteInstance {
            identifier: "coffee".into(),
            final_snapshot: None,
            delete_automated_backups: false,
        })]
    );
    // Without replicas, the source is deleted after its final snapshot, as before.
    let alone = being_deleted(synced());
    assert_eq!(
        steps(&alone),
        vec![Step::Own(InstanceStep::DeleteInstance {
            identifier: "coffee".into(),
            final_snapshot: Some(FINAL.into()),
            delete_automated_backups: false,
        })]
    );
    let _ = ReplicationStatus::default();
}

#[test]
fn a_replica_the_spec_never_named_is_not_promoted_on_a_guess() {
    // RDS shows our instance as a replica, and the spec (and status) never named a source.
    let unnamed = synced().rds_shows(|o| o.replica_source = Some("someone".into()));
    let with_direct = with(unnamed, |f| f.observed_directly = true);
    let p = plan(&with_direct);
    assert_eq!(p.steps, vec![]);
    assert_eq!(reason(&p), "ReplicaMismatch");
    // promote: true says so.
    let asked = with_direct.edited(|s| s.promote = Some(true));
    assert!(
        matches!(
            &steps(&asked)[..],
            [Step::Own(InstanceStep::PromoteReplica { .. })]
        ),
        "{:?}",
        steps(&asked)
    );
}

/// A source with automated backups off: RDS refuses the replica with InvalidDBInstanceState, a
/// code that otherwise means busy, and words that were once the only way to tell. Decided from
/// the source as RDS reports it: no CreateDBInstanceReadReplica, SourceBackupsOff, looked at
/// again at the drift interval (the source may turn backups on); backups on or not reported: made.
#[test]
fn a_replica_of_a_source_with_backups_off_is_not_asked_for() {
    for (backups, made) in [(Some(0), false), (Some(1), true), (None, true)] {
        let f = with(replica(), |f| {
            if let Some(Ok(s)) = f.replica_source.as_mut() {
                s.backup_retention = backups;
            }
        });
        let p = plan(&f);
        let creates = (p.steps.iter()).any(|s| s.name() == "CreateReplica");
        assert_eq!(
            creates,
            made,
            "{backups:?}: {:?}",
            p.steps.iter().map(Step::name).collect::<Vec<_>>()
        );
        let synced = &p.status.as_ref().unwrap().synced;
        if !made {
            assert_eq!(synced.reason, "SourceBackupsOff");
            assert!(
                synced.message.contains("backupRetentionPeriod"),
                "{}",
                synced.message
            );
            assert!(
                matches!(p.requeue, Requeue::After(_)),
                "looked at again: {:?}",
                p.requeue
            );
        }
    }
}
