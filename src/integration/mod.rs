//! The `Integration` kind: a zero-ETL integration (zero-etl.html) that replicates a DBCluster of the
//! namespace into an Amazon Redshift namespace. Made with CreateIntegration, its data filter and
//! description kept with ModifyIntegration, deleted with the object. Its source is a DBCluster of
//! the namespace, by name (`dbClusterRef`): an integration never reads another namespace's
//! database. Its target is the data leaving the cluster, so it must be in the cluster's own account
//! or one granted to the namespace (an AWSAccount that selects it, or the operator's
//! --grant-share-to), as a snapshot's share must. It runs on the group kinds' skeleton
//! (`managed::named`): read (`controller.rs`), plan (pure, `plan.rs` with its table tests), act
//! (`aws.rs`), report.

pub mod aws;
pub mod controller;
pub mod plan;

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use crate::crd::{LocalRef, Tag};

/// A zero-ETL integration of a DBCluster with Amazon Redshift.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "Integration",
    plural = "integrations",
    shortname = "rdsintegration",
    category = "rds",
    namespaced,
    status = "IntegrationStatus",
    doc = "An AWS RDS zero-ETL integration managed by rds-operator.",
    printcolumn(
        name = "Source",
        type_ = "string",
        json_path = ".spec.dbClusterRef.name"
    ),
    printcolumn(name = "Status", type_ = "string", json_path = ".status.status"),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Ready\")].status"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[x_kube(
    validation = kube::core::Rule::new("has(self.integrationName) == has(oldSelf.integrationName) && (!has(self.integrationName) || self.integrationName == oldSelf.integrationName)").message("integrationName is immutable").field_path(".integrationName"),
    validation = kube::core::Rule::new("self.dbClusterRef == oldSelf.dbClusterRef").message("dbClusterRef is immutable: RDS cannot move an integration to another source").field_path(".dbClusterRef"),
    validation = kube::core::Rule::new("self.targetARN == oldSelf.targetARN").message("targetARN is immutable: RDS cannot move an integration to another target").field_path(".targetARN"),
    validation = kube::core::Rule::new("has(self.kmsKeyID) == has(oldSelf.kmsKeyID) && (!has(self.kmsKeyID) || self.kmsKeyID == oldSelf.kmsKeyID)").message("kmsKeyID is immutable").field_path(".kmsKeyID"),
    validation = kube::core::Rule::new("has(self.additionalEncryptionContext) == has(oldSelf.additionalEncryptionContext) && (!has(self.additionalEncryptionContext) || self.additionalEncryptionContext == oldSelf.additionalEncryptionContext)").message("additionalEncryptionContext is immutable").field_path(".additionalEncryptionContext"),
)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationSpec {
    /// Name of the integration in RDS (1 to 63 letters, digits and hyphens, a letter first, no
    /// two hyphens in a row and none last); defaults to metadata.name. Immutable.
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^[a-zA-Z][a-zA-Z0-9]*(-[a-zA-Z0-9]+)*$")
    )]
    pub integration_name: Option<String>,
    /// The DBCluster of this namespace whose data is replicated (Aurora MySQL or Aurora
    /// PostgreSQL); waited for until it is Ready. Immutable.
    pub db_cluster_ref: LocalRef,
    /// The Amazon Redshift namespace the data goes to (its ARN): in the cluster's account, or in
    /// an account granted to this namespace (an AWSAccount that selects it, or the operator's
    /// --grant-share-to). Immutable.
    #[serde(rename = "targetARN")]
    #[x_kube(validation = kube::core::Rule::new("self.matches('^arn:aws[a-z-]*:(redshift:[a-z0-9-]+:[0-9]{12}:namespace:|redshift-serverless:[a-z0-9-]+:[0-9]{12}:namespace/)[A-Za-z0-9-]+$')").message("targetARN must be an Amazon Redshift namespace ARN"))]
    pub target_arn: String,
    /// Which databases, schemas and tables are replicated (zero-etl.filtering.html), e.g.
    /// "include: COFFEE.*"; RDS's default replicates everything. Modifiable.
    #[schemars(length(min = 1, max = 25600))]
    pub data_filter: Option<String>,
    /// A description of the integration. Modifiable.
    #[schemars(length(max = 1000))]
    pub description: Option<String>,
    /// The KMS key the integration encrypts with (its ARN, ID or alias); default: an AWS owned
    /// key. Immutable.
    #[serde(rename = "kmsKeyID")]
    pub kms_key_id: Option<String>,
    /// The encryption context for kmsKeyID (key-value pairs). Immutable.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub additional_encryption_context: BTreeMap<String, String>,
    /// Tags of the integration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 40))]
    pub tags: Vec<Tag>,
    /// Where the resource lives: its AWSAccount and region.
    #[serde(flatten)]
    pub placement: crate::managed::placement::Where,
}

/// What the operator observed of the integration.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// Name of the integration in RDS.
    pub integration_name: Option<String>,
    /// ARN of the integration.
    pub arn: Option<String>,
    /// RDS's state: creating, active, modifying, failed, deleting, syncing or needs_attention.
    pub status: Option<String>,
    /// The source cluster's ARN.
    #[serde(rename = "sourceARN")]
    pub source_arn: Option<String>,
    /// The data filter RDS applies.
    pub data_filter: Option<String>,
    /// What RDS reports wrong with the integration (its error codes and messages).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region the resource lives in, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
}

/// The integration as RDS reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedIntegration {
    pub name: String,
    pub arn: Option<String>,
    pub source_arn: String,
    pub target_arn: String,
    pub data_filter: Option<String>,
    pub description: Option<String>,
    pub kms_key_id: Option<String>,
    pub status: String,
    /// "code: message" of each error RDS reports.
    pub errors: Vec<String>,
    pub tags: BTreeMap<String, String>,
}

/// What the read step found of the source and of where the data may go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Source {
    /// The source cluster's ARN, once its DBCluster is Ready (None: not read at deletion, or
    /// unresolved).
    pub arn: Option<String>,
    /// Why the source cannot be used yet.
    pub unresolved: Option<String>,
    /// The AWS accounts the data may go to: the cluster's own, those of the AWSAccounts granted to
    /// the namespace, and the operator's --grant-share-to (`*`: any).
    pub accounts: Vec<String>,
}

impl Integration {
    /// The RDS name: spec.integrationName or metadata.name, lower-cased.
    pub fn name_in_rds(&self) -> String {
        crate::managed::named::rds_name(
            self.spec.integration_name.as_ref(),
            self.metadata.name.as_ref(),
        )
    }
}

crate::placed!(Integration, |s| s.arn.is_some());
