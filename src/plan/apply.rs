//! Rules for a DBInstance that is not being deleted: whose instance the identifier names (create,
//! adopt our own, refuse a foreign one, out-of-band deletion in `absence.rs`, our own in
//! `sync.rs`), and the password every branch needs.

use kube::runtime::events::EventType;

use crate::crd::{DBInstanceStatus, DriftRecord, FieldDrift, OWNER_NAME_TAG};
use crate::observed::ObservedInstance;

use super::spec::{self, owned_by};
use super::status::{observed_status, refuse};
use super::types::{
    ConditionPlan, Facts, PasswordFacts, Plan, Requeue, Sensitive, StatusPlan, Step,
};
use super::{absence, sync};

/// Whose instance the identifier names, and so which branch of the rules applies.
#[derive(Clone, Debug, PartialEq)]
pub enum Ownership<'a> {
    /// No instance with the identifier, and none was ever observed for this DBInstance: create it.
    Create,
    /// Our instance was observed before and is gone: deleted (or renamed) outside the operator.
    Gone,
    /// An instance with the identifier exists but is not ours: never touch it.
    Foreign { owner: Option<String> },
    /// Our instance: report what RDS says and put right what differs.
    Ours(&'a ObservedInstance),
}

/// `existed` says an instance was observed for this DBInstance before (its ARN is in status).
pub fn ownership<'a>(
    uid: &str,
    observed: Option<&'a ObservedInstance>,
    existed: bool,
) -> Ownership<'a> {
    match observed {
        None if existed => Ownership::Gone,
        None => Ownership::Create,
        Some(o) if owned_by(o, uid) => Ownership::Ours(o),
        Some(o) => Ownership::Foreign {
            owner: o.tags.get(OWNER_NAME_TAG).cloned(),
        },
    }
}

/// The plan for a DBInstance that is not being deleted.
pub fn plan(f: &Facts) -> Plan {
    let db = &f.db;
    let valid = spec::validate(db).and_then(|()| spec::validate_against(db, &f.peers));
    if let Err(message) = valid {
        let plan = Plan::idle(Requeue::AwaitChange);
        return refuse(plan, f, "InvalidSpec", &message, Some("InvalidSpec"));
    }
    let mut plan = Plan::idle(Requeue::After(f.intervals.busy));
    if !spec::has_finalizer(db) {
        plan.step(Step::AddFinalizer);
    }
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    let identifier = db.identifier();
    let existed = db.status.as_ref().is_some_and(|s| s.arn.is_some());
    match ownership(uid, f.observed.as_ref(), existed) {
        Ownership::Create => create(f, plan, Creation::New),
        Ownership::Gone => absence::plan(f, plan),
        Ownership::Foreign { owner } => {
            plan.requeue = Requeue::After(f.intervals.settled);
            // Who owns it is for the operator's log, not for every tenant who can read status.
            plan.log = Some(format!(
                "RDS instance {identifier} is not this DBInstance's: {}",
                owner
                    .as_deref()
                    .unwrap_or("it has no rds-operator ownership tag")
            ));
            let message = format!(
                "an RDS instance named {identifier} already exists and is not managed by this DBInstance; \
                 choose another dbInstanceIdentifier"
            );
            refuse(plan, f, "IdentifierInUse", &message, None)
        }
        Ownership::Ours(observed) => sync::plan(f, plan, observed),
    }
}

/// Why the plan cannot use the master password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PasswordProblem {
    /// The referenced Secret or key is missing: it may appear, so look again with backoff.
    Unavailable(String),
    /// The password is one RDS would refuse: wait for the Secret to change.
    Invalid(String),
    /// A Secret named like the generated one exists and is not this DBInstance's: never use or
    /// overwrite it.
    Conflict(String),
}

