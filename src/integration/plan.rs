//! The pure plan of an Integration: [`Facts`] in, [`Plan`] out. It waits for its DBCluster to be
//! Ready, refuses a target in an account the namespace is not granted, creates the integration,
//! then keeps its data filter and description as the spec says (only while RDS has it `active`),
//! and reports RDS's errors. Deletion and tags are the group kinds'. Table tests in
//! `plan/tests.rs`.

use std::collections::BTreeMap;

use kube::runtime::events::EventType;

use crate::managed::named::{self, NamedKind};
use crate::managed::plan::{ConditionPlan, KindStatus, Requeue};
use crate::managed::tags;

use super::{Integration, IntegrationStatus, ObservedIntegration};

pub type Facts = named::Facts<Integration>;

/// CreateIntegration's request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Create {
    pub name: String,
    pub source_arn: String,
    pub target_arn: String,
    pub data_filter: Option<String>,
    pub description: Option<String>,
    pub kms_key_id: Option<String>,
    pub context: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
}

/// A call only this kind makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Own {
    Create(Create),
    /// ModifyIntegration (by ARN) with the fields that differ.
    Modify {
        arn: String,
        data_filter: Option<String>,
        description: Option<String>,
    },
}

pub type Step = named::Step<Own>;
pub type Plan = named::NamedPlan<Integration>;

/// The one decision of a reconcile.
pub fn plan(f: &Facts) -> Plan {
    named::plan(f, |plan, desired| apply(f, plan, desired))
}

fn apply(f: &Facts, mut plan: Plan, desired_tags: BTreeMap<String, String>) -> Plan {
    let i = &f.object;
    let name = i.name_in_rds();
    let previous = NamedKind::status(i).cloned().unwrap_or_default();
    let mut fields = IntegrationStatus {
        integration_name: Some(name.clone()),
        applied_tag_keys: previous.applied_tag_keys.clone(),
        ..Default::default()
    };
    if let Some(why) = target_refused(f) {
        plan.requeue = Requeue::After(f.drift_interval);
        plan.event(
            EventType::Warning,
            "TargetNotGranted",
            "Reconcile",
            why.clone(),
        );
        let synced = ConditionPlan::new(false, "TargetNotGranted", why);
        return with_status(plan, previous, synced);
    }
    let Some(o) = f.observed.as_ref() else {
        return create(f, plan, (fields, previous), desired_tags);
    };
    if !named::owned(i, &o.tags) {
        let synced = named::refuse_name_in_use(i, &mut plan);
        return with_status(plan, fields, synced);
    }
    fields.arn = o.arn.clone();
    fields.status = Some(o.status.clone());
    fields.source_arn = Some(o.source_arn.clone());
    fields.data_filter = o.data_filter.clone();
    fields.errors = o.errors.clone();
    if o.status != "active" && !matches!(o.status.as_str(), "failed" | "needs_attention") {
        // Creating, modifying, syncing or deleting: RDS takes no change until it is active.
        let why = format!("RDS has integration {name} {}", o.status);
        let waiting = plan.waiting(f.busy_interval, "Busy", why);
        return with_status(plan, fields, waiting);
    }
    let mut changed = changes(f, o, &mut plan);
    let (retagged, applied) =
        named::retag(&mut plan, i, (&o.tags, o.arn.as_deref()), &desired_tags);
    changed.extend(retagged);
    fields.applied_tag_keys = applied;
    if changed.is_empty() && o.status != "active" {
        let message = format!(
            "RDS reports integration {name} {}: {}",
            o.status,
            o.errors.join("; ")
        );
        plan.event(
            EventType::Warning,
            "IntegrationFailed",
            "Reconcile",
            message.clone(),
        );
        plan.requeue = Requeue::After(f.drift_interval);
        return with_status(
            plan,
            fields,
            ConditionPlan::new(false, "IntegrationFailed", message),
        );
    }
    plan.report_changes(fields, true, &changed, "integration");
    plan
}

/// None in RDS: created once the DBCluster resolves to its ARN; until then, waiting.
fn create(
    f: &Facts,
    mut plan: Plan,
    (mut fields, previous): (IntegrationStatus, IntegrationStatus),
    desired_tags: BTreeMap<String, String>,
) -> Plan {
    let i = &f.object;
    let source = match (&f.extra.unresolved, &f.extra.arn) {
        (None, Some(arn)) => arn.clone(),
        (why, _) => {
            let why = why
                .clone()
                .unwrap_or_else(|| "the DBCluster is not read".into());
            let waiting = plan.waiting(f.drift_interval, "ReferencesUnresolved", why);
            return with_status(plan, previous, waiting);
        }
    };
    let name = i.name_in_rds();
    plan.step(Step::Own(Own::Create(Create {
        name: name.clone(),
        source_arn: source,
        target_arn: i.spec.target_arn.clone(),
        data_filter: i.spec.data_filter.clone(),
        description: i.spec.description.clone(),
        kms_key_id: i.spec.kms_key_id.clone(),
        context: i.spec.additional_encryption_context.clone(),
        tags: desired_tags,
    })));
    let note = format!("creating zero-ETL integration {name}");
    plan.event(EventType::Normal, "Creating", "Create", note);
    fields.applied_tag_keys = tags::keys(&i.spec.tags);
    plan.report_changes(fields, false, &[], "integration");
    plan
}

/// Why the target's account may not be given this namespace's data; None: it may.
fn target_refused(f: &Facts) -> Option<String> {
    let target = &f.object.spec.target_arn;
    let account = target.split(':').nth(4).unwrap_or_default();
    let granted = (f.extra.accounts.iter()).any(|a| a == "*" || a == account);
    // At deletion nothing is read: the integration is deleted whatever its target.
    let read = !f.extra.accounts.is_empty();
    (read && !granted).then(|| {
        format!(
            "targetARN is in AWS account {account}, which is neither the DBCluster's nor named by an \
             AWSAccount granted to this namespace or by the operator's --grant-share-to: the \
             integration would hand the cluster's data to it; nothing is created"
        )
    })
}

/// The status with a Synced condition that is not met (the integration stays usable if it is).
fn with_status(mut plan: Plan, fields: IntegrationStatus, synced: ConditionPlan) -> Plan {
    let ready = match fields.status.as_deref() {
        Some("active" | "modifying" | "syncing") => {
            ConditionPlan::new(true, "Available", "the integration replicates")
        }
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

/// The ModifyIntegration that brings RDS's data filter and description to the spec's: what it
/// changes, in words. Left out of the spec, a field is RDS's to keep.
fn changes(f: &Facts, o: &ObservedIntegration, plan: &mut Plan) -> Vec<String> {
    let spec = &f.object.spec;
    let differs = |want: &Option<String>, have: &Option<String>| {
        want.clone().filter(|w| Some(w) != have.as_ref())
    };
    let data_filter = differs(&spec.data_filter, &o.data_filter);
    let description = differs(&spec.description, &o.description);
    let mut changed = Vec::new();
    if let Some(d) = &data_filter {
        changed.push(format!("dataFilter {d}"));
    }
    if description.is_some() {
        changed.push("description".to_owned());
    }
    if let (Some(arn), false) = (&o.arn, changed.is_empty()) {
        plan.step(Step::Own(Own::Modify {
            arn: arn.clone(),
            data_filter,
            description,
        }));
    }
    changed
}

#[cfg(test)]
mod tests;
