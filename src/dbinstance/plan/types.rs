//! The values the plan takes and gives: [`Facts`] in, [`Plan`] out, and what they are made of.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;

use crate::dbinstance::drift::Modification;
use crate::dbinstance::{DBInstance, DBInstanceSpec, DBInstanceStatus, RestoreFrom};
use crate::rds_state::{
    AwsIdentity, ObservedAlarm, ObservedHealth, ObservedInstance, PollIntervals, SnapshotInfo,
};

use super::tenancy::{Grants, ReplicaSource, RestoreSource};

pub use crate::database::secret::SecretStep;
pub use crate::managed::plan::{ConditionPlan, PlannedEvent, Requeue};

/// Everything a decision needs, gathered by the read step (`crate::dbinstance::read`). Not Debug: it holds
/// Secrets.
#[derive(Clone)]
pub struct Facts {
    /// The DBInstance as the watch delivered it.
    pub db: DBInstance,
    /// The RDS instance with the DBInstance's identifier, or None when RDS has none.
    pub observed: Option<ObservedInstance>,
    /// Whether `observed` comes from a DescribeDBInstances made in this reconcile (not the shared
    /// poll's snapshot).
    pub observed_directly: bool,
    /// How long direct reads have found no instance with the identifier (None: found, or not
    /// read directly).
    pub absent_for: Option<Duration>,
    /// Whether RDS reports any instance of the account and region as renaming.
    pub rename_in_progress: bool,
    /// The operator's AWS account and region, when the decision needs them.
    pub identity: Option<AwsIdentity>,
    /// The snapshots of the identifier, when the decision needs them.
    pub snapshots: Vec<SnapshotInfo>,
    /// The master password, as far as the read step needed to know it.
    pub password: PasswordFacts,
    /// The connection Secret as it is now (None: absent, or the spec asks for none).
    pub connection_secret: Option<Secret>,
    /// The workloads of the namespace, when the connection Secret's readers are to be rolled or
    /// their rollout followed (`readers::to_list`); None otherwise.
    pub readers: Option<Vec<crate::database::readers::Workload>>,
    /// The rotation rules of the secret RDS manages, when the spec gives some and RDS has the
    /// secret (None: not read; Some(None): rotation off).
    pub secret_rotation: Option<Option<crate::database::parts::SecretRotation>>,
    /// At deletion: the Secrets the operator may have written for this DBInstance (generated
    /// password, connection Secret) that exist, metadata only; the plan keeps those it owns.
    pub release_candidates: Vec<Secret>,
    /// The DBInstances of the namespace that use a Secret named like this one's connection Secret
    /// (as the watch knows them; this one among them).
    pub peers: Vec<DBInstance>,
    /// Whether the DBInstance the observed instance's ownership tags name (another one of this
    /// namespace) still exists; None when not asked.
    pub owner_alive: Option<bool>,
    /// What the spec's references (dbSubnetGroupRef) resolve to: the RDS name of a Ready group,
    /// or why it cannot be used yet. None when the spec refers to nothing.
    pub subnet_group: Option<Result<String, String>>,
    /// The same for dbParameterGroupRef.
    pub parameter_group: Option<Result<String, String>>,
    /// The same for optionGroupRef.
    pub option_group: Option<Result<String, String>>,
    /// RDS's pending maintenance actions of the instance, as the location's listing has them
    /// (fresh); None when the listing is not fresh: nothing is decided on them then.
    pub maintenance: Option<Vec<crate::maintenance::PendingAction>>,
    /// For a member: the RDS identifier of its DBCluster once that is Ready, or why it cannot be
    /// used yet. None for an instance of no cluster.
    pub cluster: Option<Result<String, String>>,
    /// spec.restoreFrom.dbSnapshotRef, while restoring: the RDS identifier of the DBSnapshot once
    /// it is available (Ready), or why it cannot be used yet. None when not asked.
    pub snapshot_ref: Option<Result<String, String>>,
    /// What spec.restoreFrom's source is, read in this reconcile; None when not asked.
    pub restore_source: Option<RestoreSource>,
    /// What spec.replicaOf names, read in this reconcile (or why it cannot be used yet: a source
    /// DBInstance that is not Ready); None when not asked.
    pub replica_source: Option<Result<ReplicaSource, String>>,
    /// The instance's blue/green deployment and the instances it made or left, read in this
    /// reconcile; None when not asked.
    pub blue_green: Option<BlueGreenFacts>,
    /// The tags of each group the spec names by name (the field, then the tags; None: RDS has no
    /// such group), when the plan may send the name.
    pub groups: Vec<GroupTags>,
    /// The namespaces of the other DBInstances that observe an instance of this identifier (as the
    /// watch knows them), when an instance that is not ours may be claimed.
    pub observers: Vec<String>,
    /// What the operator's settings grant to namespaces.
    pub grants: Grants,
    /// The operator's key for password hashes.
    pub hash_key: Sensitive,
    /// The CA bundle a connection Secret carries for clients to verify the server
    /// (`--ca-bundle`), if any.
    pub ca_bundle: Option<std::sync::Arc<str>>,
    /// The operator's poll intervals.
    pub intervals: PollIntervals,
    /// Where the instance lives, as its status is to record it.
    pub placement: crate::managed::placement::Placement,
    /// The time of this reconcile, RFC 3339.
    pub now: String,
    /// What CloudWatch said of the instance at the last health poll (None: not known).
    pub health: Option<ObservedHealth>,
    /// The instance's alarms at the observer's last listing, when the spec or status has alarms
    /// (None: not listed yet, or not asked).
    pub alarms: Option<Vec<ObservedAlarm>>,
    /// Whether RDS offers the spec's class for its engine (and version) in the location
    /// (DescribeOrderableDBInstanceOptions), when a create may be planned; None when not read or
    /// not known (RDS's CreateDBInstance then answers for the class).
    pub class_offered: Option<bool>,
}

