//! Blue/green upgrades of an Aurora cluster (upgradePolicy BlueGreen): an engine version change
//! is made by a deployment instead of a ModifyDBCluster (with the spec's cluster parameter group
//! and dbInstanceParameterGroupName as green's, which a major upgrade needs), made once none is
//! found and nothing else is to be sent, switched over once approved and AVAILABLE; the old
//! cluster is kept for spec.oldClusterRetention, then its members, it and the deployment are
//! deleted; a deletion of the DBCluster deletes the deployment first (`cleanup`). The states, the
//! approval and the status record are the rules DBInstance shares (`database::blue_green`).

use kube::ResourceExt;
use kube::runtime::events::EventType;

use super::{
    ClusterModification, ClusterStep, Facts, Plan, Step, deletion_policy, status_plan, uid,
};
use crate::database::blue_green::{self as shared, Call};
use crate::database::choices::DeletionPolicy;
use crate::database::parts::FieldDrift;
use crate::database::rules::CLUSTER;
use crate::database::rules::blue_green::{self as rules, Green, Held, Report, Source, Subject};
use crate::dbcluster::observed::ObservedCluster;
use crate::dbcluster::{ClusterBlueGreen, DBCluster, DBClusterSpec, DBClusterStatus};
use crate::managed::plan::{ConditionPlan, KindPlan, Requeue};
use crate::managed::tags;
use crate::rds_state::{BlueGreenTargets, ObservedDeployment, ObservedInstance};

/// What the read step learnt of the cluster's deployment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlueGreenFacts {
    /// The deployment, green before the switchover and the old cluster after it.
    pub found: shared::Facts<ObservedCluster>,
    /// The members of green or the old cluster, read directly when one may be deleted (at the
    /// DBCluster's deletion, or once the old cluster's retention has passed).
    pub members: Vec<ObservedInstance>,
}

/// What to read: the deployment status records, or one of this cluster when the spec asks for an
/// engine version change under upgradePolicy BlueGreen.
pub fn read(cluster: &DBCluster, observed: Option<&ObservedCluster>) -> Option<shared::Read> {
    let recorded = (cluster.status.as_ref().and_then(|s| s.blue_green.as_ref())).map(|r| {
        (
            &r.deployment,
            r.green_cluster.clone(),
            r.old_cluster.clone(),
        )
    });
    let wanted = shared::blue_green(&cluster.spec.upgrade)
        && observed.is_some_and(|o| {
            (super::compare(&cluster.spec, o, true).modification)
                .engine_version
                .is_some()
        });
    shared::read(recorded, observed.and_then(|o| o.arn.as_deref()), wanted)
}

/// Whether the read step reads the members of the clusters a deployment made or left.
pub fn members_wanted(cluster: &DBCluster, now: &str) -> bool {
    let switched = (cluster.status.as_ref())
        .and_then(|s| s.blue_green.as_ref())
        .and_then(|b| b.deployment.switched_over_at.as_deref());
    cluster.metadata.deletion_timestamp.is_some()
        || shared::retention_due(cluster.spec.old_cluster_retention, switched, now)
}

/// Takes out of the modification what a deployment carries: under upgradePolicy BlueGreen an
/// engine version change (and a cluster parameter group change made with it) is never sent by a
/// ModifyDBCluster, whether the spec was edited or RDS drifted.
pub(super) fn carried(
    f: &Facts,
    o: &ObservedCluster,
    modification: &mut ClusterModification,
) -> Vec<FieldDrift> {
    let Some(version) = modification.engine_version.clone() else {
        return Vec::new();
    };
    if !shared::blue_green(&f.cluster.spec.upgrade) {
        return Vec::new();
    }
    let mut carried = vec![FieldDrift {
        field: "engineVersion".into(),
        observed: o.engine_version.clone().unwrap_or_default(),
        desired: version,
    }];
    modification.leave("engineVersion");
    modification.allow_major_version_upgrade = false;
    if let Some(group) = modification.db_cluster_parameter_group_name.clone() {
        carried.push(FieldDrift {
            field: "dbClusterParameterGroupName".into(),
            observed: o
                .db_cluster_parameter_group_name
                .clone()
                .unwrap_or_default(),
            desired: group,
        });
        modification.leave("dbClusterParameterGroupName");
    }
    carried
}

