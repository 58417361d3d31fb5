//! The steps of a database kind's act, written once: those DBInstance and DBCluster both take (the
//! finalizer, Secrets, a modify, tags, restores, maintenance, blue/green calls), and a kind's own
//! ([`Step::Own`]). [`act`] runs the shared ones, over [`DatabaseCalls`]: the three calls whose RDS
//! operation is the kind's own (ModifyDBInstance or ModifyDBCluster, and the two restores). The kind
//! runs its own steps, and says which steps change its RDS resource.

use std::collections::BTreeMap;
use std::future::Future;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;
use secrecy::SecretString;
use tracing::info;

use crate::aws_error::AwsError;
use crate::context::Context;
use crate::database::blue_green::Call;
use crate::database::secret::SecretStep;
use crate::error::Error;
use crate::locations::Location;
use crate::maintenance::ApplyStep;
use crate::managed::{Kind, apiserver};
use crate::rds::Rds;
use crate::sensitive::Sensitive;

/// One thing a database kind's act step does: one RDS call or one Kubernetes write, each
/// idempotent. `Spec` and `Modification` are the kind's; `Own` its own steps.
#[derive(Clone, Debug, PartialEq)]
pub enum Step<Spec, Modification, Own> {
    /// Add the cleanup finalizer.
    AddFinalizer,
    /// Write the generated password Secret or the connection Secret, or set a Secret's owner.
    Secret(SecretStep),
    /// The kind's modify call, carrying exactly these fields (and the password when it is sent).
    Modify {
        identifier: String,
        modification: Box<Modification>,
        password: Option<Sensitive>,
    },
    /// AddTagsToResource.
    AddTags {
        identifier: String,
        arn: String,
        tags: BTreeMap<String, String>,
    },
    /// RemoveTagsFromResource.
    RemoveTags {
        identifier: String,
        arn: String,
        keys: Vec<String>,
    },
    /// The restore from a snapshot, with the spec's settings and our tags.
    Restore {
        identifier: String,
        snapshot: String,
        spec: Box<Spec>,
        tags: BTreeMap<String, String>,
    },
    /// The restore of `source` at `time` (None: the latest restorable time), with the spec's
    /// settings and our tags.
    RestoreToPointInTime {
        identifier: String,
        source: String,
        time: Option<String>,
        spec: Box<Spec>,
        tags: BTreeMap<String, String>,
    },
    /// ApplyPendingMaintenanceAction of one action of our resource (`arn`), `immediate` or
    /// `next-maintenance` (`maintenance::decide`).
    ApplyMaintenance(ApplyStep),
    /// A call of our resource's blue/green deployment (its creation, switchover or deletion).
    BlueGreen { identifier: String, call: Call },
    /// Remove an annotation that has done its work: the one that approved a switchover (so it
    /// approves no later one), or an activation override that has ended.
    ClearAnnotation(&'static str),
    /// Have RDS rotate the master password it manages (RotateMasterUserPassword), at once.
    RotateManagedPassword { identifier: String },
    /// Set the rotation rules of the secret RDS manages (Secrets Manager RotateSecret, without a
    /// rotation now).
    SetSecretRotation {
        secret_arn: String,
        rotation: crate::database::parts::SecretRotation,
    },
    /// AddRoleToDBInstance or AddRoleToDBCluster, or the removal (`rules::roles`).
    Role {
        identifier: String,
        call: crate::database::rules::roles::RoleCall,
    },
    /// Keep an owned Secret, without its owner reference (the database is retained).
    OrphanSecret { name: String },
    /// Put these CloudWatch alarms (with the object's ownership tags) and delete those
    /// (`database::alarms`).
    Alarms {
        changes: crate::database::alarms::AlarmChanges,
        tags: BTreeMap<String, String>,
    },
    /// Remove the cleanup finalizer.
    RemoveFinalizer,
    /// A step of the kind's own, which the kind runs.
    Own(Own),
}

/// What a kind tells the shared steps of its own: their names, and the names of its modify and
/// restore steps, for logs and table tests.
pub trait OwnStep {
    const MODIFY: &'static str;
    const RESTORE: &'static str;
    fn name(&self) -> &'static str;
}

impl<Spec, Modification, Own: OwnStep> Step<Spec, Modification, Own> {
    /// Stable name for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Step::AddFinalizer => "AddFinalizer",
            Step::Secret(secret) => secret.label(),
            Step::Modify { .. } => Own::MODIFY,
            Step::AddTags { .. } => "AddTags",
            Step::RemoveTags { .. } => "RemoveTags",
            Step::Restore { .. } => Own::RESTORE,
            Step::RestoreToPointInTime { .. } => "RestoreToPointInTime",
            Step::ApplyMaintenance(_) => "ApplyMaintenance",
            Step::BlueGreen { call, .. } => call.name(),
            Step::ClearAnnotation(_) => "ClearAnnotation",
            Step::RotateManagedPassword { .. } => "RotateManagedPassword",
            Step::SetSecretRotation { .. } => "SetSecretRotation",
            Step::Role { call, .. } => match call {
                crate::database::rules::roles::RoleCall::Add { .. } => "AddRole",
                crate::database::rules::roles::RoleCall::Remove { .. } => "RemoveRole",
            },
            Step::OrphanSecret { .. } => "OrphanSecret",
            Step::Alarms { .. } => "Alarms",
            Step::RemoveFinalizer => "RemoveFinalizer",
            Step::Own(own) => own.name(),
        }
    }
}

