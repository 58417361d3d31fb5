//! Read replicas in the RDS adapter: CreateDBInstanceReadReplica with the spec's settings a
//! replica takes, and PromoteReadReplica.

use std::collections::BTreeMap;

use crate::dbinstance::DBInstanceSpec;
use crate::rds_state::ObservedInstance;

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, rds_tags};

use super::creating;
use crate::dbinstance::aws::InstanceCalls;

/// DBInstance's read replicas: the source described (in its region), CreateDBInstanceReadReplica and PromoteReadReplica.
pub(crate) trait ReplicaCalls {
    /// A replica's source by identifier or ARN, None when RDS has none: an ARN of another region
    /// of the account is described there, with the same credentials (DescribeDBInstances takes an
    /// ARN only in its own region).
    async fn describe_source(&self, source: &str) -> Result<Option<ObservedInstance>, AwsError>;

    /// CreateDBInstanceReadReplica of `source` (an identifier, or an ARN in another region) with
    /// the spec's settings a replica takes; what it inherits from its source (master user, database
    /// name, engine, encryption, backups) is not sent (API_CreateDBInstanceReadReplica.html).
    async fn create_read_replica(
        &self,
        identifier: &str,
        source: &str,
        spec: &DBInstanceSpec,
        tags: &BTreeMap<String, String>,
    ) -> Result<ObservedInstance, AwsError>;

    /// PromoteReadReplica: the replica becomes a standalone instance, with the spec's backup
    /// retention and window when set (API_PromoteReadReplica.html).
    async fn promote_read_replica(
        &self,
        identifier: &str,
        backup_retention_period: Option<i32>,
        preferred_backup_window: Option<String>,
    ) -> Result<(), AwsError>;
}

impl ReplicaCalls for Rds {
    async fn describe_source(&self, source: &str) -> Result<Option<ObservedInstance>, AwsError> {
        self.for_region_of(source).describe(source).await
    }

    async fn create_read_replica(
        &self,
        identifier: &str,
        source: &str,
        spec: &DBInstanceSpec,
        tags: &BTreeMap<String, String>,
    ) -> Result<ObservedInstance, AwsError> {
        let kms = spec.security.kms_key_id.as_deref();
        let mut signed = vec![
            ("SourceDBInstanceIdentifier", source),
            ("DBInstanceIdentifier", identifier),
        ];
        signed.extend(kms.map(|k| ("KmsKeyId", k)));
        let url = (self.pre_signed_url("CreateDBInstanceReadReplica", source, &signed)).await?;
        let request = (self.client.create_db_instance_read_replica())
            .db_instance_identifier(identifier)
            .source_db_instance_identifier(source)
            .set_pre_signed_url(url);
        let result = restore_settings!(request, spec)
            .set_availability_zone(spec.availability_zone.clone())
            .set_storage_throughput(spec.storage_throughput)
            .set_option_group_name(spec.option_group_name.clone())
            .set_monitoring_interval(spec.insights.monitoring_interval)
            .set_monitoring_role_arn(spec.insights.monitoring_role_arn.clone())
            .set_kms_key_id(spec.security.kms_key_id.clone())
            .set_enable_iam_database_authentication(
                spec.security.enable_iam_database_authentication,
            )
            .set_enable_performance_insights(spec.insights.enable_performance_insights)
            .set_performance_insights_kms_key_id(
                spec.insights.performance_insights_kms_key_id.clone(),
            )
            .set_performance_insights_retention_period(
                spec.insights.performance_insights_retention_period,
            )
            .set_enable_cloudwatch_logs_exports(
                spec.security.enable_cloudwatch_logs_exports.clone(),
            )
            .set_network_type(spec.network_type.map(|t| t.as_str().to_owned()))
            .set_max_allocated_storage(spec.max_allocated_storage)
            .set_allocated_storage(spec.allocated_storage)
            .set_ca_certificate_identifier(spec.ca_certificate_identifier.clone())
            .set_tags(Some(rds_tags(tags)))
            .send()
            .await
            .map_err(|e| aws_error("CreateDBInstanceReadReplica", e, None));
        let result = self.counted("CreateDBInstanceReadReplica", result);
        Ok(creating(result?.db_instance(), identifier))
    }

    async fn promote_read_replica(
        &self,
        identifier: &str,
        backup_retention_period: Option<i32>,
        preferred_backup_window: Option<String>,
    ) -> Result<(), AwsError> {
        let result = (self.client.promote_read_replica())
            .db_instance_identifier(identifier)
            .set_backup_retention_period(backup_retention_period)
            .set_preferred_backup_window(preferred_backup_window)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| aws_error("PromoteReadReplica", e, None));
        self.counted("PromoteReadReplica", result)
    }
}

/// The automated backups replicated into this adapter's region: start and stop.
pub(crate) trait BackupReplicationCalls {
    /// StartDBInstanceAutomatedBackupsReplication, made in the destination region (this adapter's)
    /// of the instance `source` (its ARN).
    async fn start_backup_replication(
        &self,
        source: &str,
        retention_period: Option<i32>,
        kms_key_id: Option<&str>,
    ) -> Result<(), AwsError>;

    /// StopDBInstanceAutomatedBackupsReplication, made in the destination region (this
    /// adapter's); one RDS no longer has is stopped.
    async fn stop_backup_replication(&self, source: &str) -> Result<(), AwsError>;
}

impl BackupReplicationCalls for Rds {
    async fn start_backup_replication(
        &self,
        source: &str,
        retention_period: Option<i32>,
        kms_key_id: Option<&str>,
    ) -> Result<(), AwsError> {
        let result = (self
            .client
            .start_db_instance_automated_backups_replication())
        .source_db_instance_arn(source)
        .set_backup_retention_period(retention_period)
        .set_kms_key_id(kms_key_id.map(str::to_owned))
        .send()
        .await
        .map_err(|e| aws_error("StartDBInstanceAutomatedBackupsReplication", e, None));
        let result = self.counted("StartDBInstanceAutomatedBackupsReplication", result);
        result.map(|_| ())
    }

    async fn stop_backup_replication(&self, source: &str) -> Result<(), AwsError> {
        let result = (self.client.stop_db_instance_automated_backups_replication())
            .source_db_instance_arn(source)
            .send()
            .await
            .map_err(|e| aws_error("StopDBInstanceAutomatedBackupsReplication", e, None));
        let result = self.counted("StopDBInstanceAutomatedBackupsReplication", result);
        match result {
            Err(e) if e.gone() => Ok(()),
            other => other.map(|_| ()),
        }
    }
}