/// The blue/green rules of our cluster, before its other changes: a deployment RDS has is reported
/// and acted on; a change it would carry makes one when nothing else is to be sent. Whether they
/// decided (the plan then holds it).
pub(super) fn decided(
    f: &Facts,
    plan: &mut Plan,
    (spec, o): (&DBClusterSpec, &ObservedCluster),
    carried: &[FieldDrift],
    fields: &mut DBClusterStatus,
    in_sync_otherwise: bool,
) -> bool {
    let facts = f.blue_green.as_ref();
    let previous = (f.cluster.status.as_ref()).and_then(|s| s.blue_green.as_ref());
    match facts.and_then(|x| x.found.deployment.as_ref()) {
        Some(d) => {
            let green = facts.and_then(|x| x.found.green.as_ref());
            fields.blue_green = Some(status_of(d, previous, green, &f.now));
            let who = subject(f, previous, fields.blue_green.as_ref());
            match rules::deployment(plan, &who, d) {
                Held::Report(r) => return report(f, plan, fields, r),
                Held::Completed => retention(f, plan, d, fields),
            }
        }
        // The deployment is gone: its record stays while its old cluster does.
        None => {
            let old = facts.is_some_and(|x| x.found.old.is_some());
            fields.blue_green = previous.filter(|p| p.old_cluster.is_some() && old).cloned();
        }
    }
    if carried.is_empty() || !in_sync_otherwise {
        return false;
    }
    let source = Source {
        status: &o.status,
        unsupported: unsupported(&f.cluster, o),
    };
    // A deployment is made only once none was found, on a read of this reconcile.
    let who = subject(f, previous, fields.blue_green.as_ref());
    match rules::refusal(&who, f.blue_green.is_some(), source, carried) {
        Some(r) => report(f, plan, fields, r),
        None => create(f, plan, (spec, o), carried, fields),
    }
}

/// Our cluster as the shared rules see it, with the deployment status recorded before this
/// reconcile and the one it is to record.
fn subject<'a>(
    f: &'a Facts,
    previous: Option<&'a ClusterBlueGreen>,
    current: Option<&'a ClusterBlueGreen>,
) -> Subject<'a> {
    let recorded = (
        previous.map(|p| &p.deployment),
        current.map(|c| (&c.deployment, c.old_cluster.as_deref())),
    );
    let (o, who) = (&f.cluster, (f.cluster.identifier(), CLUSTER));
    let lag = (f.blue_green.as_ref()).and_then(|b| b.found.green_lag_seconds);
    Subject::new(who, &o.spec.upgrade, &o.metadata, recorded).lagging(lag)
}

/// Why RDS would refuse a deployment of this cluster: a master password RDS manages, or a member
/// of a global database ("Limitations and considerations for blue/green deployments",
/// blue-green-deployments-considerations.html).
fn unsupported(cluster: &DBCluster, o: &ObservedCluster) -> Option<&'static str> {
    if cluster.spec.password.manage_master_user_password == Some(true) {
        Some("blue/green deployments do not support a master password managed in Secrets Manager")
    } else if o.global_cluster.is_some() {
        Some("a cluster of an Aurora global database has no blue/green deployments")
    } else {
        None
    }
}

/// One CreateBlueGreenDeployment: green with the spec's version, its cluster parameter group and
/// the members' dbInstanceParameterGroupName.
fn create(
    f: &Facts,
    plan: &mut Plan,
    (spec, o): (&DBClusterSpec, &ObservedCluster),
    carried: &[FieldDrift],
    fields: &mut DBClusterStatus,
) -> bool {
    let cluster = &f.cluster;
    let targets = BlueGreenTargets {
        engine_version: spec.engine_version.clone(),
        db_cluster_parameter_group_name: spec.db_cluster_parameter_group_name.clone(),
        db_parameter_group_name: spec.db_instance_parameter_group_name.clone(),
        ..Default::default()
    };
    let green = Green {
        source: o.arn.clone().unwrap_or_default(),
        targets,
        tags: super::desired_tags(cluster),
        copy: "a green copy of the cluster and its members",
    };
    let named = (
        &cluster.identifier()[..],
        cluster.metadata.generation.unwrap_or_default(),
    );
    let (deployment, r) = rules::create(plan, named, green, carried);
    fields.blue_green = Some(ClusterBlueGreen {
        deployment,
        ..Default::default()
    });
    report(f, plan, fields, r)
}

/// After the switchover: once spec.oldClusterRetention has passed, the old cluster's members are
/// deleted, then the old cluster as deletionPolicy says, decided on direct reads of them; then the
/// deployment.
fn retention(f: &Facts, plan: &mut Plan, d: &ObservedDeployment, fields: &DBClusterStatus) {
    let cluster = &f.cluster;
    let switched =
        (fields.blue_green.as_ref()).and_then(|b| b.deployment.switched_over_at.as_deref());
    if !shared::retention_due(cluster.spec.old_cluster_retention, switched, &f.now)
        || deletion_policy(cluster) == DeletionPolicy::Retain
    {
        return;
    }
    let Some(facts) = &f.blue_green else { return };
    let note = match &facts.found.old {
        Some(old) if !tags::owned_by(&old.tags, &uid(cluster)) => return,
        Some(old) => {
            if !delete_leftover(f, plan, old, &facts.members) {
                return;
            }
            format!(
                "the retention of the old cluster {} of blue/green deployment {} has passed: \
                 deleting it as deletionPolicy says, then the deployment",
                old.identifier, d.identifier
            )
        }
        None => {
            plan.step(Step::BlueGreen {
                identifier: cluster.identifier(),
                call: Call::Delete {
                    deployment: d.identifier.clone(),
                },
            });
            format!(
                "the old cluster is gone: deleting blue/green deployment {}",
                d.identifier
            )
        }
    };
    plan.event(EventType::Normal, "OldClusterDeleting", "Update", note);
    plan.requeue = Requeue::After(f.intervals.busy);
}

