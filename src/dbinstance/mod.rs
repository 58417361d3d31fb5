//! The `DBInstance` kind: what a user asks for (spec) and what the operator reports (status), and
//! its reconcile on the skeleton (`managed::skeleton`): [`read`] gathers the [`plan::Facts`],
//! [`plan`] (pure) decides, with drift decided in [`drift`], [`act`] runs a step, and
//! [`plan::status`] says what the status reports; [`controller`] holds its wake-ups and its
//! `Managed` implementation; [`connection`] renders the connection Secret.
//!
//! Field names follow the RDS API in lowerCamelCase, as ACK's `DBInstance` does, so an ACK manifest
//! ports by changing its `apiVersion`. Doc comments here become `kubectl explain` text.

use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

pub mod act;
pub mod aws;
pub mod cache;
pub use crate::database::connection;
pub mod controller;
pub mod drift;
pub mod plan;
pub mod read;
mod sources;
mod status;
pub use crate::database::choices::*;
pub use crate::database::parts::*;
pub use crate::managed::fights::Corrections;
pub use sources::*;
pub use status::*;

pub use crate::crd::{
    ACK_ADOPTION_POLICY, ACK_DELETION_POLICY, ADOPTABLE_BY_TAG, ADOPTED_TAG, DRY_RUN_ANNOTATION,
    FINALIZER, GROUP, LocalRef, OWNER_NAME_TAG, OWNER_TAG, PAUSED_ANNOTATION, RESTORABLE_BY_TAG,
    RETAINED_TAG, SECRET_OWNER_ANNOTATION, Tag, has_finalizer,
};

