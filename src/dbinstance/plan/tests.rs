//! Table tests of the plan: each row states the facts and the full plan expected from them.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::runtime::events::EventType::{self, Normal, Warning};

use super::status::observed_status;
use super::*;
use crate::dbinstance::drift::Modification;
use crate::dbinstance::{
    ConnectionSecretSpec, Corrections, DBInstance, DBInstanceSpec, DBInstanceStatus,
    DeletionPolicy, DriftPolicy, DriftRecord, FINALIZER, FieldDrift, OWNER_NAME_TAG, OWNER_TAG,
    OutOfBandDeletionPolicy, SecretKeyReference, StorageType, Tag,
};
use crate::error::Error;
use crate::observed::{AwsIdentity, ObservedInstance, PollIntervals, SnapshotInfo};
use crate::rds::{AwsError, ErrorClass};

pub(super) const UID: &str = "6b0f1c2e-1111-2222-3333-444455556666";
pub(super) const NOW: &str = "2026-11-30T10:00:00Z";
/// The default final snapshot of the DBInstance below, deleted at the epoch.
const FINAL: &str = "coffee-final-6b0f1c2e-19700101000000";
const ARN: &str = "arn:aws:rds:us-east-1:123456789012:db:coffee";
pub(super) const BUSY: Requeue = Requeue::After(Duration::from_secs(5));
pub(super) const SETTLED: Requeue = Requeue::After(Duration::from_secs(60));
/// Ten drift intervals: the safety net behind the shared poll's wakes.
const SAFETY_NET: Requeue = Requeue::After(Duration::from_secs(600));

/// The operator's hash key in these tests.
pub(super) fn key() -> Sensitive {
    Sensitive::new("0123456789abcdef")
}

pub(super) fn pw(s: &str) -> Sensitive {
    Sensitive::new(s)
}

/// The Coffee Manage DBInstance: shop/coffee, finalizer on, generation 1, password from a Secret.
pub(super) fn db() -> DBInstance {
    let mut db = DBInstance::new(
        "coffee",
        DBInstanceSpec {
            engine: "mysql".into(),
            engine_version: Some("8.0".into()),
            db_instance_class: "db.t3.micro".into(),
            allocated_storage: Some(20),
            storage_type: Some(StorageType::Gp2),
            master_username: Some("admin".into()),
            db_name: Some("COFFEE".into()),
            master_user_password: Some(SecretKeyReference {
                name: "coffee-db-password".into(),
                key: "password".into(),
                namespace: None,
            }),
            ..Default::default()
        },
    );
    db.metadata.namespace = Some("shop".into());
    db.metadata.uid = Some(UID.into());
    db.metadata.generation = Some(1);
    db.metadata.finalizers = Some(vec![FINALIZER.into()]);
    db
}

/// Facts with nothing in RDS yet.
pub(super) fn facts() -> Facts {
    Facts {
        db: db(),
        observed: None,
        observed_directly: false,
        absent_for: None,
        rename_in_progress: false,
        identity: Some(AwsIdentity {
            account: "123456789012".into(),
            region: "us-east-1".into(),
        }),
        snapshots: Vec::new(),
        password: PasswordFacts::Referenced(Ok(pw("Sup3r-Secret"))),
        connection_secret: None,
        release_candidates: Vec::new(),
        peers: Vec::new(),
        owner_alive: None,
        restore_source: None,
        groups: Vec::new(),
        observers: Vec::new(),
        grants: Default::default(),
        subnet_group: None,
        parameter_group: None,
        hash_key: key(),
        intervals: PollIntervals::default(),
        now: NOW.into(),
    }
}

/// Our instance, available and matching the spec.
pub(super) fn ours() -> ObservedInstance {
    ObservedInstance {
        identifier: "coffee".into(),
        status: "available".into(),
        arn: Some(ARN.into()),
        engine: Some("mysql".into()),
        engine_version: Some("8.0.42".into()),
        db_instance_class: Some("db.t3.micro".into()),
        allocated_storage: Some(20),
        storage_type: Some("gp2".into()),
        master_username: Some("admin".into()),
        db_name: Some("COFFEE".into()),
        address: Some("coffee.rds.local".into()),
        port: Some(3306),
        tags: [
            (OWNER_TAG.to_owned(), UID.to_owned()),
            (OWNER_NAME_TAG.to_owned(), "shop/coffee".to_owned()),
        ]
        .into(),
        ..Default::default()
    }
}

/// Facts for our instance, last seen available at generation 1 with this password.
pub(super) fn synced() -> Facts {
    let mut f = facts();
    f.observed = Some(ours());
    let mut status = observed_status("coffee", &ours());
    status.observed_generation = Some(1);
    status.master_user_password_hash = Some(spec::password_hash(&key(), UID, "Sup3r-Secret"));
    status.owned = Some(true);
    f.db.status = Some(status);
    f
}

/// What the read step learns of a generated password that has no Secret yet: `candidate` is the
/// fresh one it offers.
pub(super) fn no_generated_secret(candidate: &str) -> PasswordFacts {
    PasswordFacts::Generated {
        existing: None,
        secret_exists: false,
        controlled: false,
        owner_referenced: false,
        candidate: pw(candidate),
    }
}

pub(super) fn with(mut f: Facts, change: impl FnOnce(&mut Facts)) -> Facts {
    change(&mut f);
    f
}

fn event(
    type_: EventType,
    reason: &str,
    action: &'static str,
    note: &str,
    after: usize,
) -> PlannedEvent {
    PlannedEvent {
        type_,
        reason: reason.into(),
        action,
        note: note.into(),
        after,
    }
}

fn plan_of(
    requeue: Requeue,
    steps: Vec<Step>,
    status: Option<StatusPlan>,
    events: Vec<PlannedEvent>,
) -> Plan {
    Plan {
        steps,
        status,
        events,
        ..Plan::idle(requeue)
    }
}

/// A status that reports the RDS state, with Synced as given.
fn observed(fields: DBInstanceStatus, ok: bool, reason: &str, message: &str) -> Option<StatusPlan> {
    Some(StatusPlan {
        held: false,
        fields,
        ready: None,
        synced: ConditionPlan::new(ok, reason, message),
    })
}

/// Ready=False and Synced=False with the reason, over the previous status.
fn failed(previous: Option<&DBInstanceStatus>, reason: &str, message: &str) -> Option<StatusPlan> {
    let c = ConditionPlan::new(false, reason, message);
    Some(StatusPlan {
        held: false,
        fields: previous.cloned().unwrap_or_default(),
        ready: Some(c.clone()),
        synced: c,
    })
}

/// The status fields reported for our instance as `synced()` leaves it.
fn synced_fields(f: &Facts) -> DBInstanceStatus {
    let mut fields = observed_status("coffee", f.observed.as_ref().unwrap());
    let previous = f.db.status.clone().unwrap_or_default();
    fields.master_user_password_hash = previous.master_user_password_hash;
    fields.last_drift = previous.last_drift;
    fields.connection_secret = previous.connection_secret;
    let observed = f.observed.as_ref().unwrap();
    fields.applied_tag_keys =
        (crate::tags::applied)(&f.db.spec.tags, &observed.tags, &previous.applied_tag_keys);
    fields.owned = (!spec::observe_only(&f.db)).then_some(true);
    let generation = f.db.metadata.generation.unwrap_or_default();
    fields.corrections = (previous.corrections.into_iter())
        .filter(|c| c.generation == generation)
        .collect();
    fields
}

fn creating_fields(hash: Option<&str>) -> DBInstanceStatus {
    let mut fields = DBInstanceStatus {
        db_instance_identifier: Some("coffee".into()),
        db_instance_status: Some("creating".into()),
        owned: Some(true),
        ..Default::default()
    };
    fields.master_user_password_hash = hash.map(|p| spec::password_hash(&key(), UID, p));
    fields
}

/// The spec an instance is created or restored with: copyTagsToSnapshot on unless it says.
fn creation_spec(mut spec: DBInstanceSpec) -> Box<DBInstanceSpec> {
    spec.copy_tags_to_snapshot.get_or_insert(true);
    Box::new(spec)
}

