//! Creating the instance: new, restored from spec.restoreFrom, or in place of ours after an
//! out-of-band deletion (from its own snapshot, or empty when the spec opts in).

use kube::runtime::events::EventType;

use crate::dbinstance::{
    DBInstance, DBInstanceStatus, DriftRecord, FieldDrift, RestoreFrom, RestoreStatus,
};
use crate::rds_state::ObservedInstance;

use super::password::{RESTORED_PASSWORD, hash_of, password, password_refused};
use super::status::{observed_plan, observed_status};
use super::tenancy;
use super::types::{Facts, InstanceStep, Plan, Sensitive, Step};
use super::{replica, spec};

/// Why an instance is created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Creation {
    /// The first time.
    New,
    /// Ours was deleted outside the operator, no snapshot exists, and the spec opts in to an empty
    /// instance in its place.
    EmptyInPlaceOfDeleted,
    /// Ours was deleted outside the operator: restored from this snapshot.
    Restore { snapshot: String, note: String },
    /// spec.restoreFrom: from a snapshot or a point in time.
    FromSpec(RestoreFrom),
    /// spec.replicaOf: a read replica of this source (identifier or ARN), the first time or in
    /// place of one deleted outside the operator (its data is its source's: nothing is lost).
    Replica { source: String },
}

impl Creation {
    /// From the spec: spec.restoreFrom, or a new instance.
    pub fn from_spec(db: &DBInstance) -> Creation {
        match &db.spec.restore_from {
            Some(r) => Creation::FromSpec(r.clone()),
            None => Creation::New,
        }
    }
}

/// A read replica is made only of a source this namespace may copy, once it is Ready.
pub(super) fn create_replica(f: &Facts, plan: Plan) -> Plan {
    match replica::source(f) {
        // RDS makes a replica only of a source with automated backups on; it says so with
        // InvalidDBInstanceState, a code that otherwise means busy: decided here, from the
        // source as RDS reports it, with no call, and looked at again (the source may change).
        Ok(s) if s.backup_retention == Some(0) => {
            let why = format!(
                "the replica's source {} has automated backups off (backupRetentionPeriod 0): \
                 RDS makes a read replica only of an instance with backups on; set its \
                 backupRetentionPeriod above 0",
                s.source
            );
            let mut plan = plan;
            plan.requeue =
                super::types::Requeue::After(spec::drift_interval(&f.db.spec, &f.intervals));
            super::status::refuse(plan, f, "SourceBackupsOff", &why, None)
        }
        Ok(s) => {
            let source = s.source.clone();
            create(f, plan, Creation::Replica { source })
        }
        Err((why, not_owned)) => replica::refused(f, plan, why, not_owned),
    }
}

/// Why the spec's class cannot be made: RDS lists options for the engine (and version) in the
/// location, and none of the spec's class (DescribeOrderableDBInstanceOptions); when that is not
/// known, CreateDBInstance answers for the class.
pub(super) fn class_not_offered(f: &Facts) -> Option<String> {
    if f.class_offered != Some(false) {
        return None;
    }
    let spec = &f.db.spec;
    let version = (super::class_read(&f.db, None).and_then(|c| c.version))
        .map_or(String::new(), |v| format!(" {v}"));
    Some(format!(
        "dbInstanceClass {} is not offered for {}{version} in {} (DescribeOrderableDBInstanceOptions \
         lists no option of it): choose one it lists, `aws rds describe-orderable-db-instance-options \
         --engine {} --query 'OrderableDBInstanceOptions[].DBInstanceClass'`",
        spec.db_instance_class, spec.engine, f.placement.region, spec.engine
    ))
}

/// The source of spec.restoreFrom, in words.
pub fn restore_source(r: &RestoreFrom) -> String {
    if let Some(s3) = &r.s3 {
        return s3.location();
    }
    match (&r.db_snapshot_identifier, &r.source_db_instance_identifier) {
        (Some(snapshot), _) => format!("snapshot {snapshot}"),
        (None, Some(source)) => match &r.restore_time {
            Some(t) => format!("instance {source} at {t}"),
            None => format!("instance {source} at its latest restorable time"),
        },
        (None, None) => match &r.db_snapshot_ref {
            Some(r) => format!("DBSnapshot {}", r.name),
            None => "nothing".into(),
        },
    }
}