/// Desired state of an RDS DB instance.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "DBInstance",
    plural = "dbinstances",
    shortname = "dbi",
    category = "rds",
    namespaced,
    status = "DBInstanceStatus",
    doc = "An AWS RDS DB instance managed by rds-operator.",
    printcolumn(
        name = "Identifier",
        type_ = "string",
        json_path = ".status.dbInstanceIdentifier"
    ),
    printcolumn(name = "Engine", type_ = "string", json_path = ".spec.engine"),
    printcolumn(name = "Class", type_ = "string", json_path = ".spec.dbInstanceClass"),
    printcolumn(
        name = "Status",
        type_ = "string",
        json_path = ".status.dbInstanceStatus"
    ),
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
        name = "Endpoint",
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
    validation = kube::core::Rule::new("self.engine.startsWith('aurora') || has(self.allocatedStorage) || has(self.replicaOf) || has(self.restoreFrom)").message("allocatedStorage is required for engine other than aurora, but for a read replica (replicaOf), which inherits its source's, and a restore (restoreFrom), which takes its snapshot's or source's").reason(kube::core::Reason::FieldValueRequired).field_path(".allocatedStorage"),
    validation = kube::core::Rule::new("!has(self.maxAllocatedStorage) || !has(self.allocatedStorage) || self.maxAllocatedStorage >= self.allocatedStorage").message("maxAllocatedStorage must not be smaller than allocatedStorage"),
    validation = kube::core::Rule::new("!(has(self.manageMasterUserPassword) && self.manageMasterUserPassword && has(self.masterUserPassword))").message("set either masterUserPassword or manageMasterUserPassword, not both"),
    validation = kube::core::Rule::new("!has(self.masterUserSecretKmsKeyId) || (has(self.manageMasterUserPassword) && self.manageMasterUserPassword)").message("masterUserSecretKmsKeyId is the key of the secret RDS manages: set manageMasterUserPassword").field_path(".masterUserSecretKmsKeyId"),
    validation = kube::core::Rule::new("!has(self.activation) || self.activation == 'Running' || (!has(self.replicaOf) && !has(self.dbClusterRef) && !has(self.dbClusterIdentifier))").message("RDS can't stop a read replica, and an Aurora member stops with its cluster (USER_StopInstance.html): leave activation out").field_path(".activation"),
    validation = kube::core::Rule::new("!has(self.activationSchedule) || (!has(self.replicaOf) && !has(self.dbClusterRef) && !has(self.dbClusterIdentifier))").message("RDS can't stop a read replica, and an Aurora member stops with its cluster (USER_StopInstance.html): leave activationSchedule out").field_path(".activationSchedule"),
    validation = kube::core::Rule::new("!has(self.databaseInsightsMode) || self.databaseInsightsMode != 'advanced' || (has(self.enablePerformanceInsights) && self.enablePerformanceInsights && has(self.performanceInsightsRetentionPeriod) && self.performanceInsightsRetentionPeriod >= 465)").message("databaseInsightsMode advanced needs enablePerformanceInsights: true and performanceInsightsRetentionPeriod: 465 (API_CreateDBInstance.html, DatabaseInsightsMode)").field_path(".databaseInsightsMode"),
    validation = kube::core::Rule::new("!has(self.monitoringInterval) || self.monitoringInterval == 0 || has(self.monitoringRoleARN)").message("a monitoringInterval above 0 needs monitoringRoleARN (API_CreateDBInstance.html, MonitoringRoleArn)").field_path(".monitoringRoleARN"),
    validation = kube::core::Rule::new("!has(self.associatedRoles) || self.associatedRoles.all(r, has(r.featureName))").message("a DBInstance's role needs featureName (API_AddRoleToDBInstance.html: FeatureName is required)").field_path(".associatedRoles"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.associatedRoles)").message("associatedRoles of an Aurora cluster are the DBCluster's: set them on the DBCluster, not on a member").field_path(".associatedRoles"),
    validation = kube::core::Rule::new("!has(self.activation) || !has(self.activationSchedule)").message("set either activation or activationSchedule, not both").field_path(".activationSchedule"),
    validation = kube::core::Rule::new("!has(self.masterUserSecretRotation) || (has(self.manageMasterUserPassword) && self.manageMasterUserPassword)").message("masterUserSecretRotation is the rotation of the secret RDS manages: set manageMasterUserPassword").field_path(".masterUserSecretRotation"),
    validation = kube::core::Rule::new("has(self.dbInstanceIdentifier) == has(oldSelf.dbInstanceIdentifier) && (!has(self.dbInstanceIdentifier) || self.dbInstanceIdentifier == oldSelf.dbInstanceIdentifier)").message("dbInstanceIdentifier is immutable").field_path(".dbInstanceIdentifier"),
    validation = kube::core::Rule::new("self.engine == oldSelf.engine").message("engine is immutable").field_path(".engine"),
    validation = kube::core::Rule::new("self.engine in ['aurora-mysql', 'aurora-postgresql', 'custom-oracle-ee', 'custom-oracle-ee-cdb', 'custom-oracle-se2', 'custom-oracle-se2-cdb', 'custom-sqlserver-dev', 'custom-sqlserver-ee', 'custom-sqlserver-se', 'custom-sqlserver-web', 'db2-ae', 'db2-se', 'mariadb', 'mysql', 'oracle-ee', 'oracle-ee-cdb', 'oracle-se2', 'oracle-se2-cdb', 'postgres', 'sqlserver-dev-ee', 'sqlserver-ee', 'sqlserver-ex', 'sqlserver-se', 'sqlserver-web']").message("engine must be one RDS has (API_CreateDBInstance.html, Engine): aurora-mysql, aurora-postgresql, mariadb, mysql, postgres, an oracle-, sqlserver-, db2- or custom- engine").reason(kube::core::Reason::FieldValueInvalid).field_path(".engine"),
    validation = kube::core::Rule::new("!has(self.dbInstanceIdentifier) || (self.dbInstanceIdentifier.matches('^[a-zA-Z][a-zA-Z0-9-]*$') && !self.dbInstanceIdentifier.endsWith('-') && !self.dbInstanceIdentifier.contains('--'))").message("dbInstanceIdentifier: RDS takes 1 to 63 letters, digits or hyphens, starting with a letter, with no two hyphens in a row and none at the end").field_path(".dbInstanceIdentifier"),
    validation = kube::core::Rule::new("has(self.masterUsername) == has(oldSelf.masterUsername) && (!has(self.masterUsername) || self.masterUsername == oldSelf.masterUsername)").message("masterUsername is immutable").field_path(".masterUsername"),
    validation = kube::core::Rule::new("has(self.dbName) == has(oldSelf.dbName) && (!has(self.dbName) || self.dbName == oldSelf.dbName)").message("dbName is immutable").field_path(".dbName"),
    validation = kube::core::Rule::new("has(self.storageEncrypted) == has(oldSelf.storageEncrypted) && (!has(self.storageEncrypted) || self.storageEncrypted == oldSelf.storageEncrypted)").message("storageEncrypted is immutable").field_path(".storageEncrypted"),
    validation = kube::core::Rule::new("has(self.kmsKeyID) == has(oldSelf.kmsKeyID) && (!has(self.kmsKeyID) || self.kmsKeyID == oldSelf.kmsKeyID)").message("kmsKeyID is immutable").field_path(".kmsKeyID"),
    validation = kube::core::Rule::new("has(self.availabilityZone) == has(oldSelf.availabilityZone) && (!has(self.availabilityZone) || self.availabilityZone == oldSelf.availabilityZone)").message("availabilityZone is immutable").field_path(".availabilityZone"),
    validation = kube::core::Rule::new("has(self.characterSetName) == has(oldSelf.characterSetName) && (!has(self.characterSetName) || self.characterSetName == oldSelf.characterSetName)").message("characterSetName is immutable").field_path(".characterSetName"),
    validation = kube::core::Rule::new("has(self.engineLifecycleSupport) == has(oldSelf.engineLifecycleSupport) && (!has(self.engineLifecycleSupport) || self.engineLifecycleSupport == oldSelf.engineLifecycleSupport)").message("engineLifecycleSupport is immutable").field_path(".engineLifecycleSupport"),
    validation = kube::core::Rule::new("!has(self.availabilityZone) || !has(self.multiAZ) || !self.multiAZ").message("availabilityZone is for a single-AZ instance; leave it out with multiAZ"),
    validation = kube::core::Rule::new("!(has(self.dbSubnetGroupName) && has(self.dbSubnetGroupRef))").message("set either dbSubnetGroupName or dbSubnetGroupRef, not both"),
    validation = kube::core::Rule::new("!(has(self.dbParameterGroupName) && has(self.dbParameterGroupRef))").message("set either dbParameterGroupName or dbParameterGroupRef, not both"),
    validation = kube::core::Rule::new("!(has(self.optionGroupName) && has(self.optionGroupRef))").message("set either optionGroupName or optionGroupRef, not both"),
    validation = kube::core::Rule::new("has(self.restoreFrom) == has(oldSelf.restoreFrom) && (!has(self.restoreFrom) || self.restoreFrom == oldSelf.restoreFrom)").message("restoreFrom is immutable: it says how the instance was created").field_path(".restoreFrom"),
    validation = kube::core::Rule::new("!has(self.restoreFrom) || !has(self.adoptionPolicy) || self.adoptionPolicy == 'Never'").message("set either restoreFrom or adoptionPolicy: an adopted instance already exists"),
    validation = kube::core::Rule::new("!has(self.adoptionPolicy) || self.adoptionPolicy == 'Never' || has(self.masterUserPassword) || (has(self.manageMasterUserPassword) && self.manageMasterUserPassword)").message("an adopted instance keeps its master password: reference it with masterUserPassword, or set manageMasterUserPassword"),
    validation = kube::core::Rule::new("self.managementPolicy != 'ObserveOnly' || has(self.masterUserPassword) || (has(self.manageMasterUserPassword) && self.manageMasterUserPassword)").message("an observed instance keeps its master password: reference it with masterUserPassword, or set manageMasterUserPassword"),
    validation = kube::core::Rule::new("!has(self.dbClusterRef) && !has(self.dbClusterIdentifier) || self.engine.startsWith('aurora')").message("a cluster member's engine is its DBCluster's: aurora-mysql or aurora-postgresql").field_path(".engine"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) && has(self.dbClusterIdentifier))").message("set either dbClusterRef or dbClusterIdentifier, not both"),
    validation = kube::core::Rule::new("has(self.dbClusterRef) == has(oldSelf.dbClusterRef) && has(self.dbClusterIdentifier) == has(oldSelf.dbClusterIdentifier) && (!has(self.dbClusterRef) || self.dbClusterRef == oldSelf.dbClusterRef) && (!has(self.dbClusterIdentifier) || self.dbClusterIdentifier == oldSelf.dbClusterIdentifier)").message("a member's cluster is immutable: an instance cannot move to another cluster"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.allocatedStorage)").message("allocatedStorage is the DBCluster's (storage): set it on the DBCluster, not on a member").field_path(".allocatedStorage"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.maxAllocatedStorage)").message("maxAllocatedStorage is the DBCluster's (storage): set it on the DBCluster, not on a member").field_path(".maxAllocatedStorage"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.storageType)").message("storageType is the DBCluster's (storage): set it on the DBCluster, not on a member").field_path(".storageType"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.iops)").message("iops is the DBCluster's (storage): set it on the DBCluster, not on a member").field_path(".iops"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.storageThroughput)").message("storageThroughput is the DBCluster's (storage): set it on the DBCluster, not on a member").field_path(".storageThroughput"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.masterUsername)").message("masterUsername is the DBCluster's (master user): set it on the DBCluster, not on a member").field_path(".masterUsername"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.masterUserPassword)").message("masterUserPassword is the DBCluster's (master password): set it on the DBCluster, not on a member").field_path(".masterUserPassword"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.manageMasterUserPassword)").message("manageMasterUserPassword is the DBCluster's (master password): set it on the DBCluster, not on a member").field_path(".manageMasterUserPassword"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.dbName)").message("dbName is the DBCluster's (database name): set it on the DBCluster, not on a member").field_path(".dbName"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.backupRetentionPeriod)").message("backupRetentionPeriod is the DBCluster's (backups): set it on the DBCluster, not on a member").field_path(".backupRetentionPeriod"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.preferredBackupWindow)").message("preferredBackupWindow is the DBCluster's (backups): set it on the DBCluster, not on a member").field_path(".preferredBackupWindow"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.engineVersion)").message("engineVersion is the DBCluster's (engine version): set it on the DBCluster, not on a member").field_path(".engineVersion"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.storageEncrypted)").message("storageEncrypted is the DBCluster's (encryption): set it on the DBCluster, not on a member").field_path(".storageEncrypted"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.kmsKeyID)").message("kmsKeyID is the DBCluster's (encryption): set it on the DBCluster, not on a member").field_path(".kmsKeyID"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.port)").message("port is the DBCluster's (port): set it on the DBCluster, not on a member").field_path(".port"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.multiAZ)").message("multiAZ is the DBCluster's (availability (readers in other zones)): set it on the DBCluster, not on a member").field_path(".multiAZ"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.vpcSecurityGroupIDs)").message("vpcSecurityGroupIDs is the DBCluster's (security groups): set it on the DBCluster, not on a member").field_path(".vpcSecurityGroupIDs"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.dbSubnetGroupName)").message("dbSubnetGroupName is the DBCluster's (subnet group): set it on the DBCluster, not on a member").field_path(".dbSubnetGroupName"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.dbSubnetGroupRef)").message("dbSubnetGroupRef is the DBCluster's (subnet group): set it on the DBCluster, not on a member").field_path(".dbSubnetGroupRef"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.deletionProtection)").message("deletionProtection is the DBCluster's (deletion protection): set it on the DBCluster, not on a member").field_path(".deletionProtection"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.copyTagsToSnapshot)").message("copyTagsToSnapshot is the DBCluster's (snapshots): set it on the DBCluster, not on a member").field_path(".copyTagsToSnapshot"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.finalDBSnapshotIdentifier)").message("finalDBSnapshotIdentifier is the DBCluster's (snapshots: the cluster's final snapshot is the backup): set it on the DBCluster, not on a member").field_path(".finalDBSnapshotIdentifier"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.enableIAMDatabaseAuthentication)").message("enableIAMDatabaseAuthentication is the DBCluster's (IAM authentication): set it on the DBCluster, not on a member").field_path(".enableIAMDatabaseAuthentication"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.enableCloudwatchLogsExports)").message("enableCloudwatchLogsExports is the DBCluster's (log exports): set it on the DBCluster, not on a member").field_path(".enableCloudwatchLogsExports"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.characterSetName)").message("characterSetName is the DBCluster's (character set): set it on the DBCluster, not on a member").field_path(".characterSetName"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.databaseInsightsMode)").message("databaseInsightsMode is the DBCluster's (Aurora members inherit it, API_CreateDBInstance.html): set it on the DBCluster, not on a member").field_path(".databaseInsightsMode"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.restoreFrom)").message("restoreFrom is the DBCluster's (data: restore the DBCluster instead): set it on the DBCluster, not on a member").field_path(".restoreFrom"),
    validation = kube::core::Rule::new("!has(self.replicaOf) || has(oldSelf.replicaOf)").message("replicaOf cannot be added: an instance becomes a replica only when it is created, and promotion is one-way").field_path(".replicaOf"),
    validation = kube::core::Rule::new("!has(self.replicaOf) || !has(oldSelf.replicaOf) || self.replicaOf == oldSelf.replicaOf").message("replicaOf is immutable: remove it to promote the replica").field_path(".replicaOf"),
    validation = kube::core::Rule::new("!has(oldSelf.promote) || !oldSelf.promote || (has(self.promote) && self.promote)").message("promote cannot be undone: promotion is one-way").field_path(".promote"),
    validation = kube::core::Rule::new("!has(self.replicaOf) || !has(self.restoreFrom) && !has(self.adoptionPolicy) && !has(self.dbClusterRef) && !has(self.dbClusterIdentifier)").message("a read replica's data is its source's: set replicaOf without restoreFrom, adoptionPolicy or a cluster").field_path(".replicaOf"),
    validation = kube::core::Rule::new("!has(self.replicaOf) || !has(self.manageMasterUserPassword) || !self.manageMasterUserPassword").message("a read replica has its source's master password: manageMasterUserPassword is the source's").field_path(".manageMasterUserPassword"),
    validation = kube::core::Rule::new("!has(self.replicaOf) || has(self.replicaOf.name) || has(self.masterUserPassword)").message("a replica of an instance no DBInstance of this namespace manages needs masterUserPassword: the Secret with the source's password, for the connection Secret").field_path(".masterUserPassword"),
    validation = kube::core::Rule::new("!(has(self.dbClusterRef) || has(self.dbClusterIdentifier)) || !has(self.connectionSecret)").message("connectionSecret is the DBCluster's (connection Secret: the DBCluster's has the writer and reader endpoints): set it on the DBCluster, not on a member").field_path(".connectionSecret"),
    validation = kube::core::Rule::new("!has(self.automatedBackupReplication) || !has(self.backupRetentionPeriod) || self.backupRetentionPeriod > 0").message("automatedBackupReplication replicates automated backups: backupRetentionPeriod must be above 0 (RDS refuses StartDBInstanceAutomatedBackupsReplication otherwise)").field_path(".backupRetentionPeriod"),
)]
#[serde(rename_all = "camelCase")]
pub struct DBInstanceSpec {
    /// Name of the RDS instance (1-63 letters, digits or hyphens, starting with a letter, no two
    /// hyphens in a row, none at the end). Defaults to metadata.name, which must then follow the
    /// same rule. Immutable.
    #[schemars(length(min = 1, max = 63))]
    pub db_instance_identifier: Option<String>,

