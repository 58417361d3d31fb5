//! The SDK calls of DBCluster: DescribeDBClusters (one cluster, or every page of 100),
//! CreateDBCluster, ModifyDBCluster, DeleteDBCluster.

use std::collections::BTreeMap;

use aws_sdk_rds::types::{DbCluster, ServerlessV2ScalingConfiguration};
use secrecy::{ExposeSecret, SecretString};

use super::DBClusterSpec;
use super::drift::{ClusterFields, ClusterModification, scaling_configuration};
use super::observed::{ObservedCluster, ObservedMember};
use crate::aws_error::{AwsError, ErrorClass, aws_error};
use crate::database::spec::S3Source;
use crate::observer::listing::Listed;
use crate::rds::{Rds, rds_tags, tag_map};
use crate::rds_state::is_transitional;

/// What CreateDBCluster is sent.
pub struct CreateCluster<'a> {
    pub identifier: &'a str,
    pub spec: &'a DBClusterSpec,
    pub password: Option<&'a SecretString>,
    /// The spec's tags and the ownership tags.
    pub tags: &'a BTreeMap<String, String>,
    /// The global database a secondary joins (GlobalClusterIdentifier).
    pub global: Option<&'a str>,
}

pub(super) fn scaling(spec: &DBClusterSpec) -> Option<ServerlessV2ScalingConfiguration> {
    (spec.serverless_v2_scaling_configuration.as_ref())
        .map(|s| scaling_configuration(&(s.min_capacity, s.max_capacity)))
}

/// RDS's cluster as the plan reads it: the field table's fields read by its rows, the rest here.
impl From<&DbCluster> for ObservedCluster {
    fn from(c: &DbCluster) -> Self {
        let s = |v: Option<&str>| v.map(str::to_owned);
        let pending = (c.pending_modified_values().into_iter())
            .flat_map(|p| {
                p.engine_version()
                    .map(|v| ("engineVersion".to_owned(), v.to_owned()))
            })
            .collect();
        let mut observed = ObservedCluster {
            identifier: c.db_cluster_identifier().unwrap_or_default().to_owned(),
            resource_id: s(c.db_cluster_resource_id()),
            status: c.status().unwrap_or_default().to_owned(),
            arn: s(c.db_cluster_arn()),
            engine: s(c.engine()),
            endpoint: s(c.endpoint()),
            reader_endpoint: s(c.reader_endpoint()),
            master_username: s(c.master_username()),
            database_name: s(c.database_name()),
            db_subnet_group_name: s(c.db_subnet_group()),
            storage_encrypted: c.storage_encrypted(),
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
            master_user_secret_kms_key_id: (c.master_user_secret())
                .and_then(|s| s.kms_key_id().map(str::to_owned)),
            master_user_secret_status: (c.master_user_secret())
                .and_then(|s| s.secret_status().map(str::to_owned)),
            global_cluster: s(c.global_cluster_identifier()).filter(|g| !g.is_empty()),
            performance_insights_kms_key_id: s(c.performance_insights_kms_key_id()),
            http_endpoint_enabled: c.http_endpoint_enabled(),
            associated_roles: (c.associated_roles().iter())
                .map(|r| crate::rds_state::ObservedRole {
                    role_arn: r.role_arn().unwrap_or_default().to_owned(),
                    feature_name: s(r.feature_name()),
                    status: s(r.status()),
                })
                .collect(),
            ..Default::default()
        };
        ClusterFields::read(c, &mut observed);
        observed
    }
}

/// The clusters as the observer lists them (`observer::listing`); one RDS is busy with is read
/// directly.
impl Listed for ObservedCluster {
    const WHAT: &'static str = "the clusters";
    fn key(&self) -> String {
        self.identifier.clone()
    }
    fn settled(&self) -> bool {
        !is_transitional(&self.status)
    }
    async fn list(rds: &Rds) -> Result<Vec<Self>, AwsError> {
        rds.cluster_pages().await
    }
}

/// DBCluster's own calls: DescribeDBClusters read into its model (one, every page), CreateDBCluster, ModifyDBCluster, RemoveFromGlobalCluster and DeleteDBCluster.
pub(crate) trait ClusterCalls {
    /// DescribeDBClusters for one identifier; None when RDS has no such cluster.
    async fn describe_cluster(&self, identifier: &str)
    -> Result<Option<ObservedCluster>, AwsError>;

