//! Rules for blue/green upgrades (upgradePolicy BlueGreen): which changes a deployment carries
//! instead of a ModifyDBInstance (those RDS applies with a disruption: engine version, parameter
//! group, class, storage type), its creation (once none is found, when nothing else is to be
//! sent), the approval of its switchover (spec.switchover, the annotation, or switchoverPolicy
//! Auto, and only when RDS reports it AVAILABLE), what is reported while it runs or after it
//! failed (nothing is deleted), the old instance kept after the switchover for the retention the
//! spec sets, and what a deletion of the DBInstance does with a deployment (`cleanup`).

use crate::database::blue_green::{self as shared, Call};
use crate::database::rules::INSTANCE;
use crate::database::rules::blue_green::{self as rules, Green, Held, Report, Source, Subject};
use crate::dbinstance::drift::{Comparison, Diff};
use crate::dbinstance::{BlueGreenStatus, DBInstanceStatus, DeletionPolicy, Endpoint, FieldDrift};
use crate::rds_state::{BlueGreenTargets, ObservedDeployment, ObservedInstance};
use kube::runtime::events::EventType;

use super::dry_run::{Disruption, disruption_of};
use super::spec::{self, owned_by};
use super::status::observed_plan;
use super::types::{BlueGreenRead, Facts, InstanceStep, Plan, Requeue, Step};

pub use shared::SWITCHOVER_ANNOTATION;

/// The fields a deployment can carry.
const FIELDS: &[&str] = &[
    "engineVersion",
    "dbParameterGroupName",
    "dbInstanceClass",
    "storageType",
];

/// Whether a deployment carries this difference: one of its fields, changed with a disruption
/// (the dry run's table).
fn carries(d: &Diff, multi_az: bool) -> bool {
    FIELDS.contains(&d.field) && disruption_of(d, multi_az) != Disruption::None
}

/// What to read: the deployment status records, or one of this instance when the spec asks for a
/// change a deployment would carry.
pub fn reads(
    db: &crate::dbinstance::DBInstance,
    observed: Option<&ObservedInstance>,
) -> Option<BlueGreenRead> {
    let recorded = (db.status.as_ref().and_then(|s| s.blue_green.as_ref())).map(|r| {
        (
            &r.deployment,
            r.green_instance.clone(),
            r.old_instance.clone(),
        )
    });
    // A parameter group by reference is resolved after the read: looked for each time.
    let wanted = shared::blue_green(&db.spec.upgrade)
        && observed.is_some_and(|o| {
            !wanted_changes(db, o).is_empty() || db.spec.db_parameter_group_ref.is_some()
        });
    shared::read(recorded, observed.and_then(|o| o.arn.as_deref()), wanted)
}

/// The differences a deployment would carry.
fn wanted_changes(db: &crate::dbinstance::DBInstance, observed: &ObservedInstance) -> Vec<Diff> {
    let tags = spec::tags_of(db);
    let managed = (db.status.as_ref()).map_or(&[][..], |s| &s.common.applied_tag_keys[..]);
    let c = crate::dbinstance::drift::compare(&db.spec, observed, &tags, managed, false);
    let multi_az = observed.multi_az == Some(true);
    (c.diffs.into_iter())
        .filter(|d| carries(d, multi_az))
        .collect()
}

/// Takes out of the comparison the differences a deployment carries: under upgradePolicy
/// BlueGreen they are never sent by a ModifyDBInstance, whether the spec was edited or RDS drifted
/// (a failed CreateBlueGreenDeployment, retried, never turns into the in-place change with its
/// outage).
pub(super) fn carried(f: &Facts, comparison: &mut Comparison) -> Vec<Diff> {
    if !shared::blue_green(&f.db.spec.upgrade) {
        return Vec::new();
    }
    let multi_az = (f.observed.as_ref()).is_some_and(|o| o.multi_az == Some(true));
    let fields: Vec<&'static str> = (comparison.diffs.iter())
        .filter(|d| carries(d, multi_az))
        .map(|d| d.field)
        .collect();
    fields
        .into_iter()
        .filter_map(|field| comparison.take(field))
        .collect()
}

