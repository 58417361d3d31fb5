//! spec.alarms of a DBCluster, pure: the shared rules (`database::alarms`) on the figures of all
//! the cluster's instances (dimension DBClusterIdentifier). The cluster's alarms are put, kept
//! and deleted as a DBInstance's are; their states show in status and as Events at the cluster's
//! next pass (the observer wakes DBInstances, not clusters, when an alarm's state changes).

use super::super::observed::ObservedCluster;
use super::{Facts, Plan, Step, desired_tags};
use crate::database::alarms;
use crate::dbcluster::DBCluster;

/// Whether the read step lists the cluster's alarms: the spec has some, or status shows some
/// made before.
pub fn has_alarms(cluster: &DBCluster) -> bool {
    cluster.spec.alarms.is_some()
        || (cluster.status.as_ref()).is_some_and(|s| !s.common.alarms.is_empty())
}

/// The alarms of a cluster of ours: what the spec asks put, what it no longer asks deleted,
/// their states in status, and an Event when one fires or resolves. Waits for the observer's
/// first listing: nothing is put on a guess of what CloudWatch holds.
pub(super) fn plan(f: &Facts, mut plan: Plan, o: &ObservedCluster) -> Plan {
    let (Some(held), true) = (f.alarms.as_ref(), plan.status.is_some()) else {
        return plan;
    };
    let identifier = f.cluster.identifier();
    let aurora = !f.cluster.spec.engine.multi_az();
    let wanted = (f.cluster.spec.alarms.as_ref())
        .map(|spec| alarms::desired_cluster(&identifier, spec, aurora, o.allocated_storage))
        .unwrap_or_default();
    let before = (f.cluster.status.as_ref()).map_or(&[][..], |s| &s.common.alarms[..]);
    let pass = alarms::pass(&wanted, held, before);
    let shown = pass.plan(&mut plan, desired_tags(&f.cluster));
    if let Some(status) = plan.status.as_mut() {
        status.fields.common.alarms = shown;
    }
    plan
}

/// On the way out (the finalizer removed): the deletion of the alarms the operator made for the
/// DBCluster, before the finalizer goes.
pub(super) fn leftover(f: &Facts, mut plan: Plan) -> Plan {
    let Some(at) = (plan.steps.iter()).position(|s| matches!(s, Step::RemoveFinalizer)) else {
        return plan;
    };
    let recorded = (f.cluster.status.as_ref()).map_or(&[][..], |s| &s.common.alarms[..]);
    let changes = alarms::leftover(f.alarms.as_deref(), recorded);
    if !changes.is_empty() {
        let step = Step::Alarms {
            changes,
            tags: Default::default(),
        };
        plan.steps.insert(at, step);
    }
    plan
}
