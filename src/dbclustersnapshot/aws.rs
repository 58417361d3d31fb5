//! The RDS calls of the DBClusterSnapshot kind (counted and classified as every call, in `rds/`):
//! DescribeDBClusterSnapshots of one snapshot (by ARN, one shared with the account too) or of
//! every manual one of the account and region (the observer's listing, 100 a page, with their
//! tags: RDS's DBClusterSnapshot carries its TagList,
//! https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DBClusterSnapshot.html),
//! CreateDBClusterSnapshot, CopyDBClusterSnapshot, the restore attribute
//! (DescribeDBClusterSnapshotAttributes, ModifyDBClusterSnapshotAttribute) and
//! DeleteDBClusterSnapshot.

use std::collections::BTreeMap;
use std::ops::Deref;

use aws_sdk_rds::operation::describe_db_cluster_snapshots::builders::DescribeDBClusterSnapshotsFluentBuilder;

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, rds_tags, tag_map};
use crate::snapshot::ObservedSnapshot;

/// A cluster snapshot as RDS reports it: the shared observed snapshot, as its own type so the
/// observer keeps its listing apart from the DB snapshots'.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedClusterSnapshot(pub ObservedSnapshot);

impl Deref for ObservedClusterSnapshot {
    type Target = ObservedSnapshot;
    fn deref(&self) -> &ObservedSnapshot {
        &self.0
    }
}

/// RDS's codes for a cluster snapshot that does not exist.
fn not_found(e: &AwsError) -> bool {
    e.code.starts_with("DBClusterSnapshotNotFound")
}

impl crate::observer::listing::Listed for ObservedClusterSnapshot {
    const WHAT: &'static str = "the manual DB cluster snapshots";
    fn key(&self) -> String {
        self.name.to_lowercase()
    }
    /// Only a snapshot RDS has finished taking: one in progress is read directly.
    fn settled(&self) -> bool {
        self.status == "available"
    }
    async fn list(rds: &Rds) -> Result<Vec<Self>, AwsError> {
        let request = (rds.client.describe_db_cluster_snapshots()).snapshot_type("manual");
        let found = rds.db_cluster_snapshot_pages(request).await?;
        Ok(found.into_iter().map(ObservedClusterSnapshot).collect())
    }
}

