//! DBInstance's RDS calls: DescribeDBInstances (one, some, every page), CreateDBInstance,
//! ModifyDBInstance and DeleteDBInstance, the mapping of RDS's DBInstance onto what the plan
//! observes, and, beside this file, the restores, the read replicas and the blue/green
//! deployments. What every kind shares (the client, call counting, tags) is in `crate::rds`.

use std::collections::BTreeMap;

use aws_sdk_rds::types::DbInstance;
use secrecy::{ExposeSecret, SecretString};

use crate::aws_error::{AwsError, aws_error};
use crate::dbinstance::DBInstanceSpec;
use crate::dbinstance::drift::{InstanceFields, Modification};
use crate::rds::{Rds, rds_tags, rfc3339, tag_map};
use crate::rds_state::{ObservedInstance, StatusInfo};

/// The spec's settings RDS takes when it makes an instance of another's data, on each request that
/// does (the two restores and CreateDBInstanceReadReplica: their builders share these methods but
/// no trait).
macro_rules! restore_settings {
    ($request:expr, $spec:expr) => {
        $request
            .db_instance_class(&$spec.db_instance_class)
            .set_port($spec.network.port)
            .set_multi_az($spec.multi_az)
            .set_publicly_accessible($spec.publicly_accessible)
            .set_db_subnet_group_name($spec.network.db_subnet_group_name.clone())
            .set_vpc_security_group_ids($spec.network.vpc_security_group_ids.clone())
            .set_db_parameter_group_name($spec.db_parameter_group_name.clone())
            .set_storage_type($spec.storage_type.map(|t| t.as_str().to_owned()))
            .set_iops($spec.iops)
            .set_auto_minor_version_upgrade($spec.auto_minor_version_upgrade)
            .set_deletion_protection($spec.deletion.deletion_protection)
            .set_copy_tags_to_snapshot($spec.backups.copy_tags_to_snapshot)
    };
}

/// What makes a new instance's data its own, on each call that makes one empty or from a backup
/// (CreateDBInstance, RestoreDBInstanceFromS3): the engine, the encryption, the master user and
/// password, the database name.
macro_rules! new_instance_settings {
    ($request:expr, $req:expr) => {
        $request
            .db_instance_identifier($req.identifier)
            .engine(&$req.spec.engine)
            .set_storage_encrypted($req.spec.security.storage_encrypted)
            .set_kms_key_id($req.spec.security.kms_key_id.clone())
            .set_master_username($req.spec.master_username.clone())
            .set_master_user_password($req.password.map(|p| p.expose_secret().to_owned()))
            .set_manage_master_user_password($req.spec.password.manage_master_user_password)
            .set_master_user_secret_kms_key_id(
                $req.spec.password.master_user_secret_kms_key_id.clone(),
            )
            .set_db_name($req.spec.db_name.clone())
            .set_availability_zone($req.spec.availability_zone.clone())
    };
}

mod classes;
mod replicas;
mod restore;

pub use classes::OfferedClasses;
pub(crate) use replicas::{BackupReplicationCalls, ReplicaCalls};
pub(crate) use restore::RestoreCalls;

/// RDS's instance as the plan reads it: the field table's fields read by its rows, the rest here.
/// The observer reads every instance it polls with this (`observer::ReadInstance`).
pub fn observed(db: &DbInstance) -> ObservedInstance {
    let s = |v: Option<&str>| v.map(str::to_owned);
    let pending = db
        .pending_modified_values()
        .map(pending_map)
        .unwrap_or_default();
    let mut observed = ObservedInstance {
        identifier: db.db_instance_identifier().unwrap_or_default().to_owned(),
        status: db.db_instance_status().unwrap_or_default().to_owned(),
        arn: s(db.db_instance_arn()),
        engine: s(db.engine()),
        parameter_apply_status: (db.db_parameter_groups().first())
            .and_then(|g| g.parameter_apply_status().map(str::to_owned)),
        performance_insights_kms_key_id: s(db.performance_insights_kms_key_id()),
        associated_roles: (db.associated_roles().iter())
            .map(|r| crate::rds_state::ObservedRole {
                role_arn: r.role_arn().unwrap_or_default().to_owned(),
                feature_name: s(r.feature_name()),
                status: s(r.status()),
            })
            .collect(),
        dbi_resource_id: s(db.dbi_resource_id()),
        certificate_valid_till: (db.certificate_details())
            .and_then(|c| c.valid_till())
            .and_then(rfc3339),
        latest_restorable_time: db.latest_restorable_time().and_then(rfc3339),
        db_subnet_group_name: db
            .db_subnet_group()
            .and_then(|g| g.db_subnet_group_name().map(str::to_owned)),
        master_username: s(db.master_username()),
        db_name: s(db.db_name()),
        address: db.endpoint().and_then(|e| e.address().map(str::to_owned)),
        tags: tag_map(db.tag_list()),
        pending_modified_values: pending,
        master_user_secret_arn: db
            .master_user_secret()
            .and_then(|s| s.secret_arn().map(str::to_owned)),
        master_user_secret_kms_key_id: (db.master_user_secret())
            .and_then(|s| s.kms_key_id().map(str::to_owned)),
        master_user_secret_status: (db.master_user_secret())
            .and_then(|s| s.secret_status().map(str::to_owned)),
        replica_source: s(db.read_replica_source_db_instance_identifier()),
        db_cluster_identifier: s(db.db_cluster_identifier()),
        read_replicas: db.read_replica_db_instance_identifiers().to_vec(),
        status_infos: db.status_infos().iter().map(status_info).collect(),
        backup_replications: (db.db_instance_automated_backups_replications().iter())
            .filter_map(|r| r.db_instance_automated_backups_arn().map(str::to_owned))
            .collect(),
        ..Default::default()
    };
    InstanceFields::read(db, &mut observed);
    observed
}

