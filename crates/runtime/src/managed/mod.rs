//! What every kind shares, written once: the skeleton every reconcile runs in ([`skeleton`]: the
//! watches, the span, metrics and health timer, read → plan → act → report, the one status writer,
//! the error policy with backoff and jitter, the read-your-own-writes guard), the API-server writes
//! ([`apiserver`]: finalizer, status by server-side apply, Events), the conditions ([`conditions`]),
//! the plan vocabulary ([`plan`]), the named kinds' trait, skeleton and shared plan ([`named`]),
//! references between kinds ([`references`]), the CRD parts ([`crd`]), the ownership tags
//! ([`tags`]), the write tracker ([`writes`]) and the AWS error classes ([`aws_error`]).
//!
//! A kind is one folder with its CRD types, its pure plan and table tests, its SDK calls, and an
//! implementation of [`Managed`] (or, for a kind whose object is one named RDS resource, of
//! [`named::NamedKind`]); `kinds.rs` registers it.

use std::fmt::Debug;
use std::sync::Arc;

use kube::Resource;
use kube::runtime::Controller;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::context::Context;
use crate::error::Error;

pub mod apiserver;
pub mod claim;
pub mod conditions;
pub mod fights;
pub mod locate;
pub mod named;
pub mod placement;
pub mod plan;
pub mod recovery;
pub mod references;
pub mod roles;
pub mod skeleton;
pub mod stores;
pub mod tags;
pub mod triggers;
pub mod writes;

use plan::{PlannedEvent, Requeue};

/// A kind of this operator, namespaced or cluster-scoped.
pub trait Kind:
    Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + Serialize + DeserializeOwned
{
}

impl<K> Kind for K where
    K: Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + Serialize + DeserializeOwned
{
}

/// How the API of a kind of this scope is reached: in one namespace or in all of them for a
/// namespaced kind; always cluster-wide for a cluster-scoped one.
pub trait ApiScope {
    /// Whether objects of this scope live in a namespace.
    const NAMESPACED: bool;
    fn api<K: Resource<DynamicType = (), Scope = Self>>(
        client: &kube::Client,
        namespace: Option<&str>,
    ) -> kube::Api<K>;
}

impl ApiScope for kube::core::NamespaceResourceScope {
    const NAMESPACED: bool = true;
    fn api<K: Resource<DynamicType = (), Scope = Self>>(
        client: &kube::Client,
        namespace: Option<&str>,
    ) -> kube::Api<K> {
        match namespace {
            Some(ns) => kube::Api::namespaced(client.clone(), ns),
            None => kube::Api::all(client.clone()),
        }
    }
}

impl ApiScope for kube::core::ClusterResourceScope {
    const NAMESPACED: bool = false;
    fn api<K: Resource<DynamicType = (), Scope = Self>>(
        client: &kube::Client,
        _namespace: Option<&str>,
    ) -> kube::Api<K> {
        kube::Api::all(client.clone())
    }
}

/// What a kind's reconciles share, made once from the operator's [`Context`]: the context itself,
/// or the context with what the kind adds.
pub trait KindContext: Send + Sync + 'static {
    fn make(ctx: Arc<Context>) -> Arc<Self>;
    fn context(&self) -> &Context;
}

impl KindContext for Context {
    fn make(ctx: Arc<Context>) -> Arc<Context> {
        ctx
    }

    fn context(&self) -> &Context {
        self
    }
}

