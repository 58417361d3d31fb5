//! The pure middle of a DBCluster's reconcile: [`Facts`] in, [`Plan`] out. The same rules as a
//! DBInstance's where they apply: a cluster is created only when none was ever observed for the
//! DBCluster; one that is not ours is never touched; a deletion is decided on a direct read, waits
//! while members exist, and takes a final snapshot unique per deletion; protective drift is kept
//! and only applied tags are removed.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;

use super::observed::ObservedCluster;
use super::{ClusterMember, ClusterRestoreFrom, DBCluster, DBClusterSpec, DBClusterStatus};
use crate::context::Grants;
use crate::crd::has_finalizer;
use crate::database::choices::DeletionPolicy;
use crate::database::parts::Endpoint;
use crate::database::password::{PasswordFacts, PasswordRead};
use crate::database::status::DatabaseStatus;
use crate::database::tenancy::RestoreSource;
use crate::managed::conditions;
use crate::managed::placement::Placement;
use crate::managed::plan::{ConditionPlan, KindPlan, KindStatus, PlannedEvent};
use crate::managed::tags;
use crate::rds_state::{AwsIdentity, PollIntervals, SnapshotInfo};
use crate::sensitive::Sensitive;

pub mod activation;
pub mod alarms;
mod apply;
pub mod blue_green;
mod create;
mod data_api;
mod deletion;
pub mod expiry;
mod global;
pub mod health;
mod modes;
mod password;
mod reboot;
mod roles;
mod secret;
pub mod serving;
pub mod storage;

pub use modes::{Claim, claim, dry_run, observe_only, paused, tagged_owner};

pub use create::{Creation, RESTORED_PASSWORD, restore_source};
pub use global::Global;

pub use super::drift::{ClusterModification, Comparison, compare};
pub use crate::database::secret::SecretStep;

/// Everything a decision needs, gathered by the read step. Not Debug: it holds Secrets.
#[derive(Clone)]
pub struct Facts {
    pub cluster: DBCluster,
    /// The RDS cluster with the identifier, or None when RDS has none.
    pub observed: Option<ObservedCluster>,
    /// Whether `observed` comes from a DescribeDBClusters made in this reconcile.
    pub observed_directly: bool,
    /// The master password, as far as the decision needs it.
    pub password: PasswordFacts,
    /// The connection Secret as it is now (None: absent, or none asked for).
    pub connection_secret: Option<Secret>,
    /// The workloads of the namespace, when the connection Secret's readers are to be rolled or
    /// their rollout followed (`readers::to_list`); None otherwise.
    pub readers: Option<Vec<crate::database::readers::Workload>>,
    /// The rotation rules of the secret RDS manages, when the spec gives some and RDS has the
    /// secret (None: not read; Some(None): rotation off).
    pub secret_rotation: Option<Option<crate::database::parts::SecretRotation>>,
    /// What dbSubnetGroupRef resolves to (None: no reference).
    pub subnet_group: Option<Result<String, String>>,
    /// What dbClusterParameterGroupRef resolves to (None: no reference).
    pub parameter_group: Option<Result<String, String>>,
    /// At deletion: the DBInstances of the namespace that are members of this DBCluster.
    pub referrers: Vec<String>,
    /// But at deletion: the RDS identifiers of the DBInstances of the namespace that name this
    /// DBCluster theirs (`serving`: a cluster they are declared members of waits for one).
    pub declared_members: Vec<String>,
    /// How long direct reads have found no cluster with the identifier (None: found, or not
    /// read directly).
    pub absent_for: Option<Duration>,
    /// The operator's AWS account and region there, when the decision needs them.
    pub identity: Option<AwsIdentity>,
    /// The cluster snapshots of the identifier, when the decision needs them.
    pub snapshots: Vec<SnapshotInfo>,
    /// spec.restoreFrom.dbClusterSnapshotRef or cloneOf, while restoring: the RDS identifier of
    /// the DBClusterSnapshot or the DBCluster once it is Ready, or why it cannot be used yet.
    /// None when not asked.
    pub snapshot_ref: Option<Result<String, String>>,
    /// What spec.restoreFrom's source is, read in this reconcile; None when not asked.
    pub restore_source: Option<RestoreSource>,
    /// What spec.globalClusterRef resolves to (a secondary), or why it cannot be used yet; None
    /// when not asked (no reference, or a deletion).
    pub global: Option<Result<Global, String>>,
    /// At deletion of a member of a global database: its members as RDS lists them now (None:
    /// not read).
    pub global_members: Option<Vec<crate::globalcluster::GlobalMember>>,
    /// The global writer endpoint of the global database the cluster is a member of, as RDS
    /// reports it (None: no member, or not read).
    pub global_endpoint: Option<String>,
    /// The endpoint of a limitless cluster's DB shard group, read in this reconcile (None: no
    /// limitless cluster, or no shard group yet).
    pub shard_group_endpoint: Option<String>,
    /// RDS's pending maintenance actions of the cluster, as the location's listing has them
    /// (fresh); None when the listing is not fresh: nothing is decided on them then.
    pub maintenance: Option<Vec<crate::maintenance::PendingAction>>,
    /// The cluster's blue/green deployment, the clusters it made or left and their members, read
    /// in this reconcile; None when not asked.
    pub blue_green: Option<blue_green::BlueGreenFacts>,
    /// What the operator's settings grant to namespaces.
    pub grants: Grants,
    /// Whether the DBCluster of this namespace the observed cluster's ownership tags name (not
    /// this one) still exists; None when not asked.
    pub owner_alive: Option<bool>,
    /// The namespaces of the other DBClusters that observe a cluster of this identifier.
    pub observers: Vec<String>,
    /// The RDS state of each member instance, as the shared poll of instances last saw it (a
    /// member the operator just rebooted is absent until it is read again).
    pub member_states: BTreeMap<String, String>,
    /// What CloudWatch said of the cluster's instances at the last health poll (None: not read,
    /// or no figures).
    pub health: Option<crate::rds_state::ObservedHealth>,
    /// The cluster's alarms at the observer's last listing, when the spec or status has alarms
    /// (None: not asked, or no listing yet).
    pub alarms: Option<Vec<crate::rds_state::ObservedAlarm>>,
    /// The operator's key for password hashes.
    pub hash_key: Sensitive,
    /// The CA bundle the connection Secret carries (`--ca-bundle`), if any.
    pub ca_bundle: Option<std::sync::Arc<str>>,
    pub intervals: PollIntervals,
    /// Where the cluster lives, as its status is to record it.
    pub placement: Placement,
    /// RFC 3339.
    pub now: String,
}

