//! Table tests of the plan: creation, restore (spec.restoreFrom and after an out-of-band deletion), ownership, references and reads.

use super::*;

#[test]
fn creation_and_ownership() {
    let no_finalizer = with(facts(), |f| f.db.metadata.finalizers = None);
    let generated = with(facts(), |f| {
        f.db.spec.password.master_user_password = None;
        f.password = no_generated_secret("Gen3rated");
    });
    let mut generated_spec = db().spec;
    generated_spec.password.master_user_password = None;
    let foreign = with(facts(), |f| {
        let mut o = ours();
        o.tags = [
            (OWNER_TAG.to_owned(), "another-uid".to_owned()),
            (OWNER_NAME_TAG.to_owned(), "other/db".to_owned()),
        ]
        .into();
        f.observed = Some(o);
    });
    let untagged = facts().rds_shows(|o| o.tags.clear());
    // Who owns it goes to the operator's log only.
    let foreign_message = "an RDS instance named coffee already exists and is managed by another DBInstance; \
                 choose another dbInstanceIdentifier";
    let untagged_message = "an RDS instance named coffee already exists and is not managed by this DBInstance; \
             choose another dbInstanceIdentifier, or set spec.adoptionPolicy: Adopt to take it over";
    // A crash after CreateDBInstance: the instance carries our tag, status knows nothing yet.
    let crashed = facts().rds_shows(|o| o.status = "creating".into());
    let mut crashed_fields = observed_status("coffee", crashed.observed.as_ref().unwrap());
    crashed_fields.common.owned = Some(true);
    crashed_fields.common.master_user_password_hash =
        Some(spec::password_hash(&key(), UID, "Sup3r-Secret"));
    check(vec![
        (
            "absent instance is created, with the finalizer first",
            no_finalizer,
            plan_of(
                BUSY,
                vec![Step::AddFinalizer, create_step(Some("Sup3r-Secret"))],
                observed(
                    creating_fields(Some("Sup3r-Secret")),
                    true,
                    "Synced",
                    CREATING_SYNCED,
                ),
                vec![event(Normal, "Creating", "Create", CREATING_NOTE, 2)],
            ),
        ),
        (
            "a generated password is stored before the create that uses it",
            generated,
            plan_of(
                BUSY,
                vec![
                    Step::Secret(SecretStep::WritePassword {
                        name: "coffee-master-password".into(),
                        password: pw("Gen3rated"),
                        replace: false,
                        owner_reference: true,
                    }),
                    Step::Own(InstanceStep::CreateInstance {
                        identifier: "coffee".into(),
                        spec: creation_spec(generated_spec.clone()),
                        password: Some(pw("Gen3rated")),
                        tags: spec::creation_tags(&generated_spec, UID, "shop", "coffee"),
                    }),
                ],
                observed(
                    creating_fields(Some("Gen3rated")),
                    true,
                    "Synced",
                    CREATING_SYNCED,
                ),
                vec![event(Normal, "Creating", "Create", CREATING_NOTE, 2)],
            ),
        ),
        (
            "crash then adopt: our tagged instance is observed, never created again",
            crashed,
            plan_of(
                BUSY,
                vec![],
                observed(crashed_fields, true, "Synced", MATCHES),
                vec![],
            ),
        ),
        (
            "a foreign instance is never touched, and its owner is not disclosed",
            foreign,
            Plan {
                ext: InstanceReport {
                    log: Some("RDS instance coffee is not this DBInstance's: other/db".into()),
                    ..Default::default()
                },
                ..plan_of(
                    SETTLED,
                    vec![],
                    failed(None, "IdentifierInUse", foreign_message),
                    vec![event(Warning, "IdentifierInUse", "Reconcile", foreign_message, 0)],
                )
            },
        ),
        (
            "an untagged instance is foreign too",
            untagged,
            Plan {
                ext: InstanceReport {
                    log: Some(
                    "RDS instance coffee is not this DBInstance's: it has no rds-operator ownership tag"
                        .into(),
                ),
                    ..Default::default()
                },
                ..plan_of(
                    SETTLED,
                    vec![],
                    failed(None, "IdentifierInUse", untagged_message),
                    vec![event(Warning, "IdentifierInUse", "Reconcile", untagged_message, 0)],
                )
            },
        ),
    ]);
}

