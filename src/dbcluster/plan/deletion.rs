//! A DBCluster being deleted.

use kube::runtime::events::EventType;

use super::{
    ClusterModification, ClusterStep, Facts, Plan, Step, deletion_policy, drift_interval,
    status_plan, uid,
};
use crate::crd::has_finalizer;
use crate::database::choices::DeletionPolicy;
use crate::database::snapshots;
use crate::dbcluster::DBClusterStatus;
use crate::managed::plan::{ConditionPlan, KindPlan, Requeue};
use crate::managed::tags;

/// A DBCluster being deleted: Retain lets go at once; otherwise, on a direct read, wait while
/// members exist (InUse) or RDS protects the cluster, delete it (with a final snapshot for
/// Snapshot), and let go once RDS has no cluster. A cluster that is not ours is never deleted.
pub(super) fn plan(f: &Facts) -> Plan {
    let cluster = &f.cluster;
    let mut plan = KindPlan::new(Requeue::After(f.intervals.busy));
    if !has_finalizer(&cluster.metadata) {
        plan.requeue = Requeue::AwaitChange;
        return plan;
    }
    let identifier = cluster.identifier();
    let policy = deletion_policy(cluster);
    if super::observe_only(cluster) {
        plan.step(Step::RemoveFinalizer);
        return plan;
    }
    if policy == DeletionPolicy::Retain {
        return retained(plan, &identifier);
    }
    if !f.observed_directly {
        return plan;
    }
    // A blue/green deployment, and the clusters it made or left, go first.
    if let Some(plan) = super::blue_green::cleanup(f) {
        return plan;
    }
    let fields = cluster.status.clone().unwrap_or_default();
    let Some(o) = &f.observed else {
        plan.step(Step::RemoveFinalizer);
        return plan;
    };
    if !tags::owned_by(&o.tags, &uid(cluster)) {
        plan.event(
            EventType::Warning,
            "NotDeleted",
            "Delete",
            format!("RDS cluster {identifier} is not this DBCluster's; it is left as it is"),
        );
        plan.step(Step::RemoveFinalizer);
        return plan;
    }
    if o.status == "deleting" {
        return waiting(
            plan,
            &fields,
            "Deleting",
            format!("RDS is deleting cluster {identifier}"),
        );
    }
    // A Multi-AZ DB cluster's instances are RDS's own, deleted with it (DeleteDBCluster).
    let own_members = !f.cluster.spec.engine.multi_az();
    let members: Vec<String> = (f.referrers.iter().cloned())
        .chain(
            (o.members.iter().filter(|_| own_members))
                .map(|m| format!("instance {}", m.identifier)),
        )
        .collect();
    if !members.is_empty() {
        let message = format!(
            "the cluster still has members ({}); it is deleted once they are gone",
            members.join(", ")
        );
        return waiting(plan, &fields, "InUse", message);
    }
    match super::global::deletion(f, o) {
        Some(Ok((step, note))) => {
            plan.event(EventType::Normal, "Detaching", "Delete", note.clone());
            plan.step(step);
            return waiting(plan, &fields, "Deleting", note);
        }
        Some(Err(why)) => {
            plan.requeue = Requeue::After(drift_interval(f));
            return waiting(plan, &fields, "InUse", why);
        }
        None => {}
    }
    match o.deletion_protection == Some(true) {
        true => protected(f, plan, &fields),
        false => delete(f, plan, fields, policy),
    }
}

/// deletionPolicy Retain: the cluster (and what a blue/green deployment left) is let go of.
fn retained(mut plan: Plan, identifier: &str) -> Plan {
    let note =
        format!("deletionPolicy is Retain: RDS cluster {identifier} and its Secrets are kept");
    plan.event(EventType::Normal, "Retained", "Delete", note);
    plan.step(Step::RemoveFinalizer);
    plan
}

/// RDS protects the cluster: with spec.deletionProtection false, one ModifyDBCluster turns the
/// protection off (decided on this direct read); otherwise the deletion waits.
fn protected(f: &Facts, mut plan: Plan, fields: &DBClusterStatus) -> Plan {
    let identifier = f.cluster.identifier();
    if f.cluster.spec.deletion.deletion_protection == Some(false) {
        plan.step(Step::Modify {
            identifier: identifier.clone(),
            modification: Box::new(ClusterModification {
                apply_immediately: true,
                deletion_protection: Some(false),
                ..Default::default()
            }),
            password: None,
        });
        let message = format!("turning off the deletion protection of RDS cluster {identifier}");
        return waiting(plan, fields, "Deleting", message);
    }
    plan.requeue = Requeue::After(drift_interval(f));
    let message = format!(
        "RDS cluster {identifier} has deletion protection; set spec.deletionProtection: false (or \
         turn it off in AWS) to let the deletion proceed"
    );
    waiting(plan, fields, "DeletionProtected", message)
}

/// DeleteDBCluster, with a final snapshot unique per deletion under deletionPolicy Snapshot.
fn delete(f: &Facts, mut plan: Plan, mut fields: DBClusterStatus, policy: DeletionPolicy) -> Plan {
    let (cluster, identifier) = (&f.cluster, f.cluster.identifier());
    let final_snapshot = (policy == DeletionPolicy::Snapshot).then(|| {
        let explicit = cluster
            .spec
            .deletion
            .final_db_snapshot_identifier
            .as_deref();
        snapshots::final_snapshot_name(explicit, &identifier, &cluster.metadata)
    });
    plan.step(Step::Own(ClusterStep::Delete {
        identifier: identifier.clone(),
        final_snapshot: final_snapshot.clone(),
    }));
    let note = match &final_snapshot {
        Some(s) => format!("deleting RDS cluster {identifier} after final snapshot {s}"),
        None => format!("deleting RDS cluster {identifier} without a final snapshot"),
    };
    plan.event(EventType::Normal, "Deleting", "Delete", note);
    fields.final_snapshot = final_snapshot;
    fields.status = Some("deleting".into());
    waiting(
        plan,
        &fields,
        "Deleting",
        format!("deleting RDS cluster {identifier}"),
    )
}

/// The deletion waits (or goes on) for `reason`: Ready and Synced False with it.
fn waiting(mut plan: Plan, fields: &DBClusterStatus, reason: &str, message: String) -> Plan {
    let condition = ConditionPlan::new(false, reason, message);
    let mut status = status_plan(fields.clone(), false, condition.clone(), true);
    status.ready = condition;
    plan.status = Some(status);
    plan
}
