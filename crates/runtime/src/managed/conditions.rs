//! The conditions every kind writes, and how they follow from a pass: Ready, Synced, and
//! kstatus's Reconciling and Stalled, merged into the previous ones so an unchanged condition
//! keeps its lastTransitionTime; and how a failure is reported over them. Pure.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::runtime::events::EventType;

use super::plan::{ConditionPlan, PlannedEvent};
use crate::crd::Reported;

/// The four conditions every kind writes (Ready, Synced, and kstatus's Reconciling and Stalled),
/// merged into the previous ones. `rds_busy`: RDS is in the middle of something.
pub fn conditions(
    previous: &[Condition],
    ready: &ConditionPlan,
    synced: &ConditionPlan,
    rds_busy: bool,
    generation: Option<i64>,
    now: &str,
) -> Vec<Condition> {
    let (reconciling, stalled) = progress(synced, rds_busy);
    let new = vec![
        condition("Ready", ready, generation),
        condition("Synced", synced, generation),
        condition("Reconciling", &reconciling, generation),
        condition("Stalled", &stalled, generation),
    ];
    merge_conditions(previous, new, now)
}

/// Synced reasons that need a change of the spec (or of what it names) before anything can
/// proceed: kstatus reads them as Stalled, and the operator stops retrying until the spec changes.
pub const STALLED: &[&str] = &[
    "InvalidSpec",
    "InvalidParameter",
    "InvalidParameters",
    "IdentifierInUse",
    "NameInUse",
    "UnsupportedChange",
    "PasswordUnknown",
    "NothingToAdopt",
    "RestoreSourceNotOwned",
    "RoleNotGranted",
    "NotGranted",
    "GroupNotOwned",
    "AccountNotGranted",
    "RegionNotAllowed",
    "AccountOrRegionMismatch",
];

/// Synced reasons of a settled object: reported, nothing in progress.
pub const SETTLED: &[&str] = &[
    "Synced",
    "Drifted",
    "Observed",
    "AdoptedWithDifferences",
    "ProtectionKept",
    "Fighting",
    "PendingReboot",
    "Pending",
    "DryRun",
    "ReconcilePaused",
    "NotFound",
    "DeletionProtected",
    "ConnectionSecretConflict",
    "PasswordSecretConflict",
];

/// Failures that say the instance cannot be reached: Ready turns False with them. Every other
/// failure (AWS throttling, a refused change, a Secret) leaves Ready as it was: the database is as
/// available to clients as it was before.
pub const UNAVAILABLE: &[&str] = &[
    "DeletedOutOfBand",
    "ConfirmingAbsence",
    "RenameInProgress",
    "AccountOrRegionMismatch",
    "NotFound",
    "NothingToAdopt",
];

/// The kstatus conditions from Synced and the RDS state: Stalled when only a spec change can
/// help; Reconciling while RDS is busy or the operator is still working towards the spec.
pub fn progress(synced: &ConditionPlan, rds_busy: bool) -> (ConditionPlan, ConditionPlan) {
    let reason = synced.reason.as_str();
    let stalled = !synced.ok && STALLED.contains(&reason);
    let working = !synced.ok && !SETTLED.contains(&reason);
    let reconciling = match (stalled, rds_busy || working) {
        (false, true) => ConditionPlan::new(true, reason, synced.message.clone()),
        _ => ConditionPlan::new(false, "Settled", "nothing is in progress"),
    };
    let stalled = match stalled {
        true => ConditionPlan::new(true, reason, synced.message.clone()),
        false => ConditionPlan::new(false, "NotStalled", "nothing needs a spec change"),
    };
    (reconciling, stalled)
}

/// Ready only while the connection Secret holds what status reports: when the spec asks for a
/// Secret this reconcile cannot write (`pending`: why not: no endpoint yet, the password or the
/// port not known), a Ready condition turns False, `ConnectionSecretPending`. A write planned in
/// the same reconcile is made before the status is (`managed::skeleton`), so it needs no rule.
pub fn ready_with_secret(ready: ConditionPlan, pending: Option<String>) -> ConditionPlan {
    match pending {
        Some(why) if ready.ok => ConditionPlan::new(
            false,
            "ConnectionSecretPending",
            format!("the connection Secret does not hold it yet: {why}"),
        ),
        _ => ready,
    }
}

/// The condition of this type last written, as a plan that keeps it as it was.
pub fn last(conditions: &[Condition], type_: &str) -> Option<ConditionPlan> {
    (conditions.iter())
        .find(|c| c.type_ == type_)
        .map(|c| ConditionPlan::new(c.status == "True", &c.reason, c.message.clone()))
}

/// Ready and Synced after a failure with this reason, over the conditions last written: Synced
/// False; Ready False only for a failure that says the instance cannot be reached (or when
/// nothing was ever observed), else as it was; a Warning Event when Synced did not already say so.
/// Every kind reports its failures this way.
pub fn failed(
    previous: &[Condition],
    reason: &str,
    message: &str,
) -> (ConditionPlan, ConditionPlan, Option<PlannedEvent>) {
    let failed = ConditionPlan::new(false, reason, message);
    let ready = (last(previous, "Ready"))
        .filter(|_| !UNAVAILABLE.contains(&reason))
        .unwrap_or_else(|| failed.clone());
    let already = (previous.iter())
        .any(|c| c.type_ == "Synced" && c.reason == reason && c.message == message);
    let event = (!already).then(|| PlannedEvent {
        type_: EventType::Warning,
        reason: reason.to_owned(),
        action: "Reconcile",
        note: message.to_owned(),
        after: 0,
    });
    (ready, failed, event)
}