/// The blue/green rules of our instance, before its sync: a deployment RDS has is reported and
/// acted on; changes it would carry make one when nothing else is to be sent. Whether they
/// decided (the plan then holds it); `fields.blueGreen` says what is known either way.
pub(super) fn decided(
    f: &Facts,
    plan: &mut Plan,
    observed: &ObservedInstance,
    carried: &[Diff],
    fields: &mut DBInstanceStatus,
    in_sync_otherwise: bool,
) -> bool {
    let facts = f.blue_green.clone().unwrap_or_default();
    let previous = f.db.status.as_ref().and_then(|s| s.blue_green.as_ref());
    match &facts.deployment {
        Some(d) => {
            fields.blue_green = Some(status_of(d, previous, facts.green.as_ref(), &f.now));
            let held =
                rules::deployment(plan, &subject(f, previous, fields.blue_green.as_ref()), d);
            match held {
                Held::Report(r) => return report(f, plan, fields, r),
                // Only a completed deployment lets the sync go on.
                Held::Completed if retention(f, plan, d, fields, facts.old.as_ref()) => {
                    return true;
                }
                Held::Completed => {}
            }
        }
        // The deployment is gone: its record stays while its old instance does.
        None => {
            let kept = previous.filter(|p| p.old_instance.is_some() && facts.old.is_some());
            fields.blue_green = kept.cloned();
        }
    }
    if carried.is_empty() || !in_sync_otherwise {
        return false;
    }
    let carried: Vec<FieldDrift> = carried.iter().map(FieldDrift::from).collect();
    let source = Source {
        status: &observed.status,
        unsupported: unsupported(&f.db),
    };
    // A deployment is made only once none was found, on a read of this reconcile.
    let who = subject(f, previous, fields.blue_green.as_ref());
    match rules::refusal(&who, f.blue_green.is_some(), source, &carried) {
        Some(r) => report(f, plan, fields, r),
        None => create(f, plan, observed, &carried, fields),
    }
}

/// Our instance as the shared rules see it, with the deployment status recorded before this
/// reconcile and the one it is to record.
fn subject<'a>(
    f: &'a Facts,
    previous: Option<&'a BlueGreenStatus>,
    current: Option<&'a BlueGreenStatus>,
) -> Subject<'a> {
    let recorded = (
        previous.map(|p| &p.deployment),
        current.map(|c| (&c.deployment, c.old_instance.as_deref())),
    );
    let (o, who) = (&f.db, (f.db.identifier(), INSTANCE));
    let lag = f.blue_green.as_ref().and_then(|b| b.green_lag_seconds);
    Subject::new(who, &o.spec.upgrade, &o.metadata, recorded).lagging(lag)
}

/// Why RDS would refuse a deployment of this instance (SourceDatabaseNotSupportedFault): its
/// engine ("Supported Regions and DB engines for Amazon RDS Blue/Green Deployments") or a master
/// password RDS manages ("Limitations and considerations for Amazon RDS blue/green deployments").
fn unsupported(db: &crate::dbinstance::DBInstance) -> Option<&'static str> {
    let engine = db.spec.engine.as_str();
    if ["oracle", "sqlserver", "db2"]
        .iter()
        .any(|e| engine.starts_with(e))
    {
        Some("RDS for Oracle, SQL Server and Db2 have no blue/green deployments")
    } else if db.spec.password.manage_master_user_password == Some(true) {
        Some("blue/green deployments do not support a master password managed in Secrets Manager")
    } else {
        None
    }
}

/// One CreateBlueGreenDeployment with the changes as its targets.
fn create(
    f: &Facts,
    plan: &mut Plan,
    observed: &ObservedInstance,
    carried: &[FieldDrift],
    fields: &mut DBInstanceStatus,
) -> bool {
    let db = &f.db;
    let wants = |field: &str| carried.iter().any(|d| d.field == field);
    let targets = BlueGreenTargets {
        engine_version: db
            .spec
            .engine_version
            .clone()
            .filter(|_| wants("engineVersion")),
        db_parameter_group_name: (db.spec.db_parameter_group_name.clone())
            .filter(|_| wants("dbParameterGroupName")),
        db_cluster_parameter_group_name: None,
        db_instance_class: Some(db.spec.db_instance_class.clone())
            .filter(|_| wants("dbInstanceClass")),
        storage_type: (db.spec.storage_type.map(|t| t.as_str().to_owned()))
            .filter(|_| wants("storageType")),
    };
    let green = Green {
        source: observed.arn.clone().unwrap_or_default(),
        targets,
        tags: spec::tags_of(db),
        copy: "a green copy",
    };
    let named = (
        &db.identifier()[..],
        db.metadata.generation.unwrap_or_default(),
    );
    let (deployment, r) = rules::create(plan, named, green, carried);
    fields.blue_green = Some(BlueGreenStatus {
        deployment,
        ..Default::default()
    });
    report(f, plan, fields, r)
}

