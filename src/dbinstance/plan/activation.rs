//! spec.activation and spec.activationSchedule, pure: an instance that is to be stopped is
//! stopped (StopDBInstance) once it is available and nothing else is sent in the pass; one that
//! is to run is started (StartDBInstance) when it is stopped. Whether it is to run is the shared
//! decision (`database::activation::decide`: the spec, or the schedule's windows and the override
//! annotation, whose end removes it); a pass is looked at again at the schedule's next boundary.
//! Left out, the operator never stops or starts it: an instance someone stopped is reported as RDS
//! shows it, never started behind their back. RDS starts a stopped instance by itself after 7 days
//! (API_StopDBInstance.html): the operator stops it again and says so. What RDS cannot stop
//! ("Stopping an Amazon RDS DB instance temporarily", USER_StopInstance.html, Limitations) is
//! refused with its reason, and nothing is sent. A stopped instance is not Ready (it serves no
//! one), and Synced while it is stopped as the spec says; changes to the spec wait
//! (`Sync::decide`: RDS refuses ModifyDBInstance of a stopped instance).

use super::spec;
use super::types::{Facts, InstanceStep, Plan, Step};
use crate::database::activation::{self, Decision, Inputs};
use crate::database::rules::INSTANCE;
use crate::database::rules::activation::{self as rules, Call, Subject};
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

/// Whether the instance is to run, as the spec, its schedule and the override say at `f.now`.
pub fn decision(f: &Facts) -> Decision {
    let status = f.db.status.as_ref().map(|s| &s.common);
    let annotations = f.db.metadata.annotations.as_ref();
    activation::decide(&Inputs::of(&f.db.spec.run, annotations, status, &f.now))
}

/// The activation steps and conditions of a pass of our instance, once its other steps are
/// planned (`may_act`: not observe-only, not held): the shared rules (`rules::activation`), their
/// call one of the instance's own steps.
pub(super) fn plan(f: &Facts, plan: &mut Plan, o: &ObservedInstance, may_act: bool) {
    let d = decision(f);
    let status = f.db.status.as_ref();
    let previous_synced = (status.iter().flat_map(|s| s.reported.conditions.iter()))
        .find(|c| c.type_ == "Synced")
        .map(|c| (c.reason.as_str(), c.message.as_str()));
    let out = rules::plan(&Subject {
        noun: INSTANCE,
        decision: &d,
        scheduled: f.db.spec.run.activation_schedule.is_some(),
        state: &o.status,
        stopped_before: status.and_then(|s| s.common.stopped_at.as_deref()),
        may_act,
        others: plan.steps.iter().any(|s| !matches!(s, Step::Secret(_))),
        not_stoppable: not_stoppable(f, o),
        previous_synced,
        now: &f.now,
    });
    let identifier = f.db.identifier();
    let own = |call| match call {
        Call::Stop => InstanceStep::Stop { identifier },
        Call::Start => InstanceStep::Start { identifier },
    };
    out.write(plan, own, f.intervals.busy);
    let Some(status) = plan.status.as_mut() else {
        return;
    };
    status.fields.common.stopped_at = out.stopped_at;
    status.fields.common.activation_override = d.recorded;
    if let Some(ready) = out.ready {
        status.ready = Some(ready);
    }
    if let Some(synced) = out.synced {
        status.synced = synced;
    }
}
