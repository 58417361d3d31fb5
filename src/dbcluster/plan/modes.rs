//! How a DBCluster may reach a cluster that is not its own, and its modes, as for instances:
//! - claim: a cluster of another namespace's DBCluster is never touched; one no DBCluster owns is
//!   observed or adopted only where a platform admin granted it to this namespace (its tag
//!   rds.operator.rs/adoptable-by, or the operator's --grant-adoption); one of a DBCluster of
//!   this namespace that no longer exists is adopted when asked;
//! - observe only (managementPolicy ObserveOnly): report, never change or delete;
//! - adopt: add the ownership tags and nothing else; differences are reported until the spec is
//!   next changed;
//! - paused (annotation rds.operator.rs/paused): no AWS call at all;
//! - dry run (annotation rds.operator.rs/dry-run): the plan shown in status.dryRun, not done.

use crate::database::rules::roles::RoleCall;
use kube::ResourceExt;
use kube::runtime::events::EventType;

use super::{ClusterStep, Facts, Plan, Step, drift_interval, status_plan, uid};
use crate::crd::{
    ADOPTABLE_BY_TAG, ADOPTED_TAG, DRY_RUN_ANNOTATION, OWNER_NAME_TAG, OWNER_TAG, PAUSED_ANNOTATION,
};
use crate::database::choices::{AdoptionPolicy, ManagementPolicy};
use crate::database::parts::{DryRun, DryRunStep};
use crate::database::secret::SecretStep;
use crate::database::tenancy::tag_grants;
use crate::dbcluster::observed::ObservedCluster;
use crate::dbcluster::{DBCluster, DBClusterStatus};
use crate::managed::plan::{ConditionPlan, KindPlan, PlannedEvent, Requeue};
use crate::managed::tags;

