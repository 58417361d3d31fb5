//! A DBInstance in dry run (annotation `rds.operator.rs/dry-run: "true"`): the plan is made as
//! always, then shown in status.dryRun instead of carried out, each step with what the database
//! goes through (RDS's documented downtime for each setting). Only the finalizer is added: it
//! changes nothing outside the DBInstance and guards a later deletion.

use kube::runtime::events::EventType;

use crate::dbinstance::drift::{self, Diff};
use crate::dbinstance::{DryRun, DryRunStep, FieldDrift, OWNER_TAG};
use crate::rds_state::ObservedInstance;

use super::spec;
use super::types::{
    ConditionPlan, Facts, InstanceStep, Plan, PlannedEvent, Requeue, StatusPlan, Step,
};
use crate::database::blue_green::Call;
use crate::database::secret::SecretStep;

/// What the database goes through, from least to most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Disruption {
    None,
    /// The change waits for a reboot (a parameter group).
    Reboot,
    /// A Multi-AZ instance fails over to its standby (seconds to a minute or two).
    Failover,
    /// The instance is unavailable while RDS applies the change.
    Outage,
    /// A blue/green switchover: the endpoint moves to the green copy (about a minute of
    /// writes refused).
    Switchover,
    /// An instance is created or restored.
    NewInstance,
    /// The instance is deleted.
    Deletion,
}

impl Disruption {
    fn as_str(self) -> &'static str {
        match self {
            Disruption::None => "None",
            Disruption::Reboot => "Reboot",
            Disruption::Failover => "Failover",
            Disruption::Outage => "Outage",
            Disruption::Switchover => "Switchover",
            Disruption::NewInstance => "NewInstance",
            Disruption::Deletion => "Deletion",
        }
    }
}

/// What changing one field does to a running instance (the "Downtime notes" of RDS's DB instance
/// settings table).
pub fn disruption_of(diff: &Diff, multi_az: bool) -> Disruption {
    match diff.field {
        // A Multi-AZ instance changes its standby first, then fails over to it.
        "dbInstanceClass" if multi_az => Disruption::Failover,
        // A new CA certificate takes a restart.
        "dbInstanceClass" | "engineVersion" | "port" | "caCertificateIdentifier" => {
            Disruption::Outage
        }
        // Turning automated backups on or off.
        "backupRetentionPeriod" if (diff.observed == "0") != (diff.desired == "0") => {
            Disruption::Outage
        }
        // Leaving magnetic storage.
        "storageType" if diff.observed == "standard" => Disruption::Outage,
        // Parameters of a new group apply at the next reboot.
        "dbParameterGroupName" => Disruption::Reboot,
        _ => Disruption::None,
    }
}

/// The differences between the spec and the instance, as the plan compared them.
fn diffs(f: &Facts, observed: &ObservedInstance) -> Vec<Diff> {
    let db = &f.db;
    let tags = spec::tags_of(db);
    let managed = (db.status.as_ref()).map_or(&[][..], |s| &s.common.applied_tag_keys[..]);
    drift::compare(&db.spec, observed, &tags, managed, false).diffs
}

fn preview_step(f: &Facts, step: &Step) -> DryRunStep {
    let observed = f.observed.as_ref();
    let multi_az = observed.is_some_and(|o| o.multi_az == Some(true));
    let mut preview = DryRunStep {
        disruption: Disruption::None.as_str().into(),
        ..Default::default()
    };
    let (action, note): (&str, String) = match step {
        Step::Own(InstanceStep::CreateInstance { .. } | InstanceStep::RestoreFromS3 { .. })
        | Step::Restore { .. }
        | Step::RestoreToPointInTime { .. } => {
            preview.disruption = Disruption::NewInstance.as_str().into();
            new_instance(step)
        }
        Step::Modify { modification, .. } => {
            preview_modify(f, modification, multi_az, &mut preview)
        }
        Step::AddTags { tags, .. } => {
            preview.fields = tag_fields(observed, tags.iter().map(|(k, v)| (k, v.as_str())));
            let note = match tags.contains_key(OWNER_TAG) {
                true => "adopts the instance: only its ownership tags change",
                false => "",
            };
            ("AddTagsToResource", note.to_owned())
        }
        Step::RemoveTags { keys, .. } => {
            preview.fields = tag_fields(observed, keys.iter().map(|k| (k, "")));
            ("RemoveTagsFromResource", String::new())
        }
        Step::Own(InstanceStep::DeleteInstance { final_snapshot, .. }) => {
            preview.disruption = Disruption::Deletion.as_str().into();
            let note = match final_snapshot {
                Some(s) => format!("after a final snapshot, {s}"),
                None => "without a final snapshot".into(),
            };
            ("DeleteDBInstance", note)
        }
        Step::BlueGreen { .. }
        | Step::Own(InstanceStep::CreateReplica { .. })
        | Step::Own(InstanceStep::PromoteReplica { .. }) => copies(f, step, &mut preview),
        Step::Own(InstanceStep::StartBackupReplication { replication, .. }) => (
            "StartDBInstanceAutomatedBackupsReplication",
            format!("automated backups replicated to {}", replication.region),
        ),
        Step::Own(InstanceStep::StopBackupReplication { region, .. }) => (
            "StopDBInstanceAutomatedBackupsReplication",
            format!("automated backups no longer replicated to {region}"),
        ),
        Step::Own(InstanceStep::Reboot { .. }) | Step::ApplyMaintenance(_) => {
            preview.disruption = Disruption::Outage.as_str().into();
            outage(step)
        }
        Step::Alarms { changes, .. } => {
            let (action, _, names) = crate::database::alarms::preview(changes);
            (action, names)
        }
        kubernetes => kubernetes_step(kubernetes),
    };
    preview.action = action.into();
    preview.note = note;
    preview
}

