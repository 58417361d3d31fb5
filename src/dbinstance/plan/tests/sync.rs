//! Table tests of the plan: our own instance: in sync, edits and drift, tags, rotation, the connection Secret, protection kept, fights, pending reboot.

use super::*;

#[test]
fn our_instance_in_sync_pending_refused_or_busy() {
    let in_sync = synced();
    let pending = with(synced(), |f| {
        let mut o = ours();
        o.pending_modified_values =
            [("dbInstanceClass".to_owned(), "db.t3.small".to_owned())].into();
        f.observed = Some(o);
        f.db.spec.db_instance_class = "db.t3.small".into();
        f.db.spec.maintenance.apply_immediately = Some(false);
    });
    let shrink = with(synced(), |f| {
        f.db.spec.allocated_storage = Some(20);
        let mut o = ours();
        o.allocated_storage = Some(50);
        f.observed = Some(o);
        f.db.metadata.generation = Some(2);
    });
    let shrink_message = "allocatedStorage cannot shrink from 50 to 20 GiB: RDS storage only grows";
    let busy = synced().rds_shows(|o| {
        o.status = "backing-up".into();
        o.db_instance_class = Some("db.t3.large".into());
    });
    let became_available = with(synced(), |f| {
        f.db.status.as_mut().unwrap().db_instance_status = Some("creating".into());
    });
    check(vec![
        (
            "in sync: nothing to do, look again at the safety net",
            in_sync.clone(),
            plan_of(
                SAFETY_NET,
                vec![],
                observed(synced_fields(&in_sync), true, "Synced", MATCHES),
                vec![],
            ),
        ),
        (
            "a change RDS holds as pending is not sent again",
            pending.clone(),
            plan_of(
                SAFETY_NET,
                vec![],
                observed(
                    synced_fields(&pending),
                    false,
                    "Pending",
                    "RDS holds changes to dbInstanceClass until they are applied",
                ),
                vec![],
            ),
        ),
        (
            "a change RDS cannot make is refused, with an Event when the spec asked for it",
            shrink.clone(),
            plan_of(
                SAFETY_NET,
                vec![],
                observed(
                    synced_fields(&shrink),
                    false,
                    "UnsupportedChange",
                    shrink_message,
                ),
                vec![event(
                    Warning,
                    "UnsupportedChange",
                    "Update",
                    shrink_message,
                    0,
                )],
            ),
        ),
        (
            "a difference waits while RDS is busy",
            busy.clone(),
            plan_of(
                BUSY,
                vec![],
                observed(
                    synced_fields(&busy),
                    false,
                    "Waiting",
                    "RDS is backing-up; the change of dbInstanceClass waits until the instance is available",
                ),
                vec![],
            ),
        ),
        (
            "becoming available is announced once",
            became_available.clone(),
            plan_of(
                SAFETY_NET,
                vec![],
                observed(synced_fields(&became_available), true, "Synced", MATCHES),
                vec![event(
                    Normal,
                    "Available",
                    "Observe",
                    "the RDS instance is available",
                    0,
                )],
            ),
        ),
    ]);
}

