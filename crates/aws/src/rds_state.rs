//! What the operator sees of RDS: an instance, its snapshots, the account and region, a parameter
//! catalog. Plain values, read by the RDS adapter (`rds/`), kept by the observer and compared by
//! the plans. No I/O and no SDK types here.

use std::collections::BTreeMap;
use std::time::Duration;

/// An IAM role associated with an instance or a cluster, as RDS lists it (DBInstanceRole,
/// DBClusterRole).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedRole {
    pub role_arn: String,
    pub feature_name: Option<String>,
    /// ACTIVE, PENDING or INVALID.
    pub status: Option<String>,
}

/// What the operator sees of an RDS instance.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObservedInstance {
    pub identifier: String,
    pub status: String,
    pub arn: Option<String>,
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    pub db_instance_class: Option<String>,
    pub allocated_storage: Option<i32>,
    pub max_allocated_storage: Option<i32>,
    pub storage_type: Option<String>,
    pub iops: Option<i32>,
    pub multi_az: Option<bool>,
    pub publicly_accessible: Option<bool>,
    pub backup_retention_period: Option<i32>,
    pub preferred_backup_window: Option<String>,
    pub preferred_maintenance_window: Option<String>,
    pub auto_minor_version_upgrade: Option<bool>,
    pub deletion_protection: Option<bool>,
    pub copy_tags_to_snapshot: Option<bool>,
    pub vpc_security_group_ids: Vec<String>,
    pub db_parameter_group_name: Option<String>,
    /// in-sync, applying or pending-reboot.
    pub parameter_apply_status: Option<String>,
    pub storage_throughput: Option<i32>,
    pub enabled_cloudwatch_logs_exports: Vec<String>,
    pub iam_database_authentication_enabled: Option<bool>,
    /// standard or advanced.
    pub database_insights_mode: Option<String>,
    pub performance_insights_enabled: Option<bool>,
    pub performance_insights_retention_period: Option<i32>,
    pub performance_insights_kms_key_id: Option<String>,
    pub monitoring_interval: Option<i32>,
    pub monitoring_role_arn: Option<String>,
    pub option_group_name: Option<String>,
    pub network_type: Option<String>,
    pub license_model: Option<String>,
    /// The IAM roles associated with the instance (AssociatedRoles).
    pub associated_roles: Vec<ObservedRole>,
    /// RDS's immutable resource id (db-...).
    pub dbi_resource_id: Option<String>,
    /// The CA certificate the instance's server certificate is signed by, and when that expires
    /// (RFC 3339).
    pub ca_certificate_identifier: Option<String>,
    pub certificate_valid_till: Option<String>,
    /// The latest time a point-in-time restore can reach (RFC 3339).
    pub latest_restorable_time: Option<String>,
    pub db_subnet_group_name: Option<String>,
    pub master_username: Option<String>,
    pub db_name: Option<String>,
    pub address: Option<String>,
    pub port: Option<i32>,
    pub tags: BTreeMap<String, String>,
    pub pending_modified_values: BTreeMap<String, String>,
    /// The Secrets Manager secret of an RDS-managed master password.
    pub master_user_secret_arn: Option<String>,
    /// Its KMS key and status (MasterUserSecret.KmsKeyId, SecretStatus).
    pub master_user_secret_kms_key_id: Option<String>,
    pub master_user_secret_status: Option<String>,
    /// Of a read replica: its source instance, as RDS names it (an identifier, or an ARN for a
    /// source in another region).
    pub replica_source: Option<String>,
    /// Of an Aurora cluster's member: its cluster.
    pub db_cluster_identifier: Option<String>,
    /// The read replicas of this instance (identifiers, or ARNs in other regions).
    pub read_replicas: Vec<String>,
    /// RDS's StatusInfos: for a read replica, the state of its replication.
    pub status_infos: Vec<StatusInfo>,
    /// Its automated backups replicated to other regions (DBInstanceAutomatedBackupsReplications:
    /// the ARNs there).
    pub backup_replications: Vec<String>,
}

