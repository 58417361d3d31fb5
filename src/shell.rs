//! The one reconcile shell every kind runs in, and its one error policy: the tracing span, the
//! read-your-own-writes guard, the health timer, the metrics timer and result label, the
//! per-object backoff with jitter, and failure reporting over what the plan found. A kind supplies
//! its pass of read → plan → act → report ([`Shell::once`]) and how a failure is reported; the
//! group kinds get theirs from the `Reconciled` trait of `managed.rs`.

use std::sync::Arc;

use kube::runtime::controller::Action;
use kube::{Resource, ResourceExt};
use tracing::{Instrument, debug, warn};

use crate::context::Context;
use crate::dbinstance::plan::Requeue;
use crate::error::Error;

/// How a pass that did not fail ended: when to look again, and what the plan refused (the metric
/// label; None for success).
pub struct Outcome {
    pub requeue: Requeue,
    pub refusal: Option<&'static str>,
}

/// A pass that failed, and what its plan found before the failing step (None: it failed before
/// planning): the failure is reported over that, not over the last status.
pub struct Failed<P> {
    pub error: Error,
    pub planned: Option<P>,
}

impl<P> From<Error> for Failed<P> {
    fn from(error: Error) -> Self {
        Failed {
            error,
            planned: None,
        }
    }
}

/// What the shell needs of a kind.
pub trait Shell: Resource<DynamicType = ()> + Send + Sync + 'static {
    /// The kind in spans and logs.
    const KIND: &'static str;
    /// What its reconciles share (the operator's [`Context`], and what the kind adds).
    type Ctx: Send + Sync + 'static;
    /// What a failed pass had planned to report.
    type Planned: Send;
    fn context(ctx: &Self::Ctx) -> &Context;
    /// One pass: read → plan → act → report.
    fn once(
        &self,
        ctx: &Self::Ctx,
    ) -> impl Future<Output = Result<Outcome, Failed<Self::Planned>>> + Send;
    /// Conditions and an Event for a failed pass; best effort.
    fn report_failure(
        &self,
        ctx: &Self::Ctx,
        error: &Error,
        planned: Option<Self::Planned>,
    ) -> impl Future<Output = ()> + Send;
}

/// The reconcile of every kind.
pub async fn reconcile<K: Shell>(obj: Arc<K>, shared: Arc<K::Ctx>) -> Result<Action, Error> {
    let namespace = obj
        .namespace()
        .ok_or(Error::MissingObjectKey("namespace"))?;
    let span = tracing::info_span!(
        "reconcile",
        kind = K::KIND,
        namespace = %namespace,
        resource = %obj.name_any()
    );
    async move {
        let ctx = K::context(&shared);
        let uid = obj.uid().ok_or(Error::MissingObjectKey("uid"))?;
        if ctx.writes.behind(obj.meta()) {
            debug!("the cache is older than our last write; waiting for it");
            return Ok(Action::requeue(crate::writes::CACHE_WAIT));
        }
        let started = std::time::Instant::now();
        let _running = ctx.health.reconcile_started();
        let result = obj.once(&shared).await;
        let label = match &result {
            Ok(outcome) => outcome.refusal.unwrap_or("success"),
            Err(failed) => failed.error.metric_label(),
        };
        ctx.metrics.reconciled(label, started.elapsed());
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
            Err(Failed { error, planned }) => {
                warn!(error = %error, "reconcile failed");
                obj.report_failure(&shared, &error, planned).await;
                Err(error)
            }
        }
    }
    .instrument(span)
    .await
}

/// The error policy of every kind: none after a terminal error (the next spec change wakes the
/// object); after a spent read budget, its refill time; else the per-object backoff (2 s, 4 s,
/// 8 s... up to 5 min), each with jitter.
pub fn error_policy<K: Shell>(obj: Arc<K>, error: &Error, shared: Arc<K::Ctx>) -> Action {
    if error.terminal() {
        return Action::await_change();
    }
    if let Some(wait) = error.retry_after() {
        let wait = wait.max(std::time::Duration::from_secs(1));
        return Action::requeue(crate::duration::jitter(wait, 0.25));
    }
    let ctx = K::context(&shared);
    Action::requeue(ctx.backoff(&obj.uid().unwrap_or_default(), obj.meta().generation))
}
