//! Rules for read replicas (spec.replicaOf): what a replica inherits from its source and so never
//! sends, where it may be made from (the tenancy rule of restores: a replica is a copy of the
//! data), its promotion (replicaOf removed, or promote: true: one PromoteReadReplica, one-way),
//! and what RDS reports of the replication. A source with live replicas is not deleted
//! (`cleanup.rs`).

use kube::runtime::events::EventType;

use crate::database::spec::Security;
use crate::dbinstance::{
    DBInstance, DBInstanceSpec, DBInstanceStatus, ReplicaOf, ReplicationInfo, ReplicationStatus,
};
use crate::rds_state::ObservedInstance;

use super::spec;
use super::status::{observed_plan, refuse};
use super::tenancy;
pub use super::tenancy::ReplicaSource;
use super::types::{Facts, InstanceStep, PasswordRead, Plan, Requeue, Step};

/// Whether the spec wants a read replica: replicaOf, and no promotion asked.
pub fn wanted(db: &DBInstance) -> bool {
    db.spec.replica_of.is_some() && db.spec.promote != Some(true)
}

/// Whether RDS shows a replica the spec no longer wants: it is promoted when the spec says
/// promote: true, or once named its source (replicaOf, as status recorded) and no longer does.
pub fn promotes(db: &DBInstance, observed: &ObservedInstance) -> bool {
    let named = (db.status.as_ref().and_then(|s| s.replication.as_ref()))
        .is_some_and(|r| r.replica_of_spec == Some(true));
    observed.replica_source.is_some() && !wanted(db) && (db.spec.promote == Some(true) || named)
}

/// A replica's spec as the plan reads it: what it inherits from its source (master user and
/// password, database name, encryption) left out, so it is never sent or seen as drift; backups
/// only when the spec sets them.
pub fn view(spec: &DBInstanceSpec) -> DBInstanceSpec {
    DBInstanceSpec {
        master_username: None,
        password: Default::default(),
        db_name: None,
        security: Security {
            storage_encrypted: None,
            ..spec.security.clone()
        },
        character_set_name: None,
        ..spec.clone()
    }
}

/// How a replica learns the password its connection Secret carries: the source's. The Secret
/// masterUserPassword names, else the source DBInstance's (spec.replicaOf.name).
pub fn password_read(db: &DBInstance) -> PasswordRead {
    match (&db.spec.password.master_user_password, &db.spec.replica_of) {
        (Some(r), _) => PasswordRead::Referenced {
            name: r.name.clone(),
            key: r.key.clone(),
        },
        (
            None,
            Some(ReplicaOf {
                name: Some(name), ..
            }),
        ) => PasswordRead::Source { name: name.clone() },
        _ => PasswordRead::None,
    }
}

/// Where the source DBInstance's own password is (the read step asks this of the DBInstance
/// spec.replicaOf.name names): its Secret, or the one the operator generated for it.
pub fn source_password(source: &DBInstance) -> PasswordRead {
    match &source.spec.password.master_user_password {
        Some(r) => PasswordRead::Referenced {
            name: r.name.clone(),
            key: r.key.clone(),
        },
        None if source.spec.password.manage_master_user_password == Some(true) => {
            PasswordRead::Managed { secret_arn: None }
        }
        None => PasswordRead::Referenced {
            name: spec::generated_secret_name(source),
            key: crate::secrets::GENERATED_KEY.to_owned(),
        },
    }
}

/// Whether the source may be copied into this namespace: the rule of spec.restoreFrom (its own by
/// its tags, or granted); an unresolved source says why it cannot be used yet.
pub(super) fn source(f: &Facts) -> Result<&ReplicaSource, (String, bool)> {
    let namespace = f.db.metadata.namespace.as_deref().unwrap_or_default();
    match &f.replica_source {
        None => Err(("the replica's source is not read yet".into(), false)),
        Some(Err(why)) => Err((why.clone(), false)),
        Some(Ok(s)) if tenancy::may_restore(Some(&s.found), namespace, &f.grants) => Ok(s),
        Some(Ok(s)) => Err((
            format!(
                "replicaOf names instance {}, which is not found, or is neither this namespace's own nor \
                 granted to it (tag {} on it, or the operator's --grant-restore); no replica is made",
                s.source,
                crate::dbinstance::RESTORABLE_BY_TAG
            ),
            true,
        )),
    }
}

/// The replica cannot be made yet (its source is not Ready) or not at all (not this namespace's).
pub(super) fn refused(f: &Facts, mut plan: Plan, why: String, not_owned: bool) -> Plan {
    plan.requeue = Requeue::After(spec::drift_interval(&f.db.spec, &f.intervals));
    match not_owned {
        true => refuse(plan, f, "ReplicaSourceNotOwned", &why, Some("NotOwned")),
        false => refuse(plan, f, "ReferencesUnresolved", &why, None),
    }
}

