//! Creating the cluster: new, from spec.restoreFrom (a cluster snapshot or a point in time, only
//! from a source this namespace owns or was granted), or in place of ours after an out-of-band
//! deletion, by the rule both database kinds follow (`database::rules::absence`).

use kube::ResourceExt;
use kube::runtime::events::EventType;

use super::password::{hash_of, password, password_refused};
use super::{
    ClusterStep, Facts, Plan, Step, desired_tags, drift_interval, global, refuse, status_plan,
};
use crate::database::rules::CLUSTER;
use crate::database::rules::absence::{Absence, Gone, decide};
use crate::database::status::DatabaseStatus;
use crate::database::tenancy;
use crate::dbcluster::{ClusterRestoreFrom, DBClusterSpec, DBClusterStatus};
use crate::managed::plan::{ConditionPlan, Requeue};
use crate::managed::roles::refused_role;
use crate::managed::tags;
use crate::sensitive::Sensitive;

/// The password hash of a cluster restored from spec.restoreFrom until the spec's password is
/// sent: it matches no password, so the first sync sends it.
pub const RESTORED_PASSWORD: &str = "the source's password (restored)";

/// Why a cluster is created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Creation {
    New,
    /// Ours was deleted outside the operator, no snapshot of it exists, and the spec opts in.
    EmptyInPlaceOfDeleted,
    /// Ours was deleted outside the operator: restored from its own snapshot.
    Restore {
        snapshot: String,
        note: String,
    },
    /// spec.restoreFrom.
    FromSpec(ClusterRestoreFrom),
}

/// The source of spec.restoreFrom, in words.
pub fn restore_source(r: &ClusterRestoreFrom) -> String {
    if let Some(s3) = &r.s3 {
        return s3.location();
    }
    if let Some(clone) = &r.clone_of {
        return format!("a copy-on-write clone of DBCluster {}", clone.name);
    }
    match (
        &r.db_cluster_snapshot_identifier,
        &r.source_db_cluster_identifier,
    ) {
        (Some(snapshot), _) => format!("cluster snapshot {snapshot}"),
        (None, Some(source)) => match &r.restore_time {
            Some(t) => format!("cluster {source} at {t}"),
            None => format!("cluster {source} at its latest restorable time"),
        },
        (None, None) => match &r.db_cluster_snapshot_ref {
            Some(r) => format!("DBClusterSnapshot {}", r.name),
            None => "nothing".into(),
        },
    }
}

/// A cluster none was ever observed for: new, or from spec.restoreFrom when its source is this
/// namespace's own or granted to it, as read in this reconcile.
pub(super) fn first(f: &Facts, plan: Plan, spec: DBClusterSpec) -> Plan {
    let Some(r) = spec.restore_from.clone() else {
        return create(f, plan, spec, Creation::New);
    };
    let namespace = f.cluster.namespace().unwrap_or_default();
    if let Some(s3) = &r.s3 {
        // A backup in S3 is reached through its ingestion role, which must be the namespace's.
        let (field, role) = ("restoreFrom.s3.ingestionRole", &s3.ingestion_role);
        if let Some(why) = refused_role(&f.grants.roles, &namespace, field, role) {
            let mut plan = plan;
            plan.requeue = Requeue::After(drift_interval(f));
            return refuse(plan, f, "RoleNotGranted", &why, "NotOwned");
        }
        return create(f, plan, spec, Creation::FromSpec(r));
    }
    if !tenancy::may_restore(f.restore_source.as_ref(), &namespace, &f.grants) {
        let mut plan = plan;
        plan.requeue = Requeue::After(drift_interval(f));
        let message = format!(
            "restoreFrom names {}, which is not found, or is neither this namespace's own nor \
             granted to it (tag {} on it, or the operator's --grant-restore); nothing is restored",
            restore_source(&r),
            crate::crd::RESTORABLE_BY_TAG
        );
        return refuse(plan, f, "RestoreSourceNotOwned", &message, "NotOwned");
    }
    create(f, plan, spec, Creation::FromSpec(r))
}

