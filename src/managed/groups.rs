//! The kinds shaped like the groups (DBSubnetGroup, DBParameterGroup): a named RDS resource that
//! DBInstances refer to. What they share is here: the [`Group`] trait (through which they run on
//! the skeleton), the status they report, the deletion they follow, and their tag calls.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::events::EventType;
use serde::Serialize;

use super::apiserver::set_finalizer;
use super::conditions;
use super::placement::Placement;
use super::plan::{ConditionPlan, GroupStatus, KindPlan, PlannedEvent, Requeue};
use super::references::{Referable, Referrers};
use super::tags;
use super::{Failure, Kind, KindContext, Managed};
use crate::context::Context;
use crate::crd::{ADOPTED_TAG, RETAINED_TAG, Tag, has_finalizer};
use crate::error::Error;
use crate::locations::Location;
use crate::managed::locate::{AccountUsers, Located};
use crate::observer::listing::Listed;

/// What a group kind supplies: how to read the group in RDS, its pure plan, how to run a step of
/// its own, its names, and where its status keeps what every group reports (the fields every
/// group kind has are reached through [`group_fields!`](crate::group_fields)).
pub trait Group:
    Kind
    + kube::Resource<Scope = kube::core::NamespaceResourceScope>
    + crate::managed::placement::Placed
    + Send
    + Sync
    + 'static
{
    /// The group as RDS has it.
    type Observed: Listed + Debug;
    /// What else only this kind reads (the parameter catalog); `()` for nothing.
    type Extra: Clone + Debug + Send + Sync;
    /// The steps only this kind takes (create, modify); the others are [`Step`]'s.
    type Own: Send + Sync;
    type Status: Clone + PartialEq + Default + Serialize + Send + Sync;
    /// The kind in spans and logs.
    const LABEL: &'static str;
    /// What RDS calls it, in messages ("DB subnet group").
    const WHAT: &'static str;
    /// The spec field that names it in RDS.
    const NAME_FIELD: &'static str;
    /// Read: the group of its name in RDS (None: RDS has none), and what else the kind reads.
    fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> impl Future<Output = Result<(Option<Self::Observed>, Self::Extra), Error>> + Send;
    /// Pure (the kind's `plan.rs`).
    fn plan(facts: &Facts<Self>) -> GroupPlan<Self>;
    /// The tags of the group in RDS.
    fn tags_of(observed: &Self::Observed) -> &BTreeMap<String, String>;
    fn arn_of(observed: &Self::Observed) -> Option<&str>;
    fn act(
        &self,
        shared: &Shared,
        at: &Location,
        step: &Self::Own,
    ) -> impl Future<Output = Result<(), Error>> + Send;
    /// The DeleteDB...Group of the group of this name.
    fn delete(
        &self,
        shared: &Shared,
        at: &Location,
        name: &str,
    ) -> impl Future<Output = Result<(), Error>> + Send;
    /// The name in RDS (lower case, as RDS stores it).
    fn rds_name_of(&self) -> String;
    /// Whether deleting the object keeps what it has in RDS (a DBSnapshot's deletionPolicy
    /// Retain), given whether it adopted it (RDS's carries the adopted tag); a group is always
    /// deleted with its object.
    fn retained(&self, _adopted: bool) -> bool {
        false
    }
    /// The kind's own wake-ups, besides its referrers' and its account's (a DBSnapshot's source).
    fn watches(
        controller: Controller<Self>,
        _shared: &Shared,
        _ns: Option<&str>,
    ) -> Controller<Self> {
        controller
    }
    /// The name in RDS the status reports.
    fn rds_name(status: &Self::Status) -> Option<String>;
    fn status(&self) -> Option<&Self::Status>;
    fn spec_tags(&self) -> &[Tag];
    /// The tag keys the operator applied from the spec, as the status keeps them.
    fn applied_tag_keys(status: &Self::Status) -> &[String];
    fn conditions(status: &Self::Status) -> &[Condition];
    fn conditions_mut(status: &mut Self::Status) -> &mut Vec<Condition>;
    fn observed_generation(status: &mut Self::Status) -> &mut Option<i64>;
    fn placement_mut(status: &mut Self::Status) -> &mut Option<Placement>;
}

