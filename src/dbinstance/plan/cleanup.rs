//! Rules for a DBInstance that is being deleted: what its deletion policy does to the RDS instance,
//! when to wait, and when to let the DBInstance go.

use kube::runtime::events::EventType;

use crate::database::secret::SecretStep;
use crate::dbinstance::{DBInstance, DeletionPolicy, RETAINED_TAG};
use crate::rds_state::ObservedInstance;

use super::spec::{self, final_snapshot_identifier, owned_by};
use super::status::{observed_status, refuse};
use super::types::{ConditionPlan, Facts, Gauge, InstanceStep, Plan, Requeue, StatusPlan, Step};
use super::{blue_green, replica};

/// What deletion does to the RDS instance.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Nothing (more) to do in RDS: release the finalizer.
    Release(Released),
    /// RDS is deleting: look again later.
    Wait,
    /// Send DeleteDBInstance, with a final snapshot when named.
    Delete { final_snapshot: Option<String> },
    /// The instance has deletion protection on: report it and wait for a person.
    Protected,
    /// The instance is the source of live read replicas (these): it waits until they are
    /// promoted or deleted.
    InUse(String),
}

/// Why the finalizer may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Released {
    /// The instance is gone.
    Gone,
    /// deletionPolicy Retain.
    Retained,
    /// The instance with the identifier belongs to someone else.
    NotOurs,
    /// managementPolicy ObserveOnly: the instance is never deleted.
    Observed,
}

pub fn decide(db: &DBInstance, observed: Option<&ObservedInstance>) -> Decision {
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    if spec::observe_only(db) {
        return Decision::Release(Released::Observed);
    }
    let Some(o) = observed else {
        return Decision::Release(Released::Gone);
    };
    if !owned_by(o, uid) {
        return Decision::Release(Released::NotOurs);
    }
    match spec::deletion_policy(db) {
        DeletionPolicy::Retain => Decision::Release(Released::Retained),
        _ if o.status == "deleting" => Decision::Wait,
        _ if o.deletion_protection == Some(true) => Decision::Protected,
        _ if replica::live_replicas(o).is_some() => {
            Decision::InUse(replica::live_replicas(o).unwrap_or_default())
        }
        // RDS takes no snapshot of a read replica (API_DeleteDBInstance.html,
        // FinalDBSnapshotIdentifier: "Can't be specified when deleting a read replica").
        DeletionPolicy::Delete | DeletionPolicy::Snapshot if o.replica_source.is_some() => {
            Decision::Delete {
                final_snapshot: None,
            }
        }
        // RDS refuses a final snapshot of a cluster member: the cluster's snapshots are the
        // backup (API_DeleteDBInstance.html: FinalDBSnapshotIdentifier "doesn't apply to Amazon
        // Aurora DB instances").
        DeletionPolicy::Delete | DeletionPolicy::Snapshot if spec::is_member(db) => {
            Decision::Delete {
                final_snapshot: None,
            }
        }
        DeletionPolicy::Delete => Decision::Delete {
            final_snapshot: None,
        },
        DeletionPolicy::Snapshot => Decision::Delete {
            final_snapshot: Some(final_snapshot_identifier(db)),
        },
    }
}