    /// Database engine, one RDS has: mysql, postgres, mariadb, aurora-mysql, aurora-postgresql,
    /// oracle-*, sqlserver-*, db2-*, custom-*. Immutable.
    #[schemars(length(min = 1))]
    pub engine: String,

    /// Engine version, e.g. "8.0" or "8.0.42". A shorter version matches any newer minor version RDS
    /// picks or upgrades to.
    pub engine_version: Option<String>,

    /// Instance class, e.g. db.t3.micro (db.serverless for an Aurora Serverless v2 member).
    #[schemars(regex(pattern = r"^db\.([a-z0-9-]+\.[a-z0-9-]+|serverless)$"))]
    pub db_instance_class: String,

    /// Storage in GiB. Required for every engine but Aurora, and but for a read replica, which
    /// inherits its source's, and a restore, which takes its snapshot's (or source's), unless this
    /// asks for more; RDS accepts 20 to 65536 depending on engine and storage type.
    #[schemars(range(min = 20, max = 65536))]
    pub allocated_storage: Option<i32>,

    /// Upper limit in GiB for storage autoscaling; unset disables autoscaling.
    #[schemars(range(min = 20, max = 65536))]
    pub max_allocated_storage: Option<i32>,

    /// Storage type.
    pub storage_type: Option<StorageType>,