/// One thing the act step does: a step both database kinds take (`database::step`), or one of a
/// DBCluster's own ([`ClusterStep`]).
pub type Step = crate::database::step::Step<DBClusterSpec, ClusterModification, ClusterStep>;

/// The steps only a DBCluster takes.
#[derive(Clone, Debug, PartialEq)]
pub enum ClusterStep {
    /// CreateDBCluster; a secondary of the global database `global`, with no password.
    Create {
        identifier: String,
        spec: Box<DBClusterSpec>,
        password: Option<Sensitive>,
        tags: BTreeMap<String, String>,
        global: Option<String>,
    },
    /// RestoreDBClusterFromS3: CreateDBCluster's settings, and the backup under a prefix of a
    /// bucket, read as the ingestion role.
    RestoreFromS3 {
        identifier: String,
        s3: crate::database::spec::S3Source,
        spec: Box<DBClusterSpec>,
        password: Option<Sensitive>,
        tags: BTreeMap<String, String>,
    },
    /// RemoveFromGlobalCluster: the cluster (`arn`) leaves global database `global` as a
    /// standalone cluster.
    Detach {
        identifier: String,
        global: String,
        arn: String,
    },
    /// RebootDBInstance of a member (`identifier`) of the cluster, for static parameter changes.
    RebootMember { cluster: String, identifier: String },
    /// DeleteDBInstance of a member (`identifier`) of a cluster a deployment left (`cluster`).
    DeleteMember { cluster: String, identifier: String },
    /// DeleteDBCluster, with a final cluster snapshot when named.
    Delete {
        identifier: String,
        final_snapshot: Option<String>,
    },
    /// Deletes the member DBInstances (by name) of an expired clone, then its DBCluster: the
    /// Kubernetes objects; their deletion follows as for a person's.
    Expire { members: Vec<String> },
    /// EnableHttpEndpoint (true) or DisableHttpEndpoint of the cluster (`arn`).
    HttpEndpoint {
        identifier: String,
        arn: String,
        enable: bool,
    },
    /// StopDBCluster (spec.activation or its schedule).
    Stop { identifier: String },
    /// StartDBCluster (spec.activation or its schedule).
    Start { identifier: String },
}

impl crate::database::step::OwnStep for ClusterStep {
    const MODIFY: &'static str = "Modify";
    const RESTORE: &'static str = "Restore";

