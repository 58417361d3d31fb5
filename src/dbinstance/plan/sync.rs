//! Rules for our own instance: report what RDS says, and put right what differs from the spec
//! (drift, tags, password rotation, the connection Secret), except what is safer left as it is:
//! protection stronger in AWS than in the spec, and a field someone keeps changing back.

use kube::runtime::events::EventType;

use crate::dbinstance::drift::{self, Comparison, Diff, field_list};
use crate::dbinstance::{
    ADOPTED_TAG, Corrections, DBInstanceStatus, DriftPolicy, PendingRebootPolicy, RestoreStatus,
};
use crate::managed::fights;
use crate::rds_state::{ObservedInstance, is_transitional};

use super::connection_secret::{
    SecretProblem, connection_secret, password_secret_owner, secret_readers,
};
use super::create::restore_source;
use super::maintenance::day_two;
use super::password::{RESTORED_PASSWORD, hash_of, password, password_refused};
use super::status::{
    describe_diffs, drift_record, observed_plan, observed_status, readiness, refuse,
};
use super::types::{Facts, InstanceStep, Plan, Requeue, Sensitive, StatusPlan, Step};
use super::{blue_green, replica, spec};

pub use crate::managed::fights::{FIGHT_LIMIT, FIGHT_WINDOW};

/// Our instance exists: report it, and put right what differs from the spec.
pub fn plan(f: &Facts, mut plan: Plan, observed: &ObservedInstance) -> Plan {
    let db = &f.db;
    let mut previous = db.status.clone().unwrap_or_default();
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    state_events(f, &mut plan, &previous, observed);
    let password = match password(f, &mut plan) {
        Ok(p) => p,
        Err(problem) => return password_refused(plan, f, problem),
    };
    let hold = Hold::of(f);
    let observing = hold == Some(Hold::ObserveOnly);
    // A replica's password is its source's: never sent, so no hash to follow.
    let replica = observed.replica_source.is_some();
    let hash = hash_of(f, password.as_ref()).filter(|_| !observing && !replica);
    if replica::just_promoted(&previous, observed) && hash.is_some() {
        // RDS holds the source's password: the spec's is sent, once.
        previous.common.master_user_password_hash = Some(RESTORED_PASSWORD.to_owned());
    }
    if let Some(restore) = unrecorded_restore(f) {
        // Recorded now as the restoring call's own status write would have: RDS holds the
        // source's password and settings, so the spec's are sent, once.
        previous.restore = Some(restore);
        if hash.is_some() {
            previous.common.master_user_password_hash = Some(RESTORED_PASSWORD.to_owned());
        }
    }
    let restoring = (previous.restore.as_ref()).is_some_and(|r| !r.settings_applied);
    let legacy = legacy_hash(uid, password.as_ref(), &previous);
    // No hash yet (an adopted instance): take the Secret's password as the one RDS has. A restored
    // instance's hash matches no password (password::RESTORED_PASSWORD): the spec's is sent, once.
    let rotate = !observing
        && !legacy
        && matches!((&hash, &previous.common.master_user_password_hash), (Some(h), Some(p)) if h != p);
    let desired_tags = desired_tags(db, observing);
    let managed = &previous.common.applied_tag_keys;
    let mut comparison = drift::compare(&db.spec, observed, &desired_tags, managed, rotate);
    let spec_changed = db.metadata.generation != previous.reported.observed_generation || restoring;
    let fighting = leave_what_is_safer_left(f, &mut comparison, spec_changed);
    let carried = blue_green::carried(f, &mut comparison);

    let mut fields = sync_fields(f, observed, &previous, hash.clone(), legacy, observing);
    if replica::decided_before_sync(f, &mut plan, observed, &fields, observing) {
        return plan;
    }
    // The connection Secret follows what RDS holds: while a new password is still to be sent, it
    // keeps the one RDS has.
    if let Some(password) = password.as_ref().filter(|_| !rotate) {
        if let Err(problem) = connection_secret(f, &mut plan, observed, password) {
            return secret_refused(f, plan, problem);
        }
        let secret = db.spec.connection.connection_secret.as_ref();
        fields.common.connection_secret = secret.map(|c| c.name.clone());
        fields.common.secret_readers = secret_readers(f, &mut plan);
    }
    password_secret_owner(f, &mut plan);
    let in_sync = comparison.in_sync();
    if blue_green::decided(f, &mut plan, observed, &carried, &mut fields, in_sync) {
        return plan;
    }
    let acts = (hold.is_none(), replica);
    day_two(f, &mut plan, observed, &mut fields, acts);
    let sync = Sync {
        f,
        observed,
        comparison: &comparison,
        spec_changed,
        fighting,
    };
    // A rollout of the connection Secret's readers is followed.
    let following = (fields.common.secret_readers.as_ref()).is_some_and(|r| !r.rolled_out());
    let mut plan = sync.decide(plan, fields, hold, password, hash);
    if following {
        plan.look_again_within(f.intervals.busy);
    }
    super::roles::plan(f, &mut plan, observed, acts.0);
    super::activation::plan(f, &mut plan, observed, acts.0);
    plan
}

