//! The skeleton every kind runs on, written once: its controller (the lean cache, the kind's
//! wake-ups, concurrency, graceful shutdown), and for each reconcile the tracing span, the
//! read-your-own-writes guard, the health timer, the metrics timer and result label, the four
//! steps in order (read → plan (pure) → act → report), the one status writer, Events published
//! after their steps succeed, failures reported over what the plan found, and the one error policy
//! (per-object backoff with jitter). What differs per kind is the [`Managed`] implementation.

use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use kube::ResourceExt;
use kube::runtime::controller::{Action, Config as ControllerConfig};
use kube::runtime::reflector::ObjectRef;
use tokio::sync::watch;
use tracing::{Instrument, debug, info, warn};

use super::KindContext;
use super::apiserver::{lean_controller, patch_status, publish};
use super::plan::Requeue;
use super::recovery::{Waiting, wakes};
use super::{Failure, Managed, Planned, scoped};
use crate::aws_error::AwsError;
use crate::context::Context;
use crate::error::Error;

/// How a pass that did not fail ended: when to look again, and what the plan refused (the metric
/// label; None for success).
struct Outcome {
    requeue: Requeue,
    refusal: Option<&'static str>,
}

/// A pass that failed, and what its plan found before the failing step (None: it failed before
/// planning): the failure is reported over that, not over the last status.
struct Failed<P> {
    error: Error,
    planned: Option<P>,
    /// How many of the plan's steps were made before the failure.
    completed: usize,
}

impl<P> From<Error> for Failed<P> {
    fn from(error: Error) -> Self {
        Failed {
            error,
            planned: None,
            completed: 0,
        }
    }
}

/// One kind's controller in one namespace (or all): its run until shutdown, and a wait for its
/// cache to sync.
pub struct Running {
    pub run: BoxFuture<'static, ()>,
    /// True once the cache has synced; false when it never will (shut down first).
    pub synced: BoxFuture<'static, bool>,
}

/// The controller of kind `K` for one namespace (or all), with the kind's wake-ups.
pub fn controller<K: Managed>(
    ctx: &Arc<Context>,
    namespace: Option<&str>,
    concurrency: u16,
    mut shutdown: watch::Receiver<bool>,
) -> Running {
    info!(
        namespace = namespace.unwrap_or("*"),
        kind = K::KIND,
        "starting controller"
    );
    let shared = K::Ctx::make(ctx.clone());
    let controller = lean_controller(scoped::<K>(&ctx.client, namespace))
        .with_config(ControllerConfig::default().concurrency(concurrency));
    let controller = K::watches(controller, &shared, namespace);
    // A location's recovery wakes the objects that waited on it (`recovery`).
    let recoveries = ctx.locations.calls().healths().recoveries();
    let controller = controller.reconcile_on(wakes(ctx.shared::<Waiting<K>>(), recoveries));
    let store = controller.store();
    let run = controller
        .graceful_shutdown_on(async move {
            let _ = shutdown.wait_for(|stop| *stop).await;
        })
        .run(reconcile::<K>, error_policy::<K>, shared)
        .for_each(|result| async move {
            match result {
                Ok((obj, _)) => debug!(kind = K::KIND, object = %obj, "reconciled"),
                // Logged where it failed (`reconcile`); an object not in the cache is most often
                // one deleted while a look again was due.
                Err(
                    e @ (kube::runtime::controller::Error::ReconcilerFailed(..)
                    | kube::runtime::controller::Error::ObjectNotFound(..)),
                ) => debug!(error = %e, kind = K::KIND, "reconcile failed"),
                // A watch's error, the queue's.
                Err(e) => warn!(error = %e, kind = K::KIND, "controller error"),
            }
        });
    let synced = async move { store.wait_until_ready().await.is_ok() };
    Running {
        run: Box::pin(run),
        synced: Box::pin(synced),
    }
}

/// The reconcile of every kind.
pub async fn reconcile<K: Managed>(obj: Arc<K>, shared: Arc<K::Ctx>) -> Result<Action, Error> {
    let namespace = obj.namespace().unwrap_or_default();
    let span = tracing::info_span!(
        "reconcile",
        kind = K::KIND,
        namespace = %namespace,
        resource = %obj.name_any()
    );
    async move {
        let ctx = shared.context();
        let uid = obj.uid().ok_or(Error::MissingObjectKey("uid"))?;
        if ctx.shared::<super::writes::Writes>().behind(obj.meta()) {
            debug!("the cache is older than our last write; waiting for it");
            return Ok(Action::requeue(super::writes::CACHE_WAIT));
        }
        let started = std::time::Instant::now();
        let _running = ctx.health.reconcile_started();
        let result = once(&*obj, &shared).await;
        let label = match &result {
            Ok(outcome) => outcome.refusal.unwrap_or("success"),
            Err(failed) => failed.error.metric_label(),
        };
        ctx.metrics.reconciled(K::KIND, label, started.elapsed());
        match result {
            Ok(Outcome { requeue, refusal }) => {
                if refusal.is_none() {
                    ctx.reset_failures(&uid);
                }
                Ok(match requeue {
                    Requeue::After(d) => Action::requeue(d),
                    Requeue::AwaitChange => Action::await_change(),
                    Requeue::Backoff => Action::requeue(ctx.backoff(&uid, obj.meta().generation)),
                })
            }
            Err(Failed { error, .. }) if matches!(error, Error::Elsewhere) => {
                debug!(error = %error, "another replica leads this object's shard");
                Err(error)
            }
            Err(Failed {
                error,
                planned,
                completed,
            }) => {
                warn!(error = %error, "reconcile failed");
                // Refused by its location's breaker, or unanswered there (which opened it): the
                // object waits for the location's recovery, which wakes every waiter at once.
                if let Some(location) = waits_on(ctx, &error) {
                    let mutation = planned.as_ref().is_some_and(|p| !p.steps().is_empty());
                    let waiting = ctx.shared::<Waiting<K>>();
                    waiting.add(location, ObjectRef::from_obj(&*obj), mutation);
                }
                report_failure(&*obj, &shared, &error, (planned.as_ref(), completed)).await;
                Err(error)
            }
        }
    }
    .instrument(span)
    .await
}

