//! Ready means the cluster takes connections (issue 76: no vacuous truth over a list). RDS
//! reports an Aurora cluster `available` before any instance exists, and its endpoints then take
//! no connection. So a cluster that has members, in RDS or declared by DBInstances of the
//! namespace, is Ready only once one of them serves: a writer (any member, for a cluster in a
//! global database, whose secondaries have readers only) that the shared poll of instances saw
//! `available`. A member the namespace does not manage (the instances RDS makes for a Multi-AZ
//! DB cluster, one made in the console) is taken as RDS lists it. A cluster with no instance,
//! none declared, is what it is used for without one (snapshots, clones, a global primary to
//! be): Ready as RDS shows it. A Limitless Database has shards, not instances.
//! Table tests in `tests.rs` (`serving`).

use crate::database::choices::ClusterScalabilityType;
use crate::managed::plan::ConditionPlan;

use super::{Facts, Plan};

/// Ready False with this reason: available in RDS, no member serving yet. A member DBInstance
/// still takes its cluster as resolved (`dbinstance::read`): it is what the cluster waits for.
pub const NO_WRITER: &str = "NoWriter";

/// `plan` with Ready held False while the cluster has members and none serves.
pub(super) fn hold(f: &Facts, mut plan: Plan) -> Plan {
    if let Some(status) = plan.status.as_mut()
        && status.ready.ok
        && let Some(why) = not_serving(f)
    {
        status.ready = ConditionPlan::new(false, NO_WRITER, why);
    }
    plan
}

/// Why the cluster takes no connection yet (None: it does, or has no member to wait for).
fn not_serving(f: &Facts) -> Option<String> {
    let limitless =
        f.cluster.spec.cluster_scalability_type == Some(ClusterScalabilityType::Limitless);
    let o = f.observed.as_ref()?;
    if limitless || (o.members.is_empty() && f.declared_members.is_empty()) {
        return None;
    }
    let global = o.global_cluster.is_some();
    let serves = |id: &str| match f.member_states.get(id) {
        Some(state) => state == "available",
        None => !f.declared_members.iter().any(|d| d == id),
    };
    let serving = (o.members.iter()).any(|m| (m.writer || global) && serves(&m.identifier));
    if serving {
        return None;
    }
    let role = if global { "member" } else { "writer" };
    let listed: Vec<String> = (o.members.iter())
        .map(|m| {
            let state = f.member_states.get(&m.identifier);
            let state = state.map_or("not polled yet", String::as_str);
            let role = if m.writer { "writer" } else { "reader" };
            format!("{} ({role}, {state})", m.identifier)
        })
        .collect();
    Some(match listed.is_empty() {
        true => format!(
            "RDS reports the cluster available but lists no instance in it, while DBInstances of \
             this namespace declare {} its members: its endpoints take no connection until one \
             is available",
            f.declared_members.join(", ")
        ),
        false => format!(
            "RDS lists no available {role} among the cluster's instances ({}): its endpoint \
             takes no connection until one is",
            listed.join(", ")
        ),
    })
}
