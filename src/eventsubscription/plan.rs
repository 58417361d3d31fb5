//! The pure plan of an EventSubscription: [`Facts`] in, [`Plan`] out. It waits for its sources
//! (objects of the namespace) to be Ready, creates the subscription with them, then keeps RDS's
//! topic, categories, enabled flag and sources as the spec says, and reports the topic RDS cannot
//! reach. Deletion and tags are the group kinds'. Table tests in `plan/tests.rs`.

use std::collections::{BTreeMap, BTreeSet};

use kube::runtime::events::EventType;

use crate::managed::named::{self, NamedKind};
use crate::managed::plan::{ConditionPlan, KindStatus, Requeue};
use crate::managed::tags;

use super::{EventSubscription, EventSubscriptionStatus, ObservedSubscription};

pub type Facts = named::Facts<EventSubscription>;

/// CreateEventSubscription's request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Create {
    pub name: String,
    pub topic: String,
    pub source_type: String,
    pub source_ids: Vec<String>,
    pub categories: Vec<String>,
    pub enabled: bool,
    pub tags: BTreeMap<String, String>,
}

/// A call only this kind makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Own {
    Create(Create),
    /// ModifyEventSubscription with the fields that differ.
    Modify {
        name: String,
        topic: Option<String>,
        categories: Option<Vec<String>>,
        enabled: Option<bool>,
    },
    AddSource {
        name: String,
        id: String,
    },
    RemoveSource {
        name: String,
        id: String,
    },
}

pub type Step = named::Step<Own>;
pub type Plan = named::NamedPlan<EventSubscription>;

/// The one decision of a reconcile.
pub fn plan(f: &Facts) -> Plan {
    named::plan(f, |plan, desired| apply(f, plan, desired))
}

fn apply(f: &Facts, mut plan: Plan, desired_tags: BTreeMap<String, String>) -> Plan {
    let s = &f.object;
    let name = s.name_in_rds();
    let previous = NamedKind::status(s).cloned().unwrap_or_default();
    let mut fields = EventSubscriptionStatus {
        subscription_name: Some(name.clone()),
        applied_tag_keys: previous.applied_tag_keys.clone(),
        ..Default::default()
    };
    if let Some(why) = &f.extra.unresolved {
        let waiting = plan.waiting(f.drift_interval, "ReferencesUnresolved", why.clone());
        return with_status(plan, previous, waiting);
    }
    let Some(o) = f.observed.as_ref() else {
        plan.step(Step::Own(Own::Create(Create {
            name: name.clone(),
            topic: s.spec.sns_topic_arn.clone(),
            source_type: s.spec.source_type.as_str().to_owned(),
            source_ids: f.extra.ids.clone(),
            categories: s.spec.event_categories.clone(),
            enabled: s.spec.enabled.unwrap_or(true),
            tags: desired_tags,
        })));
        let note = format!("creating event subscription {name}");
        plan.event(EventType::Normal, "Creating", "Create", note);
        fields.applied_tag_keys = tags::keys(&s.spec.tags);
        plan.report_changes(fields, false, &[], "event subscription");
        return plan;
    };
    if !named::owned(s, &o.tags) {
        let synced = named::refuse_name_in_use(s, &mut plan);
        return with_status(plan, fields, synced);
    }
    fields.arn = o.arn.clone();
    fields.status = Some(o.status.clone());
    fields.source_ids = o.source_ids.clone();
    let mut changed = changes(f, o, &name, &mut plan);
    let (retagged, applied) =
        named::retag(&mut plan, s, (&o.tags, o.arn.as_deref()), &desired_tags);
    changed.extend(retagged);
    fields.applied_tag_keys = applied;
    if changed.is_empty()
        && let Some((reason, synced)) = unreachable_topic(o)
    {
        plan.event(
            EventType::Warning,
            reason,
            "Reconcile",
            synced.message.clone(),
        );
        plan.requeue = Requeue::After(f.drift_interval);
        return with_status(plan, fields, synced);
    }
    plan.report_changes(fields, true, &changed, "event subscription");
    plan
}

/// The status with a Synced condition that is not met (the subscription stays usable if it is).
fn with_status(mut plan: Plan, fields: EventSubscriptionStatus, synced: ConditionPlan) -> Plan {
    let ready = match fields.status.as_deref() {
        Some("active") => ConditionPlan::new(true, "Available", "the event subscription exists"),
        _ => synced.clone(),
    };
    plan.status = Some(KindStatus {
        fields,
        ready,
        synced,
        busy: false,
    });
    plan
}

/// RDS's word on a topic it cannot publish to (API_EventSubscription.html, Status).
fn unreachable_topic(o: &ObservedSubscription) -> Option<(&'static str, ConditionPlan)> {
    let (reason, why) = match o.status.as_str() {
        "topic-not-exist" => ("TopicNotFound", "the SNS topic does not exist"),
        "no-permission" => ("TopicNoPermission", "RDS may not publish to the SNS topic"),
        _ => return None,
    };
    let message = format!("RDS reports {}: {why} ({})", o.status, o.topic);
    Some((reason, ConditionPlan::new(false, reason, message)))
}

/// The calls that bring RDS's subscription to the spec's: what they change, in words.
fn changes(f: &Facts, o: &ObservedSubscription, name: &str, plan: &mut Plan) -> Vec<String> {
    let spec = &f.object.spec;
    let lower = |v: &[String]| -> BTreeSet<String> { v.iter().map(|c| c.to_lowercase()).collect() };
    let topic = (spec.sns_topic_arn != o.topic).then(|| spec.sns_topic_arn.clone());
    let categories = (lower(&spec.event_categories) != lower(&o.categories))
        .then(|| spec.event_categories.clone());
    let enabled = Some(spec.enabled.unwrap_or(true)).filter(|e| *e != o.enabled);
    let mut changed = Vec::new();
    if let Some(t) = &topic {
        changed.push(format!("snsTopicARN {} -> {t}", o.topic));
    }
    if let Some(c) = &categories {
        changed.push(format!("eventCategories [{}]", c.join(", ")));
    }
    if let Some(e) = enabled {
        changed.push(format!("enabled {e}"));
    }
    if topic.is_some() || categories.is_some() || enabled.is_some() {
        plan.step(Step::Own(Own::Modify {
            name: name.to_owned(),
            topic,
            categories,
            enabled,
        }));
    }
    let (want, have): (BTreeSet<&String>, BTreeSet<&String>) =
        (f.extra.ids.iter().collect(), o.source_ids.iter().collect());
    for id in want.difference(&have) {
        changed.push(format!("add source {id}"));
        let (name, id) = (name.to_owned(), (*id).clone());
        plan.step(Step::Own(Own::AddSource { name, id }));
    }
    for id in have.difference(&want) {
        changed.push(format!("remove source {id}"));
        let (name, id) = (name.to_owned(), (*id).clone());
        plan.step(Step::Own(Own::RemoveSource { name, id }));
    }
    changed
}

#[cfg(test)]
mod tests;