/// The calls of a database kind that the shared steps make: its modify and its restore, each with
/// what RDS answered when the kind keeps it (the instance that a DBInstance's status is amended
/// from at once).
pub trait DatabaseCalls {
    type Spec: Sync;
    type Modification: Sync;
    type Answer: Send;
    /// What the resource is called in logs and in ApplyPendingMaintenanceAction's ARN: `db` or
    /// `cluster`.
    const RESOURCE: &'static str;

    fn modify(
        rds: &Rds,
        call: Modify<'_, Self::Modification>,
    ) -> impl Future<Output = Result<Option<Self::Answer>, AwsError>> + Send;

    fn restore(
        rds: &Rds,
        call: Restore<'_, Self::Spec>,
    ) -> impl Future<Output = Result<Option<Self::Answer>, AwsError>> + Send;
}

/// A modify call: exactly these fields, and the password when it is sent.
pub struct Modify<'a, Modification> {
    pub identifier: &'a str,
    pub modification: &'a Modification,
    pub password: Option<&'a SecretString>,
}

/// A restore call, with the spec's settings RDS takes at restore time and our tags.
pub struct Restore<'a, Spec> {
    pub identifier: &'a str,
    pub from: RestorePoint<'a>,
    pub spec: &'a Spec,
    pub tags: &'a BTreeMap<String, String>,
}

/// What a restore starts from.
#[derive(Clone, Copy, Debug)]
pub enum RestorePoint<'a> {
    /// A snapshot of the kind (a DB snapshot or a DB cluster snapshot).
    Snapshot(&'a str),
    /// `source` at `time` (RFC 3339; None: its latest restorable time).
    PointInTime {
        source: &'a str,
        time: Option<&'a str>,
    },
}

