//! What the operator reports of a DBInstance: its status, with conditions, drift records, the
//! restore and the dry run. Doc comments here become `kubectl explain` text.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use crate::database::parts::{DriftRecord, Endpoint};

/// What the operator observed and did.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DBInstanceStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// What both database kinds report alike.
    #[serde(flatten)]
    pub common: crate::database::status::DatabaseStatus,
    /// Identifier of the RDS instance.
    pub db_instance_identifier: Option<String>,
    /// The instance's state as RDS reports it (creating, available, modifying, deleting...).
    pub db_instance_status: Option<String>,
    /// The last difference found between RDS and the spec that nobody asked the operator to make.
    pub last_drift: Option<DriftRecord>,
    /// Things the user should know that are not failures (for example: a generated password under
    /// deletionPolicy Retain lives only in this namespace).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub advisories: Vec<String>,
    /// Where the instance was restored from (spec.restoreFrom, or a snapshot after an out-of-band
    /// deletion), and whether the settings RDS does not take at restore time have been sent since.
    pub restore: Option<RestoreStatus>,
    /// The AWS region and account of the instance (from its ARN).
    pub region: Option<String>,
    pub account_id: Option<String>,
    /// RDS's immutable resource id of the instance (db-...), as IAM database authentication and
    /// CloudWatch name it.
    pub dbi_resource_id: Option<String>,
    /// The latest time a point-in-time restore of the instance can reach (RFC 3339).
    pub latest_restorable_time: Option<String>,
    /// The CA certificate of the instance's server certificate, and when it expires (RFC 3339).
    pub ca_certificate_identifier: Option<String>,
    pub certificate_valid_till: Option<String>,
    /// The instance's parameter apply status as RDS reports it (in-sync, applying, pending-reboot).
    pub parameter_apply_status: Option<String>,
    /// The automated backup replication this DBInstance started (spec.automatedBackupReplication).
    pub automated_backup_replication: Option<crate::dbinstance::BackupReplicationStatus>,
    /// Read replication: the source of a replica, the replicas of a source, RDS's StatusInfos.
    pub replication: Option<ReplicationStatus>,
    /// The blue/green deployment (upgradePolicy BlueGreen): its state, the green instance, the
    /// switchover, and the old instance kept after it.
    pub blue_green: Option<BlueGreenStatus>,
}

/// Where the instance was restored from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct RestoreStatus {
    /// The snapshot, or the source instance and time.
    pub source: String,
    /// The settings RDS does not take at restore time have been sent (or none differed).
    #[serde(default)]
    pub settings_applied: bool,
}

/// The read replication of the instance, as RDS reports it.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicationStatus {
    /// Of a read replica: its source, as RDS names it.
    #[serde(
        default,
        rename = "sourceDBInstanceIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    pub source_db_instance_identifier: Option<String>,
    /// The read replicas of this instance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_replicas: Vec<String>,
    /// RDS's StatusInfos for the replication (status type `read replication`: replicating,
    /// replication degraded, error, stopped or terminated, and RDS's message). RDS reports the lag
    /// itself only to CloudWatch (ReplicaLag).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status_infos: Vec<ReplicationInfo>,
    /// The spec named the source (spec.replicaOf): removing replicaOf promotes the replica. A
    /// replica the spec never named (adopted, say) is promoted only by promote: true.
    pub replica_of_spec: Option<bool>,
    /// The replica was promoted to a standalone instance (PromoteReadReplica). Promotion is
    /// one-way.
    pub promoted: Option<bool>,
}

/// One of RDS's StatusInfos.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicationInfo {
    pub status_type: String,
    pub status: String,
    /// False when the replication is in error.
    pub normal: bool,
    pub message: Option<String>,
}

/// A blue/green deployment of the instance, as DescribeBlueGreenDeployments reports it, and what
/// the operator did.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlueGreenStatus {
    #[serde(flatten)]
    pub deployment: crate::database::blue_green::DeploymentStatus,
    /// The green instance before the switchover, and its endpoint.
    pub green_instance: Option<String>,
    pub green_endpoint: Option<Endpoint>,
    /// The old (blue) instance after the switchover, kept as spec.oldInstanceRetention says.
    pub old_instance: Option<String>,
}

pub use crate::database::blue_green::{BlueGreenTask, SwitchoverDetail};

#[cfg(test)]
mod tests {
    use super::*;

    /// The block both database kinds share is flattened: its fields stand in `status` itself, so a
    /// status written before the block existed reads back, and writes, the same.
    #[test]
    fn the_shared_block_reads_and_writes_its_fields_in_status_itself() {
        let json = serde_json::json!({
            "arn": "arn:aws:rds:us-east-1:123456789012:db:coffee",
            "engineVersion": "8.0.42",
            "appliedTagKeys": ["team"],
            "owned": true,
            "dbInstanceIdentifier": "coffee",
        });
        let status: DBInstanceStatus = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(status.common.engine_version.as_deref(), Some("8.0.42"));
        assert_eq!(status.common.applied_tag_keys, ["team"]);
        assert_eq!(status.db_instance_identifier.as_deref(), Some("coffee"));
        assert_eq!(serde_json::to_value(&status).unwrap(), json);
    }
}
