//! The groups of spec fields both database kinds (DBInstance and DBCluster) have, each written once
//! with its doc text and schema and flattened into both specs: the JSON and the CRD are as if
//! each field were the spec's own. Doc comments here become `kubectl explain` text.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use super::choices::{
    AdoptionPolicy, DeletionPolicy, DriftPolicy, ManagementPolicy, OutOfBandDeletionPolicy,
    PendingRebootPolicy, SwitchoverPolicy, UpgradePolicy,
};
use super::parts::{ConnectionSecretSpec, SecretKeyReference};
use crate::crd::LocalRef;

/// Where the database is reached: its VPC (subnet group, security groups) and port.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Network {
    /// DB subnet group that places the instance or cluster in a VPC.
    pub db_subnet_group_name: Option<String>,
    /// The DBSubnetGroup of this namespace to place the instance or cluster in, instead of
    /// dbSubnetGroupName. The object waits (Synced=False, ReferencesUnresolved) until it is Ready;
    /// the group is not deleted while a DBInstance refers to it.
    pub db_subnet_group_ref: Option<LocalRef>,
    /// VPC security groups of the instance or cluster.
    #[serde(
        default,
        rename = "vpcSecurityGroupIDs",
        skip_serializing_if = "Option::is_none"
    )]
    pub vpc_security_group_ids: Option<Vec<String>>,
    /// Port the database listens on; defaults to the engine's port.
    #[schemars(range(min = 1150, max = 65535))]
    pub port: Option<i32>,
}

/// How the data is protected and audited: storage encryption, IAM authentication, log exports.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Security {
    /// Whether the storage is encrypted. Immutable.
    pub storage_encrypted: Option<bool>,
    /// KMS key for storage encryption. Immutable.
    #[serde(default, rename = "kmsKeyID", skip_serializing_if = "Option::is_none")]
    pub kms_key_id: Option<String>,
    /// IAM database authentication. Modifiable.
    #[serde(
        default,
        rename = "enableIAMDatabaseAuthentication",
        skip_serializing_if = "Option::is_none"
    )]
    pub enable_iam_database_authentication: Option<bool>,
    /// Log types exported to CloudWatch Logs (e.g. audit, error, general, slowquery; postgresql).
    /// Modifiable: the differences are enabled and disabled in one change.
    #[serde(
        default,
        rename = "enableCloudwatchLogsExports",
        skip_serializing_if = "Option::is_none"
    )]
    pub enable_cloudwatch_logs_exports: Option<Vec<String>>,
}

/// Database Insights, Performance Insights and Enhanced Monitoring. Left out, each is what RDS
/// makes it (Database Insights standard, Performance Insights off, monitoring interval 0) and
/// never compared: a spec without them costs no call.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Insights {
    /// standard or advanced (RDS's default: standard). Advanced needs Performance Insights on with
    /// 465 days of retention. An Aurora member takes its cluster's. Modifiable.
    pub database_insights_mode: Option<crate::database::choices::DatabaseInsightsMode>,
    /// Performance Insights, its retention in days (7, 31 x months, or 731) and KMS key. Modifiable
    /// (the key only until it is first set).
    pub enable_performance_insights: Option<bool>,
    #[schemars(range(min = 7, max = 731))]
    pub performance_insights_retention_period: Option<i32>,
    #[serde(
        default,
        rename = "performanceInsightsKMSKeyID",
        skip_serializing_if = "Option::is_none"
    )]
    pub performance_insights_kms_key_id: Option<String>,
    /// Enhanced Monitoring: the interval in seconds (0, 1, 5, 10, 15, 30, 60) and the role it
    /// publishes with. Modifiable.
    #[schemars(range(min = 0, max = 60))]
    pub monitoring_interval: Option<i32>,
    #[serde(
        default,
        rename = "monitoringRoleARN",
        skip_serializing_if = "Option::is_none"
    )]
    pub monitoring_role_arn: Option<String>,
}