    /// Provisioned IOPS (io1, io2, gp3).
    #[schemars(range(min = 0))]
    pub iops: Option<i32>,

    /// Name of the master user. Immutable.
    #[schemars(length(min = 1, max = 63))]
    pub master_username: Option<String>,

    /// Name of the database RDS creates in the instance. Immutable.
    pub db_name: Option<String>,

    /// Run a standby in another availability zone.
    #[serde(default, rename = "multiAZ", skip_serializing_if = "Option::is_none")]
    pub multi_az: Option<bool>,

    /// Give the instance a public DNS name.
    pub publicly_accessible: Option<bool>,

    /// DB parameter group.
    pub db_parameter_group_name: Option<String>,

    /// Days to keep automated backups (0 turns them off).
    #[schemars(range(min = 0, max = 35))]
    pub backup_retention_period: Option<i32>,

    /// Apply minor engine upgrades in the maintenance window.
    pub auto_minor_version_upgrade: Option<bool>,

    /// Storage throughput in MiB/s (gp3 only). Modifiable.
    #[schemars(range(min = 0))]
    pub storage_throughput: Option<i32>,

    /// The CA certificate of the instance's server certificate (e.g. rds-ca-rsa2048-g1).
    /// Modifiable; RDS applies it with a restart.
    pub ca_certificate_identifier: Option<String>,

