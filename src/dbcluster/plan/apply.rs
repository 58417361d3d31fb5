//! A DBCluster that is not being deleted: create it when none was ever observed, never touch one
//! that is not ours, and bring ours to the spec (drift, tags, password rotation, the connection
//! Secret).

use kube::ResourceExt;
use kube::runtime::events::EventType;

use super::super::observed::ObservedCluster;
use super::expiry::Expiry;
use super::password::{hash_of, managed_password, password, password_refused};
use super::{
    ClusterModification, Comparison, Facts, Plan, Step, compare, create, desired_tags,
    drift_interval, generated_secret_name, global, modes, refuse, secrets_owner_referenced,
    status_plan, uid,
};
use crate::crd::has_finalizer;
use crate::database::choices::{AdoptionPolicy, DriftPolicy};
use crate::database::connection;
use crate::database::password::password_owner;
use crate::dbcluster::{DBCluster, DBClusterSpec, DBClusterStatus};
use crate::managed::fights::{self, FIGHT_LIMIT};
use crate::managed::plan::{ConditionPlan, KindPlan, Requeue};
use crate::managed::tags;
use crate::sensitive::Sensitive;

/// Why the spec cannot be used as it is (InvalidSpec): an identifier (metadata.name's) RDS would
/// refuse, a connection Secret template that does not render, or a password Secret in another
/// namespace.
fn invalid_spec(cluster: &DBCluster) -> Option<String> {
    if cluster.spec.db_cluster_identifier.is_none()
        && let Some(why) = crate::database::identifier::problem(
            "metadata.name (the default dbClusterIdentifier)",
            cluster.metadata.name.as_deref().unwrap_or_default(),
        )
    {
        return Some(format!("{why}; set dbClusterIdentifier"));
    }
    if let Some(c) = &cluster.spec.connection.connection_secret
        && let Err(e) = connection::validate_cluster_templates(&c.extra_keys)
    {
        return Some(e.to_string());
    }
    let namespace = cluster.namespace().unwrap_or_default();
    let password = cluster.spec.password.master_user_password.as_ref();
    let ns = password.and_then(|r| r.namespace.as_ref())?;
    (*ns != namespace).then(|| {
        format!(
            "masterUserPassword refers to a Secret in namespace {ns:?}; only the DBCluster's own \
             namespace {namespace:?} is allowed"
        )
    })
}

pub(super) fn plan(f: &Facts) -> Plan {
    // An expiring clone is looked at again by its expiry, whatever else the pass decided.
    match super::expiry::expiry(f) {
        Expiry::Expired(plan) => *plan,
        Expiry::In(left) => {
            let mut plan = unexpired(f);
            plan.look_again_within(left);
            plan
        }
        Expiry::Never => unexpired(f),
    }
}

fn unexpired(f: &Facts) -> Plan {
    let cluster = &f.cluster;
    let mut plan = KindPlan::new(Requeue::After(f.intervals.busy));
    if let Some(message) = invalid_spec(cluster) {
        plan.requeue = Requeue::AwaitChange;
        return refuse(plan, f, "InvalidSpec", &message, "InvalidSpec");
    }
    if !has_finalizer(&cluster.metadata) {
        plan.step(Step::AddFinalizer);
    }
    let mut spec = cluster.spec.clone();
    // A reference waits for what it names; resolved, it reads as the plain name field.
    let resolved = resolve(f, &mut spec);
    if let Err(why) = resolved {
        plan.requeue = Requeue::After(drift_interval(f));
        return refuse(
            plan,
            f,
            "ReferencesUnresolved",
            &why,
            "ReferencesUnresolved",
        );
    }
    let identifier = cluster.identifier();
    let recorded = (cluster.status.as_ref()).is_some_and(|s| s.common.arn.is_some());
    let owned = (cluster.status.as_ref()).is_some_and(|s| s.common.owned == Some(true));
    match &f.observed {
        None if modes::observe_only(cluster) => {
            plan.requeue = Requeue::After(drift_interval(f));
            let message = format!(
                "RDS has no cluster {identifier}; managementPolicy is ObserveOnly, so nothing is \
                 created"
            );
            refuse(plan, f, "NotFound", &message, "NotFound")
        }
        None if recorded && owned => create::absence(f, plan, spec),
        None if !recorded
            && cluster.spec.policies.adoption_policy == Some(AdoptionPolicy::Adopt) =>
        {
            plan.requeue = Requeue::After(drift_interval(f));
            let message = format!(
                "adoptionPolicy is Adopt and there is no RDS cluster named {identifier} to adopt; \
                 the operator creates none (AdoptOrCreate would)"
            );
            refuse(plan, f, "NothingToAdopt", &message, "NothingToAdopt")
        }
        None if recorded => {
            plan.requeue = Requeue::After(drift_interval(f));
            let message =
                format!("RDS has no cluster {identifier}; nothing is created in its place");
            refuse(plan, f, "NotFound", &message, "NotFound")
        }
        None => create::first(f, plan, spec),
        Some(o) if modes::observe_only(cluster) && tags::owned_by(&o.tags, &uid(cluster)) => {
            modes::observe(f, plan, o)
        }
        Some(o) if !tags::owned_by(&o.tags, &uid(cluster)) => match modes::claim(f, o) {
            modes::Claim::Observe => modes::observe(f, plan, o),
            modes::Claim::Adopt => modes::adopt(f, plan, o),
            modes::Claim::Refused(reason, message) => {
                plan.requeue = Requeue::After(drift_interval(f));
                refuse(plan, f, reason, &message, reason)
            }
        },
        Some(o) => match sync(f, plan, &spec, o) {
            refused if refused.refusal.is_some() => refused,
            plan => {
                let plan = super::data_api::plan(f, super::roles::plan(f, plan, o), o);
                let plan = super::activation::plan(f, plan, o);
                let plan = super::alarms::plan(f, plan, o);
                super::health::report(f, plan, o)
            }
        },
    }
}

