//! The snapshots and restores of the RDS adapter: DescribeDBSnapshots (of an identifier, or one
//! snapshot), the instance with a DbiResourceId, tags by ARN, and the two restores with the spec's
//! settings RDS takes at restore time, and the restore from a backup in S3.

use std::collections::BTreeMap;

use crate::database::step::{Restore, RestorePoint};
use crate::dbinstance::DBInstanceSpec;
use crate::rds_state::{ObservedInstance, SnapshotInfo};

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, rds_tags, restore_time, tag_map};

use secrecy::ExposeSecret;

use crate::database::spec::S3Source;

use super::{CreateRequest, creating};

/// DBInstance's snapshots and restores: the DB snapshots of an identifier or one by name, the instance of a DbiResourceId, tags by ARN, and the two restores.
pub(crate) trait RestoreCalls {
    /// The DB snapshots (manual and automated) of an instance identifier: DescribeDBSnapshots,
    /// through the SDK's paginator, each page counted.
    async fn snapshots_of(&self, identifier: &str) -> Result<Vec<SnapshotInfo>, AwsError>;

    /// One DB snapshot by identifier or ARN (shared ones too), None when RDS has none.
    async fn snapshot(&self, identifier: &str) -> Result<Option<SnapshotInfo>, AwsError>;

    /// One DB snapshot (as [`Rds::snapshot`]) with the tags of the instance it was taken of, while
    /// that instance exists (found by DbiResourceId): what the tenancy rules read of a snapshot.
    async fn snapshot_with_instance_tags(
        &self,
        identifier: &str,
    ) -> Result<Option<(SnapshotInfo, Option<BTreeMap<String, String>>)>, AwsError>;

    /// The instance with this DbiResourceId (DescribeDBInstances, filter dbi-resource-id), if any.
    async fn describe_by_resource_id(
        &self,
        resource_id: &str,
    ) -> Result<Option<ObservedInstance>, AwsError>;

    /// The tags of an RDS resource by ARN (ListTagsForResource); None when it does not exist.
    async fn tags_if_any(&self, arn: &str) -> Result<Option<BTreeMap<String, String>>, AwsError>;

    /// RestoreDBInstanceFromDBSnapshot, or RestoreDBInstanceToPointInTime of a source at a time
    /// (None: its latest restorable time), with the spec's settings RDS takes at restore time.
    async fn restore(&self, r: &Restore<'_, DBInstanceSpec>) -> Result<ObservedInstance, AwsError>;

    /// RestoreDBInstanceFromS3: the instance CreateDBInstance would make, with the backup under
    /// the bucket's prefix loaded into it, read as the ingestion role.
    async fn restore_from_s3(
        &self,
        req: &CreateRequest<'_>,
        s3: &S3Source,
    ) -> Result<ObservedInstance, AwsError>;
}

impl RestoreCalls for Rds {
    async fn snapshots_of(&self, identifier: &str) -> Result<Vec<SnapshotInfo>, AwsError> {
        let request = (self.client.describe_db_snapshots()).db_instance_identifier(identifier);
        snapshot_pages(self, request).await
    }