/// The steps that make a new instance: empty, or from a snapshot, a point in time or S3.
fn new_instance(step: &Step) -> (&'static str, String) {
    match step {
        Step::Restore { snapshot, .. } => (
            "RestoreDBInstanceFromDBSnapshot",
            format!("from snapshot {snapshot}"),
        ),
        Step::Own(InstanceStep::RestoreFromS3 { s3, .. }) => (
            "RestoreDBInstanceFromS3",
            format!("from the backup in {}", s3.location()),
        ),
        Step::RestoreToPointInTime { source, time, .. } => {
            let at = time.as_deref().unwrap_or("its latest restorable time");
            (
                "RestoreDBInstanceToPointInTime",
                format!("from instance {source} at {at}"),
            )
        }
        Step::Own(InstanceStep::CreateInstance { spec, .. }) => {
            let note = format!(
                "a new, empty {} instance, {}",
                spec.engine, spec.db_instance_class
            );
            ("CreateDBInstance", note)
        }
        _ => ("", String::new()),
    }
}

/// The steps RDS takes the instance offline for: a reboot, pending maintenance.
fn outage(step: &Step) -> (&'static str, String) {
    match step {
        Step::ApplyMaintenance(m) => (
            "ApplyPendingMaintenanceAction",
            format!(
                "pending maintenance {} applied ({})",
                m.apply.action, m.apply.opt_in
            ),
        ),
        _ => (
            "RebootDBInstance",
            "static parameter changes apply at the reboot".into(),
        ),
    }
}

/// The steps that make or switch copies of the instance: a blue/green deployment (the fields green
/// carries, `disruption: Switchover`), a read replica and its promotion.
fn copies(f: &Facts, step: &Step, preview: &mut DryRunStep) -> (&'static str, String) {
    let (disruption, action, note) = match step {
        Step::BlueGreen { call, .. } => {
            if let Call::Create { targets, .. } = call {
                let carried = |field: &str| match field {
                    "engineVersion" => targets.engine_version.is_some(),
                    "dbParameterGroupName" => targets.db_parameter_group_name.is_some(),
                    "dbInstanceClass" => targets.db_instance_class.is_some(),
                    "storageType" => targets.storage_type.is_some(),
                    _ => false,
                };
                let observed = f.observed.as_ref();
                let changed = observed.map(|o| diffs(f, o)).unwrap_or_default();
                preview.fields = (changed.iter())
                    .filter(|d| carried(d.field))
                    .map(FieldDrift::from)
                    .collect();
            }
            let (action, switchover, note) = call.preview();
            let disruption = match switchover {
                true => Disruption::Switchover,
                false => Disruption::None,
            };
            (disruption, action, note)
        }
        Step::Own(InstanceStep::CreateReplica { source, spec, .. }) => {
            let note = format!("a read replica of {source}, {}", spec.db_instance_class);
            (Disruption::NewInstance, "CreateDBInstanceReadReplica", note)
        }
        // RDS reboots the replica as it promotes it (USER_ReadRepl.Promote.html).
        _ => {
            let note = "the read replica becomes a standalone instance (one-way); RDS reboots it";
            (Disruption::Outage, "PromoteReadReplica", note.to_owned())
        }
    };
    preview.disruption = disruption.as_str().into();
    (action, note)
}

/// A ModifyDBInstance: the fields it carries, the worst disruption among them, and when RDS
/// applies them.
fn preview_modify(
    f: &Facts,
    modification: &drift::Modification,
    multi_az: bool,
    preview: &mut DryRunStep,
) -> (&'static str, String) {
    let changed: Vec<Diff> = (f.observed.as_ref().map(|o| diffs(f, o)).unwrap_or_default())
        .into_iter()
        .filter(|d| modification.carries(d.field))
        .collect();
    let worst =
        (changed.iter().map(|d| disruption_of(d, multi_az)).max()).unwrap_or(Disruption::None);
    preview.disruption = worst.as_str().into();
    preview.fields = changed.iter().map(FieldDrift::from).collect();
    if modification.rotate_password {
        preview.fields.push(FieldDrift {
            field: "masterUserPassword".into(),
            observed: "(the password RDS has)".into(),
            desired: "(the password in the Secret)".into(),
        });
    }
    let when = match modification.apply_immediately {
        true => "applied at once",
        false => "applied in the next maintenance window",
    };
    ("ModifyDBInstance", when.to_owned())
}