/// What a kind supplies to the skeleton: its facts and how to read them, its pure plan, its steps
/// and how to run one, and its status with how a pass and a failure are reported in it (pure).
pub trait Managed: Kind + Send + Sync + 'static {
    /// The kind in spans and logs.
    const KIND: &'static str;
    /// What its reconciles share: the operator's [`Context`] and what the kind adds.
    type Ctx: KindContext;
    type Facts: Send + Sync;
    type Step: Send + Sync;
    type Plan: Planned<Self::Step> + Send + Sync;
    /// What RDS answered to a step, which amends the status (`()` when nothing does).
    type Answer: Send + Sync;
    type Status: PartialEq + Serialize + Send + Sync;
    /// Where the object's AWS resource lives (`locations::Located`); `()` for a kind with none.
    type Where: Send + Sync;

    /// At start, before any controller runs: what the kind declares to the others through the
    /// context (the kinds it refers to: `references::Referrers`).
    fn declare(_ctx: &Context) {}
    /// The kind's wake-ups (references, owned Secrets, the observer), added to its controller.
    fn watches(
        controller: Controller<Self>,
        _ctx: &Self::Ctx,
        _namespace: Option<&str>,
    ) -> Controller<Self> {
        controller
    }
    /// Where the object lives: for every kind with an AWS resource, `locations::locate` (the
    /// placement rules, then the location). A refusal makes no AWS call.
    fn locate(&self, ctx: &Self::Ctx) -> impl Future<Output = Result<Self::Where, Error>> + Send;
    /// Whether this replica may still act there, checked before every step (with `--shards`, it
    /// must lead the pair's shard, renewed in time).
    fn may_act(_ctx: &Self::Ctx, _at: &Self::Where) -> bool {
        true
    }
    /// Read: what a decision needs, there.
    fn read(
        &self,
        ctx: &Self::Ctx,
        at: &Self::Where,
    ) -> impl Future<Output = Result<Self::Facts, Error>> + Send;
    /// Plan, pure.
    fn plan(facts: &Self::Facts) -> Self::Plan;
    /// Act: one step, and RDS's answer if it amends the status.
    fn act(
        &self,
        ctx: &Self::Ctx,
        at: &Self::Where,
        step: &Self::Step,
    ) -> impl Future<Output = Result<Option<Self::Answer>, Error>> + Send;
    fn status(&self) -> Option<&Self::Status>;
    /// Report, pure: the status once every step succeeded (None writes nothing).
    fn settle(
        &self,
        facts: &Self::Facts,
        plan: &Self::Plan,
        answer: Option<&Self::Answer>,
    ) -> Option<Self::Status>;
    /// Report a failure, pure: the status and the Event.
    fn failed(&self, failure: &Failure<'_, Self::Plan>) -> (Self::Status, Option<PlannedEvent>);
    /// The connection Secret this step writes (its name), if it writes one: a pass that fails
    /// before such a step was made is not Ready, for the Secret may not hold what status says
    /// ([`Failure::unwritten`]).
    fn connection_write(_step: &Self::Step) -> Option<&str> {
        None
    }
    /// After a pass's status is written: the kind's gauges.
    fn reported(&self, _ctx: &Self::Ctx, _plan: &Self::Plan, _status: Option<&Self::Status>) {}
}

/// A failed pass, as a kind reports it: AWS's (or the API server's) reason and message, what the
/// plan found (None: the pass failed before planning), and the time.
pub struct Failure<'a, P> {
    pub reason: &'a str,
    pub message: &'a str,
    pub planned: Option<&'a P>,
    /// How many of the planned steps were made before the one that failed.
    pub completed: usize,
    pub now: &'a str,
}

impl<'a, P> Failure<'a, P> {
    /// The connection Secrets the plan writes at or after the step that failed (`write`: the one a
    /// step writes, `Managed::connection_write`): they may not hold what status would say.
    pub fn unwritten<S: 'a>(&self, write: impl Fn(&'a S) -> Option<&'a str>) -> Vec<&'a str>
    where
        P: Planned<S>,
    {
        (self.planned.iter())
            .flat_map(|p| p.steps().iter().skip(self.completed))
            .filter_map(write)
            .collect()
    }
}

/// What the skeleton reads of a kind's plan.
pub trait Planned<S> {
    fn steps(&self) -> &[S];
    fn events(&self) -> &[PlannedEvent];
    fn requeue(&self) -> Requeue;
    /// The metric label of what the plan refuses; None for success.
    fn refusal(&self) -> Option<&'static str>;
    /// A line for the operator's log only.
    fn log(&self) -> Option<&str> {
        None
    }
}

/// The API of kind `K` in one namespace, or in all of them (always all for a cluster-scoped kind).
pub fn scoped<K>(client: &kube::Client, namespace: Option<&str>) -> kube::Api<K>
where
    K: Resource<DynamicType = (), Scope: ApiScope>,
{
    <K::Scope as ApiScope>::api::<K>(client, namespace)
}
