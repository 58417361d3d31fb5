//! The `DBCluster` kind: an Aurora DB cluster (aurora-mysql or aurora-postgresql, provisioned or
//! Serverless v2), or a Multi-AZ DB cluster (mysql or postgres, whose writer and two readers RDS
//! makes itself). The cluster owns its storage, master user, database, backups, engine version
//! and encryption; an Aurora cluster's instances are `DBInstance`s with `dbClusterRef`, which
//! never send those fields. [`plan`] (pure) decides, [`aws`] holds the SDK calls, [`controller`] reads, acts and
//! reports on the skeleton (`managed::skeleton`).
//!
//! Field names follow the RDS API (CreateDBCluster) in lowerCamelCase, as ACK's `DBCluster` does.
//! Doc comments here become `kubectl explain` text.

use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

mod act;
pub mod aws;
mod blue_green;
pub mod controller;
pub mod drift;
pub(crate) mod global;
pub mod observed;
pub mod plan;
pub mod read;
pub mod restore;

use crate::crd::{LocalRef, Tag};
pub use crate::database::choices::ClusterEngine;
use observed::ObservedCluster;

/// Desired state of an Aurora DB cluster or a Multi-AZ DB cluster.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "DBCluster",
    plural = "dbclusters",
    shortname = "dbc",
    category = "rds",
    namespaced,
    status = "DBClusterStatus",
    doc = "An Amazon Aurora DB cluster, or a Multi-AZ DB cluster, managed by rds-operator.",
    printcolumn(
        name = "Identifier",
        type_ = "string",
        json_path = ".status.dbClusterIdentifier"
    ),
    printcolumn(name = "Engine", type_ = "string", json_path = ".spec.engine"),
    printcolumn(name = "Status", type_ = "string", json_path = ".status.status"),
    printcolumn(
        name = "Version",
        type_ = "string",
        json_path = ".status.engineVersion"
    ),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Ready\")].status"
    ),
    printcolumn(
        name = "Synced",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Synced\")].status"
    ),
    printcolumn(
        name = "Writer",
        type_ = "string",
        json_path = ".status.endpoint.address",
        priority = 1
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[x_kube(
    validation = kube::core::Rule::new("!(has(self.manageMasterUserPassword) && self.manageMasterUserPassword && has(self.masterUserPassword))").message("set either masterUserPassword or manageMasterUserPassword, not both"),
    validation = kube::core::Rule::new("!has(self.masterUserSecretKmsKeyId) || (has(self.manageMasterUserPassword) && self.manageMasterUserPassword)").message("masterUserSecretKmsKeyId is the key of the secret RDS manages: set manageMasterUserPassword").field_path(".masterUserSecretKmsKeyId"),
    validation = kube::core::Rule::new("!has(self.masterUserSecretRotation) || (has(self.manageMasterUserPassword) && self.manageMasterUserPassword)").message("masterUserSecretRotation is the rotation of the secret RDS manages: set manageMasterUserPassword").field_path(".masterUserSecretRotation"),
    validation = kube::core::Rule::new("has(self.dbClusterIdentifier) == has(oldSelf.dbClusterIdentifier) && (!has(self.dbClusterIdentifier) || self.dbClusterIdentifier == oldSelf.dbClusterIdentifier)").message("dbClusterIdentifier is immutable").field_path(".dbClusterIdentifier"),
    validation = kube::core::Rule::new("self.engine == oldSelf.engine").message("engine is immutable").field_path(".engine"),
    validation = kube::core::Rule::new("!has(self.restoreFrom) || !has(self.restoreFrom.s3) || self.engine == 'aurora-mysql'").message("restoreFrom.s3 makes an Aurora MySQL cluster: engine must be aurora-mysql (API_RestoreDBClusterFromS3.html)").field_path(".restoreFrom.s3"),
    validation = kube::core::Rule::new("has(self.clusterScalabilityType) == has(oldSelf.clusterScalabilityType) && (!has(self.clusterScalabilityType) || self.clusterScalabilityType == oldSelf.clusterScalabilityType)").message("clusterScalabilityType is immutable").field_path(".clusterScalabilityType"),
    validation = kube::core::Rule::new("!has(self.clusterScalabilityType) || self.clusterScalabilityType != 'limitless' || self.engine == 'aurora-postgresql'").message("clusterScalabilityType limitless is Aurora PostgreSQL Limitless Database: engine must be aurora-postgresql (limitless.html)").field_path(".clusterScalabilityType"),
    validation = kube::core::Rule::new("!has(self.dbClusterIdentifier) || (!self.dbClusterIdentifier.endsWith('-') && !self.dbClusterIdentifier.contains('--'))").message("dbClusterIdentifier: RDS takes 1 to 63 letters, digits or hyphens, starting with a letter, with no two hyphens in a row and none at the end").field_path(".dbClusterIdentifier"),
    validation = kube::core::Rule::new("has(self.masterUsername) == has(oldSelf.masterUsername) && (!has(self.masterUsername) || self.masterUsername == oldSelf.masterUsername)").message("masterUsername is immutable").field_path(".masterUsername"),
    validation = kube::core::Rule::new("oldSelf.hasValue() || has(self.masterUsername) || has(self.globalClusterRef)").optional_old_self(true).message("masterUsername is required, except on a secondary cluster (globalClusterRef), which has its global database's").field_path(".masterUsername"),
    validation = kube::core::Rule::new("!has(self.globalClusterRef) || (!has(self.masterUsername) && !has(self.masterUserPassword) && !has(self.databaseName) && !(has(self.manageMasterUserPassword) && self.manageMasterUserPassword))").message("a secondary cluster (globalClusterRef) has its global database's master user, password and database: RDS refuses masterUsername, masterUserPassword, manageMasterUserPassword and databaseName for it"),
    validation = kube::core::Rule::new("!has(self.globalClusterRef) || !has(self.restoreFrom)").message("set either globalClusterRef (a secondary, with the global database's data) or restoreFrom"),
    validation = kube::core::Rule::new("!has(self.globalClusterRef) || (has(oldSelf.globalClusterRef) && self.globalClusterRef == oldSelf.globalClusterRef)").message("globalClusterRef can be removed (which detaches the cluster from its global database, one-way), but not added to an existing cluster or changed: RDS makes a secondary only at creation").field_path(".globalClusterRef"),
    validation = kube::core::Rule::new("has(self.databaseName) == has(oldSelf.databaseName) && (!has(self.databaseName) || self.databaseName == oldSelf.databaseName)").message("databaseName is immutable").field_path(".databaseName"),
    validation = kube::core::Rule::new("has(self.storageEncrypted) == has(oldSelf.storageEncrypted) && (!has(self.storageEncrypted) || self.storageEncrypted == oldSelf.storageEncrypted)").message("storageEncrypted is immutable").field_path(".storageEncrypted"),
    validation = kube::core::Rule::new("has(self.kmsKeyID) == has(oldSelf.kmsKeyID) && (!has(self.kmsKeyID) || self.kmsKeyID == oldSelf.kmsKeyID)").message("kmsKeyID is immutable").field_path(".kmsKeyID"),
    validation = kube::core::Rule::new("!(has(self.dbSubnetGroupName) && has(self.dbSubnetGroupRef))").message("set either dbSubnetGroupName or dbSubnetGroupRef, not both"),
    validation = kube::core::Rule::new("!(has(self.dbClusterParameterGroupName) && has(self.dbClusterParameterGroupRef))").message("set either dbClusterParameterGroupName or dbClusterParameterGroupRef, not both"),
    validation = kube::core::Rule::new("!has(self.restoreFrom) || !has(self.adoptionPolicy) || self.adoptionPolicy == 'Never'").message("set either restoreFrom or adoptionPolicy: an adopted cluster already exists"),
    validation = kube::core::Rule::new("((!has(self.adoptionPolicy) || self.adoptionPolicy == 'Never') && self.managementPolicy != 'ObserveOnly') || has(self.masterUserPassword) || (has(self.manageMasterUserPassword) && self.manageMasterUserPassword)").message("an adopted or observed cluster keeps its master password: reference it with masterUserPassword, or set manageMasterUserPassword"),
    validation = kube::core::Rule::new("!has(self.databaseInsightsMode) || self.databaseInsightsMode != 'advanced' || (has(self.enablePerformanceInsights) && self.enablePerformanceInsights && has(self.performanceInsightsRetentionPeriod) && self.performanceInsightsRetentionPeriod >= 465)").message("databaseInsightsMode advanced needs enablePerformanceInsights: true and performanceInsightsRetentionPeriod: 465 (API_CreateDBCluster.html, DatabaseInsightsMode)").field_path(".databaseInsightsMode"),
    validation = kube::core::Rule::new("!has(self.monitoringInterval) || self.monitoringInterval == 0 || has(self.monitoringRoleARN)").message("a monitoringInterval above 0 needs monitoringRoleARN (API_CreateDBCluster.html, MonitoringRoleArn)").field_path(".monitoringRoleARN"),
    validation = kube::core::Rule::new("!has(self.expireAfter) || (has(self.restoreFrom) && has(self.restoreFrom.cloneOf))").message("expireAfter deletes the cluster and its members: it is for clones (restoreFrom.cloneOf) only").field_path(".expireAfter"),
    validation = kube::core::Rule::new("!has(self.activation) || !has(self.activationSchedule)").message("set either activation or activationSchedule, not both").field_path(".activationSchedule"),
    validation = kube::core::Rule::new("!has(self.globalClusterRef) || (!has(self.activationSchedule) && (!has(self.activation) || self.activation == 'Running'))").message("RDS can't stop a cluster that is part of a global database (aurora-cluster-stop-start.html): leave activation and activationSchedule out").field_path(".activation"),
    validation = kube::core::Rule::new("(self.engine in ['mysql', 'postgres']) == has(self.dbClusterInstanceClass)").message("dbClusterInstanceClass is required for a Multi-AZ DB cluster (engine mysql or postgres), and only for one: an Aurora cluster's members have classes of their own (API_CreateDBCluster.html, DBClusterInstanceClass)").field_path(".dbClusterInstanceClass"),
    validation = kube::core::Rule::new("(self.engine in ['mysql', 'postgres']) == has(self.allocatedStorage)").message("allocatedStorage is required for a Multi-AZ DB cluster (engine mysql or postgres), and only for one: Aurora's storage grows by itself (API_CreateDBCluster.html, AllocatedStorage)").field_path(".allocatedStorage"),
    validation = kube::core::Rule::new("!has(self.storageType) || ((self.engine in ['mysql', 'postgres']) == (self.storageType in ['io1', 'io2', 'gp3']))").message("storageType is aurora or aurora-iopt1 for an Aurora cluster, io1, io2 or gp3 for a Multi-AZ DB cluster (API_CreateDBCluster.html, StorageType)").field_path(".storageType"),
    validation = kube::core::Rule::new("!has(self.iops) || self.engine in ['mysql', 'postgres']").message("iops is for a Multi-AZ DB cluster (engine mysql or postgres) only (API_CreateDBCluster.html, Iops)").field_path(".iops"),
    validation = kube::core::Rule::new("!(self.engine in ['mysql', 'postgres']) || has(self.iops) || (has(self.storageType) && self.storageType == 'gp3')").message("a Multi-AZ DB cluster with storageType io1 (the default) or io2 needs iops (API_CreateDBCluster.html, Iops)").field_path(".iops"),
    validation = kube::core::Rule::new("!has(self.iops) || !has(self.allocatedStorage) || (self.iops * 2 >= self.allocatedStorage && self.iops <= self.allocatedStorage * 50)").message("iops must be 0.5 to 50 times allocatedStorage (API_CreateDBCluster.html, Iops)").field_path(".iops"),
    validation = kube::core::Rule::new("!(self.engine in ['mysql', 'postgres']) || !has(self.dbClusterIdentifier) || size(self.dbClusterIdentifier) <= 52").message("a Multi-AZ DB cluster's identifier has at most 52 characters (API_CreateDBCluster.html, DBClusterIdentifier)").field_path(".dbClusterIdentifier"),
    validation = kube::core::Rule::new("!(self.engine in ['mysql', 'postgres']) || (!has(self.serverlessV2ScalingConfiguration) && !has(self.globalClusterRef) && !(has(self.enableHttpEndpoint) && self.enableHttpEndpoint) && !(has(self.restoreFrom) && has(self.restoreFrom.cloneOf)) && !(has(self.enableIAMDatabaseAuthentication) && self.enableIAMDatabaseAuthentication) && (!has(self.upgradePolicy) || self.upgradePolicy == 'InPlace'))").message("a Multi-AZ DB cluster (engine mysql or postgres) has no Serverless v2, global database, Data API, copy-on-write clone, IAM database authentication or blue/green deployment: those are Aurora's (multi-az-db-clusters-concepts.html, Limitations)"),
    validation = kube::core::Rule::new("has(self.restoreFrom) == has(oldSelf.restoreFrom) && (!has(self.restoreFrom) || self.restoreFrom == oldSelf.restoreFrom)").message("restoreFrom is immutable: it says how the cluster was created").field_path(".restoreFrom"),
    validation = kube::core::Rule::new("!has(self.alarms) || !has(self.alarms.freeStorageBelow) || self.engine in ['mysql', 'postgres']").message("an Aurora cluster's volume grows by itself (Aurora.Overview.StorageReliability.html): alarms.freeStorageBelow is for a Multi-AZ DB cluster (engine mysql or postgres)").field_path(".alarms.freeStorageBelow"),
)]
#[serde(rename_all = "camelCase")]
pub struct DBClusterSpec {
    /// Name of the RDS cluster (1-63 letters, digits or hyphens, starting with a letter, no two
    /// hyphens in a row, none at the end). Defaults to metadata.name, which must then follow the
    /// same rule. Immutable.
    #[schemars(length(min = 1, max = 63), regex(pattern = r"^[a-zA-Z][a-zA-Z0-9-]*$"))]
    pub db_cluster_identifier: Option<String>,

    /// aurora-mysql or aurora-postgresql (an Aurora DB cluster, whose instances are DBInstances
    /// with dbClusterRef), or mysql or postgres (a Multi-AZ DB cluster: RDS makes its writer and
    /// two readable standbys, in three Availability Zones, of dbClusterInstanceClass). Immutable.
    pub engine: ClusterEngine,

    /// Engine version, e.g. 8.0.mysql_aurora.3.08.0 or 16.4. A shorter version matches any newer
    /// one RDS picks or upgrades to. A change is one ModifyDBCluster; members are never sent it.
    pub engine_version: Option<String>,

    /// aurora (Aurora Standard, RDS's default) or aurora-iopt1 (Aurora I/O-Optimized, no charge
    /// per I/O); for a Multi-AZ DB cluster io1 (RDS's default), io2 or gp3. RDS switches an existing cluster to I/O-Optimized once every 30 days, and back to
    /// Standard at any time: a second switch within the 30 days is refused with RDS's reason.
    /// Modifiable.
    pub storage_type: Option<crate::database::choices::ClusterStorageType>,

    /// standard (RDS's default) or limitless: an Aurora PostgreSQL Limitless Database, whose
    /// capacity is its DB shard group (a DBShardGroup of this namespace that names the cluster;
    /// its endpoint is the connection Secret's `shardGroupHost`). Immutable.
    pub cluster_scalability_type: Option<crate::database::choices::ClusterScalabilityType>,

    /// The class of a Multi-AZ DB cluster's writer and two readers (engine mysql or postgres),
    /// such as db.m6gd.large; required for one. An Aurora cluster's members have classes of their
    /// own (dbInstanceClass on each DBInstance). Modifiable.
    #[schemars(length(min = 1, max = 64))]
    pub db_cluster_instance_class: Option<String>,

    /// A Multi-AZ DB cluster's storage for each of its instances, in GiB; required for one, and
    /// it grows only. Aurora's storage grows by itself: leave it out. Modifiable.
    #[schemars(range(min = 20, max = 65536))]
    pub allocated_storage: Option<i32>,

    /// A Multi-AZ DB cluster's provisioned IOPS: required with storageType io1 (the default) or
    /// io2, and optional with gp3; 0.5 to 50 for each GiB of allocatedStorage. Modifiable.
    #[schemars(range(min = 1000, max = 256000))]
    pub iops: Option<i32>,

    /// Aurora Serverless v2 capacity, in Aurora capacity units; members then use the class
    /// db.serverless.
    pub serverless_v2_scaling_configuration: Option<ServerlessV2Scaling>,

    /// Name of the master user. Immutable. Required, except on a secondary cluster
    /// (globalClusterRef), which has its global database's.
    #[schemars(length(min = 1, max = 63))]
    pub master_username: Option<String>,

    /// Make the cluster a secondary of this GlobalCluster of the namespace (CreateDBCluster with
    /// GlobalClusterIdentifier): a read-only copy of the global database in this cluster's region,
    /// which must be another than the primary's. It sends no master user, password or database
    /// name (RDS refuses them); its connection Secret names the global writer endpoint, its own
    /// reader endpoint and the primary DBCluster's credentials. Removing it detaches the cluster
    /// (RemoveFromGlobalCluster) into a standalone, writable one: one-way, as promoting a replica
    /// is. It cannot be added to an existing cluster.
    pub global_cluster_ref: Option<LocalRef>,

    /// Name of the database RDS creates in the cluster. Immutable.
    pub database_name: Option<String>,

    /// Days to keep automated backups (1 to 35).
    #[schemars(range(min = 1, max = 35))]
    pub backup_retention_period: Option<i32>,

    /// DB cluster parameter group.
    pub db_cluster_parameter_group_name: Option<String>,
    /// The DB parameter group the members take on a major version upgrade through a blue/green
    /// deployment (upgradePolicy BlueGreen: TargetDBParameterGroupName). RDS refuses a major
    /// upgrade of a cluster whose members use a custom DB parameter group without one; members
    /// that set dbParameterGroupName set the same group once switched over.
    pub db_instance_parameter_group_name: Option<String>,
    /// How long to keep the old cluster (`<identifier>-old1`, with its members) after a blue/green
    /// switchover, such as 24h. Unset, it is kept and reported in status.blueGreen, never deleted
    /// by the operator. Once due, its members are deleted, then the old cluster as deletionPolicy
    /// says (Snapshot: after a final cluster snapshot; Retain: never), then the deployment.
    pub old_cluster_retention: Option<kube::core::Duration>,

    /// The DBClusterParameterGroup of this namespace whose parameters the cluster uses, instead
    /// of dbClusterParameterGroupName; waited for until it is Ready.
    pub db_cluster_parameter_group_ref: Option<LocalRef>,

    /// Tags of the RDS cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 40))]
    pub tags: Vec<Tag>,

    /// Create the cluster from a cluster snapshot (RestoreDBClusterFromSnapshot) or a point in
    /// time of another cluster (RestoreDBClusterToPointInTime) instead of empty. Immutable. The
    /// source must be this namespace's (its ownership tags, or those of the cluster a snapshot
    /// was taken of) or granted to it (its tag rds.operator.rs/restorable-by, or the operator's
    /// --grant-restore); otherwise nothing is restored (RestoreSourceNotOwned). The restored
    /// cluster starts with the source's master password; the spec's is sent once it is
    /// available.
    pub restore_from: Option<ClusterRestoreFrom>,

    /// Whether the cluster runs: spec.activation, or spec.activationSchedule. A stopped cluster's
    /// members stop with it.
    #[serde(flatten)]
    pub run: crate::database::activation::ActivationSpec,

    /// Database Insights, Performance Insights and Enhanced Monitoring of the cluster (Aurora
    /// and Multi-AZ DB clusters); an Aurora member takes the cluster's Database Insights mode.
    #[serde(flatten)]
    pub insights: crate::database::spec::Insights,

    /// IAM roles associated with the cluster (S3 import and export, Lambda...).
    #[serde(flatten)]
    pub roles: crate::database::spec::Roles,

    /// The RDS Data API (an HTTP endpoint that runs SQL without a connection), through
    /// EnableHttpEndpoint and DisableHttpEndpoint; status.dataAPI names the cluster ARN and the
    /// secret an app passes to ExecuteStatement (the secret RDS manages, with
    /// manageMasterUserPassword).
    pub enable_http_endpoint: Option<bool>,

    /// CloudWatch alarms on the figures of all the cluster's instances (DBClusterIdentifier):
    /// CPU, connections, and the furthest reader's lag (Aurora's AuroraReplicaLagMaximum, a
    /// Multi-AZ DB cluster's ReplicaLag), with a Multi-AZ DB cluster's free storage; each with a
    /// default, notifying an SNS topic; kept by the operator and deleted with the DBCluster
    /// (docs/health.md).
    pub alarms: Option<crate::database::alarms::AlarmsSpec>,

    /// How long a clone (restoreFrom.cloneOf) lives, such as 72h, from the DBCluster's creation:
    /// then the operator deletes the DBCluster and its member DBInstances (as their
    /// deletionPolicy says: set Delete for a preview database that leaves nothing behind).
    /// status.expiresAt says when.
    pub expire_after: Option<kube::core::Duration>,

    /// Where the resource lives: its AWSAccount and region.
    #[serde(flatten)]
    pub placement: crate::managed::placement::Where,
    #[serde(flatten)]
    pub network: crate::database::spec::Network,
    #[serde(flatten)]
    pub security: crate::database::spec::Security,
    #[serde(flatten)]
    pub backups: crate::database::spec::Backups,
    #[serde(flatten)]
    pub maintenance: crate::database::spec::Maintenance,
    #[serde(flatten)]
    pub upgrade: crate::database::spec::Upgrade,
    #[serde(flatten)]
    pub password: crate::database::spec::PasswordSource,
    #[serde(flatten)]
    pub deletion: crate::database::spec::Deletion,
    #[serde(flatten)]
    pub policies: crate::database::spec::Policies,
    #[serde(flatten)]
    pub connection: crate::database::spec::Connection,
}

/// Where a new cluster's data comes from.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = kube::core::Rule::new("[has(self.dbClusterSnapshotIdentifier), has(self.dbClusterSnapshotRef), has(self.sourceDBClusterIdentifier), has(self.cloneOf), has(self.s3)].filter(x, x).size() == 1").message("set one of dbClusterSnapshotIdentifier, dbClusterSnapshotRef, sourceDBClusterIdentifier, cloneOf and s3"),
    validation = kube::core::Rule::new("!has(self.sourceDBClusterIdentifier) || (has(self.restoreTime) != (has(self.useLatestRestorableTime) && self.useLatestRestorableTime))").message("with sourceDBClusterIdentifier, set either restoreTime or useLatestRestorableTime: true"),
    validation = kube::core::Rule::new("has(self.sourceDBClusterIdentifier) || (!has(self.restoreTime) && !has(self.useLatestRestorableTime))").message("restoreTime and useLatestRestorableTime go with sourceDBClusterIdentifier"),
)]
pub struct ClusterRestoreFrom {
    /// The cluster snapshot to restore: its identifier or ARN.
    #[serde(
        default,
        rename = "dbClusterSnapshotIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 2048))]
    pub db_cluster_snapshot_identifier: Option<String>,
    /// A DBClusterSnapshot of this namespace to restore; the cluster waits
    /// (ReferencesUnresolved) until it is available (Ready).
    pub db_cluster_snapshot_ref: Option<crate::crd::LocalRef>,
    /// The cluster whose backups to restore from.
    #[serde(
        default,
        rename = "sourceDBClusterIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 2048))]
    pub source_db_cluster_identifier: Option<String>,
    /// The time to restore to, RFC 3339 (e.g. 2026-11-30T04:00:00Z).
    #[x_kube(validation = kube::core::Rule::new("self.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$')").message("restoreTime must be an RFC 3339 time such as 2026-11-30T04:00:00Z"))]
    pub restore_time: Option<String>,
    /// Restore to the latest restorable time instead of restoreTime.
    pub use_latest_restorable_time: Option<bool>,
    /// A copy-on-write clone of a DBCluster of this namespace (RestoreDBClusterToPointInTime
    /// with RestoreType copy-on-write, at its latest restorable time), waited for until it is
    /// Ready: made in minutes whatever the data's size, sharing its pages until either writes.
    pub clone_of: Option<crate::crd::LocalRef>,
    /// A backup in S3 (RestoreDBClusterFromS3, Aurora MySQL only): the cluster is made with the
    /// spec's settings, master user and password, as CreateDBCluster would, and RDS loads the
    /// backup into it.
    pub s3: Option<crate::database::spec::S3Source>,
}

