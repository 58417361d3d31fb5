//! The reconcile shell: read (DBInstance, password Secret, RDS instance) -> plan (pure, in
//! planner.rs) -> act (one RDS call) -> report (status by server-side apply, Events).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use secrecy::ExposeSecret;
use serde_json::json;
use tokio::sync::watch;
use tracing::{Instrument, debug, info, info_span, warn};

use crate::crd::{DBInstance, DBInstanceStatus, DriftPolicy, DriftRecord, FINALIZER, FieldDrift};
use crate::drift;
use crate::http::Health;
use crate::lock;
use crate::metrics::Metrics;
use crate::observer::{Observer, PollIntervals, is_transitional};
use crate::planner::{self, ApplyStep, CleanupStep, Released};
use crate::rds::{AwsError, CreateRequest, ErrorClass, ObservedInstance, Rds};
use crate::secrets;

/// Field manager of the operator's server-side applies.
pub const MANAGER: &str = "rds-operator";

/// Everything a reconcile needs; no globals.
pub struct Context {
    pub client: Client,
    pub rds: Rds,
    pub observer: Arc<Observer>,
    pub recorder: Recorder,
    pub metrics: Arc<Metrics>,
    backoff: Mutex<HashMap<String, (Option<i64>, u32)>>,
}

impl Context {
    pub fn new(
        client: Client,
        rds: Rds,
        observer: Arc<Observer>,
        instance: String,
        metrics: Arc<Metrics>,
    ) -> Self {
        let reporter = Reporter {
            controller: MANAGER.into(),
            instance: Some(instance),
        };
        Context {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            rds,
            observer,
            metrics,
            backoff: Mutex::default(),
        }
    }

    /// Failures in a row for this object at this generation; a new generation starts again at zero,
    /// so a corrected spec is retried at once.
    fn next_failure(&self, uid: &str, generation: Option<i64>) -> u32 {
        let mut map = lock(&self.backoff);
        let entry = map.entry(uid.to_owned()).or_insert((generation, 0));
        if entry.0 != generation {
            *entry = (generation, 0);
        }
        entry.1 += 1;
        entry.1
    }

    fn reset_failures(&self, uid: &str) {
        lock(&self.backoff).remove(uid);
    }
}

/// What went wrong in a reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Aws(#[from] AwsError),
    #[error("invalid spec: {0}")]
    InvalidSpec(String),
    #[error("master password: {0}")]
    PasswordSecret(String),
    #[error("kubernetes API, {action}: {source}")]
    Kube {
        action: &'static str,
        #[source]
        source: kube::Error,
    },
    #[error("object has no {0}")]
    MissingObjectKey(&'static str),
}

impl Error {
    /// Stable, low-cardinality label for metrics.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Error::Aws(e) => e.class.label(),
            Error::InvalidSpec(_) => "InvalidSpec",
            Error::PasswordSecret(_) => "PasswordSecret",
            Error::Kube { .. } => "Kubernetes",
            Error::MissingObjectKey(_) => "MissingObjectKey",
        }
    }

    /// The Ready=False reason and message shown to the user, for errors the user can act on.
    fn user_facing(&self) -> Option<(String, String)> {
        match self {
            Error::Aws(e) => {
                let reason = match e.class {
                    ErrorClass::InvalidInput => "InvalidRequest",
                    ErrorClass::Retryable => "AWSUnavailable",
                    ErrorClass::AlreadyExists => "AlreadyExists",
                    ErrorClass::NotFound => "NotFound",
                };
                Some((
                    reason.into(),
                    format!("{} failed: {}: {}", e.operation, e.code, e.message),
                ))
            }
            Error::InvalidSpec(m) => Some(("InvalidSpec".into(), m.clone())),
            Error::PasswordSecret(m) => Some(("PasswordSecretUnavailable".into(), m.clone())),
            _ => None,
        }
    }
}