fn create_step(password: Option<&str>) -> Step {
    Step::CreateInstance {
        identifier: "coffee".into(),
        spec: creation_spec(db().spec),
        password: password.map(pw),
        tags: spec::creation_tags(&db().spec, UID, "shop", "coffee"),
    }
}

/// The plan that sends the Secret's new password "Rotated-2026" to RDS.
fn rotation(fields: DBInstanceStatus) -> Plan {
    plan_of(
        BUSY,
        vec![Step::ModifyInstance {
            identifier: "coffee".into(),
            modification: modification(|m| m.rotate_password = true),
            password: Some(pw("Rotated-2026")),
        }],
        observed(fields, false, "Updating", "sent masterUserPassword to RDS"),
        vec![event(
            Normal,
            "PasswordRotated",
            "Update",
            "sent the new master password from the Secret to RDS",
            1,
        )],
    )
}

fn modification(change: impl FnOnce(&mut Modification)) -> Box<Modification> {
    let mut m = Modification {
        apply_immediately: true,
        ..Default::default()
    };
    change(&mut m);
    Box::new(m)
}

const CREATING_NOTE: &str = "creating RDS instance coffee (mysql 8.0, db.t3.micro)";
const CREATING_SYNCED: &str = "the RDS instance is being created from the spec";
const MATCHES: &str = "the RDS instance matches the spec";

fn check(cases: Vec<(&str, Facts, Plan)>) {
    for (name, facts, expected) in cases {
        assert_eq!(plan(&facts), expected, "case: {name}");
    }
}