fn annotated(cluster: &DBCluster, key: &str) -> bool {
    (cluster.annotations().get(key)).is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

pub fn paused(cluster: &DBCluster) -> bool {
    annotated(cluster, PAUSED_ANNOTATION)
}

pub fn dry_run(cluster: &DBCluster) -> bool {
    annotated(cluster, DRY_RUN_ANNOTATION)
}

pub fn observe_only(cluster: &DBCluster) -> bool {
    cluster.spec.policies.management_policy == ManagementPolicy::ObserveOnly
}

fn adoption_asked(cluster: &DBCluster) -> bool {
    cluster
        .spec
        .policies
        .adoption_policy
        .is_some_and(|p| p != AdoptionPolicy::Never)
}

/// What this DBCluster may do with a cluster of its identifier that is not its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    Observe,
    Adopt,
    /// Left alone: the reason and the message.
    Refused(&'static str, String),
}

/// The DBCluster of this namespace a cluster's ownership tags name, other than this one: its
/// name, and the uid the tags carry.
pub fn tagged_owner(cluster: &DBCluster, o: &ObservedCluster) -> Option<(String, String)> {
    let namespace = cluster.namespace().unwrap_or_default();
    let owner_uid = o.tags.get(OWNER_TAG)?;
    let (ns, name) = o.tags.get(OWNER_NAME_TAG)?.split_once('/')?;
    (ns == namespace && *owner_uid != uid(cluster)).then(|| (name.to_owned(), owner_uid.clone()))
}

pub fn claim(f: &Facts, o: &ObservedCluster) -> Claim {
    let cluster = &f.cluster;
    let (namespace, identifier) = (cluster.namespace().unwrap_or_default(), &o.identifier);
    let refused = |reason, message: String| Claim::Refused(reason, message);
    if tags::of_another_namespace(&o.tags, &namespace) {
        let message = format!(
            "an RDS cluster named {identifier} already exists and is managed by another \
             DBCluster; choose another dbClusterIdentifier"
        );
        return refused("IdentifierInUse", message);
    }
    let asked = adoption_asked(cluster) || observe_only(cluster);
    if !o.tags.contains_key(OWNER_TAG) {
        let listed = (f.grants.adoption.iter()).any(|n| n == "*" || *n == namespace);
        let granted = listed || tag_grants(&o.tags, ADOPTABLE_BY_TAG, &namespace);
        return match (asked, granted) {
            (false, _) => refused(
                "IdentifierInUse",
                format!(
                    "an RDS cluster named {identifier} already exists and is not managed by this \
                     DBCluster; choose another dbClusterIdentifier, or set spec.adoptionPolicy: \
                     Adopt to take it over"
                ),
            ),
            (true, false) => refused(
                "NotGranted",
                format!(
                    "an RDS cluster named {identifier} already exists and no DBCluster manages \
                     it, but nothing grants this namespace its adoption: a platform admin tags it \
                     {ADOPTABLE_BY_TAG} with this namespace's name, or lists the namespace in \
                     the operator's --grant-adoption"
                ),
            ),
            (true, true) if f.observers.iter().any(|n| *n != namespace) => refused(
                "IdentifierInUse",
                format!(
                    "an RDS cluster named {identifier} already exists and is observed by a \
                     DBCluster of another namespace; it is not taken from this one"
                ),
            ),
            (true, true) if observe_only(cluster) => Claim::Observe,
            (true, true) => Claim::Adopt,
        };
    }
    // Tagged for another DBCluster of this namespace: only once that one is known to be gone.
    if f.owner_alive != Some(false) || !asked {
        let message = format!(
            "an RDS cluster named {identifier} already exists and is managed by another DBCluster \
             (or was, by one of this namespace: set spec.adoptionPolicy: Adopt to take it over \
             once that one is gone); choose another dbClusterIdentifier"
        );
        return refused("IdentifierInUse", message);
    }
    match observe_only(cluster) {
        true => Claim::Observe,
        false => Claim::Adopt,
    }
}

/// Takes over a cluster that is not ours, on a direct read: the ownership tags and nothing else.
pub(super) fn adopt(f: &Facts, mut plan: Plan, o: &ObservedCluster) -> Plan {
    let cluster = &f.cluster;
    if !f.observed_directly {
        return plan;
    }
    let Some(arn) = o.arn.clone() else {
        return plan;
    };
    let namespace = cluster.namespace().unwrap_or_default();
    let ownership = [
        (OWNER_TAG.to_owned(), uid(cluster)),
        (
            OWNER_NAME_TAG.to_owned(),
            format!("{namespace}/{}", cluster.name_any()),
        ),
        (ADOPTED_TAG.to_owned(), f.now.clone()),
    ];
    let identifier = o.identifier.clone();
    plan.step(Step::AddTags {
        identifier: identifier.clone(),
        arn,
        tags: ownership.into(),
    });
    let note = format!(
        "adopted RDS cluster {identifier}: only the ownership tags were added; differences from \
         the spec are reported and put right once the spec is next changed; its master password \
         was not changed"
    );
    plan.event(EventType::Normal, "Adopted", "Adopt", note.clone());
    let mut fields = super::observed_fields(f, o);
    fields.common.adopted_generation = cluster.metadata.generation;
    let synced = ConditionPlan::new(true, "Adopted", note);
    plan.status = Some(status_plan(fields, o.status == "available", synced, false));
    plan
}

/// Reports a cluster this DBCluster only observes: its state and differences; no call changes
/// anything, and the connection Secret is written from the spec's password.
pub(super) fn observe(f: &Facts, mut plan: Plan, o: &ObservedCluster) -> Plan {
    let mut fields = super::observed_fields(f, o);
    // Only observed, never this DBCluster's own: never restored or created again when it goes.
    // Ours, switched to ObserveOnly, stays ours.
    if !tags::owned_by(&o.tags, &uid(&f.cluster)) {
        fields.common.owned = Some(false);
    }
    plan.requeue = Requeue::After(f.intervals.after(&o.status));
    let edited = true;
    let differs = super::compare(&f.cluster.spec, o, edited).modification;
    let message = match differs.in_sync() {
        true => "observed; the RDS cluster matches the spec".to_owned(),
        false => format!(
            "observed (managementPolicy ObserveOnly): the RDS cluster differs from the spec in {}",
            differs.field_list()
        ),
    };
    let password = super::password::observed_password(f);
    let pending =
        match super::secret::connection_secret(f, &mut plan, &mut fields, o, password.as_ref()) {
            Ok(pending) => pending,
            Err(message) => return super::secret::conflict(plan, f, &message),
        };
    let synced = ConditionPlan::new(true, "Observed", message);
    let available = o.status == "available";
    plan.status = Some(super::secret::status_with_secret(
        fields, available, synced, pending,
    ));
    plan
}

/// A paused DBCluster: no step, Synced False (ReconcilePaused), Ready as last written.
pub(super) fn paused_plan(f: &Facts) -> Plan {
    let message = "the rds.operator.rs/paused annotation is \"true\": the operator makes no AWS \
                   call for this DBCluster until it is removed";
    let mut plan = KindPlan::new(Requeue::AwaitChange);
    let previous = f.cluster.status.clone().unwrap_or_default();
    let ready = crate::managed::conditions::last(&previous.reported.conditions, "Ready")
        .unwrap_or_else(|| ConditionPlan::new(false, "ReconcilePaused", message));
    let synced = ConditionPlan::new(false, "ReconcilePaused", message);
    let mut status = status_plan(previous.clone(), false, synced, false);
    status.ready = ready;
    plan.status = Some(status);
    let already = (previous.reported.conditions.iter())
        .any(|c| c.type_ == "Synced" && c.reason == "ReconcilePaused");
    if !already {
        plan.events.push(PlannedEvent {
            type_: EventType::Normal,
            reason: "ReconcilePaused".into(),
            action: "Reconcile",
            note: message.into(),
            after: 0,
        });
    }
    plan
}

/// The plan shown instead of done: only the finalizer is added (it changes nothing outside the
/// DBCluster and guards a later deletion); every other step is listed in status.dryRun.
pub(super) fn preview(f: &Facts, mut plan: Plan) -> Plan {
    let (kept, shown): (Vec<Step>, Vec<Step>) =
        (plan.steps.drain(..)).partition(|s| matches!(s, Step::AddFinalizer));
    let steps: Vec<DryRunStep> = shown.iter().map(dry_run_step).collect();
    plan.steps = kept;
    plan.events.clear();
    let count = steps.len();
    let previous = f.cluster.status.clone().unwrap_or_default();
    let mut fields: DBClusterStatus = match &plan.status {
        Some(s) => {
            let mut fields = previous.clone();
            fields.common.dry_run = None;
            fields.with_observed(&s.fields)
        }
        None => previous,
    };
    fields.common.dry_run = Some(DryRun { steps });
    let message = format!(
        "dry run (annotation {DRY_RUN_ANNOTATION}): {count} step(s) shown in status.dryRun, none \
         taken"
    );
    let ready = plan.status.as_ref().map(|s| s.ready.clone());
    let mut status = status_plan(
        fields,
        false,
        ConditionPlan::new(true, "DryRun", message),
        false,
    );
    if let Some(ready) = ready {
        status.ready = ready;
    }
    plan.status = Some(status);
    plan.requeue = Requeue::After(drift_interval(f));
    plan
}

impl DBClusterStatus {
    /// This status with what RDS shows taken from `observed` (a plan's fields), and nothing the
    /// plan meant to change.
    fn with_observed(mut self, observed: &DBClusterStatus) -> Self {
        self.status = observed.status.clone().or(self.status);
        self.common.engine_version = observed
            .common
            .engine_version
            .clone()
            .or(self.common.engine_version);
        self.common.endpoint = observed.common.endpoint.clone().or(self.common.endpoint);
        self.reader_endpoint = observed.reader_endpoint.clone().or(self.reader_endpoint);
        self.members = observed.members.clone();
        self
    }
}

/// A Secret step in the dry run: what it writes, or which reader it rolls.
fn dry_run_secret(step: &SecretStep) -> (&'static str, &'static str, String) {
    match step {
        SecretStep::WritePassword { name, .. } | SecretStep::WriteConnection { name, .. } => {
            ("WriteSecret", "None", name.clone())
        }
        SecretStep::SetOwner { name, .. } => ("SetSecretOwner", "None", name.clone()),
        SecretStep::RollReader(r) => (
            "RollSecretReader",
            "Rollout",
            format!("{:?} {}", r.kind, r.name),
        ),
    }
}

fn dry_run_step(step: &Step) -> DryRunStep {
    let (action, disruption, note) = match step {
        Step::Own(own) => own_preview(own),
        Step::Restore { snapshot, .. } => (
            "RestoreDBClusterFromSnapshot",
            "NewInstance",
            snapshot.clone(),
        ),
        Step::RestoreToPointInTime { source, .. } => (
            "RestoreDBClusterToPointInTime",
            "NewInstance",
            source.clone(),
        ),
        Step::Modify { modification, .. } => {
            let outage = ["engineVersion", "port"];
            let fields = modification.fields();
            let disruption = match fields.iter().any(|f| outage.contains(f)) {
                true => "Outage",
                false => "None",
            };
            ("ModifyDBCluster", disruption, fields.join(", "))
        }
        Step::ApplyMaintenance(m) => (
            "ApplyPendingMaintenanceAction",
            "Outage",
            format!("{} ({})", m.apply.action, m.apply.opt_in),
        ),
        Step::BlueGreen { call, .. } => {
            let (action, switchover, note) = call.preview();
            let disruption = if switchover { "Switchover" } else { "None" };
            (action, disruption, note)
        }
        Step::ClearAnnotation(key) => ("ClearAnnotation", "None", (*key).to_owned()),
        Step::Alarms { changes, .. } => crate::database::alarms::preview(changes),
        Step::Role { call, .. } => match call {
            RoleCall::Add { role_arn, .. } => ("AddRoleToDBCluster", "None", role_arn.clone()),
            RoleCall::Remove { role_arn, .. } => {
                ("RemoveRoleFromDBCluster", "None", role_arn.clone())
            }
        },
        Step::RotateManagedPassword { identifier } => {
            ("ModifyDBCluster", "PasswordRotation", identifier.clone())
        }
        Step::SetSecretRotation { secret_arn, .. } => ("RotateSecret", "None", secret_arn.clone()),
        Step::AddTags { tags, .. } => {
            let keys = tags.keys().cloned().collect::<Vec<_>>().join(", ");
            ("AddTagsToResource", "None", keys)
        }
        Step::RemoveTags { keys, .. } => ("RemoveTagsFromResource", "None", keys.join(", ")),
        Step::Secret(secret) => dry_run_secret(secret),
        Step::OrphanSecret { name } => ("OrphanSecret", "None", name.clone()),
        Step::AddFinalizer | Step::RemoveFinalizer => ("Finalizer", "None", String::new()),
    };
    DryRunStep {
        action: action.into(),
        fields: Vec::new(),
        disruption: disruption.into(),
        note,
    }
}

/// What a DBCluster's own step would do, for the dry run.
fn own_preview(own: &ClusterStep) -> (&'static str, &'static str, String) {
    match own {
        ClusterStep::Create { identifier, .. } => {
            ("CreateDBCluster", "NewInstance", identifier.clone())
        }
        ClusterStep::RestoreFromS3 { s3, .. } => {
            let note = format!("from the backup in {}", s3.location());
            ("RestoreDBClusterFromS3", "NewInstance", note)
        }
        ClusterStep::RebootMember { identifier, .. } => {
            ("RebootDBInstance", "Reboot", identifier.clone())
        }
        ClusterStep::Detach { global, .. } => ("RemoveFromGlobalCluster", "None", global.clone()),
        ClusterStep::DeleteMember { identifier, .. } => {
            ("DeleteDBInstance", "Deletion", identifier.clone())
        }
        ClusterStep::Expire { members } => (
            "Delete",
            "Deletion",
            format!("the expired clone and its members ({})", members.join(", ")),
        ),
        ClusterStep::HttpEndpoint { arn, enable, .. } => match enable {
            true => ("EnableHttpEndpoint", "None", arn.clone()),
            false => ("DisableHttpEndpoint", "None", arn.clone()),
        },
        ClusterStep::Stop { identifier } => ("StopDBCluster", "Outage", identifier.clone()),
        ClusterStep::Start { identifier } => ("StartDBCluster", "None", identifier.clone()),
        ClusterStep::Delete { final_snapshot, .. } => (
            "DeleteDBCluster",
            "Deletion",
            final_snapshot
                .clone()
                .map_or("no final snapshot".into(), |s| {
                    format!("final snapshot {s}")
                }),
        ),
    }
}
