//! What a DBInstance's spec refers to: where an instance's data comes from, when not empty (a DB
//! snapshot or a point in time of another instance, spec.restoreFrom; a read replica's source,
//! spec.replicaOf), the Secret key of its password, and the connection Secret it writes. Doc
//! comments here become `kubectl explain` text.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// Where a new instance's data comes from: a DB snapshot, a point in time of another instance, or
/// a backup in S3.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = kube::core::Rule::new("[has(self.dbSnapshotIdentifier), has(self.dbSnapshotRef), has(self.sourceDBInstanceIdentifier), has(self.s3)].filter(x, x).size() == 1").message("set one of dbSnapshotIdentifier, dbSnapshotRef, sourceDBInstanceIdentifier and s3"),
    validation = kube::core::Rule::new("!has(self.sourceDBInstanceIdentifier) || (has(self.restoreTime) != (has(self.useLatestRestorableTime) && self.useLatestRestorableTime))").message("with sourceDBInstanceIdentifier, set either restoreTime or useLatestRestorableTime: true"),
    validation = kube::core::Rule::new("has(self.sourceDBInstanceIdentifier) || (!has(self.restoreTime) && !has(self.useLatestRestorableTime))").message("restoreTime and useLatestRestorableTime go with sourceDBInstanceIdentifier"),
)]
pub struct RestoreFrom {
    /// The DB snapshot to restore (RestoreDBInstanceFromDBSnapshot): its identifier or ARN.
    #[serde(
        default,
        rename = "dbSnapshotIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 2048))]
    pub db_snapshot_identifier: Option<String>,
    /// A DBSnapshot of this namespace to restore; the instance waits (ReferencesUnresolved) until
    /// the snapshot is available.
    #[serde(
        default,
        rename = "dbSnapshotRef",
        skip_serializing_if = "Option::is_none"
    )]
    pub db_snapshot_ref: Option<crate::crd::LocalRef>,
    /// The instance whose backups to restore from (RestoreDBInstanceToPointInTime).
    #[serde(
        default,
        rename = "sourceDBInstanceIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 2048))]
    pub source_db_instance_identifier: Option<String>,
    /// The time to restore to, RFC 3339 (e.g. 2026-11-30T04:00:00Z).
    #[x_kube(validation = kube::core::Rule::new("self.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$')").message("restoreTime must be an RFC 3339 time such as 2026-11-30T04:00:00Z"))]
    pub restore_time: Option<String>,
    /// Restore to the latest restorable time instead of restoreTime.
    pub use_latest_restorable_time: Option<bool>,
    /// A backup in S3 (RestoreDBInstanceFromS3): the instance is made with the spec's settings,
    /// master user and password, as CreateDBInstance would, and RDS loads the backup into it.
    pub s3: Option<crate::database::spec::S3Source>,
}

/// The source instance of a read replica: a DBInstance of this namespace (name), or an RDS
/// instance by its identifier or ARN (an ARN for a source in another region of the account). A
/// source no DBInstance of this namespace manages must be this namespace's own by its tags, or
/// granted to it (its tag rds.operator.rs/restorable-by, or the operator's --grant-restore), as for
/// spec.restoreFrom: a replica is a copy of the data.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = kube::core::Rule::new("[has(self.name), has(self.dbInstanceIdentifier), has(self.arn)].filter(x, x).size() == 1").message("replicaOf names its source once: name, dbInstanceIdentifier or arn"),
)]
pub struct ReplicaOf {
    /// A DBInstance of this namespace; the replica waits (ReferencesUnresolved) until it is Ready.
    #[schemars(length(min = 1, max = 253))]
    pub name: Option<String>,
    /// The RDS identifier of an instance in the replica's account and region.
    #[serde(
        default,
        rename = "dbInstanceIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 63))]
    pub db_instance_identifier: Option<String>,
    /// The ARN of an instance, in the replica's region or another region of its account.
    #[schemars(regex(
        pattern = r"^arn:aws[a-z-]*:rds:[a-z0-9-]+:[0-9]{12}:db:[a-zA-Z][a-zA-Z0-9-]*$"
    ))]
    pub arn: Option<String>,
}

/// Where, and how long, an instance's automated backups are replicated.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackupReplication {
    /// The destination region (e.g. us-west-2): another region than the instance's.
    #[schemars(
        length(min = 1, max = 32),
        regex(pattern = r"^[a-z]{2}(-[a-z]+)+-[0-9]$")
    )]
    pub region: String,
    /// Days the replicated backups are kept there (1 to 35; RDS's default: 7).
    #[schemars(range(min = 1, max = 35))]
    pub retention_period: Option<i32>,
    /// The KMS key of the destination region the replicated backups are encrypted with (needed
    /// for an encrypted instance).
    #[serde(default, rename = "kmsKeyID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048))]
    pub kms_key_id: Option<String>,
}

/// The backup replication this DBInstance started, as RDS reports it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackupReplicationStatus {
    /// The destination region.
    pub region: String,
    /// The replicated backups' ARN there, once RDS lists it.
    #[serde(
        default,
        rename = "automatedBackupsARN",
        skip_serializing_if = "Option::is_none"
    )]
    pub automated_backups_arn: Option<String>,
}