/// After the switchover: the old instance is deleted once spec.oldInstanceRetention has passed,
/// as deletionPolicy says, decided on its direct read; then the deployment.
fn retention(
    f: &Facts,
    plan: &mut Plan,
    d: &ObservedDeployment,
    fields: &DBInstanceStatus,
    old: Option<&ObservedInstance>,
) -> bool {
    let db = &f.db;
    let switched =
        (fields.blue_green.as_ref()).and_then(|b| b.deployment.switched_over_at.as_deref());
    if !shared::retention_due(db.spec.old_instance_retention, switched, &f.now)
        || spec::deletion_policy(db) == DeletionPolicy::Retain
    {
        return false;
    }
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    if let Some(o) = old.filter(|o| owned_by(o, uid) && o.status != "deleting") {
        plan.step(delete_leftover(f, o));
    }
    plan.step(Step::BlueGreen {
        identifier: db.identifier(),
        call: Call::Delete {
            deployment: d.identifier.clone(),
        },
    });
    let note = format!(
        "the retention of the old instance of blue/green deployment {} has passed: deleting it as \
         deletionPolicy says, then the deployment",
        d.identifier
    );
    plan.event(EventType::Normal, "OldInstanceDeleting", "Update", note);
    plan.requeue = Requeue::After(f.intervals.busy);
    false
}

/// DeleteDBInstance of an instance a deployment left (green before the switchover, the old one
/// after it), through the final snapshot rule of deletionPolicy.
pub(super) fn delete_leftover(f: &Facts, o: &ObservedInstance) -> Step {
    let final_snapshot = shared::leftover_snapshot(
        spec::deletion_policy(&f.db),
        f.db.metadata.deletion_timestamp.is_some(),
        &o.identifier,
        &f.db.metadata,
        &f.now,
    );
    Step::Own(InstanceStep::DeleteInstance {
        identifier: o.identifier.clone(),
        final_snapshot,
        delete_automated_backups: f.db.spec.delete_automated_backups == Some(true),
    })
}

/// At deletion of the DBInstance: its deployment is deleted first (never with its target), and
/// the instances it left through the final snapshot rule, before the instance itself. None: the
/// deployment has nothing (more) to do; deletionPolicy Retain keeps all of it.
pub(super) fn cleanup(f: &Facts) -> Option<Plan> {
    let facts = f.blue_green.as_ref()?;
    if spec::deletion_policy(&f.db) == DeletionPolicy::Retain || !f.observed_directly {
        return None;
    }
    let mut plan = Plan::new(Requeue::After(f.intervals.busy));
    if let Some(d) = &facts.deployment {
        rules::delete_first(&mut plan, &subject(f, None, None), d);
        return Some(plan);
    }
    let uid = f.db.metadata.uid.as_deref().unwrap_or_default();
    let leftovers = [&facts.green, &facts.old].into_iter().flatten();
    for o in leftovers.filter(|o| owned_by(o, uid) && o.status != "deleting") {
        let step = delete_leftover(f, o);
        plan.step(step);
        let note = format!("deleting {}, left by a blue/green deployment", o.identifier);
        plan.event(EventType::Normal, "Deleting", "Delete", note);
    }
    (!plan.steps.is_empty()).then_some(plan)
}

/// The status of a deployment RDS reports, with what the operator recorded of it.
fn status_of(
    d: &ObservedDeployment,
    previous: Option<&BlueGreenStatus>,
    green: Option<&ObservedInstance>,
    now: &str,
) -> BlueGreenStatus {
    let completed = d.status == "SWITCHOVER_COMPLETED";
    BlueGreenStatus {
        deployment: shared::status(d, previous.map(|p| &p.deployment), now),
        green_instance: (d.target.as_deref())
            .map(shared::identifier_of)
            .filter(|_| !completed),
        green_endpoint: green
            .filter(|_| !completed)
            .and_then(|g| match (&g.address, g.port) {
                (Some(address), Some(port)) => Some(Endpoint {
                    address: address.clone(),
                    port,
                }),
                _ => None,
            }),
        old_instance: completed.then(|| shared::identifier_of(&d.source)),
    }
}

/// Synced False with the rules' reason (Ready follows RDS: blue serves meanwhile). The plan holds.
fn report(f: &Facts, plan: &mut Plan, fields: &DBInstanceStatus, r: Report) -> bool {
    plan.requeue = Requeue::After(r.after(&f.intervals));
    plan.status = Some(observed_plan(fields.clone(), false, &r.reason, r.message));
    true
}