/// The status fields of an instance being created or restored.
fn creating_fields(f: &Facts, password: Option<&Sensitive>) -> DBInstanceStatus {
    let identifier = f.db.identifier();
    let creating = ObservedInstance {
        identifier: identifier.clone(),
        status: "creating".into(),
        ..Default::default()
    };
    let mut fields = observed_status(&identifier, &creating);
    fields.common.master_user_password_hash = hash_of(f, password);
    fields.last_drift = f.db.status.as_ref().and_then(|s| s.last_drift.clone());
    fields.common.applied_tag_keys = spec::tag_keys(&f.db.spec);
    fields.common.owned = Some(true);
    fields
}

/// The spec an instance is created or restored with: unset, copyTagsToSnapshot is true, so its
/// snapshots carry the ownership tags that make them this namespace's to restore.
fn creation_spec(db: &DBInstance) -> Box<crate::dbinstance::DBInstanceSpec> {
    let mut spec = db.spec.clone();
    // A member's snapshots are its cluster's.
    if !spec::is_member(db) {
        spec.backups.copy_tags_to_snapshot.get_or_insert(true);
    }
    Box::new(spec)
}

fn deleted_record(f: &Facts, action: &str, desired: String) -> DriftRecord {
    DriftRecord {
        time: f.now.clone(),
        action: action.into(),
        fields: vec![FieldDrift {
            field: "dbInstanceIdentifier".into(),
            observed: "(deleted outside the operator)".into(),
            desired,
        }],
    }
}

/// Creates (or restores) the instance.
pub(super) fn create(f: &Facts, mut plan: Plan, why: Creation) -> Plan {
    let db = &f.db;
    if let Some(message) = class_not_offered(f) {
        plan.requeue = super::types::Requeue::AwaitChange;
        return super::status::refuse(plan, f, "InvalidSpec", &message, Some("InvalidSpec"));
    }
    let password = match password(f, &mut plan) {
        Ok(p) => p,
        Err(problem) => return password_refused(plan, f, problem),
    };
    let identifier = db.identifier();
    let tags = spec::tags_of(db);
    let mut fields = creating_fields(f, password.as_ref());
    match why {
        Creation::Replica { source } => replica_creation(f, &mut plan, &mut fields, source, tags),
        Creation::Restore { snapshot, note } => {
            // The restored instance has the snapshot's password: keep the hash of the one last
            // sent, so a password changed since is sent again.
            fields.common.master_user_password_hash = (db.status.as_ref())
                .and_then(|s| s.common.master_user_password_hash.clone())
                .or(fields.common.master_user_password_hash);
            fields.last_drift = Some(deleted_record(
                f,
                "Restored",
                format!("restored from snapshot {snapshot}"),
            ));
            plan.step(Step::Restore {
                identifier: identifier.clone(),
                snapshot,
                spec: creation_spec(db),
                tags,
            });
            plan.event(EventType::Warning, "Restoring", "Create", note);
        }
        Creation::FromSpec(r) if r.s3.is_some() => {
            from_s3(f, &mut plan, &mut fields, (r, password), tags)
        }
        Creation::FromSpec(r) => from_spec(f, &mut plan, &mut fields, r, tags),
        Creation::EmptyInPlaceOfDeleted => {
            fields.last_drift = Some(deleted_record(f, "Recreated", identifier.clone()));
            plan.step(create_step(f, password, tags));
            plan.event(EventType::Warning, "Recreating", "Create", format!(
                "RDS instance {identifier} was deleted outside the operator and no snapshot of it exists; \
                 creating an empty instance (outOfBandDeletionPolicy RestoreOrCreateEmpty)"
            ));
        }
        Creation::New => {
            plan.step(create_step(f, password, tags));
            let version = db
                .spec
                .engine_version
                .as_deref()
                .unwrap_or("default version");
            let note = format!(
                "creating RDS instance {identifier} ({} {version}, {})",
                db.spec.engine, db.spec.db_instance_class
            );
            plan.event(EventType::Normal, "Creating", "Create", note);
        }
    }
    if let Some(note) = tenancy::password_advisory(db) {
        plan.event(
            EventType::Warning,
            "PasswordOnlyInNamespace",
            "Create",
            note,
        );
    }
    let message = "the RDS instance is being created from the spec".to_owned();
    plan.status = Some(observed_plan(fields, true, "Synced", message));
    plan
}