fn sync(f: &Facts, mut plan: Plan, spec: &DBClusterSpec, o: &ObservedCluster) -> Plan {
    let cluster = &f.cluster;
    let mut fields = super::observed_fields(f, o);
    let available = o.status == "available";
    plan.requeue = Requeue::After(f.intervals.after(&o.status));
    let password = match password(f, &mut plan) {
        Ok(p) => p,
        Err(problem) => return password_refused(plan, f, problem),
    };
    let sent_hash = fields.common.master_user_password_hash.clone();
    // A secondary's password is the primary's, sent (and rotated) there.
    let hash = hash_of(f, password.as_ref()).filter(|_| !global::secondary(f));
    let rotate = hash.is_some() && sent_hash.is_some() && hash != sent_hash;
    let edited = (cluster.status.as_ref()).and_then(|s| s.reported.observed_generation)
        != cluster.metadata.generation;
    let Comparison {
        mut modification,
        kept,
        refused,
    } = compare(spec, o, edited);
    modification.rotate_password = rotate;
    let carried = super::blue_green::carried(f, o, &mut modification);
    let mut plan = match refusals(f, plan, refused, &modification) {
        Ok(plan) => plan,
        Err(refused) => return *refused,
    };
    if global::detach_removed(f, &mut plan, &fields, o) {
        let message = "detaching the cluster from its global database (globalClusterRef removed)";
        let synced = ConditionPlan::new(true, "Synced", message);
        plan.requeue = Requeue::After(f.intervals.busy);
        plan.status = Some(status_plan(fields, true, synced, true));
        return plan;
    }
    if !available {
        return busy(plan, fields, o);
    }
    let in_sync = modification.in_sync();
    let decided = (spec, o);
    if super::blue_green::decided(f, &mut plan, decided, &carried, &mut fields, in_sync) {
        return plan;
    }
    let synced = changes(
        f,
        &mut plan,
        &mut fields,
        (modification, kept),
        edited,
        password.as_ref(),
    );
    if sent_hash.is_none() || rotate {
        fields.common.master_user_password_hash = hash;
    }
    let modifying = plan.steps.iter().any(|s| matches!(s, Step::Modify { .. }));
    let synced = match modifying {
        true => synced,
        false => super::reboot::plan(f, &mut plan, o).unwrap_or(synced),
    };
    maintenance(f, &mut plan, &mut fields, o);
    retag(&mut plan, &mut fields, cluster, o);
    password_secret_owner(f, &mut plan);
    let password = password.or(managed_password(f));
    let pending =
        match super::secret::connection_secret(f, &mut plan, &mut fields, o, password.as_ref()) {
            Ok(pending) => pending,
            Err(message) => return super::secret::conflict(plan, f, &message),
        };
    plan.status = Some(super::secret::status_with_secret(
        fields, true, synced, pending,
    ));
    plan
}

