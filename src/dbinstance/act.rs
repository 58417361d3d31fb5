//! Act, for a DBInstance: runs one step of the plan through the adapters (`rds.rs`, `secrets.rs`,
//! the finalizer); the skeleton runs them in order and stops at the first failure. It decides
//! nothing. The steps both database kinds take are run by `database::step::act`, over this kind's
//! [`DatabaseCalls`]; a DBInstance's own here.

use tracing::info;

use crate::aws_error::AwsError;
use crate::context::Context;
use crate::database::step::{DatabaseCalls, Modify, Restore};
use crate::dbinstance::aws::BackupReplicationCalls;
use crate::dbinstance::aws::CreateRequest;
use crate::dbinstance::aws::InstanceCalls;
use crate::dbinstance::aws::ReplicaCalls;
use crate::dbinstance::aws::RestoreCalls;
use crate::dbinstance::drift::Modification;
use crate::dbinstance::plan::{InstanceStep, Response, Step};
use crate::dbinstance::{DBInstance, DBInstanceSpec};
use crate::error::Error;
use crate::locations::Location;
use crate::rds::Rds;

/// Runs one step; RDS's answer when it amends the status (a create, modify or restore).
pub async fn execute(
    ctx: &Context,
    at: &Location,
    db: &DBInstance,
    step: &Step,
) -> Result<Option<Response>, Error> {
    // The observer reads the instance a step changes directly until it settles.
    if let Some(identifier) = mutated_instance(step) {
        at.observer.mutated(identifier);
    }
    match step {
        Step::Own(own) => execute_own(at, own).await,
        _ => crate::database::step::act(ctx, at, db, step).await,
    }
}

impl DatabaseCalls for DBInstance {
    type Spec = DBInstanceSpec;
    type Modification = Modification;
    type Answer = Response;
    const RESOURCE: &'static str = "db";

    async fn modify(rds: &Rds, m: Modify<'_, Modification>) -> Result<Option<Response>, AwsError> {
        let after = rds.modify(m.identifier, m.modification, m.password).await?;
        Ok(Some(Response::Modified(after)))
    }

    async fn restore(
        rds: &Rds,
        r: Restore<'_, DBInstanceSpec>,
    ) -> Result<Option<Response>, AwsError> {
        Ok(Some(Response::Created(rds.restore(&r).await?)))
    }
}

/// A DBInstance's own steps, all RDS calls.
async fn execute_own(at: &Location, step: &InstanceStep) -> Result<Option<Response>, Error> {
    match step {
        InstanceStep::CreateInstance {
            identifier,
            spec,
            password,
            tags,
        }
        | InstanceStep::RestoreFromS3 {
            identifier,
            spec,
            password,
            tags,
            ..
        } => {
            let request = CreateRequest {
                identifier,
                spec,
                password: password.as_ref().map(|p| &p.0),
                tags: tags.clone(),
            };
            let made = match step {
                InstanceStep::RestoreFromS3 { s3, .. } => {
                    let made = at.rds.restore_from_s3(&request, s3).await?;
                    info!(
                        identifier,
                        bucket = s3.bucket,
                        "restoring RDS instance from S3"
                    );
                    made
                }
                _ => {
                    let made = at.rds.create(&request).await?;
                    info!(identifier, "created RDS instance");
                    made
                }
            };
            return Ok(Some(Response::Created(made)));
        }
        InstanceStep::CreateReplica { .. } | InstanceStep::PromoteReplica { .. } => {
            return replicas(at, step).await;
        }
        InstanceStep::StartBackupReplication { .. }
        | InstanceStep::StopBackupReplication { .. } => backup_replication(at, step).await?,
        InstanceStep::Stop { identifier } => {
            at.rds.stop_instance(identifier).await?;
            info!(identifier, "stopping RDS instance as its spec says");
        }
        InstanceStep::Start { identifier } => {
            at.rds.start_instance(identifier).await?;
            info!(identifier, "starting RDS instance as its spec says");
        }
        InstanceStep::Reboot { identifier } => {
            at.rds.reboot(identifier).await?;
            info!(
                identifier,
                "rebooting RDS instance for pending parameter changes"
            );
        }
        InstanceStep::DeleteInstance {
            identifier,
            final_snapshot,
            delete_automated_backups,
        } => {
            let (snapshot, backups) = (final_snapshot.as_deref(), *delete_automated_backups);
            at.rds
                .delete_instance(identifier, snapshot, backups)
                .await?;
            info!(
                identifier,
                final_snapshot, delete_automated_backups, "deleting RDS instance"
            );
        }
    }
    Ok(None)
}

/// Automated backups replicated to another region, or no longer: called in that region.
async fn backup_replication(at: &Location, step: &InstanceStep) -> Result<(), Error> {
    match step {
        InstanceStep::StartBackupReplication {
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
        InstanceStep::StopBackupReplication {
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
async fn replicas(at: &Location, step: &InstanceStep) -> Result<Option<Response>, Error> {
    match step {
        InstanceStep::CreateReplica {
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
        InstanceStep::PromoteReplica {
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

/// The RDS instance a step changes: the observer reads it directly until it settles.
fn mutated_instance(step: &Step) -> Option<&str> {
    match step {
        Step::Own(InstanceStep::CreateInstance { identifier, .. })
        | Step::Own(InstanceStep::RestoreFromS3 { identifier, .. })
        | Step::Modify { identifier, .. }
        | Step::AddTags { identifier, .. }
        | Step::RemoveTags { identifier, .. }
        | Step::Restore { identifier, .. }
        | Step::RestoreToPointInTime { identifier, .. }
        | Step::Own(InstanceStep::Reboot { identifier })
        | Step::Own(InstanceStep::Stop { identifier })
        | Step::Own(InstanceStep::Start { identifier })
        | Step::ApplyMaintenance(crate::maintenance::ApplyStep { identifier, .. })
        | Step::Role { identifier, .. }
        | Step::Own(InstanceStep::CreateReplica { identifier, .. })
        | Step::Own(InstanceStep::PromoteReplica { identifier, .. })
        | Step::Own(InstanceStep::StartBackupReplication { identifier, .. })
        | Step::Own(InstanceStep::StopBackupReplication { identifier, .. })
        | Step::BlueGreen {
            identifier,
            call: crate::database::blue_green::Call::Switchover { .. },
        }
        | Step::Own(InstanceStep::DeleteInstance { identifier, .. }) => Some(identifier),
        _ => None,
    }
}
