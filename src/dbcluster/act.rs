//! Step 3 of a DBCluster's reconcile, act: one planned step, the Kubernetes writes and the RDS
//! calls; nothing here decides what to call.

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;
use tracing::info;

use super::DBCluster;
use super::aws::CreateCluster;
use super::observed::ObservedCluster;
use super::plan::Step;
use crate::context::Context;
use crate::error::Error;
use crate::globalcluster::ObservedGlobalCluster;
use crate::managed::apiserver;
use crate::managed::locate::Located;

/// Runs one step: the Kubernetes writes here, the RDS calls in [`act_rds`].
pub(super) async fn act(
    ctx: &Context,
    at: &Located,
    cluster: &DBCluster,
    step: &Step,
) -> Result<(), Error> {
    let namespace = cluster
        .namespace()
        .ok_or(Error::MissingObjectKey("namespace"))?;
    let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    match step {
        Step::AddFinalizer => apiserver::set_finalizer(ctx, cluster, true).await?,
        Step::RemoveFinalizer => apiserver::set_finalizer(ctx, cluster, false).await?,
        Step::Secret(secret) => crate::database::secret::act(&api, cluster, secret).await?,
        Step::ClearSwitchoverAnnotation => {
            let key = crate::database::blue_green::SWITCHOVER_ANNOTATION;
            apiserver::remove_annotation(ctx, cluster, key).await?
        }
        _ => act_rds(at, step).await?,
    }
    Ok(())
}

/// The steps that call RDS; the shared listing is stale for the cluster after each.
async fn act_rds(at: &Located, step: &Step) -> Result<(), Error> {
    let (rds, observer) = (&at.location.rds, &at.location.observer);
    // The shared listing is stale for the cluster while the call is out, then until a listing
    // that starts after its answer.
    let _stale = (step.mutates()).map(|id| observer.listing::<ObservedCluster>().changing(id));
    match step {
        Step::Create {
            identifier,
            spec,
            password,
            tags,
            global,
        } => {
            let password = password.as_ref().map(|p| &p.0);
            let global = global.as_deref();
            let request = CreateCluster {
                identifier,
                spec,
                password,
                tags,
                global,
            };
            rds.create_cluster(&request).await?;
            info!(identifier, global, "created RDS cluster");
        }
        Step::Detach {
            identifier,
            global,
            arn,
        } => {
            let _stale = (observer.listing::<ObservedGlobalCluster>()).changing(global);
            rds.remove_from_global_cluster(global, arn).await?;
            info!(
                identifier,
                global, "detaching RDS cluster from its global database"
            );
        }
        Step::Modify {
            identifier,
            modification,
            password,
        } => {
            let password = password.as_ref().map(|p| &p.0);
            rds.modify_cluster(identifier, modification, password)
                .await?;
            let fields = modification.field_list();
            info!(identifier, fields, "sent changes to RDS cluster");
        }
        Step::Restore { .. } | Step::RestoreToPointInTime { .. } => restore(rds, step).await?,
        Step::BlueGreen { .. } | Step::DeleteMember { .. } => {
            super::blue_green::act(rds, step).await?
        }
        Step::ApplyMaintenance(m) => {
            crate::maintenance::aws::apply(&at.location, "cluster", m).await?
        }
        Step::RebootMember { identifier, .. } => {
            // The member's state is unknown until it is read again.
            observer.mutated(identifier);
            rds.reboot(identifier).await?;
            info!(
                identifier,
                "rebooting a cluster member for static parameter changes"
            );
        }
        Step::AddTags { arn, tags, .. } => rds.add_tags(arn, tags).await?,
        Step::RemoveTags { arn, keys, .. } => rds.remove_tags(arn, keys).await?,
        Step::Delete {
            identifier,
            final_snapshot,
        } => {
            rds.delete_cluster(identifier, final_snapshot.as_deref())
                .await?;
            info!(identifier, final_snapshot, "deleting RDS cluster");
        }
        // Kubernetes steps are run by `act`.
        _ => {}
    }
    Ok(())
}

/// A restore, from a cluster snapshot or to a point in time.
async fn restore(rds: &crate::rds::Rds, step: &Step) -> Result<(), Error> {
    match step {
        Step::Restore {
            identifier,
            snapshot,
            spec,
            tags,
        } => {
            rds.restore_cluster(identifier, snapshot, spec, tags)
                .await?;
            info!(
                identifier,
                snapshot, "restoring RDS cluster from a snapshot"
            );
        }
        Step::RestoreToPointInTime {
            identifier,
            source,
            time,
            spec,
            tags,
        } => {
            let time = time.as_deref();
            (rds.restore_cluster_to_point_in_time(identifier, source, time, spec, tags)).await?;
            info!(
                identifier,
                source, time, "restoring RDS cluster to a point in time"
            );
        }
        _ => {}
    }
    Ok(())
}