#[test]
fn spec_edits_drift_tags_and_rotation() {
    let edited = synced().edited(|spec| spec.db_instance_class = "db.t3.small".into());
    let drifted = synced().rds_shows(|o| o.db_instance_class = Some("db.t3.large".into()));
    let mut corrected = synced_fields(&drifted);
    corrected.common.corrections = vec![Corrections {
        field: "dbInstanceClass".into(),
        generation: 1,
        times: vec![NOW.into()],
    }];
    corrected.last_drift = Some(DriftRecord {
        time: NOW.into(),
        action: "Corrected".into(),
        fields: vec![FieldDrift {
            field: "dbInstanceClass".into(),
            observed: "db.t3.large".into(),
            desired: "db.t3.micro".into(),
        }],
    });
    let reported = with(drifted.clone(), |f| {
        f.db.spec.policies.drift_policy = DriftPolicy::Report
    });
    let mut reported_fields = synced_fields(&reported);
    reported_fields.last_drift = Some(DriftRecord {
        action: "Reported".into(),
        ..corrected.last_drift.clone().unwrap()
    });
    let tagged = with(synced(), |f| {
        f.db.spec.tags = vec![Tag {
            key: "team".into(),
            value: "coffee".into(),
        }];
        let mut o = ours();
        o.tags.insert("stale".into(), "x".into());
        f.observed = Some(o);
        // The operator applied "stale" itself, from an earlier spec.
        f.db.status.as_mut().unwrap().common.applied_tag_keys = vec!["stale".into()];
        // Tags change: the read step read the instance directly (plan::reads).
        f.observed_directly = true;
    });
    let foreign_tag = synced().rds_shows(|o| {
        o.tags.insert("backup-plan".into(), "daily".into());
    });
    let rotated = with(synced(), |f| {
        f.password = PasswordFacts::Referenced(Ok(pw("Rotated-2026")));
    });
    let mut rotated_fields = synced_fields(&rotated);
    rotated_fields.common.master_user_password_hash =
        Some(spec::password_hash(&key(), UID, "Rotated-2026"));
    check(vec![
        (
            "a spec edit is sent in one ModifyDBInstance",
            edited.clone(),
            plan_of(
                BUSY,
                vec![Step::Modify {
                    identifier: "coffee".into(),
                    modification: modification(|m| {
                        m.db_instance_class = Some("db.t3.small".into())
                    }),
                    password: None,
                }],
                observed(
                    synced_fields(&edited),
                    false,
                    "Updating",
                    "sent dbInstanceClass to RDS",
                ),
                vec![event(
                    Normal,
                    "Updating",
                    "Update",
                    "applying the spec to RDS: dbInstanceClass: db.t3.micro -> db.t3.small",
                    1,
                )],
            ),
        ),
        (
            "drift is put back and recorded",
            drifted,
            Plan {
                ext: InstanceReport {
                    drift_corrected: vec!["dbInstanceClass"],
                    ..Default::default()
                },
                ..plan_of(
                    BUSY,
                    vec![Step::Modify {
                        identifier: "coffee".into(),
                        modification: modification(|m| {
                            m.db_instance_class = Some("db.t3.micro".into())
                        }),
                        password: None,
                    }],
                    observed(corrected, false, "Updating", "sent dbInstanceClass to RDS"),
                    vec![event(
                        Warning,
                        "DriftCorrected",
                        "Update",
                        "RDS was changed outside the operator; put back to the spec: dbInstanceClass: db.t3.large -> db.t3.micro",
                        1,
                    )],
                )
            },
        ),
        (
            "driftPolicy Report only reports",
            reported,
            plan_of(
                SAFETY_NET,
                vec![],
                observed(
                    reported_fields,
                    false,
                    "Drifted",
                    "RDS differs from the spec in dbInstanceClass; driftPolicy is Report",
                ),
                vec![event(
                    Warning,
                    "DriftDetected",
                    "Observe",
                    "RDS differs from the spec (driftPolicy is Report; not corrected): dbInstanceClass: db.t3.large -> db.t3.micro",
                    0,
                )],
            ),
        ),
        (
            "tags: missing ones added, ones the operator applied and the spec dropped removed",
            tagged.clone(),
            Plan {
                ext: InstanceReport {
                    drift_corrected: vec!["tags"],
                    ..Default::default()
                },
                ..plan_of(
                    BUSY,
                    vec![
                        Step::AddTags {
                            identifier: "coffee".into(),
                            arn: ARN.into(),
                            tags: [("team".to_owned(), "coffee".to_owned())].into(),
                        },
                        Step::RemoveTags {
                            identifier: "coffee".into(),
                            arn: ARN.into(),
                            keys: vec!["stale".into()],
                        },
                    ],
                    observed(
                        {
                            let mut fields = DBInstanceStatus {
                                last_drift: Some(DriftRecord {
                                    time: NOW.into(),
                                    action: "Corrected".into(),
                                    fields: vec![FieldDrift {
                                        field: "tags".into(),
                                        observed: format!(
                                            "{OWNER_NAME_TAG}=shop/coffee,{OWNER_TAG}={UID},stale=x"
                                        ),
                                        desired: format!(
                                            "{OWNER_NAME_TAG}=shop/coffee,{OWNER_TAG}={UID},team=coffee"
                                        ),
                                    }],
                                }),
                                ..synced_fields(&tagged)
                            };
                            fields.common.applied_tag_keys = vec!["team".into()];
                            fields
                        },
                        false,
                        "Updating",
                        "sent tags to RDS",
                    ),
                    vec![event(
                        Warning,
                        "DriftCorrected",
                        "Update",
                        &format!(
                            "RDS was changed outside the operator; put back to the spec: tags: {OWNER_NAME_TAG}=shop/coffee,{OWNER_TAG}={UID},stale=x -> {OWNER_NAME_TAG}=shop/coffee,{OWNER_TAG}={UID},team=coffee"
                        ),
                        2,
                    )],
                )
            },
        ),
        (
            "a tag someone else set is left alone (an AWS Backup selection, say)",
            foreign_tag.clone(),
            plan_of(
                SAFETY_NET,
                vec![],
                observed(synced_fields(&foreign_tag), true, "Synced", MATCHES),
                vec![],
            ),
        ),
        (
            "a new password in the Secret is sent to RDS, and only then hashed",
            rotated,
            rotation(rotated_fields),
        ),
    ]);
}