/// What the spec asks that is refused before any call: a change RDS cannot make (until the spec
/// changes), or a second switch to I/O-Optimized within RDS's 30 days (looked at each drift
/// interval, and at once when the spec changes).
fn refusals(
    f: &Facts,
    mut plan: Plan,
    refused: Option<String>,
    modification: &ClusterModification,
) -> Result<Plan, Box<Plan>> {
    if let Some(why) = refused {
        plan.requeue = Requeue::AwaitChange;
        let refused = refuse(plan, f, "UnsupportedChange", &why, "UnsupportedChange");
        return Err(Box::new(refused));
    }
    if let Some((why, wait)) = super::storage::too_soon(f, modification) {
        plan.requeue = Requeue::After(wait.min(drift_interval(f)));
        let reason = "StorageSwitchTooSoon";
        return Err(Box::new(refuse(plan, f, reason, &why, reason)));
    }
    Ok(plan)
}

/// RDS is busy with the cluster: nothing more is sent until it is available.
fn busy(mut plan: Plan, fields: DBClusterStatus, o: &ObservedCluster) -> Plan {
    let message = format!("RDS reports the cluster {}", o.status);
    let synced = ConditionPlan::new(true, "Synced", message);
    plan.status = Some(status_plan(fields, false, synced, true));
    plan
}

/// Status lists RDS's pending maintenance of the cluster; the policy's
/// ApplyPendingMaintenanceAction calls follow (`maintenance::plan`, the rules shared with
/// DBInstance).
fn maintenance(f: &Facts, plan: &mut Plan, fields: &mut DBClusterStatus, o: &ObservedCluster) {
    let cluster = &f.cluster;
    let resource = crate::maintenance::Resource {
        identifier: o.identifier.clone(),
        arn: o.arn.as_deref(),
        status: &o.status,
        annotations: cluster.metadata.annotations.as_ref(),
        policy: cluster.spec.maintenance.maintenance_policy,
        listed: f.maintenance.as_ref(),
        previous: Some(&fields.common.pending_maintenance_actions),
        may_act: true,
        held: None,
    };
    let (listed, steps) = crate::maintenance::plan(&resource);
    fields.common.pending_maintenance_actions = listed;
    for (step, note) in steps {
        plan.step(Step::ApplyMaintenance(step));
        plan.event(EventType::Normal, "Maintenance", "Update", note);
    }
    let managed = cluster.spec.password.manage_master_user_password == Some(true);
    let has_secret = o.master_user_secret_arn.is_some();
    let last = &mut fields.common.last_rotate_request;
    let (annotations, available) = (
        cluster.metadata.annotations.as_ref(),
        o.status == "available",
    );
    let asked = crate::database::password::rotate_now(
        annotations,
        (managed, has_secret, available),
        last.as_deref(),
    );
    crate::database::password::plan_rotate_now(plan, &o.identifier, asked, last);
    let wanted = cluster.spec.password.master_user_secret_rotation.as_ref();
    let read = f.secret_rotation.as_ref().map(Option::as_ref);
    let secret = (
        wanted.filter(|_| managed),
        o.master_user_secret_arn.as_deref(),
    );
    crate::database::password::plan_secret_rotation(plan, secret, read);
}

/// The spec with its references (dbSubnetGroupRef, dbClusterParameterGroupRef, and while
/// restoring restoreFrom.dbClusterSnapshotRef; a secondary's globalClusterRef is only waited for) replaced by the RDS names they resolve to; Err: why
/// one cannot be used yet.
fn resolve(f: &Facts, spec: &mut DBClusterSpec) -> Result<(), String> {
    if let Some(global) = &f.global {
        global.clone()?;
    }
    if let (Some(resolved), Some(r)) = (&f.snapshot_ref, &mut spec.restore_from) {
        let identifier = resolved.clone()?;
        match r.clone_of.is_some() {
            // A clone is a restore of the source at its latest restorable time.
            true => {
                r.source_db_cluster_identifier = Some(identifier);
                r.use_latest_restorable_time = Some(true);
            }
            false => {
                r.db_cluster_snapshot_identifier = Some(identifier);
                r.db_cluster_snapshot_ref = None;
            }
        }
    }
    if let Some(group) = &f.subnet_group {
        spec.network.db_subnet_group_name = Some(group.clone()?);
    }
    if let Some(group) = &f.parameter_group {
        spec.db_cluster_parameter_group_name = Some(group.clone()?);
    }
    Ok(())
}

