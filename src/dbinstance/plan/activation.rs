//! spec.activation, pure: an instance that is to be stopped is stopped (StopDBInstance) once it
//! is available and nothing else is sent in the pass; one the spec says is to run is started
//! (StartDBInstance) when it is stopped. Left out, the operator never stops or starts it: an
//! instance someone stopped is reported as RDS shows it, never started behind their back. RDS starts a stopped instance by itself after 7 days
//! (API_StopDBInstance.html): the operator stops it again and says so. What RDS cannot stop
//! ("Stopping an Amazon RDS DB instance temporarily", USER_StopInstance.html, Limitations) is
//! refused with its reason, and nothing is sent. A stopped instance is not Ready (it serves no
//! one), and Synced while it is stopped as the spec says; changes to the spec wait
//! (`Sync::decide`: RDS refuses ModifyDBInstance of a stopped instance).

use kube::runtime::events::EventType;

use super::spec;
use super::types::{Facts, InstanceStep, Plan, Step};
use crate::database::choices::Activation;
use crate::managed::plan::{ConditionPlan, Requeue};
use crate::rds_state::ObservedInstance;

/// Why RDS cannot stop the instance, in its words (None: it can).
pub fn not_stoppable(f: &Facts, o: &ObservedInstance) -> Option<&'static str> {
    let engine = f.db.spec.engine.to_ascii_lowercase();
    if o.replica_source.is_some() || f.db.spec.replica_of.is_some() {
        Some("RDS can't stop a read replica (USER_StopInstance.html)")
    } else if !o.read_replicas.is_empty() {
        Some("RDS can't stop an instance that has read replicas (USER_StopInstance.html)")
    } else if engine.starts_with("sqlserver") && o.multi_az == Some(true) {
        Some("RDS can't stop a Multi-AZ RDS for SQL Server instance (USER_StopInstance.html)")
    } else if spec::is_member(&f.db) || engine.starts_with("aurora") {
        Some("an Aurora instance stops with its cluster: set activation on the DBCluster")
    } else {
        None
    }
}

/// The activation steps and conditions of a pass of our instance, once its other steps are
/// planned (`may_act`: not observe-only, not held).
pub(super) fn plan(f: &Facts, plan: &mut Plan, o: &ObservedInstance, may_act: bool) {
    let Some(wanted) = f.db.spec.activation else {
        return set_conditions(plan, None, None, None);
    };
    let stopped_before = (f.db.status.as_ref()).and_then(|s| s.common.stopped_at.clone());
    let identifier = f.db.identifier();
    let others = plan.steps.iter().any(|s| !matches!(s, Step::Secret(_)));
    let status = o.status.as_str();
    let mut stopped_at = stopped_before.clone();
    match (wanted, status) {
        (Activation::Stopped, "available") if may_act && !others => {
            if let Some(why) = not_stoppable(f, o) {
                plan.refusal = Some("CannotStop");
                plan.requeue = Requeue::AwaitChange;
                let c = ConditionPlan::new(false, "CannotStop", why);
                return set_conditions(plan, None, Some(c), stopped_before);
            }
            plan.step(Step::Own(InstanceStep::Stop { identifier }));
            let (reason, note) = match &stopped_before {
                Some(at) => (
                    "StoppedAgain",
                    format!(
                        "RDS started the instance by itself (it stops for 7 days at most; stopped \
                         since {at}): stopped again as spec.activation says"
                    ),
                ),
                None => (
                    "Stopping",
                    "stopping the instance as spec.activation says".into(),
                ),
            };
            plan.event(EventType::Normal, reason, "Update", note);
            plan.requeue = Requeue::After(f.intervals.busy);
            stopped_at = Some(f.now.clone());
        }
        (Activation::Running, "stopped") if may_act => {
            plan.step(Step::Own(InstanceStep::Start { identifier }));
            let note = "starting the instance as spec.activation says".to_owned();
            plan.event(EventType::Normal, "Starting", "Update", note);
            plan.requeue = Requeue::After(f.intervals.busy);
            stopped_at = None;
        }
        (Activation::Stopped, "stopped") => {
            let ready = ConditionPlan::new(false, "Stopped", "stopped as spec.activation says");
            return set_conditions(plan, Some(ready), None, stopped_at.or(Some(f.now.clone())));
        }
        (Activation::Running, _) => stopped_at = None,
        _ => {}
    }
    set_conditions(plan, None, None, stopped_at);
}

/// The planned status with the activation's conditions (None: as planned) and `stopped_at`.
fn set_conditions(
    plan: &mut Plan,
    ready: Option<ConditionPlan>,
    synced: Option<ConditionPlan>,
    stopped_at: Option<String>,
) {
    let Some(status) = plan.status.as_mut() else {
        return;
    };
    status.fields.common.stopped_at = stopped_at;
    if let Some(ready) = ready {
        status.ready = Some(ready);
    }
    if let Some(synced) = synced {
        status.synced = synced;
    }
}