/// Runs one shared step of `object` (a kind's own step is the kind's to run: nothing here); RDS's
/// answer when the kind keeps one.
pub async fn act<K, O>(
    ctx: &Context,
    at: &Location,
    object: &K,
    step: &Step<K::Spec, K::Modification, O>,
) -> Result<Option<K::Answer>, Error>
where
    K: Kind + DatabaseCalls,
    O: Sync,
{
    let secrets = || -> Result<Api<Secret>, Error> {
        let namespace = (object.namespace()).ok_or(Error::MissingObjectKey("namespace"))?;
        Ok(Api::namespaced(ctx.client.clone(), &namespace))
    };
    match step {
        Step::AddFinalizer => apiserver::set_finalizer(ctx, object, true).await?,
        Step::RemoveFinalizer => apiserver::set_finalizer(ctx, object, false).await?,
        Step::Secret(secret) => crate::database::secret::act(&secrets()?, object, secret).await?,
        Step::OrphanSecret { name } => crate::secrets::orphan(&secrets()?, name).await?,
        Step::ClearAnnotation(key) => apiserver::remove_annotation(ctx, object, key).await?,
        Step::AddTags { arn, tags, .. } => at.rds.add_tags(arn, tags).await?,
        Step::RemoveTags { arn, keys, .. } => at.rds.remove_tags(arn, keys).await?,
        Step::ApplyMaintenance(m) => crate::maintenance::aws::apply(at, K::RESOURCE, m).await?,
        Step::BlueGreen { identifier, call } => {
            crate::database::blue_green::aws::act(&at.rds, identifier, call).await?
        }
        Step::RotateManagedPassword { identifier } => {
            at.rds
                .rotate_master_password(K::RESOURCE, identifier)
                .await?
        }
        Step::SetSecretRotation {
            secret_arn,
            rotation: r,
        } => {
            let rules = (
                r.schedule_expression.as_deref(),
                r.automatically_after_days,
                r.duration.as_deref(),
            );
            at.rds.set_secret_rotation(secret_arn, rules).await?
        }
        Step::Role { identifier, call } => role(at, K::RESOURCE, identifier, call).await?,
        Step::Alarms { changes, tags } => alarms(at, changes, tags).await?,
        Step::Own(_) => {}
        Step::Modify { .. } | Step::Restore { .. } | Step::RestoreToPointInTime { .. } => {
            return Ok(database_call::<K, O>(&at.rds, step).await?);
        }
    }
    Ok(None)
}

/// The alarms' puts and deletions; the observer's listing holds them at once.
async fn alarms(
    at: &Location,
    changes: &crate::database::alarms::AlarmChanges,
    tags: &BTreeMap<String, String>,
) -> Result<(), AwsError> {
    for alarm in &changes.put {
        at.rds.put_alarm(alarm, tags).await?;
        at.observer.alarms_sent(std::slice::from_ref(alarm), &[]);
        info!(alarm = alarm.name, "put CloudWatch alarm");
    }
    if !changes.delete.is_empty() {
        at.rds.delete_alarms(&changes.delete).await?;
        at.observer.alarms_sent(&[], &changes.delete);
        info!(alarms = ?changes.delete, "deleted CloudWatch alarms");
    }
    Ok(())
}

/// A role's association or removal.
async fn role(
    at: &Location,
    resource: &str,
    identifier: &str,
    call: &crate::database::rules::roles::RoleCall,
) -> Result<(), AwsError> {
    use crate::database::rules::roles::RoleCall;
    match call {
        RoleCall::Add {
            role_arn,
            feature_name,
        } => {
            let feature = feature_name.as_deref();
            at.rds
                .add_role(resource, identifier, role_arn, feature)
                .await?;
            info!(identifier, role_arn, feature, "associated IAM role");
        }
        RoleCall::Remove {
            role_arn,
            feature_name,
        } => {
            let feature = feature_name.as_deref();
            (at.rds.remove_role(resource, identifier, role_arn, feature)).await?;
            info!(identifier, role_arn, feature, "removed IAM role");
        }
    }
    Ok(())
}

/// The kind's modify and restores.
async fn database_call<K: DatabaseCalls, O>(
    rds: &Rds,
    step: &Step<K::Spec, K::Modification, O>,
) -> Result<Option<K::Answer>, AwsError> {
    let resource = K::RESOURCE;
    let (identifier, spec, tags, from) = match step {
        Step::Modify {
            identifier,
            modification,
            password,
        } => {
            let password = password.as_ref().map(|p| &p.0);
            let modification = modification.as_ref();
            let call = Modify {
                identifier,
                modification,
                password,
            };
            let answer = K::modify(rds, call).await?;
            info!(identifier, resource, "sent changes to RDS");
            return Ok(answer);
        }
        Step::Restore {
            identifier,
            snapshot,
            spec,
            tags,
        } => (identifier, spec, tags, RestorePoint::Snapshot(snapshot)),
        Step::RestoreToPointInTime {
            identifier,
            source,
            time,
            spec,
            tags,
        } => {
            let time = time.as_deref();
            (
                identifier,
                spec,
                tags,
                RestorePoint::PointInTime { source, time },
            )
        }
        _ => return Ok(None),
    };
    let spec = spec.as_ref();
    let call = Restore {
        identifier,
        from,
        spec,
        tags,
    };
    let answer = K::restore(rds, call).await?;
    info!(identifier, resource, ?from, "restoring");
    Ok(answer)
}