    fn name(&self) -> &'static str {
        match self {
            ClusterStep::Create { .. } => "Create",
            ClusterStep::RestoreFromS3 { .. } => "RestoreFromS3",
            ClusterStep::Detach { .. } => "Detach",
            ClusterStep::RebootMember { .. } => "RebootMember",
            ClusterStep::DeleteMember { .. } => "DeleteMember",
            ClusterStep::Delete { .. } => "Delete",
            ClusterStep::Expire { .. } => "Expire",
            ClusterStep::HttpEndpoint { .. } => "HttpEndpoint",
            ClusterStep::Stop { .. } => "Stop",
            ClusterStep::Start { .. } => "Start",
        }
    }
}

/// The RDS cluster a step changes (the shared listing is stale for it after).
pub fn mutates(step: &Step) -> Option<&str> {
    match step {
        Step::Own(ClusterStep::Create { identifier, .. })
        | Step::Own(ClusterStep::RestoreFromS3 { identifier, .. })
        | Step::Restore { identifier, .. }
        | Step::RestoreToPointInTime { identifier, .. }
        | Step::Modify { identifier, .. }
        | Step::AddTags { identifier, .. }
        | Step::RemoveTags { identifier, .. }
        | Step::Own(ClusterStep::Delete { identifier, .. })
        | Step::Own(ClusterStep::Detach { identifier, .. })
        | Step::Own(ClusterStep::Stop { identifier })
        | Step::Own(ClusterStep::HttpEndpoint { identifier, .. })
        | Step::Own(ClusterStep::Start { identifier })
        | Step::BlueGreen { identifier, .. }
        | Step::Own(ClusterStep::DeleteMember {
            cluster: identifier,
            ..
        })
        | Step::ApplyMaintenance(crate::maintenance::ApplyStep { identifier, .. })
        | Step::Role { identifier, .. }
        // What DBClusterMembers shows of the member changes with it.
        | Step::Own(ClusterStep::RebootMember {
            cluster: identifier,
            ..
        }) => Some(identifier),
        _ => None,
    }
}

pub type Plan = KindPlan<Step, KindStatus<DBClusterStatus>>;

/// The one decision of a reconcile.
pub fn plan(f: &Facts) -> Plan {
    if paused(&f.cluster) {
        return modes::paused_plan(f);
    }
    let plan = match f.cluster.metadata.deletion_timestamp.is_some() {
        true => alarms::leftover(f, deletion::plan(f)),
        false => serving::hold(f, apply::plan(f)),
    };
    match dry_run(&f.cluster) {
        true => modes::preview(f, plan),
        false => plan,
    }
}

/// What the read step fetches besides the cluster, given what it observed: the account, region
/// and snapshots when ours is gone (an out-of-band deletion), restoreFrom's source when none was
/// ever observed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reads {
    pub gone: bool,
    pub restore_source: Option<ClusterRestoreFrom>,
    /// The cluster's blue/green deployment.
    pub blue_green: Option<crate::database::blue_green::Read>,
}

pub fn reads(cluster: &DBCluster, observed: Option<&ObservedCluster>) -> Reads {
    if paused(cluster) {
        return Reads::default();
    }
    let status = cluster.status.as_ref();
    let recorded = status.is_some_and(|s| s.common.arn.is_some());
    let owned = status.is_some_and(|s| s.common.owned == Some(true));
    let deleting = cluster.metadata.deletion_timestamp.is_some();
    let absent = observed.is_none() && !deleting;
    Reads {
        gone: absent && recorded && owned,
        restore_source: (cluster.spec.restore_from.clone()).filter(|_| absent && !recorded),
        blue_green: blue_green::read(cluster, observed).filter(|_| !observe_only(cluster)),
    }
}

/// Which master password the read step fetches: none at deletion.
pub fn password_read(cluster: &DBCluster, observed: Option<&ObservedCluster>) -> PasswordRead {
    let spec = &cluster.spec;
    if cluster.metadata.deletion_timestamp.is_some() {
        return PasswordRead::None;
    }
    if spec.password.manage_master_user_password == Some(true) {
        let secret_arn = observed.and_then(|o| o.master_user_secret_arn.clone());
        return PasswordRead::Managed { secret_arn };
    }
    match &spec.password.master_user_password {
        Some(r) => PasswordRead::Referenced {
            name: r.name.clone(),
            key: r.key.clone(),
        },
        None => PasswordRead::Generated {
            name: generated_secret_name(cluster),
        },
    }
}

/// Where another object reads a DBCluster's master password (a secondary's Secret carries its
/// primary's, a custom endpoint's its cluster's): its referenced Secret, RDS's managed secret, or
/// the Secret the operator generated for it.
pub fn credentials(cluster: &DBCluster) -> PasswordRead {
    crate::database::password::credentials_of(&cluster.spec.password, &cluster.name_any())
}