    /// Database Insights, Performance Insights and Enhanced Monitoring.
    #[serde(flatten)]
    pub insights: crate::database::spec::Insights,

    /// IAM roles associated with the instance, each for a feature (s3Import, s3Export...).
    #[serde(flatten)]
    pub roles: crate::database::spec::Roles,

    /// The option group. Modifiable.
    pub option_group_name: Option<String>,

    /// IPV4 or DUAL. Modifiable.
    pub network_type: Option<NetworkType>,

    /// The license model (license-included, bring-your-own-license...). Modifiable.
    pub license_model: Option<String>,

    /// The Availability Zone of a single-AZ instance. Create-time only (immutable): a Multi-AZ
    /// failover moves the instance, which is not drift.
    pub availability_zone: Option<String>,

    /// The character set (Oracle, Db2, SQL Server). Create-time only (immutable).
    pub character_set_name: Option<String>,

    /// open-source-rds-extended-support or open-source-rds-extended-support-disabled.
    /// Create-time only (immutable).
    pub engine_lifecycle_support: Option<String>,

    /// Tags of the RDS instance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 40))]
    pub tags: Vec<Tag>,

    /// Delete the instance's automated backups with it. Default false: RDS keeps them for their
    /// retention period, so the database can still be restored to a point in time.
    pub delete_automated_backups: Option<bool>,

