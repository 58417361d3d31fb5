//! What a DBInstance's status says (the conditions every kind shares are in `managed::conditions`):
//! readiness by RDS state, the observed fields, drift records,
//! and the status written once the act step has run (amended by RDS's answers).

use kube::runtime::events::EventType;

use crate::database::status::DatabaseStatus;
use crate::dbinstance::drift::Diff;
use crate::dbinstance::{DBInstanceStatus, DriftRecord, Endpoint, FieldDrift};
use crate::managed::conditions::{conditions, failed, last, ready_with_secret};
use crate::rds_state::restorable_time;
use crate::rds_state::{ObservedInstance, is_transitional};

use super::types::{ConditionPlan, Facts, Plan, PlannedEvent, Response, StatusPlan};

/// The status to write: the plan's, amended by RDS's answer, with conditions merged into the
/// previous ones (an unchanged condition keeps its lastTransitionTime).
pub fn finish(
    plan: &StatusPlan,
    previous: Option<&DBInstanceStatus>,
    response: Option<&Response>,
    generation: Option<i64>,
    now: &str,
) -> DBInstanceStatus {
    let mut status = plan.fields.clone();
    match response {
        Some(Response::Created(created)) => {
            let observed = observed_status(&created.identifier, created);
            status.db_instance_identifier = observed.db_instance_identifier;
            status.db_instance_status = observed.db_instance_status;
            status.common.endpoint = observed.common.endpoint;
            status.common.arn = observed.common.arn;
            status.common.pending_modified_values = observed.common.pending_modified_values;
        }
        Some(Response::Modified(after)) if !after.status.is_empty() => {
            status.db_instance_status = Some(after.status.clone());
            status.common.pending_modified_values = after.pending_modified_values.clone();
        }
        _ => {}
    }
    let ready = plan.ready.clone().unwrap_or_else(|| {
        let (ok, reason, message) = readiness(status.db_instance_status.as_deref().unwrap_or(""));
        ConditionPlan::new(ok, &reason, message)
    });
    let ready = ready_with_secret(ready, plan.secret_pending.clone());
    let busy = is_transitional(status.db_instance_status.as_deref().unwrap_or(""));
    let before = previous
        .map(|p| p.reported.conditions.as_slice())
        .unwrap_or_default();
    status.reported.conditions = conditions(before, &ready, &plan.synced, busy, generation, now);
    status.reported.observed_generation = match plan.held {
        true => previous.and_then(|p| p.reported.observed_generation),
        false => generation,
    };
    status.latest_restorable_time = restorable_time(
        previous.and_then(|p| p.latest_restorable_time.as_deref()),
        status.latest_restorable_time.as_deref(),
    );
    status
}

/// A failed DBInstance's status: [`failed`] over what was last observed.
pub fn failure(
    previous: Option<&DBInstanceStatus>,
    reason: &str,
    message: &str,
) -> (StatusPlan, Option<PlannedEvent>) {
    let conditions = previous.map_or(&[][..], |s| &s.reported.conditions[..]);
    let (ready, synced, event) = failed(conditions, reason, message);
    let status = StatusPlan {
        secret_pending: None,
        held: false,
        fields: previous.cloned().unwrap_or_default(),
        ready: Some(ready),
        synced,
    };
    (status, event)
}

/// A paused DBInstance: Synced=False, reason ReconcilePaused; Ready stays what was last observed
/// (nothing new is known). An Event when it becomes paused.
pub fn paused(previous: Option<&DBInstanceStatus>) -> (StatusPlan, Option<PlannedEvent>) {
    let message = "the rds.operator.rs/paused annotation is \"true\": the operator makes no AWS call \
                   for this DBInstance until it is removed";
    let conditions = previous.map_or(&[][..], |s| &s.reported.conditions[..]);
    let ready = last(conditions, "Ready")
        .unwrap_or_else(|| ConditionPlan::new(false, "ReconcilePaused", message));
    let already = (previous.iter().flat_map(|s| s.reported.conditions.iter()))
        .any(|c| c.type_ == "Synced" && c.reason == "ReconcilePaused");
    let status = StatusPlan {
        secret_pending: None,
        held: true,
        fields: previous.cloned().unwrap_or_default(),
        ready: Some(ready),
        synced: ConditionPlan::new(false, "ReconcilePaused", message),
    };
    let event = (!already).then(|| PlannedEvent {
        type_: EventType::Normal,
        reason: "ReconcilePaused".into(),
        action: "Reconcile",
        note: message.into(),
        after: 0,
    });
    (status, event)
}

