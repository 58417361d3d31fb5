//! The RDS calls of a snapshot kind, written once for both: [`SnapshotCalls`], which
//! `snapshot_calls!` implements for a kind from the names its SDK operations and fields carry
//! (DescribeDBSnapshots and DescribeDBClusterSnapshots share their shape but no trait). Each call
//! is counted and classified as every call (`rds/`); the describes read 100 a page, with the
//! snapshots' tags (RDS's DBSnapshot and DBClusterSnapshot carry their TagList:
//! https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DBSnapshot.html,
//! https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DBClusterSnapshot.html).

use std::collections::BTreeMap;
use std::future::Future;

use crate::aws_error::AwsError;
use crate::rds::Rds;

use super::ObservedSnapshot;

/// A snapshot kind's RDS calls.
pub trait SnapshotCalls {
    /// One snapshot by identifier (or by ARN: one of another region, or one another account
    /// shared), with its tags; None when RDS has none.
    fn describe(
        rds: &Rds,
        name: &str,
    ) -> impl Future<Output = Result<Option<ObservedSnapshot>, AwsError>> + Send;
    /// Every manual snapshot of the source.
    fn snapshots_of(
        rds: &Rds,
        source: &str,
    ) -> impl Future<Output = Result<Vec<ObservedSnapshot>, AwsError>> + Send;
    /// Every manual snapshot of the location (the observer's listing).
    fn manual(rds: &Rds) -> impl Future<Output = Result<Vec<ObservedSnapshot>, AwsError>> + Send;
    /// The snapshot of `source`, tagged (the tags are the snapshot's from its first moment, so
    /// one made before a crash is found as this object's).
    fn create(
        rds: &Rds,
        name: &str,
        source: &str,
        tags: &BTreeMap<String, String>,
    ) -> impl Future<Output = Result<(), AwsError>> + Send;
    /// The copy of `source` (an identifier here, or an ARN of another region or a shared one),
    /// tagged, with the copy's KMS key, whether the source's tags are copied too, and the
    /// PreSignedUrl where RDS reads one (`rds::presign`).
    fn copy(
        rds: &Rds,
        name: &str,
        source: &str,
        kms_key_id: Option<&str>,
        copy_tags: bool,
        tags: &BTreeMap<String, String>,
    ) -> impl Future<Output = Result<(), AwsError>> + Send;
    /// The restore attribute's values.
    fn shares(rds: &Rds, name: &str) -> impl Future<Output = Result<Vec<String>, AwsError>> + Send;
    /// The restore attribute: these accounts added, those removed.
    fn share(
        rds: &Rds,
        name: &str,
        add: &[String],
        remove: &[String],
    ) -> impl Future<Output = Result<(), AwsError>> + Send;
    /// The deletion; one already gone is deleted.
    fn delete(rds: &Rds, name: &str) -> impl Future<Output = Result<(), AwsError>> + Send;
}

