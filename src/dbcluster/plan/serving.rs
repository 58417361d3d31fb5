//! Ready means the cluster takes connections (issue 76: no vacuous truth over a list). RDS
//! reports an Aurora cluster `available` before any instance exists, and its endpoints then take
//! no connection. So a cluster that has members, in RDS or declared by DBInstances of the
//! namespace, is Ready only while one of them serves: its writer (in a global database's
//! secondary, which has readers only, any member) in a state that takes connections, as the
//! shared poll of instances last saw it. A member missing from that listing (one the operator
//! has just changed is read again directly before it is listed) leaves the last verdict as it
//! was. A cluster with no instance, none declared, is what it is used for without one
//! (snapshots, clones, a global primary to be): Ready as RDS shows it. A Limitless Database has
//! shards, not instances.
//!
//! Ready=False NoWriter still lets the cluster be referred to (`Referable::USABLE_WHEN`): its
//! members join it, and what needs only the cluster (an endpoint, a snapshot, a subscription, a
//! global database) goes on; a DBUser, which logs in, waits for Ready.
//! Table tests in `tests/serving.rs`.

use crate::database::choices::ClusterScalabilityType;
use crate::managed::plan::{ConditionPlan, Requeue};

use super::{Facts, Plan};

/// Ready False with this reason: available in RDS, no member serving.
pub const NO_WRITER: &str = "NoWriter";

/// Whether an instance in this RDS state takes connections (DBInstance statuses,
/// Overview.DBInstance.Status.html): available, and the states of work RDS does on a running
/// instance. Creating, rebooting, stopping, upgrading, failed and the rest do not.
pub fn serves(state: &str) -> bool {
    matches!(
        state,
        "available"
            | "backing-up"
            | "modifying"
            | "maintenance"
            | "resetting-master-credentials"
            | "storage-optimization"
            | "storage-config-upgrade"
            | "renaming"
    ) || state.starts_with("configuring-")
}

/// `plan` with Ready held False while the cluster has members and none serves, and looked at
/// again at the busy interval until one does (a member's listing wakes no cluster).
pub(super) fn hold(f: &Facts, mut plan: Plan) -> Plan {
    let Some(why) = not_serving(f) else {
        return plan;
    };
    if let Some(status) = plan.status.as_mut()
        && status.ready.ok
    {
        status.ready = ConditionPlan::new(false, NO_WRITER, why);
        let busy = f.intervals.busy;
        match plan.requeue {
            Requeue::After(d) if d <= busy => {}
            Requeue::Backoff => {}
            _ => plan.requeue = Requeue::After(busy),
        }
    }
    plan
}

/// Why the cluster takes no connection (None: it does, or has no member to wait for).
fn not_serving(f: &Facts) -> Option<String> {
    let limitless =
        f.cluster.spec.cluster_scalability_type == Some(ClusterScalabilityType::Limitless);
    let o = f.observed.as_ref()?;
    if limitless || (o.members.is_empty() && f.declared_members.is_empty()) {
        return None;
    }
    // A secondary of a global database: RDS lists no writer in it, its readers serve it.
    let secondary = o.global_cluster.is_some() && !o.members.iter().any(|m| m.writer);
    let was_ready = (f.cluster.status.as_ref())
        .and_then(|s| crate::managed::conditions::last(&s.reported.conditions, "Ready"))
        .is_some_and(|ready| ready.ok);
    let serving = (o.members.iter())
        .filter(|m| m.writer || secondary)
        .any(|m| match f.member_states.get(&m.identifier) {
            Some(state) => serves(state),
            None => was_ready,
        });
    if serving {
        return None;
    }
    let listed: Vec<String> = (o.members.iter())
        .map(|m| {
            let state = f.member_states.get(&m.identifier);
            let state = state.map_or("not listed yet", String::as_str);
            let role = if m.writer { "writer" } else { "reader" };
            format!("{} ({role}, {state})", m.identifier)
        })
        .collect();
    let role = if secondary { "member" } else { "writer" };
    Some(match listed.is_empty() {
        true => format!(
            "RDS reports the cluster available but lists no instance in it, while DBInstances of \
             this namespace declare {} its members: its endpoints take no connection until one \
             is available",
            f.declared_members.join(", ")
        ),
        false => format!(
            "RDS lists no {role} that takes connections among the cluster's instances ({}): its \
             endpoint takes none until one does",
            listed.join(", ")
        ),
    })
}