/// The fields every group kind has, reached the same way in each: inside `impl Group for ...`,
/// with the status type and the status field of its RDS name
/// (and `spec.tags`, `status.conditions`, `observedGeneration`, `appliedTagKeys`, `group_name()`,
/// the observed group's `tags`, and the kind's `plan::plan`, or the plan named third).
#[macro_export]
macro_rules! group_fields {
    ($status:ty, $rds_name:ident) => {
        $crate::group_fields!($status, $rds_name, super::plan::plan);
    };
    ($status:ty, $rds_name:ident, $plan:path) => {
        fn plan(
            facts: &$crate::managed::groups::Facts<Self>,
        ) -> $crate::managed::groups::GroupPlan<Self> {
            $plan(facts)
        }
        fn tags_of(observed: &Self::Observed) -> &std::collections::BTreeMap<String, String> {
            &observed.tags
        }
        fn arn_of(observed: &Self::Observed) -> Option<&str> {
            observed.arn.as_deref()
        }
        fn rds_name_of(&self) -> String {
            self.group_name()
        }
        fn rds_name(status: &$status) -> Option<String> {
            status.$rds_name.clone()
        }
        fn status(&self) -> Option<&$status> {
            self.status.as_ref()
        }
        fn spec_tags(&self) -> &[$crate::crd::Tag] {
            &self.spec.tags
        }
        fn applied_tag_keys(status: &$status) -> &[String] {
            &status.applied_tag_keys
        }
        fn conditions(
            status: &$status,
        ) -> &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition] {
            &status.reported.conditions
        }
        fn conditions_mut(
            status: &mut $status,
        ) -> &mut Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> {
            &mut status.reported.conditions
        }
        fn observed_generation(status: &mut $status) -> &mut Option<i64> {
            &mut status.reported.observed_generation
        }
        fn placement_mut(
            status: &mut $status,
        ) -> &mut Option<$crate::managed::placement::Placement> {
            &mut status.placement
        }
    };
}

/// Everything a group kind's decision needs.
#[derive(Clone, Debug)]
pub struct Facts<K: Group> {
    pub group: K,
    /// The group with that name in RDS, with its tags.
    pub observed: Option<K::Observed>,
    /// What else the kind read (the parameter catalog; empty at deletion: not read).
    pub extra: K::Extra,
    /// At deletion: the objects of the namespace that refer to this group, a kind each
    /// ("DBInstance a, b").
    pub referrers: Vec<String>,
    /// How often to look again once in sync.
    pub drift_interval: Duration,
    /// How often to look again while RDS is busy with it.
    pub busy_interval: Duration,
    /// Where the group lives, as its status is to record it.
    pub placement: Placement,
    /// When they were read (RFC 3339).
    pub now: String,
}

/// A step of a group kind: one every group takes, or one of the kind's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step<S> {
    AddFinalizer,
    Own(S),
    AddTags {
        arn: String,
        tags: BTreeMap<String, String>,
    },
    RemoveTags {
        arn: String,
        keys: Vec<String>,
    },
    Delete {
        name: String,
    },
    RemoveFinalizer,
}

/// What one reconcile of a group kind does and reports.
pub type GroupPlan<K> = KindPlan<Step<<K as Group>::Own>, <K as Group>::Status>;

/// What a group kind's reconciles share.
pub struct Shared {
    pub ctx: Arc<Context>,
    /// How often to look again at a settled object.
    pub drift_interval: Duration,
    /// How often to look again at one RDS is busy with.
    pub busy_interval: Duration,
}

/// What the group kinds' reconciles share: the context and the drift interval.
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