#[test]
fn connection_secret_follows_rds() {
    let wants = |f: &mut Facts| {
        f.db.spec.connection.connection_secret = Some(ConnectionSecretSpec {
            name: "coffee-db".into(),
            extra_keys: BTreeMap::new(),
        });
    };
    let missing = with(synced(), wants);
    let current = with(synced(), |f| {
        wants(f);
        f.connection_secret = Some(connection_secret(UID, "Sup3r-Secret"));
    });
    let edited = with(synced(), |f| {
        wants(f);
        f.connection_secret = Some(connection_secret(UID, "edited"));
    });
    let rotating = with(edited.clone(), |f| {
        f.password = PasswordFacts::Referenced(Ok(pw("Rotated-2026")));
    });
    let expected_data: BTreeMap<String, Sensitive> = connection_secret(UID, "Sup3r-Secret")
        .data
        .unwrap()
        .into_iter()
        .map(|(k, v)| (k, pw(std::str::from_utf8(&v.0).unwrap())))
        .collect();
    let write = |create| {
        Step::Secret(SecretStep::WriteConnection {
            name: "coffee-db".into(),
            data: expected_data.clone(),
            // A new Secret's first version; an edited one from before the counter: 2.
            version: if create { 1 } else { 2 },
            create,
            owner_reference: true,
        })
    };
    let written = event(
        Normal,
        "ConnectionSecretWritten",
        "Update",
        "wrote the connection details to Secret coffee-db",
        1,
    );
    let with_name = |f: &Facts| {
        let mut fields = synced_fields(f);
        fields.common.connection_secret = Some("coffee-db".into());
        fields
    };
    let mut rotating_fields = synced_fields(&rotating);
    rotating_fields.common.master_user_password_hash =
        Some(spec::password_hash(&key(), UID, "Rotated-2026"));
    check(vec![
        (
            "a missing connection Secret is written",
            missing.clone(),
            plan_of(
                SAFETY_NET,
                vec![write(true)],
                observed(with_name(&missing), true, "Synced", MATCHES),
                vec![written.clone()],
            ),
        ),
        (
            "an up-to-date one is left alone",
            current.clone(),
            plan_of(
                SAFETY_NET,
                vec![],
                observed(with_name(&current), true, "Synced", MATCHES),
                vec![],
            ),
        ),
        (
            "an edited one is put back",
            edited.clone(),
            plan_of(
                SAFETY_NET,
                vec![write(false)],
                observed(with_name(&edited), true, "Synced", MATCHES),
                vec![written],
            ),
        ),
        (
            "while a new password is still to be sent, the Secret keeps the one RDS has",
            rotating,
            rotation(rotating_fields),
        ),
    ]);
}

