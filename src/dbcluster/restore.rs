//! The cluster snapshots and restores of DBCluster: DescribeDBClusterSnapshots (of an identifier,
//! or one snapshot), and RestoreDBClusterFromSnapshot / RestoreDBClusterToPointInTime with the
//! spec's settings RDS takes at restore time.
use aws_sdk_rds::operation::describe_db_cluster_snapshots::builders::DescribeDBClusterSnapshotsFluentBuilder;
use aws_sdk_rds::types::DbClusterSnapshot;

use super::DBClusterSpec;
use super::aws::scaling;
use crate::aws_error::{AwsError, aws_error};
use crate::database::step::{Restore, RestorePoint};
use crate::rds::{Rds, rds_tags, restore_time, tag_map};
use crate::rds_state::SnapshotInfo;

/// The spec's settings RDS takes at restore time, on either restore request (the two builders
/// share these methods but no trait).
macro_rules! cluster_restore_settings {
    ($request:expr, $spec:expr) => {
        $request
            .set_port($spec.network.port)
            .set_db_subnet_group_name($spec.network.db_subnet_group_name.clone())
            .set_vpc_security_group_ids($spec.network.vpc_security_group_ids.clone())
            .set_db_cluster_parameter_group_name($spec.db_cluster_parameter_group_name.clone())
            .set_kms_key_id($spec.security.kms_key_id.clone())
            .set_enable_iam_database_authentication(
                $spec.security.enable_iam_database_authentication,
            )
            .set_enable_cloudwatch_logs_exports(
                $spec.security.enable_cloudwatch_logs_exports.clone(),
            )
            .set_deletion_protection($spec.deletion.deletion_protection)
            .set_copy_tags_to_snapshot($spec.backups.copy_tags_to_snapshot)
            .set_serverless_v2_scaling_configuration(scaling($spec))
            // A Multi-AZ DB cluster's class, storage and IOPS (API_RestoreDBClusterFromSnapshot.html).
            .set_db_cluster_instance_class($spec.db_cluster_instance_class.clone())
            .set_storage_type($spec.storage_type.map(|t| t.as_str().to_owned()))
            .set_iops($spec.iops)
    };
}

fn info(s: &DbClusterSnapshot) -> SnapshotInfo {
    let created = s.snapshot_create_time();
    SnapshotInfo {
        identifier: s
            .db_cluster_snapshot_identifier()
            .unwrap_or_default()
            .to_owned(),
        kind: s.snapshot_type().unwrap_or_default().to_owned(),
        status: s.status().unwrap_or_default().to_owned(),
        created: created.map(ToString::to_string).unwrap_or_default(),
        created_epoch: created.map(|t| t.secs()).unwrap_or_default(),
        dbi_resource_id: s.db_cluster_resource_id().map(str::to_owned),
        tags: tag_map(s.tag_list()),
    }
}

/// DBCluster's snapshots and restores: the cluster snapshots of an identifier or one by name, and the two restores.
pub(crate) trait ClusterRestoreCalls {
    /// The cluster snapshots (manual and automated) of a cluster identifier, every page counted.
    async fn cluster_snapshots_of(&self, identifier: &str) -> Result<Vec<SnapshotInfo>, AwsError>;

    /// One cluster snapshot by identifier or ARN (shared ones too), with the identifier of the
    /// cluster it was taken of; None when RDS has none.
    async fn cluster_snapshot(
        &self,
        identifier: &str,
    ) -> Result<Option<(SnapshotInfo, String)>, AwsError>;

    /// RestoreDBClusterFromSnapshot, or RestoreDBClusterToPointInTime of a source at a time
    /// (None: its latest restorable time), with the spec's settings RDS takes at restore time.
    async fn restore_cluster(&self, r: &Restore<'_, DBClusterSpec>) -> Result<(), AwsError>;
}

impl ClusterRestoreCalls for Rds {
    async fn cluster_snapshots_of(&self, identifier: &str) -> Result<Vec<SnapshotInfo>, AwsError> {
        let request =
            (self.client.describe_db_cluster_snapshots()).db_cluster_identifier(identifier);
        Ok((cluster_snapshot_pages(self, request).await?.into_iter())
            .map(|(s, _)| s)
            .collect())
    }

    async fn cluster_snapshot(
        &self,
        identifier: &str,
    ) -> Result<Option<(SnapshotInfo, String)>, AwsError> {
        let request = (self.client.describe_db_cluster_snapshots())
            .db_cluster_snapshot_identifier(identifier)
            .include_shared(identifier.starts_with("arn:"));
        match cluster_snapshot_pages(self, request).await {
            Ok(found) => Ok(found.into_iter().next()),
            Err(e) if e.gone() => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn restore_cluster(&self, r: &Restore<'_, DBClusterSpec>) -> Result<(), AwsError> {
        let (spec, tags) = (r.spec, Some(rds_tags(r.tags)));
        match r.from {
            RestorePoint::Snapshot(snapshot) => {
                let request = (self.client.restore_db_cluster_from_snapshot())
                    .db_cluster_identifier(r.identifier)
                    .snapshot_identifier(snapshot)
                    .engine(spec.engine.as_str())
                    .set_engine_version(spec.engine_version.clone());
                let sent = cluster_restore_settings!(request, spec)
                    .set_tags(tags)
                    .send();
                let result =
                    (sent.await).map_err(|e| aws_error("RestoreDBClusterFromSnapshot", e, None));
                let result = self.counted("RestoreDBClusterFromSnapshot", result);
                result.map(|_| ())
            }
            RestorePoint::PointInTime { source, time } => {
                let time_of = restore_time("RestoreDBClusterToPointInTime", time)?;
                let request = (self.client.restore_db_cluster_to_point_in_time())
                    .db_cluster_identifier(r.identifier)
                    .source_db_cluster_identifier(source)
                    .set_restore_to_time(time_of)
                    .set_use_latest_restorable_time(time.is_none().then_some(true))
                    .set_restore_type(clone_of(spec).map(|_| "copy-on-write".to_owned()));
                let sent = cluster_restore_settings!(request, spec)
                    .set_tags(tags)
                    .send();
                let result =
                    (sent.await).map_err(|e| aws_error("RestoreDBClusterToPointInTime", e, None));
                let result = self.counted("RestoreDBClusterToPointInTime", result);
                result.map(|_| ())
            }
        }
    }
}

/// Every page of a DescribeDBClusterSnapshots, each counted, with the cluster of each.
async fn cluster_snapshot_pages(
    rds: &Rds,
    request: DescribeDBClusterSnapshotsFluentBuilder,
) -> Result<Vec<(SnapshotInfo, String)>, AwsError> {
    let mut all = Vec::new();
    let mut pages = request.into_paginator().page_size(100).send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| aws_error("DescribeDBClusterSnapshots", e, None));
        let page = rds.counted("DescribeDBClusterSnapshots", page);
        all.extend((page?.db_cluster_snapshots().iter()).map(|s| {
            let cluster = s.db_cluster_identifier().unwrap_or_default().to_owned();
            (info(s), cluster)
        }));
    }
    Ok(all)
}

/// The DBCluster a clone is of (spec.restoreFrom.cloneOf).
fn clone_of(spec: &DBClusterSpec) -> Option<&crate::crd::LocalRef> {
    spec.restore_from.as_ref()?.clone_of.as_ref()
}
