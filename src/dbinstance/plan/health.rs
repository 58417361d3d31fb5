//! The instance's health in status (`database::health`): CloudWatch's figures, and the warnings
//! they and RDS's own answers give (storage headroom, the server certificate) as advisories, each
//! an Event when it is new; and its CloudWatch alarms (`database::alarms`).

use kube::runtime::events::EventType;

use super::{Facts, Plan, Step, spec};
use crate::database::alarms;
use crate::database::health::{self, Warning};

/// Health in the status the plan writes, and its warnings.
pub fn report(facts: &Facts, plan: &mut Plan) {
    let Some(observed) = facts.observed.as_ref() else {
        return;
    };
    let Some(status) = plan.status.as_mut() else {
        return;
    };
    let (allocated, max) = (observed.allocated_storage, observed.max_allocated_storage);
    let shown = (facts.health.as_ref())
        .map(|h| health::status(h, allocated, max))
        .filter(|h| *h != health::HealthStatus::default());
    let mut warnings: Vec<Warning> = Vec::new();
    if let Some(h) = &shown {
        warnings.extend(health::storage_warning(h, max.is_some()));
    }
    warnings.extend(health::certificate_warning(
        observed.certificate_valid_till.as_deref(),
        observed.ca_certificate_identifier.as_deref(),
        &facts.now,
    ));
    let uid = facts.db.metadata.uid.as_deref().unwrap_or_default();
    if spec::owned_by(observed, uid) && !spec::observe_only(&facts.db) {
        let held = super::maintenance::waiting_for_lag(facts, observed);
        warnings.extend(held.map(|message| Warning {
            reason: "MaintenanceWaitingForLag",
            message,
        }));
    }
    status.fields.common.health = shown;
    let before: &[String] = (facts.db.status.as_ref()).map_or(&[], |s| &s.advisories);
    let mut new = Vec::new();
    for w in warnings {
        let tag = format!("{}: ", w.reason);
        if !before.iter().any(|a| a.starts_with(&tag)) {
            new.push(w.clone());
        }
        status.fields.advisories.push(format!("{tag}{}", w.message));
    }
    for w in new {
        plan.event(EventType::Warning, w.reason, "Observe", w.message);
    }
}

/// Whether the read step lists the instance's alarms: the spec has some, or status shows some
/// made before.
pub fn has_alarms(db: &crate::dbinstance::DBInstance) -> bool {
    db.spec.alarms.is_some() || (db.status.as_ref()).is_some_and(|s| !s.common.alarms.is_empty())
}

/// The alarms of an instance of ours that is not being deleted: what the spec asks put, what it
/// no longer asks deleted, their states in status, and an Event when one fires or resolves. Waits
/// for the observer's first listing: nothing is put on a guess of what CloudWatch holds.
pub fn alarms(facts: &Facts, plan: &mut Plan) {
    let uid = facts.db.metadata.uid.as_deref().unwrap_or_default();
    let Some(observed) = (facts.observed.as_ref()).filter(|o| spec::owned_by(o, uid)) else {
        return;
    };
    if facts.db.metadata.deletion_timestamp.is_some() || spec::observe_only(&facts.db) {
        return;
    }
    let (Some(held), true) = (facts.alarms.as_ref(), plan.status.is_some()) else {
        return;
    };
    let identifier = facts.db.identifier();
    let replica = observed.replica_source.is_some();
    let wanted = (facts.db.spec.alarms.as_ref())
        .map(|spec| alarms::desired(&identifier, spec, observed.allocated_storage, replica))
        .unwrap_or_default();
    let before = (facts.db.status.as_ref()).map_or(&[][..], |s| &s.common.alarms[..]);
    let pass = alarms::pass(&wanted, held, before);
    let shown = pass.plan(plan, spec::tags_of(&facts.db));
    if let Some(status) = plan.status.as_mut() {
        status.fields.common.alarms = shown;
    }
}

/// On the way out: the deletion of the alarms the operator made for the DBInstance (as the
/// listing shows them, else as status recorded them).
pub fn leftover_alarms(facts: &Facts) -> Option<Step> {
    let recorded = (facts.db.status.as_ref()).map_or(&[][..], |s| &s.common.alarms[..]);
    let changes = alarms::leftover(facts.alarms.as_deref(), recorded);
    (!changes.is_empty()).then(|| Step::Alarms {
        changes,
        tags: Default::default(),
    })
}