/// Every group kind on the skeleton: a DBInstance that starts or stops referring to it wakes it,
/// and its status is [`settled`] after a pass or [`failed`] after a failure.
impl<K: Group> Managed for K {
    const KIND: &'static str = K::LABEL;
    type Ctx = Shared;
    type Facts = Facts<K>;
    type Step = Step<K::Own>;
    type Plan = GroupPlan<K>;
    type Answer = ();
    type Status = K::Status;
    type Where = Located;

    /// A group can use an account (`locate::AccountUsers`).
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
            group: self.clone(),
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
        } = *failure;
        let planned = planned.and_then(|p| p.status.as_ref());
        let (mut status, event) = failed::<K>(
            K::status(self),
            planned,
            self.meta().generation,
            reason,
            message,
            now,
        );
        // Where the group lives is only ever recorded by a pass that placed it.
        let mut previous = K::status(self).cloned().unwrap_or_default();
        *K::placement_mut(&mut status) = K::placement_mut(&mut previous).take();
        (status, event)
    }
}

/// Every group kind is referred to by name (a DBInstance names its groups).
impl<K: Group> Referable for K {
    type Status = K::Status;
    const LABEL: &'static str = K::LABEL;
    fn status(&self) -> Option<&K::Status> {
        Group::status(self)
    }
    fn conditions(status: &K::Status) -> &[Condition] {
        <K as Group>::conditions(status)
    }
    fn rds_name(status: &K::Status) -> Option<String> {
        <K as Group>::rds_name(status)
    }
}

/// The status of a group RDS reports a state of (`state`, as the fields record it): Ready once RDS
/// reports it available (as `synced` says when in sync), Busy while RDS works on it; Synced as this
/// reconcile found it.
pub fn by_state<S>(fields: S, state: Option<&str>, synced: ConditionPlan) -> GroupStatus<S> {
    let available = state == Some("available");
    let ready = match state {
        Some(_) if available && synced.ok => synced.clone(),
        Some(_) if available => ConditionPlan::new(true, "Available", "RDS reports it available"),
        Some(state) => ConditionPlan::new(false, "Busy", format!("RDS reports it {state}")),
        None => synced.clone(),
    };
    GroupStatus {
        fields,
        ready,
        synced,
        busy: state.is_some() && !available,
    }
}

