//! A DBInstance's day-two operations on an instance in place: its automated backup replication
//! (`backups`), and its pending maintenance, listed in status and applied as
//! spec.maintenancePolicy and the approval annotation say (`maintenance::plan`, the rules shared
//! with DBCluster).

use kube::runtime::events::EventType;

use crate::dbinstance::status::DBInstanceStatus;
use crate::maintenance::ApplyStep;
use crate::rds_state::ObservedInstance;

use super::types::{Facts, Plan, Step};

/// What an instance in place takes besides its fields: backups replicated (for an instance the
/// operator may act on, not a replica) and its pending maintenance.
pub fn day_two(
    f: &Facts,
    plan: &mut Plan,
    observed: &ObservedInstance,
    fields: &mut DBInstanceStatus,
    (may_act, replica): (bool, bool),
) {
    if may_act && !replica {
        super::backups::plan(f, plan, observed, fields);
    }
    self::plan(f, plan, observed, fields, may_act);
}

/// Status lists RDS's actions; an instance the operator may act on (`may_act`: not observe-only,
/// not held) gets one ApplyPendingMaintenanceAction per action the policy applies.
pub fn plan(
    f: &Facts,
    plan: &mut Plan,
    observed: &ObservedInstance,
    fields: &mut DBInstanceStatus,
    may_act: bool,
) {
    let previous = f.db.status.as_ref().map(|s| &s.pending_maintenance_actions);
    let policy = f.db.spec.maintenance.maintenance_policy;
    let (busy, arn) = (observed.status != "available", observed.arn.clone());
    let may_act = (may_act && arn.is_some(), busy);
    let annotations = f.db.metadata.annotations.as_ref();
    let (listed, applies) = crate::maintenance::plan(
        f.maintenance.as_ref(),
        previous,
        annotations,
        policy,
        may_act,
    );
    fields.pending_maintenance_actions = listed;
    for apply in applies {
        let note = apply.note();
        plan.step(Step::ApplyMaintenance(ApplyStep {
            identifier: f.db.identifier(),
            arn: arn.clone().unwrap_or_default(),
            apply,
        }));
        plan.event(EventType::Normal, "Maintenance", "Update", note);
    }
}