#[test]
fn out_of_band_deletion() {
    // Gone, confirmed by direct reads for a busy interval, same account and region, no snapshot.
    let gone = with(synced(), |f| {
        f.observed = None;
        f.observed_directly = true;
        f.absent_for = Some(Duration::from_secs(5));
    });
    let report = with(gone.clone(), |f| {
        f.db.spec.policies.drift_policy = DriftPolicy::Report
    });
    let first_sight = with(gone.clone(), |f| {
        f.absent_for = Some(Duration::from_secs(1))
    });
    let renaming = with(gone.clone(), |f| f.rename_in_progress = true);
    let was_renaming = with(gone.clone(), |f| {
        f.db.status.as_mut().unwrap().db_instance_status = Some("renaming".into());
    });
    let other_region = with(gone.clone(), |f| {
        f.identity.as_mut().unwrap().region = "eu-west-1".into()
    });
    let other_account = with(gone.clone(), |f| {
        f.identity.as_mut().unwrap().account = "999".into()
    });
    let with_snapshots = with(gone.clone(), |f| {
        f.snapshots = vec![
            snapshot("coffee-manual", "manual", "available", 100),
            snapshot("rds:coffee-2026-11-30", "automated", "available", 300),
            snapshot("coffee-final-failed", "manual", "failed", 400),
        ];
    });
    // The final snapshot of the deletion is still being taken: it has what the others lack.
    let final_being_taken = with(with_snapshots.clone(), |f| {
        f.snapshots
            .push(snapshot("coffee-final-new", "manual", "creating", 500))
    });

    let opted_in = with(gone.clone(), |f| {
        f.db.spec.deletion.out_of_band_deletion_policy =
            OutOfBandDeletionPolicy::RestoreOrCreateEmpty;
    });
    let only_final_being_taken = with(opted_in.clone(), |f| {
        f.snapshots = vec![snapshot("coffee-final-new", "manual", "creating", 500)]
    });
    let mut restored = creating_fields(Some("Sup3r-Secret"));
    restored.last_drift = Some(DriftRecord {
        time: NOW.into(),
        action: "Restored".into(),
        fields: vec![FieldDrift {
            field: "dbInstanceIdentifier".into(),
            observed: "(deleted outside the operator)".into(),
            desired: "restored from snapshot rds:coffee-2026-11-30".into(),
        }],
    });
    let mut recreated = creating_fields(Some("Sup3r-Secret"));
    recreated.last_drift = Some(DriftRecord {
        time: NOW.into(),
        action: "Recreated".into(),
        fields: vec![FieldDrift {
            field: "dbInstanceIdentifier".into(),
            observed: "(deleted outside the operator)".into(),
            desired: "coffee".into(),
        }],
    });
    let confirming =
        "RDS has no instance coffee; confirming with another direct read before acting";
    let mismatch = |account: &str, region: &str| {
        format!(
            "the instance was in account 123456789012, region us-east-1, but the operator now works in account {account}, \
             region {region}; nothing is created"
        )
    };
    let no_snapshot = "RDS instance coffee was deleted outside the operator and no snapshot of it exists, so nothing \
         is created; restore it, or set outOfBandDeletionPolicy: RestoreOrCreateEmpty to create an empty instance";
    let taking = "RDS instance coffee was deleted outside the operator; its snapshot coffee-final-new is still \
         creating (manual snapshot), so nothing is restored or created until it is available";
    let restoring = "RDS instance coffee was deleted outside the operator; restoring it from its newest snapshot \
         rds:coffee-2026-11-30 (automated, created t300)";
    check(vec![
        (
            "driftPolicy Report only says so, at the drift interval",
            report.clone(),
            refused(
                &report,
                SETTLED,
                "DeletedOutOfBand",
                "RDS instance coffee was deleted outside the operator; driftPolicy is Report, so it is not recreated",
            ),
        ),
        (
            "an absence seen for less than a busy interval is read again first",
            first_sight.clone(),
            refused(&first_sight, BUSY, "ConfirmingAbsence", confirming),
        ),
        (
            "nothing is decided while RDS reports a rename",
            renaming.clone(),
            refused(
                &renaming,
                BUSY,
                "RenameInProgress",
                "RDS has no instance coffee while it reports a rename in progress; waiting for the rename to finish",
            ),
        ),
        (
            "an instance last seen renaming is looked for a whole drift interval",
            was_renaming.clone(),
            refused(&was_renaming, BUSY, "ConfirmingAbsence", confirming),
        ),
        (
            "another region: nothing is created anywhere",
            other_region.clone(),
            refused(
                &other_region,
                SETTLED,
                "AccountOrRegionMismatch",
                &mismatch("123456789012", "eu-west-1"),
            ),
        ),
        (
            "another account: nothing is created anywhere",
            other_account.clone(),
            refused(
                &other_account,
                SETTLED,
                "AccountOrRegionMismatch",
                &mismatch("999", "us-east-1"),
            ),
        ),
        (
            "a snapshot still being taken is waited for, not passed over for an older one",
            final_being_taken.clone(),
            refused(&final_being_taken, BUSY, "SnapshotInProgress", taking),
        ),
        (
            "a snapshot still being taken is waited for, even with the opt-in to create empty",
            only_final_being_taken.clone(),
            refused(&only_final_being_taken, BUSY, "SnapshotInProgress", taking),
        ),
        (
            "restored from the newest available snapshot (a failed one passed over)",
            with_snapshots,
            plan_of(
                BUSY,
                vec![Step::Restore {
                    identifier: "coffee".into(),
                    snapshot: "rds:coffee-2026-11-30".into(),
                    spec: creation_spec(db().spec),
                    tags: spec::creation_tags(&db().spec, UID, "shop", "coffee"),
                }],
                observed(restored, true, "Synced", CREATING_SYNCED),
                vec![event(Warning, "Restoring", "Create", restoring, 1)],
            ),
        ),
        (
            "no snapshot: nothing is created, and the reason says why",
            gone.clone(),
            refused(&gone, SETTLED, "DeletedOutOfBand", no_snapshot),
        ),
        (
            "an empty instance only with the opt-in",
            opted_in.clone(),
            plan_of(
                BUSY,
                vec![Step::Own(InstanceStep::CreateInstance {
                    identifier: "coffee".into(),
                    spec: creation_spec(opted_in.db.spec.clone()),
                    password: Some(pw("Sup3r-Secret")),
                    tags: spec::creation_tags(&db().spec, UID, "shop", "coffee"),
                })],
                observed(recreated, true, "Synced", CREATING_SYNCED),
                vec![event(
                    Warning,
                    "Recreating",
                    "Create",
                    "RDS instance coffee was deleted outside the operator and no snapshot of it exists; \
                 creating an empty instance (outOfBandDeletionPolicy RestoreOrCreateEmpty)",
                    1,
                )],
            ),
        ),
    ]);
}