impl Rds {
    /// One cluster snapshot by identifier (or ARN: one another account shared, too), with its
    /// tags; None when RDS has none.
    pub async fn db_cluster_snapshot(
        &self,
        identifier: &str,
    ) -> Result<Option<ObservedSnapshot>, AwsError> {
        let request = (self.client.describe_db_cluster_snapshots())
            .db_cluster_snapshot_identifier(identifier)
            .include_shared(identifier.starts_with("arn:"));
        match self.db_cluster_snapshot_pages(request).await {
            Ok(found) => Ok(found.into_iter().next()),
            Err(e) if not_found(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every manual cluster snapshot of a cluster, with its tags.
    pub async fn db_cluster_snapshots_of(
        &self,
        cluster: &str,
    ) -> Result<Vec<ObservedSnapshot>, AwsError> {
        let request = (self.client.describe_db_cluster_snapshots())
            .db_cluster_identifier(cluster)
            .snapshot_type("manual");
        self.db_cluster_snapshot_pages(request).await
    }

    /// Every cluster snapshot the request lists, 100 a page, each page counted.
    async fn db_cluster_snapshot_pages(
        &self,
        request: DescribeDBClusterSnapshotsFluentBuilder,
    ) -> Result<Vec<ObservedSnapshot>, AwsError> {
        let mut all = Vec::new();
        let mut pages = request.max_records(100).into_paginator().send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeDBClusterSnapshots", e, None));
            self.count("DescribeDBClusterSnapshots", &page);
            all.extend(page?.db_cluster_snapshots().iter().map(observed));
        }
        Ok(all)
    }

    /// CreateDBClusterSnapshot of `cluster`, tagged (the tags are the snapshot's from its first
    /// moment, so one made before a crash is found as this object's).
    pub async fn create_db_cluster_snapshot(
        &self,
        identifier: &str,
        cluster: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        let result = (self.client.create_db_cluster_snapshot())
            .db_cluster_snapshot_identifier(identifier)
            .db_cluster_identifier(cluster)
            .set_tags(Some(rds_tags(tags)))
            .send()
            .await
            .map_err(|e| aws_error("CreateDBClusterSnapshot", e, None));
        self.count("CreateDBClusterSnapshot", &result);
        result.map(|_| ())
    }

    /// CopyDBClusterSnapshot of `source` (an identifier here, or the ARN of a cluster snapshot
    /// of another region, or one another account shared), tagged, with the KMS key of the copy
    /// and whether the source's tags are copied too.
    pub async fn copy_db_cluster_snapshot(
        &self,
        identifier: &str,
        source: &str,
        kms_key_id: Option<&str>,
        copy_tags: bool,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        let mut signed = vec![
            ("SourceDBClusterSnapshotIdentifier", source),
            ("TargetDBClusterSnapshotIdentifier", identifier),
        ];
        signed.extend(kms_key_id.map(|k| ("KmsKeyId", k)));
        let url = (self.pre_signed_url("CopyDBClusterSnapshot", source, &signed)).await?;
        let result = (self.client.copy_db_cluster_snapshot())
            .source_db_cluster_snapshot_identifier(source)
            .target_db_cluster_snapshot_identifier(identifier)
            .set_kms_key_id(kms_key_id.map(str::to_owned))
            .set_pre_signed_url(url)
            .copy_tags(copy_tags)
            .set_tags(Some(rds_tags(tags)))
            .send()
            .await
            .map_err(|e| aws_error("CopyDBClusterSnapshot", e, None));
        self.count("CopyDBClusterSnapshot", &result);
        result.map(|_| ())
    }

    /// Who may restore the cluster snapshot: DescribeDBClusterSnapshotAttributes' `restore`
    /// values.
    pub async fn db_cluster_snapshot_shares(
        &self,
        identifier: &str,
    ) -> Result<Vec<String>, AwsError> {
        let result = (self.client.describe_db_cluster_snapshot_attributes())
            .db_cluster_snapshot_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("DescribeDBClusterSnapshotAttributes", e, None));
        self.count("DescribeDBClusterSnapshotAttributes", &result);
        let result = result?;
        let attributes = result.db_cluster_snapshot_attributes_result();
        Ok((attributes
            .map(|r| r.db_cluster_snapshot_attributes())
            .unwrap_or_default()
            .iter())
        .filter(|a| a.attribute_name() == Some("restore"))
        .flat_map(|a| a.attribute_values().iter().cloned())
        .collect())
    }

    /// ModifyDBClusterSnapshotAttribute `restore`: these accounts added, those removed.
    pub async fn share_db_cluster_snapshot(
        &self,
        identifier: &str,
        add: &[String],
        remove: &[String],
    ) -> Result<(), AwsError> {
        let result = (self.client.modify_db_cluster_snapshot_attribute())
            .db_cluster_snapshot_identifier(identifier)
            .attribute_name("restore")
            .set_values_to_add(Some(add.to_vec()).filter(|v| !v.is_empty()))
            .set_values_to_remove(Some(remove.to_vec()).filter(|v| !v.is_empty()))
            .send()
            .await
            .map_err(|e| aws_error("ModifyDBClusterSnapshotAttribute", e, None));
        self.count("ModifyDBClusterSnapshotAttribute", &result);
        result.map(|_| ())
    }

    /// DeleteDBClusterSnapshot; one already gone is deleted.
    pub async fn delete_db_cluster_snapshot(&self, identifier: &str) -> Result<(), AwsError> {
        let result = (self.client.delete_db_cluster_snapshot())
            .db_cluster_snapshot_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("DeleteDBClusterSnapshot", e, None));
        self.count("DeleteDBClusterSnapshot", &result);
        match result {
            Err(e) if not_found(&e) => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

fn observed(s: &aws_sdk_rds::types::DbClusterSnapshot) -> ObservedSnapshot {
    let text = |v: Option<&str>| v.map(str::to_owned);
    ObservedSnapshot {
        name: (s.db_cluster_snapshot_identifier())
            .unwrap_or_default()
            .to_owned(),
        arn: text(s.db_cluster_snapshot_arn()),
        instance: s.db_cluster_identifier().unwrap_or_default().to_owned(),
        source_resource_id: text(s.db_cluster_resource_id()),
        kind: s.snapshot_type().unwrap_or_default().to_owned(),
        status: s.status().unwrap_or_default().to_owned(),
        percent_progress: s.percent_progress(),
        engine: text(s.engine()),
        engine_version: text(s.engine_version()),
        allocated_storage: s.allocated_storage(),
        encrypted: s.storage_encrypted(),
        created: s.snapshot_create_time().map(ToString::to_string),
        tags: tag_map(s.tag_list()),
    }
}