/// One of RDS's StatusInfos (DBInstanceStatusInfo): `read replication` and its state
/// (replicating, replication degraded, error, stopped, terminated).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusInfo {
    pub status_type: String,
    pub status: String,
    pub normal: bool,
    pub message: Option<String>,
}

/// A blue/green deployment, as DescribeBlueGreenDeployments reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedDeployment {
    pub identifier: String,
    pub name: String,
    /// Blue's ARN (after the switchover: the renamed old instance's or cluster's).
    pub source: String,
    /// Green's ARN (after the switchover: the instance or cluster that took blue's name).
    pub target: Option<String>,
    pub status: String,
    pub status_details: Option<String>,
    /// (source member, target member, state) of each member.
    pub switchover_details: Vec<(String, String, String)>,
    /// (name, state) of each task.
    pub tasks: Vec<(String, String)>,
}

/// What a blue/green deployment's green instance or cluster is made with: blue's settings but
/// these (API_CreateBlueGreenDeployment.html). A cluster's members take
/// `db_parameter_group_name` (TargetDBParameterGroupName) and `db_instance_class`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlueGreenTargets {
    pub engine_version: Option<String>,
    pub db_parameter_group_name: Option<String>,
    pub db_cluster_parameter_group_name: Option<String>,
    pub db_instance_class: Option<String>,
    pub storage_type: Option<String>,
}

/// A DB snapshot of an instance, as far as choosing one to restore needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotInfo {
    pub identifier: String,
    /// manual or automated.
    pub kind: String,
    /// available, creating...
    pub status: String,
    /// When it was taken: RFC 3339, and seconds since the epoch (for ordering).
    pub created: String,
    pub created_epoch: i64,
    /// The DbiResourceId of the instance it was taken of.
    pub dbi_resource_id: Option<String>,
    /// Its tags (the instance's, when it had copyTagsToSnapshot).
    pub tags: BTreeMap<String, String>,
}

/// The AWS account and region the operator works in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AwsIdentity {
    pub account: String,
    pub region: String,
    /// Who the operator is there (an assumed-role ARN through a chain of roles).
    pub caller_arn: String,
}

/// What the observer returned for one identifier, and how it knows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Observation {
    /// The instance, or None when RDS has none with the identifier.
    pub instance: Option<ObservedInstance>,
    /// Read by a DescribeDBInstances made for this call (not served from the shared poll).
    pub direct: bool,
}

/// RDS states in which the instance is changing by itself and worth looking at again soon.
const TRANSITIONAL: &[&str] = &[
    "creating",
    "modifying",
    "backing-up",
    "deleting",
    "rebooting",
    "renaming",
    "resetting-master-credentials",
    "upgrading",
    "configuring-enhanced-monitoring",
    "configuring-iam-database-auth",
    "configuring-log-exports",
    "converting-to-vpc",
    "maintenance",
    "moving-to-vpc",
    "starting",
    "stopping",
    "storage-optimization",
];

/// Whether RDS is in the middle of something with this instance.
pub fn is_transitional(status: &str) -> bool {
    TRANSITIONAL.contains(&status)
}

/// The poll intervals: AWS has no watch, so the requeue interval is the poll.
#[derive(Clone, Copy, Debug)]
pub struct PollIntervals {
    /// While RDS is creating, modifying, deleting...
    pub busy: Duration,
    /// Once the instance is settled (available, stopped, failed...).
    pub settled: Duration,
}

impl Default for PollIntervals {
    fn default() -> Self {
        PollIntervals {
            busy: Duration::from_secs(5),
            settled: Duration::from_secs(60),
        }
    }
}

impl PollIntervals {
    /// When to look again at an instance in this RDS state.
    pub fn after(&self, status: &str) -> Duration {
        if is_transitional(status) {
            self.busy
        } else {
            self.settled
        }
    }
}