#[test]
fn reads_follow_ownership() {
    let f = synced();
    assert_eq!(
        reads(&f.db, f.observed.as_ref()).password,
        PasswordRead::Referenced {
            name: "coffee-db-password".into(),
            key: "password".into()
        }
    );
    let mut theirs = ours();
    theirs.tags.clear();
    theirs.master_user_secret_arn = Some("arn:secret".into());
    let managed = with(facts(), |f| {
        f.db.spec.password.master_user_password = None;
        f.db.spec.password.manage_master_user_password = Some(true);
    });
    assert_eq!(
        reads(&managed.db, Some(&theirs)).password,
        PasswordRead::None,
        "never another's secret"
    );
    let mut mine = ours();
    mine.master_user_secret_arn = Some("arn:secret".into());
    assert_eq!(
        reads(&managed.db, Some(&mine)).password,
        PasswordRead::Managed {
            secret_arn: Some("arn:secret".into())
        }
    );
    let d = deleting(DeletionPolicy::Delete, None);
    assert_eq!(
        reads(&d.db, None).release_candidates,
        vec!["coffee-master-password".to_owned()]
    );
    // References are resolved for every decision but deletion and a pause.
    assert!(reads(&f.db, None).references);
    assert!(reads(&f.db, f.observed.as_ref()).references);
    assert!(!reads(&d.db, None).references);
    let paused = annotated(synced(), crate::dbinstance::PAUSED_ANNOTATION, "true");
    assert!(!reads(&paused.db, paused.observed.as_ref()).references);
}