/// A connection Secret whose data changed (version 2) has its readers rolled, each once; a
/// rollout is followed until done; a reader of another Secret is left alone.
#[test]
fn the_readers_of_a_changed_connection_secret_are_rolled_and_followed() {
    use crate::database::readers::{ReaderState, Roll, SECRET_VERSION, Workload, WorkloadKind};
    let reader = |name: &str, secret: &str, at: Option<&str>| Workload {
        kind: WorkloadKind::Deployment,
        name: name.into(),
        reads: [secret.to_owned()].into(),
        opted_out: false,
        template: (at.iter())
            .map(|v| ("secret.rds.operator.rs/coffee-db".to_owned(), v.to_string()))
            .collect(),
        rolled_out: at.is_some(),
    };
    let changed = |listed: Vec<Workload>| {
        with(synced(), |f| {
            f.db.spec.connection.connection_secret = Some(ConnectionSecretSpec {
                name: "coffee-db".into(),
                extra_keys: BTreeMap::new(),
            });
            let mut secret = connection_secret(UID, "Sup3r-Secret");
            secret.metadata.annotations = Some([(SECRET_VERSION.into(), "2".into())].into());
            f.connection_secret = Some(secret);
            f.readers = Some(listed);
        })
    };
    let f = changed(vec![
        reader("coffee-app", "coffee-db", None),
        reader("other", "x", None),
    ]);
    let p = plan(&f);
    let roll = Roll {
        kind: WorkloadKind::Deployment,
        name: "coffee-app".into(),
        annotation: "secret.rds.operator.rs/coffee-db".into(),
        version: 2,
    };
    assert_eq!(p.steps, vec![Step::Secret(SecretStep::RollReader(roll))]);
    assert_eq!(p.events[0].reason, "ReadersRolled");
    assert_eq!(p.requeue, BUSY, "the rollout is followed");
    let readers = p.status.unwrap().fields.common.secret_readers.unwrap();
    assert_eq!(readers.version, 2);
    assert_eq!(readers.rolled_at.as_deref(), Some(NOW));
    let states: Vec<_> = readers
        .readers
        .iter()
        .map(|r| (r.name.as_str(), r.state))
        .collect();
    assert_eq!(states, [("coffee-app", ReaderState::Rolling)]);

    let f = changed(vec![reader("coffee-app", "coffee-db", Some("2"))]);
    let p = plan(&f);
    assert!(p.steps.is_empty(), "rolled already: {:?}", p.steps);
    assert_eq!(p.requeue, SAFETY_NET, "rolled out: nothing to follow");
    let readers = p.status.unwrap().fields.common.secret_readers.unwrap();
    assert_eq!(readers.readers[0].state, ReaderState::RolledOut);
}

#[test]
fn unchanged_drift_keeps_its_record() {
    let diffs = vec![crate::dbinstance::drift::Diff {
        field: "multiAZ",
        observed: "true".into(),
        desired: "false".into(),
    }];
    let first = status::drift_record(None, "Reported", &diffs, "t1");
    assert_eq!(first.time, "t1");
    assert_eq!(
        status::drift_record(Some(&first), "Reported", &diffs, "t2"),
        first
    );
    assert_eq!(
        status::drift_record(Some(&first), "Corrected", &diffs, "t3").time,
        "t3"
    );
    assert_eq!(status::describe_diffs(&diffs), "multiAZ: true -> false");
}