    /// Every cluster of the account and region: DescribeDBClusters through the SDK's paginator,
    /// 100 a page, each page counted.
    async fn cluster_pages(&self) -> Result<Vec<ObservedCluster>, AwsError>;

    /// CreateDBCluster with every field the spec sets.
    async fn create_cluster(&self, req: &CreateCluster<'_>) -> Result<ObservedCluster, AwsError>;

    /// RestoreDBClusterFromS3: the cluster CreateDBCluster would make (the settings the call
    /// takes; the rest follows in a ModifyDBCluster), with the backup under the bucket's prefix
    /// loaded into it, read as the ingestion role.
    async fn restore_cluster_from_s3(
        &self,
        req: &CreateCluster<'_>,
        s3: &S3Source,
    ) -> Result<(), AwsError>;

    /// ModifyDBCluster carrying exactly the fields set in `m` (and the password when it rotates).
    async fn modify_cluster(
        &self,
        identifier: &str,
        m: &ClusterModification,
        password: Option<&SecretString>,
    ) -> Result<ObservedCluster, AwsError>;

    /// RemoveFromGlobalCluster: the cluster (by ARN, as the API asks) leaves the global database
    /// as a standalone cluster. One no longer a member is success.
    async fn remove_from_global_cluster(&self, global: &str, arn: &str) -> Result<(), AwsError>;

    /// DeleteDBCluster, with a final cluster snapshot when one is named. A missing cluster is
    /// success.
    async fn delete_cluster(
        &self,
        identifier: &str,
        final_snapshot: Option<&str>,
    ) -> Result<(), AwsError>;

    /// The endpoint of the cluster's DB shard group (DescribeDBShardGroups, filter
    /// db-cluster-id), None while it has none or RDS reports none yet.
    async fn shard_group_endpoint(&self, identifier: &str) -> Result<Option<String>, AwsError>;
}

impl ClusterCalls for Rds {
    async fn describe_cluster(
        &self,
        identifier: &str,
    ) -> Result<Option<ObservedCluster>, AwsError> {
        Ok(self
            .db_cluster(identifier)
            .await?
            .as_ref()
            .map(ObservedCluster::from))
    }

    async fn cluster_pages(&self) -> Result<Vec<ObservedCluster>, AwsError> {
        let mut pages = (self.client.describe_db_clusters())
            .into_paginator()
            .page_size(100)
            .send();
        let mut all = Vec::new();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeDBClusters", e, None));
            let page = self.counted("DescribeDBClusters", page);
            all.extend(page?.db_clusters().iter().map(ObservedCluster::from));
        }
        Ok(all)
    }

    async fn create_cluster(&self, req: &CreateCluster<'_>) -> Result<ObservedCluster, AwsError> {
        let spec = req.spec;
        let request = ClusterFields::create(spec, self.client.create_db_cluster());
        let result = request
            .db_cluster_identifier(req.identifier)
            .engine(spec.engine.as_str())
            .set_master_username(spec.master_username.clone())
            .set_global_cluster_identifier(req.global.map(str::to_owned))
            .set_master_user_password(req.password.map(|p| p.expose_secret().to_owned()))
            .set_manage_master_user_password(spec.password.manage_master_user_password)
            .set_master_user_secret_kms_key_id(spec.password.master_user_secret_kms_key_id.clone())
            .set_database_name(spec.database_name.clone())
            .set_enable_http_endpoint(spec.enable_http_endpoint)
            .set_cluster_scalability_type(
                (spec.cluster_scalability_type)
                    .map(|t| aws_sdk_rds::types::ClusterScalabilityType::from(t.as_str())),
            )
            .set_performance_insights_kms_key_id(
                spec.insights.performance_insights_kms_key_id.clone(),
            )
            .set_db_subnet_group_name(spec.network.db_subnet_group_name.clone())
            .set_storage_encrypted(spec.security.storage_encrypted)
            .set_kms_key_id(spec.security.kms_key_id.clone())
            .set_tags(Some(rds_tags(req.tags)))
            .send()
            .await
            .map_err(|e| aws_error("CreateDBCluster", e, req.password));
        let result = self.counted("CreateDBCluster", result);
        let out = result?;
        Ok(
            (out.db_cluster().map(ObservedCluster::from)).unwrap_or_else(|| ObservedCluster {
                identifier: req.identifier.to_owned(),
                status: "creating".into(),
                ..Default::default()
            }),
        )
    }

