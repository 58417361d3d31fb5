//! Rules for our instance when RDS no longer has it: deleted (or renamed) outside the operator, or
//! the operator pointed at another account or region. Nothing is created on doubt: the absence is
//! confirmed by direct reads a busy interval apart, never while RDS reports a rename, only in the
//! account and region the instance was in; then, once no snapshot of it is still being taken, the
//! newest snapshot is restored, and an empty
//! instance is created only when the spec opts in. Only this DBInstance's own snapshots count
//! (`tenancy::own_snapshots`): an identifier another team used before has that team's snapshots.

use crate::database::rules::INSTANCE;
use crate::database::rules::absence::{Absence, Gone, decide};
use crate::dbinstance::DriftPolicy;

use super::create::{Creation, create, create_replica};
use super::status::refuse;
use super::tenancy;
use super::types::{Facts, Plan, Requeue};
use super::{replica, spec};

/// The plan for a DBInstance whose instance (once observed: its ARN is in status) is gone: the
/// rule both database kinds follow (`database::rules::absence`), after a rename RDS reports.
pub fn plan(f: &Facts, mut plan: Plan) -> Plan {
    let db = &f.db;
    let identifier = db.identifier();
    let drift_interval = spec::drift_interval(&db.spec, &f.intervals);
    let previous = db.status.clone().unwrap_or_default();
    if f.rename_in_progress && db.spec.policies.drift_policy != DriftPolicy::Report {
        plan.requeue = Requeue::After(f.intervals.busy);
        let message = format!(
            "RDS has no instance {identifier} while it reports a rename in progress; waiting for the rename to finish"
        );
        return refuse(plan, f, "RenameInProgress", &message, None);
    }
    // Seen renaming last: the instance may live on under another name; look for longer.
    let renamed = previous.db_instance_status.as_deref() == Some("renaming");
    let gone = Gone {
        noun: INSTANCE,
        identifier: &identifier,
        drift_policy: db.spec.policies.drift_policy,
        out_of_band: db.spec.deletion.out_of_band_deletion_policy,
        observed_directly: f.observed_directly,
        absent_for: f.absent_for,
        confirm_for: if renamed {
            drift_interval
        } else {
            f.intervals.busy
        },
        arn: previous.common.arn.as_deref().unwrap_or_default(),
        identity: f.identity.as_ref(),
        // A replica's data is its source's: it is made again (of a source still this namespace's).
        remade: replica::wanted(db),
    };
    let own: Vec<_> = tenancy::own_snapshots(&f.snapshots, db).collect();
    let decision = decide(&gone, &own);
    plan.requeue = Requeue::After(decision.after(f.intervals.busy, drift_interval));
    match decision {
        Absence::Refuse {
            reason, message, ..
        } => refuse(plan, f, reason, &message, None),
        Absence::Remake => create_replica(f, plan),
        Absence::Restore { snapshot, note } => {
            create(f, plan, Creation::Restore { snapshot, note })
        }
        Absence::CreateEmpty => create(f, plan, Creation::EmptyInPlaceOfDeleted),
        Absence::Nothing => {
            let message = format!(
                "RDS instance {identifier} was deleted outside the operator and no snapshot of it exists, so nothing \
                 is created; restore it, or set outOfBandDeletionPolicy: RestoreOrCreateEmpty to create an empty instance"
            );
            refuse(plan, f, "DeletedOutOfBand", &message, None)
        }
    }
}
