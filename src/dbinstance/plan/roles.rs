//! spec.associatedRoles of a DBInstance, pure: the shared rules (`database::rules::roles`) over the
//! instance's plan, once its other steps are planned. A member has none (its cluster's roles are
//! the DBCluster's).

use kube::runtime::events::EventType;

use super::spec;
use super::types::{Facts, Plan, Step};
use crate::database::rules::roles;
use crate::rds_state::ObservedInstance;

/// The role call of a pass (`may_act`: not observe-only, not held), and the roles in status.
pub(super) fn plan(f: &Facts, plan: &mut Plan, o: &ObservedInstance, may_act: bool) {
    if spec::is_member(&f.db) {
        return;
    }
    let previous = (f.db.status.as_ref()).map_or(&[][..], |s| &s.common.associated_roles[..]);
    let others = plan.steps.iter().any(|s| !matches!(s, Step::Secret(_)));
    let may_call = may_act && !others && o.status == "available";
    let wanted = &f.db.spec.roles.associated_roles;
    let out = roles::plan(wanted, &o.associated_roles, previous, may_call);
    if let Some(call) = out.call {
        plan.event(EventType::Normal, call.reason(), "Update", call.note());
        let identifier = f.db.identifier();
        plan.step(Step::Role { identifier, call });
        plan.look_again_within(f.intervals.busy);
    }
    if let Some(status) = plan.status.as_mut() {
        status.fields.common.associated_roles = out.status;
    }
}