/// The plan for a DBInstance that is being deleted.
pub fn plan(f: &Facts) -> Plan {
    let db = &f.db;
    if !spec::has_finalizer(db) {
        return Plan::new(Requeue::AwaitChange);
    }
    let identifier = db.identifier();
    let observed = f.observed.as_ref();
    match decide(db, observed) {
        // Destruction is decided on a read made in this reconcile, never on the shared snapshot.
        Decision::Delete { .. } if !f.observed_directly => {
            Plan::new(Requeue::After(f.intervals.busy))
        }
        Decision::Release(why) => release(f, why),
        Decision::Wait => {
            let mut plan = Plan::new(Requeue::After(f.intervals.busy));
            if let Some(o) = observed {
                let previous = db.status.clone().unwrap_or_default();
                let mut fields = observed_status(&identifier, o);
                fields.common.master_user_password_hash = previous.common.master_user_password_hash;
                fields.last_drift = previous.last_drift;
                let message = format!("RDS instance {identifier} is being deleted");
                plan.status = Some(StatusPlan {
                    secret_pending: None,
                    held: false,
                    fields,
                    ready: None,
                    synced: ConditionPlan::new(true, "Deleting", message),
                });
            }
            plan
        }
        Decision::Delete { final_snapshot } => {
            // A blue/green deployment, and the instances it made or left, go first.
            if let Some(plan) = blue_green::cleanup(f) {
                return plan;
            }
            let mut plan = Plan::new(Requeue::After(f.intervals.busy));
            let note = match &final_snapshot {
                Some(s) => format!("deleting RDS instance {identifier} after final snapshot {s}"),
                None => format!("deleting RDS instance {identifier}"),
            };
            plan.step(Step::Own(InstanceStep::DeleteInstance {
                identifier,
                final_snapshot,
                delete_automated_backups: db.spec.delete_automated_backups == Some(true),
            }));
            plan.event(EventType::Normal, "Deleting", "Delete", note);
            plan
        }
        Decision::InUse(replicas) => {
            let message = format!(
                "RDS instance {identifier} is the source of read replicas {replicas}; its deletion waits \
                 until they are promoted or deleted"
            );
            let plan = Plan::new(Requeue::After(f.intervals.settled));
            refuse(plan, f, "InUse", &message, None)
        }
        Decision::Protected => {
            let message = format!(
                "RDS instance {identifier} has deletion protection on; set spec.deletionProtection to false \
                 (or turn it off in AWS) to let the deletion proceed"
            );
            let plan = Plan::new(Requeue::After(f.intervals.settled));
            refuse(plan, f, "DeletionProtected", &message, None)
        }
    }
}

/// Lets the DBInstance go: its Secrets left to the garbage collector (they carry its
/// ownerReference), or kept without owner when the database is retained (so it stays
/// reachable), then the finalizer is removed.
fn release(f: &Facts, why: Released) -> Plan {
    let identifier = f.db.identifier();
    let mut plan = Plan::new(Requeue::AwaitChange);
    // A retained instance is marked as let go, so a later DBInstance of this namespace and name
    // adopts it again on its own.
    if why == Released::Retained
        && let Some(o) = f
            .observed
            .as_ref()
            .filter(|o| !o.tags.contains_key(RETAINED_TAG))
    {
        plan.step(Step::AddTags {
            identifier: identifier.clone(),
            arn: o.arn.clone().unwrap_or_default(),
            tags: [(RETAINED_TAG.to_owned(), f.now.clone())].into(),
        });
    }
    // Ours: marked with this DBInstance's uid, or carrying an ownerReference to it.
    let uid = f.db.metadata.uid.as_ref();
    let referenced = |s: &k8s_openapi::api::core::v1::Secret| {
        (s.metadata.owner_references.iter().flatten()).any(|o| Some(&o.uid) == uid)
    };
    let owned = (f.release_candidates.iter())
        .filter(|s| spec::controlled_by(&s.metadata, &f.db) || referenced(s));
    // Not retained, they go with the DBInstance: the garbage collector deletes what carries its
    // ownerReference once it is gone; one marked ours by annotation alone is given it first. The
    // operator holds no delete on Secrets (issue 77).
    for secret in owned {
        let name = secret.metadata.name.clone().unwrap_or_default();
        let step = match (why == Released::Retained, referenced(secret)) {
            (true, _) => Some(Step::OrphanSecret { name }),
            (false, true) => None,
            (false, false) => Some(Step::Secret(SecretStep::SetOwner {
                name,
                owner_reference: true,
            })),
        };
        if let Some(step) = step {
            plan.step(step);
        }
    }
    let (reason, note) = match why {
        Released::Gone => ("Deleted", format!("RDS instance {identifier} is gone")),
        Released::Retained => (
            "Retained",
            format!("deletionPolicy is Retain: RDS instance {identifier} is left running"),
        ),
        Released::Observed => (
            "Released",
            format!("managementPolicy is ObserveOnly: RDS instance {identifier} is left as it is"),
        ),
        Released::NotOurs => (
            "Released",
            format!(
                "RDS instance {identifier} is not managed by this DBInstance and was left alone"
            ),
        ),
    };
    plan.event(EventType::Normal, reason, "Delete", note);
    if let Some(alarms) = super::health::leftover_alarms(f) {
        plan.step(alarms);
    }
    plan.step(Step::RemoveFinalizer);
    plan.ext.gauge = Gauge::Remove;
    plan
}
