//! Step 3 of a DBCluster's reconcile, act: one planned step, the Kubernetes writes and the RDS
//! calls; nothing here decides what to call. The steps both database kinds take are run by
//! `database::step::act`, over this kind's [`DatabaseCalls`]; a DBCluster's own here.

use tracing::info;

use super::aws::CreateCluster;
use super::drift::ClusterModification;
use super::observed::ObservedCluster;
use super::plan::{ClusterStep, Step};
use super::{DBCluster, DBClusterSpec};
use crate::aws_error::AwsError;
use crate::context::Context;
use crate::database::step::{DatabaseCalls, Modify, Restore};
use crate::dbcluster::aws::ClusterCalls;
use crate::dbcluster::restore::ClusterRestoreCalls;
use crate::error::Error;
use crate::globalcluster::ObservedGlobalCluster;
use crate::locations::Location;
use crate::managed::locate::Located;
use crate::rds::Rds;

/// Runs one step. The shared listing is stale for the cluster a step changes while the call is
/// out, then until a listing that starts after its answer.
pub(super) async fn act(
    ctx: &Context,
    at: &Located,
    cluster: &DBCluster,
    step: &Step,
) -> Result<(), Error> {
    let observer = &at.location.observer;
    let _stale =
        (super::plan::mutates(step)).map(|id| observer.listing::<ObservedCluster>().changing(id));
    match step {
        Step::Own(ClusterStep::Expire { members }) => expire(ctx, cluster, members).await,
        Step::Own(own) => act_own(&at.location, own).await,
        _ => crate::database::step::act(ctx, &at.location, cluster, step)
            .await
            .map(|_| ()),
    }
}

impl DatabaseCalls for DBCluster {
    type Spec = DBClusterSpec;
    type Modification = ClusterModification;
    type Answer = ();
    const RESOURCE: &'static str = "cluster";

    async fn modify(rds: &Rds, m: Modify<'_, ClusterModification>) -> Result<Option<()>, AwsError> {
        rds.modify_cluster(m.identifier, m.modification, m.password)
            .await?;
        Ok(None)
    }

    async fn restore(rds: &Rds, r: Restore<'_, DBClusterSpec>) -> Result<Option<()>, AwsError> {
        rds.restore_cluster(&r).await?;
        Ok(None)
    }
}

/// An expired clone: its member DBInstances deleted, then the DBCluster (the objects; one already
/// gone is done).
async fn expire(ctx: &Context, cluster: &DBCluster, members: &[String]) -> Result<(), Error> {
    use crate::error::kube_err;
    use kube::ResourceExt;
    use kube::api::{Api, DeleteParams};
    let namespace = cluster
        .namespace()
        .ok_or(Error::MissingObjectKey("namespace"))?;
    // The DBInstance kind by its API name: this kind's code does not import that kind's.
    let gvk = kube::core::GroupVersionKind::gvk("rds.operator.rs", "v1alpha1", "DBInstance");
    let resource = kube::core::ApiResource::from_gvk(&gvk);
    let instances: Api<kube::core::DynamicObject> =
        Api::namespaced_with(ctx.client.clone(), &namespace, &resource);
    let gone = |e: &kube::Error| matches!(e, kube::Error::Api(s) if s.code == 404);
    for name in members {
        match instances.delete(name, &DeleteParams::default()).await {
            Err(e) if !gone(&e) => return Err(kube_err("delete an expired clone's member")(e)),
            _ => info!(name, "deleted an expired clone's member DBInstance"),
        }
    }
    let clusters: Api<DBCluster> = Api::namespaced(ctx.client.clone(), &namespace);
    match clusters
        .delete(&cluster.name_any(), &DeleteParams::default())
        .await
    {
        Err(e) if !gone(&e) => Err(kube_err("delete an expired clone")(e)),
        _ => {
            info!(
                name = cluster.name_any(),
                "deleted an expired clone DBCluster"
            );
            Ok(())
        }
    }
}

/// CreateDBCluster, or RestoreDBClusterFromS3 with the same settings.
async fn create(rds: &crate::rds::Rds, step: &ClusterStep) -> Result<(), Error> {
    let (identifier, spec, password, tags, global, s3) = match step {
        ClusterStep::Create {
            identifier,
            spec,
            password,
            tags,
            global,
        } => (identifier, spec, password, tags, global.as_deref(), None),
        ClusterStep::RestoreFromS3 {
            identifier,
            s3,
            spec,
            password,
            tags,
        } => (identifier, spec, password, tags, None, Some(s3)),
        _ => return Ok(()),
    };
    let password = password.as_ref().map(|p| &p.0);
    let request = CreateCluster {
        identifier,
        spec,
        password,
        tags,
        global,
    };
    match s3 {
        Some(s3) => {
            rds.restore_cluster_from_s3(&request, s3).await?;
            info!(
                identifier,
                bucket = s3.bucket,
                "restoring RDS cluster from S3"
            );
        }
        None => {
            rds.create_cluster(&request).await?;
            info!(identifier, global, "created RDS cluster");
        }
    }
    Ok(())
}

/// A DBCluster's own steps, all RDS calls.
async fn act_own(at: &Location, step: &ClusterStep) -> Result<(), Error> {
    let (rds, observer) = (&at.rds, &at.observer);
    match step {
        ClusterStep::Create { .. } | ClusterStep::RestoreFromS3 { .. } => create(rds, step).await?,
        ClusterStep::Detach {
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
        ClusterStep::RebootMember { identifier, .. } => {
            // The member's state is unknown until it is read again.
            observer.mutated(identifier);
            rds.reboot(identifier).await?;
            info!(
                identifier,
                "rebooting a cluster member for static parameter changes"
            );
        }
        ClusterStep::DeleteMember {
            cluster,
            identifier,
        } => {
            rds.delete_instance(identifier, None, false).await?;
            info!(
                cluster,
                identifier, "deleting a member of a cluster a deployment left"
            );
        }
        ClusterStep::Expire { .. } => {}
        ClusterStep::HttpEndpoint { arn, enable, .. } => {
            rds.set_http_endpoint(arn, *enable).await?;
            info!(arn, enable, "set the Data API's HTTP endpoint");
        }
        ClusterStep::Stop { identifier } => {
            rds.stop_cluster(identifier).await?;
            info!(identifier, "stopping RDS cluster as its spec says");
        }
        ClusterStep::Start { identifier } => {
            rds.start_cluster(identifier).await?;
            info!(identifier, "starting RDS cluster as its spec says");
        }
        ClusterStep::Delete {
            identifier,
            final_snapshot,
        } => {
            rds.delete_cluster(identifier, final_snapshot.as_deref())
                .await?;
            info!(identifier, final_snapshot, "deleting RDS cluster");
        }
    }
    Ok(())
}