pub use crate::database::password::{PasswordFacts, PasswordRead};
pub use crate::sensitive::Sensitive;

/// One thing the act step does: one RDS call or one Kubernetes write, each idempotent. The steps
/// both database kinds take are written once (`database::step`); a DBInstance's own are
/// [`InstanceStep`]s.
pub type Step = crate::database::step::Step<DBInstanceSpec, Modification, InstanceStep>;

/// The steps only a DBInstance takes.
#[derive(Clone, Debug, PartialEq)]
pub enum InstanceStep {
    /// CreateDBInstance from the spec.
    CreateInstance {
        identifier: String,
        spec: Box<DBInstanceSpec>,
        password: Option<Sensitive>,
        tags: BTreeMap<String, String>,
    },
    /// RestoreDBInstanceFromS3: CreateDBInstance's settings, and the backup under a prefix of a
    /// bucket, read as the ingestion role.
    RestoreFromS3 {
        identifier: String,
        s3: crate::database::spec::S3Source,
        spec: Box<DBInstanceSpec>,
        password: Option<Sensitive>,
        tags: BTreeMap<String, String>,
    },
    /// DeleteDBInstance, with a final snapshot when named; automated backups are kept unless
    /// `delete_automated_backups`.
    DeleteInstance {
        identifier: String,
        final_snapshot: Option<String>,
        delete_automated_backups: bool,
    },
    /// RebootDBInstance: static parameter changes wait for it.
    Reboot { identifier: String },
    /// StopDBInstance (spec.activation Stopped).
    Stop { identifier: String },
    /// StartDBInstance (spec.activation Running).
    Start { identifier: String },
    /// CreateDBInstanceReadReplica of `source` (identifier or ARN), with the spec's settings a
    /// replica takes and our tags.
    CreateReplica {
        identifier: String,
        source: String,
        spec: Box<DBInstanceSpec>,
        tags: BTreeMap<String, String>,
    },
    /// PromoteReadReplica, with the spec's backup settings.
    PromoteReplica {
        identifier: String,
        backup_retention_period: Option<i32>,
        preferred_backup_window: Option<String>,
    },
    /// StartDBInstanceAutomatedBackupsReplication in `region` of our instance (`source`: its ARN).
    StartBackupReplication {
        identifier: String,
        source: String,
        replication: crate::dbinstance::BackupReplication,
    },
    /// StopDBInstanceAutomatedBackupsReplication in `region` of our instance (`source`: its ARN).
    StopBackupReplication {
        identifier: String,
        source: String,
        region: String,
    },
}

impl crate::database::step::OwnStep for InstanceStep {
    const MODIFY: &'static str = "ModifyInstance";
    const RESTORE: &'static str = "RestoreInstance";

    fn name(&self) -> &'static str {
        match self {
            InstanceStep::CreateInstance { .. } => "CreateInstance",
            InstanceStep::RestoreFromS3 { .. } => "RestoreFromS3",
            InstanceStep::DeleteInstance { .. } => "DeleteInstance",
            InstanceStep::Reboot { .. } => "Reboot",
            InstanceStep::Stop { .. } => "Stop",
            InstanceStep::Start { .. } => "Start",
            InstanceStep::CreateReplica { .. } => "CreateReplica",
            InstanceStep::PromoteReplica { .. } => "PromoteReplica",
            InstanceStep::StartBackupReplication { .. } => "StartBackupReplication",
            InstanceStep::StopBackupReplication { .. } => "StopBackupReplication",
        }
    }
}

