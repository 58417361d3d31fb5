//! Which fields of an RDS cluster differ from the DBCluster's spec, and the ModifyDBCluster that
//! puts them right. Pure. Only fields the spec sets are compared; protective drift (deletion
//! protection turned on, a longer backup retention) is kept, as for instances. Each field the spec
//! manages after create is a row of the field table below (`crate::database::fields`): how it is
//! sent in CreateDBCluster and ModifyDBCluster, read back from DescribeDBClusters, and compared.

use aws_sdk_rds::operation::create_db_cluster::builders::CreateDBClusterFluentBuilder;
use aws_sdk_rds::operation::modify_db_cluster::builders::ModifyDBClusterFluentBuilder;
use aws_sdk_rds::types::{DbCluster, ServerlessV2ScalingConfiguration};

use super::DBClusterSpec;
use super::observed::ObservedCluster;
use crate::database::fields::{Fields, InsightsModeText as _, with_database_rows};

with_database_rows! { spec;
    field_table! {
        /// Exactly the fields a ModifyDBCluster sends.
        pub struct ClusterModification {
            pub apply_immediately: bool,
            pub allow_major_version_upgrade: bool,
            /// Send the master password (a rotation).
            pub rotate_password: bool,
        }
        impl ClusterFields for (spec: DBClusterSpec, o: ObservedCluster, db: DbCluster);
        create CreateDBClusterFluentBuilder;
        modify ModifyDBClusterFluentBuilder;
    }
    shared "engineVersion";
    /// Serverless v2 capacity (min, max).
    "serverlessV2ScalingConfiguration" serverless_v2: (f64, f64) =
        (spec.serverless_v2_scaling_configuration.as_ref())
            .map(|s| scaling_configuration(&(s.min_capacity, s.max_capacity))),
        have serverless_v2 <- (capacity_of), drift (capacity),
        create set_serverless_v2_scaling_configuration,
        modify set_serverless_v2_scaling_configuration(scaling_configuration);
    "storageType" storage_type: String = spec.storage_type.map(|t| t.as_str().to_owned()),
        have storage_type <- storage_type, drift text,
        create set_storage_type, modify set_storage_type;
    /// A Multi-AZ DB cluster's class, storage and IOPS.
    "dbClusterInstanceClass" db_cluster_instance_class: String =
        spec.db_cluster_instance_class.clone(),
        have db_cluster_instance_class <- db_cluster_instance_class, drift text,
        create set_db_cluster_instance_class, modify set_db_cluster_instance_class;
    "allocatedStorage" allocated_storage: i32 = spec.allocated_storage,
        have allocated_storage <- allocated_storage, drift (grows),
        create set_allocated_storage, modify set_allocated_storage;
    "iops" iops: i32 = spec.iops,
        have iops <- iops, drift same,
        create set_iops, modify set_iops;
    "port" port: i32 = spec.network.port,
        have port <- port, drift same,
        create set_port, modify set_port;
    shared "backupRetentionPeriod";
    shared "preferredBackupWindow";
    shared "preferredMaintenanceWindow";
    shared "vpcSecurityGroupIDs";
    "dbClusterParameterGroupName" db_cluster_parameter_group_name: String =
        spec.db_cluster_parameter_group_name.clone(),
        have db_cluster_parameter_group_name <- db_cluster_parameter_group, drift text,
        create set_db_cluster_parameter_group_name, modify set_db_cluster_parameter_group_name;
    shared "enableIAMDatabaseAuthentication";
    shared "enableCloudwatchLogsExports";
    shared "deletionProtection";
    shared "copyTagsToSnapshot";
    shared "databaseInsightsMode";
    shared "enablePerformanceInsights";
    shared "performanceInsightsRetentionPeriod";
    shared "monitoringInterval";
    shared "monitoringRoleARN";
}

impl ClusterModification {
    /// The spec field names this modification carries.
    pub fn fields(&self) -> Vec<&'static str> {
        let mut fields = self.carried();
        if self.rotate_password {
            fields.push("masterUserPassword");
        }
        fields
    }

    /// Leaves a field (by its spec name) as RDS has it.
    pub fn leave(&mut self, field: &str) {
        match field {
            "masterUserPassword" => self.rotate_password = false,
            field => self.clear(field),
        }
    }

    pub fn in_sync(&self) -> bool {
        self.fields().is_empty()
    }

    pub fn field_list(&self) -> String {
        self.fields().join(", ")
    }
}