/// Plans the ModifyDBCluster that puts right what differs: always after an edit of the spec or
/// for a rotated password, otherwise unless driftPolicy is Report (then only reported). The
/// Synced condition it makes.
fn changes(
    f: &Facts,
    plan: &mut Plan,
    fields: &mut DBClusterStatus,
    (modification, kept): (ClusterModification, Option<String>),
    edited: bool,
    password: Option<&Sensitive>,
) -> ConditionPlan {
    let identifier = f.cluster.identifier();
    // An adopted cluster's differences are reported until the spec is next changed.
    let adopted_now = (f.cluster.status.as_ref()).and_then(|s| s.common.adopted_generation)
        == f.cluster.metadata.generation
        && f.cluster.metadata.generation.is_some();
    let correct =
        edited || (f.cluster.spec.policies.drift_policy == DriftPolicy::Correct && !adopted_now);
    if modification.in_sync() {
        return match kept {
            Some(kept) => ConditionPlan::new(true, "ProtectionKept", kept),
            None => ConditionPlan::new(true, "Synced", "the RDS cluster matches the spec"),
        };
    }
    let mut modification = modification;
    if !correct && !modification.rotate_password {
        let message = format!(
            "the RDS cluster differs from the spec ({}); driftPolicy is Report",
            modification.field_list()
        );
        return ConditionPlan::new(true, "Drifted", message);
    }
    if !correct {
        // A new password in the Secret is the user's word, whatever driftPolicy says.
        modification = ClusterModification {
            apply_immediately: true,
            rotate_password: true,
            ..Default::default()
        };
    }
    let fighting = match edited {
        true => Vec::new(),
        false => stop_fights(f, fields, &mut modification),
    };
    if modification.in_sync() {
        let message = format!(
            "stopped correcting {}: it was changed back outside the operator {FIGHT_LIMIT} times \
             within an hour; the spec's next change applies it again",
            fighting.join(", ")
        );
        return ConditionPlan::new(true, "Fighting", message);
    }
    let changed = modification.field_list();
    fields.last_drift = Some(format!("{}: {changed}", f.now));
    if super::storage::switches_to_io_optimized(&modification) {
        fields.io_optimized_since = Some(f.now.clone());
    }
    let rotate = modification.rotate_password;
    plan.step(Step::Modify {
        identifier: identifier.clone(),
        modification: Box::new(modification),
        password: password.cloned().filter(|_| rotate),
    });
    let note = format!("sent changes to RDS cluster {identifier}: {changed}");
    plan.event(EventType::Normal, "Updating", "Update", note);
    plan.requeue = Requeue::After(f.intervals.busy);
    ConditionPlan::new(true, "Synced", format!("changes sent to RDS: {changed}"))
}

/// Leaves the fields corrected [`FIGHT_LIMIT`] times within the hour at this generation, and
/// records this correction of the others (a drift correction, not an edit of the spec). Returns
/// the fields left.
fn stop_fights(
    f: &Facts,
    fields: &mut DBClusterStatus,
    modification: &mut ClusterModification,
) -> Vec<&'static str> {
    let generation = f.cluster.metadata.generation;
    let mut records = fights::current(&fields.common.corrections, generation);
    let drifted = (modification.fields().into_iter()).filter(|f| *f != "masterUserPassword");
    let fighting = fights::fighting(&records, drifted, &f.now);
    for field in &fighting {
        modification.leave(field);
    }
    let corrected = (modification.fields().into_iter()).filter(|f| *f != "masterUserPassword");
    fights::record(&mut records, corrected, generation, &f.now);
    fields.common.corrections = records;
    fighting
}

/// The generated password Secret follows the deletion policy, as the connection Secret does.
fn password_secret_owner(f: &Facts, plan: &mut Plan) {
    let name = || generated_secret_name(&f.cluster);
    let owner_reference = secrets_owner_referenced(&f.cluster);
    if let Some(step) = password_owner(&f.password, name, owner_reference) {
        plan.step(Step::Secret(step));
    }
}

/// The tag calls that bring RDS's tags to the desired ones, keeping to the keys the operator
/// manages (the ownership tags and those it applied from the spec).
fn retag(plan: &mut Plan, fields: &mut DBClusterStatus, cluster: &DBCluster, o: &ObservedCluster) {
    let managed = (cluster.status.as_ref()).map_or(&[][..], |s| &s.common.applied_tag_keys[..]);
    let (add, remove) = tags::changes(&o.tags, &desired_tags(cluster), managed);
    let (identifier, arn) = (o.identifier.clone(), o.arn.clone().unwrap_or_default());
    if !add.is_empty() {
        let (identifier, arn) = (identifier.clone(), arn.clone());
        plan.step(Step::AddTags {
            identifier,
            arn,
            tags: add,
        });
    }
    if !remove.is_empty() {
        plan.step(Step::RemoveTags {
            identifier,
            arn,
            keys: remove,
        });
    }
    fields.common.applied_tag_keys = tags::applied(&cluster.spec.tags, &o.tags, managed);
}