/// The password to send or write; plans the write of a newly generated one.
pub(super) fn password(f: &Facts, plan: &mut Plan) -> Result<Option<Sensitive>, PasswordProblem> {
    match &f.password {
        PasswordFacts::NotRead => Ok(None),
        PasswordFacts::Referenced(Err(message)) => {
            Err(PasswordProblem::Unavailable(message.clone()))
        }
        PasswordFacts::Referenced(Ok(p)) => {
            crate::connection::validate_password(&f.db.spec.engine, p.expose())
                .map_err(PasswordProblem::Invalid)?;
            Ok(Some(p.clone()))
        }
        PasswordFacts::Managed(value) => Ok(value.clone()),
        PasswordFacts::Generated {
            secret_exists: true,
            controlled: false,
            ..
        } => Err(PasswordProblem::Conflict(format!(
            "a Secret named {} exists and is not this DBInstance's; the operator neither uses nor \
             overwrites it: delete or rename it, or set masterUserPassword",
            spec::generated_secret_name(&f.db)
        ))),
        PasswordFacts::Generated {
            existing: Some(p), ..
        } => Ok(Some(p.clone())),
        PasswordFacts::Generated {
            existing: None,
            secret_exists,
            candidate,
            ..
        } => {
            plan.step(Step::WritePasswordSecret {
                name: spec::generated_secret_name(&f.db),
                password: candidate.clone(),
                replace: *secret_exists,
            });
            Ok(Some(candidate.clone()))
        }
    }
}

/// The keyed hash of a password the operator sends itself (None for RDS-managed ones).
pub(super) fn hash_of(f: &Facts, password: Option<&Sensitive>) -> Option<String> {
    let uid = f.db.metadata.uid.as_deref().unwrap_or_default();
    password
        .filter(|_| spec::operator_sends_password(&f.db.spec))
        .map(|p| spec::password_hash(&f.hash_key, uid, p.expose()))
}

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
    fields.master_user_password_hash = hash_of(f, password);
    fields.last_drift = f.db.status.as_ref().and_then(|s| s.last_drift.clone());
    fields.applied_tag_keys = spec::tag_keys(&f.db.spec);
    fields
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
    let password = match password(f, &mut plan) {
        Ok(p) => p,
        Err(problem) => return password_refused(plan, f, problem),
    };
    let identifier = db.identifier();
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    let namespace = db.metadata.namespace.as_deref().unwrap_or_default();
    let name = db.metadata.name.as_deref().unwrap_or_default();
    let tags = spec::creation_tags(&db.spec, uid, namespace, name);
    let mut fields = creating_fields(f, password.as_ref());
    match why {
        Creation::Restore { snapshot, note } => {
            // The restored instance has the snapshot's password: keep the hash of the one last
            // sent, so a password changed since is sent again.
            fields.master_user_password_hash = (db.status.as_ref())
                .and_then(|s| s.master_user_password_hash.clone())
                .or(fields.master_user_password_hash);
            fields.last_drift = Some(deleted_record(
                f,
                "Restored",
                format!("restored from snapshot {snapshot}"),
            ));
            plan.step(Step::RestoreInstance {
                identifier: identifier.clone(),
                snapshot,
                spec: Box::new(db.spec.clone()),
                tags,
            });
            plan.event(EventType::Warning, "Restoring", "Create", note);
        }
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
    plan.status = Some(StatusPlan {
        fields,
        ready: None,
        synced: ConditionPlan::new(
            true,
            "Synced",
            "the RDS instance is being created from the spec",
        ),
    });
    plan
}

fn create_step(
    f: &Facts,
    password: Option<Sensitive>,
    tags: std::collections::BTreeMap<String, String>,
) -> Step {
    Step::CreateInstance {
        identifier: f.db.identifier(),
        spec: Box::new(f.db.spec.clone()),
        password,
        tags,
    }
}

pub(super) fn password_refused(plan: Plan, f: &Facts, problem: PasswordProblem) -> Plan {
    let (reason, message, requeue, label) = match problem {
        PasswordProblem::Unavailable(m) => (
            "PasswordSecretUnavailable",
            m,
            Requeue::Backoff,
            "PasswordSecret",
        ),
        PasswordProblem::Invalid(m) => ("InvalidSpec", m, Requeue::AwaitChange, "InvalidSpec"),
        PasswordProblem::Conflict(m) => {
            let drift = Requeue::After(spec::drift_interval(&f.db.spec, &f.intervals));
            ("PasswordSecretConflict", m, drift, "SecretConflict")
        }
    };
    let mut plan = refuse(plan, f, reason, &message, Some(label));
    plan.requeue = requeue;
    plan
}