/// An IAM role to associate with the database, for a feature (s3Import, s3Export, Lambda...).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssociatedRole {
    /// The role's ARN.
    #[serde(rename = "roleARN")]
    #[schemars(length(min = 20, max = 2048))]
    pub role_arn: String,
    /// The feature the role is for, as DescribeDBEngineVersions' SupportedFeatureNames names it.
    /// Required on a DBInstance.
    #[schemars(length(min = 1, max = 64))]
    pub feature_name: Option<String>,
}

/// The IAM roles the database is associated with (AddRoleToDBInstance, AddRoleToDBCluster).
/// A role the spec listed is removed when the spec drops it; one only ever associated outside
/// the operator is reported in status and kept.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Roles {
    /// The roles, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 10))]
    #[x_kube(validation = kube::core::Rule::new("self.all(r, self.filter(s, s.roleARN == r.roleARN).size() == 1)").message("associatedRoles: each roleARN once"))]
    pub associated_roles: Vec<AssociatedRole>,
}

/// When automated backups are taken, and what snapshots carry.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Backups {
    /// Daily backup window, hh24:mi-hh24:mi in UTC.
    pub preferred_backup_window: Option<String>,
    /// Copy the instance's or cluster's tags to its snapshots. Unset, one the operator creates or
    /// restores gets true: its ownership tags on a snapshot are what lets the namespace restore
    /// from that snapshot later (a multi-tenant rule).
    pub copy_tags_to_snapshot: Option<bool>,
}

/// When and how changes are applied: the maintenance window, major upgrades, pending reboots.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Maintenance {
    /// Weekly maintenance window, ddd:hh24:mi-ddd:hh24:mi in UTC.
    pub preferred_maintenance_window: Option<String>,
    /// Allow engineVersion to move to a new major version.
    pub allow_major_version_upgrade: Option<bool>,
    /// Apply changes now (default) or in the next maintenance window; until then a DBInstance
    /// shows them in status.pendingModifiedValues.
    pub apply_immediately: Option<bool>,
    /// What to do when RDS holds static parameter changes until a reboot (an instance's parameter
    /// apply status, or a cluster member's, is pending-reboot): Report (default: only report it,
    /// reason PendingReboot), Reboot (at once: one RebootDBInstance for an instance; a cluster's
    /// members one at a time, readers first and the writer last, each once all members are
    /// available) or MaintenanceWindow (the same, during the preferred maintenance window).
    #[serde(default)]
    pub pending_reboot_policy: PendingRebootPolicy,
    /// What to do with the maintenance RDS schedules (status.pendingMaintenanceActions): Report
    /// (default: list it; apply only the action an annotation rds.operator.rs/apply-maintenance
    /// names, at once), NextWindow (opt every action in for the next maintenance window) or
    /// Immediate (apply every action at once, never while RDS is busy). Each action is sent once.
    #[serde(default)]
    pub maintenance_policy: crate::maintenance::MaintenancePolicy,
}

/// Where the master password comes from. The rule that reads and applies it is written once too
/// (`database::password`).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordSource {
    /// Secret (in the object's own namespace) and key holding the master password. With neither
    /// this nor manageMasterUserPassword, the operator generates a strong password and keeps it in
    /// the Secret `<name>-master-password`, which it owns.
    pub master_user_password: Option<SecretKeyReference>,
    /// Let RDS generate the master password and keep it in AWS Secrets Manager; the operator copies
    /// the current value (rotations included) into the connection Secret. The annotation
    /// rds.operator.rs/rotate-now, set to a new value, has RDS rotate it at once (once per value).
    pub manage_master_user_password: Option<bool>,
    /// With manageMasterUserPassword: the KMS key RDS encrypts the secret with (key ARN, key ID,
    /// alias ARN or alias name), sent when the database is made; default aws/secretsmanager. RDS
    /// cannot change the key of a secret it manages, so a later change is never sent;
    /// status.masterUserSecret shows the key RDS uses.
    #[schemars(length(min = 1, max = 2048))]
    pub master_user_secret_kms_key_id: Option<String>,
    /// With manageMasterUserPassword: how often Secrets Manager rotates the secret RDS manages
    /// (its rotation rules; RDS's default is every 7 days), kept as the spec says.
    pub master_user_secret_rotation: Option<crate::database::parts::SecretRotation>,
}

