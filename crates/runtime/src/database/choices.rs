//! The enumerated choices of the database kinds (DBInstance and DBCluster): the storage type and
//! the network type, what deletion (the user's, or one outside the operator) does, and their policies
//! (drift, pending reboots, management, adoption, upgrades). Doc comments here become `kubectl explain`
//! text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// RDS storage types.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StorageType {
    Standard,
    Gp2,
    Gp3,
    Io1,
    Io2,
}

impl StorageType {
    pub fn as_str(self) -> &'static str {
        match self {
            StorageType::Standard => "standard",
            StorageType::Gp2 => "gp2",
            StorageType::Gp3 => "gp3",
            StorageType::Io1 => "io1",
            StorageType::Io2 => "io2",
        }
    }
}

/// What deleting the DBInstance does to the RDS instance.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum DeletionPolicy {
    /// Delete the RDS instance after a final snapshot.
    #[default]
    Snapshot,
    /// Leave the RDS instance running; only the DBInstance goes.
    Retain,
    /// Delete the RDS instance without a final snapshot.
    Delete,
}

/// What to do when the RDS instance is deleted outside the operator.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum OutOfBandDeletionPolicy {
    /// Restore from the newest snapshot of the identifier; with none, report and wait.
    #[default]
    Restore,
    /// Restore from the newest snapshot; with none, create a new, empty instance.
    RestoreOrCreateEmpty,
}

/// Whether the database runs.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum Activation {
    /// Started when it is stopped.
    #[default]
    Running,
    /// Stopped, and stopped again when RDS starts it by itself after 7 days.
    Stopped,
}

/// What to do about changes made outside the operator.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum DriftPolicy {
    /// Put the instance back to the spec.
    #[default]
    Correct,
    /// Only report the difference.
    Report,
}

/// The instance's network type.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum NetworkType {
    Ipv4,
    Dual,
}

impl NetworkType {
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkType::Ipv4 => "IPV4",
            NetworkType::Dual => "DUAL",
        }
    }
}

/// What to do about static parameter changes that wait for a reboot.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum PendingRebootPolicy {
    /// Only report it (Synced=False, reason PendingReboot).
    #[default]
    Report,
    /// Reboot the instance at once (one RebootDBInstance).
    Reboot,
    /// Reboot during the instance's preferred maintenance window.
    MaintenanceWindow,
}

/// Whether the operator changes the RDS instance.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum ManagementPolicy {
    /// Create, correct and delete the instance.
    #[default]
    Full,
    /// Never change or delete the instance: only report it and write the connection Secret.
    ObserveOnly,
}

/// Whether to take over an existing RDS resource that is not this object's.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum AdoptionPolicy {
    /// Never: an existing one is refused.
    #[default]
    Never,
    /// Adopt an existing one; create none.
    Adopt,
    /// Adopt an existing one, or create one when there is none.
    AdoptOrCreate,
}

/// How a spec change that RDS would apply with an outage is made.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum UpgradePolicy {
    /// One ModifyDBInstance, as for any change.
    #[default]
    InPlace,
    /// A blue/green deployment: a synchronised green copy with the change, switched over once
    /// approved.
    BlueGreen,
}

/// When a blue/green deployment is switched over.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum SwitchoverPolicy {
    /// Once a person approves it (spec.switchover, or the annotation rds.operator.rs/switchover).
    #[default]
    Manual,
    /// As soon as RDS reports the deployment AVAILABLE.
    Auto,
}

/// A DB cluster's engines: Aurora's, and RDS for MySQL and PostgreSQL's Multi-AZ DB clusters.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, schemars::JsonSchema,
)]
pub enum ClusterEngine {
    #[default]
    #[serde(rename = "aurora-mysql")]
    AuroraMysql,
    #[serde(rename = "aurora-postgresql")]
    AuroraPostgresql,
    /// RDS for MySQL: a Multi-AZ DB cluster.
    #[serde(rename = "mysql")]
    Mysql,
    /// RDS for PostgreSQL: a Multi-AZ DB cluster.
    #[serde(rename = "postgres")]
    Postgres,
}

impl ClusterEngine {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterEngine::AuroraMysql => "aurora-mysql",
            ClusterEngine::AuroraPostgresql => "aurora-postgresql",
            ClusterEngine::Mysql => "mysql",
            ClusterEngine::Postgres => "postgres",
        }
    }

    /// A Multi-AZ DB cluster's engine (mysql, postgres): RDS makes the cluster's writer and two
    /// readers itself (multi-az-db-clusters-concepts.html).
    pub fn multi_az(self) -> bool {
        matches!(self, ClusterEngine::Mysql | ClusterEngine::Postgres)
    }
}

/// The mode of Database Insights (API_CreateDBInstance.html, DatabaseInsightsMode).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DatabaseInsightsMode {
    Standard,
    Advanced,
}

impl DatabaseInsightsMode {
    pub fn as_str(self) -> &'static str {
        match self {
            DatabaseInsightsMode::Standard => "standard",
            DatabaseInsightsMode::Advanced => "advanced",
        }
    }
}

/// A cluster's storage (API_CreateDBCluster.html, StorageType): aurora or aurora-iopt1 for Aurora,
/// io1, io2 or gp3 for a Multi-AZ DB cluster.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum ClusterStorageType {
    /// Aurora Standard: I/O billed per request.
    #[serde(rename = "aurora")]
    Aurora,
    /// Aurora I/O-Optimized: no charge per I/O.
    #[serde(rename = "aurora-iopt1")]
    AuroraIopt1,
    /// Provisioned IOPS SSD (a Multi-AZ DB cluster's default).
    #[serde(rename = "io1")]
    Io1,
    /// Provisioned IOPS SSD, Block Express (Multi-AZ DB clusters).
    #[serde(rename = "io2")]
    Io2,
    /// General Purpose SSD gp3 (Multi-AZ DB clusters).
    #[serde(rename = "gp3")]
    Gp3,
}

impl ClusterStorageType {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterStorageType::Aurora => "aurora",
            ClusterStorageType::AuroraIopt1 => "aurora-iopt1",
            ClusterStorageType::Io1 => "io1",
            ClusterStorageType::Io2 => "io2",
            ClusterStorageType::Gp3 => "gp3",
        }
    }
}

/// How an Aurora cluster scales (API_CreateDBCluster.html, ClusterScalabilityType): standard (RDS's
/// default: it grows by its instances) or limitless (Aurora PostgreSQL Limitless Database: its DB
/// shard group's routers and shards, a DBShardGroup of the namespace).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClusterScalabilityType {
    Standard,
    Limitless,
}

impl ClusterScalabilityType {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterScalabilityType::Standard => "standard",
            ClusterScalabilityType::Limitless => "limitless",
        }
    }
}
