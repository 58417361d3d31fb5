//! Members that wait for a reboot to take static changes of the cluster parameter group, and
//! pendingRebootPolicy: report it, or reboot them one at a time, readers first and the writer
//! last, each only once every member is available (as the shared poll of instances last saw them).

use super::{ClusterStep, Facts, Plan, Step};
use crate::database::choices::PendingRebootPolicy;
use crate::database::window::in_window;
use crate::dbcluster::observed::ObservedCluster;
use crate::managed::plan::{ConditionPlan, Requeue};

/// None: no member waits for a reboot. Else the Synced condition, with the reboot planned when the
/// policy says now.
pub(super) fn plan(f: &Facts, plan: &mut Plan, o: &ObservedCluster) -> Option<ConditionPlan> {
    let pending: Vec<_> = (o.members.iter())
        .filter(|m| m.parameter_status.as_deref() == Some("pending-reboot"))
        .collect();
    let ids = pending
        .iter()
        .map(|m| m.identifier.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if pending.is_empty() {
        return None;
    }
    let now = chrono::DateTime::parse_from_rfc3339(&f.now)
        .map(|t| t.to_utc())
        .ok();
    let window = o
        .preferred_maintenance_window
        .as_deref()
        .unwrap_or_default();
    let now_allowed = match f.cluster.spec.maintenance.pending_reboot_policy {
        PendingRebootPolicy::Report => false,
        PendingRebootPolicy::Reboot => true,
        PendingRebootPolicy::MaintenanceWindow => now.is_some_and(|t| in_window(window, &t)),
    };
    let waiting = |why: String| Some(ConditionPlan::new(true, "PendingReboot", why));
    // RDS reboots a Multi-AZ DB cluster as a whole (RebootDBCluster), not its instances one by
    // one: reported, for whoever reboots it.
    if f.cluster.spec.engine.multi_az() {
        return waiting(format!(
            "instances {ids} wait for a reboot to take static parameter changes; a Multi-AZ DB \
             cluster reboots as a whole (RebootDBCluster), which the operator does not send: \
             reboot it when it suits you"
        ));
    }
    if !now_allowed {
        return waiting(format!(
            "members {ids} wait for a reboot to take static parameter changes; \
             pendingRebootPolicy is {:?}",
            f.cluster.spec.maintenance.pending_reboot_policy
        ));
    }
    let busy: Vec<&str> = (o.members.iter())
        .filter(|m| f.member_states.get(&m.identifier).map(String::as_str) != Some("available"))
        .map(|m| m.identifier.as_str())
        .collect();
    plan.requeue = Requeue::After(f.intervals.busy);
    if !busy.is_empty() {
        return waiting(format!(
            "members {ids} wait for a reboot; the next waits until {} is available",
            busy.join(", ")
        ));
    }
    // Readers first; the writer last, when no reader waits.
    let next = (pending.iter().find(|m| !m.writer)).unwrap_or(&pending[0]);
    plan.step(Step::Own(ClusterStep::RebootMember {
        cluster: o.identifier.clone(),
        identifier: next.identifier.clone(),
    }));
    let role = if next.writer {
        "the writer"
    } else {
        "a reader"
    };
    waiting(format!(
        "rebooting {role}, {}, for static parameter changes (waiting: {ids})",
        next.identifier
    ))
}
