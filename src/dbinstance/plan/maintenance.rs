//! A DBInstance's day-two operations on an instance in place: its automated backup replication
//! (`backups`), and its pending maintenance, listed in status and applied as
//! spec.maintenancePolicy and the approval annotation say (`maintenance::plan`, the rules shared
//! with DBCluster).

use crate::database::password::{plan_rotate_now, plan_secret_rotation, rotate_now};
use kube::runtime::events::EventType;

use crate::dbinstance::status::DBInstanceStatus;
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
    let managed = f.db.spec.password.manage_master_user_password == Some(true);
    let has_secret = observed.master_user_secret_arn.is_some();
    let available = may_act && observed.status == "available";
    let last = &mut fields.common.last_rotate_request;
    let asked = rotate_now(
        f.db.metadata.annotations.as_ref(),
        (managed, has_secret, available),
        last.as_deref(),
    );
    plan_rotate_now(plan, &f.db.identifier(), asked, last);
    if may_act {
        let wanted = f.db.spec.password.master_user_secret_rotation.as_ref();
        let arn = observed.master_user_secret_arn.as_deref();
        let read = f.secret_rotation.as_ref().map(Option::as_ref);
        plan_secret_rotation(plan, (wanted.filter(|_| managed), arn), read);
    }
}

/// Why maintenance RDS lists is not applied at once now though the policy or an approval would:
/// the replica's lag ([`lag_hold`]). What status advises (`health::report`).
pub fn waiting_for_lag(f: &Facts, observed: &ObservedInstance) -> Option<String> {
    let held = lag_hold(f, observed)?;
    let approved = (f.db.metadata.annotations.as_ref())
        .and_then(|a| a.get(crate::maintenance::APPROVE_ANNOTATION))
        .map(String::as_str);
    let policy = f.db.spec.maintenance.maintenance_policy;
    let listed = f.maintenance.as_ref()?;
    let unheld = crate::maintenance::decide(policy, approved, listed, false);
    (unheld.iter().any(|a| a.opt_in == "immediate")).then_some(held)
}

/// Why `Immediate` maintenance of a replica waits: with maxLagSeconds set, while it is further
/// behind its source than that, or its lag is not known (`health::lag_hold`).
fn lag_hold(f: &Facts, observed: &ObservedInstance) -> Option<String> {
    observed.replica_source.as_ref()?;
    let lag = f.health.as_ref().and_then(|h| h.replica_lag_seconds);
    let what = ("the replica", "its source", "immediate maintenance");
    crate::database::health::lag_hold(f.db.spec.upgrade.max_lag_seconds, lag, what)
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
    let resource = crate::maintenance::Resource {
        identifier: f.db.identifier(),
        arn: observed.arn.as_deref(),
        status: &observed.status,
        annotations: f.db.metadata.annotations.as_ref(),
        policy: f.db.spec.maintenance.maintenance_policy,
        listed: f.maintenance.as_ref(),
        previous: f
            .db
            .status
            .as_ref()
            .map(|s| &s.common.pending_maintenance_actions),
        may_act,
        held: lag_hold(f, observed),
    };
    let (listed, steps) = crate::maintenance::plan(&resource);
    fields.common.pending_maintenance_actions = listed;
    for (step, note) in steps {
        plan.step(Step::ApplyMaintenance(step));
        plan.event(EventType::Normal, "Maintenance", "Update", note);
    }
}