/// What deleting the object, or a deletion outside the operator, does to the database.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Deletion {
    /// Refuse DeleteDBInstance (DeleteDBCluster) while true.
    pub deletion_protection: Option<bool>,
    /// What happens to the RDS instance or cluster when this object is deleted, whatever deletes it
    /// (kubectl, a GitOps prune, its namespace being deleted, the CRD being deleted while the
    /// operator runs): Snapshot (default: delete it after a final snapshot), Retain (keep it) or
    /// Delete (delete it without a final snapshot). An instance's automated backups are kept
    /// unless deleteAutomatedBackups; a cluster waits (InUse) while member instances exist.
    #[serde(default)]
    pub deletion_policy: DeletionPolicy,
    /// Name of the final snapshot deletionPolicy Snapshot takes. Defaults to
    /// `<identifier>-final-<uid prefix>-<deletion time>`, unique per deletion.
    #[serde(
        default,
        rename = "finalDBSnapshotIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(
        length(min = 1, max = 255),
        regex(pattern = r"^[a-zA-Z][a-zA-Z0-9-]*$")
    )]
    pub final_db_snapshot_identifier: Option<String>,
    /// What to do when the RDS instance or cluster is deleted outside the operator (driftPolicy
    /// Correct): Restore (default: restore it from the newest snapshot of its own; with none,
    /// report DeletedOutOfBand and wait) or RestoreOrCreateEmpty (with no snapshot, create a new,
    /// empty one). The absence is confirmed by direct reads first, and nothing is created when the
    /// operator's AWS account or region differs from the one in its ARN.
    #[serde(default)]
    pub out_of_band_deletion_policy: OutOfBandDeletionPolicy,
}

/// What the operator may do to the database: manage it or only observe it, take over one that is
/// not its own, and correct what changed outside it.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Policies {
    /// Whether the operator changes the RDS instance or cluster: Full (default: create it, correct
    /// it, delete it as deletionPolicy says) or ObserveOnly (never change or delete it; report its
    /// state and differences, and write the connection Secret from masterUserPassword or the
    /// RDS-managed password). One that carries the ownership tags of an object of another
    /// namespace is never observed; one nobody owns only when granted to this namespace (its tag
    /// rds.operator.rs/adoptable-by, or the operator's --grant-adoption). One only observed is
    /// never restored or created again when it goes, even after a switch to Full.
    #[serde(default)]
    pub management_policy: ManagementPolicy,
    /// What to do when an RDS instance or cluster with the identifier exists and is not this
    /// object's: Never (when left out: refuse it, IdentifierInUse), Adopt (take it over; create
    /// nothing) or AdoptOrCreate (take it over, or create it when there is none). Adoption only
    /// adds the ownership tags; differences from the spec are reported and put right only after
    /// the spec is next changed, and the master password is never changed by it. One of another
    /// namespace's object, or of one that still exists, is never adopted. An instance retained by
    /// a DBInstance of the same namespace and name is adopted without asking. One nobody owns is
    /// adopted only when a platform admin granted it to this namespace (its tag
    /// rds.operator.rs/adoptable-by, or the operator's --grant-adoption), and not while an object
    /// of another namespace observes it. ACK's annotation services.k8s.aws/adoption-policy
    /// (adopt, adopt-or-create) says the same on a DBInstance.
    pub adoption_policy: Option<AdoptionPolicy>,
    /// What to do when the RDS instance or cluster differs from this spec because of a change made
    /// outside the operator: Correct (default: put it back, recreate a deleted one) or Report (only
    /// report it in status and Events). Edits of this spec are applied either way.
    #[serde(default)]
    pub drift_policy: DriftPolicy,
}