/// Ready after a step of the plan failed: what the plan found in this reconcile (`planned`), unless
/// the failure itself says the object cannot be reached; with no planned status, `ready` as
/// [`failed`] gave it. A group RDS no longer has, whose re-creation fails, is then not Ready,
/// whatever the status said before.
pub fn ready_after_failure(
    planned: Option<&ConditionPlan>,
    ready: ConditionPlan,
    reason: &str,
) -> ConditionPlan {
    match planned {
        Some(p) if !UNAVAILABLE.contains(&reason) => p.clone(),
        _ => ready,
    }
}

/// The plan's Ready for a pass that failed with these connection Secret writes planned: the writes
/// may not have been made (a step before them failed, or they did), so a Ready the plan set is
/// False, `ConnectionSecretNotWritten`, naming the Secrets and the failure. The next pass plans
/// no write for a Secret that was written, and is Ready again.
pub fn ready_unless_unwritten(
    ready: &ConditionPlan,
    unwritten: &[&str],
    failure: &str,
) -> ConditionPlan {
    match unwritten {
        [] => ready.clone(),
        _ if !ready.ok => ready.clone(),
        names => ConditionPlan::new(
            false,
            "ConnectionSecretNotWritten",
            format!(
                "the connection Secret {} may not be written: {failure}",
                names.join(", ")
            ),
        ),
    }
}

/// Builds a condition (its transition time is set by [`merge_conditions`]).
pub fn condition(type_: &str, plan: &ConditionPlan, generation: Option<i64>) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: if plan.ok { "True" } else { "False" }.to_owned(),
        reason: plan.reason.clone(),
        message: plan.message.clone(),
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
        observed_generation: generation,
    }
}

/// `now` (RFC 3339) as a Kubernetes time.
fn time(now: &str) -> Time {
    Time(
        now.parse()
            .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
    )
}

/// Merges new conditions into the previous ones: a condition whose status did not change keeps its
/// lastTransitionTime, so an unchanged status writes nothing new (no hot loop).
pub fn merge_conditions(previous: &[Condition], new: Vec<Condition>, now: &str) -> Vec<Condition> {
    let mut merged: Vec<Condition> = previous
        .iter()
        .filter(|p| !new.iter().any(|n| n.type_ == p.type_))
        .cloned()
        .collect();
    for mut c in new {
        let before = previous.iter().find(|p| p.type_ == c.type_);
        c.last_transition_time = match before {
            Some(p) if p.status == c.status => p.last_transition_time.clone(),
            _ => time(now),
        };
        merged.push(c);
    }
    merged.sort_by(|a, b| a.type_.cmp(&b.type_));
    merged
}

/// What a kind whose plan says Ready and Synced reports after a pass: the conditions (after
/// `before`) and the generation they are of.
pub fn reported(
    before: Option<&Reported>,
    ready: &ConditionPlan,
    synced: &ConditionPlan,
    generation: Option<i64>,
    now: &str,
) -> Reported {
    let before = before.map_or(&[][..], |r| &r.conditions[..]);
    Reported {
        conditions: conditions(before, ready, synced, false, generation, now),
        observed_generation: generation,
    }
}

/// What such a kind reports after a failure (`reason`, `message`), and the Event, if any.
/// With connection Secret writes planned (`unwritten`), a Ready the previous pass wrote is False
/// ([`ready_unless_unwritten`]).
pub fn reported_failure(
    previous: &Reported,
    (reason, message): (&str, &str),
    unwritten: &[&str],
    generation: Option<i64>,
    now: &str,
) -> (Reported, Option<PlannedEvent>) {
    let (ready, synced, event) = failed(&previous.conditions, reason, message);
    let ready = ready_unless_unwritten(&ready, unwritten, message);
    let conditions = conditions(
        &previous.conditions,
        &ready,
        &synced,
        false,
        generation,
        now,
    );
    let reported = Reported {
        conditions,
        observed_generation: generation,
    };
    (reported, event)
}

/// `settle` and `failed` of a kind whose plan is a `KindPlan` of a `KindStatus` of `$status` (its
/// fields besides `reported`), whose facts carry `now`: the conditions of the plan after a pass,
/// and after a failure the previous status with the failure's ([`reported`], [`reported_failure`]).
/// With a second argument, `fn(&mut previous, &planned)`: what of the planned fields a failure
/// keeps (a step that went through before the one that failed).
#[macro_export]
macro_rules! reported_status {
    ($status:ident) => {
        $crate::reported_status!($status, |_: &mut $status, _: &$status| {});
    };
    ($status:ident, $keep:expr) => {
        fn settle(
            &self,
            facts: &Self::Facts,
            plan: &Self::Plan,
            _: Option<&()>,
        ) -> Option<$status> {
            let planned = plan.status.as_ref()?;
            let before = self.status.as_ref().map(|s| &s.reported);
            let (ready, synced) = (&planned.ready, &planned.synced);
            let generation = self.metadata.generation;
            Some($status {
                reported: $crate::managed::conditions::reported(
                    before, ready, synced, generation, &facts.now,
                ),
                ..planned.fields.clone()
            })
        }

        fn failed(
            &self,
            failure: &$crate::managed::Failure<'_, Self::Plan>,
        ) -> ($status, Option<$crate::managed::plan::PlannedEvent>) {
            let mut previous = self.status.clone().unwrap_or_default();
            if let Some(planned) = failure.planned.and_then(|p| p.status.as_ref()) {
                ($keep)(&mut previous, &planned.fields);
            }
            let unwritten = failure.unwritten(<Self as $crate::managed::Managed>::connection_write);
            let (reported, event) = $crate::managed::conditions::reported_failure(
                &previous.reported,
                (failure.reason, failure.message),
                &unwritten,
                self.metadata.generation,
                failure.now,
            );
            (
                $status {
                    reported,
                    ..previous
                },
                event,
            )
        }
    };
}