    /// The DBCluster of this namespace this instance is a member of (an Aurora writer or reader).
    /// The cluster owns storage, the master user and password, the database name, backups, the
    /// engine version, encryption, the port, security groups and the subnet group: a member
    /// refuses them at apply and never sends them. It waits (ReferencesUnresolved) until the
    /// DBCluster is Ready. Deleting a member never takes a final snapshot (RDS refuses one): the
    /// cluster's snapshots are the backup. Immutable.
    pub db_cluster_ref: Option<LocalRef>,

    /// The RDS identifier of the cluster this instance is a member of, instead of dbClusterRef:
    /// it must be the cluster of a DBCluster of this namespace. Immutable.
    #[schemars(length(min = 1, max = 63))]
    pub db_cluster_identifier: Option<String>,

    /// A member's failover priority, 0 (first) to 15.
    #[schemars(range(min = 0, max = 15))]
    pub promotion_tier: Option<i32>,

    /// The DBParameterGroup of this namespace whose parameters the instance uses, instead of
    /// dbParameterGroupName; waited for and protected like dbSubnetGroupRef.
    pub db_parameter_group_ref: Option<LocalRef>,

    /// An OptionGroup of this namespace to use, by name: its RDS name becomes optionGroupName.
    /// The instance waits until the group is Ready and is woken when it is; the group's deletion
    /// waits while the instance refers to it.
    pub option_group_ref: Option<LocalRef>,

    /// Create the instance from a DB snapshot or from a point in time of another instance instead
    /// of empty. Immutable. Settings RDS does not take at restore time (backup retention, storage,
    /// parameter group...) are applied by one ModifyDBInstance once the restored instance is
    /// available. The source must be this namespace's (its ownership tags, or those of the
    /// instance a snapshot was taken of) or granted to it (its tag rds.operator.rs/restorable-by,
    /// or the operator's --grant-restore); otherwise nothing is restored (RestoreSourceNotOwned).
    pub restore_from: Option<RestoreFrom>,