/// The connection Secret cannot be written: a template that does not render (waits for a spec
/// change), or someone else's Secret of its name (looked at again each drift interval).
fn secret_refused(f: &Facts, mut plan: Plan, problem: SecretProblem) -> Plan {
    match problem {
        SecretProblem::Template(message) => {
            plan.requeue = Requeue::AwaitChange;
            refuse(plan, f, "InvalidSpec", &message, Some("InvalidSpec"))
        }
        SecretProblem::NotOurs(message) => {
            let drift = spec::drift_interval(&f.db.spec, &f.intervals);
            plan.requeue = Requeue::After(drift);
            let label = Some("SecretConflict");
            refuse(plan, f, "ConnectionSecretConflict", &message, label)
        }
    }
}

/// Whether status holds the hash from before the keyed one, of the same password: no rotation, it
/// is replaced.
fn legacy_hash(uid: &str, password: Option<&Sensitive>, previous: &DBInstanceStatus) -> bool {
    match (password, &previous.common.master_user_password_hash) {
        (Some(p), Some(h)) => *h == spec::legacy_password_hash(uid, p.expose()),
        _ => false,
    }
}

/// The status fields of our instance as RDS shows it, with what status carries over: the hash of
/// the password last sent (`hash` replaces a legacy one), the drift record, the applied tag keys
/// (until this plan's steps change them), corrections, adoption and restore records.
fn sync_fields(
    f: &Facts,
    observed: &ObservedInstance,
    previous: &DBInstanceStatus,
    hash: Option<String>,
    legacy: bool,
    observing: bool,
) -> DBInstanceStatus {
    let db = &f.db;
    let mut fields = observed_status(&db.identifier(), observed);
    fields.common.master_user_password_hash = match legacy {
        true => hash.clone(),
        false => previous.common.master_user_password_hash.clone().or(hash),
    };
    fields.last_drift = previous.last_drift.clone();
    fields.common.connection_secret = previous.common.connection_secret.clone();
    fields.common.secret_readers = previous.common.secret_readers.clone();
    fields.common.last_rotate_request = previous.common.last_rotate_request.clone();
    // The spec's tag keys become the managed ones once they are on the instance (in sync, or
    // written by this plan); until then the previous ones stay.
    fields.common.applied_tag_keys = previous.common.applied_tag_keys.clone();
    fields.common.corrections = current_corrections(f);
    // Held until the spec changes: an adoption, also one not yet recorded in status (a crash
    // between the adopting call and the status write).
    fields.common.adopted_generation = match unrecorded_adoption(f) {
        true => db.metadata.generation,
        false => {
            (previous.common.adopted_generation).filter(|g| Some(*g) == db.metadata.generation)
        }
    };
    fields.restore = previous.restore.clone();
    fields.replication = replica::status(&f.db, observed, Some(previous));
    fields.blue_green = previous.blue_green.clone();
    fields.automated_backup_replication = previous.automated_backup_replication.clone();
    fields.common.owned = (!observing).then_some(true);
    fields
}