/// What a replica's rules decide before the sync of a standalone instance: a replica RDS shows
/// otherwise than the spec says is reported; one the spec no longer wants is promoted (one-way,
/// so on what RDS says now; the connection Secret keeps the source's password RDS has until the
/// spec's is sent). Whether they decided: the plan then holds it.
pub(super) fn decided_before_sync(
    f: &Facts,
    plan: &mut Plan,
    observed: &ObservedInstance,
    fields: &DBInstanceStatus,
    observing: bool,
) -> bool {
    if let Some(message) = mismatch(&f.db, observed) {
        plan.requeue = Requeue::After(spec::drift_interval(&f.db.spec, &f.intervals));
        plan.status = Some(observed_plan(
            fields.clone(),
            false,
            "ReplicaMismatch",
            message,
        ));
        return true;
    }
    if !promotes(&f.db, observed) || observing {
        return false;
    }
    if f.observed_directly {
        promote(f, plan, observed, fields.clone());
    }
    true
}

/// RDS shows a replica that the spec no longer wants: one PromoteReadReplica once it is available,
/// with the spec's backup settings (a standalone instance's backups are its own).
fn promote(f: &Facts, plan: &mut Plan, observed: &ObservedInstance, mut fields: DBInstanceStatus) {
    let identifier = f.db.identifier();
    let source = observed.replica_source.clone().unwrap_or_default();
    if observed.status != "available" {
        let message = format!(
            "RDS is {}; the promotion waits until the replica is available",
            observed.status
        );
        plan.status = Some(observed_plan(fields, false, "Waiting", message));
        return;
    }
    plan.step(Step::Own(InstanceStep::PromoteReplica {
        identifier: identifier.clone(),
        backup_retention_period: f.db.spec.backup_retention_period,
        preferred_backup_window: f.db.spec.backups.preferred_backup_window.clone(),
    }));
    let note = format!(
        "promoting read replica {identifier} of {source} to a standalone instance (one-way)"
    );
    plan.event(EventType::Normal, "Promoting", "Update", note.clone());
    if let Some(r) = fields.replication.as_mut() {
        r.promoted = Some(true);
    }
    plan.status = Some(observed_plan(fields, false, "Promoting", note));
}

/// The spec wants a replica and RDS shows a standalone instance, or a replica of another source:
/// reported, nothing changed (the instance is not made a replica again: promotion is one-way).
fn mismatch(db: &DBInstance, observed: &ObservedInstance) -> Option<String> {
    let identifier = db.identifier();
    if let Some(shown) =
        (observed.replica_source.as_ref()).filter(|_| !wanted(db) && !promotes(db, observed))
    {
        return Some(format!(
            "RDS instance {identifier} is a read replica of {shown}, which the spec does not name: it \
             is not promoted on a guess; set promote: true to promote it"
        ));
    }
    if !wanted(db) {
        return None;
    }
    let Some(shown) = &observed.replica_source else {
        return Some(format!(
            "spec.replicaOf asks for a read replica, but RDS instance {identifier} is not one (promoted, \
             or made standalone, outside the operator); it is not made a replica again: remove replicaOf \
             to manage it as a standalone instance"
        ));
    };
    let r = db.spec.replica_of.as_ref()?;
    let named = r.db_instance_identifier.clone().or_else(|| r.arn.clone())?;
    (!same_instance(shown, &named)).then(|| {
        format!(
            "spec.replicaOf names {named}, but RDS instance {identifier} is a read replica of {shown}; \
             nothing is changed"
        )
    })
}

/// Whether two names of an instance (identifier or ARN) name the same one.
fn same_instance(a: &str, b: &str) -> bool {
    let id = |s: &str| s.rsplit(":db:").next().unwrap_or(s).to_lowercase();
    match (a.starts_with("arn:"), b.starts_with("arn:")) {
        (true, true) => a == b,
        _ => id(a) == id(b),
    }
}

/// What status reports of the replication: the source of a replica, the replicas of a source,
/// RDS's StatusInfos; whether it was promoted stays recorded.
pub fn status(
    db: &DBInstance,
    observed: &ObservedInstance,
    previous: Option<&DBInstanceStatus>,
) -> Option<ReplicationStatus> {
    let recorded = previous.and_then(|s| s.replication.as_ref());
    let promoted = recorded.and_then(|r| r.promoted);
    let named = recorded.and_then(|r| r.replica_of_spec) == Some(true) || wanted(db);
    let shown = ReplicationStatus {
        source_db_instance_identifier: observed.replica_source.clone(),
        read_replicas: observed.read_replicas.clone(),
        status_infos: (observed.status_infos.iter())
            .map(|i| ReplicationInfo {
                status_type: i.status_type.clone(),
                status: i.status.clone(),
                normal: i.normal,
                message: i.message.clone(),
            })
            .collect(),
        replica_of_spec: named.then_some(true),
        promoted,
    };
    (shown != ReplicationStatus::default()).then_some(shown)
}

/// A replica the status last showed that RDS now shows standalone: RDS holds the source's master
/// password, so the spec's is sent once (as after a restore).
pub(super) fn just_promoted(previous: &DBInstanceStatus, observed: &ObservedInstance) -> bool {
    let was_replica =
        (previous.replication.as_ref()).is_some_and(|r| r.source_db_instance_identifier.is_some());
    was_replica && observed.replica_source.is_none()
}

/// The source instances RDS reports replicas of this one for: a deletion waits for them.
pub fn live_replicas(observed: &ObservedInstance) -> Option<String> {
    (!observed.read_replicas.is_empty()).then(|| observed.read_replicas.join(", "))
}