    /// Replicate the instance's automated backups to another region
    /// (StartDBInstanceAutomatedBackupsReplication there), for a restore to a point in time in that
    /// region. Removed, the replication this DBInstance started is stopped; one started outside
    /// the operator is left alone. Needs automated backups (backupRetentionPeriod above 0).
    pub automated_backup_replication: Option<BackupReplication>,

    /// Make the instance a read replica of this source (CreateDBInstanceReadReplica). What a
    /// replica inherits (master user and password, database name, engine, encryption, backups
    /// unless set) is taken from the source, never sent and never drift. The connection Secret has
    /// the replica's endpoint and the source's credentials (the source DBInstance's password, or
    /// masterUserPassword for a source by identifier or ARN). Remove replicaOf (or set promote)
    /// to promote the replica to a standalone instance: one PromoteReadReplica, then every rule
    /// of a standalone instance applies. Promotion is one-way: replicaOf cannot be added back.
    pub replica_of: Option<ReplicaOf>,

    /// Promote the read replica (as removing replicaOf does), keeping replicaOf in the manifest
    /// as a record. One-way.
    pub promote: Option<bool>,

    /// Whether the instance runs: spec.activation, or spec.activationSchedule.
    #[serde(flatten)]
    pub run: crate::database::activation::ActivationSpec,

    /// How long to keep the old instance (`<identifier>-old1`) after a switchover, such as 24h.
    /// Unset, it is kept and reported in status.blueGreen, never deleted by the operator. Once due,
    /// it is deleted as deletionPolicy says (Snapshot: after a final snapshot; Retain: never) and
    /// the deployment with it.
    pub old_instance_retention: Option<kube::core::Duration>,

    /// How often to compare the RDS instance with this spec once it is settled, as a duration such
    /// as 60s or 5m (at least 10s). Defaults to the operator's --drift-interval.
    #[x_kube(validation = kube::core::Rule::new("duration(self) >= duration('10s')").message("driftInterval must be a duration of at least 10s, such as 60s or 5m"))]
    pub drift_interval: Option<kube::core::Duration>,
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
    /// CloudWatch alarms on the instance's free storage, CPU, connections and (of a replica) lag,
    /// each with a default, notifying an SNS topic; kept by the operator and deleted with the
    /// DBInstance (docs/health.md).
    pub alarms: Option<crate::database::alarms::AlarmsSpec>,
    #[serde(flatten)]
    pub password: crate::database::spec::PasswordSource,
    #[serde(flatten)]
    pub deletion: crate::database::spec::Deletion,
    #[serde(flatten)]
    pub policies: crate::database::spec::Policies,
    #[serde(flatten)]
    pub connection: crate::database::spec::Connection,
}

impl DBInstance {
    /// The RDS identifier: spec.dbInstanceIdentifier or metadata.name, lower-cased as RDS stores it.
    pub fn identifier(&self) -> String {
        let spec = self.spec.db_instance_identifier.as_ref();
        crate::database::identifier::of(spec, self.metadata.name.as_ref())
    }
}

crate::placed!(DBInstance, |s| s.common.arn.is_some() || s.db_instance_status.is_some(),
    placement at common.placement);

/// The Coffee Manage database as the table tests start from it: MySQL 8.0 on a db.t3.micro with
/// 20 GiB of gp2.
#[cfg(test)]
pub(crate) fn coffee_spec() -> DBInstanceSpec {
    DBInstanceSpec {
        engine: "mysql".into(),
        engine_version: Some("8.0".into()),
        db_instance_class: "db.t3.micro".into(),
        allocated_storage: Some(20),
        storage_type: Some(StorageType::Gp2),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifier_defaults_to_name_and_is_lower_case() {
        let mut db = DBInstance::new("Coffee-DB", DBInstanceSpec::default());
        assert_eq!(db.identifier(), "coffee-db");
        db.spec.db_instance_identifier = Some("Other".into());
        assert_eq!(db.identifier(), "other");
    }

    #[test]
    fn schema_carries_immutability_rules_and_enums() {
        let yaml = crate::crd::yaml::<DBInstance>();
        for needle in [
            "engine is immutable",
            "dbName is immutable",
            "allocatedStorage is required",
            "- Retain",
            "- gp2",
            "x-kubernetes-list-map-keys",
        ] {
            assert!(yaml.contains(needle), "CRD lacks {needle:?}");
        }
    }
}
