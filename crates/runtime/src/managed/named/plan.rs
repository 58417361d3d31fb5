//! The plan every named kind follows around its own ([`NamedKind::plan`] calls [`plan`] with its
//! own part): the finalizer, the desired tags, the deletion (waiting on referrers, retained or
//! deleted), the tag calls, and the refusal of a name RDS has for something not ours.

use std::collections::BTreeMap;

use kube::ResourceExt;
use kube::runtime::events::EventType;

use super::{Facts, NamedKind, NamedPlan, Step};
use crate::crd::{ADOPTED_TAG, RETAINED_TAG, has_finalizer};
use crate::managed::plan::{ConditionPlan, KindPlan, KindStatus, Requeue};
use crate::managed::tags;

/// The status of a resource RDS reports a state of (`state`, as the fields record it): Ready once RDS
/// reports it available (as `synced` says when in sync), Busy while RDS works on it; Synced as this
/// reconcile found it.
pub fn by_state<S>(fields: S, state: Option<&str>, synced: ConditionPlan) -> KindStatus<S> {
    let available = state == Some("available");
    let ready = match state {
        Some(_) if available && synced.ok => synced.clone(),
        Some(_) if available => ConditionPlan::new(true, "Available", "RDS reports it available"),
        Some(state) => ConditionPlan::new(false, "Busy", format!("RDS reports it {state}")),
        None => synced.clone(),
    };
    KindStatus {
        fields,
        ready,
        synced,
        busy: state.is_some() && !available,
    }
}

/// Every named kind's plan: when the object is being deleted, the deletion every named kind follows
/// (wait while DBInstances refer to it, no call made; delete it when it is ours, then let go; let
/// go of what is not ours or is gone); else `apply`, given a plan that adds the finalizer first and
/// the tags the resource should carry (the spec's and the ownership tags).
pub fn plan<K: NamedKind>(
    f: &Facts<K>,
    apply: impl FnOnce(NamedPlan<K>, BTreeMap<String, String>) -> NamedPlan<K>,
) -> NamedPlan<K> {
    let (object, drift_interval) = (&f.object, f.drift_interval);
    let meta = object.meta();
    if meta.deletion_timestamp.is_some() {
        // RDS refuses while an instance uses the resource (InvalidDB...GroupState): reported, with
        // backoff, and retried.
        let ours = (f.observed.as_ref()).filter(|o| owned(object, K::tags_of(o)));
        return deletion(f, ours);
    }
    let mut plan = KindPlan::new(Requeue::After(drift_interval));
    if !has_finalizer(meta) {
        plan.step(Step::AddFinalizer);
    }
    let (uid, namespace) = (object.uid().unwrap_or_default(), object.namespace());
    let name = object.name_any();
    let desired = tags::with_owner(
        object.spec_tags(),
        &uid,
        &namespace.unwrap_or_default(),
        &name,
    );
    apply(plan, desired)
}

/// A resource's RDS name: the spec's identifier, or metadata.name, lower-cased as RDS stores it.
pub fn rds_name(identifier: Option<&String>, name: Option<&String>) -> String {
    (identifier.or(name).cloned())
        .unwrap_or_default()
        .to_lowercase()
}

/// Whether RDS's resource carries this object's ownership tag.
pub fn owned<K: NamedKind>(object: &K, observed_tags: &BTreeMap<String, String>) -> bool {
    tags::owned_by(observed_tags, &object.uid().unwrap_or_default())
}

/// Why a resource of the name that is not ours is left alone.
pub fn name_in_use<K: NamedKind>(object: &K) -> String {
    format!(
        "a {} named {} already exists and is not managed by this {}; choose another {}",
        K::WHAT,
        object.rds_name_of(),
        K::LABEL,
        K::NAME_FIELD
    )
}

/// Refuses a resource of the name that is not ours: the refusal, a Warning Event, and the Synced
/// condition to report (nothing is sent).
pub fn refuse_name_in_use<K: NamedKind>(object: &K, plan: &mut NamedPlan<K>) -> ConditionPlan {
    plan.refusal = Some("NameInUse");
    let message = name_in_use(object);
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
fn deletion<K: NamedKind>(f: &Facts<K>, ours: Option<&K::Observed>) -> NamedPlan<K> {
    let (object, referrers, drift_interval) = (&f.object, &f.referrers, f.drift_interval);
    let mut plan = KindPlan::new(Requeue::AwaitChange);
    if !has_finalizer(object.meta()) {
        return plan;
    }
    let what = K::WHAT;
    if !referrers.is_empty() {
        let message = format!(
            "{} still refers to this {what}; it is deleted once they are gone",
            referrers.join("; ")
        );
        let condition = ConditionPlan::new(false, "InUse", message);
        plan.status = Some(KindStatus {
            fields: K::status(object).cloned().unwrap_or_default(),
            ready: condition.clone(),
            synced: condition,
            busy: false,
        });
        plan.requeue = Requeue::After(drift_interval);
        return plan;
    }
    let adopted = ours.is_some_and(|o| K::tags_of(o).contains_key(ADOPTED_TAG));
    if let Some(o) = ours.filter(|_| object.retained(adopted)) {
        if !K::tags_of(o).contains_key(RETAINED_TAG) {
            plan.step(Step::AddTags {
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
        plan.step(Step::Delete {
            name: object.rds_name_of(),
        });
        plan.event(
            EventType::Normal,
            "Deleting",
            "Delete",
            format!("deleting the {what} in RDS"),
        );
    }
    plan.step(Step::RemoveFinalizer);
    plan
}

/// The tag calls that bring RDS's resource (its tags and ARN) to the desired tags, keeping to the keys the operator
/// manages (the ownership tags and those it applied from the spec): what changes, in words, and
/// the spec tag keys applied after them.
pub fn retag<K: NamedKind>(
    plan: &mut NamedPlan<K>,
    object: &K,
    (observed, arn): (&BTreeMap<String, String>, Option<&str>),
    desired: &BTreeMap<String, String>,
) -> (Vec<String>, Vec<String>) {
    let managed = (K::status(object))
        .map(|s| K::applied_tag_keys(s).to_vec())
        .unwrap_or_default();
    let (to_add, to_remove) = tags::changes(observed, desired, &managed);
    let arn = arn.unwrap_or_default().to_owned();
    let mut changed = Vec::new();
    if !to_add.is_empty() {
        let keys = to_add.keys().cloned().collect::<Vec<_>>().join(",");
        changed.push(format!("tags: add {keys}"));
        let (arn, tags) = (arn.clone(), to_add);
        plan.step(Step::AddTags { arn, tags });
    }
    if !to_remove.is_empty() {
        changed.push(format!("tags: remove {}", to_remove.join(",")));
        let (arn, keys) = (arn, to_remove);
        plan.step(Step::RemoveTags { arn, keys });
    }
    let applied = tags::applied(object.spec_tags(), observed, &managed);
    (changed, applied)
}