/// spec.replicaOf: CreateDBInstanceReadReplica, the first time or in place of one deleted outside
/// the operator. Its password is its source's: never sent, so no hash to follow.
fn replica_creation(
    f: &Facts,
    plan: &mut Plan,
    fields: &mut DBInstanceStatus,
    source: String,
    tags: std::collections::BTreeMap<String, String>,
) {
    let identifier = f.db.identifier();
    fields.common.master_user_password_hash = None;
    let recreated = spec::was_owned(&f.db);
    if recreated {
        fields.last_drift = Some(deleted_record(f, "Recreated", identifier.clone()));
    }
    plan.step(Step::Own(InstanceStep::CreateReplica {
        identifier: identifier.clone(),
        source: source.clone(),
        spec: creation_spec(&f.db),
        tags,
    }));
    let (type_, note) = match recreated {
        true => (
            EventType::Warning,
            format!(
                "read replica {identifier} was deleted outside the operator; creating it again from {source}"
            ),
        ),
        false => (
            EventType::Normal,
            format!("creating read replica {identifier} of {source}"),
        ),
    };
    plan.event(type_, "Creating", "Create", note);
}

/// Status says what the instance is restored from, settings not yet applied; the source, in
/// words.
fn restoring(fields: &mut DBInstanceStatus, r: &RestoreFrom) -> String {
    let source = restore_source(r);
    fields.restore = Some(RestoreStatus {
        source: source.clone(),
        settings_applied: false,
    });
    source
}

/// spec.restoreFrom: RDS takes the source's master password, settings and tags; the spec's are
/// sent by one ModifyDBInstance once the instance is available.
fn from_spec(
    f: &Facts,
    plan: &mut Plan,
    fields: &mut DBInstanceStatus,
    r: RestoreFrom,
    tags: std::collections::BTreeMap<String, String>,
) {
    let identifier = f.db.identifier();
    let source = restoring(fields, &r);
    // RDS has the source's password: a hash that matches no password makes the first sync send
    // the spec's, once.
    if fields.common.master_user_password_hash.is_some() {
        fields.common.master_user_password_hash = Some(RESTORED_PASSWORD.to_owned());
    }
    let spec = creation_spec(&f.db);
    plan.step(
        match (r.db_snapshot_identifier, r.source_db_instance_identifier) {
            (Some(snapshot), _) => Step::Restore {
                identifier: identifier.clone(),
                snapshot,
                spec,
                tags,
            },
            (None, source) => Step::RestoreToPointInTime {
                identifier: identifier.clone(),
                source: source.unwrap_or_default(),
                time: r.restore_time,
                spec,
                tags,
            },
        },
    );
    let note = format!("restoring RDS instance {identifier} from {source}");
    plan.event(EventType::Normal, "Restoring", "Create", note);
}

/// spec.restoreFrom.s3: RestoreDBInstanceFromS3 makes the instance as CreateDBInstance would,
/// with the spec's master user and password, and loads the backup into it; what the call does not
/// carry is sent by one ModifyDBInstance once it is available.
fn from_s3(
    f: &Facts,
    plan: &mut Plan,
    fields: &mut DBInstanceStatus,
    (r, password): (RestoreFrom, Option<Sensitive>),
    tags: std::collections::BTreeMap<String, String>,
) {
    let identifier = f.db.identifier();
    let source = restoring(fields, &r);
    plan.step(Step::Own(InstanceStep::RestoreFromS3 {
        identifier: identifier.clone(),
        s3: r.s3.unwrap_or_default(),
        spec: creation_spec(&f.db),
        password,
        tags,
    }));
    let note = format!("restoring RDS instance {identifier} from the backup in {source}");
    plan.event(EventType::Normal, "Restoring", "Create", note);
}

fn create_step(
    f: &Facts,
    password: Option<Sensitive>,
    tags: std::collections::BTreeMap<String, String>,
) -> Step {
    Step::Own(InstanceStep::CreateInstance {
        identifier: f.db.identifier(),
        spec: creation_spec(&f.db),
        password,
        tags,
    })
}