#[test]
fn ownership_tags_win_over_spec_tags() {
    let mut spec = db().spec;
    spec.tags = vec![
        Tag {
            key: "team".into(),
            value: "coffee".into(),
        },
        Tag {
            key: OWNER_TAG.into(),
            value: "forged".into(),
        },
    ];
    let tags = spec::creation_tags(&spec, UID, "shop", "db");
    assert_eq!(tags["team"], "coffee");
    assert_eq!(tags[OWNER_TAG], UID);
    assert_eq!(tags[OWNER_NAME_TAG], "shop/db");
}

#[test]
fn restore_from_rules() {
    use crate::dbinstance::{RestoreFrom, RestoreStatus};
    // The source is this namespace's own (its ownership tags name shop/...).
    let from = |r: RestoreFrom| {
        with(facts(), |f| {
            f.db.spec.restore_from = Some(r);
            f.restore_source = Some(tenancy::RestoreSource::Found {
                tags: [
                    (OWNER_TAG.to_owned(), "source-uid".to_owned()),
                    (OWNER_NAME_TAG.to_owned(), "shop/source".to_owned()),
                ]
                .into(),
                instance_tags: None,
            });
        })
    };
    let snapshot = from(RestoreFrom {
        db_snapshot_identifier: Some("coffee-before".into()),
        ..Default::default()
    });
    let point = from(RestoreFrom {
        source_db_instance_identifier: Some("coffee-prod".into()),
        restore_time: Some("2026-11-30T03:00:00Z".into()),
        ..Default::default()
    });
    let p = plan(&snapshot);
    assert!(matches!(&p.steps[0], Step::Restore { snapshot, .. } if snapshot == "coffee-before"));
    let fields = p.status.unwrap().fields;
    assert_eq!(
        fields.restore,
        Some(RestoreStatus {
            source: "snapshot coffee-before".into(),
            settings_applied: false
        })
    );
    assert_eq!(
        fields.common.master_user_password_hash.as_deref(),
        Some(super::password::RESTORED_PASSWORD),
        "a hash no password matches: the spec's password is sent once the instance is up"
    );
    let p = plan(&point);
    assert!(
        matches!(&p.steps[0], Step::RestoreToPointInTime { source, time: Some(t), .. } if source == "coffee-prod" && t == "2026-11-30T03:00:00Z")
    );
    // Once available, the restored instance gets the spec's settings and password in one
    // ModifyDBInstance, a longer backup retention of the source included: it is not drift.
    let restored = with(synced(), |f| {
        let mut o = ours();
        o.backup_retention_period = Some(7);
        o.db_instance_class = Some("db.t3.small".into());
        f.observed = Some(o);
        f.db.spec.backup_retention_period = Some(1);
        let status = f.db.status.as_mut().unwrap();
        status.restore = Some(RestoreStatus {
            source: "snapshot coffee-before".into(),
            settings_applied: false,
        });
        status.common.master_user_password_hash = Some(super::password::RESTORED_PASSWORD.into());
    });
    let p = plan(&restored);
    let Step::Modify {
        modification,
        password,
        ..
    } = &p.steps[0]
    else {
        panic!("expected one ModifyDBInstance, got {:?}", p.steps);
    };
    assert_eq!(p.steps.len(), 1);
    assert_eq!(modification.backup_retention_period, Some(1));
    assert_eq!(
        modification.db_instance_class.as_deref(),
        Some("db.t3.micro")
    );
    assert!(
        modification.rotate_password && password.is_some(),
        "the spec's password is sent"
    );
    let fields = p.status.clone().unwrap().fields;
    assert!(
        !fields.restore.unwrap().settings_applied,
        "applied only once RDS holds the settings: a lost change is sent again"
    );
    assert_eq!(
        fields.common.master_user_password_hash,
        Some(spec::password_hash(&key(), UID, "Sup3r-Secret")),
        "sent once"
    );
    assert!(p.events.iter().all(|e| e.reason != "DriftCorrected"));
    // Once RDS holds them, and nothing is pending: applied.
    let matching = with(restored.clone(), |f| {
        let o = f.observed.as_mut().unwrap();
        o.backup_retention_period = Some(1);
        o.db_instance_class = Some("db.t3.micro".into());
        f.db.status
            .as_mut()
            .unwrap()
            .common
            .master_user_password_hash = Some(spec::password_hash(&key(), UID, "Sup3r-Secret"));
    });
    let p = plan(&matching);
    assert!(p.steps.is_empty(), "{:?}", p.steps);
    assert!(p.status.unwrap().fields.restore.unwrap().settings_applied);
    // A change still pending in RDS: not yet.
    let pending = with(matching, |f| {
        (f.observed.as_mut().unwrap().pending_modified_values)
            .insert("backupRetentionPeriod".into(), "1".into());
    });
    assert!(
        !plan(&pending)
            .status
            .unwrap()
            .fields
            .restore
            .unwrap()
            .settings_applied
    );
    // While it is still being restored, nothing is sent.
    let busy = with(restored, |f| {
        f.observed.as_mut().unwrap().status = "creating".into()
    });
    assert!(plan(&busy).steps.is_empty());
}