/// Wraps a Kubernetes API error with what was being done.
pub(crate) fn kube_err(action: &'static str) -> impl FnOnce(kube::Error) -> Error {
    move |source| Error::Kube { action, source }
}

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
    for namespace in scopes {
        let (controller, store) =
            controller(&ctx, namespace.as_deref(), concurrency, shutdown.clone());
        stores.push(store);
        controllers.push(
            controller
                .run(reconcile, error_policy, ctx.clone())
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
    tokio::join!(futures::future::join_all(controllers), readiness);
    info!("controllers stopped");
}

fn controller(
    ctx: &Context,
    namespace: Option<&str>,
    concurrency: u16,
    mut shutdown: watch::Receiver<bool>,
) -> (Controller<DBInstance>, Store<DBInstance>) {
    let (api, secrets): (Api<DBInstance>, Api<Secret>) = match namespace {
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
    let controller = Controller::new(api, watcher::Config::default().any_semantic());
    let store = controller.store();
    let mapper_store = store.clone();
    let controller = controller
        .with_config(ControllerConfig::default().concurrency(concurrency))
        .watches(
            secrets,
            watcher::Config::default().any_semantic(),
            move |secret: Secret| {
                let ns = secret.namespace();
                let name = secret.name_any();
                // Secrets the operator wrote (connection, generated password) wake their owner...
                let owners = secret
                    .owner_references()
                    .iter()
                    .filter(|o| {
                        o.kind == "DBInstance" && o.api_version == DBInstance::api_version(&())
                    })
                    .filter_map(|o| ns.as_deref().map(|ns| ObjectRef::new(&o.name).within(ns)))
                    .collect::<Vec<_>>();
                // ...and a password Secret (rotated, or appearing at last) wakes the DBInstances that
                // refer to it.
                let referrers = mapper_store
                    .state()
                    .into_iter()
                    .filter(|db| {
                        db.namespace() == ns
                            && db
                                .spec
                                .master_user_password
                                .as_ref()
                                .is_some_and(|r| r.name == name)
                    })
                    .map(|db| ObjectRef::from_obj(&*db));
                owners.into_iter().chain(referrers).collect::<Vec<_>>()
            },
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

/// Entry point of a reconcile: a span, then apply or cleanup, then failure reporting.
pub async fn reconcile(db: Arc<DBInstance>, ctx: Arc<Context>) -> Result<Action, Error> {
    let namespace = db.namespace().ok_or(Error::MissingObjectKey("namespace"))?;
    let span = info_span!("reconcile", dbinstance = %format!("{namespace}/{}", db.name_any()));
    async move {
        let uid = db.uid().ok_or(Error::MissingObjectKey("uid"))?;
        let started = std::time::Instant::now();
        let result = if db.metadata.deletion_timestamp.is_some() {
            cleanup(&db, &ctx).await
        } else {
            apply(&db, &ctx).await
        };
        let label = result
            .as_ref()
            .map_or_else(Error::metric_label, |_| "success");
        ctx.metrics.reconciled(label, started.elapsed());
        match &result {
            Ok(_) => ctx.reset_failures(&uid),
            Err(e) => {
                warn!(error = %e, "reconcile failed");
                if let Some((reason, message)) = e.user_facing() {
                    report_failure(&db, &ctx, &reason, &message).await;
                }
            }
        }
        result
    }
    .instrument(span)
    .await
}

/// Backoff per object: 2 s, 4 s, 8 s... up to 5 min; invalid specs wait for a new generation.
pub fn error_policy(db: Arc<DBInstance>, err: &Error, ctx: Arc<Context>) -> Action {
    if matches!(err, Error::InvalidSpec(_)) {
        return Action::await_change();
    }
    let failures = ctx.next_failure(&db.uid().unwrap_or_default(), db.metadata.generation);
    Action::requeue(backoff_delay(failures))
}

/// The delay after `failures` failures in a row.
pub fn backoff_delay(failures: u32) -> Duration {
    let secs = 2u64.saturating_pow(failures.clamp(1, 9));
    Duration::from_secs(secs.min(300))
}

async fn apply(db: &DBInstance, ctx: &Context) -> Result<Action, Error> {
    let uid = db.uid().ok_or(Error::MissingObjectKey("uid"))?;
    let namespace = db.namespace().ok_or(Error::MissingObjectKey("namespace"))?;
    planner::validate(db).map_err(Error::InvalidSpec)?;
    ensure_finalizer(db, ctx).await?;

    let identifier = db.identifier();
    let intervals = ctx.observer.intervals;
    let observed = ctx
        .observer
        .observe(&identifier, drift_interval(db, &intervals))
        .await?;
    let previous = db.status.clone().unwrap_or_default();
    let existed = previous.arn.is_some();
    match planner::plan_apply(&uid, observed.as_ref(), existed, db.spec.drift_policy) {
        step @ (ApplyStep::Create | ApplyStep::Recreate) => {
            let password = secrets::master_password(db, ctx, &namespace, None).await?;
            let tags = planner::creation_tags(&db.spec, &uid, &namespace, &db.name_any());
            ctx.observer.mutated(&identifier);
            let created = ctx
                .rds
                .create(&CreateRequest {
                    identifier: &identifier,
                    spec: &db.spec,
                    password: password.as_ref(),
                    tags,
                })
                .await?;
            info!(
                identifier,
                recreate = step == ApplyStep::Recreate,
                "created RDS instance"
            );
            let mut status = planner::observed_status(&identifier, &created);
            status.master_user_password_hash = password
                .as_ref()
                .filter(|_| secrets::operator_sends_password(db))
                .map(|p| planner::password_hash(&uid, p.expose_secret()));
            status.last_drift = previous.last_drift.clone();
            if step == ApplyStep::Recreate {
                let now = now();
                status.last_drift = Some(DriftRecord {
                    time: now,
                    action: "Recreated".into(),
                    fields: vec![FieldDrift {
                        field: "dbInstanceIdentifier".into(),
                        observed: "(deleted outside the operator)".into(),
                        desired: identifier.clone(),
                    }],
                });
                publish(
                    ctx,
                    db,
                    EventType::Warning,
                    "Recreating",
                    "Create",
                    format!("RDS instance {identifier} was deleted outside the operator; creating it again from the spec"),
                )
                .await;
            } else {
                publish(
                    ctx,
                    db,
                    EventType::Normal,
                    "Creating",
                    "Create",
                    format!(
                        "creating RDS instance {identifier} ({} {}, {})",
                        db.spec.engine,
                        db.spec
                            .engine_version
                            .as_deref()
                            .unwrap_or("default version"),
                        db.spec.db_instance_class
                    ),
                )
                .await;
            }
            let synced = (
                true,
                "Synced",
                "the RDS instance is being created from the spec".to_owned(),
            );
            write_observed(db, ctx, status, &created.status, synced).await?;
            Ok(Action::requeue(intervals.busy))
        }
        ApplyStep::Missing => {
            let message = format!(
                "RDS instance {identifier} was deleted outside the operator; driftPolicy is Report, so it is not recreated"
            );
            report_failure(db, ctx, "DeletedOutOfBand", &message).await;
            Ok(Action::requeue(drift_interval(db, &intervals)))
        }
        ApplyStep::Foreign { owner } => {
            let message = format!(
                "an RDS instance named {identifier} already exists and is not managed by this DBInstance ({}); \
                 choose another dbInstanceIdentifier, or delete or re-tag that instance",
                match owner {
                    Some(o) => format!("it belongs to {o}"),
                    None => "it has no rds-operator ownership tag".to_owned(),
                }
            );
            report_failure(db, ctx, "IdentifierInUse", &message).await;
            Ok(Action::requeue(intervals.settled))
        }
        ApplyStep::Observe => {
            let observed = observed.ok_or(Error::MissingObjectKey("observed instance"))?;
            sync(db, ctx, &uid, &namespace, &identifier, observed, previous).await
        }
    }
}

/// Our instance exists: report it, and put right what differs from the spec.
async fn sync(
    db: &DBInstance,
    ctx: &Context,
    uid: &str,
    namespace: &str,
    identifier: &str,
    observed: ObservedInstance,
    previous: DBInstanceStatus,
) -> Result<Action, Error> {
    let intervals = ctx.observer.intervals;
    if previous.db_instance_status.as_deref() != Some(observed.status.as_str()) {
        let (ready, _, message) = planner::readiness(&observed.status);
        if ready {
            publish(ctx, db, EventType::Normal, "Available", "Observe", message).await;
        } else if !is_transitional(&observed.status) {
            publish(ctx, db, EventType::Warning, "Failed", "Observe", message).await;
        }
    }

    let password = secrets::master_password(db, ctx, namespace, Some(&observed)).await?;
    let hash = password
        .as_ref()
        .filter(|_| secrets::operator_sends_password(db))
        .map(|p| planner::password_hash(uid, p.expose_secret()));
    // No hash yet (an adopted instance): take the Secret's password as the one RDS has.
    let rotate =
        matches!((&hash, &previous.master_user_password_hash), (Some(h), Some(p)) if h != p);
    let desired_tags = planner::creation_tags(&db.spec, uid, namespace, &db.name_any());
    let comparison = drift::compare(&db.spec, &observed, &desired_tags, rotate);

    let mut status = planner::observed_status(identifier, &observed);
    status.master_user_password_hash = previous.master_user_password_hash.clone().or(hash.clone());
    status.last_drift = previous.last_drift.clone();
    status.connection_secret = previous.connection_secret.clone();
    // The connection Secret follows what RDS holds: while a new password is still to be sent, it
    // keeps the one RDS has.
    if let Some(password) = password.as_ref().filter(|_| !rotate) {
        if secrets::sync_connection_secret(db, ctx, namespace, &observed, password).await? {
            let name = db
                .spec
                .connection_secret
                .as_ref()
                .map(|c| c.name.clone())
                .unwrap_or_default();
            publish(
                ctx,
                db,
                EventType::Normal,
                "ConnectionSecretWritten",
                "Update",
                format!("wrote the connection details to Secret {name}"),
            )
            .await;
        }
        status.connection_secret = db.spec.connection_secret.as_ref().map(|c| c.name.clone());
    }
    let spec_changed = db.metadata.generation != previous.observed_generation;
    let refused = comparison.refused.join("; ");
    let settled_requeue = Action::requeue(settled_requeue(db, &intervals));

    if comparison.in_sync() {
        let synced = if !refused.is_empty() {
            if spec_changed {
                publish(
                    ctx,
                    db,
                    EventType::Warning,
                    "UnsupportedChange",
                    "Update",
                    refused.clone(),
                )
                .await;
            }
            (false, "UnsupportedChange", refused)
        } else if !observed.pending_modified_values.is_empty() {
            let pending = observed
                .pending_modified_values
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            (
                false,
                "Pending",
                format!("RDS holds changes to {pending} until they are applied"),
            )
        } else {
            (
                true,
                "Synced",
                "the RDS instance matches the spec".to_owned(),
            )
        };
        write_observed(db, ctx, status, &observed.status, synced).await?;
        return Ok(if is_transitional(&observed.status) {
            Action::requeue(intervals.busy)
        } else {
            settled_requeue
        });
    }

    let fields = comparison.field_list();
    let details = planner::describe_diffs(&comparison.diffs);
    if db.spec.drift_policy == DriftPolicy::Report {
        let record = planner::drift_record(
            previous.last_drift.as_ref(),
            "Reported",
            &comparison.diffs,
            &now(),
        );
        if previous.last_drift.as_ref() != Some(&record) {
            publish(
                ctx,
                db,
                EventType::Warning,
                "DriftDetected",
                "Observe",
                format!("RDS differs from the spec (driftPolicy Report, not corrected): {details}"),
            )
            .await;
        }
        status.last_drift = Some(record);
        let synced = (
            false,
            "Drifted",
            format!("RDS differs from the spec in {fields}; driftPolicy is Report"),
        );
        write_observed(db, ctx, status, &observed.status, synced).await?;
        return Ok(settled_requeue);
    }
    if observed.status != "available" {
        let synced = (
            false,
            "Waiting",
            format!(
                "RDS is {}; the change of {fields} waits until the instance is available",
                observed.status
            ),
        );
        write_observed(db, ctx, status, &observed.status, synced).await?;
        return Ok(Action::requeue(intervals.busy));
    }

    let arn = observed.arn.clone().unwrap_or_default();
    let mut after = observed.clone();
    if let Some(m) = &comparison.modification {
        ctx.observer.mutated(identifier);
        after = ctx.rds.modify(identifier, m, password.as_ref()).await?;
        if m.rotate_password {
            status.master_user_password_hash = hash.clone();
            publish(
                ctx,
                db,
                EventType::Normal,
                "PasswordRotated",
                "Update",
                "sent the new master password from the Secret to RDS".into(),
            )
            .await;
        }
    }
    if !comparison.tags_to_add.is_empty() {
        ctx.observer.mutated(identifier);
        ctx.rds.add_tags(&arn, &comparison.tags_to_add).await?;
    }
    if !comparison.tags_to_remove.is_empty() {
        ctx.observer.mutated(identifier);
        ctx.rds
            .remove_tags(&arn, &comparison.tags_to_remove)
            .await?;
    }
    let changed: Vec<_> = comparison
        .diffs
        .iter()
        .filter(|d| d.field != "masterUserPassword")
        .cloned()
        .collect();
    if !changed.is_empty() {
        if spec_changed {
            publish(
                ctx,
                db,
                EventType::Normal,
                "Updating",
                "Update",
                format!(
                    "applying the spec to RDS: {}",
                    planner::describe_diffs(&changed)
                ),
            )
            .await;
        } else {
            let record = planner::drift_record(None, "Corrected", &changed, &now());
            ctx.metrics.drift_corrected(changed.iter().map(|d| d.field));
            publish(
                ctx,
                db,
                EventType::Warning,
                "DriftCorrected",
                "Update",
                format!(
                    "RDS was changed outside the operator; put back to the spec: {}",
                    planner::describe_diffs(&changed)
                ),
            )
            .await;
            status.last_drift = Some(record);
        }
    }
    info!(identifier, fields, "sent changes to RDS");
    if !after.status.is_empty() {
        status.db_instance_status = Some(after.status.clone());
        status.pending_modified_values = after.pending_modified_values.clone();
    }
    let state = status.db_instance_status.clone().unwrap_or_default();
    let synced = (false, "Updating", format!("sent {fields} to RDS"));
    write_observed(db, ctx, status, &state, synced).await?;
    Ok(Action::requeue(intervals.busy))
}

/// When to look again at a settled instance without being woken. The shared poll wakes a
/// DBInstance whose instance changes, the watches wake it when its spec or Secrets change, so this
/// is a safety net (ten drift intervals), except where only a timer notices: a drift interval
/// shorter than the operator's, or a password RDS rotates in Secrets Manager.
fn settled_requeue(db: &DBInstance, intervals: &PollIntervals) -> Duration {
    let own = drift_interval(db, intervals);
    if own < intervals.settled || db.spec.manage_master_user_password == Some(true) {
        own
    } else {
        intervals.settled * 10
    }
}

/// The drift interval of this DBInstance: its spec.driftInterval, else the operator's.
fn drift_interval(db: &DBInstance, intervals: &PollIntervals) -> Duration {
    db.spec
        .drift_interval
        .as_deref()
        .and_then(|d| planner::parse_duration(d).ok())
        .unwrap_or(intervals.settled)
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

async fn cleanup(db: &DBInstance, ctx: &Context) -> Result<Action, Error> {
    if !db.finalizers().iter().any(|f| f == FINALIZER) {
        return Ok(Action::await_change());
    }
    let uid = db.uid().ok_or(Error::MissingObjectKey("uid"))?;
    let identifier = db.identifier();
    let intervals = ctx.observer.intervals;
    let observed = ctx
        .observer
        .observe(&identifier, drift_interval(db, &intervals))
        .await?;
    match planner::plan_cleanup(
        db.spec.deletion_policy,
        &uid,
        &identifier,
        observed.as_ref(),
    ) {
        CleanupStep::Release(why) => {
            let (reason, message) = match why {
                Released::Gone => ("Deleted", format!("RDS instance {identifier} is gone")),
                Released::Retained => (
                    "Retained",
                    format!("deletionPolicy is Retain: RDS instance {identifier} is left running"),
                ),
                Released::NotOurs => (
                    "Released",
                    format!(
                        "RDS instance {identifier} is not managed by this DBInstance and was left alone"
                    ),
                ),
            };
            let namespace = db.namespace().ok_or(Error::MissingObjectKey("namespace"))?;
            secrets::release(db, ctx, &namespace, why == Released::Retained).await?;
            ctx.metrics.set_state(&uid, None);
            publish(ctx, db, EventType::Normal, reason, "Delete", message).await;
            remove_finalizer(db, ctx).await?;
            Ok(Action::await_change())
        }
        CleanupStep::Wait => {
            if let Some(o) = &observed {
                let mut status = planner::observed_status(&identifier, o);
                let previous = db.status.clone().unwrap_or_default();
                status.master_user_password_hash = previous.master_user_password_hash;
                status.last_drift = previous.last_drift;
                let synced = (
                    true,
                    "Deleting",
                    format!("RDS instance {identifier} is being deleted"),
                );
                write_observed(db, ctx, status, &o.status, synced).await?;
            }
            Ok(Action::requeue(intervals.busy))
        }
        CleanupStep::Delete { final_snapshot } => {
            ctx.observer.mutated(&identifier);
            ctx.rds
                .delete(&identifier, final_snapshot.as_deref())
                .await?;
            let message = match &final_snapshot {
                Some(s) => format!("deleting RDS instance {identifier} after final snapshot {s}"),
                None => format!("deleting RDS instance {identifier}"),
            };
            info!(identifier, final_snapshot, "deleting RDS instance");
            publish(ctx, db, EventType::Normal, "Deleting", "Delete", message).await;
            Ok(Action::requeue(intervals.busy))
        }
        CleanupStep::Protected => {
            let message = format!(
                "RDS instance {identifier} has deletion protection on; set spec.deletionProtection to false \
                 (or turn it off in AWS) to let the deletion proceed"
            );
            report_failure(db, ctx, "DeletionProtected", &message).await;
            Ok(Action::requeue(intervals.settled))
        }
    }
}

async fn ensure_finalizer(db: &DBInstance, ctx: &Context) -> Result<(), Error> {
    if db.finalizers().iter().any(|f| f == FINALIZER) {
        return Ok(());
    }
    let mut finalizers = db.finalizers().to_vec();
    finalizers.push(FINALIZER.to_owned());
    patch_finalizers(db, ctx, finalizers).await
}

async fn remove_finalizer(db: &DBInstance, ctx: &Context) -> Result<(), Error> {
    let finalizers = db
        .finalizers()
        .iter()
        .filter(|f| *f != FINALIZER)
        .cloned()
        .collect();
    patch_finalizers(db, ctx, finalizers).await
}

/// Sets metadata.finalizers, guarded by resourceVersion so a concurrent change is never overwritten.
async fn patch_finalizers(
    db: &DBInstance,
    ctx: &Context,
    finalizers: Vec<String>,
) -> Result<(), Error> {
    let api: Api<DBInstance> =
        Api::namespaced(ctx.client.clone(), &db.namespace().unwrap_or_default());
    let patch = json!({
        "metadata": { "finalizers": finalizers, "resourceVersion": db.resource_version() }
    });
    api.patch(
        &db.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map_err(kube_err("patch finalizers"))?;
    Ok(())
}

/// Writes the status with Ready per the RDS state and Synced as given.
async fn write_observed(
    db: &DBInstance,
    ctx: &Context,
    mut status: DBInstanceStatus,
    rds_state: &str,
    synced: (bool, &str, String),
) -> Result<(), Error> {
    let generation = db.metadata.generation;
    if let Some(uid) = db.uid() {
        ctx.metrics.set_state(&uid, Some(rds_state));
    }
    let (ready, reason, message) = planner::readiness(rds_state);
    status.conditions = vec![
        planner::condition("Ready", ready, &reason, &message, generation),
        planner::condition("Synced", synced.0, synced.1, &synced.2, generation),
    ];
    patch_status(db, ctx, status).await
}

/// Ready=False and Synced=False with the reason, keeping what was last observed, plus a Warning Event.
/// Best effort: a failure to report is logged, not raised over the original error.
async fn report_failure(db: &DBInstance, ctx: &Context, reason: &str, message: &str) {
    let generation = db.metadata.generation;
    let mut status = db.status.clone().unwrap_or_default();
    status.conditions = vec![
        planner::condition("Ready", false, reason, message, generation),
        planner::condition("Synced", false, reason, message, generation),
    ];
    let changed = db.status.as_ref().is_none_or(|s| {
        !s.conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.reason == reason && c.message == message)
    });
    if changed {
        publish(
            ctx,
            db,
            EventType::Warning,
            reason,
            "Reconcile",
            message.to_owned(),
        )
        .await;
    }
    if let Err(e) = patch_status(db, ctx, status).await {
        warn!(error = %e, "could not report failure in status");
    }
}

async fn patch_status(
    db: &DBInstance,
    ctx: &Context,
    mut status: DBInstanceStatus,
) -> Result<(), Error> {
    let previous = db
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    status.conditions = planner::merge_conditions(previous, status.conditions, &now());
    status.observed_generation = db.metadata.generation;
    if db.status.as_ref() == Some(&status) {
        return Ok(());
    }
    let api: Api<DBInstance> =
        Api::namespaced(ctx.client.clone(), &db.namespace().unwrap_or_default());
    let patch = json!({
        "apiVersion": DBInstance::api_version(&()),
        "kind": DBInstance::kind(&()),
        "status": status,
    });
    api.patch_status(
        &db.name_any(),
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await
    .map_err(kube_err("patch status"))?;
    Ok(())
}

async fn publish(
    ctx: &Context,
    db: &DBInstance,
    type_: EventType,
    reason: &str,
    action: &str,
    note: String,
) {
    let event = Event {
        type_,
        reason: reason.to_owned(),
        note: Some(note),
        action: action.to_owned(),
        secondary: None,
    };
    if let Err(e) = ctx.recorder.publish(&event, &db.object_ref(&())).await {
        warn!(error = %e, reason, "could not publish event");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_caps() {
        assert_eq!(backoff_delay(1), Duration::from_secs(2));
        assert_eq!(backoff_delay(2), Duration::from_secs(4));
        assert_eq!(backoff_delay(5), Duration::from_secs(32));
        assert_eq!(backoff_delay(30), Duration::from_secs(300));
    }
}