/// An Event when RDS's state changed to available, or to one that is neither available nor busy
/// (stopped as spec.activation or its schedule says: Normal).
fn state_events(f: &Facts, plan: &mut Plan, previous: &DBInstanceStatus, o: &ObservedInstance) {
    let observed = o;
    if previous.db_instance_status.as_deref() != Some(observed.status.as_str()) {
        let (_, _, message) = readiness(&observed.status);
        let d = super::activation::decision(f);
        let stopping = d.wanted == Some(crate::database::choices::Activation::Stopped);
        if observed.status == "available" {
            plan.event(EventType::Normal, "Available", "Observe", message);
        } else if observed.status == "stopped" && stopping {
            let by = d.said_by(f.db.spec.run.activation_schedule.is_some());
            let note = format!("RDS stopped the instance, as {by} says");
            plan.event(EventType::Normal, "Stopped", "Observe", note);
        } else if observed.status == "stopped" && spec::is_member(&f.db) {
            let note = "RDS stopped the instance with its cluster".to_owned();
            plan.event(EventType::Normal, "Stopped", "Observe", note);
        } else if !is_transitional(&observed.status) {
            plan.event(EventType::Warning, "Failed", "Observe", message);
        }
    }
}

/// The tags the instance should carry: the spec's and the ownership tags; an observed instance is
/// not tagged as ours, so only the spec's are compared.
fn desired_tags(
    db: &crate::dbinstance::DBInstance,
    observing: bool,
) -> std::collections::BTreeMap<String, String> {
    let mut desired = spec::tags_of(db);
    if observing {
        desired.retain(|k, _| !k.starts_with("rds.operator.rs/"));
    }
    desired
}

impl Sync<'_> {
    /// Once the comparison is made: in sync, only reported, waiting for RDS, or corrected.
    fn decide(
        &self,
        plan: Plan,
        mut fields: DBInstanceStatus,
        hold: Option<Hold>,
        password: Option<Sensitive>,
        hash: Option<String>,
    ) -> Plan {
        let (comparison, observed) = (self.comparison, self.observed);
        if comparison.in_sync() {
            // A restore's settings count as applied once RDS holds them (nothing pending): until then
            // what differs stays an edit, and a lost change is sent again.
            if let Some(r) = fields
                .restore
                .as_mut()
                .filter(|_| observed.pending_modified_values.is_empty())
            {
                r.settings_applied = true;
            }
            return self.in_sync(plan, fields);
        }
        if let Some(hold) = hold {
            return self.report_only(plan, fields, hold);
        }
        if observed.status != "available" {
            let message = format!(
                "RDS is {}; the change of {} waits until the instance is available",
                observed.status,
                comparison.field_list()
            );
            let mut plan = plan;
            plan.status = Some(observed_plan(fields, false, "Waiting", message));
            return plan;
        }
        self.correct(plan, fields, password, hash)
    }
}

/// Whether the spec changed since the status was last written (an edit, not drift).
fn edited(db: &crate::dbinstance::DBInstance) -> bool {
    db.metadata.generation
        != db
            .status
            .as_ref()
            .and_then(|s| s.reported.observed_generation)
}

/// An instance this DBInstance adopted (it carries the adoption tag) that status has never
/// recorded.
fn unrecorded_adoption(f: &Facts) -> bool {
    let recorded = f.db.status.as_ref().is_some_and(|s| s.common.arn.is_some());
    !recorded && (f.observed.as_ref()).is_some_and(|o| o.tags.contains_key(ADOPTED_TAG))
}

/// A restore (spec.restoreFrom) whose status write was lost: a crash, or a write that failed,
/// between the restoring call and the status write. The instance is ours (tagged with this
/// DBInstance's uid at the restoring call), not adopted, and was never recorded; with no record
/// the sync would read it as created with the spec's password and settings, and never send them.
fn unrecorded_restore(f: &Facts) -> Option<RestoreStatus> {
    let status = f.db.status.as_ref();
    let recorded = status.is_some_and(|s| s.common.arn.is_some() || s.restore.is_some());
    let adopted = (f.observed.as_ref()).is_some_and(|o| o.tags.contains_key(ADOPTED_TAG));
    let from =
        f.db.spec
            .restore_from
            .as_ref()
            .filter(|_| !recorded && !adopted)?;
    Some(RestoreStatus {
        source: restore_source(from),
        settings_applied: false,
    })
}

