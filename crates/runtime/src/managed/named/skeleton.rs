//! Every named kind on the skeleton ([`Managed`]): its watches (the objects that refer to it,
//! its account), its read, its steps' calls, and the status it keeps after a pass or a failure.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::Controller;

use super::{Facts, NamedKind, NamedPlan, Step};
use crate::context::Context;
use crate::error::Error;
use crate::managed::apiserver::set_finalizer;
use crate::managed::conditions;
use crate::managed::locate::{AccountUsers, Located};
use crate::managed::plan::{KindStatus, PlannedEvent};
use crate::managed::references::{Referable, Referrers};
use crate::managed::{Failure, KindContext, Managed};

/// What a named kind's reconciles share.
pub struct Shared {
    pub ctx: Arc<Context>,
    /// How often to look again at a settled object.
    pub drift_interval: Duration,
    /// How often to look again at one RDS is busy with.
    pub busy_interval: Duration,
}

/// What the named kinds' reconciles share: the context and the drift interval.
impl KindContext for Shared {
    fn make(ctx: Arc<Context>) -> Arc<Shared> {
        let intervals = ctx.locations.intervals();
        Arc::new(Shared {
            ctx,
            drift_interval: intervals.settled,
            busy_interval: intervals.busy,
        })
    }

    fn context(&self) -> &Context {
        &self.ctx
    }
}

/// Every named kind on the skeleton: a DBInstance that starts or stops referring to it wakes it,
/// and its status is [`settled`] after a pass or [`failed`] after a failure.
impl<K: NamedKind> Managed for K {
    const KIND: &'static str = K::LABEL;
    type Ctx = Shared;
    type Facts = Facts<K>;
    type Step = Step<K::Own>;
    type Plan = NamedPlan<K>;
    type Answer = ();
    type Status = K::Status;
    type Where = Located;

    /// A resource can use an account (`locate::AccountUsers`).
    fn declare(ctx: &Context) {
        ctx.shared::<AccountUsers>().declare::<K>();
    }

    fn watches(
        controller: Controller<K>,
        shared: &Shared,
        namespace: Option<&str>,
    ) -> Controller<K> {
        let referrers = shared.ctx.shared::<Referrers<K>>();
        let controller = referrers.wake(controller, &shared.ctx.client, namespace);
        let controller = K::watches(controller, shared, namespace);
        crate::managed::locate::woken_by_accounts(controller, &shared.ctx)
    }

    async fn locate(&self, shared: &Shared) -> Result<Located, Error> {
        crate::managed::locate::locate(self, &shared.ctx).await
    }

    fn may_act(shared: &Shared, at: &Located) -> bool {
        at.may_act(&shared.ctx)
    }

    async fn read(&self, shared: &Shared, at: &Located) -> Result<Facts<K>, Error> {
        let (observed, extra) = self.observe(shared, &at.location).await?;
        Ok(Facts {
            object: self.clone(),
            observed,
            extra,
            referrers: referrers(&shared.ctx, self).await?,
            drift_interval: shared.drift_interval,
            busy_interval: shared.busy_interval,
            placement: at.placement.clone(),
            now: crate::duration::now(),
        })
    }

    fn plan(facts: &Facts<K>) -> Self::Plan {
        K::plan(facts)
    }

    async fn act(
        &self,
        shared: &Shared,
        at: &Located,
        step: &Step<K::Own>,
    ) -> Result<Option<()>, Error> {
        let (ctx, at) = (&shared.ctx, &*at.location);
        // The shared listing is stale for it while the call is out, then until a listing that
        // starts after its answer.
        let _stale = (!matches!(step, Step::AddFinalizer | Step::RemoveFinalizer))
            .then(|| (at.observer.listing::<K::Observed>()).changing(&self.rds_name_of()));
        match step {
            Step::AddFinalizer => set_finalizer(ctx, self, true).await?,
            Step::Own(own) => K::act(self, shared, at, own).await?,
            Step::AddTags { arn, tags } => at.rds.add_tags(arn, tags).await?,
            Step::RemoveTags { arn, keys } => at.rds.remove_tags(arn, keys).await?,
            Step::Delete { name } => K::delete(self, shared, at, name).await?,
            Step::RemoveFinalizer => set_finalizer(ctx, self, false).await?,
        }
        Ok(None)
    }

    fn status(&self) -> Option<&K::Status> {
        K::status(self)
    }

    fn connection_write(step: &Step<K::Own>) -> Option<&str> {
        match step {
            Step::Own(own) => K::connection_write(own),
            _ => None,
        }
    }

    fn settle(&self, facts: &Facts<K>, plan: &Self::Plan, _: Option<&()>) -> Option<K::Status> {
        let generation = self.meta().generation;
        let planned = plan.status.as_ref()?;
        let mut status = settled::<K>(K::status(self), planned, generation, &facts.now);
        *K::placement_mut(&mut status) = Some(facts.placement.clone());
        Some(status)
    }

