//! The pure plan of a GlobalCluster: [`Facts`] in, [`Plan`] out. Whose global database the name
//! is; the one CreateGlobalCluster (of a Ready primary DBCluster of the namespace, or empty), never
//! again once made; deletion protection and engine version kept; the members reported; a deletion
//! that waits while any member cluster is left, then Delete or Retain (the group kinds'). Table
//! tests in `plan/tests.rs`.

use std::collections::BTreeMap;

use kube::runtime::events::EventType;

use crate::crd::has_finalizer;
use crate::managed::named;
use crate::managed::plan::{ConditionPlan, KindPlan, KindStatus, Requeue};
use crate::managed::tags;

use super::{GlobalCluster, GlobalClusterStatus, ObservedGlobalCluster, Primary};

pub mod role;

/// Everything a decision needs.
pub type Facts = named::Facts<GlobalCluster>;

/// A call only this kind makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Own {
    /// CreateGlobalCluster, tagged: of the primary's ARN, or empty with an engine.
    Create {
        name: String,
        source_arn: Option<String>,
        engine: Option<String>,
        engine_version: Option<String>,
        deletion_protection: Option<bool>,
        storage_encrypted: Option<bool>,
        tags: BTreeMap<String, String>,
    },
    /// ModifyGlobalCluster of what differs.
    Modify {
        name: String,
        deletion_protection: Option<bool>,
        engine_version: Option<String>,
        allow_major_version_upgrade: bool,
    },
    /// SwitchoverGlobalCluster to the member cluster of this ARN.
    Switchover { name: String, target_arn: String },
    /// FailoverGlobalCluster with AllowDataLoss to the member cluster of this ARN, sent in its
    /// region (the primary's may be down).
    Failover {
        name: String,
        target_arn: String,
        region: String,
    },
}

/// One call or write.
pub type Step = named::Step<Own>;

/// What one reconcile does and reports.
pub type Plan = named::NamedPlan<GlobalCluster>;

/// The status to write: Ready once RDS reports it available (`named::by_state`).
fn status(plan: &mut Plan, fields: GlobalClusterStatus, synced: ConditionPlan) {
    let state = fields.state.clone();
    plan.status = Some(named::by_state(fields, state.as_deref(), synced));
}

/// The status fields of the observed global database.
fn observed_fields(g: &GlobalCluster, o: &ObservedGlobalCluster) -> GlobalClusterStatus {
    let writer = (o.members.iter())
        .find(|m| m.role == "writer")
        .map(|m| m.db_cluster_identifier.clone());
    GlobalClusterStatus {
        global_cluster_identifier: Some(o.identifier.clone()),
        arn: o.arn.clone(),
        state: Some(o.status.clone()),
        engine: o.engine.clone(),
        engine_version: o.engine_version.clone(),
        deletion_protection: o.deletion_protection,
        storage_encrypted: o.storage_encrypted,
        endpoint: o.endpoint.clone(),
        writer,
        members: o.members.clone(),
        applied_tag_keys: (g.status.as_ref())
            .map(|s| s.applied_tag_keys.clone())
            .unwrap_or_default(),
        ..Default::default()
    }
}

/// The one decision of a reconcile of a GlobalCluster.
pub fn plan(f: &Facts) -> Plan {
    let g = &f.object;
    if g.metadata.deletion_timestamp.is_some() && has_finalizer(&g.metadata) {
        let ours = (f.observed.as_ref()).filter(|o| named::owned(g, &o.tags));
        if let Some(o) = ours.filter(|o| !o.members.is_empty()) {
            return in_use(f, o);
        }
    }
    named::plan(f, |plan, desired| apply(f, plan, desired))
}

/// A deletion while member clusters are left: RDS refuses it (InvalidGlobalClusterStateFault), and
/// the clusters are their DBClusters' to delete or detach: it waits, with no call.
fn in_use(f: &Facts, o: &ObservedGlobalCluster) -> Plan {
    let mut plan = KindPlan::new(Requeue::After(f.drift_interval));
    let members: Vec<_> = (o.members.iter())
        .map(|m| format!("{} ({})", m.db_cluster_identifier, m.region))
        .collect();
    let message = format!(
        "the global database still has member clusters: {}; it is deleted once they are \
         deleted or detached",
        members.join(", ")
    );
    let waiting = ConditionPlan::new(false, "InUse", message);
    plan.status = Some(KindStatus {
        fields: observed_fields(&f.object, o),
        ready: waiting.clone(),
        synced: waiting,
        busy: false,
    });
    plan
}