/// Why differences are reported and not put right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hold {
    /// managementPolicy ObserveOnly: the instance is never changed.
    ObserveOnly,
    /// Adopted at this generation: put right only once the spec changes.
    Adopted,
    /// driftPolicy Report.
    DriftPolicy,
}

impl Hold {
    fn of(f: &Facts) -> Option<Hold> {
        let db = &f.db;
        let adopted = db.status.as_ref().and_then(|s| s.common.adopted_generation);
        if spec::observe_only(db) {
            Some(Hold::ObserveOnly)
        } else if unrecorded_adoption(f) || (adopted.is_some() && adopted == db.metadata.generation)
        {
            Some(Hold::Adopted)
        } else if db.spec.policies.drift_policy == DriftPolicy::Report && !edited(db) {
            // Report stops correcting changes made outside the operator, never the user's edits.
            Some(Hold::DriftPolicy)
        } else {
            None
        }
    }

    /// The drift record's action, the condition's reason and why, in words.
    fn words(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Hold::ObserveOnly => (
                "Reported",
                "Observed",
                "managementPolicy is ObserveOnly: the operator never changes the instance",
            ),
            Hold::Adopted => (
                "Reported",
                "AdoptedWithDifferences",
                "the instance was adopted: the operator puts the differences right once the spec is next changed \
                 (any edit of the spec confirms it)",
            ),
            Hold::DriftPolicy => ("Reported", "Drifted", "driftPolicy is Report"),
        }
    }
}

/// The rules for our instance once the comparison is made.
struct Sync<'a> {
    f: &'a Facts,
    observed: &'a ObservedInstance,
    comparison: &'a Comparison,
    /// The spec changed since the last status (a user's edit rather than drift).
    spec_changed: bool,
    /// Fields no longer corrected because they keep being changed back.
    fighting: Vec<&'static str>,
}