/// The deletion of a cluster a deployment left (green before the switchover, the old one after
/// it): its members of this namespace first (a cluster with members cannot be deleted), then it,
/// with a final snapshot under deletionPolicy Snapshot. Whether a step was planned.
fn delete_leftover(
    f: &Facts,
    plan: &mut Plan,
    c: &ObservedCluster,
    members: &[ObservedInstance],
) -> bool {
    if c.status == "deleting" {
        return false;
    }
    let namespace = f.cluster.namespace().unwrap_or_default();
    if !c.members.is_empty() {
        let before = plan.steps.len();
        let ours = (members.iter()).filter(|m| {
            c.members.iter().any(|cm| cm.identifier == m.identifier)
                && m.status != "deleting"
                && tags::owned_by_namespace(&m.tags, &namespace)
        });
        for m in ours {
            plan.step(Step::Own(ClusterStep::DeleteMember {
                cluster: c.identifier.clone(),
                identifier: m.identifier.clone(),
            }));
        }
        return plan.steps.len() > before;
    }
    let deleting = f.cluster.metadata.deletion_timestamp.is_some();
    let final_snapshot = shared::leftover_snapshot(
        deletion_policy(&f.cluster),
        deleting,
        &c.identifier,
        &f.cluster.metadata,
        &f.now,
    );
    plan.step(Step::Own(ClusterStep::Delete {
        identifier: c.identifier.clone(),
        final_snapshot,
    }));
    true
}

/// At deletion of the DBCluster: its deployment is deleted first (never with its target), and the
/// clusters it left (with their members) through the final snapshot rule, before the cluster
/// itself. None: the deployment has nothing (more) to do; deletionPolicy Retain keeps all of it.
pub(super) fn cleanup(f: &Facts) -> Option<Plan> {
    let facts = f.blue_green.as_ref()?;
    if deletion_policy(&f.cluster) == DeletionPolicy::Retain || !f.observed_directly {
        return None;
    }
    let mut plan = KindPlan::new(Requeue::After(f.intervals.busy));
    if let Some(d) = &facts.found.deployment {
        rules::delete_first(&mut plan, &subject(f, None, None), d);
        return Some(plan);
    }
    let uid = uid(&f.cluster);
    let leftovers = [&facts.found.green, &facts.found.old].into_iter().flatten();
    for c in leftovers.filter(|c| tags::owned_by(&c.tags, &uid)) {
        if delete_leftover(f, &mut plan, c, &facts.members) {
            let note = format!("deleting {}, left by a blue/green deployment", c.identifier);
            plan.event(EventType::Normal, "Deleting", "Delete", note);
        }
    }
    (!plan.steps.is_empty()).then_some(plan)
}

/// The status of a deployment RDS reports, with what the operator recorded of it.
fn status_of(
    d: &ObservedDeployment,
    previous: Option<&ClusterBlueGreen>,
    green: Option<&ObservedCluster>,
    now: &str,
) -> ClusterBlueGreen {
    let completed = d.status == "SWITCHOVER_COMPLETED";
    ClusterBlueGreen {
        deployment: shared::status(d, previous.map(|p| &p.deployment), now),
        green_cluster: (d.target.as_deref())
            .map(shared::identifier_of)
            .filter(|_| !completed),
        green_endpoint: green
            .filter(|_| !completed)
            .and_then(|g| g.endpoint.clone()),
        old_cluster: completed.then(|| shared::identifier_of(&d.source)),
    }
}

/// Synced False with the rules' reason; Ready as RDS shows the cluster (blue serves meanwhile). The
/// plan holds.
fn report(f: &Facts, plan: &mut Plan, fields: &DBClusterStatus, r: Report) -> bool {
    plan.requeue = Requeue::After(r.after(&f.intervals));
    let available = f.observed.as_ref().is_some_and(|o| o.status == "available");
    let synced = ConditionPlan::new(false, &r.reason, r.message);
    plan.status = Some(status_plan(fields.clone(), available, synced, r.busy));
    true
}