fn apply(f: &Facts, mut plan: Plan, desired_tags: BTreeMap<String, String>) -> Plan {
    let g = &f.object;
    let Some(o) = &f.observed else {
        return absent(f, plan, desired_tags);
    };
    if !named::owned(g, &o.tags) {
        let refused = named::refuse_name_in_use(g, &mut plan);
        status(&mut plan, GlobalClusterStatus::default(), refused);
        return plan;
    }
    let mut fields = observed_fields(g, o);
    let modify = (o.status == "available")
        .then(|| modification(g, o))
        .flatten();
    if o.status != "available" {
        plan.requeue = Requeue::After(f.busy_interval);
    }
    // A role change waits for a modification to be done, and is kept as recorded meanwhile. It
    // goes before the tags: they are sent in the GlobalCluster's own region, which may be the
    // silent one a failover leaves, and their failure must not hold the failover back.
    let role = match modify.is_some() {
        true => {
            fields.role_change = g.status.as_ref().and_then(|s| s.role_change.clone());
            None
        }
        false => role::plan(f, &mut plan, o, &mut fields),
    };
    let (mut changed, applied) =
        named::retag(&mut plan, g, (&o.tags, o.arn.as_deref()), &desired_tags);
    fields.applied_tag_keys = applied;
    if let Some(modify) = modify {
        if let Own::Modify {
            deletion_protection,
            engine_version,
            ..
        } = &modify
        {
            changed.extend(deletion_protection.map(|p| format!("deletionProtection {p}")));
            changed.extend(
                engine_version
                    .as_ref()
                    .map(|v| format!("engineVersion {v}")),
            );
        }
        plan.step(Step::Own(modify));
    }
    let synced = match (changed.is_empty(), role) {
        (true, Some(role)) => role,
        (true, None) => ConditionPlan::new(true, "Synced", "the global database matches the spec"),
        (false, _) => {
            let note = format!("sent to RDS: {}", changed.join("; "));
            plan.event(EventType::Normal, "Updating", "Update", note.clone());
            plan.requeue = Requeue::After(f.busy_interval);
            ConditionPlan::new(false, "Updating", note)
        }
    };
    status(&mut plan, fields, synced);
    plan
}

/// The ModifyGlobalCluster that brings deletion protection and the engine version to the spec
/// (a version RDS reports that starts with the spec's is the spec's); None when nothing differs.
fn modification(g: &GlobalCluster, o: &ObservedGlobalCluster) -> Option<Own> {
    let spec = &g.spec;
    let protection =
        (spec.deletion_protection).filter(|p| o.deletion_protection.unwrap_or(false) != *p);
    let version = (spec.engine_version.clone()).filter(|v| {
        let now = o.engine_version.as_deref().unwrap_or_default();
        now != v && !now.starts_with(&format!("{v}."))
    });
    (protection.is_some() || version.is_some()).then(|| Own::Modify {
        name: g.name_in_rds(),
        deletion_protection: protection,
        engine_version: version,
        allow_major_version_upgrade: spec.allow_major_version_upgrade.unwrap_or(false),
    })
}

/// RDS has no global database of the name: made once, of an available primary or empty; never
/// again once made (its members would not follow a new one).
fn absent(f: &Facts, mut plan: Plan, tags: BTreeMap<String, String>) -> Plan {
    let g = &f.object;
    let name = g.name_in_rds();
    let wait = |mut plan: Plan, reason: &str, message: String, every| {
        plan.requeue = Requeue::After(every);
        plan.refusal = Some("Unresolved");
        let fields = g.status.clone().unwrap_or_default();
        status(
            &mut plan,
            fields,
            ConditionPlan::new(false, reason, message),
        );
        plan
    };
    if g.status.as_ref().is_some_and(|s| s.arn.is_some()) {
        let message = format!(
            "RDS has no global database {name} any more: it was deleted outside the operator; \
             it is not made again, its member clusters would not follow (delete this object, or \
             give it another globalClusterIdentifier)"
        );
        plan.event(EventType::Warning, "NotFound", "Reconcile", message.clone());
        return wait(plan, "NotFound", message, f.drift_interval);
    }
    let spec = &g.spec;
    let source_arn = match (&spec.source_db_cluster_ref, &f.extra.primary) {
        (None, _) => None,
        (Some(_), Primary::Found { arn, status }) if status == "available" => Some(arn.clone()),
        (Some(r), Primary::Found { status, .. }) => {
            let message = format!(
                "RDS reports the primary DBCluster {} {status}; the global database is made of \
                 it once it is available",
                r.name
            );
            return wait(plan, "SourceNotAvailable", message, f.busy_interval);
        }
        (Some(_), Primary::Unresolved(why)) => {
            return wait(plan, "ReferencesUnresolved", why.clone(), f.busy_interval);
        }
        (Some(_), Primary::NotRead) => {
            let message = "the primary is not read".to_owned();
            return wait(plan, "ReferencesUnresolved", message, f.busy_interval);
        }
    };
    let from = match &spec.source_db_cluster_ref {
        Some(r) => format!("of DBCluster {}", r.name),
        None => "empty".to_owned(),
    };
    plan.step(Step::Own(Own::Create {
        name: name.clone(),
        engine: (spec.engine).map(|e| e.as_str().to_owned()),
        engine_version: spec.engine_version.clone().filter(|_| source_arn.is_none()),
        deletion_protection: spec.deletion_protection,
        storage_encrypted: spec.storage_encrypted,
        source_arn,
        tags,
    }));
    let note = format!("creating the global database {name}, {from}");
    plan.event(EventType::Normal, "Creating", "Create", note);
    plan.requeue = Requeue::After(f.busy_interval);
    let fields = GlobalClusterStatus {
        global_cluster_identifier: Some(name),
        state: Some("creating".into()),
        applied_tag_keys: tags::keys(&spec.tags),
        ..Default::default()
    };
    status(
        &mut plan,
        fields,
        ConditionPlan::new(true, "Creating", "the global database is being made"),
    );
    plan
}

#[cfg(test)]
mod tests;