impl Sync<'_> {
    /// Reports the differences left as they are: a drift record and, when it is new, an Event.
    fn kept(&self, plan: &mut Plan, mut fields: DBInstanceStatus) -> DBInstanceStatus {
        let left = &self.comparison.left;
        let previous = self
            .f
            .db
            .status
            .as_ref()
            .and_then(|s| s.last_drift.as_ref());
        let record = drift_record(previous, "Kept", left, &self.f.now);
        if previous != Some(&record) {
            let note = format!(
                "RDS differs from the spec and is left as it is: {}",
                describe_diffs(left)
            );
            plan.event(EventType::Warning, "DriftDetected", "Observe", note);
        }
        fields.last_drift = Some(record);
        fields
    }

    /// The tag keys applied once this plan's steps are done (`tags::applied`).
    /// Tags seen only in the shared poll's snapshot may be stale: from it, no new key is counted
    /// as the operator's (`plan::reads` asks for a direct read whenever tags change).
    fn applied_tag_keys(&self) -> Vec<String> {
        let before =
            (self.f.db.status.as_ref()).map_or(&[][..], |s| &s.common.applied_tag_keys[..]);
        let mut keys =
            crate::managed::tags::applied(&self.f.db.spec.tags, &self.observed.tags, before);
        if !self.f.observed_directly {
            keys.retain(|k| before.contains(k));
        }
        keys
    }

    fn settled(&self) -> Requeue {
        Requeue::After(spec::settled_requeue(&self.f.db.spec, &self.f.intervals))
    }

    fn in_sync(&self, mut plan: Plan, mut fields: crate::dbinstance::DBInstanceStatus) -> Plan {
        fields.common.applied_tag_keys = self.applied_tag_keys();
        let refused = self.comparison.refused.join("; ");
        let pending = &self.observed.pending_modified_values;
        plan.status = Some(if !refused.is_empty() {
            if self.spec_changed {
                plan.event(
                    EventType::Warning,
                    "UnsupportedChange",
                    "Update",
                    refused.clone(),
                );
            }
            observed_plan(fields, false, "UnsupportedChange", refused)
        } else if !self.fighting.is_empty() {
            let message = format!(
                "stopped correcting {}: it was changed back outside the operator {FIGHT_LIMIT} times within an hour; \
                 the operator resumes when the spec changes",
                self.fighting.join(", ")
            );
            observed_plan(self.kept(&mut plan, fields), false, "Fighting", message)
        } else if !self.comparison.left.is_empty() {
            let message = format!(
                "RDS is more protective than the spec in {}; kept as it is (edit the spec to apply it)",
                field_list(&self.comparison.left)
            );
            observed_plan(
                self.kept(&mut plan, fields),
                false,
                "ProtectionKept",
                message,
            )
        } else if !pending.is_empty() {
            let keys = pending.keys().cloned().collect::<Vec<_>>().join(", ");
            let message = format!("RDS holds changes to {keys} until they are applied");
            observed_plan(fields, false, "Pending", message)
        } else if self.observed.parameter_apply_status.as_deref() == Some("pending-reboot") {
            self.pending_reboot(&mut plan, fields)
        } else {
            let message = "the RDS instance matches the spec".to_owned();
            observed_plan(fields, true, "Synced", message)
        });
        if !is_transitional(&self.observed.status) {
            plan.requeue = self.settled();
        }
        plan
    }

    /// Static parameter changes wait for a reboot: reported, or one RebootDBInstance as
    /// pendingRebootPolicy says (never for an instance only observed or just adopted).
    fn pending_reboot(&self, plan: &mut Plan, fields: DBInstanceStatus) -> StatusPlan {
        let db = &self.f.db;
        let window = self.observed.preferred_maintenance_window.as_deref();
        let now = chrono::DateTime::parse_from_rfc3339(&self.f.now).ok();
        let reboot = Hold::of(self.f).is_none()
            && self.observed.status == "available"
            && match db.spec.maintenance.pending_reboot_policy {
                PendingRebootPolicy::Report => false,
                PendingRebootPolicy::Reboot => true,
                PendingRebootPolicy::MaintenanceWindow => {
                    matches!((window, now), (Some(w), Some(n)) if spec::in_window(w, &n.to_utc()))
                }
            };
        if reboot {
            let identifier = db.identifier();
            plan.step(Step::Own(InstanceStep::Reboot {
                identifier: identifier.clone(),
            }));
            let note = format!(
                "rebooting RDS instance {identifier}: its parameter group has static changes pending"
            );
            plan.event(EventType::Normal, "Rebooting", "Update", note.clone());
            return observed_plan(fields, false, "Rebooting", note);
        }
        let message = match db.spec.maintenance.pending_reboot_policy {
            PendingRebootPolicy::MaintenanceWindow => format!(
                "static parameter changes wait for a reboot, which the operator makes in the maintenance window {}",
                window.unwrap_or("(none set)")
            ),
            _ => "static parameter changes wait for a reboot (pendingRebootPolicy Report: reboot the instance, \
                  or set pendingRebootPolicy to Reboot or MaintenanceWindow)"
                .to_owned(),
        };
        observed_plan(fields, false, "PendingReboot", message)
    }

    fn report_only(
        &self,
        mut plan: Plan,
        mut fields: crate::dbinstance::DBInstanceStatus,
        hold: Hold,
    ) -> Plan {
        let c = self.comparison;
        let (action, reason, why) = hold.words();
        let previous = self
            .f
            .db
            .status
            .as_ref()
            .and_then(|s| s.last_drift.as_ref());
        let record = drift_record(previous, action, &c.diffs, &self.f.now);
        if previous != Some(&record) {
            let note = format!(
                "RDS differs from the spec ({why}; not corrected): {}",
                describe_diffs(&c.diffs)
            );
            plan.event(EventType::Warning, "DriftDetected", "Observe", note);
        }
        fields.last_drift = Some(record);
        let message = format!("RDS differs from the spec in {}; {why}", c.field_list());
        plan.status = Some(observed_plan(fields, false, reason, message));
        // The shared poll wakes only DBInstances of instances tagged as theirs: an observed one
        // RDS is busy with is looked at again soon, as in sync.
        plan.requeue = match is_transitional(&self.observed.status) {
            true => Requeue::After(self.f.intervals.busy),
            false => self.settled(),
        };
        plan
    }

    fn correct(
        &self,
        mut plan: Plan,
        mut fields: crate::dbinstance::DBInstanceStatus,
        password: Option<Sensitive>,
        hash: Option<String>,
    ) -> Plan {
        let c = self.comparison;
        let identifier = self.f.db.identifier();
        let arn = self.observed.arn.clone().unwrap_or_default();
        fields.common.applied_tag_keys = self.applied_tag_keys();
        if let Some(m) = &c.modification {
            plan.step(Step::Modify {
                identifier: identifier.clone(),
                modification: Box::new(m.clone()),
                password: password.filter(|_| m.rotate_password),
            });
            if m.rotate_password {
                fields.common.master_user_password_hash = hash;
                let note = "sent the new master password from the Secret to RDS".to_owned();
                plan.event(EventType::Normal, "PasswordRotated", "Update", note);
            }
        }
        if !c.tags_to_add.is_empty() {
            plan.step(Step::AddTags {
                identifier: identifier.clone(),
                arn: arn.clone(),
                tags: c.tags_to_add.clone(),
            });
        }
        if !c.tags_to_remove.is_empty() {
            plan.step(Step::RemoveTags {
                identifier,
                arn,
                keys: c.tags_to_remove.clone(),
            });
        }
        let changed: Vec<_> = (c.diffs.iter())
            .filter(|d| d.field != "masterUserPassword")
            .cloned()
            .collect();
        if !changed.is_empty() && self.spec_changed {
            let note = format!("applying the spec to RDS: {}", describe_diffs(&changed));
            plan.event(EventType::Normal, "Updating", "Update", note);
        } else if !changed.is_empty() {
            fields.last_drift = Some(drift_record(None, "Corrected", &changed, &self.f.now));
            record_corrections(&mut fields.common.corrections, &changed, self.f);
            plan.ext.drift_corrected = changed.iter().map(|d| d.field).collect();
            let note = format!(
                "RDS was changed outside the operator; put back to the spec: {}",
                describe_diffs(&changed)
            );
            plan.event(EventType::Warning, "DriftCorrected", "Update", note);
        }
        let message = format!("sent {} to RDS", c.field_list());
        plan.status = Some(observed_plan(fields, false, "Updating", message));
        plan
    }
}