#[test]
fn protection_stronger_in_aws_is_kept_and_fights_stop() {
    // Someone turned deletion protection on, raised the retention and added a standby in AWS.
    let stronger = |f: &mut Facts| {
        f.db.spec.deletion.deletion_protection = Some(false);
        f.db.spec.backup_retention_period = Some(1);
        f.db.spec.multi_az = Some(false);
        let mut o = ours();
        o.deletion_protection = Some(true);
        o.backup_retention_period = Some(7);
        o.multi_az = Some(true);
        f.observed = Some(o);
    };
    let kept = with(synced(), stronger);
    let kept_diffs = vec![
        FieldDrift {
            field: "backupRetentionPeriod".into(),
            observed: "7".into(),
            desired: "1".into(),
        },
        FieldDrift {
            field: "multiAZ".into(),
            observed: "true".into(),
            desired: "false".into(),
        },
        FieldDrift {
            field: "deletionProtection".into(),
            observed: "true".into(),
            desired: "false".into(),
        },
    ];
    let kept_fields = DBInstanceStatus {
        last_drift: Some(DriftRecord {
            time: NOW.into(),
            action: "Kept".into(),
            fields: kept_diffs,
        }),
        ..synced_fields(&kept)
    };
    let kept_again = with(kept.clone(), |f| {
        f.db.status.as_mut().unwrap().last_drift = kept_fields.last_drift.clone();
    });
    let kept_message = "RDS is more protective than the spec in backupRetentionPeriod, multiAZ, deletionProtection; \
         kept as it is (edit the spec to apply it)";
    let kept_note = "RDS differs from the spec and is left as it is: backupRetentionPeriod: 7 -> 1; multiAZ: true -> false; \
         deletionProtection: true -> false";
    // The user edits the spec: what it says is applied, weakening included.
    let edited = with(kept.clone(), |f| f.db.metadata.generation = Some(2));
    // A field put back three times within the hour at this generation.
    let fought = |times: &[&str], generation: i64| {
        with(synced(), |f| {
            let mut o = ours();
            o.db_instance_class = Some("db.t3.large".into());
            f.observed = Some(o);
            f.db.status.as_mut().unwrap().common.corrections = vec![Corrections {
                field: "dbInstanceClass".into(),
                generation,
                times: times.iter().map(|t| t.to_string()).collect(),
            }];
        })
    };
    let three = [
        "2026-11-30T09:20:00Z",
        "2026-11-30T09:40:00Z",
        "2026-11-30T09:59:00Z",
    ];
    let fighting = fought(&three, 1);
    let fight_message = "stopped correcting dbInstanceClass: it was changed back outside the operator 3 times within an hour; \
         the operator resumes when the spec changes";
    let fight_fields = DBInstanceStatus {
        last_drift: Some(DriftRecord {
            time: NOW.into(),
            action: "Kept".into(),
            fields: vec![FieldDrift {
                field: "dbInstanceClass".into(),
                observed: "db.t3.large".into(),
                desired: "db.t3.micro".into(),
            }],
        }),
        ..synced_fields(&fighting)
    };
    let class_back = |_: &Facts| Step::Modify {
        identifier: "coffee".into(),
        modification: modification(|m| m.db_instance_class = Some("db.t3.micro".into())),
        password: None,
    };
    let an_hour_ago = fought(
        &[
            "2026-11-30T08:00:00Z",
            "2026-11-30T08:30:00Z",
            "2026-11-30T09:59:00Z",
        ],
        1,
    );
    let older_generation = fought(&three, 0);
    let corrected_again = |f: &Facts| {
        let Plan { steps, .. } = plan(f);
        steps
    };
    check(vec![
        (
            "protection stronger in AWS is reported, not weakened",
            kept.clone(),
            plan_of(
                SAFETY_NET,
                vec![],
                observed(kept_fields.clone(), false, "ProtectionKept", kept_message),
                vec![event(Warning, "DriftDetected", "Observe", kept_note, 0)],
            ),
        ),
        (
            "and reported once",
            kept_again.clone(),
            plan_of(
                SAFETY_NET,
                vec![],
                observed(kept_fields, false, "ProtectionKept", kept_message),
                vec![],
            ),
        ),
        (
            "a field put back three times within the hour is no longer corrected",
            fighting,
            plan_of(
                SAFETY_NET,
                vec![],
                observed(fight_fields, false, "Fighting", fight_message),
                vec![event(
                    Warning,
                    "DriftDetected",
                    "Observe",
                    "RDS differs from the spec and is left as it is: dbInstanceClass: db.t3.large -> db.t3.micro",
                    0,
                )],
            ),
        ),
    ]);
    // A spec edit applies what the spec says.
    let edit_steps = corrected_again(&edited);
    assert_eq!(edit_steps.len(), 1, "one ModifyDBInstance");
    let Step::Modify { modification, .. } = &edit_steps[0] else {
        panic!("{edit_steps:?}")
    };
    assert_eq!(modification.deletion_protection, Some(false));
    assert_eq!(modification.backup_retention_period, Some(1));
    assert_eq!(modification.multi_az, Some(false));
    // Corrections older than an hour, or made at an earlier generation, do not count.
    assert_eq!(
        corrected_again(&an_hour_ago),
        vec![class_back(&an_hour_ago)]
    );
    assert_eq!(
        corrected_again(&older_generation),
        vec![class_back(&older_generation)]
    );
    // The third correction is made, and recorded.
    let two = fought(&three[1..], 1);
    let third = plan(&two);
    assert_eq!(third.steps, vec![class_back(&two)]);
    let recorded = third.status.unwrap().fields.common.corrections;
    assert_eq!(recorded[0].times, vec![three[1], three[2], NOW]);
}

