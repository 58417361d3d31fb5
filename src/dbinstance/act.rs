//! Act, for a DBInstance: runs one step of the plan through the adapters (`rds.rs`, `secrets.rs`,
//! the finalizer); the skeleton runs them in order and stops at the first failure. It decides
//! nothing.

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;
use tracing::info;

use crate::context::Context;
use crate::dbinstance::DBInstance;
use crate::dbinstance::aws::CreateRequest;
use crate::dbinstance::plan::Response;
use crate::dbinstance::plan::Step;
use crate::error::Error;
use crate::locations::Location;
use crate::managed;
use crate::secrets::{self};

/// Runs one step; RDS's answer when it amends the status (a create, modify or restore).
pub async fn execute(
    ctx: &Context,
    at: &Location,
    db: &DBInstance,
    step: &Step,
) -> Result<Option<Response>, Error> {
    let namespace = db.namespace().ok_or(Error::MissingObjectKey("namespace"))?;
    let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    match step {
        Step::AddFinalizer => managed::apiserver::set_finalizer(ctx, db, true).await?,
        Step::RemoveFinalizer => managed::apiserver::set_finalizer(ctx, db, false).await?,
        Step::Secret(secret) => crate::database::secret::act(&api, db, secret).await?,
        Step::OrphanSecret { name } => secrets::orphan(&api, name).await?,
        Step::DeleteSecret { name } => secrets::delete(&api, name).await?,
        Step::ClearSwitchoverAnnotation => {
            let key = crate::database::blue_green::SWITCHOVER_ANNOTATION;
            crate::managed::apiserver::remove_annotation(ctx, db, key).await?
        }
        _ => return execute_rds(at, step).await,
    }
    Ok(None)
}

/// The steps that call RDS (the observer reads their instance directly until it settles).
async fn execute_rds(at: &Location, step: &Step) -> Result<Option<Response>, Error> {
    if let Some(identifier) = mutated_instance(step) {
        at.observer.mutated(identifier);
    }
    match step {
        Step::CreateInstance {
            identifier,
            spec,
            password,
            tags,
        } => {
            let request = CreateRequest {
                identifier,
                spec,
                password: password.as_ref().map(|p| &p.0),
                tags: tags.clone(),
            };
            let created = at.rds.create(&request).await?;
            info!(identifier, "created RDS instance");
            return Ok(Some(Response::Created(created)));
        }
        Step::ModifyInstance {
            identifier,
            modification,
            password,
        } => {
            let password = password.as_ref().map(|p| &p.0);
            let after = at.rds.modify(identifier, modification, password).await?;
            info!(identifier, "sent changes to RDS");
            return Ok(Some(Response::Modified(after)));
        }
        Step::AddTags { arn, tags, .. } => at.rds.add_tags(arn, tags).await?,
        Step::RemoveTags { arn, keys, .. } => at.rds.remove_tags(arn, keys).await?,
        Step::RestoreInstance { .. } | Step::RestoreToPointInTime { .. } => {
            return restore(at, step).await;
        }
        Step::CreateReplica { .. } | Step::PromoteReplica { .. } => {
            return replicas(at, step).await;
        }
        Step::BlueGreen { identifier, call } => {
            crate::database::blue_green::aws::act(&at.rds, identifier, call).await?
        }
        Step::StartBackupReplication { .. } | Step::StopBackupReplication { .. } => {
            backup_replication(at, step).await?
        }
        Step::ApplyMaintenance(m) => crate::maintenance::aws::apply(at, "db", m).await?,
        Step::Reboot { identifier } => {
            at.rds.reboot(identifier).await?;
            info!(
                identifier,
                "rebooting RDS instance for pending parameter changes"
            );
        }
        Step::DeleteInstance {
            identifier,
            final_snapshot,
            delete_automated_backups,
        } => {
            let (snapshot, backups) = (final_snapshot.as_deref(), *delete_automated_backups);
            at.rds.delete(identifier, snapshot, backups).await?;
            info!(
                identifier,
                final_snapshot, delete_automated_backups, "deleting RDS instance"
            );
        }
        // Kubernetes steps are executed by `execute`.
        _ => {}
    }
    Ok(None)
}

