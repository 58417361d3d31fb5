//! The `DBShardGroup` kind: the DB shard group of an Aurora PostgreSQL Limitless Database
//! (limitless.html), the routers and shards a limitless DBCluster of the namespace serves its data
//! from. Made with CreateDBShardGroup, its capacity and redundancy kept with ModifyDBShardGroup,
//! deleted with the object (RDS deletes no limitless cluster before its shard group). Its cluster
//! is a DBCluster of the namespace, by name (`dbClusterRef`), and its endpoint is the cluster's
//! connection Secret's `shardGroupHost`. It runs on the group kinds' skeleton (`managed::named`):
//! read (`controller.rs`), plan (pure, `plan.rs` with its table tests), act (`aws.rs`), report.

pub mod aws;
pub mod controller;
pub mod plan;

use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use crate::crd::{LocalRef, Tag};

/// An Aurora PostgreSQL Limitless Database DB shard group.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "DBShardGroup",
    plural = "dbshardgroups",
    shortname = "rdsshards",
    category = "rds",
    namespaced,
    status = "DBShardGroupStatus",
    doc = "An AWS RDS DB shard group (Aurora PostgreSQL Limitless Database) managed by rds-operator.",
    printcolumn(
        name = "Cluster",
        type_ = "string",
        json_path = ".spec.dbClusterRef.name"
    ),
    printcolumn(name = "MaxACU", type_ = "number", json_path = ".spec.maxACU"),
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
    validation = kube::core::Rule::new("has(self.dbShardGroupIdentifier) == has(oldSelf.dbShardGroupIdentifier) && (!has(self.dbShardGroupIdentifier) || self.dbShardGroupIdentifier == oldSelf.dbShardGroupIdentifier)").message("dbShardGroupIdentifier is immutable").field_path(".dbShardGroupIdentifier"),
    validation = kube::core::Rule::new("self.dbClusterRef == oldSelf.dbClusterRef").message("dbClusterRef is immutable: a shard group is its cluster's").field_path(".dbClusterRef"),
    validation = kube::core::Rule::new("has(self.publiclyAccessible) == has(oldSelf.publiclyAccessible) && (!has(self.publiclyAccessible) || self.publiclyAccessible == oldSelf.publiclyAccessible)").message("publiclyAccessible is immutable").field_path(".publiclyAccessible"),
    validation = kube::core::Rule::new("!has(self.minACU) || self.minACU < self.maxACU").message("minACU must be below maxACU (API_CreateDBShardGroup.html)").field_path(".minACU"),
)]
#[serde(rename_all = "camelCase")]
pub struct DBShardGroupSpec {
    /// Identifier of the shard group in RDS (a letter first, then letters, digits and hyphens, no
    /// two hyphens in a row and none last); defaults to metadata.name. Immutable.
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^[a-zA-Z][a-zA-Z0-9]*(-[a-zA-Z0-9]+)*$")
    )]
    pub db_shard_group_identifier: Option<String>,
    /// The DBCluster of this namespace the shard group serves: an Aurora PostgreSQL cluster with
    /// clusterScalabilityType limitless; waited for until it is Ready. Immutable.
    pub db_cluster_ref: LocalRef,
    /// The most Aurora capacity units all the group's routers and shards may use together.
    /// Modifiable.
    #[serde(rename = "maxACU")]
    #[schemars(range(min = 1.0))]
    pub max_acu: f64,
    /// The fewest Aurora capacity units they use together; RDS's default when left out.
    /// Modifiable.
    #[serde(rename = "minACU")]
    #[schemars(range(min = 1.0))]
    pub min_acu: Option<f64>,
    /// Standby compute per shard: 0 (none), 1 (one in another Availability Zone) or 2 (two).
    /// RDS's default when left out. Modifiable.
    #[schemars(range(min = 0, max = 2))]
    pub compute_redundancy: Option<i32>,
    /// Whether the shard group's endpoint resolves to public addresses. Immutable.
    pub publicly_accessible: Option<bool>,
    /// Tags of the shard group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 40))]
    pub tags: Vec<Tag>,
    /// Where the resource lives: its AWSAccount and region.
    #[serde(flatten)]
    pub placement: crate::managed::placement::Where,
}

/// What the operator observed of the shard group.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DBShardGroupStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// Identifier of the shard group in RDS.
    pub db_shard_group_identifier: Option<String>,
    /// ARN of the shard group.
    pub arn: Option<String>,
    /// RDS's state: creating, available, modifying, rebooting or deleting.
    pub status: Option<String>,
    /// The endpoint applications connect to (also the cluster's connection Secret's
    /// shardGroupHost).
    pub endpoint: Option<String>,
    /// The capacity RDS has: most and fewest ACUs, and the standby compute.
    #[serde(rename = "maxACU")]
    pub max_acu: Option<f64>,
    #[serde(rename = "minACU")]
    pub min_acu: Option<f64>,
    pub compute_redundancy: Option<i32>,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region the resource lives in, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
}

pub use crate::database::shard_group::ObservedShardGroup;

/// What the read step found of the cluster: its RDS identifier once its DBCluster is Ready, or
/// why not yet (both None at deletion: not read).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cluster {
    pub identifier: Option<String>,
    pub unresolved: Option<String>,
}

impl DBShardGroup {
    /// The RDS identifier: spec.dbShardGroupIdentifier or metadata.name, lower-cased.
    pub fn name_in_rds(&self) -> String {
        crate::managed::named::rds_name(
            self.spec.db_shard_group_identifier.as_ref(),
            self.metadata.name.as_ref(),
        )
    }
}

crate::placed!(DBShardGroup, |s| s.arn.is_some());
