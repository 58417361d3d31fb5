//! Rules for our instance when RDS no longer has it: deleted (or renamed) outside the operator, or
//! the operator pointed at another account or region. Nothing is created on doubt: the absence is
//! confirmed by direct reads a busy interval apart, never while RDS reports a rename, only in the
//! account and region the instance was in; then, once no snapshot of it is still being taken, the
//! newest snapshot is restored, and an empty
//! instance is created only when the spec opts in. Only this DBInstance's own snapshots count
//! (`tenancy::own_snapshots`): an identifier another team used before has that team's snapshots.

use crate::dbinstance::{DriftPolicy, OutOfBandDeletionPolicy};

use super::create::{Creation, create, create_replica};
use super::status::refuse;
use super::tenancy;
use super::types::{Facts, Plan, Requeue};
use super::{replica, spec};
pub use crate::database::snapshots::{being_taken, newest, same_account_and_region, waiting_for};

/// The plan for a DBInstance whose instance (once observed: its ARN is in status) is gone.
pub fn plan(f: &Facts, mut plan: Plan) -> Plan {
    let db = &f.db;
    let identifier = db.identifier();
    let drift_interval = spec::drift_interval(&db.spec, &f.intervals);
    let previous = db.status.clone().unwrap_or_default();
    if db.spec.policies.drift_policy == DriftPolicy::Report {
        plan.requeue = Requeue::After(drift_interval);
        let message = format!(
            "RDS instance {identifier} was deleted outside the operator; driftPolicy is Report, so it is not recreated"
        );
        return refuse(plan, f, "DeletedOutOfBand", &message, None);
    }
    plan.requeue = Requeue::After(f.intervals.busy);
    if f.rename_in_progress {
        let message = format!(
            "RDS has no instance {identifier} while it reports a rename in progress; waiting for the rename to finish"
        );
        return refuse(plan, f, "RenameInProgress", &message, None);
    }
    // Seen renaming last: the instance may live on under another name; look for longer.
    let renamed = previous.db_instance_status.as_deref() == Some("renaming");
    let confirm_for = if renamed {
        drift_interval
    } else {
        f.intervals.busy
    };
    if !f.observed_directly || f.absent_for.is_none_or(|d| d < confirm_for) {
        let message = format!(
            "RDS has no instance {identifier}; confirming with another direct read before acting"
        );
        return refuse(plan, f, "ConfirmingAbsence", &message, None);
    }
    plan.requeue = Requeue::After(drift_interval);
    let arn = previous.common.arn.as_deref().unwrap_or_default();
    if let Err(message) = same_account_and_region("instance", arn, f.identity.as_ref()) {
        return refuse(plan, f, "AccountOrRegionMismatch", &message, None);
    }
    // A replica's data is its source's: it is made again (of a source still this namespace's).
    if replica::wanted(db) {
        plan.requeue = Requeue::After(f.intervals.busy);
        return create_replica(f, plan);
    }
    if let Some(taken) = being_taken(tenancy::own_snapshots(&f.snapshots, db)) {
        plan.requeue = Requeue::After(f.intervals.busy);
        let message = waiting_for("instance", &identifier, taken);
        return refuse(plan, f, "SnapshotInProgress", &message, None);
    }
    if let Some(snapshot) = newest(tenancy::own_snapshots(&f.snapshots, db)) {
        plan.requeue = Requeue::After(f.intervals.busy);
        let note = format!(
            "RDS instance {identifier} was deleted outside the operator; restoring it from its newest snapshot {} ({}, created {})",
            snapshot.identifier, snapshot.kind, snapshot.created
        );
        let snapshot = snapshot.identifier.clone();
        return create(f, plan, Creation::Restore { snapshot, note });
    }
    if db.spec.deletion.out_of_band_deletion_policy == OutOfBandDeletionPolicy::RestoreOrCreateEmpty
    {
        plan.requeue = Requeue::After(f.intervals.busy);
        return create(f, plan, Creation::EmptyInPlaceOfDeleted);
    }
    let message = format!(
        "RDS instance {identifier} was deleted outside the operator and no snapshot of it exists, so nothing \
         is created; restore it, or set outOfBandDeletionPolicy: RestoreOrCreateEmpty to create an empty instance"
    );
    refuse(plan, f, "DeletedOutOfBand", &message, None)
}