/// The location whose recovery the object waits for after `error`: the one whose breaker refused
/// the call, or the one that did not answer it while its breaker is still open (a probe may have
/// closed it since: then the object backs off on its own, as after any failure).
fn waits_on(ctx: &Context, error: &Error) -> Option<u64> {
    match error {
        Error::Aws(AwsError {
            wait: Some(refused),
            ..
        }) => Some(refused.location),
        Error::Aws(AwsError {
            location: Some(location),
            ..
        }) => (ctx.locations.calls().healths().held(*location)).then_some(*location),
        _ => None,
    }
}

/// The error policy of every kind: none after a terminal error (the next spec change wakes the
/// object); while its location's breaker holds its calls back, the location's recovery (which
/// wakes it; [`breaker::REFUSED_WAIT`] is the safety net), never a backoff of its own, so an
/// outage ends for every object at once; after a spent read budget, its refill time; else the
/// per-object backoff (2 s, 4 s, 8 s... up to 5 min), each with jitter.
///
/// [`breaker::REFUSED_WAIT`]: crate::breaker::REFUSED_WAIT
pub fn error_policy<K: Managed>(obj: Arc<K>, error: &Error, shared: Arc<K::Ctx>) -> Action {
    if error.terminal() {
        return Action::await_change();
    }
    let ctx = shared.context();
    let wait = match waits_on(ctx, error) {
        Some(_) => Some(crate::breaker::REFUSED_WAIT),
        None => error.retry_after(),
    };
    if let Some(wait) = wait {
        let wait = wait.max(std::time::Duration::from_secs(1));
        return Action::requeue(crate::duration::jitter(wait, 0.25));
    }
    Action::requeue(ctx.backoff(&obj.uid().unwrap_or_default(), obj.meta().generation))
}

/// One pass: locate → read → plan (pure) → act (the steps in order, up to the first failure, each
/// only while this replica may act there) → report (the Events whose steps succeeded; the status
/// when every step did).
async fn once<K: Managed>(obj: &K, shared: &K::Ctx) -> Result<Outcome, Failed<K::Plan>> {
    let ctx = shared.context();
    let at = obj.locate(shared).await?;
    let facts = obj.read(shared, &at).await?;
    let plan = K::plan(&facts);
    let (mut completed, mut answer, mut error) = (0, None, None);
    for step in plan.steps() {
        if !K::may_act(shared, &at) {
            error = Some(Error::Elsewhere);
            break;
        }
        match obj.act(shared, &at, step).await {
            Ok(answered) => {
                answer = answered.or(answer.take());
                completed += 1;
            }
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    if let Some(line) = plan.log() {
        info!("{line}");
    }
    for event in plan.events().iter().filter(|e| e.after <= completed) {
        publish(&ctx.recorder, obj, event).await;
    }
    if let Some(error) = error {
        return Err(Failed {
            error,
            planned: Some(plan),
            completed,
        });
    }
    let status = obj.settle(&facts, &plan, answer.as_ref());
    if status.is_some() && !K::may_act(shared, &at) {
        return Err(Error::Elsewhere.into());
    }
    if let Some(status) = &status {
        write_status(ctx, obj, status).await?;
    }
    obj.reported(shared, &plan, status.as_ref());
    Ok(Outcome {
        requeue: plan.requeue(),
        refusal: plan.refusal(),
    })
}

/// The one status writer: by server-side apply, when the status changed.
async fn write_status<K: Managed>(ctx: &Context, obj: &K, status: &K::Status) -> Result<(), Error> {
    if obj.status() == Some(status) {
        return Ok(());
    }
    patch_status(ctx, obj, status).await
}

/// A failure with a reason the user can act on, reported in status (over what the plan found) and
/// by an Event when that is new; best effort: a failure to report is logged, not raised over the
/// original error.
async fn report_failure<K: Managed>(
    obj: &K,
    shared: &K::Ctx,
    error: &Error,
    (planned, completed): (Option<&K::Plan>, usize),
) {
    let Some((reason, message)) = error.user_facing() else {
        return;
    };
    let ctx = shared.context();
    let now = crate::duration::now();
    let (reason, message) = (reason.as_str(), message.as_str());
    let failure = Failure {
        reason,
        message,
        planned,
        completed,
        now: &now,
    };
    let (status, event) = obj.failed(&failure);
    if let Some(event) = event {
        publish(&ctx.recorder, obj, &event).await;
    }
    if let Err(e) = write_status(ctx, obj, &status).await {
        warn!(error = %e, "could not report failure in status");
    }
}