    async fn snapshot(&self, identifier: &str) -> Result<Option<SnapshotInfo>, AwsError> {
        let request = (self.client.describe_db_snapshots())
            .db_snapshot_identifier(identifier)
            .include_shared(identifier.starts_with("arn:"));
        match snapshot_pages(self, request).await {
            Ok(found) => Ok(found.into_iter().next()),
            Err(e) if e.gone() => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn snapshot_with_instance_tags(
        &self,
        identifier: &str,
    ) -> Result<Option<(SnapshotInfo, Option<BTreeMap<String, String>>)>, AwsError> {
        let Some(snapshot) = self.snapshot(identifier).await? else {
            return Ok(None);
        };
        let instance_tags = match &snapshot.dbi_resource_id {
            Some(id) => self.describe_by_resource_id(id).await?.map(|o| o.tags),
            None => None,
        };
        Ok(Some((snapshot, instance_tags)))
    }

    async fn describe_by_resource_id(
        &self,
        resource_id: &str,
    ) -> Result<Option<ObservedInstance>, AwsError> {
        let filter = aws_sdk_rds::types::Filter::builder()
            .name("dbi-resource-id")
            .values(resource_id)
            .build();
        let result = (self.client.describe_db_instances())
            .filters(filter)
            .send()
            .await
            .map_err(|e| aws_error("DescribeDBInstances", e, None));
        let result = self.counted("DescribeDBInstances", result);
        Ok(result?.db_instances().first().map(super::observed))
    }

    async fn tags_if_any(&self, arn: &str) -> Result<Option<BTreeMap<String, String>>, AwsError> {
        match self.tags_of(arn).await {
            Ok(tags) => Ok(Some(tags)),
            Err(e) if e.gone() => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn restore(&self, r: &Restore<'_, DBInstanceSpec>) -> Result<ObservedInstance, AwsError> {
        let (spec, tags) = (r.spec, Some(rds_tags(r.tags)));
        let restored = match r.from {
            RestorePoint::Snapshot(snapshot) => {
                let request = (self.client.restore_db_instance_from_db_snapshot())
                    .db_instance_identifier(r.identifier)
                    .db_snapshot_identifier(snapshot);
                let sent = restore_settings!(request, spec).set_tags(tags).send();
                let result =
                    (sent.await).map_err(|e| aws_error("RestoreDBInstanceFromDBSnapshot", e, None));
                let result = self.counted("RestoreDBInstanceFromDBSnapshot", result);
                result?.db_instance
            }
            RestorePoint::PointInTime { source, time } => {
                let time_of = restore_time("RestoreDBInstanceToPointInTime", time)?;
                let request = (self.client.restore_db_instance_to_point_in_time())
                    .target_db_instance_identifier(r.identifier)
                    .source_db_instance_identifier(source)
                    .set_restore_time(time_of)
                    .set_use_latest_restorable_time(time.is_none().then_some(true));
                let sent = restore_settings!(request, spec).set_tags(tags).send();
                let result =
                    (sent.await).map_err(|e| aws_error("RestoreDBInstanceToPointInTime", e, None));
                let result = self.counted("RestoreDBInstanceToPointInTime", result);
                result?.db_instance
            }
        };
        Ok(creating(restored.as_ref(), r.identifier))
    }

    async fn restore_from_s3(
        &self,
        req: &CreateRequest<'_>,
        s3: &S3Source,
    ) -> Result<ObservedInstance, AwsError> {
        restore_from_s3(self, req, s3).await
    }
}

/// RestoreDBInstanceFromS3 with CreateDBInstance's settings: those a restore takes
/// (`restore_settings!`) and the engine, storage, master user and encryption; the rest of the
/// field table is sent by the ModifyDBInstance that follows a restore.
async fn restore_from_s3(
    rds: &Rds,
    req: &CreateRequest<'_>,
    s3: &S3Source,
) -> Result<ObservedInstance, AwsError> {
    let spec = req.spec;
    let request = new_instance_settings!(rds.client.restore_db_instance_from_s3(), req)
        .set_engine_version(spec.engine_version.clone())
        .set_allocated_storage(spec.allocated_storage)
        .set_max_allocated_storage(spec.max_allocated_storage)
        .set_backup_retention_period(spec.backup_retention_period)
        .source_engine(&s3.source_engine)
        .source_engine_version(&s3.source_engine_version)
        .s3_bucket_name(&s3.bucket)
        .set_s3_prefix(s3.prefix.clone())
        .s3_ingestion_role_arn(&s3.ingestion_role);
    let sent = restore_settings!(request, spec)
        .set_tags(Some(rds_tags(&req.tags)))
        .send();
    let result = (sent.await).map_err(|e| aws_error("RestoreDBInstanceFromS3", e, req.password));
    let result = rds.counted("RestoreDBInstanceFromS3", result);
    Ok(creating(result?.db_instance(), req.identifier))
}

/// Every page of a DescribeDBSnapshots, each counted.
async fn snapshot_pages(
    rds: &Rds,
    request: aws_sdk_rds::operation::describe_db_snapshots::builders::DescribeDBSnapshotsFluentBuilder,
) -> Result<Vec<SnapshotInfo>, AwsError> {
    let mut all = Vec::new();
    let mut pages = request.into_paginator().page_size(100).send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| aws_error("DescribeDBSnapshots", e, None));
        let page = rds.counted("DescribeDBSnapshots", page);
        all.extend(page?.db_snapshots().iter().map(|s| {
            let created = s.snapshot_create_time();
            SnapshotInfo {
                identifier: s.db_snapshot_identifier().unwrap_or_default().to_owned(),
                kind: s.snapshot_type().unwrap_or_default().to_owned(),
                status: s.status().unwrap_or_default().to_owned(),
                created: created.map(ToString::to_string).unwrap_or_default(),
                created_epoch: created.map(|t| t.secs()).unwrap_or_default(),
                dbi_resource_id: s.dbi_resource_id().map(str::to_owned),
                tags: tag_map(s.tag_list()),
            }
        }));
    }
    Ok(all)
}