/// What happens to the `rds_operator_instances` gauge for this DBInstance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Gauge {
    /// Follow the RDS state written in status (when the status reports one).
    #[default]
    FromStatus,
    /// The DBInstance is going away.
    Remove,
}

/// What one reconcile does and reports: the plan every kind has, with DBInstance's extension.
pub type Plan = crate::managed::plan::KindPlan<Step, StatusPlan, InstanceReport>;

/// What a DBInstance's plan reports besides its steps and status.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InstanceReport {
    /// What happens to the `rds_operator_instances` gauge.
    pub gauge: Gauge,
    /// Spec fields put back after a change outside the operator (for the drift metric).
    pub drift_corrected: Vec<&'static str>,
    /// A line for the operator's log only (what users of the DBInstance must not see).
    pub log: Option<String>,
}

impl crate::managed::plan::Extension for InstanceReport {
    fn log(&self) -> Option<&str> {
        self.log.as_deref()
    }
}

/// What the read step fetches besides the DBInstance and its RDS instance (by default: nothing).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reads {
    pub password: PasswordRead,
    /// The connection Secret, to compare with what it should hold.
    pub connection_secret: Option<String>,
    /// At deletion: Secrets that may be this DBInstance's to delete or keep.
    pub release_candidates: Vec<String>,
    /// Our instance is gone: the snapshots of this identifier, and the operator's account and
    /// region, to decide whether and from what to restore it.
    pub snapshots_of: Option<String>,
    pub identity: bool,
    /// Whether the DBInstance (namespace, name, uid) an instance's tags name still exists.
    pub owner: Option<(String, String, String)>,
    /// Resolve the spec's references (dbSubnetGroupRef, dbParameterGroupRef): every decision but
    /// deletion and a pause needs them.
    pub references: bool,
    /// Read the instance again directly when it came from the shared poll: adoption is decided on
    /// a read made in this reconcile.
    pub direct: bool,
    /// spec.restoreFrom's source, to learn whose it is before restoring from it.
    pub restore_source: Option<RestoreFrom>,
    /// spec.replicaOf's source, to learn whose it is before making a replica of it.
    pub replica_source: bool,
    /// The instance's blue/green deployment.
    pub blue_green: Option<BlueGreenRead>,
    /// The groups named in the spec whose tags decide whether this namespace may use them.
    pub groups: Vec<GroupRead>,
    /// The other DBInstances that observe this identifier.
    pub observers: bool,
    /// Whether RDS offers this class for this engine (and version): a create may be planned.
    pub class: Option<ClassRead>,
}

/// A class to ask RDS about: the engine, the version (only a full one, for a plain create: a
/// restore or a replica takes its source's) and the class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassRead {
    pub engine: String,
    pub version: Option<String>,
    pub class: String,
}

/// A group's spec field and its tags (None: RDS has no such group).
pub type GroupTags = (&'static str, Option<BTreeMap<String, String>>);

/// A group named in the spec: its spec field, its ARN's resource type (subgrp, pg) and its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRead {
    pub field: &'static str,
    pub resource: &'static str,
    pub name: String,
}

/// The status a plan reports: its fields, Ready (from the RDS state unless given), and Synced.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusPlan {
    /// Every field but conditions and observedGeneration.
    pub fields: DBInstanceStatus,
    /// None: Ready follows the RDS state in `fields.dbInstanceStatus` (after the act step).
    pub ready: Option<ConditionPlan>,
    pub synced: ConditionPlan,
    /// The spec was not acted on (paused, dry run): observedGeneration stays what it was, so an
    /// edit made meanwhile is still taken as one (not as drift) once the operator acts.
    pub held: bool,
    /// Why the connection Secret the spec asks for does not hold the instance (Ready turns
    /// False, `conditions::ready_with_secret`); None: it does, or will once the steps are made.
    pub secret_pending: Option<String>,
}

impl StatusPlan {
    /// Whether Ready follows the RDS state (the status reports an observation, not a failure).
    pub fn reports_rds_state(&self) -> bool {
        self.ready.is_none()
    }
}

/// What RDS answered to a call of the act step; it amends the planned status.
#[derive(Clone, Debug, PartialEq)]
pub enum Response {
    Created(ObservedInstance),
    Modified(ObservedInstance),
}

/// What the read step learnt of the instance's deployment: green before the switchover and the
/// old instance after it, read directly.
pub type BlueGreenFacts = crate::database::blue_green::Facts<ObservedInstance>;

/// How the read step finds the deployment.
pub type BlueGreenRead = crate::database::blue_green::Read;