/// Aurora Serverless v2 capacity range.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("self.minCapacity <= self.maxCapacity").message("minCapacity must not be larger than maxCapacity"))]
pub struct ServerlessV2Scaling {
    /// At least 0 (0 pauses the cluster when idle), in steps of 0.5.
    #[schemars(range(min = 0.0, max = 256.0))]
    pub min_capacity: f64,
    /// At most 256, in steps of 0.5.
    #[schemars(range(min = 1.0, max = 256.0))]
    pub max_capacity: f64,
}

/// What the operator observed and did.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DBClusterStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// What both database kinds report alike.
    #[serde(flatten)]
    pub common: crate::database::status::DatabaseStatus,
    /// Identifier of the RDS cluster.
    pub db_cluster_identifier: Option<String>,
    /// RDS's immutable resource id of the cluster (cluster-...), as IAM database authentication
    /// names it.
    pub db_cluster_resource_id: Option<String>,
    /// The cluster's state as RDS reports it (creating, available, modifying, deleting...).
    pub status: Option<String>,
    /// The reader endpoint (load-balanced over the readers).
    pub reader_endpoint: Option<String>,
    /// The cluster's instances as RDS lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<ClusterMember>,
    /// The last difference found between RDS and the spec, in words.
    pub last_drift: Option<String>,
    /// Where the cluster was restored from (spec.restoreFrom, or its own snapshot after an
    /// out-of-band deletion).
    pub restored_from: Option<String>,
    /// The final cluster snapshot the deletion asked for.
    pub final_snapshot: Option<String>,
    /// The global database the cluster is a member of, as RDS reports it.
    pub global_cluster_identifier: Option<String>,
    /// The global database this DBCluster made the cluster a secondary of (spec.globalClusterRef);
    /// the only one it detaches the cluster from.
    pub secondary_of: Option<String>,
    /// The blue/green deployment (upgradePolicy BlueGreen): its state, the green cluster, the
    /// changes it carries, and the old cluster after the switchover.
    pub blue_green: Option<ClusterBlueGreen>,
    /// When the operator last switched the cluster to Aurora I/O-Optimized (RFC 3339): RDS takes
    /// the next switch 30 days after.
    pub io_optimized_since: Option<String>,
    /// When a clone with expireAfter is deleted (RFC 3339).
    pub expires_at: Option<String>,
    /// What an app passes to the Data API's ExecuteStatement, while the HTTP endpoint is on.
    #[serde(rename = "dataAPI")]
    pub data_api: Option<DataApi>,
}

