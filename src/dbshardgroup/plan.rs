//! The pure plan of a DBShardGroup: [`Facts`] in, [`Plan`] out. It waits for its DBCluster to be
//! Ready, creates the shard group, then keeps its capacity and redundancy as the spec says (only
//! while RDS has it `available`). Deletion and tags are the group kinds'. Table tests in
//! `plan/tests.rs`.

use std::collections::BTreeMap;

use kube::runtime::events::EventType;

use crate::managed::named::{self, NamedKind};
use crate::managed::plan::ConditionPlan;
use crate::managed::tags;

use super::{DBShardGroup, DBShardGroupStatus, ObservedShardGroup};

pub type Facts = named::Facts<DBShardGroup>;

/// CreateDBShardGroup's request.
#[derive(Clone, Debug, PartialEq)]
pub struct Create {
    pub identifier: String,
    pub cluster: String,
    pub max_acu: f64,
    pub min_acu: Option<f64>,
    pub compute_redundancy: Option<i32>,
    pub publicly_accessible: Option<bool>,
    pub tags: BTreeMap<String, String>,
}

/// A call only this kind makes.
#[derive(Clone, Debug, PartialEq)]
pub enum Own {
    Create(Create),
    /// ModifyDBShardGroup with the fields that differ.
    Modify {
        identifier: String,
        max_acu: Option<f64>,
        min_acu: Option<f64>,
        compute_redundancy: Option<i32>,
    },
}

pub type Step = named::Step<Own>;
pub type Plan = named::NamedPlan<DBShardGroup>;

/// The one decision of a reconcile.
pub fn plan(f: &Facts) -> Plan {
    named::plan(f, |plan, desired| apply(f, plan, desired))
}

fn apply(f: &Facts, mut plan: Plan, desired_tags: BTreeMap<String, String>) -> Plan {
    let s = &f.object;
    let name = s.name_in_rds();
    let previous = NamedKind::status(s).cloned().unwrap_or_default();
    let mut fields = DBShardGroupStatus {
        db_shard_group_identifier: Some(name.clone()),
        applied_tag_keys: previous.applied_tag_keys.clone(),
        ..Default::default()
    };
    let Some(o) = f.observed.as_ref() else {
        return create(f, plan, (fields, previous), desired_tags);
    };
    if !named::owned(s, &o.tags) {
        let synced = named::refuse_name_in_use(s, &mut plan);
        return with_status(plan, fields, synced);
    }
    fields.arn = o.arn.clone();
    fields.status = Some(o.status.clone());
    fields.endpoint = o.endpoint.clone();
    (fields.max_acu, fields.min_acu) = (o.max_acu, o.min_acu);
    fields.compute_redundancy = o.compute_redundancy;
    if o.status != "available" {
        // Creating, modifying, rebooting or deleting: RDS takes no change until it is available.
        let why = format!("RDS has DB shard group {name} {}", o.status);
        let waiting = plan.waiting(f.busy_interval, "Busy", why);
        return with_status(plan, fields, waiting);
    }
    let mut changed = changes(f, o, &name, &mut plan);
    let (retagged, applied) =
        named::retag(&mut plan, s, (&o.tags, o.arn.as_deref()), &desired_tags);
    changed.extend(retagged);
    fields.applied_tag_keys = applied;
    plan.report_changes(fields, true, &changed, "DB shard group");
    plan
}

/// None in RDS: created once the DBCluster resolves to its identifier; until then, waiting.
fn create(
    f: &Facts,
    mut plan: Plan,
    (mut fields, previous): (DBShardGroupStatus, DBShardGroupStatus),
    desired_tags: BTreeMap<String, String>,
) -> Plan {
    let s = &f.object;
    let cluster = match (&f.extra.unresolved, &f.extra.identifier) {
        (None, Some(id)) => id.clone(),
        (why, _) => {
            let why = why
                .clone()
                .unwrap_or_else(|| "the DBCluster is not read".into());
            let waiting = plan.waiting(f.drift_interval, "ReferencesUnresolved", why);
            return with_status(plan, previous, waiting);
        }
    };
    let identifier = s.name_in_rds();
    plan.step(Step::Own(Own::Create(Create {
        identifier: identifier.clone(),
        cluster: cluster.clone(),
        max_acu: s.spec.max_acu,
        min_acu: s.spec.min_acu,
        compute_redundancy: s.spec.compute_redundancy,
        publicly_accessible: s.spec.publicly_accessible,
        tags: desired_tags,
    })));
    let note = format!("creating DB shard group {identifier} of DB cluster {cluster}");
    plan.event(EventType::Normal, "Creating", "Create", note);
    fields.applied_tag_keys = tags::keys(&s.spec.tags);
    plan.report_changes(fields, false, &[], "DB shard group");
    plan
}

/// The status to write: Ready once RDS reports it available, Busy while RDS works on it
/// (`named::by_state`).
fn with_status(mut plan: Plan, fields: DBShardGroupStatus, synced: ConditionPlan) -> Plan {
    let state = fields.status.clone();
    plan.status = Some(named::by_state(fields, state.as_deref(), synced));
    plan
}

/// The ModifyDBShardGroup that brings RDS's capacity and redundancy to the spec's: what it
/// changes, in words. A field the spec leaves out is RDS's to keep.
fn changes(f: &Facts, o: &ObservedShardGroup, name: &str, plan: &mut Plan) -> Vec<String> {
    let spec = &f.object.spec;
    let max_acu = Some(spec.max_acu).filter(|m| o.max_acu != Some(*m));
    let min_acu = spec.min_acu.filter(|m| o.min_acu != Some(*m));
    let redundancy = spec
        .compute_redundancy
        .filter(|r| o.compute_redundancy != Some(*r));
    let mut changed = Vec::new();
    if let Some(m) = max_acu {
        changed.push(format!("maxACU {m}"));
    }
    if let Some(m) = min_acu {
        changed.push(format!("minACU {m}"));
    }
    if let Some(r) = redundancy {
        changed.push(format!("computeRedundancy {r}"));
    }
    if !changed.is_empty() {
        plan.step(Step::Own(Own::Modify {
            identifier: name.to_owned(),
            max_acu,
            min_acu,
            compute_redundancy: redundancy,
        }));
    }
    changed
}

#[cfg(test)]
mod tests;