/// Automated backups replicated to another region, or no longer: called in that region.
async fn backup_replication(at: &Location, step: &Step) -> Result<(), Error> {
    match step {
        Step::StartBackupReplication {
            identifier,
            source,
            replication,
        } => {
            let there = at.rds.in_region(&replication.region);
            let (retention, kms) = (
                replication.retention_period,
                replication.kms_key_id.as_deref(),
            );
            there
                .start_backup_replication(source, retention, kms)
                .await?;
            info!(
                identifier,
                region = replication.region,
                "replicating automated backups"
            );
        }
        Step::StopBackupReplication {
            identifier,
            source,
            region,
        } => {
            at.rds
                .in_region(region)
                .stop_backup_replication(source)
                .await?;
            info!(identifier, region, "stopped replicating automated backups");
        }
        _ => {}
    }
    Ok(())
}

/// A read replica's creation (RDS's answer) or promotion.
async fn replicas(at: &Location, step: &Step) -> Result<Option<Response>, Error> {
    match step {
        Step::CreateReplica {
            identifier,
            source,
            spec,
            tags,
        } => {
            let created = (at.rds)
                .create_read_replica(identifier, source, spec, tags)
                .await?;
            info!(identifier, source, "creating read replica");
            Ok(Some(Response::Created(created)))
        }
        Step::PromoteReplica {
            identifier,
            backup_retention_period,
            preferred_backup_window,
        } => {
            let window = preferred_backup_window.clone();
            (at.rds)
                .promote_read_replica(identifier, *backup_retention_period, window)
                .await?;
            info!(identifier, "promoting read replica");
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// A restore, from a snapshot or to a point in time: the instance RDS answered with (no answer for
/// any other step).
async fn restore(at: &Location, step: &Step) -> Result<Option<Response>, Error> {
    let restored = match step {
        Step::RestoreInstance {
            identifier,
            snapshot,
            spec,
            tags,
        } => {
            let restored = at.rds.restore(identifier, snapshot, spec, tags).await?;
            info!(
                identifier,
                snapshot, "restoring RDS instance from a snapshot"
            );
            restored
        }
        Step::RestoreToPointInTime {
            identifier,
            source,
            time,
            spec,
            tags,
        } => {
            let time = time.as_deref();
            let restored = (at.rds)
                .restore_to_point_in_time(identifier, source, time, spec, tags)
                .await?;
            info!(
                identifier,
                source, time, "restoring RDS instance to a point in time"
            );
            restored
        }
        _ => return Ok(None),
    };
    Ok(Some(Response::Created(restored)))
}

/// The RDS instance a step changes: the observer reads it directly until it settles.
fn mutated_instance(step: &Step) -> Option<&str> {
    match step {
        Step::CreateInstance { identifier, .. }
        | Step::ModifyInstance { identifier, .. }
        | Step::AddTags { identifier, .. }
        | Step::RemoveTags { identifier, .. }
        | Step::RestoreInstance { identifier, .. }
        | Step::RestoreToPointInTime { identifier, .. }
        | Step::Reboot { identifier }
        | Step::ApplyMaintenance(crate::maintenance::ApplyStep { identifier, .. })
        | Step::CreateReplica { identifier, .. }
        | Step::PromoteReplica { identifier, .. }
        | Step::StartBackupReplication { identifier, .. }
        | Step::StopBackupReplication { identifier, .. }
        | Step::BlueGreen {
            identifier,
            call: crate::database::blue_green::Call::Switchover { .. },
        }
        | Step::DeleteInstance { identifier, .. } => Some(identifier),
        _ => None,
    }
}