    async fn modify_cluster(
        &self,
        identifier: &str,
        m: &ClusterModification,
        password: Option<&SecretString>,
    ) -> Result<ObservedCluster, AwsError> {
        let result = (m.send(self.client.modify_db_cluster()))
            .db_cluster_identifier(identifier)
            .apply_immediately(m.apply_immediately)
            .set_allow_major_version_upgrade(m.allow_major_version_upgrade.then_some(true))
            .set_master_user_password(password.map(|p| p.expose_secret().to_owned()))
            .send()
            .await
            .map_err(|e| aws_error("ModifyDBCluster", e, password));
        let result = self.counted("ModifyDBCluster", result);
        Ok((result?.db_cluster().map(ObservedCluster::from)).unwrap_or_default())
    }

    async fn remove_from_global_cluster(&self, global: &str, arn: &str) -> Result<(), AwsError> {
        let result = (self.client.remove_from_global_cluster())
            .global_cluster_identifier(global)
            .db_cluster_identifier(arn)
            .send()
            .await
            .map_err(|e| aws_error("RemoveFromGlobalCluster", e, None));
        let result = self.counted("RemoveFromGlobalCluster", result);
        match result {
            Ok(_) => Ok(()),
            Err(e) if e.class == ErrorClass::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn restore_cluster_from_s3(
        &self,
        req: &CreateCluster<'_>,
        s3: &S3Source,
    ) -> Result<(), AwsError> {
        let spec = req.spec;
        let result = (self.client.restore_db_cluster_from_s3())
            .db_cluster_identifier(req.identifier)
            .engine(spec.engine.as_str())
            .set_engine_version(spec.engine_version.clone())
            .set_master_username(spec.master_username.clone())
            .set_master_user_password(req.password.map(|p| p.expose_secret().to_owned()))
            .set_manage_master_user_password(spec.password.manage_master_user_password)
            .set_master_user_secret_kms_key_id(spec.password.master_user_secret_kms_key_id.clone())
            .set_database_name(spec.database_name.clone())
            .set_db_subnet_group_name(spec.network.db_subnet_group_name.clone())
            .set_vpc_security_group_ids(spec.network.vpc_security_group_ids.clone())
            .set_port(spec.network.port)
            .set_db_cluster_parameter_group_name(spec.db_cluster_parameter_group_name.clone())
            .set_storage_encrypted(spec.security.storage_encrypted)
            .set_kms_key_id(spec.security.kms_key_id.clone())
            .set_copy_tags_to_snapshot(spec.backups.copy_tags_to_snapshot)
            .set_deletion_protection(spec.deletion.deletion_protection)
            .source_engine(&s3.source_engine)
            .source_engine_version(&s3.source_engine_version)
            .s3_bucket_name(&s3.bucket)
            .set_s3_prefix(s3.prefix.clone())
            .s3_ingestion_role_arn(&s3.ingestion_role)
            .set_tags(Some(rds_tags(req.tags)))
            .send()
            .await
            .map_err(|e| aws_error("RestoreDBClusterFromS3", e, req.password));
        let result = self.counted("RestoreDBClusterFromS3", result);
        result.map(|_| ())
    }

    async fn shard_group_endpoint(&self, identifier: &str) -> Result<Option<String>, AwsError> {
        let filter = aws_sdk_rds::types::Filter::builder()
            .name("db-cluster-id")
            .values(identifier)
            .build();
        let result = (self.client.describe_db_shard_groups())
            .filters(filter)
            .send()
            .await
            .map_err(|e| aws_error("DescribeDBShardGroups", e, None));
        let result = self.counted("DescribeDBShardGroups", result);
        let groups: Vec<_> = (result?.db_shard_groups().iter())
            .map(crate::database::shard_group::observed)
            .collect();
        Ok(crate::database::shard_group::endpoint_of(
            &groups, identifier,
        ))
    }

    async fn delete_cluster(
        &self,
        identifier: &str,
        final_snapshot: Option<&str>,
    ) -> Result<(), AwsError> {
        let result = (self.client.delete_db_cluster())
            .db_cluster_identifier(identifier)
            .skip_final_snapshot(final_snapshot.is_none())
            .set_final_db_snapshot_identifier(final_snapshot.map(str::to_owned))
            .send()
            .await
            .map_err(|e| aws_error("DeleteDBCluster", e, None));
        let result = self.counted("DeleteDBCluster", result);
        match result {
            Ok(_) => Ok(()),
            Err(e) if e.class == ErrorClass::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }
}