/// How far the shown latest restorable time may lag behind RDS's.
pub const RESTORABLE_TIME_STEP: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// The latest restorable time to show: RDS moves it every few minutes (and an emulator on every
/// read), and every status write wakes a reconcile, so the shown one moves only once RDS's is
/// `RESTORABLE_TIME_STEP` ahead. A time that goes back (a restore) or cannot be read is shown as
/// RDS says.
pub fn restorable_time(shown: Option<&str>, observed: Option<&str>) -> Option<String> {
    let parse = |t: &str| t.parse::<k8s_openapi::jiff::Timestamp>().ok();
    match (shown.and_then(parse), observed.and_then(parse)) {
        (Some(old), Some(new))
            if new >= old && new.duration_since(old).unsigned_abs() < RESTORABLE_TIME_STEP =>
        {
            shown.map(str::to_owned)
        }
        _ => observed.map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_states_poll_fast_and_settled_ones_slow() {
        let p = PollIntervals::default();
        assert_eq!(p.after("creating"), p.busy);
        assert_eq!(p.after("backing-up"), p.busy);
        assert_eq!(p.after("deleting"), p.busy);
        assert_eq!(p.after("available"), p.settled);
        assert_eq!(p.after("failed"), p.settled);
    }
}

/// What RDS's catalog of a parameter group family says of one parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParameterInfo {
    /// `dynamic` (applied at once) or `static` (at the next reboot).
    pub apply_type: String,
    pub modifiable: bool,
}

/// RDS's catalog of a parameter group family: every parameter it knows
/// (DescribeEngineDefaultParameters).
pub type Catalog = BTreeMap<String, ParameterInfo>;

/// An RDS metric in CloudWatch (namespace AWS/RDS, dimension DBInstanceIdentifier) the operator
/// reads ("Amazon CloudWatch metrics for Amazon RDS", rds-metrics.html), with the statistic it
/// reads it by over the latest minute: the one that errs on the side of caution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// Seconds a replica is behind its source (-1: replication not active); the highest.
    ReplicaLag,
    /// Bytes of storage free; the lowest.
    FreeStorageSpace,
    /// Percent of CPU in use; the average.
    CpuUtilization,
    /// Client connections; the highest.
    DatabaseConnections,
    /// Milliseconds an Aurora reader is behind its writer; the highest ("Amazon Aurora metrics",
    /// rds-metrics.html: published for readers only).
    AuroraReplicaLag,
    /// Milliseconds the furthest Aurora reader is behind the writer, of a cluster; the highest
    /// (Aurora.AuroraMonitoring.Metrics.html).
    AuroraReplicaLagMaximum,
    /// Milliseconds a global database's secondary cluster is behind the primary, in the
    /// secondary's region; the highest (rds-metrics.html, "Amazon Aurora metrics").
    AuroraGlobalDbReplicationLag,
    /// Seconds a cluster replicating another by binlog (a blue/green deployment's green) is
    /// behind it, -1 when replication is not running; the highest
    /// (Aurora.AuroraMonitoring.Metrics.html).
    AuroraBinlogReplicaLag,
}

impl Metric {
    /// The metrics an alarm watches.
    pub const ALL: [Metric; 4] = [
        Metric::ReplicaLag,
        Metric::FreeStorageSpace,
        Metric::CpuUtilization,
        Metric::DatabaseConnections,
    ];

    /// Every metric the operator reads or alarms on.
    pub const KNOWN: [Metric; 8] = [
        Metric::ReplicaLag,
        Metric::FreeStorageSpace,
        Metric::CpuUtilization,
        Metric::DatabaseConnections,
        Metric::AuroraReplicaLag,
        Metric::AuroraReplicaLagMaximum,
        Metric::AuroraGlobalDbReplicationLag,
        Metric::AuroraBinlogReplicaLag,
    ];