/// A blue/green deployment of the cluster, as DescribeBlueGreenDeployments reports it, and what
/// the operator did.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterBlueGreen {
    #[serde(flatten)]
    pub deployment: crate::database::blue_green::DeploymentStatus,
    /// The green cluster before the switchover (its members are green copies of the cluster's).
    pub green_cluster: Option<String>,
    /// Green's writer endpoint before the switchover.
    pub green_endpoint: Option<String>,
    /// The old (blue) cluster after the switchover, kept as spec.oldClusterRetention says.
    pub old_cluster: Option<String>,
}

/// An instance of the cluster.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterMember {
    pub db_instance_identifier: String,
    /// The writer (true) or a reader.
    pub is_cluster_writer: bool,
    /// The instance's state as the operator's shared poll of instances last saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

impl DBCluster {
    /// The RDS identifier: spec.dbClusterIdentifier or metadata.name, lower-cased as RDS stores it.
    pub fn identifier(&self) -> String {
        let spec = self.spec.db_cluster_identifier.as_ref();
        crate::database::identifier::of(spec, self.metadata.name.as_ref())
    }
}

crate::placed!(DBCluster, |s| s.common.arn.is_some() || s.status.is_some(),
    placement at common.placement);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_carries_immutability_rules_and_engines() {
        let yaml = crate::crd::yaml::<DBCluster>();
        for needle in [
            "engine is immutable",
            "masterUsername is immutable",
            "- aurora-mysql",
            "- aurora-postgresql",
            "minCapacity must not be larger",
            "RDS refuses masterUsername, masterUserPassword, manageMasterUserPassword and \
             databaseName for it",
            "optionalOldSelf: true",
        ] {
            assert!(yaml.contains(needle), "CRD lacks {needle:?}");
        }
    }
}

/// The Data API's parameters for the cluster (ExecuteStatement's resourceArn and secretArn).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataApi {
    /// The cluster's ARN.
    pub resource_arn: String,
    /// The Secrets Manager secret of the master user (the one RDS manages); None without
    /// manageMasterUserPassword, when the app names a secret of its own.
    pub secret_arn: Option<String>,
}
