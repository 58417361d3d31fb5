//! The reconcile shell: the watches, and for each reconcile the four steps in order: read
//! (`read.rs`) -> plan (pure, `plan/`) -> act (`act.rs`) -> report (`report.rs`). Nothing here
//! decides what to call or what to report.

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::api::PartialObjectMeta;
use kube::runtime::controller::{Config as ControllerConfig, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use tokio::sync::watch;
use tracing::{debug, info};

use crate::context::Context;
use crate::dbinstance::plan;
use crate::dbinstance::{DBInstance, SECRET_OWNER_ANNOTATION};
use crate::dbinstance::{act, read, report};
use crate::dbparametergroup::DBParameterGroup;
use crate::dbsubnetgroup::DBSubnetGroup;
use crate::error::Error;
use crate::http::Health;
use crate::managed;
use crate::shell::{self, Failed, Outcome, Shell};

/// Runs one controller per watched namespace (or one for all namespaces when `namespaces` is
/// empty) until `shutdown` turns true; marks `health` ready once every cache has synced.
pub async fn run(
    ctx: Arc<Context>,
    namespaces: Vec<String>,
    concurrency: u16,
    shutdown: watch::Receiver<bool>,
    health: Arc<Health>,
) {
    let scopes: Vec<Option<String>> = if namespaces.is_empty() {
        vec![None]
    } else {
        namespaces.into_iter().map(Some).collect()
    };
    let mut stores = Vec::new();
    let mut controllers = Vec::new();
    let mut others = Vec::new();
    for namespace in scopes {
        let drift = ctx.observer.intervals.settled;
        others.push(futures::future::join(
            managed::run::<DBSubnetGroup>(
                ctx.clone(),
                namespace.clone(),
                concurrency,
                drift,
                shutdown.clone(),
            ),
            managed::run::<DBParameterGroup>(
                ctx.clone(),
                namespace.clone(),
                concurrency,
                drift,
                shutdown.clone(),
            ),
        ));
        let (controller, store) =
            controller(&ctx, namespace.as_deref(), concurrency, shutdown.clone());
        ctx.instances.add(store.clone());
        stores.push(store);
        controllers.push(
            controller
                .run(shell::reconcile, shell::error_policy, ctx.clone())
                .for_each(|result| async move {
                    match result {
                        Ok((obj, _)) => debug!(dbinstance = %obj, "reconciled"),
                        Err(e) => debug!(error = %e, "reconcile failed"),
                    }
                }),
        );
    }
    let readiness = async move {
        for store in stores {
            if store.wait_until_ready().await.is_err() {
                return;
            }
        }
        info!("caches synced");
        health.set_ready(true);
    };
    tokio::join!(
        futures::future::join_all(controllers),
        futures::future::join_all(others),
        readiness
    );
    info!("controllers stopped");
}

fn controller(
    ctx: &Context,
    namespace: Option<&str>,
    concurrency: u16,
    mut shutdown: watch::Receiver<bool>,
) -> (Controller<DBInstance>, Store<DBInstance>) {
    let (api, secrets): (Api<DBInstance>, Api<PartialObjectMeta<Secret>>) = match namespace {
        Some(ns) => (
            Api::namespaced(ctx.client.clone(), ns),
            Api::namespaced(ctx.client.clone(), ns),
        ),
        None => (Api::all(ctx.client.clone()), Api::all(ctx.client.clone())),
    };
    info!(
        namespace = namespace.unwrap_or("*"),
        "starting DBInstance controller"
    );
    let controller = managed::lean_controller(api);
    let store = controller.store();
    let controller = controller
        .with_config(ControllerConfig::default().concurrency(concurrency))
        // Secrets are watched by their metadata only (the name and owners are all a wake needs):
        // the operator never holds the data of the cluster's Secrets, only of those a reconcile
        // reads.
        .watches_stream(
            watcher(secrets, watcher::Config::default().any_semantic()).touched_objects(),
            secret_wakes(store.clone()),
        )
        // A DBSubnetGroup or DBParameterGroup becoming Ready (or changing) wakes the DBInstances
        // that refer to it.
        .watches(
            group_api(ctx, namespace),
            watcher::Config::default().any_semantic(),
            referrers::<DBSubnetGroup>(store.clone()),
        )
        .watches(
            group_api(ctx, namespace),
            watcher::Config::default().any_semantic(),
            referrers::<DBParameterGroup>(store.clone()),
        )
        .reconcile_on({
            let namespace = namespace.map(str::to_owned);
            ctx.observer.changes().filter(move |r| {
                futures::future::ready(namespace.is_none() || r.namespace == namespace)
            })
        })
        .graceful_shutdown_on(async move {
            let _ = shutdown.wait_for(|stop| *stop).await;
        });
    (controller, store)
}

/// The DBInstances a Secret's change wakes: the Secrets the operator wrote (connection, generated
/// password) wake their owner, by ownerReference or (under deletionPolicy Retain) by the owner
/// annotation, and a password Secret (rotated, or appearing at last) the DBInstances that refer
/// to it.
fn secret_wakes(
    mapper_store: Store<DBInstance>,
) -> impl Fn(PartialObjectMeta<Secret>) -> Vec<ObjectRef<DBInstance>> + Send + Sync + 'static {
    move |secret: PartialObjectMeta<Secret>| {
        let ns = secret.namespace();
        let name = secret.name_any();
        let owners = secret
            .owner_references()
            .iter()
            .filter(|o| o.kind == "DBInstance" && o.api_version == DBInstance::api_version(&()))
            .filter_map(|o| ns.as_deref().map(|ns| ObjectRef::new(&o.name).within(ns)))
            .collect::<Vec<_>>();
        let owner_uid = secret.annotations().get(SECRET_OWNER_ANNOTATION).cloned();
        let referrers = mapper_store
            .state()
            .into_iter()
            .filter(|db| {
                db.namespace() == ns
                    && (db
                        .spec
                        .master_user_password
                        .as_ref()
                        .is_some_and(|r| r.name == name)
                        || (owner_uid.is_some() && db.uid() == owner_uid))
            })
            .map(|db| ObjectRef::from_obj(&*db));
        owners.into_iter().chain(referrers).collect::<Vec<_>>()
    }
}