/// A restore whose status write was lost (a crash, or a stale cached copy, between the restoring
/// call and the status write) is still recorded as a restore: the spec's password and settings
/// are sent, once. Only for an instance of ours this DBInstance never recorded.
#[test]
fn a_restore_never_recorded_still_gets_the_specs_password_and_settings() {
    use crate::dbinstance::{RestoreFrom, RestoreStatus};
    let unrecorded = with(facts(), |f| {
        f.db.spec.restore_from = Some(RestoreFrom {
            db_snapshot_identifier: Some("coffee-before".into()),
            ..Default::default()
        });
        f.db.spec.backup_retention_period = Some(1);
        let mut o = ours();
        o.backup_retention_period = Some(7);
        f.observed = Some(o);
    });
    let restore = Some(RestoreStatus {
        source: "snapshot coffee-before".into(),
        settings_applied: false,
    });
    let hash = Some(spec::password_hash(&key(), UID, "Sup3r-Secret"));
    let creating = with(unrecorded.clone(), |f| {
        f.observed.as_mut().unwrap().status = "creating".into()
    });
    let recorded = with(unrecorded.clone(), |f| {
        let mut status = observed_status("coffee", f.observed.as_ref().unwrap());
        status.common.master_user_password_hash = hash.clone();
        status.reported.observed_generation = Some(1);
        f.db.status = Some(status);
    });
    let adopted = with(unrecorded.clone(), |f| {
        (f.observed.as_mut().unwrap().tags)
            .insert(crate::dbinstance::ADOPTED_TAG.into(), "true".into());
    });
    let created = with(unrecorded.clone(), |f| f.db.spec.restore_from = None);
    // (case, facts, password sent, retention sent, status.restore, hash written)
    type Row<'a> = (
        &'a str,
        Facts,
        bool,
        Option<i32>,
        Option<RestoreStatus>,
        Option<&'a str>,
    );
    let rows: Vec<Row> = vec![
        (
            "available: sent",
            unrecorded,
            true,
            Some(1),
            restore.clone(),
            hash.as_deref(),
        ),
        (
            "still restoring: recorded, sent once available",
            creating,
            false,
            None,
            restore.clone(),
            Some(super::password::RESTORED_PASSWORD),
        ),
        (
            "recorded without a restore: nothing invented, the longer retention kept",
            recorded,
            false,
            None,
            None,
            hash.as_deref(),
        ),
    ];
    for (case, f, sent, retention, restore, written) in rows {
        let p = plan(&f);
        let modify = p.steps.iter().find_map(|s| match s {
            Step::Modify { modification, .. } => Some(modification),
            _ => None,
        });
        assert_eq!(
            modify.is_some_and(|m| m.rotate_password),
            sent,
            "{case}: {:?}",
            p.steps
        );
        assert_eq!(
            modify.and_then(|m| m.backup_retention_period),
            retention,
            "{case}"
        );
        let fields = p.status.unwrap().fields;
        assert_eq!(fields.restore, restore, "{case}");
        assert_eq!(
            fields.common.master_user_password_hash.as_deref(),
            written,
            "{case}"
        );
    }
    // An adopted instance, or one the spec created: no restore is read into them.
    for (case, f) in [("adopted", adopted), ("created", created)] {
        let p = plan(&f);
        assert!(
            !p.steps.iter().any(
                |s| matches!(s, Step::Modify { modification, .. } if modification.rotate_password)
            ),
            "{case}: {:?}",
            p.steps
        );
        assert_eq!(p.status.unwrap().fields.restore, None, "{case}");
    }
}