#[test]
fn pending_reboot_follows_the_policy() {
    use crate::dbinstance::PendingRebootPolicy::{MaintenanceWindow, Reboot, Report};
    let pending = |policy| {
        with(synced(), |f| {
            f.db.spec.maintenance.pending_reboot_policy = policy;
            let o = f.observed.as_mut().unwrap();
            o.parameter_apply_status = Some("pending-reboot".into());
            // Sunday 2026-11-29 05:00-06:00 UTC; NOW is Monday 10:00.
            o.preferred_maintenance_window = Some("sun:05:00-sun:06:00".into());
        })
    };
    let in_window = with(pending(MaintenanceWindow), |f| {
        f.observed.as_mut().unwrap().preferred_maintenance_window =
            Some("mon:09:30-mon:10:30".into());
    });
    let busy = with(pending(Reboot), |f| {
        f.observed.as_mut().unwrap().status = "rebooting".into()
    });
    let observed = with(pending(Reboot), |f| {
        f.db.spec.policies.management_policy = crate::dbinstance::ManagementPolicy::ObserveOnly;
    });
    check_outlines(vec![
        (
            "Report: only reported",
            pending(Report),
            vec![],
            "PendingReboot",
        ),
        (
            "Reboot: one RebootDBInstance",
            pending(Reboot),
            vec!["Reboot"],
            "Rebooting",
        ),
        (
            "not while RDS is busy (the reboot under way)",
            busy,
            vec![],
            "PendingReboot",
        ),
        (
            "MaintenanceWindow outside the window: waits",
            pending(MaintenanceWindow),
            vec![],
            "PendingReboot",
        ),
        (
            "MaintenanceWindow inside the window: reboots",
            in_window,
            vec!["Reboot"],
            "Rebooting",
        ),
        (
            "an observed instance is never rebooted",
            observed,
            vec![],
            "PendingReboot",
        ),
    ]);
    let p = plan(&pending(Reboot));
    assert_eq!(
        p.events
            .iter()
            .map(|e| e.reason.as_str())
            .collect::<Vec<_>>(),
        vec!["Rebooting"]
    );
    assert_eq!(
        p.status.unwrap().fields.parameter_apply_status.as_deref(),
        Some("pending-reboot"),
        "status shows it"
    );
}

