//! spec.activation and spec.activationSchedule of a DBCluster, pure: the shared rules
//! (`database::rules::activation`) over the cluster's plan, their call StopDBCluster or
//! StartDBCluster. RDS stops and starts the cluster's instances with it, and starts a stopped
//! cluster by itself after 7 days (API_StopDBCluster.html): the operator stops it again. What RDS
//! cannot stop ("Stopping and starting an Amazon Aurora DB cluster", aurora-cluster-stop-start.html,
//! Limitations: a cluster that is part of a global database, an Aurora Serverless v1 cluster) is
//! refused with its reason, and nothing is sent.

use super::super::observed::ObservedCluster;
use super::{ClusterStep, Facts, Plan, Step};
use crate::database::activation::{self, Decision, Inputs};
use crate::database::rules::CLUSTER;
use crate::database::rules::activation::{self as rules, Call, Subject};
use crate::managed::plan::{ConditionPlan, Requeue};

/// Why RDS cannot stop the cluster, in its words (None: it can).
pub fn not_stoppable(f: &Facts, o: &ObservedCluster) -> Option<&'static str> {
    if o.global_cluster.is_some() || f.cluster.spec.global_cluster_ref.is_some() {
        Some(
            "RDS can't stop a cluster that is part of a global database (aurora-cluster-stop-start.html)",
        )
    } else {
        None
    }
}

/// Whether the cluster is to run, as the spec, its schedule and the override say at `f.now`.
pub fn decision(f: &Facts) -> Decision {
    let status = f.cluster.status.as_ref().map(|s| &s.common);
    let annotations = f.cluster.metadata.annotations.as_ref();
    activation::decide(&Inputs::of(
        &f.cluster.spec.run,
        annotations,
        status,
        &f.now,
    ))
}

/// The activation steps and conditions of a pass of our cluster, once its other steps are
/// planned.
pub(super) fn plan(f: &Facts, mut plan: Plan, o: &ObservedCluster) -> Plan {
    let d = decision(f);
    let status = f.cluster.status.as_ref();
    let previous_synced = (status.iter().flat_map(|s| s.reported.conditions.iter()))
        .find(|c| c.type_ == "Synced")
        .map(|c| (c.reason.as_str(), c.message.as_str()));
    let out = rules::plan(&Subject {
        noun: CLUSTER,
        decision: &d,
        scheduled: f.cluster.spec.run.activation_schedule.is_some(),
        state: &o.status,
        stopped_before: status.and_then(|s| s.common.stopped_at.as_deref()),
        may_act: true,
        others: plan.steps.iter().any(|s| !matches!(s, Step::Secret(_))),
        not_stoppable: not_stoppable(f, o),
        previous_synced,
        now: &f.now,
    });
    // Stopped as it is to be: nothing moves, looked at again when settled (or at the boundary).
    if out.ready.is_some() {
        plan.requeue = Requeue::After(f.intervals.settled);
    }
    let identifier = f.cluster.identifier();
    let own = |call| match call {
        Call::Stop => ClusterStep::Stop { identifier },
        Call::Start => ClusterStep::Start { identifier },
    };
    out.write(&mut plan, own, f.intervals.busy);
    let Some(status) = plan.status.as_mut() else {
        return plan;
    };
    status.fields.common.stopped_at = out.stopped_at;
    status.fields.common.activation_override = d.recorded;
    if let Some(ready) = out.ready {
        status.ready = ready;
        status.busy = false;
        let message = "stopped as the spec says; changes to the spec wait until it runs";
        status.synced = ConditionPlan::new(true, "Synced", message);
    }
    if let Some(synced) = out.synced {
        status.synced = synced;
    }
    plan
}
