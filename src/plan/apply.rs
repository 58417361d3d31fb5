//! Rules for a DBInstance that is not being deleted: whose instance it is (create, adopt our own,
//! refuse a foreign one, out-of-band deletion), and for our own instance what to put right (drift,
//! tags, password rotation, the connection Secret) and what to report.

use kube::runtime::events::EventType;

use crate::connection::{self, ConnectionInfo};
use crate::crd::{DriftPolicy, DriftRecord, FINALIZER, FieldDrift, OWNER_NAME_TAG};
use crate::drift::{self, Comparison};
use crate::observed::{ObservedInstance, is_transitional};

use super::spec::{self, owned_by};
use super::status::{describe_diffs, drift_record, observed_status, readiness, refuse};
use super::types::{
    ConditionPlan, Facts, PasswordFacts, Plan, Requeue, Sensitive, StatusPlan, Step,
};

/// Whose instance the identifier names, and so which branch of the rules applies.
#[derive(Clone, Debug, PartialEq)]
pub enum Ownership<'a> {
    /// No instance with the identifier: create it.
    Create,
    /// Our instance was deleted outside the operator: create it again from the spec.
    Recreate,
    /// Our instance was deleted outside the operator and driftPolicy is Report: only say so.
    Missing,
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
    policy: DriftPolicy,
) -> Ownership<'a> {
    match observed {
        None if existed && policy == DriftPolicy::Report => Ownership::Missing,
        None if existed => Ownership::Recreate,
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
    if let Err(message) = spec::validate(db) {
        let plan = Plan::idle(Requeue::AwaitChange);
        return refuse(plan, f, "InvalidSpec", &message, Some("InvalidSpec"));
    }
    let mut plan = Plan::idle(Requeue::After(f.intervals.busy));
    if !db
        .metadata
        .finalizers
        .iter()
        .flatten()
        .any(|x| x == FINALIZER)
    {
        plan.step(Step::AddFinalizer);
    }
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    let identifier = db.identifier();
    let existed = db.status.as_ref().is_some_and(|s| s.arn.is_some());
    match ownership(uid, f.observed.as_ref(), existed, db.spec.drift_policy) {
        Ownership::Create => create(f, plan, false),
        Ownership::Recreate => create(f, plan, true),
        Ownership::Missing => {
            plan.requeue = Requeue::After(spec::drift_interval(&db.spec, &f.intervals));
            let message = format!(
                "RDS instance {identifier} was deleted outside the operator; driftPolicy is Report, so it is not recreated"
            );
            refuse(plan, f, "DeletedOutOfBand", &message, None)
        }
        Ownership::Foreign { owner } => {
            plan.requeue = Requeue::After(f.intervals.settled);
            let message = format!(
                "an RDS instance named {identifier} already exists and is not managed by this DBInstance ({}); \
                 choose another dbInstanceIdentifier, or delete or re-tag that instance",
                match owner {
                    Some(o) => format!("it belongs to {o}"),
                    None => "it has no rds-operator ownership tag".to_owned(),
                }
            );
            refuse(plan, f, "IdentifierInUse", &message, None)
        }
        Ownership::Ours(observed) => sync(f, plan, observed),
    }
}