/// Our cluster (its ARN in status) is gone from RDS: the rule both database kinds follow
/// (`database::rules::absence`). A secondary holds the global database's data: a new one has all
/// of it, and a snapshot of its own would make a standalone cluster.
pub(super) fn absence(f: &Facts, mut plan: Plan, spec: DBClusterSpec) -> Plan {
    let cluster = &f.cluster;
    let identifier = cluster.identifier();
    let arn = (cluster.status.as_ref()).and_then(|s| s.common.arn.clone());
    let gone = Gone {
        noun: CLUSTER,
        identifier: &identifier,
        drift_policy: cluster.spec.policies.drift_policy,
        out_of_band: cluster.spec.deletion.out_of_band_deletion_policy,
        observed_directly: f.observed_directly,
        absent_for: f.absent_for,
        confirm_for: f.intervals.busy,
        arn: arn.as_deref().unwrap_or_default(),
        identity: f.identity.as_ref(),
        remade: global::secondary(f),
    };
    let uid = cluster.metadata.uid.clone().unwrap_or_default();
    let own: Vec<_> = (f.snapshots.iter())
        .filter(|s| tags::owned_by(&s.tags, &uid))
        .collect();
    let decision = decide(&gone, &own);
    plan.requeue = Requeue::After(decision.after(f.intervals.busy, drift_interval(f)));
    match decision {
        Absence::Refuse {
            reason, message, ..
        } => refuse(plan, f, reason, &message, reason),
        Absence::Remake => create(f, plan, spec, Creation::New),
        Absence::Restore { snapshot, note } => {
            create(f, plan, spec, Creation::Restore { snapshot, note })
        }
        Absence::CreateEmpty => create(f, plan, spec, Creation::EmptyInPlaceOfDeleted),
        Absence::Nothing => {
            let message = format!(
                "RDS cluster {identifier} was deleted outside the operator and no snapshot of its \
                 own exists, so nothing is created; restore it, or set outOfBandDeletionPolicy: \
                 RestoreOrCreateEmpty to create an empty cluster"
            );
            let mut plan = refuse(plan, f, "DeletedOutOfBand", &message, "DeletedOutOfBand");
            plan.event(EventType::Warning, "DeletedOutOfBand", "Observe", message);
            plan
        }
    }
}

/// Creates, restores or re-creates the cluster.
fn create(f: &Facts, mut plan: Plan, spec: DBClusterSpec, why: Creation) -> Plan {
    if let Some(message) = global::creation_refused(f) {
        plan.requeue = Requeue::After(drift_interval(f));
        return refuse(plan, f, "SameRegionAsPrimary", &message, "SameRegion");
    }
    // A secondary sends no password: RDS refuses one ("Cannot specify password for cross region
    // replication cluster"); it has the global database's.
    let secondary_of = global::resolved(f).map(|g| g.identifier.clone());
    let password = match secondary_of {
        Some(_) => None,
        None => match password(f, &mut plan) {
            Ok(p) => p,
            Err(problem) => return password_refused(plan, f, problem),
        },
    };
    planned(f, plan, spec, why, (password, secondary_of))
}