/// A status that reports what RDS says (Ready follows its state) and Synced as given.
pub fn observed_plan(
    fields: DBInstanceStatus,
    ok: bool,
    reason: &str,
    message: String,
) -> StatusPlan {
    StatusPlan {
        secret_pending: None,
        held: false,
        fields,
        ready: None,
        synced: ConditionPlan::new(ok, reason, message),
    }
}

/// The status fields that come from the observed instance.
pub fn observed_status(identifier: &str, observed: &ObservedInstance) -> DBInstanceStatus {
    DBInstanceStatus {
        db_instance_identifier: Some(identifier.to_owned()),
        db_instance_status: Some(observed.status.clone()),
        common: DatabaseStatus {
            endpoint: match (&observed.address, observed.port) {
                (Some(address), Some(port)) => Some(Endpoint {
                    address: address.clone(),
                    port,
                }),
                _ => None,
            },
            arn: observed.arn.clone(),
            pending_modified_values: observed.pending_modified_values.clone(),
            engine_version: observed.engine_version.clone(),
            iam_database_authentication_enabled: observed.iam_database_authentication_enabled,
            master_user_secret: crate::database::parts::MasterUserSecret::of(
                observed.master_user_secret_arn.as_ref(),
                observed.master_user_secret_kms_key_id.as_ref(),
                observed.master_user_secret_status.as_ref(),
            ),
            ..Default::default()
        },
        parameter_apply_status: observed.parameter_apply_status.clone(),
        region: arn_part(observed.arn.as_deref(), 3),
        account_id: arn_part(observed.arn.as_deref(), 4),
        dbi_resource_id: observed.dbi_resource_id.clone(),
        latest_restorable_time: observed.latest_restorable_time.clone(),
        ca_certificate_identifier: observed.ca_certificate_identifier.clone(),
        certificate_valid_till: observed.certificate_valid_till.clone(),
        ..Default::default()
    }
}

/// Part `n` of an ARN (`arn:partition:service:region:account:...`), when not empty.
fn arn_part(arn: Option<&str>, n: usize) -> Option<String> {
    (arn?.split(':').nth(n))
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
}

/// The Ready condition for an instance of ours in this RDS state.
pub fn readiness(status: &str) -> (bool, String, String) {
    match status {
        "available" => (
            true,
            "Available".into(),
            "the RDS instance is available".into(),
        ),
        s if SERVING.contains(&s) => (
            true,
            camel_case(s),
            format!("the RDS instance serves clients while RDS reports it as {s}"),
        ),
        s if is_transitional(s) => (
            false,
            camel_case(s),
            format!("RDS reports the instance as {s}; waiting for it to become available"),
        ),
        s => (
            false,
            camel_case(s),
            format!("RDS reports the instance as {s}, which needs attention in AWS"),
        ),
    }
}

/// RDS states in which the instance keeps serving clients (Ready stays True): a backup, a
/// modification being applied, storage being optimised, settings being configured.
pub const SERVING: &[&str] = &[
    "backing-up",
    "modifying",
    "storage-optimization",
    "configuring-enhanced-monitoring",
    "configuring-iam-database-auth",
    "configuring-log-exports",
    "resetting-master-credentials",
];

/// `backing-up` -> `BackingUp`: RDS states as condition reasons.
pub fn camel_case(s: &str) -> String {
    s.split(['-', '_', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The drift record to show: the previous one (and its time) while the same fields differ the same
/// way, so an unchanged drift writes nothing new.
pub fn drift_record(
    previous: Option<&DriftRecord>,
    action: &str,
    diffs: &[Diff],
    now: &str,
) -> DriftRecord {
    let fields: Vec<FieldDrift> = diffs.iter().map(FieldDrift::from).collect();
    match previous {
        Some(p) if p.action == action && p.fields == fields => p.clone(),
        _ => DriftRecord {
            time: now.to_owned(),
            action: action.to_owned(),
            fields,
        },
    }
}

/// "dbInstanceClass: db.t3.small -> db.t3.micro; tags: a=b -> (none)"
pub fn describe_diffs(diffs: &[Diff]) -> String {
    describe_fields(diffs.iter().map(FieldDrift::from))
}

pub use crate::database::parts::describe_fields;

/// Reports `reason` as Ready=False and Synced=False (keeping what was last observed), after the
/// steps already planned. `refusal` is the metric label when this counts as a failed reconcile.
pub fn refuse(
    mut plan: Plan,
    f: &Facts,
    reason: &str,
    message: &str,
    refusal: Option<&'static str>,
) -> Plan {
    let (status, event) = failure(f.db.status.as_ref(), reason, message);
    plan.status = Some(status);
    plan.events.extend(event.map(|mut e| {
        e.after = plan.steps.len();
        e
    }));
    plan.refusal = refusal;
    plan
}