/// The password to send or write; plans the write of a newly generated one. Err: why the
/// referenced password cannot be had.
fn password(f: &Facts, plan: &mut Plan) -> Result<Option<Sensitive>, String> {
    match &f.password {
        PasswordFacts::NotRead => Ok(None),
        PasswordFacts::Referenced(result) => result.clone().map(Some),
        PasswordFacts::Managed(value) => Ok(value.clone()),
        PasswordFacts::Generated {
            existing: Some(p), ..
        } => Ok(Some(p.clone())),
        PasswordFacts::Generated {
            existing: None,
            secret_exists,
            candidate,
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

/// The hash of a password the operator sends itself (None for RDS-managed ones).
fn hash_of(f: &Facts, password: Option<&Sensitive>) -> Option<String> {
    let uid = f.db.metadata.uid.as_deref().unwrap_or_default();
    password
        .filter(|_| spec::operator_sends_password(&f.db.spec))
        .map(|p| spec::password_hash(uid, p.expose()))
}

fn create(f: &Facts, mut plan: Plan, recreate: bool) -> Plan {
    let db = &f.db;
    let password = match password(f, &mut plan) {
        Ok(p) => p,
        Err(m) => return password_unavailable(plan, f, &m),
    };
    let identifier = db.identifier();
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    let namespace = db.metadata.namespace.as_deref().unwrap_or_default();
    let name = db.metadata.name.as_deref().unwrap_or_default();
    plan.step(Step::CreateInstance {
        identifier: identifier.clone(),
        spec: Box::new(db.spec.clone()),
        password: password.clone(),
        tags: spec::creation_tags(&db.spec, uid, namespace, name),
    });
    let creating = ObservedInstance {
        identifier: identifier.clone(),
        status: "creating".into(),
        ..Default::default()
    };
    let mut fields = observed_status(&identifier, &creating);
    fields.master_user_password_hash = hash_of(f, password.as_ref());
    fields.last_drift = db.status.as_ref().and_then(|s| s.last_drift.clone());
    if recreate {
        fields.last_drift = Some(DriftRecord {
            time: f.now.clone(),
            action: "Recreated".into(),
            fields: vec![FieldDrift {
                field: "dbInstanceIdentifier".into(),
                observed: "(deleted outside the operator)".into(),
                desired: identifier.clone(),
            }],
        });
        plan.event(EventType::Warning, "Recreating", "Create", format!(
            "RDS instance {identifier} was deleted outside the operator; creating it again from the spec"
        ));
    } else {
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

fn password_unavailable(plan: Plan, f: &Facts, message: &str) -> Plan {
    let mut plan = refuse(
        plan,
        f,
        "PasswordSecretUnavailable",
        message,
        Some("PasswordSecret"),
    );
    plan.requeue = Requeue::Backoff;
    plan
}

/// Our instance exists: report it, and put right what differs from the spec.
fn sync(f: &Facts, mut plan: Plan, observed: &ObservedInstance) -> Plan {
    let db = &f.db;
    let previous = db.status.clone().unwrap_or_default();
    if previous.db_instance_status.as_deref() != Some(observed.status.as_str()) {
        let (ready, _, message) = readiness(&observed.status);
        if ready {
            plan.event(EventType::Normal, "Available", "Observe", message);
        } else if !is_transitional(&observed.status) {
            plan.event(EventType::Warning, "Failed", "Observe", message);
        }
    }
    let password = match password(f, &mut plan) {
        Ok(p) => p,
        Err(m) => return password_unavailable(plan, f, &m),
    };
    let hash = hash_of(f, password.as_ref());
    // No hash yet (an adopted instance): take the Secret's password as the one RDS has.
    let rotate =
        matches!((&hash, &previous.master_user_password_hash), (Some(h), Some(p)) if h != p);
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    let namespace = db.metadata.namespace.as_deref().unwrap_or_default();
    let name = db.metadata.name.as_deref().unwrap_or_default();
    let desired_tags = spec::creation_tags(&db.spec, uid, namespace, name);
    let comparison = drift::compare(&db.spec, observed, &desired_tags, rotate);

    let identifier = db.identifier();
    let mut fields = observed_status(&identifier, observed);
    fields.master_user_password_hash = previous.master_user_password_hash.clone().or(hash.clone());
    fields.last_drift = previous.last_drift.clone();
    fields.connection_secret = previous.connection_secret.clone();
    // The connection Secret follows what RDS holds: while a new password is still to be sent, it
    // keeps the one RDS has.
    if let Some(password) = password.as_ref().filter(|_| !rotate) {
        if let Err(message) = connection_secret(f, &mut plan, observed, password) {
            plan.requeue = Requeue::AwaitChange;
            return refuse(plan, f, "InvalidSpec", &message, Some("InvalidSpec"));
        }
        fields.connection_secret = db.spec.connection_secret.as_ref().map(|c| c.name.clone());
    }
    let sync = Sync {
        f,
        observed,
        comparison: &comparison,
        spec_changed: db.metadata.generation != previous.observed_generation,
    };
    if comparison.in_sync() {
        return sync.in_sync(plan, fields);
    }
    if db.spec.drift_policy == DriftPolicy::Report {
        return sync.report_only(plan, fields);
    }
    if observed.status != "available" {
        let message = format!(
            "RDS is {}; the change of {} waits until the instance is available",
            observed.status,
            comparison.field_list()
        );
        plan.status = Some(observed_plan(fields, false, "Waiting", message));
        return plan;
    }
    sync.correct(plan, fields, password, hash)
}

fn observed_plan(
    fields: crate::crd::DBInstanceStatus,
    ok: bool,
    reason: &str,
    message: String,
) -> StatusPlan {
    StatusPlan {
        fields,
        ready: None,
        synced: ConditionPlan::new(ok, reason, message),
    }
}

/// Plans the connection Secret's write when its content differs from what it should be (missing,
/// edited, endpoint or password changed). Err: a template cannot be rendered.
fn connection_secret(
    f: &Facts,
    plan: &mut Plan,
    observed: &ObservedInstance,
    password: &Sensitive,
) -> Result<(), String> {
    let db = &f.db;
    let Some(wanted) = &db.spec.connection_secret else {
        return Ok(());
    };
    let (Some(host), Some(port)) = (observed.address.as_deref(), observed.port) else {
        return Ok(());
    };
    let info = ConnectionInfo {
        host,
        port,
        username: (observed.master_username.as_deref())
            .or(db.spec.master_username.as_deref())
            .unwrap_or_default(),
        password: &password.0,
        dbname: (observed.db_name.as_deref())
            .or(db.spec.db_name.as_deref())
            .unwrap_or_default(),
        engine: &db.spec.engine,
    };
    let data = connection::render(&info, &wanted.extra_keys).map_err(|e| e.to_string())?;
    let data: std::collections::BTreeMap<String, Sensitive> =
        data.into_iter().map(|(k, v)| (k, Sensitive(v))).collect();
    let up_to_date = f.connection_secret.as_ref().is_some_and(|s| {
        let owned = (s.metadata.owner_references.iter().flatten())
            .any(|o| Some(&o.uid) == db.metadata.uid.as_ref());
        let values = s.data.as_ref();
        owned
            && data.iter().all(|(k, v)| {
                values
                    .and_then(|d| d.get(k))
                    .is_some_and(|b| b.0 == v.expose().as_bytes())
            })
    });
    if !up_to_date {
        plan.step(Step::WriteConnectionSecret {
            name: wanted.name.clone(),
            data,
        });
        let note = format!("wrote the connection details to Secret {}", wanted.name);
        plan.event(EventType::Normal, "ConnectionSecretWritten", "Update", note);
    }
    Ok(())
}

/// The rules for our instance once the comparison is made.
struct Sync<'a> {
    f: &'a Facts,
    observed: &'a ObservedInstance,
    comparison: &'a Comparison,
    /// The spec changed since the last status (a user's edit rather than drift).
    spec_changed: bool,
}

impl Sync<'_> {
    fn settled(&self) -> Requeue {
        Requeue::After(spec::settled_requeue(&self.f.db.spec, &self.f.intervals))
    }

    fn in_sync(&self, mut plan: Plan, fields: crate::crd::DBInstanceStatus) -> Plan {
        let refused = self.comparison.refused.join("; ");
        let pending = &self.observed.pending_modified_values;
        plan.status = Some(if !refused.is_empty() {
            if self.spec_changed {
                plan.event(
                    EventType::Warning,
                    "UnsupportedChange",
                    "Update",
                    refused.clone(),
                );
            }
            observed_plan(fields, false, "UnsupportedChange", refused)
        } else if !pending.is_empty() {
            let keys = pending.keys().cloned().collect::<Vec<_>>().join(", ");
            let message = format!("RDS holds changes to {keys} until they are applied");
            observed_plan(fields, false, "Pending", message)
        } else {
            let message = "the RDS instance matches the spec".to_owned();
            observed_plan(fields, true, "Synced", message)
        });
        if !is_transitional(&self.observed.status) {
            plan.requeue = self.settled();
        }
        plan
    }

    fn report_only(&self, mut plan: Plan, mut fields: crate::crd::DBInstanceStatus) -> Plan {
        let c = self.comparison;
        let previous = self
            .f
            .db
            .status
            .as_ref()
            .and_then(|s| s.last_drift.as_ref());
        let record = drift_record(previous, "Reported", &c.diffs, &self.f.now);
        if previous != Some(&record) {
            let note = format!(
                "RDS differs from the spec (driftPolicy Report, not corrected): {}",
                describe_diffs(&c.diffs)
            );
            plan.event(EventType::Warning, "DriftDetected", "Observe", note);
        }
        fields.last_drift = Some(record);
        let message = format!(
            "RDS differs from the spec in {}; driftPolicy is Report",
            c.field_list()
        );
        plan.status = Some(observed_plan(fields, false, "Drifted", message));
        plan.requeue = self.settled();
        plan
    }

    fn correct(
        &self,
        mut plan: Plan,
        mut fields: crate::crd::DBInstanceStatus,
        password: Option<Sensitive>,
        hash: Option<String>,
    ) -> Plan {
        let c = self.comparison;
        let identifier = self.f.db.identifier();
        let arn = self.observed.arn.clone().unwrap_or_default();
        if let Some(m) = &c.modification {
            plan.step(Step::ModifyInstance {
                identifier: identifier.clone(),
                modification: Box::new(m.clone()),
                password: password.filter(|_| m.rotate_password),
            });
            if m.rotate_password {
                fields.master_user_password_hash = hash;
                let note = "sent the new master password from the Secret to RDS".to_owned();
                plan.event(EventType::Normal, "PasswordRotated", "Update", note);
            }
        }
        if !c.tags_to_add.is_empty() {
            plan.step(Step::AddTags {
                identifier: identifier.clone(),
                arn: arn.clone(),
                tags: c.tags_to_add.clone(),
            });
        }
        if !c.tags_to_remove.is_empty() {
            plan.step(Step::RemoveTags {
                identifier,
                arn,
                keys: c.tags_to_remove.clone(),
            });
        }
        let changed: Vec<_> = (c.diffs.iter())
            .filter(|d| d.field != "masterUserPassword")
            .cloned()
            .collect();
        if !changed.is_empty() && self.spec_changed {
            let note = format!("applying the spec to RDS: {}", describe_diffs(&changed));
            plan.event(EventType::Normal, "Updating", "Update", note);
        } else if !changed.is_empty() {
            fields.last_drift = Some(drift_record(None, "Corrected", &changed, &self.f.now));
            plan.drift_corrected = changed.iter().map(|d| d.field).collect();
            let note = format!(
                "RDS was changed outside the operator; put back to the spec: {}",
                describe_diffs(&changed)
            );
            plan.event(EventType::Warning, "DriftCorrected", "Update", note);
        }
        let message = format!("sent {} to RDS", c.field_list());
        plan.status = Some(observed_plan(fields, false, "Updating", message));
        plan
    }
}
