//! The RDS calls of the DBSnapshot kind (counted and classified as every call, in `rds/`):
//! DescribeDBSnapshots of one snapshot or of every manual one of the account and region (the
//! observer's listing, 100 a page, with their tags: RDS's DBSnapshot carries its TagList,
//! https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DBSnapshot.html),
//! CreateDBSnapshot and DeleteDBSnapshot.

use std::collections::BTreeMap;

use aws_sdk_rds::operation::describe_db_snapshots::builders::DescribeDBSnapshotsFluentBuilder;

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, rds_tags, tag_map};

use crate::snapshot::ObservedSnapshot;

/// RDS's codes for a snapshot that does not exist.
fn not_found(e: &AwsError) -> bool {
    e.code == "DBSnapshotNotFound" || e.code == "DBSnapshotNotFoundFault"
}

impl crate::observer::listing::Listed for ObservedSnapshot {
    const WHAT: &'static str = "the manual DB snapshots";
    fn key(&self) -> String {
        self.name.to_lowercase()
    }
    /// Only a snapshot RDS has finished taking: one in progress is read directly.
    fn settled(&self) -> bool {
        self.status == "available"
    }
    async fn list(rds: &Rds) -> Result<Vec<Self>, AwsError> {
        let request = rds.client.describe_db_snapshots().snapshot_type("manual");
        rds.db_snapshot_pages(request).await
    }
}

impl Rds {
    /// One DB snapshot by identifier, with its tags; None when RDS has none.
    pub async fn db_snapshot(
        &self,
        identifier: &str,
    ) -> Result<Option<ObservedSnapshot>, AwsError> {
        let request = (self.client.describe_db_snapshots()).db_snapshot_identifier(identifier);
        match self.db_snapshot_pages(request).await {
            Ok(found) => Ok(found.into_iter().next()),
            Err(e) if not_found(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every manual DB snapshot of an instance, with its tags.
    pub async fn db_snapshots_of(&self, instance: &str) -> Result<Vec<ObservedSnapshot>, AwsError> {
        let request = (self.client.describe_db_snapshots())
            .db_instance_identifier(instance)
            .snapshot_type("manual");
        self.db_snapshot_pages(request).await
    }

    /// Every DB snapshot the request lists, 100 a page, each page counted.
    async fn db_snapshot_pages(
        &self,
        request: DescribeDBSnapshotsFluentBuilder,
    ) -> Result<Vec<ObservedSnapshot>, AwsError> {
        let mut all = Vec::new();
        let mut pages = request.max_records(100).into_paginator().send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeDBSnapshots", e, None));
            self.count("DescribeDBSnapshots", &page);
            all.extend(page?.db_snapshots().iter().map(observed));
        }
        Ok(all)
    }

    /// CreateDBSnapshot of `instance`, tagged (the tags are the snapshot's from its first moment,
    /// so one made before a crash is found as this object's).
    pub async fn create_db_snapshot(
        &self,
        identifier: &str,
        instance: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        let result = (self.client.create_db_snapshot())
            .db_snapshot_identifier(identifier)
            .db_instance_identifier(instance)
            .set_tags(Some(rds_tags(tags)))
            .send()
            .await
            .map_err(|e| aws_error("CreateDBSnapshot", e, None));
        self.count("CreateDBSnapshot", &result);
        result.map(|_| ())
    }

    /// CopyDBSnapshot of `source` (an identifier here, or the ARN of a snapshot of another region
    /// of the account), tagged, with the KMS key of the copy and whether the source's tags are
    /// copied too.
    pub async fn copy_db_snapshot(
        &self,
        identifier: &str,
        source: &str,
        kms_key_id: Option<&str>,
        copy_tags: bool,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        let mut signed = vec![
            ("SourceDBSnapshotIdentifier", source),
            ("TargetDBSnapshotIdentifier", identifier),
        ];
        signed.extend(kms_key_id.map(|k| ("KmsKeyId", k)));
        let url = (self.pre_signed_url("CopyDBSnapshot", source, &signed)).await?;
        let result = (self.client.copy_db_snapshot())
            .source_db_snapshot_identifier(source)
            .target_db_snapshot_identifier(identifier)
            .set_kms_key_id(kms_key_id.map(str::to_owned))
            .set_pre_signed_url(url)
            .copy_tags(copy_tags)
            .set_tags(Some(rds_tags(tags)))
            .send()
            .await
            .map_err(|e| aws_error("CopyDBSnapshot", e, None));
        self.count("CopyDBSnapshot", &result);
        result.map(|_| ())
    }

    /// Who may restore the snapshot: DescribeDBSnapshotAttributes' `restore` values.
    pub async fn db_snapshot_shares(&self, identifier: &str) -> Result<Vec<String>, AwsError> {
        let result = (self.client.describe_db_snapshot_attributes())
            .db_snapshot_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("DescribeDBSnapshotAttributes", e, None));
        self.count("DescribeDBSnapshotAttributes", &result);
        let result = result?;
        let attributes = result.db_snapshot_attributes_result();
        Ok((attributes
            .map(|r| r.db_snapshot_attributes())
            .unwrap_or_default()
            .iter())
        .filter(|a| a.attribute_name() == Some("restore"))
        .flat_map(|a| a.attribute_values().iter().cloned())
        .collect())
    }

    /// ModifyDBSnapshotAttribute `restore`: these accounts added, those removed.
    pub async fn share_db_snapshot(
        &self,
        identifier: &str,
        add: &[String],
        remove: &[String],
    ) -> Result<(), AwsError> {
        let result = (self.client.modify_db_snapshot_attribute())
            .db_snapshot_identifier(identifier)
            .attribute_name("restore")
            .set_values_to_add(Some(add.to_vec()).filter(|v| !v.is_empty()))
            .set_values_to_remove(Some(remove.to_vec()).filter(|v| !v.is_empty()))
            .send()
            .await
            .map_err(|e| aws_error("ModifyDBSnapshotAttribute", e, None));
        self.count("ModifyDBSnapshotAttribute", &result);
        result.map(|_| ())
    }

    /// DeleteDBSnapshot; one already gone is deleted.
    pub async fn delete_db_snapshot(&self, identifier: &str) -> Result<(), AwsError> {
        let result = (self.client.delete_db_snapshot())
            .db_snapshot_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("DeleteDBSnapshot", e, None));
        self.count("DeleteDBSnapshot", &result);
        match result {
            Err(e) if not_found(&e) => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

fn observed(s: &aws_sdk_rds::types::DbSnapshot) -> ObservedSnapshot {
    let text = |v: Option<&str>| v.map(str::to_owned);
    ObservedSnapshot {
        name: s.db_snapshot_identifier().unwrap_or_default().to_owned(),
        arn: text(s.db_snapshot_arn()),
        instance: s.db_instance_identifier().unwrap_or_default().to_owned(),
        source_resource_id: text(s.dbi_resource_id()),
        kind: s.snapshot_type().unwrap_or_default().to_owned(),
        status: s.status().unwrap_or_default().to_owned(),
        percent_progress: s.percent_progress(),
        engine: text(s.engine()),
        engine_version: text(s.engine_version()),
        allocated_storage: s.allocated_storage(),
        encrypted: s.encrypted(),
        created: s.snapshot_create_time().map(ToString::to_string),
        tags: tag_map(s.tag_list()),
    }
}