    fn failed(&self, failure: &Failure<'_, Self::Plan>) -> (K::Status, Option<PlannedEvent>) {
        let Failure {
            reason,
            message,
            planned,
            now,
            ..
        } = *failure;
        // A Secret the plan writes that was not written before the failure: Ready is not kept
        // from the plan then.
        let unwritten = failure.unwritten(<K as Managed>::connection_write);
        let mut planned = planned.and_then(|p| p.status.clone());
        if let Some(p) = planned.as_mut() {
            p.ready = conditions::ready_unless_unwritten(&p.ready, &unwritten, message);
        }
        let (mut status, event) = failed::<K>(
            K::status(self),
            planned.as_ref(),
            self.meta().generation,
            reason,
            message,
            now,
        );
        // Where the resource lives is only ever recorded by a pass that placed it.
        let mut previous = K::status(self).cloned().unwrap_or_default();
        *K::placement_mut(&mut status) = K::placement_mut(&mut previous).take();
        (status, event)
    }
}

/// Every named kind is referred to by name (a DBInstance names its groups).
impl<K: NamedKind> Referable for K {
    type Status = K::Status;
    const LABEL: &'static str = K::LABEL;
    fn status(&self) -> Option<&K::Status> {
        NamedKind::status(self)
    }
    fn conditions(status: &K::Status) -> &[Condition] {
        <K as NamedKind>::conditions(status)
    }
    fn rds_name(status: &K::Status) -> Option<String> {
        <K as NamedKind>::rds_name(status)
    }
}

/// The objects of the resource's namespace that refer to it (the DBInstances that name it), a kind
/// each, read from the API (fresh: a deletion waits on them) only when the resource is being deleted,
/// the one decision that needs them; otherwise none, and no read.
pub async fn referrers<K: NamedKind>(ctx: &Context, obj: &K) -> Result<Vec<String>, Error> {
    if obj.meta().deletion_timestamp.is_none() {
        return Ok(Vec::new());
    }
    let found = ctx.shared::<Referrers<K>>().of(&ctx.client, obj).await?;
    let mut kinds: Vec<(String, Vec<String>)> = Vec::new();
    for (kind, name) in found {
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, names)) => names.push(name),
            None => kinds.push((kind, vec![name])),
        }
    }
    Ok((kinds.into_iter())
        .map(|(kind, names)| format!("{kind} {}", names.join(", ")))
        .collect())
}

/// A resource's status after a pass: the plan's fields, with its conditions merged into the previous
/// ones, at this generation.
pub fn settled<K: NamedKind>(
    previous: Option<&K::Status>,
    planned: &KindStatus<K::Status>,
    generation: Option<i64>,
    now: &str,
) -> K::Status {
    let mut status = planned.fields.clone();
    let before = previous.map(K::conditions).unwrap_or_default();
    let (ready, synced, busy) = (&planned.ready, &planned.synced, planned.busy);
    *K::conditions_mut(&mut status) =
        conditions::conditions(before, ready, synced, busy, generation, now);
    *K::observed_generation(&mut status) = generation;
    status
}

/// A resource's status after a failure, and its Event: what the plan found (no step's record
/// outlives a failed step), Synced False with the reason; Ready as the plan found it (or as last
/// written, when the pass failed before planning), unless the failure says the resource cannot be
/// reached ([`conditions::failed`], [`conditions::ready_after_failure`]).
pub fn failed<K: NamedKind>(
    previous: Option<&K::Status>,
    planned: Option<&KindStatus<K::Status>>,
    generation: Option<i64>,
    reason: &str,
    message: &str,
    now: &str,
) -> (K::Status, Option<PlannedEvent>) {
    let before = previous.map(K::conditions).unwrap_or_default();
    let (ready, synced, event) = conditions::failed(before, reason, message);
    let ready = conditions::ready_after_failure(planned.map(|p| &p.ready), ready, reason);
    // What the plan found of RDS in this pass, but no record the plan made of a step (a role
    // change sent, an export started, an account unshared): that must not outlive the step's
    // failure, or the next pass would take it as done and never send it again. The kind puts its
    // records back as the previous pass had them (`NamedKind::records_after_failure`), and the
    // names the operator may have applied are kept from both.
    let fields = match planned {
        Some(p) => {
            let mut fields = p.fields.clone();
            let before = previous.cloned().unwrap_or_default();
            super::keep_applied(
                K::applied_tag_keys_mut(&mut fields),
                K::applied_tag_keys(&before),
            );
            K::records_after_failure(&mut fields, &before);
            fields
        }
        None => previous.cloned().unwrap_or_default(),
    };
    let status = KindStatus {
        fields,
        ready,
        synced,
        busy: false,
    };
    (settled::<K>(previous, &status, generation, now), event)
}
