//! The DBSubnetGroup reconcile: what it reads (the group and its tags in RDS, the DBInstances that
//! refer to it), how it acts, and its watches; the shell around them is the shared one
//! (`managed::reconcile`).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::controller::{Config as ControllerConfig, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use tokio::sync::watch;
use tracing::{debug, info};

use crate::context::Context;
use crate::crd::{Condition, DBInstance};
use crate::error::{Error, kube_err};
use crate::managed::{self, KindPlan, Reconciled, Shared};

use super::plan::{self, Facts, Step};
use super::{DBSubnetGroup, DBSubnetGroupStatus};

impl Reconciled for DBSubnetGroup {
    type Facts = Facts;
    type Step = Step;
    type Status = DBSubnetGroupStatus;
    const LABEL: &'static str = "DBSubnetGroup";

    async fn read(&self, shared: &Shared) -> Result<Facts, Error> {
        Ok(Facts {
            group: self.clone(),
            observed: shared.ctx.rds.subnet_group(&self.group_name()).await?,
            referrers: referrers(&shared.ctx, self).await?,
            drift_interval: shared.drift_interval,
        })
    }

    fn plan(facts: &Facts) -> KindPlan<Step, DBSubnetGroupStatus> {
        plan::plan(facts)
    }

    async fn act(&self, shared: &Shared, step: &Step) -> Result<(), Error> {
        let ctx = &shared.ctx;
        match step {
            Step::AddFinalizer => managed::set_finalizer(&ctx.client, self, true).await,
            Step::RemoveFinalizer => managed::set_finalizer(&ctx.client, self, false).await,
            Step::Create {
                name,
                description,
                subnet_ids,
                tags,
            } => Ok((ctx.rds)
                .create_subnet_group(name, description, subnet_ids, tags)
                .await?),
            Step::Modify {
                name,
                description,
                subnet_ids,
            } => Ok((ctx.rds)
                .modify_subnet_group(name, description, subnet_ids)
                .await?),
            Step::AddTags { arn, tags } => Ok(ctx.rds.add_tags(arn, tags).await?),
            Step::RemoveTags { arn, keys } => Ok(ctx.rds.remove_tags(arn, keys).await?),
            Step::Delete { name } => Ok(ctx.rds.delete_subnet_group(name).await?),
        }
    }

    fn status(&self) -> Option<&DBSubnetGroupStatus> {
        self.status.as_ref()
    }

    fn conditions(status: &mut DBSubnetGroupStatus) -> &mut Vec<Condition> {
        &mut status.conditions
    }

    fn observed_generation(status: &mut DBSubnetGroupStatus) -> &mut Option<i64> {
        &mut status.observed_generation
    }
}

/// Runs the controller for one namespace (or all) until `shutdown` turns true.
pub async fn run(
    ctx: Arc<Context>,
    namespace: Option<String>,
    concurrency: u16,
    drift_interval: Duration,
    mut shutdown: watch::Receiver<bool>,
) {
    let (groups, instances): (Api<DBSubnetGroup>, Api<DBInstance>) = match &namespace {
        Some(ns) => (
            Api::namespaced(ctx.client.clone(), ns),
            Api::namespaced(ctx.client.clone(), ns),
        ),
        None => (Api::all(ctx.client.clone()), Api::all(ctx.client.clone())),
    };
    info!(
        namespace = namespace.as_deref().unwrap_or("*"),
        "starting DBSubnetGroup controller"
    );
    let shared = Arc::new(Shared {
        ctx,
        drift_interval,
    });
    Controller::new(groups, watcher::Config::default().any_semantic())
        .with_config(ControllerConfig::default().concurrency(concurrency))
        // A DBInstance that stops referring to a group (or goes) wakes the group's deletion.
        .watches(
            instances,
            watcher::Config::default().any_semantic(),
            |db: DBInstance| {
                let ns = db.namespace();
                (db.spec.db_subnet_group_ref.as_ref())
                    .and_then(|r| ns.map(|ns| ObjectRef::new(&r.name).within(&ns)))
            },
        )
        .graceful_shutdown_on(async move {
            let _ = shutdown.wait_for(|stop| *stop).await;
        })
        .run(
            managed::reconcile::<DBSubnetGroup>,
            managed::error_policy::<DBSubnetGroup>,
            shared,
        )
        .for_each(|result| async move {
            if let Err(e) = result {
                debug!(error = %e, "DBSubnetGroup reconcile failed");
            }
        })
        .await;
}

/// The DBInstances of the group's namespace whose dbSubnetGroupRef names it (read from the API,
/// fresh, since a deletion waits on it).
async fn referrers(ctx: &Context, group: &DBSubnetGroup) -> Result<Vec<String>, Error> {
    let namespace = group.namespace().unwrap_or_default();
    let api: Api<DBInstance> = Api::namespaced(ctx.client.clone(), &namespace);
    let list = (api.list(&Default::default()).await).map_err(kube_err("list DBInstances"))?;
    let name = group.metadata.name.as_ref();
    Ok((list.items.into_iter())
        .filter(|db| (db.spec.db_subnet_group_ref.as_ref()).is_some_and(|r| Some(&r.name) == name))
        .map(|db| db.name_any())
        .collect())
}
