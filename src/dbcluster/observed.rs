//! An RDS cluster as DescribeDBClusters shows it, the way the plan reads it.

use std::collections::BTreeMap;

use aws_sdk_rds::types::DbCluster;

use crate::rds::tag_map;

/// An RDS cluster as DescribeDBClusters shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObservedCluster {
    pub identifier: String,
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
}

impl From<&DbCluster> for ObservedCluster {
    fn from(c: &DbCluster) -> Self {
        let s = |v: Option<&str>| v.map(str::to_owned);
        let pending = (c.pending_modified_values().into_iter())
            .flat_map(|p| {
                p.engine_version()
                    .map(|v| ("engineVersion".to_owned(), v.to_owned()))
            })
            .collect();
        ObservedCluster {
            identifier: c.db_cluster_identifier().unwrap_or_default().to_owned(),
            status: c.status().unwrap_or_default().to_owned(),
            arn: s(c.db_cluster_arn()),
            engine: s(c.engine()),
            engine_version: s(c.engine_version()),
            port: c.port(),
            endpoint: s(c.endpoint()),
            reader_endpoint: s(c.reader_endpoint()),
            master_username: s(c.master_username()),
            database_name: s(c.database_name()),
            backup_retention_period: c.backup_retention_period(),
            preferred_backup_window: s(c.preferred_backup_window()),
            preferred_maintenance_window: s(c.preferred_maintenance_window()),
            db_subnet_group_name: s(c.db_subnet_group()),
            vpc_security_group_ids: (c.vpc_security_groups().iter())
                .filter_map(|g| g.vpc_security_group_id().map(str::to_owned))
                .collect(),
            db_cluster_parameter_group_name: s(c.db_cluster_parameter_group()),
            storage_encrypted: c.storage_encrypted(),
            iam_database_authentication_enabled: c.iam_database_authentication_enabled(),
            enabled_cloudwatch_logs_exports: c.enabled_cloudwatch_logs_exports().to_vec(),
            deletion_protection: c.deletion_protection(),
            copy_tags_to_snapshot: c.copy_tags_to_snapshot(),
            serverless_v2: (c.serverless_v2_scaling_configuration())
                .and_then(|v| Some((v.min_capacity()?, v.max_capacity()?))),
            tags: tag_map(c.tag_list()),
            pending_modified_values: pending,
            members: (c.db_cluster_members().iter())
                .filter_map(|m| {
                    Some(ObservedMember {
                        identifier: m.db_instance_identifier()?.to_owned(),
                        writer: m.is_cluster_writer().unwrap_or(false),
                        parameter_status: s(m.db_cluster_parameter_group_status()),
                    })
                })
                .collect(),
            master_user_secret_arn: (c.master_user_secret())
                .and_then(|s| s.secret_arn().map(str::to_owned)),
        }
    }
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