/// `impl SnapshotCalls for $kind`, from its SDK names: the describe operation and its list, the
/// identifier and source fields, the create, copy (and its source and target fields), attribute
/// and delete operations with their labels, its not-found code, and the observed snapshot's
/// fields.
#[macro_export]
macro_rules! snapshot_calls {
    (
        kind: $kind:ty,
        describe: $describe:ident $describe_label:literal => $list:ident,
        identifier: $id:ident,
        source: $source:ident,
        create: $create:ident $create_label:literal,
        copy: $copy:ident $copy_label:literal ($copy_source:ident $copy_source_name:literal, $copy_target:ident $copy_target_name:literal),
        attributes: $attributes:ident $attributes_label:literal => $result:ident . $values:ident,
        modify: $modify:ident $modify_label:literal,
        delete: $delete:ident $delete_label:literal,
        observed: {arn: $arn:ident, resource: $resource:ident, encrypted: $encrypted:ident} $(,)?
    ) => {
        /// Every snapshot the request lists, 100 a page, each page counted (an error is the
        /// block's, not the caller's: `?` stops at the async block).
        macro_rules! pages {
            ($rds:expr, $request:expr) => {
                async {
                    let mut all = Vec::new();
                    let mut pages = $request.max_records(100).into_paginator().send();
                    while let Some(page) = pages.next().await {
                        let page = page
                            .map_err(|e| $crate::aws_error::aws_error($describe_label, e, None));
                        let page = $rds.counted($describe_label, page);
                        all.extend(page?.$list().iter().map(|s| {
                            let text = |v: Option<&str>| v.map(str::to_owned);
                            $crate::snapshot::ObservedSnapshot {
                                name: s.$id().unwrap_or_default().to_owned(),
                                arn: text(s.$arn()),
                                instance: s.$source().unwrap_or_default().to_owned(),
                                source_resource_id: text(s.$resource()),
                                kind: s.snapshot_type().unwrap_or_default().to_owned(),
                                status: s.status().unwrap_or_default().to_owned(),
                                percent_progress: s.percent_progress(),
                                engine: text(s.engine()),
                                engine_version: text(s.engine_version()),
                                allocated_storage: s.allocated_storage(),
                                encrypted: s.$encrypted(),
                                created: s.snapshot_create_time().map(ToString::to_string),
                                tags: $crate::rds::tag_map(s.tag_list()),
                            }
                        }));
                    }
                    Ok::<_, $crate::aws_error::AwsError>(all)
                }
                .await
            };
        }

        impl $crate::snapshot::calls::SnapshotCalls for $kind {
            async fn describe(
                rds: &$crate::rds::Rds,
                name: &str,
            ) -> Result<Option<$crate::snapshot::ObservedSnapshot>, $crate::aws_error::AwsError>
            {
                let request = (rds.client.$describe())
                    .$id(name)
                    .include_shared(name.starts_with("arn:"));
                match pages!(rds, request) {
                    Ok(found) => Ok(found.into_iter().next()),
                    Err(e) if e.gone() => Ok(None),
                    Err(e) => Err(e),
                }
            }

            async fn snapshots_of(
                rds: &$crate::rds::Rds,
                source: &str,
            ) -> Result<Vec<$crate::snapshot::ObservedSnapshot>, $crate::aws_error::AwsError> {
                let request = (rds.client.$describe())
                    .$source(source)
                    .snapshot_type("manual");
                pages!(rds, request)
            }

            async fn manual(
                rds: &$crate::rds::Rds,
            ) -> Result<Vec<$crate::snapshot::ObservedSnapshot>, $crate::aws_error::AwsError> {
                pages!(rds, rds.client.$describe().snapshot_type("manual"))
            }

            async fn create(
                rds: &$crate::rds::Rds,
                name: &str,
                source: &str,
                tags: &std::collections::BTreeMap<String, String>,
            ) -> Result<(), $crate::aws_error::AwsError> {
                let result = (rds.client.$create())
                    .$id(name)
                    .$source(source)
                    .set_tags(Some($crate::rds::rds_tags(tags)))
                    .send()
                    .await
                    .map_err(|e| $crate::aws_error::aws_error($create_label, e, None));
                let result = rds.counted($create_label, result);
                result.map(|_| ())
            }

            async fn copy(
                rds: &$crate::rds::Rds,
                name: &str,
                source: &str,
                kms_key_id: Option<&str>,
                copy_tags: bool,
                tags: &std::collections::BTreeMap<String, String>,
            ) -> Result<(), $crate::aws_error::AwsError> {
                let mut signed = vec![($copy_source_name, source), ($copy_target_name, name)];
                signed.extend(kms_key_id.map(|k| ("KmsKeyId", k)));
                let url = (rds.pre_signed_url($copy_label, source, &signed)).await?;
                let result = (rds.client.$copy())
                    .$copy_source(source)
                    .$copy_target(name)
                    .set_kms_key_id(kms_key_id.map(str::to_owned))
                    .set_pre_signed_url(url)
                    .copy_tags(copy_tags)
                    .set_tags(Some($crate::rds::rds_tags(tags)))
                    .send()
                    .await
                    .map_err(|e| $crate::aws_error::aws_error($copy_label, e, None));
                let result = rds.counted($copy_label, result);
                result.map(|_| ())
            }

            async fn shares(
                rds: &$crate::rds::Rds,
                name: &str,
            ) -> Result<Vec<String>, $crate::aws_error::AwsError> {
                let result = (rds.client.$attributes())
                    .$id(name)
                    .send()
                    .await
                    .map_err(|e| $crate::aws_error::aws_error($attributes_label, e, None));
                let result = rds.counted($attributes_label, result);
                let result = result?;
                let attributes = (result.$result().map(|r| r.$values())).unwrap_or_default();
                Ok((attributes.iter())
                    .filter(|a| a.attribute_name() == Some("restore"))
                    .flat_map(|a| a.attribute_values().iter().cloned())
                    .collect())
            }

            async fn share(
                rds: &$crate::rds::Rds,
                name: &str,
                add: &[String],
                remove: &[String],
            ) -> Result<(), $crate::aws_error::AwsError> {
                let result = (rds.client.$modify())
                    .$id(name)
                    .attribute_name("restore")
                    .set_values_to_add(Some(add.to_vec()).filter(|v| !v.is_empty()))
                    .set_values_to_remove(Some(remove.to_vec()).filter(|v| !v.is_empty()))
                    .send()
                    .await
                    .map_err(|e| $crate::aws_error::aws_error($modify_label, e, None));
                let result = rds.counted($modify_label, result);
                result.map(|_| ())
            }

            async fn delete(
                rds: &$crate::rds::Rds,
                name: &str,
            ) -> Result<(), $crate::aws_error::AwsError> {
                let result = (rds.client.$delete())
                    .$id(name)
                    .send()
                    .await
                    .map_err(|e| $crate::aws_error::aws_error($delete_label, e, None));
                let result = rds.counted($delete_label, result);
                match result {
                    Err(e) if e.gone() => Ok(()),
                    other => other.map(|_| ()),
                }
            }
        }
    };
}
