//! DBInstance's field table: for each field the spec manages after create, how it is sent in
//! CreateDBInstance and ModifyDBInstance, read back from DescribeDBInstances, and compared
//! (`crate::database::fields`). Fields sent only at create (the engine, the master user, the
//! subnet group, the encryption...) are in `aws::create`; the password and the tags have their own
//! rules in `drift`.

use aws_sdk_rds::operation::create_db_instance::builders::CreateDBInstanceFluentBuilder;
use aws_sdk_rds::operation::modify_db_instance::builders::ModifyDBInstanceFluentBuilder;
use aws_sdk_rds::types::DbInstance;

use crate::database::fields::{Fields, InsightsModeText as _, with_database_rows};
use crate::dbinstance::DBInstanceSpec;
use crate::rds_state::ObservedInstance;

with_database_rows! { spec;
    field_table! {
        /// What one ModifyDBInstance must carry: exactly the fields that differ.
        pub struct Modification {
            pub allow_major_version_upgrade: bool,
            /// Send the master password from the Secret (it changed there).
            pub rotate_password: bool,
            pub apply_immediately: bool,
        }
        impl InstanceFields for (spec: DBInstanceSpec, o: ObservedInstance, db: DbInstance);
        create CreateDBInstanceFluentBuilder;
        modify ModifyDBInstanceFluentBuilder;
    }
    "dbInstanceClass" db_instance_class: String = Some(spec.db_instance_class.clone()),
        have db_instance_class <- db_instance_class, drift text,
        create set_db_instance_class, modify set_db_instance_class;
    "allocatedStorage" allocated_storage: i32 = spec.allocated_storage,
        have allocated_storage <- allocated_storage, drift (grows),
        create set_allocated_storage, modify set_allocated_storage;
    "maxAllocatedStorage" max_allocated_storage: i32 = spec.max_allocated_storage,
        have max_allocated_storage <- max_allocated_storage, drift same,
        create set_max_allocated_storage, modify set_max_allocated_storage;
    "storageType" storage_type: String = spec.storage_type.map(|t| t.as_str().to_owned()),
        have storage_type <- storage_type, drift text,
        create set_storage_type, modify set_storage_type;
    "iops" iops: i32 = spec.iops,
        have iops <- iops, drift same,
        create set_iops, modify set_iops;
    shared "engineVersion";
    shared "backupRetentionPeriod";
    shared "preferredBackupWindow";
    shared "preferredMaintenanceWindow";
    "multiAZ" multi_az: bool = spec.multi_az,
        have multi_az <- multi_az, drift same,
        create set_multi_az, modify set_multi_az;
    "publiclyAccessible" publicly_accessible: bool = spec.publicly_accessible,
        have publicly_accessible <- publicly_accessible, drift same,
        create set_publicly_accessible, modify set_publicly_accessible;
    shared "deletionProtection";
    "dbParameterGroupName" db_parameter_group_name: String = spec.db_parameter_group_name.clone(),
        have db_parameter_group_name <- (parameter_group), drift text,
        create set_db_parameter_group_name, modify set_db_parameter_group_name;
    "port" port: i32 = spec.network.port,
        have port <- (port), drift same,
        create set_port, modify set_db_port_number;
    "autoMinorVersionUpgrade" auto_minor_version_upgrade: bool = spec.auto_minor_version_upgrade,
        have auto_minor_version_upgrade <- auto_minor_version_upgrade, drift same,
        create set_auto_minor_version_upgrade, modify set_auto_minor_version_upgrade;
    shared "copyTagsToSnapshot";
    shared "vpcSecurityGroupIDs";
    "storageThroughput" storage_throughput: i32 = spec.storage_throughput,
        have storage_throughput <- storage_throughput, drift same,
        create set_storage_throughput, modify set_storage_throughput;
    "caCertificateIdentifier" ca_certificate_identifier: String =
        spec.ca_certificate_identifier.clone(),
        have ca_certificate_identifier <- ca_certificate_identifier, drift text,
        create set_ca_certificate_identifier, modify set_ca_certificate_identifier;
    shared "enableIAMDatabaseAuthentication";
    shared "databaseInsightsMode";
    shared "enablePerformanceInsights";
    shared "performanceInsightsRetentionPeriod";
    shared "monitoringInterval";
    shared "monitoringRoleARN";
    "optionGroupName" option_group_name: String = spec.option_group_name.clone(),
        have option_group_name <- (option_group), drift text,
        create set_option_group_name, modify set_option_group_name;
    "networkType" network_type: String = spec.network_type.map(|t| t.as_str().to_owned()),
        have network_type <- network_type, drift text,
        create set_network_type, modify set_network_type;
    "licenseModel" license_model: String = spec.license_model.clone(),
        have license_model <- license_model, drift text,
        create set_license_model, modify set_license_model;
    shared "enableCloudwatchLogsExports";
}

/// Storage grows, never shrinks; storage autoscaling grew beyond the spec is not drift.
fn grows(f: &mut Fields, spec: &DBInstanceSpec, o: &ObservedInstance) -> Option<i32> {
    let have = o.allocated_storage.unwrap_or_default();
    let autoscaled = spec.max_allocated_storage.is_some_and(|max| have <= max);
    f.storage(spec.allocated_storage, o.allocated_storage, autoscaled)
}

/// Engine version: upgrades within what the spec allows; downgrades and unallowed major upgrades
/// are refused.
fn version(f: &mut Fields, spec: &DBInstanceSpec, o: &ObservedInstance) -> Option<String> {
    let allow_major = spec.maintenance.allow_major_version_upgrade == Some(true);
    let (want, have) = (spec.engine_version.as_ref(), o.engine_version.as_ref());
    f.version(&spec.engine, want, have, allow_major)
}

fn parameter_group(db: &DbInstance) -> Option<String> {
    (db.db_parameter_groups().first()).and_then(|g| g.db_parameter_group_name().map(str::to_owned))
}

fn option_group(db: &DbInstance) -> Option<String> {
    (db.option_group_memberships().first()).and_then(|g| g.option_group_name().map(str::to_owned))
}

/// The endpoint's port, or the instance's while it has no endpoint yet.
fn port(db: &DbInstance) -> Option<i32> {
    db.endpoint()
        .and_then(|e| e.port())
        .or(db.db_instance_port())
}

fn security_groups(db: &DbInstance) -> Vec<String> {
    (db.vpc_security_groups().iter())
        .filter_map(|g| g.vpc_security_group_id().map(str::to_owned))
        .collect()
}
