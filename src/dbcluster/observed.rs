//! An RDS cluster as DescribeDBClusters shows it, the way the plan reads it.

use std::collections::BTreeMap;

/// An RDS cluster as DescribeDBClusters shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObservedCluster {
    pub identifier: String,
    /// DbClusterResourceId: the cluster's own, which a later cluster of the name does not share.
    pub resource_id: Option<String>,
    pub status: String,
    pub arn: Option<String>,
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    pub port: Option<i32>,
    pub endpoint: Option<String>,
    pub reader_endpoint: Option<String>,
    pub master_username: Option<String>,
    pub database_name: Option<String>,
    pub backup_retention_period: Option<i32>,
    pub preferred_backup_window: Option<String>,
    pub preferred_maintenance_window: Option<String>,
    pub db_subnet_group_name: Option<String>,
    pub vpc_security_group_ids: Vec<String>,
    pub db_cluster_parameter_group_name: Option<String>,
    pub storage_encrypted: Option<bool>,
    pub iam_database_authentication_enabled: Option<bool>,
    pub enabled_cloudwatch_logs_exports: Vec<String>,
    pub deletion_protection: Option<bool>,
    pub copy_tags_to_snapshot: Option<bool>,
    /// Serverless v2 capacity (min, max).
    pub serverless_v2: Option<(f64, f64)>,
    pub tags: BTreeMap<String, String>,
    pub pending_modified_values: BTreeMap<String, String>,
    /// The cluster's instances as DBClusterMembers lists them.
    pub members: Vec<ObservedMember>,
    pub master_user_secret_arn: Option<String>,
    pub master_user_secret_kms_key_id: Option<String>,
    pub master_user_secret_status: Option<String>,
    /// The global database the cluster is a member of (GlobalClusterIdentifier).
    pub global_cluster: Option<String>,
    /// The Data API's HTTP endpoint is on.
    pub http_endpoint_enabled: Option<bool>,
    /// aurora or aurora-iopt1; io1, io2 or gp3 for a Multi-AZ DB cluster.
    pub storage_type: Option<String>,
    /// A Multi-AZ DB cluster's class, storage (GiB) and IOPS.
    pub db_cluster_instance_class: Option<String>,
    pub allocated_storage: Option<i32>,
    pub iops: Option<i32>,
    /// The IAM roles associated with the cluster.
    pub associated_roles: Vec<crate::rds_state::ObservedRole>,
    /// standard or advanced.
    pub database_insights_mode: Option<String>,
    pub performance_insights_enabled: Option<bool>,
    pub performance_insights_retention_period: Option<i32>,
    pub performance_insights_kms_key_id: Option<String>,
    pub monitoring_interval: Option<i32>,
    pub monitoring_role_arn: Option<String>,
}

/// An instance of the cluster, as DBClusterMembers lists it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedMember {
    pub identifier: String,
    /// The writer (true) or a reader.
    pub writer: bool,
    /// in-sync, pending-reboot, applying.
    pub parameter_status: Option<String>,
}