/// Tag changes as fields: `tags.<key>`, the value RDS has, the value the step writes.
fn tag_fields<'a>(
    observed: Option<&ObservedInstance>,
    tags: impl Iterator<Item = (&'a String, &'a str)>,
) -> Vec<FieldDrift> {
    tags.map(|(k, v)| FieldDrift {
        field: format!("tags.{k}"),
        observed: observed
            .and_then(|o| o.tags.get(k).cloned())
            .unwrap_or_default(),
        desired: v.to_owned(),
    })
    .collect()
}

/// The steps that write to Kubernetes, not RDS: no disruption.
fn kubernetes_step(step: &Step) -> (&'static str, String) {
    match step {
        Step::Secret(SecretStep::WritePassword { name, .. }) => (
            "WriteSecret",
            format!("generated master password in Secret {name}"),
        ),
        Step::Secret(SecretStep::WriteConnection { name, .. }) => (
            "WriteSecret",
            format!("connection details in Secret {name}"),
        ),
        Step::OrphanSecret { name } => (
            "OrphanSecret",
            format!("keep Secret {name} without its owner"),
        ),
        Step::Secret(SecretStep::SetOwner {
            name,
            owner_reference: true,
        }) => (
            "SetSecretOwner",
            format!("give Secret {name} this DBInstance's ownerReference"),
        ),
        Step::Secret(SecretStep::SetOwner { name, .. }) => (
            "SetSecretOwner",
            format!("keep Secret {name} without an ownerReference (deletionPolicy Retain)"),
        ),
        Step::Secret(SecretStep::RollReader(r)) => (
            "RollSecretReader",
            format!(
                "roll {:?} {} to the connection Secret's version {}",
                r.kind, r.name, r.version
            ),
        ),
        Step::AddFinalizer => ("AddFinalizer", String::new()),
        Step::RemoveFinalizer => ("RemoveFinalizer", "the DBInstance goes".into()),
        rds => (rds.name(), String::new()),
    }
}

/// The plan of a DBInstance in dry run: the steps shown in status.dryRun, none carried out but
/// the finalizer; an Event when what would be done changes.
pub fn preview(f: &Facts, mut plan: Plan) -> Plan {
    let (kept, shown): (Vec<Step>, Vec<Step>) =
        (plan.steps.drain(..)).partition(|s| *s == Step::AddFinalizer);
    let mut steps: Vec<DryRunStep> = shown.iter().map(|s| preview_step(f, s)).collect();
    // An adoption changes only the tags; show what would be put right once the spec changes.
    let adopting = shown
        .iter()
        .any(|s| matches!(s, Step::AddTags { tags, .. } if tags.contains_key(OWNER_TAG)));
    if adopting && let Some(o) = f.observed.as_ref() {
        let later: Vec<Diff> = (diffs(f, o).into_iter())
            .filter(|d| d.field != "tags")
            .collect();
        if !later.is_empty() {
            let multi_az = o.multi_az == Some(true);
            let worst = (later.iter().map(|d| disruption_of(d, multi_az)).max())
                .unwrap_or(Disruption::None);
            steps.push(DryRunStep {
                action: "ModifyDBInstance".into(),
                fields: later.iter().map(FieldDrift::from).collect(),
                disruption: worst.as_str().into(),
                note: "after adoption, only once the spec is next changed".into(),
            });
        }
    }
    plan.steps = kept;
    let dry_run = DryRun { steps };
    let previous = f.db.status.clone().unwrap_or_default();
    let changed = previous.common.dry_run.as_ref() != Some(&dry_run);
    if dry_run.steps.is_empty() {
        // Nothing to do: the plan's own report stands.
        if let Some(status) = plan.status.as_mut() {
            status.fields.common.dry_run = Some(dry_run);
        }
        return plan;
    }
    let summary = (dry_run.steps.iter())
        .map(|s| match s.disruption.as_str() {
            "None" => s.action.clone(),
            d => format!("{} ({d})", s.action),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let message = format!(
        "dry run: the operator would {summary}; nothing was done (remove the rds.operator.rs/dry-run annotation to let it act)"
    );
    plan.events = match changed {
        true => vec![PlannedEvent {
            type_: EventType::Normal,
            reason: "DryRun".into(),
            action: "Plan",
            note: message.clone(),
            after: 0,
        }],
        false => Vec::new(),
    };
    let ready = crate::managed::conditions::last(&previous.reported.conditions, "Ready")
        .unwrap_or_else(|| ConditionPlan::new(false, "DryRun", message.clone()));
    let mut fields = previous;
    fields.common.dry_run = Some(dry_run);
    plan.status = Some(StatusPlan {
        secret_pending: None,
        held: true,
        fields,
        ready: Some(ready),
        synced: ConditionPlan::new(false, "DryRun", message),
    });
    plan.requeue = Requeue::After(spec::drift_interval(&f.db.spec, &f.intervals));
    plan.ext.drift_corrected = Vec::new();
    plan.refusal = None;
    plan
}