#[test]
fn creation_and_ownership() {
    let no_finalizer = with(facts(), |f| f.db.metadata.finalizers = None);
    let generated = with(facts(), |f| {
        f.db.spec.master_user_password = None;
        f.password = no_generated_secret("Gen3rated");
    });
    let mut generated_spec = db().spec;
    generated_spec.master_user_password = None;
    let foreign = with(facts(), |f| {
        let mut o = ours();
        o.tags = [
            (OWNER_TAG.to_owned(), "another-uid".to_owned()),
            (OWNER_NAME_TAG.to_owned(), "other/db".to_owned()),
        ]
        .into();
        f.observed = Some(o);
    });
    let untagged = with(facts(), |f| {
        let mut o = ours();
        o.tags.clear();
        f.observed = Some(o);
    });
    // Who owns it goes to the operator's log only.
    let foreign_message = "an RDS instance named coffee already exists and is managed by another DBInstance; \
                 choose another dbInstanceIdentifier";
    let untagged_message = "an RDS instance named coffee already exists and is not managed by this DBInstance; \
             choose another dbInstanceIdentifier, or set spec.adoptionPolicy: Adopt to take it over";
    // A crash after CreateDBInstance: the instance carries our tag, status knows nothing yet.
    let crashed = with(facts(), |f| {
        let mut o = ours();
        o.status = "creating".into();
        f.observed = Some(o);
    });
    let mut crashed_fields = observed_status("coffee", crashed.observed.as_ref().unwrap());
    crashed_fields.owned = Some(true);
    crashed_fields.master_user_password_hash =
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
                    Step::WritePasswordSecret {
                        name: "coffee-master-password".into(),
                        password: pw("Gen3rated"),
                        replace: false,
                        owner_reference: true,
                    },
                    Step::CreateInstance {
                        identifier: "coffee".into(),
                        spec: creation_spec(generated_spec.clone()),
                        password: Some(pw("Gen3rated")),
                        tags: spec::creation_tags(&generated_spec, UID, "shop", "coffee"),
                    },
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
                log: Some("RDS instance coffee is not this DBInstance's: other/db".into()),
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
                log: Some(
                    "RDS instance coffee is not this DBInstance's: it has no rds-operator ownership tag"
                        .into(),
                ),
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

/// The plan that only reports `reason` (Ready=False, Synced=False, a Warning Event).
fn refused(f: &Facts, requeue: Requeue, reason: &str, message: &str) -> Plan {
    plan_of(
        requeue,
        vec![],
        failed(f.db.status.as_ref(), reason, message),
        vec![event(Warning, reason, "Reconcile", message, 0)],
    )
}

pub(super) fn snapshot(identifier: &str, kind: &str, status: &str, epoch: i64) -> SnapshotInfo {
    SnapshotInfo {
        identifier: identifier.into(),
        kind: kind.into(),
        status: status.into(),
        created: format!("t{epoch}"),
        created_epoch: epoch,
        dbi_resource_id: None,
        // Taken of this DBInstance's own instance (its tags copied): the only kind restored.
        tags: [(OWNER_TAG.to_owned(), UID.to_owned())].into(),
    }
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
        f.db.spec.drift_policy = DriftPolicy::Report
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
            snapshot("coffee-final-new", "manual", "creating", 400),
        ];
    });
    let opted_in = with(gone.clone(), |f| {
        f.db.spec.out_of_band_deletion_policy = OutOfBandDeletionPolicy::RestoreOrCreateEmpty;
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
            "restored from the newest available snapshot",
            with_snapshots,
            plan_of(
                BUSY,
                vec![Step::RestoreInstance {
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
                vec![Step::CreateInstance {
                    identifier: "coffee".into(),
                    spec: creation_spec(opted_in.db.spec.clone()),
                    password: Some(pw("Sup3r-Secret")),
                    tags: spec::creation_tags(&db().spec, UID, "shop", "coffee"),
                }],
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
fn our_instance_in_sync_pending_refused_or_busy() {
    let in_sync = synced();
    let pending = with(synced(), |f| {
        let mut o = ours();
        o.pending_modified_values =
            [("dbInstanceClass".to_owned(), "db.t3.small".to_owned())].into();
        f.observed = Some(o);
        f.db.spec.db_instance_class = "db.t3.small".into();
        f.db.spec.apply_immediately = Some(false);
    });
    let shrink = with(synced(), |f| {
        f.db.spec.allocated_storage = Some(20);
        let mut o = ours();
        o.allocated_storage = Some(50);
        f.observed = Some(o);
        f.db.metadata.generation = Some(2);
    });
    let shrink_message = "allocatedStorage cannot shrink from 50 to 20 GiB: RDS storage only grows";
    let busy = with(synced(), |f| {
        let mut o = ours();
        o.status = "backing-up".into();
        o.db_instance_class = Some("db.t3.large".into());
        f.observed = Some(o);
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
    let edited = with(synced(), |f| {
        f.db.spec.db_instance_class = "db.t3.small".into();
        f.db.metadata.generation = Some(2);
    });
    let drifted = with(synced(), |f| {
        let mut o = ours();
        o.db_instance_class = Some("db.t3.large".into());
        f.observed = Some(o);
    });
    let mut corrected = synced_fields(&drifted);
    corrected.corrections = vec![Corrections {
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
        f.db.spec.drift_policy = DriftPolicy::Report
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
        f.db.status.as_mut().unwrap().applied_tag_keys = vec!["stale".into()];
        // Tags change: the read step read the instance directly (plan::reads).
        f.observed_directly = true;
    });
    let foreign_tag = with(synced(), |f| {
        let mut o = ours();
        o.tags.insert("backup-plan".into(), "daily".into());
        f.observed = Some(o);
    });
    let rotated = with(synced(), |f| {
        f.password = PasswordFacts::Referenced(Ok(pw("Rotated-2026")));
    });
    let mut rotated_fields = synced_fields(&rotated);
    rotated_fields.master_user_password_hash =
        Some(spec::password_hash(&key(), UID, "Rotated-2026"));
    check(vec![
        (
            "a spec edit is sent in one ModifyDBInstance",
            edited.clone(),
            plan_of(
                BUSY,
                vec![Step::ModifyInstance {
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
                drift_corrected: vec!["dbInstanceClass"],
                ..plan_of(
                    BUSY,
                    vec![Step::ModifyInstance {
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
                drift_corrected: vec!["tags"],
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
                        DBInstanceStatus {
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
                            applied_tag_keys: vec!["team".into()],
                            ..synced_fields(&tagged)
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

pub(super) fn connection_secret(owner: &str, password: &str) -> Secret {
    let data = [
        ("host", "coffee.rds.local"),
        ("port", "3306"),
        ("username", "admin"),
        ("password", password),
        ("dbname", "COFFEE"),
        ("engine", "mysql"),
        (
            "uri",
            &format!("mysql://admin:{password}@coffee.rds.local:3306/COFFEE"),
        ),
    ];
    Secret {
        metadata: kube::api::ObjectMeta {
            name: Some("coffee-db".into()),
            owner_references: Some(vec![OwnerReference {
                uid: owner.into(),
                controller: Some(true),
                ..Default::default()
            }]),
            ..Default::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                .collect(),
        ),
        ..Default::default()
    }
}

#[test]
fn connection_secret_follows_rds() {
    let wants = |f: &mut Facts| {
        f.db.spec.connection_secret = Some(ConnectionSecretSpec {
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
    let write = |create| Step::WriteConnectionSecret {
        name: "coffee-db".into(),
        data: expected_data.clone(),
        create,
        owner_reference: true,
    };
    let written = event(
        Normal,
        "ConnectionSecretWritten",
        "Update",
        "wrote the connection details to Secret coffee-db",
        1,
    );
    let with_name = |f: &Facts| DBInstanceStatus {
        connection_secret: Some("coffee-db".into()),
        ..synced_fields(f)
    };
    let mut rotating_fields = synced_fields(&rotating);
    rotating_fields.master_user_password_hash =
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

#[test]
fn refusals_before_any_call() {
    let cross_namespace = with(facts(), |f| {
        f.db.metadata.finalizers = None;
        f.db.spec.master_user_password.as_mut().unwrap().namespace = Some("elsewhere".into());
    });
    let invalid = "masterUserPassword refers to a Secret in namespace \"elsewhere\"; only the DBInstance's own namespace \"shop\" is allowed";
    let no_secret = with(facts(), |f| {
        f.password =
            PasswordFacts::Referenced(Err("Secret shop/coffee-db-password not found".into()));
    });
    let no_secret_message = "Secret shop/coffee-db-password not found";
    check(vec![
        (
            "an invalid spec is refused until it changes, before the finalizer",
            cross_namespace,
            Plan {
                refusal: Some("InvalidSpec"),
                ..plan_of(
                    Requeue::AwaitChange,
                    vec![],
                    failed(None, "InvalidSpec", invalid),
                    vec![event(Warning, "InvalidSpec", "Reconcile", invalid, 0)],
                )
            },
        ),
        (
            "a missing password Secret backs off, nothing is created",
            no_secret,
            Plan {
                refusal: Some("PasswordSecret"),
                ..plan_of(
                    Requeue::Backoff,
                    vec![],
                    failed(None, "PasswordSecretUnavailable", no_secret_message),
                    vec![event(
                        Warning,
                        "PasswordSecretUnavailable",
                        "Reconcile",
                        no_secret_message,
                        0,
                    )],
                )
            },
        ),
    ]);
    assert_eq!(
        Look::None,
        look(&with(facts(), |f| f.db.spec.allocated_storage = None).db)
    );
    assert_eq!(look(&facts().db), Look::Shared);
    assert_eq!(
        look(&deleting(DeletionPolicy::Delete, None).db),
        Look::Direct
    );
}

pub(super) fn deleting(policy: DeletionPolicy, observed: Option<ObservedInstance>) -> Facts {
    with(synced(), |f| {
        f.db.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
        f.db.spec.deletion_policy = policy;
        f.observed = observed;
        f.observed_directly = true;
        f.password = PasswordFacts::NotRead;
        f.release_candidates = vec![
            Secret {
                metadata: kube::api::ObjectMeta {
                    name: Some("coffee-db".into()),
                    owner_references: Some(vec![OwnerReference {
                        uid: UID.into(),
                        ..Default::default()
                    }]),
                    ..Default::default()
                },
                ..Default::default()
            },
            // Someone else's Secret of the same name as the generated one: never released.
            Secret {
                metadata: kube::api::ObjectMeta {
                    name: Some("coffee-master-password".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
        ];
    })
}

#[test]
fn deletion_policies() {
    let protected = {
        let mut o = ours();
        o.deletion_protection = Some(true);
        o
    };
    let protected_message = "RDS instance coffee has deletion protection on; set spec.deletionProtection to false \
                 (or turn it off in AWS) to let the deletion proceed";
    let theirs = {
        let mut o = ours();
        o.tags.insert(OWNER_TAG.into(), "another-uid".into());
        o
    };
    let in_progress = {
        let mut o = ours();
        o.status = "deleting".into();
        o
    };
    let waiting = deleting(DeletionPolicy::Delete, Some(in_progress.clone()));
    let mut waiting_fields = observed_status("coffee", &in_progress);
    waiting_fields.master_user_password_hash =
        Some(spec::password_hash(&key(), UID, "Sup3r-Secret"));
    let released = |reason: &str, note: &str, secret_step: Step| Plan {
        gauge: Gauge::Remove,
        ..plan_of(
            Requeue::AwaitChange,
            vec![secret_step, Step::RemoveFinalizer],
            None,
            vec![event(Normal, reason, "Delete", note, 1)],
        )
    };
    let delete_secret = Step::DeleteSecret {
        name: "coffee-db".into(),
    };
    let let_go = with(deleting(DeletionPolicy::Delete, None), |f| {
        f.db.metadata.finalizers = None
    });
    let protected_facts = deleting(DeletionPolicy::Snapshot, Some(protected));
    check(vec![
        (
            "Delete deletes without a final snapshot",
            deleting(DeletionPolicy::Delete, Some(ours())),
            plan_of(
                BUSY,
                vec![Step::DeleteInstance {
                    identifier: "coffee".into(),
                    final_snapshot: None,
                    delete_automated_backups: false,
                }],
                None,
                vec![event(
                    Normal,
                    "Deleting",
                    "Delete",
                    "deleting RDS instance coffee",
                    1,
                )],
            ),
        ),
        (
            "Snapshot deletes after a final snapshot named after the uid",
            deleting(DeletionPolicy::Snapshot, Some(ours())),
            plan_of(
                BUSY,
                vec![Step::DeleteInstance {
                    identifier: "coffee".into(),
                    final_snapshot: Some(FINAL.into()),
                    delete_automated_backups: false,
                }],
                None,
                vec![event(
                    Normal,
                    "Deleting",
                    "Delete",
                    &format!("deleting RDS instance coffee after final snapshot {FINAL}"),
                    1,
                )],
            ),
        ),
        (
            "Retain keeps the instance, marked as let go, and our Secrets, without owner",
            deleting(DeletionPolicy::Retain, Some(ours())),
            Plan {
                gauge: Gauge::Remove,
                ..plan_of(
                    Requeue::AwaitChange,
                    vec![
                        Step::AddTags {
                            identifier: "coffee".into(),
                            arn: ARN.into(),
                            tags: [(crate::dbinstance::RETAINED_TAG.to_owned(), NOW.to_owned())]
                                .into(),
                        },
                        Step::OrphanSecret {
                            name: "coffee-db".into(),
                        },
                        Step::RemoveFinalizer,
                    ],
                    None,
                    vec![event(
                        Normal,
                        "Retained",
                        "Delete",
                        "deletionPolicy is Retain: RDS instance coffee is left running",
                        2,
                    )],
                )
            },
        ),
        (
            "a gone instance lets the DBInstance go, with our Secrets",
            deleting(DeletionPolicy::Delete, None),
            released(
                "Deleted",
                "RDS instance coffee is gone",
                delete_secret.clone(),
            ),
        ),
        (
            "a foreign instance is left alone",
            deleting(DeletionPolicy::Delete, Some(theirs)),
            released(
                "Released",
                "RDS instance coffee is not managed by this DBInstance and was left alone",
                delete_secret,
            ),
        ),
        (
            "RDS deleting: wait",
            waiting,
            plan_of(
                BUSY,
                vec![],
                observed(
                    waiting_fields,
                    true,
                    "Deleting",
                    "RDS instance coffee is being deleted",
                ),
                vec![],
            ),
        ),
        (
            "deletion protection holds the deletion, reported once",
            protected_facts.clone(),
            plan_of(
                SETTLED,
                vec![],
                failed(
                    protected_facts.db.status.as_ref(),
                    "DeletionProtected",
                    protected_message,
                ),
                vec![event(
                    Warning,
                    "DeletionProtected",
                    "Reconcile",
                    protected_message,
                    0,
                )],
            ),
        ),
        (
            "without our finalizer there is nothing left to do",
            let_go,
            Plan::idle(Requeue::AwaitChange),
        ),
    ]);
}

#[test]
fn aws_errors_are_reported_by_class() {
    let reasons = [
        (ErrorClass::InvalidInput, "InvalidRequest"),
        (ErrorClass::Retryable, "AWSUnavailable"),
        (ErrorClass::AlreadyExists, "AlreadyExists"),
        (ErrorClass::NotFound, "NotFound"),
    ];
    for (class, reason) in reasons {
        let error = Error::Aws(AwsError {
            operation: "CreateDBInstance",
            class,
            code: "Code".into(),
            message: "AWS says no".into(),
        });
        let (got_reason, message) = error.user_facing().expect("user-facing");
        assert_eq!(got_reason, reason);
        assert_eq!(message, "CreateDBInstance failed: Code: AWS says no");
        let previous = synced().db.status;
        let (status, event) = status::failure(previous.as_ref(), &got_reason, &message);
        assert_eq!(Some(status), failed(previous.as_ref(), reason, &message));
        assert_eq!(event.map(|e| e.reason), Some(reason.to_owned()));
    }
    // The same failure again publishes no second Event.
    let mut previous = synced().db.status.unwrap();
    previous.conditions = vec![status::condition(
        "Synced",
        &ConditionPlan::new(false, "AWSUnavailable", "m"),
        None,
    )];
    assert_eq!(
        status::failure(Some(&previous), "AWSUnavailable", "m").1,
        None
    );
}

#[test]
fn the_written_status_takes_rds_answers() {
    let planned = StatusPlan {
        held: false,
        fields: creating_fields(Some("pw")),
        ready: None,
        synced: ConditionPlan::new(true, "Synced", CREATING_SYNCED),
    };
    let mut created = ours();
    created.status = "creating".into();
    let written = status::finish(
        &planned,
        None,
        Some(&Response::Created(created)),
        Some(1),
        NOW,
    );
    assert_eq!(written.arn.as_deref(), Some(ARN));
    assert_eq!(
        written.master_user_password_hash,
        Some(spec::password_hash(&key(), UID, "pw"))
    );
    assert_eq!(written.observed_generation, Some(1));
    let ready = written
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "Creating")
    );
    assert_eq!(ready.last_transition_time, at(NOW));

    // Rebooting: Ready stays False (modifying now counts as serving clients, so it would flip).
    let mut rebooting = ours();
    rebooting.status = "rebooting".into();
    let after = status::finish(
        &planned,
        Some(&written),
        Some(&Response::Modified(rebooting)),
        Some(1),
        "later",
    );
    assert_eq!(after.db_instance_status.as_deref(), Some("rebooting"));
    let ready = after
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .unwrap();
    assert_eq!(
        ready.last_transition_time,
        at(NOW),
        "unchanged status keeps its time"
    );
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
        f.db.spec.master_user_password = None;
        f.db.spec.manage_master_user_password = Some(true);
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
fn backoff_grows_and_caps() {
    assert_eq!(backoff_delay(1), Duration::from_secs(2));
    assert_eq!(backoff_delay(2), Duration::from_secs(4));
    assert_eq!(backoff_delay(5), Duration::from_secs(32));
    assert_eq!(backoff_delay(30), Duration::from_secs(300));
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
fn password_hash_is_salted_and_hides_the_password() {
    let h = spec::password_hash(&key(), UID, "hunter2");
    assert_eq!(h.len(), 64);
    assert!(!h.contains("hunter2"));
    assert_ne!(h, spec::password_hash(&key(), "other-uid", "hunter2"));
}

#[test]
fn readiness_by_state() {
    assert!(status::readiness("available").0);
    assert_eq!(status::readiness("backing-up").1, "BackingUp");
    assert_eq!(
        status::readiness("incompatible-parameters").1,
        "IncompatibleParameters"
    );
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

/// An RFC 3339 time as a Kubernetes time.
fn at(t: &str) -> Time {
    Time(t.parse().expect("RFC 3339"))
}

#[test]
fn unchanged_condition_keeps_its_transition_time() {
    let (t1, t2, t3) = (
        "2026-11-30T10:00:00Z",
        "2026-11-30T10:01:00Z",
        "2026-11-30T10:02:00Z",
    );
    let creating = ConditionPlan::new(false, "Creating", "m");
    let first = status::merge_conditions(
        &[],
        vec![status::condition("Ready", &creating, Some(1))],
        t1,
    );
    assert_eq!(first[0].last_transition_time, at(t1));
    let same = status::merge_conditions(
        &first,
        vec![status::condition("Ready", &creating, Some(1))],
        t2,
    );
    assert_eq!(same, first);
    let available = ConditionPlan::new(true, "Available", "m");
    let flipped = status::merge_conditions(
        &same,
        vec![status::condition("Ready", &available, Some(1))],
        t3,
    );
    assert_eq!(flipped[0].last_transition_time, at(t3));
    // The schema is Kubernetes's: lastTransitionTime required, a date-time.
    let crd = serde_json::to_value(<DBInstance as kube::CustomResourceExt>::crd()).unwrap();
    let conditions = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
        ["properties"]["conditions"]["items"];
    assert!(
        conditions["required"]
            .as_array()
            .unwrap()
            .contains(&"lastTransitionTime".into()),
        "{conditions}"
    );
    assert_eq!(
        conditions["properties"]["lastTransitionTime"]["format"],
        "date-time"
    );
}

#[test]
fn observed_status_reports_endpoint_only_when_known() {
    let mut o = {
        let mut o = ours();
        o.status = "creating".into();
        o.address = None;
        o.port = None;
        o
    };
    assert_eq!(status::observed_status("coffee", &o).endpoint, None);
    o.address = Some("coffee.example".into());
    o.port = Some(3306);
    let s = status::observed_status("coffee", &o);
    assert_eq!(
        s.endpoint,
        Some(crate::dbinstance::Endpoint {
            address: "coffee.example".into(),
            port: 3306
        })
    );
    assert_eq!(s.db_instance_status.as_deref(), Some("creating"));
}

#[test]
fn protection_stronger_in_aws_is_kept_and_fights_stop() {
    // Someone turned deletion protection on, raised the retention and added a standby in AWS.
    let stronger = |f: &mut Facts| {
        f.db.spec.deletion_protection = Some(false);
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
            f.db.status.as_mut().unwrap().corrections = vec![Corrections {
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
    let class_back = |_: &Facts| Step::ModifyInstance {
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
    let Step::ModifyInstance { modification, .. } = &edit_steps[0] else {
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
    let recorded = third.status.unwrap().fields.corrections;
    assert_eq!(recorded[0].times, vec![three[1], three[2], NOW]);
}

#[test]
fn deletion_defaults_keep_a_snapshot_and_the_backups() {
    let default_policy = with(deleting(DeletionPolicy::default(), Some(ours())), |_| {});
    let named = with(deleting(DeletionPolicy::Snapshot, Some(ours())), |f| {
        f.db.spec.final_db_snapshot_identifier = Some("coffee-before-migration".into());
        f.db.spec.delete_automated_backups = Some(true);
    });
    let cached = with(deleting(DeletionPolicy::Delete, Some(ours())), |f| {
        f.observed_directly = false;
    });
    let delete = |snapshot: &str, backups: bool| Step::DeleteInstance {
        identifier: "coffee".into(),
        final_snapshot: Some(snapshot.into()),
        delete_automated_backups: backups,
    };
    assert_eq!(plan(&default_policy).steps, vec![delete(FINAL, false)]);
    assert_eq!(
        plan(&named).steps,
        vec![delete("coffee-before-migration", true)]
    );
    assert_eq!(
        plan(&cached),
        Plan::idle(BUSY),
        "never delete on the shared poll's knowledge"
    );
}

#[test]
fn trust_boundaries() {
    let wants_secret = |name: &str| {
        let name = name.to_owned();
        move |f: &mut Facts| {
            f.db.spec.connection_secret = Some(ConnectionSecretSpec {
                name: name.clone(),
                extra_keys: BTreeMap::new(),
            });
        }
    };
    // Another DBInstance of the namespace uses coffee-db-password as its password Secret.
    let mut victim = db();
    victim.metadata.name = Some("victim".into());
    victim.metadata.uid = Some("victim-uid".into());
    let takeover = with(synced(), |f| {
        wants_secret("coffee-db-password")(f);
        f.db.spec.master_user_password.as_mut().unwrap().name = "mine".into();
        f.peers = vec![victim.clone(), f.db.clone()];
    });
    let takeover_message = "connectionSecret.name \"coffee-db-password\" is the master password Secret of DBInstance victim; choose another name";
    // A Secret of that name exists and is someone else's (no controller reference of ours).
    let not_ours = with(synced(), |f| {
        wants_secret("coffee-db")(f);
        let mut theirs = connection_secret("someone-else", "x");
        theirs.metadata.owner_references = None;
        f.connection_secret = Some(theirs);
    });
    let not_ours_message = "a Secret named coffee-db exists and is not this DBInstance's; the operator does not write to it: \
             choose another connectionSecret.name, or delete that Secret";
    // Owned, but not as controller: not ours to write either.
    let owned_not_controlled = with(not_ours.clone(), |f| {
        let mut s = connection_secret(UID, "x");
        s.metadata.owner_references.as_mut().unwrap()[0].controller = None;
        f.connection_secret = Some(s);
    });
    let generated_not_ours = with(synced(), |f| {
        f.db.spec.master_user_password = None;
        f.password = PasswordFacts::Generated {
            existing: None,
            secret_exists: true,
            controlled: false,
            owner_referenced: false,
            candidate: pw("Gen3rated"),
        };
    });
    let generated_message = "a Secret named coffee-master-password exists and is not this DBInstance's; the operator neither uses nor \
             overwrites it: delete or rename it, or set masterUserPassword";
    let refused_password = with(facts(), |f| {
        f.password = PasswordFacts::Referenced(Ok(pw("Sup3r-Secret\n")));
    });
    let newline = "the master password ends with a line break (a Secret made with --from-file from a \
                    file with a trailing newline?); remove it";
    check(vec![
        (
            "a connection Secret that is another DBInstance's password Secret is refused",
            takeover.clone(),
            Plan {
                refusal: Some("InvalidSpec"),
                ..refused(
                    &takeover,
                    Requeue::AwaitChange,
                    "InvalidSpec",
                    takeover_message,
                )
            },
        ),
        (
            "a Secret the DBInstance does not control is never written",
            not_ours.clone(),
            Plan {
                refusal: Some("SecretConflict"),
                ..refused(
                    &not_ours,
                    SETTLED,
                    "ConnectionSecretConflict",
                    not_ours_message,
                )
            },
        ),
        (
            "owned without the controller flag is not controlled",
            owned_not_controlled.clone(),
            Plan {
                refusal: Some("SecretConflict"),
                ..refused(
                    &owned_not_controlled,
                    SETTLED,
                    "ConnectionSecretConflict",
                    not_ours_message,
                )
            },
        ),
        (
            "a generated-password Secret that is not ours is neither used nor overwritten",
            generated_not_ours.clone(),
            Plan {
                refusal: Some("SecretConflict"),
                ..refused(
                    &generated_not_ours,
                    SETTLED,
                    "PasswordSecretConflict",
                    generated_message,
                )
            },
        ),
        (
            "a password RDS would refuse is refused before any call",
            refused_password.clone(),
            Plan {
                refusal: Some("InvalidSpec"),
                ..refused(
                    &refused_password,
                    Requeue::AwaitChange,
                    "InvalidSpec",
                    newline,
                )
            },
        ),
    ]);
}

#[test]
fn the_password_hash_needs_the_operators_key() {
    let h = spec::password_hash(&key(), UID, "Sup3r-Secret");
    assert_eq!(h.len(), 64);
    assert_ne!(
        h,
        spec::legacy_password_hash(UID, "Sup3r-Secret"),
        "not the guessable one"
    );
    assert_ne!(
        h,
        spec::password_hash(&Sensitive::new("other key"), UID, "Sup3r-Secret")
    );
    assert_ne!(h, spec::password_hash(&key(), "other-uid", "Sup3r-Secret"));
    // A status from before the keyed hash, of the same password: replaced, no rotation.
    let legacy = with(synced(), |f| {
        f.db.status.as_mut().unwrap().master_user_password_hash =
            Some(spec::legacy_password_hash(UID, "Sup3r-Secret"));
    });
    let plan = plan(&legacy);
    assert!(plan.steps.is_empty(), "{:?}", plan.steps);
    assert_eq!(
        plan.status.unwrap().fields.master_user_password_hash,
        Some(h)
    );
}

#[test]
fn a_paused_dbinstance_makes_no_call_and_says_so() {
    let pause = |f: &mut Facts| {
        f.db.metadata.annotations = Some(
            [(
                crate::dbinstance::PAUSED_ANNOTATION.to_owned(),
                "true".to_owned(),
            )]
            .into(),
        );
    };
    // Drift, a rotation and a deletion all wait.
    let drifted = with(synced(), |f| {
        pause(f);
        let mut o = ours();
        o.db_instance_class = Some("db.t3.large".into());
        f.observed = Some(o);
        f.password = PasswordFacts::Referenced(Ok(pw("Rotated-2026")));
    });
    let deleting = with(deleting(DeletionPolicy::Delete, Some(ours())), pause);
    for f in [&drifted, &deleting] {
        let plan = plan(f);
        assert!(plan.steps.is_empty(), "{:?}", plan.steps);
        assert_eq!(plan.requeue, Requeue::AwaitChange);
        let status = plan.status.unwrap();
        assert_eq!(status.synced.reason, "ReconcilePaused");
        assert_eq!(plan.events.len(), 1);
    }
    assert_eq!(look(&drifted.db), Look::None);
    assert_eq!(look(&deleting.db), Look::None);
    assert_eq!(reads(&drifted.db, None).password, PasswordRead::None);
    // "false" is not paused.
    let not = with(synced(), |f| {
        f.db.metadata.annotations = Some(
            [(
                crate::dbinstance::PAUSED_ANNOTATION.to_owned(),
                "false".to_owned(),
            )]
            .into(),
        );
    });
    assert_eq!(plan(&not).status.unwrap().synced.reason, "Synced");
}

/// The step names and the Synced reason of a plan: what the take-over rules below decide.
pub(super) fn outline(p: &Plan) -> (Vec<&'static str>, String) {
    let names = p.steps.iter().map(Step::name).collect();
    let reason = (p.status.as_ref()).map_or(String::new(), |s| s.synced.reason.clone());
    (names, reason)
}

pub(super) fn check_outlines(cases: Vec<(&str, Facts, Vec<&'static str>, &str)>) {
    for (name, facts, steps, reason) in cases {
        let got = plan(&facts);
        assert_eq!(outline(&got), (steps, reason.to_owned()), "case: {name}");
    }
}

/// An instance someone else created (CloudFormation, the console): no ownership tags.
/// A platform admin granted its adoption to namespace shop.
pub(super) fn stack_instance() -> ObservedInstance {
    let mut o = ours();
    o.tags = [
        (
            "aws:cloudformation:stack-name".to_owned(),
            "coffee".to_owned(),
        ),
        (
            crate::dbinstance::ADOPTABLE_BY_TAG.to_owned(),
            "shop".to_owned(),
        ),
    ]
    .into();
    o.db_instance_class = Some("db.t3.small".into());
    o
}

fn annotated(mut f: Facts, key: &str, value: &str) -> Facts {
    (f.db.metadata.annotations.get_or_insert_default()).insert(key.into(), value.into());
    f
}

pub(super) fn adopting(policy: crate::dbinstance::AdoptionPolicy) -> Facts {
    with(facts(), |f| {
        f.db.spec.adoption_policy = Some(policy);
        f.observed = Some(stack_instance());
        f.observed_directly = true;
    })
}

/// An instance tagged for the DBInstance `owner` (namespace/name), which still exists or not.
fn claimed_by(owner: &str, alive: Option<bool>) -> Facts {
    with(adopting(crate::dbinstance::AdoptionPolicy::Adopt), |f| {
        let o = f.observed.as_mut().unwrap();
        o.tags.insert(OWNER_TAG.into(), "theirs".into());
        o.tags.insert(OWNER_NAME_TAG.into(), owner.into());
        f.owner_alive = alive;
    })
}

/// A previous DBInstance shop/coffee (another uid) retained this instance.
fn retained() -> ObservedInstance {
    let mut o = ours();
    o.tags.insert(OWNER_TAG.into(), "previous-uid".into());
    o.tags
        .insert(crate::dbinstance::RETAINED_TAG.into(), NOW.into());
    o
}

#[test]
fn adoption_rules() {
    use crate::dbinstance::AdoptionPolicy::{Adopt, AdoptOrCreate};
    let after_adoption = with(synced(), |f| {
        f.observed = Some({
            let mut o = stack_instance();
            o.tags.extend(ours().tags);
            o
        });
        let status = f.db.status.as_mut().unwrap();
        status.adopted_generation = Some(1);
        status.master_user_password_hash = None;
    });
    let confirmed = with(after_adoption.clone(), |f| {
        f.db.metadata.generation = Some(2)
    });
    check_outlines(vec![
        (
            "without the opt-in an untagged instance is refused",
            with(facts(), |f| f.observed = Some(stack_instance())),
            vec![],
            "IdentifierInUse",
        ),
        (
            "Adopt adds the ownership tags and nothing else",
            adopting(Adopt),
            vec!["AddTags"],
            "Adopted",
        ),
        (
            "ACK's adoption-policy annotation says the same",
            annotated(
                with(facts(), |f| {
                    f.observed = Some(stack_instance());
                    f.observed_directly = true;
                }),
                crate::dbinstance::ACK_ADOPTION_POLICY,
                "adopt",
            ),
            vec!["AddTags"],
            "Adopted",
        ),
        (
            "an unknown ACK adoption policy is refused",
            annotated(facts(), crate::dbinstance::ACK_ADOPTION_POLICY, "take"),
            vec![],
            "InvalidSpec",
        ),
        (
            "the annotation contradicting the spec is refused",
            annotated(
                adopting(AdoptOrCreate),
                crate::dbinstance::ACK_ADOPTION_POLICY,
                "adopt",
            ),
            vec![],
            "InvalidSpec",
        ),
        (
            "Adopt with nothing to adopt creates nothing",
            with(adopting(Adopt), |f| f.observed = None),
            vec![],
            "NothingToAdopt",
        ),
        (
            "AdoptOrCreate with nothing to adopt creates",
            with(adopting(AdoptOrCreate), |f| f.observed = None),
            vec!["CreateInstance"],
            "Synced",
        ),
        (
            "a generated password cannot be known: no adoption",
            with(adopting(Adopt), |f| {
                f.db.spec.master_user_password = None;
                f.password = no_generated_secret("Gen3rated");
            }),
            vec![],
            "PasswordUnknown",
        ),
        (
            "the password Secret must be there before adopting",
            with(adopting(Adopt), |f| {
                f.password =
                    PasswordFacts::Referenced(Err("Secret coffee-db-password not found".into()))
            }),
            vec![],
            "PasswordSecretUnavailable",
        ),
        (
            "an instance of another namespace's DBInstance is never adopted",
            claimed_by("other/coffee", Some(false)),
            vec![],
            "IdentifierInUse",
        ),
        (
            "an instance of a DBInstance of this namespace that exists is never adopted",
            claimed_by("shop/tea", Some(true)),
            vec![],
            "IdentifierInUse",
        ),
        (
            "nor when whether it exists is unknown",
            claimed_by("shop/tea", None),
            vec![],
            "IdentifierInUse",
        ),
        (
            "one of a DBInstance of this namespace that is gone is adopted when asked",
            claimed_by("shop/tea", Some(false)),
            vec!["AddTags"],
            "Adopted",
        ),
        (
            "a retained instance of this name is adopted again without asking, and unmarked",
            with(facts(), |f| {
                f.observed = Some(retained());
                f.observed_directly = true;
                f.owner_alive = Some(false);
            }),
            vec!["AddTags", "RemoveTags"],
            "Adopted",
        ),
        (
            "an unreleased instance of this name waits for the opt-in",
            with(facts(), |f| {
                let mut o = retained();
                o.tags.remove(crate::dbinstance::RETAINED_TAG);
                f.observed = Some(o);
                f.owner_alive = Some(false);
            }),
            vec![],
            "IdentifierInUse",
        ),
        (
            "differences of an adopted instance are reported, not sent",
            after_adoption,
            vec![],
            "AdoptedWithDifferences",
        ),
        (
            "a crash after create (no adoption tag): what differs is put right, not held",
            with(facts(), |f| {
                let mut o = ours();
                o.db_instance_class = Some("db.t3.small".into());
                f.observed = Some(o);
            }),
            vec!["ModifyInstance"],
            "Updating",
        ),
        (
            "a crash between the adopting call and the status write: still held",
            with(facts(), |f| {
                let mut o = stack_instance();
                o.tags.extend(ours().tags);
                o.tags
                    .insert(crate::dbinstance::ADOPTED_TAG.into(), NOW.into());
                f.observed = Some(o);
            }),
            vec![],
            "AdoptedWithDifferences",
        ),
        (
            "once the spec changes they are put right",
            confirmed,
            vec!["ModifyInstance"],
            "Updating",
        ),
    ]);
    // The adoption step carries exactly the ownership tags, and status remembers the generation.
    let p = plan(&adopting(Adopt));
    assert_eq!(
        p.steps,
        vec![Step::AddTags {
            identifier: "coffee".into(),
            arn: ARN.into(),
            tags: [
                (OWNER_TAG.to_owned(), UID.to_owned()),
                (OWNER_NAME_TAG.to_owned(), "shop/coffee".to_owned()),
                (crate::dbinstance::ADOPTED_TAG.to_owned(), NOW.to_owned()),
            ]
            .into(),
        }]
    );
    let status = p.status.unwrap();
    assert_eq!(status.fields.adopted_generation, Some(1));
    assert_eq!(
        status.fields.master_user_password_hash, None,
        "the password is taken, never sent"
    );
    assert_eq!(p.events[0].reason, "Adopted");
    // The refusal of a retained but unreleased instance says how to take it over.
    let unreleased = with(facts(), |f| {
        let mut o = retained();
        o.tags.remove(crate::dbinstance::RETAINED_TAG);
        f.observed = Some(o);
        f.owner_alive = Some(false);
    });
    let message = plan(&unreleased).status.unwrap().synced.message;
    assert!(
        message.contains("set spec.adoptionPolicy: Adopt"),
        "{message}"
    );
}

#[test]
fn observe_only_rules() {
    use crate::dbinstance::ManagementPolicy::ObserveOnly;
    let observing = |observed: Option<ObservedInstance>| {
        with(synced(), |f| {
            f.db.spec.management_policy = ObserveOnly;
            f.observed = observed;
        })
    };
    let mut tagged_elsewhere = stack_instance();
    tagged_elsewhere
        .tags
        .insert(OWNER_TAG.into(), "theirs".into());
    tagged_elsewhere
        .tags
        .insert(OWNER_NAME_TAG.into(), "other/coffee".into());
    let mut matching = stack_instance();
    matching.db_instance_class = Some("db.t3.micro".into());
    let with_secret = with(observing(Some(matching.clone())), |f| {
        f.db.spec.connection_secret = Some(ConnectionSecretSpec {
            name: "coffee-db".into(),
            extra_keys: BTreeMap::new(),
        });
    });
    let rotated = with(observing(Some(matching)), |f| {
        f.password = PasswordFacts::Referenced(Ok(pw("N3w-Secret")));
    });
    check_outlines(vec![
        (
            "an absent instance is never created",
            observing(None),
            vec![],
            "NotFound",
        ),
        (
            "differences are reported, never sent, tags included",
            observing(Some(stack_instance())),
            vec![],
            "Observed",
        ),
        (
            "another namespace's instance is not observed",
            observing(Some(tagged_elsewhere)),
            vec![],
            "IdentifierInUse",
        ),
        (
            "the connection Secret is written from the referenced password",
            with_secret,
            vec!["WriteConnectionSecret"],
            "Synced",
        ),
        (
            "a changed password is never sent",
            rotated,
            vec![],
            "Synced",
        ),
        (
            "deleting it never deletes the instance, even our own",
            with(deleting(DeletionPolicy::Delete, Some(ours())), |f| {
                f.db.spec.management_policy = ObserveOnly
            }),
            vec!["DeleteSecret", "RemoveFinalizer"],
            "",
        ),
    ]);
}

#[test]
fn ack_deletion_policy_annotation() {
    let retain = annotated(
        deleting(DeletionPolicy::Snapshot, Some(ours())),
        crate::dbinstance::ACK_DELETION_POLICY,
        "retain",
    );
    let delete = annotated(
        deleting(DeletionPolicy::Snapshot, Some(ours())),
        crate::dbinstance::ACK_DELETION_POLICY,
        "delete",
    );
    check_outlines(vec![
        (
            "retain keeps the instance whatever the spec says",
            retain,
            vec!["AddTags", "OrphanSecret", "RemoveFinalizer"],
            "",
        ),
        (
            "delete deletes, after the final snapshot the spec asks for",
            delete.clone(),
            vec!["DeleteInstance"],
            "",
        ),
        (
            "an unknown value is refused",
            annotated(facts(), crate::dbinstance::ACK_DELETION_POLICY, "keep"),
            vec![],
            "InvalidSpec",
        ),
        (
            "delete contradicting spec Retain is refused",
            annotated(
                with(facts(), |f| {
                    f.db.spec.deletion_policy = DeletionPolicy::Retain
                }),
                crate::dbinstance::ACK_DELETION_POLICY,
                "delete",
            ),
            vec![],
            "InvalidSpec",
        ),
    ]);
    assert!(
        matches!(&plan(&delete).steps[0], Step::DeleteInstance { final_snapshot: Some(s), .. } if s == FINAL)
    );
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
    assert!(
        matches!(&p.steps[0], Step::RestoreInstance { snapshot, .. } if snapshot == "coffee-before")
    );
    let fields = p.status.unwrap().fields;
    assert_eq!(
        fields.restore,
        Some(RestoreStatus {
            source: "snapshot coffee-before".into(),
            settings_applied: false
        })
    );
    assert_eq!(
        fields.master_user_password_hash.as_deref(),
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
        status.master_user_password_hash = Some(super::password::RESTORED_PASSWORD.into());
    });
    let p = plan(&restored);
    let Step::ModifyInstance {
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
        fields.master_user_password_hash,
        Some(spec::password_hash(&key(), UID, "Sup3r-Secret")),
        "sent once"
    );
    assert!(p.events.iter().all(|e| e.reason != "DriftCorrected"));
    // Once RDS holds them, and nothing is pending: applied.
    let matching = with(restored.clone(), |f| {
        let o = f.observed.as_mut().unwrap();
        o.backup_retention_period = Some(1);
        o.db_instance_class = Some("db.t3.micro".into());
        f.db.status.as_mut().unwrap().master_user_password_hash =
            Some(spec::password_hash(&key(), UID, "Sup3r-Secret"));
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
        status.master_user_password_hash = hash.clone();
        status.observed_generation = Some(1);
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
            Step::ModifyInstance { modification, .. } => Some(modification),
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
            fields.master_user_password_hash.as_deref(),
            written,
            "{case}"
        );
    }
    // An adopted instance, or one the spec created: no restore is read into them.
    for (case, f) in [("adopted", adopted), ("created", created)] {
        let p = plan(&f);
        assert!(
            !p.steps.iter().any(|s| matches!(s, Step::ModifyInstance { modification, .. } if modification.rotate_password)),
            "{case}: {:?}",
            p.steps
        );
        assert_eq!(p.status.unwrap().fields.restore, None, "{case}");
    }
}

#[test]
fn dry_run_rules() {
    let dry = |f: Facts| annotated(f, crate::dbinstance::DRY_RUN_ANNOTATION, "true");
    let class_change = dry(with(synced(), |f| {
        f.db.spec.db_instance_class = "db.t3.large".into();
        f.db.metadata.generation = Some(2);
    }));
    let p = plan(&class_change);
    assert!(p.steps.is_empty(), "no step is carried out: {:?}", p.steps);
    let status = p.status.clone().unwrap();
    assert!(
        status.held,
        "observedGeneration stays, so the edit is still one once acted on"
    );
    assert_eq!(status.synced.reason, "DryRun");
    let steps = status.fields.dry_run.clone().unwrap().steps;
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].action, "ModifyDBInstance");
    assert_eq!(steps[0].disruption, "Outage");
    assert_eq!(
        steps[0].fields,
        vec![FieldDrift {
            field: "dbInstanceClass".into(),
            observed: "db.t3.micro".into(),
            desired: "db.t3.large".into()
        }]
    );
    assert_eq!(
        p.events
            .iter()
            .map(|e| e.reason.as_str())
            .collect::<Vec<_>>(),
        vec!["DryRun"]
    );
    // The same plan again publishes no Event.
    let again = with(class_change.clone(), |f| {
        f.db.status = Some(status.fields.clone())
    });
    assert!(plan(&again).events.is_empty());
    // On a Multi-AZ instance the class change is a failover; a parameter group waits for a reboot.
    let multi_az = with(class_change.clone(), |f| {
        f.observed.as_mut().unwrap().multi_az = Some(true);
        f.db.spec.multi_az = Some(true);
    });
    let steps = plan(&multi_az)
        .status
        .unwrap()
        .fields
        .dry_run
        .unwrap()
        .steps;
    assert_eq!(steps[0].disruption, "Failover");
    let group = dry(with(synced(), |f| {
        f.db.spec.db_parameter_group_name = Some("coffee-params".into())
    }));
    let steps = plan(&group).status.unwrap().fields.dry_run.unwrap().steps;
    assert_eq!(steps[0].disruption, "Reboot");
    // A new DBInstance in dry run creates nothing; only the finalizer is added.
    let new = dry(with(facts(), |f| f.db.metadata.finalizers = None));
    let p = plan(&new);
    assert_eq!(p.steps, vec![Step::AddFinalizer]);
    let steps = p.status.unwrap().fields.dry_run.unwrap().steps;
    assert_eq!(
        (steps[0].action.as_str(), steps[0].disruption.as_str()),
        ("CreateDBInstance", "NewInstance")
    );
    // Deletion in dry run deletes nothing and keeps the DBInstance.
    let p = plan(&dry(deleting(DeletionPolicy::Delete, Some(ours()))));
    assert!(p.steps.is_empty());
    let steps = p.status.unwrap().fields.dry_run.unwrap().steps;
    assert_eq!(
        (steps[0].action.as_str(), steps[0].disruption.as_str()),
        ("DeleteDBInstance", "Deletion")
    );
    // An adoption in dry run shows the tags it adds and the differences it would put right later.
    let p = plan(&dry(adopting(crate::dbinstance::AdoptionPolicy::Adopt)));
    assert!(p.steps.is_empty());
    let steps = p.status.unwrap().fields.dry_run.unwrap().steps;
    assert_eq!(
        steps.iter().map(|s| s.action.as_str()).collect::<Vec<_>>(),
        vec!["AddTagsToResource", "ModifyDBInstance"]
    );
    assert_eq!(steps[1].fields[0].field, "dbInstanceClass");
    assert_eq!(steps[1].disruption, "Outage");
    // In sync: nothing to do, the usual report with an empty dry run.
    let p = plan(&dry(synced()));
    assert_eq!(p.status.unwrap().synced.reason, "Synced");
}

#[test]
fn a_pause_keeps_the_observed_generation() {
    let paused = annotated(
        with(synced(), |f| f.db.metadata.generation = Some(2)),
        crate::dbinstance::PAUSED_ANNOTATION,
        "true",
    );
    assert!(plan(&paused).status.unwrap().held);
}

#[test]
fn disruption_follows_rds_downtime_notes() {
    use super::dry_run::{Disruption, disruption_of};
    use crate::dbinstance::drift::Diff;
    let d = |field: &'static str, observed: &str, desired: &str| Diff {
        field,
        observed: observed.into(),
        desired: desired.into(),
    };
    let table = [
        (
            d("dbInstanceClass", "db.t3.micro", "db.t3.large"),
            false,
            Disruption::Outage,
        ),
        (
            d("dbInstanceClass", "db.t3.micro", "db.t3.large"),
            true,
            Disruption::Failover,
        ),
        (
            d("engineVersion", "8.0.41", "8.0.42"),
            false,
            Disruption::Outage,
        ),
        (d("allocatedStorage", "20", "30"), false, Disruption::None),
        (
            d("backupRetentionPeriod", "0", "7"),
            false,
            Disruption::Outage,
        ),
        (
            d("backupRetentionPeriod", "7", "0"),
            false,
            Disruption::Outage,
        ),
        (
            d("backupRetentionPeriod", "1", "7"),
            false,
            Disruption::None,
        ),
        (
            d("storageType", "standard", "gp3"),
            false,
            Disruption::Outage,
        ),
        (d("storageType", "gp2", "gp3"), false, Disruption::None),
        (
            d("dbParameterGroupName", "default.mysql8.0", "coffee"),
            false,
            Disruption::Reboot,
        ),
        (d("multiAZ", "false", "true"), false, Disruption::None),
        (d("port", "3306", "3307"), false, Disruption::Outage),
        (
            d("deletionProtection", "false", "true"),
            false,
            Disruption::None,
        ),
    ];
    for (diff, multi_az, expected) in table {
        assert_eq!(
            disruption_of(&diff, multi_az),
            expected,
            "{diff:?} multiAZ {multi_az}"
        );
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
    let Step::CreateInstance { spec, .. } = &plan(&resolved).steps[0] else {
        panic!("expected a create");
    };
    assert_eq!(
        spec.db_subnet_group_name.as_deref(),
        Some("coffee-subnets"),
        "the group's RDS name is used"
    );
}

#[test]
fn pending_reboot_follows_the_policy() {
    use crate::dbinstance::PendingRebootPolicy::{MaintenanceWindow, Reboot, Report};
    let pending = |policy| {
        with(synced(), |f| {
            f.db.spec.pending_reboot_policy = policy;
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
        f.db.spec.management_policy = crate::dbinstance::ManagementPolicy::ObserveOnly;
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
fn ready_means_available_to_clients() {
    use super::status::{failure, progress, readiness};
    let ready_before = DBInstanceStatus {
        conditions: vec![status::condition(
            "Ready",
            &ConditionPlan::new(true, "Available", "the RDS instance is available"),
            None,
        )],
        ..Default::default()
    };
    // (previous status, failure reason, Ready after)
    let table = [
        (Some(&ready_before), "AWSUnavailable", true),
        (Some(&ready_before), "InvalidSpec", true),
        (Some(&ready_before), "InvalidRequest", true),
        (Some(&ready_before), "DeletionProtected", true),
        (Some(&ready_before), "DeletedOutOfBand", false),
        (Some(&ready_before), "ConfirmingAbsence", false),
        (Some(&ready_before), "AccountOrRegionMismatch", false),
        (None, "InvalidSpec", false),
    ];
    for (previous, reason, ready) in table {
        let (status, _) = failure(previous, reason, "why");
        assert_eq!(
            status.ready.unwrap().ok,
            ready,
            "{reason} after Ready={}",
            previous.is_some()
        );
        assert_eq!(status.synced.reason, reason, "errors are on Synced");
    }
    // RDS states in which clients are served keep Ready True.
    for (state, ready) in [
        ("available", true),
        ("backing-up", true),
        ("modifying", true),
        ("storage-optimization", true),
        ("creating", false),
        ("rebooting", false),
        ("upgrading", false),
        ("stopped", false),
        ("failed", false),
    ] {
        assert_eq!(readiness(state).0, ready, "{state}");
    }
    // (Synced reason, ok, RDS busy) -> (Reconciling, Stalled)
    let table = [
        ("Synced", true, false, false, false),
        ("Synced", true, true, true, false),
        ("Updating", false, false, true, false),
        ("AWSUnavailable", false, false, true, false),
        ("ReferencesUnresolved", false, false, true, false),
        ("InvalidSpec", false, false, false, true),
        ("InvalidParameter", false, true, false, true),
        ("IdentifierInUse", false, false, false, true),
        ("UnsupportedChange", false, false, false, true),
        ("Drifted", false, false, false, false),
        ("ReconcilePaused", false, false, false, false),
        ("PendingReboot", false, false, false, false),
    ];
    for (reason, ok, busy, reconciling, stalled) in table {
        let (r, s) = progress(&ConditionPlan::new(ok, reason, "m"), busy);
        assert_eq!((r.ok, s.ok), (reconciling, stalled), "{reason} busy={busy}");
    }
}

#[test]
fn drift_policy_report_still_applies_the_users_edits() {
    let report = with(synced(), |f| f.db.spec.drift_policy = DriftPolicy::Report);
    let edited = with(report.clone(), |f| {
        f.db.spec.db_instance_class = "db.t3.large".into();
        f.db.metadata.generation = Some(2);
    });
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

#[test]
fn the_latest_restorable_time_moves_in_steps_not_on_every_read() {
    use super::status::restorable_time;
    let t0 = "2026-11-30T09:00:00Z";
    type Row<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>);
    let rows: [Row; 6] = [
        ("first sight", None, Some(t0), Some(t0)),
        (
            "moved a little: kept (no status write, no reconcile it wakes)",
            Some(t0),
            Some("2026-11-30T09:00:00.738919Z"),
            Some(t0),
        ),
        (
            "moved 14 minutes: kept",
            Some(t0),
            Some("2026-11-30T09:14:00Z"),
            Some(t0),
        ),
        (
            "moved 15 minutes: shown",
            Some(t0),
            Some("2026-11-30T09:15:00Z"),
            Some("2026-11-30T09:15:00Z"),
        ),
        (
            "went back (a restore): shown",
            Some(t0),
            Some("2026-11-30T08:00:00Z"),
            Some("2026-11-30T08:00:00Z"),
        ),
        ("RDS shows none", Some(t0), None, None),
    ];
    for (what, shown, observed, want) in rows {
        assert_eq!(restorable_time(shown, observed).as_deref(), want, "{what}");
    }
}

#[test]
fn a_failed_step_is_reported_over_what_the_plan_found() {
    let was_ready = ConditionPlan::new(true, "Synced", "the DB subnet group matches the spec");
    let absent = ConditionPlan::new(false, "Creating", "the DB subnet group is being created");
    let cases = [
        (
            "the group is gone and its re-creation failed: not Ready, whatever status said",
            Some(&absent),
            "InvalidRequest",
            absent.clone(),
        ),
        (
            "the group is there and a modification failed: Ready as the plan found it",
            Some(&was_ready),
            "InvalidRequest",
            was_ready.clone(),
        ),
        (
            "no plan (the read failed): Ready as it was",
            None,
            "AWSUnavailable",
            was_ready.clone(),
        ),
        (
            "a failure that says the object cannot be reached wins",
            Some(&was_ready),
            "NotFound",
            ConditionPlan::new(false, "NotFound", "gone"),
        ),
    ];
    for (name, planned, reason, expected) in cases {
        let failed_ready = match reason {
            "NotFound" => ConditionPlan::new(false, "NotFound", "gone"),
            _ => was_ready.clone(),
        };
        let got = status::ready_after_failure(planned, failed_ready, reason);
        assert_eq!(got, expected, "case: {name}");
    }
}
