//! spec.associatedRoles of a DBCluster, pure: the shared rules (`database::rules::roles`) over the
//! cluster's plan, once its other steps are planned.

use kube::runtime::events::EventType;

use super::super::observed::ObservedCluster;
use super::{Facts, Plan, Step};
use crate::database::rules::roles;

/// The role call of a pass, and the roles in status.
pub(super) fn plan(f: &Facts, mut plan: Plan, o: &ObservedCluster) -> Plan {
    let previous = (f.cluster.status.as_ref()).map_or(&[][..], |s| &s.common.associated_roles[..]);
    let others = plan.steps.iter().any(|s| !matches!(s, Step::Secret(_)));
    let may_call = !others && o.status == "available";
    let wanted = &f.cluster.spec.roles.associated_roles;
    let out = roles::plan(wanted, &o.associated_roles, previous, may_call);
    if let Some(call) = out.call {
        plan.event(EventType::Normal, call.reason(), "Update", call.note());
        let identifier = f.cluster.identifier();
        plan.step(Step::Role { identifier, call });
        plan.look_again_within(f.intervals.busy);
    }
    if let Some(status) = plan.status.as_mut() {
        status.fields.common.associated_roles = out.status;
    }
    plan
}