    /// CloudWatch's name of the metric.
    pub fn name(self) -> &'static str {
        match self {
            Metric::AuroraReplicaLagMaximum => "AuroraReplicaLagMaximum",
            Metric::AuroraGlobalDbReplicationLag => "AuroraGlobalDBReplicationLag",
            Metric::AuroraBinlogReplicaLag => "AuroraBinlogReplicaLag",
            Metric::ReplicaLag => "ReplicaLag",
            Metric::FreeStorageSpace => "FreeStorageSpace",
            Metric::CpuUtilization => "CPUUtilization",
            Metric::DatabaseConnections => "DatabaseConnections",
            Metric::AuroraReplicaLag => "AuroraReplicaLag",
        }
    }

    /// The statistic the operator reads and alarms on.
    pub fn statistic(self) -> &'static str {
        match self {
            Metric::ReplicaLag
            | Metric::DatabaseConnections
            | Metric::AuroraReplicaLag
            | Metric::AuroraReplicaLagMaximum
            | Metric::AuroraGlobalDbReplicationLag
            | Metric::AuroraBinlogReplicaLag => "Maximum",
            Metric::FreeStorageSpace => "Minimum",
            Metric::CpuUtilization => "Average",
        }
    }
}

/// What CloudWatch said of an instance over the latest minute it has figures for; None where it
/// has none (a metric RDS does not publish for this instance, as ReplicaLag of a source).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObservedHealth {
    pub replica_lag_seconds: Option<f64>,
    pub free_storage_bytes: Option<f64>,
    pub cpu_percent: Option<f64>,
    pub connections: Option<f64>,
}

impl ObservedHealth {
    /// Takes the figure of one metric (Aurora's lags, in milliseconds, in seconds as a replica's).
    pub fn set(&mut self, metric: Metric, value: f64) {
        match metric {
            Metric::ReplicaLag | Metric::AuroraBinlogReplicaLag => {
                self.replica_lag_seconds = Some(value)
            }
            Metric::AuroraReplicaLag
            | Metric::AuroraReplicaLagMaximum
            | Metric::AuroraGlobalDbReplicationLag => {
                let seconds = if value < 0.0 { value } else { value / 1000.0 };
                self.replica_lag_seconds = Some(seconds);
            }
            Metric::FreeStorageSpace => self.free_storage_bytes = Some(value),
            Metric::CpuUtilization => self.cpu_percent = Some(value),
            Metric::DatabaseConnections => self.connections = Some(value),
        }
    }
}

/// A CloudWatch alarm on one RDS metric of one instance, as the operator makes it
/// (PutMetricAlarm) and reads it back (DescribeAlarms): the metric by its statistic over one
/// minute, above or below a threshold, notifying a topic when it goes to ALARM and back to OK.
#[derive(Clone, Debug, PartialEq)]
pub struct AlarmConfig {
    pub name: String,
    /// The instance (dimension DBInstanceIdentifier), or the cluster.
    pub identifier: String,
    /// Of a cluster (dimension DBClusterIdentifier: the figures of all its instances).
    pub cluster: bool,
    pub metric: Metric,
    /// GreaterThanThreshold (true) or LessThanThreshold.
    pub above: bool,
    pub threshold: f64,
    /// The SNS topic of its AlarmActions and OKActions.
    pub topic: Option<String>,
}

impl AlarmConfig {
    /// What the alarms of one database are found by ([`database_key`]).
    pub fn owner_key(&self) -> String {
        database_key(&self.identifier, self.cluster)
    }
}

/// What a database's figures and alarms are found by, and which dimension of CloudWatch names
/// it: an instance's identifier (DBInstanceIdentifier), or `cluster/<identifier>`
/// (DBClusterIdentifier; an instance and a cluster may share an identifier, neither holds a
/// slash).
pub fn database_key(identifier: &str, cluster: bool) -> String {
    match cluster {
        true => format!("{CLUSTER_KEY}{identifier}"),
        false => identifier.to_owned(),
    }
}

/// The prefix of a cluster's [`database_key`].
pub const CLUSTER_KEY: &str = "cluster/";

/// An alarm as DescribeAlarms answers: its configuration, and its state (OK, ALARM,
/// INSUFFICIENT_DATA) with CloudWatch's reason.
#[derive(Clone, Debug, PartialEq)]
pub struct ObservedAlarm {
    pub config: AlarmConfig,
    pub state: String,
    pub reason: Option<String>,
}