#[test]
fn references_wait_until_they_resolve() {
    let unresolved = with(facts(), |f| {
        f.subnet_group = Some(Err(
            "DBSubnetGroup coffee-subnets is not Ready yet (dbSubnetGroupRef)".into(),
        ));
    });
    check_outlines(vec![
        (
            "an unresolved reference waits, creating nothing",
            unresolved.clone(),
            vec![],
            "ReferencesUnresolved",
        ),
        (
            "a resolved reference proceeds",
            with(facts(), |f| {
                f.subnet_group = Some(Ok("coffee-subnets".into()))
            }),
            vec!["CreateInstance"],
            "Synced",
        ),
    ]);
    assert!(
        matches!(plan(&unresolved).requeue, Requeue::After(_)),
        "looked at again, not a hot loop"
    );
    let resolved = with(facts(), |f| {
        f.subnet_group = Some(Ok("coffee-subnets".into()))
    });
    let Step::Own(InstanceStep::CreateInstance { spec, .. }) = &plan(&resolved).steps[0] else {
        panic!("expected a create");
    };
    assert_eq!(
        spec.network.db_subnet_group_name.as_deref(),
        Some("coffee-subnets"),
        "the group's RDS name is used"
    );
}

#[test]
fn a_restore_from_a_dbsnapshot_waits_for_it_and_restores_its_identifier() {
    use crate::crd::LocalRef;
    use crate::dbinstance::RestoreFrom;
    let by_ref = |resolved: Result<String, String>| {
        with(facts(), |f| {
            f.db.spec.restore_from = Some(RestoreFrom {
                db_snapshot_ref: Some(LocalRef {
                    name: "before-change".into(),
                }),
                ..Default::default()
            });
            f.snapshot_ref = Some(resolved);
            f.restore_source = Some(tenancy::RestoreSource::Found {
                tags: [
                    (OWNER_TAG.to_owned(), "snapshot-uid".to_owned()),
                    (OWNER_NAME_TAG.to_owned(), "shop/before-change".to_owned()),
                ]
                .into(),
                instance_tags: None,
            });
        })
    };
    // Not available yet: it waits, and nothing is restored.
    let waiting = plan(&by_ref(Err(
        "DBSnapshot before-change is not Ready yet".into()
    )));
    assert!(
        waiting
            .steps
            .iter()
            .all(|s| matches!(s, Step::AddFinalizer)),
        "{:?}",
        waiting.steps
    );
    let synced = waiting.status.unwrap().synced;
    assert_eq!(
        (synced.reason.as_str(), synced.message.as_str()),
        (
            "ReferencesUnresolved",
            "DBSnapshot before-change is not Ready yet"
        )
    );
    // Available: restored from its RDS identifier, and reported as that snapshot.
    let p = plan(&by_ref(Ok("coffee-before-change".into())));
    assert!(
        matches!(&p.steps[0], Step::Restore { snapshot, .. } if snapshot == "coffee-before-change"),
        "{:?}",
        p.steps
    );
    let restore = p.status.unwrap().fields.restore.unwrap();
    assert_eq!(restore.source, "snapshot coffee-before-change");
    // Another namespace's snapshot behind the name is refused as any restore source.
    let foreign = with(by_ref(Ok("coffee-before-change".into())), |f| {
        f.restore_source = Some(tenancy::RestoreSource::Found {
            tags: [
                (OWNER_TAG.to_owned(), "other-uid".to_owned()),
                (OWNER_NAME_TAG.to_owned(), "tea/before-change".to_owned()),
            ]
            .into(),
            instance_tags: None,
        });
    });
    let p = plan(&foreign);
    assert!(!p.steps.iter().any(|s| matches!(s, Step::Restore { .. })));
    assert_eq!(p.status.unwrap().synced.reason, "RestoreSourceNotOwned");
}