fn status_info(i: &aws_sdk_rds::types::DbInstanceStatusInfo) -> StatusInfo {
    StatusInfo {
        status_type: i.status_type().unwrap_or_default().to_owned(),
        status: i.status().unwrap_or_default().to_owned(),
        normal: i.normal().unwrap_or_default(),
        message: i.message().map(str::to_owned),
    }
}

fn pending_map(p: &aws_sdk_rds::types::PendingModifiedValues) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            out.insert(k.to_owned(), v);
        }
    };
    put("dbInstanceClass", p.db_instance_class().map(str::to_owned));
    put(
        "allocatedStorage",
        p.allocated_storage().map(|v| v.to_string()),
    );
    put("storageType", p.storage_type().map(str::to_owned));
    put("iops", p.iops().map(|v| v.to_string()));
    put("engineVersion", p.engine_version().map(str::to_owned));
    put("multiAZ", p.multi_az().map(|v| v.to_string()));
    put("port", p.port().map(|v| v.to_string()));
    put(
        "backupRetentionPeriod",
        p.backup_retention_period().map(|v| v.to_string()),
    );
    put(
        "dbSubnetGroupName",
        p.db_subnet_group_name().map(str::to_owned),
    );
    // RDS masks the value itself; say only that a change is pending.
    put(
        "masterUserPassword",
        p.master_user_password().map(|_| "****".to_owned()),
    );
    out
}

/// The instance a create or restore answered with, or one just being created.
fn creating(answer: Option<&DbInstance>, identifier: &str) -> ObservedInstance {
    answer.map(observed).unwrap_or_else(|| ObservedInstance {
        identifier: identifier.to_owned(),
        status: "creating".to_owned(),
        ..Default::default()
    })
}

/// What CreateDBInstance is sent.
pub struct CreateRequest<'a> {
    pub identifier: &'a str,
    pub spec: &'a DBInstanceSpec,
    pub password: Option<&'a SecretString>,
    /// Tags to set: the spec's plus the ownership tags.
    pub tags: BTreeMap<String, String>,
}

/// DBInstance's own calls: DescribeDBInstances read into its model, CreateDBInstance,
/// and ModifyDBInstance (DeleteDBInstance is `Rds::delete_instance`: a DBCluster deletes members).
pub(crate) trait InstanceCalls {
    async fn describe(&self, identifier: &str) -> Result<Option<ObservedInstance>, AwsError>;
    async fn create(&self, req: &CreateRequest<'_>) -> Result<ObservedInstance, AwsError>;
    async fn modify(
        &self,
        identifier: &str,
        m: &Modification,
        password: Option<&SecretString>,
    ) -> Result<ObservedInstance, AwsError>;
}

impl InstanceCalls for Rds {
    /// DescribeDBInstances for one identifier; None when RDS has no such instance.
    async fn describe(&self, identifier: &str) -> Result<Option<ObservedInstance>, AwsError> {
        Ok(self.db_instance(identifier).await?.as_ref().map(observed))
    }

    /// CreateDBInstance with every field the spec sets.
    async fn create(&self, req: &CreateRequest<'_>) -> Result<ObservedInstance, AwsError> {
        let spec = req.spec;
        let tags = rds_tags(&req.tags);
        let request = InstanceFields::create(spec, self.client.create_db_instance());
        let result = new_instance_settings!(request, req)
            .set_db_subnet_group_name(spec.network.db_subnet_group_name.clone())
            .set_performance_insights_kms_key_id(
                spec.insights.performance_insights_kms_key_id.clone(),
            )
            .set_character_set_name(spec.character_set_name.clone())
            .set_engine_lifecycle_support(spec.engine_lifecycle_support.clone())
            .set_db_cluster_identifier(spec.db_cluster_identifier.clone())
            .set_promotion_tier(spec.promotion_tier)
            .set_tags(Some(tags))
            .send()
            .await
            .map_err(|e| aws_error("CreateDBInstance", e, req.password));
        let result = self.counted("CreateDBInstance", result);
        let out = result?;
        Ok(creating(out.db_instance(), req.identifier))
    }

    /// ModifyDBInstance carrying exactly the fields set in `m`.
    async fn modify(
        &self,
        identifier: &str,
        m: &Modification,
        password: Option<&SecretString>,
    ) -> Result<ObservedInstance, AwsError> {
        let password = if m.rotate_password { password } else { None };
        let result = m
            .send(self.client.modify_db_instance())
            .db_instance_identifier(identifier)
            .apply_immediately(m.apply_immediately)
            .set_allow_major_version_upgrade(m.allow_major_version_upgrade.then_some(true))
            .set_master_user_password(password.map(|p| p.expose_secret().to_owned()))
            .send()
            .await
            .map_err(|e| aws_error("ModifyDBInstance", e, password));
        let result = self.counted("ModifyDBInstance", result);
        Ok(result?.db_instance().map(observed).unwrap_or_default())
    }
}