/// How a change RDS applies with an outage is made, and when a blue/green deployment is switched
/// over (docs/blue-green.md).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Upgrade {
    /// How a change RDS applies with an outage is made: InPlace (default: one ModifyDBInstance or
    /// ModifyDBCluster) or BlueGreen (CreateBlueGreenDeployment: a synchronised green copy with
    /// the change, reported in status.blueGreen and switched over once approved; the identifier,
    /// endpoint and connection Secret stay the same). An instance's engineVersion,
    /// dbParameterGroupName, dbInstanceClass and storageType go blue/green; a cluster's
    /// engineVersion does, with its parameter groups. Other changes are sent in place first.
    #[serde(default)]
    pub upgrade_policy: UpgradePolicy,
    /// Approves the switchover of this blue/green deployment (status.blueGreen.
    /// deploymentIdentifier); the annotation rds.operator.rs/switchover: "true" does the same once.
    pub switchover: Option<String>,
    /// Manual (default: wait for approval) or Auto (switch over once RDS reports the deployment
    /// AVAILABLE).
    #[serde(default)]
    pub switchover_policy: SwitchoverPolicy,
    /// Seconds RDS may take to switch over before it rolls back (30 to 3600; RDS's default 300).
    #[schemars(range(min = 30, max = 3600))]
    pub switchover_timeout: Option<i32>,
    /// The most seconds green may be behind blue (CloudWatch's ReplicaLag of the green instance,
    /// AuroraBinlogReplicaLag of the green cluster) for an approved switchover to go: while green is further behind, or its lag is not known,
    /// the switchover waits, and Synced says why with the figure (docs/health.md).
    #[schemars(range(min = 0, max = 86400))]
    pub max_lag_seconds: Option<i32>,
}

/// The connection Secret the object writes.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    /// Secret to write the connection details to, for applications to consume with envFrom:
    /// host (a cluster's writer endpoint), readerHost (a cluster's reader endpoint),
    /// shardGroupHost (a limitless cluster's DB shard group endpoint, once it has one), port,
    /// username, password, dbname, engine and uri, plus extraKeys templates over all of them.
    pub connection_secret: Option<ConnectionSecretSpec>,
}

/// A backup in Amazon S3 to make the database of (RestoreDBInstanceFromS3): the files a backup
/// tool wrote under a prefix of a bucket, read by RDS as an IAM role.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct S3Source {
    /// The bucket the backup is in (S3BucketName).
    #[schemars(length(min = 3, max = 63))]
    pub bucket: String,
    /// The prefix of the backup's files in the bucket (S3Prefix); default: the whole bucket.
    #[schemars(length(max = 1024))]
    pub prefix: Option<String>,
    /// The ARN of the IAM role RDS reads the bucket as (S3IngestionRoleArn). It must be this
    /// namespace's: under the IAM path /rds-operator/<namespace>/, or any role when the operator's
    /// --grant-roles lists the namespace (docs/tenancy.md).
    #[x_kube(validation = kube::core::Rule::new("self.matches('^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$')").message("ingestionRole must be an IAM role ARN"))]
    pub ingestion_role: String,
    /// The engine the backup was made of (SourceEngine): mysql.
    #[x_kube(validation = kube::core::Rule::new("self == 'mysql'").message("sourceEngine must be mysql: RDS restores only MySQL backups from S3"))]
    pub source_engine: String,
    /// The version of the engine the backup was made of (SourceEngineVersion), e.g. 8.0.42.
    #[schemars(length(min = 1, max = 32))]
    pub source_engine_version: String,
}

impl S3Source {
    /// Where the backup is, as `s3://bucket/prefix`: what status and the dry run name.
    pub fn location(&self) -> String {
        let prefix = self.prefix.as_deref().unwrap_or_default();
        format!("s3://{}/{prefix}", self.bucket)
    }
}