fn group_api<K>(ctx: &Context, namespace: Option<&str>) -> Api<K>
where
    K: managed::Reconciled + Resource<Scope = kube::core::NamespaceResourceScope>,
{
    match namespace {
        Some(ns) => Api::namespaced(ctx.client.clone(), ns),
        None => Api::all(ctx.client.clone()),
    }
}

/// The DBInstances of a group's namespace whose reference (`K::referred_by`) names it.
fn referrers<K: managed::Reconciled>(
    store: Store<DBInstance>,
) -> impl Fn(K) -> Vec<ObjectRef<DBInstance>> + Send + Sync + 'static {
    move |group: K| {
        let ns = group.namespace();
        let name = group.name_any();
        (store.state().into_iter())
            .filter(|db| db.namespace() == ns && K::referred_by(db).is_some_and(|r| r.name == name))
            .map(|db| ObjectRef::from_obj(&*db))
            .collect()
    }
}

/// DBInstance in the shell every kind runs in: its four steps, and failures reported over the
/// last status (`report::failure`).
impl Shell for DBInstance {
    const KIND: &'static str = "DBInstance";
    type Ctx = Context;
    type Planned = ();

    fn context(ctx: &Context) -> &Context {
        ctx
    }

    async fn once(&self, ctx: &Context) -> Result<Outcome, Failed<()>> {
        let facts = read::gather(self, ctx).await?;
        let plan = plan::plan(&facts);
        let mut achieved = act::run(ctx, self, &plan.steps).await;
        report::write(ctx, self, &plan, &achieved, &facts.now).await?;
        match achieved.error.take() {
            Some(e) => Err(e.into()),
            None => Ok(Outcome {
                requeue: plan.requeue,
                refusal: plan.refusal,
            }),
        }
    }

    async fn report_failure(&self, ctx: &Context, error: &Error, _: Option<()>) {
        report::failure(ctx, self, error).await;
    }
}