/// The objects of the group's namespace that refer to it (the DBInstances that name it), a kind
/// each, read from the API (fresh: a deletion waits on them) only when the group is being deleted,
/// the one decision that needs them; otherwise none, and no read.
pub async fn referrers<K: Group>(ctx: &Context, obj: &K) -> Result<Vec<String>, Error> {
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

/// A group's status after a pass: the plan's fields, with its conditions merged into the previous
/// ones, at this generation.
pub fn settled<K: Group>(
    previous: Option<&K::Status>,
    planned: &GroupStatus<K::Status>,
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

/// A group's status after a failure, and its Event: Synced False with the reason; Ready as the
/// plan found it (or as last written, when the pass failed before planning), unless the failure
/// says the group cannot be reached ([`conditions::failed`], [`conditions::ready_after_failure`]).
pub fn failed<K: Group>(
    previous: Option<&K::Status>,
    planned: Option<&GroupStatus<K::Status>>,
    generation: Option<i64>,
    reason: &str,
    message: &str,
    now: &str,
) -> (K::Status, Option<PlannedEvent>) {
    let before = previous.map(K::conditions).unwrap_or_default();
    let (ready, synced, event) = conditions::failed(before, reason, message);
    let ready = conditions::ready_after_failure(planned.map(|p| &p.ready), ready, reason);
    let fields = match planned {
        Some(p) => p.fields.clone(),
        None => previous.cloned().unwrap_or_default(),
    };
    let status = GroupStatus {
        fields,
        ready,
        synced,
        busy: false,
    };
    (settled::<K>(previous, &status, generation, now), event)
}

/// Every group kind's plan: when the object is being deleted, the deletion every group follows
/// (wait while DBInstances refer to it, no call made; delete it when it is ours, then let go; let
/// go of what is not ours or is gone); else `apply`, given a plan that adds the finalizer first and
/// the tags the group should carry (the spec's and the ownership tags).
pub fn plan<K: Group>(
    f: &Facts<K>,
    apply: impl FnOnce(GroupPlan<K>, BTreeMap<String, String>) -> GroupPlan<K>,
) -> GroupPlan<K> {
    let (group, drift_interval) = (&f.group, f.drift_interval);
    let meta = group.meta();
    if meta.deletion_timestamp.is_some() {
        // RDS refuses while an instance uses the group (InvalidDB...GroupState): reported, with
        // backoff, and retried.
        let ours = (f.observed.as_ref()).filter(|o| owned(group, K::tags_of(o)));
        return deletion(f, ours);
    }
    let mut plan = KindPlan::new(Requeue::After(drift_interval));
    if !has_finalizer(meta) {
        plan.steps.push(Step::AddFinalizer);
    }
    let (uid, namespace) = (group.uid().unwrap_or_default(), group.namespace());
    let name = group.name_any();
    let desired = tags::with_owner(
        group.spec_tags(),
        &uid,
        &namespace.unwrap_or_default(),
        &name,
    );
    apply(plan, desired)
}

/// A group's RDS name: the spec's identifier, or metadata.name, lower-cased as RDS stores it.
pub fn rds_name(identifier: Option<&String>, name: Option<&String>) -> String {
    (identifier.or(name).cloned())
        .unwrap_or_default()
        .to_lowercase()
}

/// Whether RDS's group carries this object's ownership tag.
pub fn owned<K: Group>(group: &K, observed_tags: &BTreeMap<String, String>) -> bool {
    tags::owned_by(observed_tags, &group.uid().unwrap_or_default())
}

/// Why a group of the name that is not ours is left alone.
pub fn name_in_use<K: Group>(group: &K) -> String {
    format!(
        "a {} named {} already exists and is not managed by this {}; choose another {}",
        K::WHAT,
        group.rds_name_of(),
        K::LABEL,
        K::NAME_FIELD
    )
}

/// Refuses a group of the name that is not ours: the refusal, a Warning Event, and the Synced
/// condition to report (nothing is sent).
pub fn refuse_name_in_use<K: Group>(group: &K, plan: &mut GroupPlan<K>) -> ConditionPlan {
    plan.refusal = Some("NameInUse");
    let message = name_in_use(group);
    plan.event(
        EventType::Warning,
        "NameInUse",
        "Reconcile",
        message.clone(),
    );
    ConditionPlan::new(false, "NameInUse", message)
}

/// The deletion of the object, given RDS's resource when it is the object's own. One retained is
/// tagged retained (`RETAINED_TAG`, the time), so that a later object of the namespace and name
/// takes it back (`claim`).
fn deletion<K: Group>(f: &Facts<K>, ours: Option<&K::Observed>) -> GroupPlan<K> {
    let (group, referrers, drift_interval) = (&f.group, &f.referrers, f.drift_interval);
    let mut plan = KindPlan::new(Requeue::AwaitChange);
    if !has_finalizer(group.meta()) {
        return plan;
    }
    let what = K::WHAT;
    if !referrers.is_empty() {
        let message = format!(
            "{} still refers to this {what}; it is deleted once they are gone",
            referrers.join("; ")
        );
        let condition = ConditionPlan::new(false, "InUse", message);
        plan.status = Some(GroupStatus {
            fields: K::status(group).cloned().unwrap_or_default(),
            ready: condition.clone(),
            synced: condition,
            busy: false,
        });
        plan.requeue = Requeue::After(drift_interval);
        return plan;
    }
    let adopted = ours.is_some_and(|o| K::tags_of(o).contains_key(ADOPTED_TAG));
    if let Some(o) = ours.filter(|_| group.retained(adopted)) {
        if !K::tags_of(o).contains_key(RETAINED_TAG) {
            plan.steps.push(Step::AddTags {
                arn: K::arn_of(o).unwrap_or_default().to_owned(),
                tags: [(RETAINED_TAG.to_owned(), f.now.clone())].into(),
            });
        }
        plan.event(
            EventType::Normal,
            "Retained",
            "Delete",
            match adopted {
                true => format!(
                    "the {what} stays in RDS (deletionPolicy Retain, the default for one adopted)"
                ),
                false => format!("deletionPolicy Retain: the {what} stays in RDS"),
            },
        );
    } else if ours.is_some() {
        plan.steps.push(Step::Delete {
            name: group.rds_name_of(),
        });
        plan.event(
            EventType::Normal,
            "Deleting",
            "Delete",
            format!("deleting the {what} in RDS"),
        );
    }
    plan.steps.push(Step::RemoveFinalizer);
    plan
}

/// The tag calls that bring RDS's group (its tags and ARN) to the desired tags, keeping to the keys the operator
/// manages (the ownership tags and those it applied from the spec): what changes, in words, and
/// the spec tag keys applied after them.
pub fn retag<K: Group>(
    plan: &mut GroupPlan<K>,
    group: &K,
    (observed, arn): (&BTreeMap<String, String>, Option<&str>),
    desired: &BTreeMap<String, String>,
) -> (Vec<String>, Vec<String>) {
    let managed = (K::status(group))
        .map(|s| K::applied_tag_keys(s).to_vec())
        .unwrap_or_default();
    let (to_add, to_remove) = tags::changes(observed, desired, &managed);
    let arn = arn.unwrap_or_default().to_owned();
    let mut changed = Vec::new();
    if !to_add.is_empty() {
        let keys = to_add.keys().cloned().collect::<Vec<_>>().join(",");
        changed.push(format!("tags: add {keys}"));
        let (arn, tags) = (arn.clone(), to_add);
        plan.steps.push(Step::AddTags { arn, tags });
    }
    if !to_remove.is_empty() {
        changed.push(format!("tags: remove {}", to_remove.join(",")));
        let (arn, keys) = (arn, to_remove);
        plan.steps.push(Step::RemoveTags { arn, keys });
    }
    let applied = tags::applied(group.spec_tags(), observed, &managed);
    (changed, applied)
}

/// What the group kinds' table tests start from: the Coffee Manage group `shop/coffee`, with
/// its finalizer, and RDS's tags of a group it owns.
#[cfg(test)]
pub mod fixtures {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use super::{Facts, Group};
    use crate::crd::{FINALIZER, OWNER_NAME_TAG, OWNER_TAG};

    pub const UID: &str = "uid-1";

    /// The facts of `group` (named coffee in namespace shop), absent from RDS.
    pub fn facts<K: Group>(mut group: K, extra: K::Extra) -> Facts<K> {
        let meta = group.meta_mut();
        meta.namespace = Some("shop".into());
        meta.uid = Some(UID.into());
        meta.finalizers = Some(vec![FINALIZER.into()]);
        Facts {
            group,
            observed: None,
            extra,
            referrers: vec![],
            drift_interval: Duration::from_secs(60),
            busy_interval: Duration::from_secs(5),
            placement: Default::default(),
            now: "2026-01-01T00:00:00Z".into(),
        }
    }

    /// The ownership tags of a group made for `shop/coffee`.
    pub fn owner_tags() -> BTreeMap<String, String> {
        [
            (OWNER_TAG.to_owned(), UID.to_owned()),
            (OWNER_NAME_TAG.to_owned(), "shop/coffee".to_owned()),
        ]
        .into()
    }

    pub fn with<K: Group>(mut f: Facts<K>, change: impl FnOnce(&mut Facts<K>)) -> Facts<K> {
        change(&mut f);
        f
    }

    /// The facts with the object being deleted.
    pub fn deleting<K: Group>(f: Facts<K>) -> Facts<K> {
        with(f, |f| {
            let epoch = k8s_openapi::jiff::Timestamp::UNIX_EPOCH;
            let time = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(epoch);
            f.group.meta_mut().deletion_timestamp = Some(time);
        })
    }
}