#[test]
fn maintenance_windows_are_read_as_rds_writes_them() {
    let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap().to_utc();
    // 2026-11-30 is a Monday.
    let table = [
        ("mon:09:30-mon:10:30", "2026-11-30T10:00:00Z", true),
        ("mon:09:30-mon:10:30", "2026-11-30T10:30:00Z", false),
        ("sun:23:00-mon:01:00", "2026-11-30T00:30:00Z", true),
        ("sun:23:00-mon:01:00", "2026-11-29T23:30:00Z", true),
        ("sun:23:00-mon:01:00", "2026-11-29T22:59:00Z", false),
        ("Sun:23:00-Mon:01:00", "2026-11-30T00:30:00Z", true),
        ("not a window", "2026-11-30T10:00:00Z", false),
        ("mon:25:00-mon:26:00", "2026-11-30T10:00:00Z", false),
    ];
    for (window, now, expected) in table {
        assert_eq!(
            spec::in_window(window, &at(now)),
            expected,
            "{window} at {now}"
        );
    }
}

#[test]
fn drift_policy_report_still_applies_the_users_edits() {
    let report = with(synced(), |f| {
        f.db.spec.policies.drift_policy = DriftPolicy::Report
    });
    let edited = (report.clone()).edited(|spec| spec.db_instance_class = "db.t3.large".into());
    let drifted = with(report, |f| {
        f.observed.as_mut().unwrap().db_instance_class = Some("db.t3.large".into());
    });
    check_outlines(vec![
        (
            "an edit is applied under Report",
            edited,
            vec!["ModifyInstance"],
            "Updating",
        ),
        (
            "drift is only reported under Report",
            drifted,
            vec![],
            "Drifted",
        ),
    ]);
}

/// Ready means the connection Secret holds the instance: where Ready follows RDS's state, a
/// Secret the spec asks for that this pass does not write and does not hold it turns it False.
#[test]
fn ready_waits_for_the_connection_secret_it_asks_for() {
    let wants = |f: &mut Facts| {
        f.db.spec.connection.connection_secret = Some(ConnectionSecretSpec {
            name: "coffee-db".into(),
            extra_keys: BTreeMap::new(),
        });
    };
    let ready = |f: &Facts| {
        let plan = plan(f);
        let status = plan.status.as_ref().expect("a status");
        let done = status::finish(status, None, None, Some(1), "2026-12-05T00:00:00Z");
        let ready = (done.reported.conditions.iter())
            .find(|c| c.type_ == "Ready")
            .expect("Ready");
        (ready.status.clone(), ready.reason.clone())
    };
    let mut foreign = connection_secret(UID, "Sup3r-Secret");
    foreign.metadata.owner_references = None;
    foreign.metadata.annotations = None;
    for (name, f, expected) in [
        ("no Secret asked for", synced(), ("True", "Available")),
        (
            "missing, written in this pass",
            with(synced(), wants),
            ("True", "Available"),
        ),
        (
            "there and current",
            with(synced(), |f| {
                wants(f);
                f.connection_secret = Some(connection_secret(UID, "Sup3r-Secret"));
            }),
            ("True", "Available"),
        ),
        (
            "missing, and the password is not known",
            with(synced(), |f| {
                wants(f);
                f.password = PasswordFacts::NotRead;
            }),
            ("False", "ConnectionSecretPending"),
        ),
        (
            "someone else's Secret of that name",
            with(synced(), |f| {
                wants(f);
                f.connection_secret = Some(foreign.clone());
            }),
            ("False", "ConnectionSecretConflict"),
        ),
    ] {
        let (status, reason) = ready(&f);
        assert_eq!((status.as_str(), reason.as_str()), expected, "{name}");
    }
}