/// Plans the creation, with the password to send (none for a secondary of `secondary_of`).
fn planned(
    f: &Facts,
    mut plan: Plan,
    mut spec: DBClusterSpec,
    why: Creation,
    (password, secondary_of): (Option<Sensitive>, Option<String>),
) -> Plan {
    let cluster = &f.cluster;
    let identifier = cluster.identifier();
    // Unset, copyTagsToSnapshot is true: the ownership tags on its snapshots make them this
    // namespace's to restore.
    spec.backups.copy_tags_to_snapshot.get_or_insert(true);
    let (spec, tags) = (Box::new(spec), desired_tags(cluster));
    let previous = cluster.status.clone().unwrap_or_default();
    let mut fields = creating_fields(f, &previous, password.as_ref(), secondary_of.clone());
    let (reason, note) = match why {
        Creation::New | Creation::EmptyInPlaceOfDeleted => {
            let note = creating_note(f, &why);
            let password = password.clone();
            plan.step(Step::Own(ClusterStep::Create {
                identifier,
                spec,
                password,
                tags,
                global: secondary_of,
            }));
            ("Creating", note)
        }
        Creation::Restore { snapshot, note } => {
            // The restored cluster has the snapshot's password, the one last sent: keep its hash,
            // so a password changed since is sent again.
            fields.common.master_user_password_hash =
                previous.common.master_user_password_hash.clone();
            fields.restored_from = Some(format!("cluster snapshot {snapshot}"));
            plan.step(Step::Restore {
                identifier,
                snapshot,
                spec,
                tags,
            });
            ("Restoring", note)
        }
        Creation::FromSpec(r) => {
            let note = format!(
                "restoring RDS cluster {identifier} from {}",
                restore_source(&r)
            );
            fields.restored_from = Some(restore_source(&r));
            // RDS has the source's password: a hash that matches none makes the first sync send
            // the spec's. A backup in S3 is restored with the spec's password: its hash stands.
            if r.s3.is_none() {
                fields.common.master_user_password_hash = Some(RESTORED_PASSWORD.to_owned());
            }
            plan.step(from_spec(identifier, r, (spec, password), tags));
            ("Restoring", note)
        }
    };
    // In place of ours, deleted outside the operator: a warning.
    let type_ = match previous.common.arn.is_some() {
        true => EventType::Warning,
        false => EventType::Normal,
    };
    plan.event(type_, reason, "Create", note);
    let synced = ConditionPlan::new(
        true,
        "Synced",
        "the RDS cluster is being created from the spec",
    );
    plan.status = Some(status_plan(fields, false, synced, true));
    plan
}

/// The status of a cluster being created: ours, with the hash of the password sent (the global
/// database's marker for a secondary, which sends none).
fn creating_fields(
    f: &Facts,
    previous: &DBClusterStatus,
    password: Option<&Sensitive>,
    secondary_of: Option<String>,
) -> DBClusterStatus {
    DBClusterStatus {
        db_cluster_identifier: Some(f.cluster.identifier()),
        common: DatabaseStatus {
            arn: previous.common.arn.clone(),
            master_user_password_hash: match &secondary_of {
                Some(_) => Some(global::GLOBAL_PASSWORD.to_owned()),
                None => hash_of(f, password),
            },
            applied_tag_keys: tags::keys(&f.cluster.spec.tags),
            owned: Some(true),
            ..Default::default()
        },
        status: Some("creating".into()),
        secondary_of,
        ..Default::default()
    }
}

fn creating_note(f: &Facts, why: &Creation) -> String {
    let identifier = f.cluster.identifier();
    let version = (f.cluster.spec.engine_version.as_deref()).unwrap_or("default version");
    match why {
        Creation::EmptyInPlaceOfDeleted => format!(
            "RDS cluster {identifier} was deleted outside the operator and no snapshot of it \
             exists; creating an empty cluster (outOfBandDeletionPolicy RestoreOrCreateEmpty)"
        ),
        _ => {
            let engine = f.cluster.spec.engine.as_str();
            match global::resolved(f) {
                Some(g) => format!(
                    "creating RDS cluster {identifier} ({engine} {version}) in {} as a secondary \
                     of global database {}; no master user, password or database name is sent: \
                     it has the global database's",
                    f.placement.region, g.identifier
                ),
                None => format!("creating RDS cluster {identifier} ({engine} {version})"),
            }
        }
    }
}

/// The restore spec.restoreFrom asks for (a backup in S3 with the spec's password).
fn from_spec(
    identifier: String,
    r: ClusterRestoreFrom,
    (spec, password): (Box<DBClusterSpec>, Option<Sensitive>),
    tags: std::collections::BTreeMap<String, String>,
) -> Step {
    if let Some(s3) = r.s3 {
        let step = ClusterStep::RestoreFromS3 {
            identifier,
            s3,
            spec,
            password,
            tags,
        };
        return Step::Own(step);
    }
    match (
        r.db_cluster_snapshot_identifier,
        r.source_db_cluster_identifier,
    ) {
        (Some(snapshot), _) => Step::Restore {
            identifier,
            snapshot,
            spec,
            tags,
        },
        (None, source) => Step::RestoreToPointInTime {
            identifier,
            source: source.unwrap_or_default(),
            time: r.restore_time,
            spec,
            tags,
        },
    }
}