/// Serverless v2 capacity as CreateDBCluster and ModifyDBCluster take it.
pub(super) fn scaling_configuration((min, max): &(f64, f64)) -> ServerlessV2ScalingConfiguration {
    ServerlessV2ScalingConfiguration::builder()
        .min_capacity(*min)
        .max_capacity(*max)
        .build()
}

fn capacity_of(c: &DbCluster) -> Option<(f64, f64)> {
    let v = c.serverless_v2_scaling_configuration()?;
    Some((v.min_capacity()?, v.max_capacity()?))
}

fn security_groups(c: &DbCluster) -> Vec<String> {
    (c.vpc_security_groups().iter())
        .filter_map(|g| g.vpc_security_group_id().map(str::to_owned))
        .collect()
}

/// The capacity the spec asks for, when RDS's differs.
fn capacity(_: &mut Fields, spec: &DBClusterSpec, o: &ObservedCluster) -> Option<(f64, f64)> {
    let want = (spec.serverless_v2_scaling_configuration.as_ref())
        .map(|s| (s.min_capacity, s.max_capacity));
    want.filter(|w| Some(*w) != o.serverless_v2)
}

/// A Multi-AZ DB cluster's storage grows, never shrinks.
fn grows(f: &mut Fields, spec: &DBClusterSpec, o: &ObservedCluster) -> Option<i32> {
    f.storage(spec.allocated_storage, o.allocated_storage, false)
}

/// An engine version upgrade within what the spec allows (a downgrade, or a major upgrade not
/// allowed, is refused).
fn version(f: &mut Fields, spec: &DBClusterSpec, o: &ObservedCluster) -> Option<String> {
    let allow_major = spec.maintenance.allow_major_version_upgrade == Some(true);
    let (want, have) = (spec.engine_version.as_ref(), o.engine_version.as_ref());
    f.version(spec.engine.as_str(), want, have, allow_major)
}

/// What comparing the spec with RDS's cluster found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    pub modification: ClusterModification,
    /// Protective drift left as RDS has it, in words.
    pub kept: Option<String>,
    /// A change RDS cannot make (a downgrade, a major upgrade not allowed), in words.
    pub refused: Option<String>,
}

/// The spec against RDS's cluster. Protective drift is kept unless the spec was `edited` since
/// it was last in sync (then the spec's word is the user's).
pub fn compare(spec: &DBClusterSpec, o: &ObservedCluster, edited: bool) -> Comparison {
    let mut out = Comparison::default();
    let m = &mut out.modification;
    m.apply_immediately = spec.maintenance.apply_immediately.unwrap_or(true);
    let (mut diffs, mut refused) = (Vec::new(), Vec::new());
    let mut f = Fields {
        diffs: &mut diffs,
        refused: &mut refused,
        pending: &o.pending_modified_values,
    };
    ClusterFields::compare(spec, o, &mut f, m);
    m.allow_major_version_upgrade =
        m.engine_version.is_some() && spec.maintenance.allow_major_version_upgrade == Some(true);
    out.refused = refused.into_iter().next();
    let kept = if edited {
        Vec::new()
    } else {
        keep_protection(spec, o, m)
    };
    if !kept.is_empty() {
        out.kept = Some(format!(
            "{}: protection added outside the operator is kept",
            kept.join("; ")
        ));
    }
    out
}

/// Protection added in RDS (a longer backup retention, deletion protection turned on) taken out
/// of the modification, in words: kept while the spec was not edited since it was last in sync.
fn keep_protection(
    spec: &DBClusterSpec,
    o: &ObservedCluster,
    m: &mut ClusterModification,
) -> Vec<String> {
    let mut kept = Vec::new();
    if let (Some(want), Some(have)) = (spec.backup_retention_period, o.backup_retention_period)
        && have > want
    {
        m.backup_retention_period = None;
        kept.push(format!(
            "backupRetentionPeriod is {have} in RDS, longer than {want}"
        ));
    }
    if o.deletion_protection == Some(true) && spec.deletion.deletion_protection != Some(true) {
        m.deletion_protection = None;
        kept.push("deletionProtection is on in RDS".to_owned());
    }
    kept
}