/// rds.operator.rs/rotate-now on an instance whose password RDS manages: RDS rotates it once per
/// value (RotateMasterUserPassword), and status records the value; status shows the secret.
#[test]
fn rotate_now_has_rds_rotate_its_managed_password_once_per_value() {
    let managed = |value: Option<&str>, last: Option<&str>| {
        with(synced(), |f| {
            f.db.spec.password.master_user_password = None;
            f.db.spec.password.manage_master_user_password = Some(true);
            f.password = PasswordFacts::Managed(Some(pw("Sup3r-Secret")));
            let mut o = ours();
            o.master_user_secret_arn =
                Some("arn:aws:secretsmanager:us-east-1:1:secret:rds!db-1".into());
            o.master_user_secret_kms_key_id = Some("arn:aws:kms:us-east-1:1:key/k".into());
            f.observed = Some(o);
            if let Some(v) = value {
                let annotation = (crate::crd::ROTATE_NOW_ANNOTATION.to_owned(), v.to_owned());
                f.db.metadata.annotations = Some([annotation].into());
            }
            let status = f.db.status.get_or_insert_default();
            status.common.last_rotate_request = last.map(str::to_owned);
        })
    };
    let rotates = |p: &Plan| {
        p.steps.iter().any(
            |s| matches!(s, Step::RotateManagedPassword { identifier } if identifier == "coffee"),
        )
    };
    let p = plan(&managed(Some("1"), None));
    assert!(rotates(&p), "{:?}", p.steps);
    assert!(p.events.iter().any(|e| e.reason == "PasswordRotation"));
    let fields = p.status.unwrap().fields;
    assert_eq!(fields.common.last_rotate_request.as_deref(), Some("1"));
    let secret = fields.common.master_user_secret.unwrap();
    assert_eq!(
        secret.kms_key_id.as_deref(),
        Some("arn:aws:kms:us-east-1:1:key/k")
    );
    let p = plan(&managed(Some("1"), Some("1")));
    assert!(!rotates(&p), "the value acted on: {:?}", p.steps);
    assert_eq!(
        p.status
            .unwrap()
            .fields
            .common
            .last_rotate_request
            .as_deref(),
        Some("1"),
        "kept"
    );
    assert!(!rotates(&plan(&managed(None, None))), "nothing asked");
    let busy = with(managed(Some("2"), Some("1")), |f| {
        f.observed.as_mut().unwrap().status = "modifying".into();
    });
    assert!(!rotates(&plan(&busy)), "RDS busy: later");
}

/// masterUserSecretRotation: the rules Secrets Manager has (read this pass) set as the spec says.
#[test]
fn the_managed_secrets_rotation_rules_follow_the_spec() {
    let rules = crate::database::parts::SecretRotation {
        schedule_expression: Some("rate(4 days)".into()),
        ..Default::default()
    };
    let managed = |read: Option<Option<crate::database::parts::SecretRotation>>| {
        with(synced(), |f| {
            f.db.spec.password.master_user_password = None;
            f.db.spec.password.manage_master_user_password = Some(true);
            f.db.spec.password.master_user_secret_rotation = Some(rules.clone());
            f.password = PasswordFacts::Managed(Some(pw("Sup3r-Secret")));
            let mut o = ours();
            o.master_user_secret_arn =
                Some("arn:aws:secretsmanager:us-east-1:1:secret:rds!db-1".into());
            f.observed = Some(o);
            f.secret_rotation = read;
        })
    };
    let sets = |p: &Plan| {
        (p.steps.iter())
            .any(|s| matches!(s, Step::SetSecretRotation { rotation, .. } if *rotation == rules))
    };
    assert!(sets(&plan(&managed(Some(None)))), "rotation off: set");
    assert!(
        !sets(&plan(&managed(Some(Some(rules.clone()))))),
        "as the spec says"
    );
    assert!(
        !sets(&plan(&managed(None))),
        "not read: nothing sent on doubt"
    );
}