/// Leaves as they are the differences that are safer left: protection stronger in RDS than in the
/// spec (unless the spec just changed: an edit applies what the spec says), and fields corrected
/// [`FIGHT_LIMIT`] times within the hour at this generation. Returns the fighting fields.
fn leave_what_is_safer_left(
    f: &Facts,
    comparison: &mut Comparison,
    spec_changed: bool,
) -> Vec<&'static str> {
    if spec_changed {
        return Vec::new();
    }
    let protective: Vec<&'static str> = (comparison.diffs.iter())
        .filter(|d| d.strengthens_protection())
        .map(|d| d.field)
        .collect();
    for field in protective {
        comparison.leave(field);
    }
    let corrections = current_corrections(f);
    let fields: Vec<&'static str> = comparison.diffs.iter().map(|d| d.field).collect();
    let fighting = fights::fighting(&corrections, fields, &f.now);
    for field in &fighting {
        comparison.leave(field);
    }
    fighting
}

/// The correction records of the current generation (a spec change starts them again).
fn current_corrections(f: &Facts) -> Vec<Corrections> {
    let records = (f.db.status.iter()).flat_map(|s| s.common.corrections.iter().cloned());
    fights::current(&records.collect::<Vec<_>>(), f.db.metadata.generation)
}

/// Adds this reconcile's corrections, keeping the last [`FIGHT_LIMIT`] times per field.
fn record_corrections(records: &mut Vec<Corrections>, changed: &[Diff], f: &Facts) {
    let fields = (changed.iter())
        .filter(|d| d.field != "tags")
        .map(|d| d.field);
    fights::record(records, fields, f.db.metadata.generation, &f.now);
}