/// How the read step must look at RDS: directly (a destructive step may follow) at deletion.
pub fn direct_read(cluster: &DBCluster) -> bool {
    cluster.metadata.deletion_timestamp.is_some()
        && has_finalizer(&cluster.metadata)
        && deletion_policy(cluster) != DeletionPolicy::Retain
        && !observe_only(cluster)
        && !paused(cluster)
}

pub fn deletion_policy(cluster: &DBCluster) -> DeletionPolicy {
    cluster.spec.deletion.deletion_policy
}

/// The name of the generated password Secret.
pub fn generated_secret_name(cluster: &DBCluster) -> String {
    format!("{}-master-password", cluster.name_any())
}

/// Secrets carry the DBCluster's ownerReference unless the cluster is retained: then no garbage
/// collection (a foreground deletion included) can take its password.
pub fn secrets_owner_referenced(cluster: &DBCluster) -> bool {
    deletion_policy(cluster) != DeletionPolicy::Retain
}

pub(super) fn uid(cluster: &DBCluster) -> String {
    cluster.metadata.uid.clone().unwrap_or_default()
}

/// The tags the cluster should carry: the spec's, then the ownership tags (which win).
pub fn desired_tags(cluster: &DBCluster) -> BTreeMap<String, String> {
    let namespace = cluster.namespace().unwrap_or_default();
    tags::with_owner(
        &cluster.spec.tags,
        &uid(cluster),
        &namespace,
        &cluster.name_any(),
    )
}

pub(super) fn status_plan(
    fields: DBClusterStatus,
    ready: bool,
    synced: ConditionPlan,
    busy: bool,
) -> KindStatus<DBClusterStatus> {
    let ready = match ready {
        true => ConditionPlan::new(true, "Available", "the cluster is available"),
        false => ConditionPlan::new(false, "Unavailable", "the cluster is not available yet"),
    };
    KindStatus {
        fields,
        ready,
        synced,
        busy,
    }
}

/// Reports `reason` without doing anything: Synced False, Ready as RDS shows the cluster, and a
/// Warning Event once.
pub(super) fn refuse(
    mut plan: Plan,
    f: &Facts,
    reason: &str,
    message: &str,
    label: &'static str,
) -> Plan {
    let fields = (f.cluster.status.clone()).unwrap_or_default();
    let available = f.observed.as_ref().is_some_and(|o| o.status == "available");
    let synced = ConditionPlan::new(false, reason, message);
    // A Warning Event when Synced did not already say so, as every kind reports its failures.
    let (_, _, event) = conditions::failed(&fields.reported.conditions, reason, message);
    let after = plan.steps.len();
    plan.events
        .extend(event.map(|e| PlannedEvent { after, ..e }));
    plan.status = Some(status_plan(fields, available, synced, false));
    plan.refusal = Some(label);
    plan
}

pub(super) fn drift_interval(f: &Facts) -> Duration {
    f.intervals.settled
}

/// What the status reports of RDS's cluster.
pub(super) fn observed_fields(f: &Facts, o: &ObservedCluster) -> DBClusterStatus {
    let previous = f.cluster.status.clone().unwrap_or_default();
    DBClusterStatus {
        db_cluster_identifier: Some(o.identifier.clone()),
        common: DatabaseStatus {
            arn: o.arn.clone(),
            engine_version: o.engine_version.clone(),
            endpoint: (o.endpoint.clone()).map(|address| Endpoint {
                address,
                port: o.port.unwrap_or_default(),
            }),
            pending_modified_values: o.pending_modified_values.clone(),
            iam_database_authentication_enabled: o.iam_database_authentication_enabled,
            master_user_secret: crate::database::parts::MasterUserSecret::of(
                o.master_user_secret_arn.as_ref(),
                o.master_user_secret_kms_key_id.as_ref(),
                o.master_user_secret_status.as_ref(),
            ),
            owned: Some(true),
            ..previous.common
        },
        db_cluster_resource_id: o.resource_id.clone().or(previous.db_cluster_resource_id),
        status: Some(o.status.clone()),
        reader_endpoint: o.reader_endpoint.clone(),
        members: (o.members.iter())
            .map(|m| ClusterMember {
                db_instance_identifier: m.identifier.clone(),
                is_cluster_writer: m.writer,
                // Missing from the last listing (just changed, read again directly first): as
                // it was.
                state: (f.member_states.get(&m.identifier).cloned()).or_else(|| {
                    (previous.members.iter())
                        .find(|p| p.db_instance_identifier == m.identifier)
                        .and_then(|p| p.state.clone())
                }),
            })
            .collect(),
        global_cluster_identifier: o.global_cluster.clone(),
        secondary_of: global::secondary_of(f, o),
        expires_at: expiry::status_value(f),
        ..previous
    }
}

#[cfg(test)]
mod tests;
