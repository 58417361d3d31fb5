//! The `DBClusterSnapshot` kind: a manual snapshot of an Aurora cluster, taken once
//! (CreateDBClusterSnapshot, tagged with the ownership tags), copied, shared, scheduled, reported
//! as RDS has it, and deleted or kept with the object. All of it but its names and its RDS calls
//! is the snapshot kinds' shared layer (`snapshot`), on the group kinds' skeleton
//! (`managed::named`); the table tests of that layer go through DBSnapshot, and `tests.rs` has
//! this kind's own.

pub mod aws;
pub mod controller;

use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use crate::crd::Tag;
use crate::snapshot::{SnapshotOptions, SnapshotReport};

/// An RDS DB cluster snapshot.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "DBClusterSnapshot",
    plural = "dbclustersnapshots",
    shortname = "dbcsnap",
    category = "rds",
    namespaced,
    status = "DBClusterSnapshotStatus",
    doc = "An AWS RDS DB cluster snapshot managed by rds-operator.",
    printcolumn(
        name = "Source",
        type_ = "string",
        json_path = ".status.dbClusterIdentifier"
    ),
    printcolumn(name = "State", type_ = "string", json_path = ".status.state"),
    printcolumn(
        name = "Progress",
        type_ = "integer",
        json_path = ".status.percentProgress"
    ),
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
    validation = kube::core::Rule::new("has(self.dbClusterSnapshotIdentifier) == has(oldSelf.dbClusterSnapshotIdentifier) && (!has(self.dbClusterSnapshotIdentifier) || self.dbClusterSnapshotIdentifier == oldSelf.dbClusterSnapshotIdentifier)").message("dbClusterSnapshotIdentifier is immutable").field_path(".dbClusterSnapshotIdentifier"),
)]
#[serde(rename_all = "camelCase")]
pub struct DBClusterSnapshotSpec {
    /// Name of the cluster snapshot in RDS (a letter first, then letters, digits and single
    /// hyphens); defaults to metadata.name. Immutable.
    #[serde(
        default,
        rename = "dbClusterSnapshotIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(
        length(min = 1, max = 255),
        regex(pattern = r"^[a-zA-Z][a-zA-Z0-9-]*$")
    )]
    pub db_cluster_snapshot_identifier: Option<String>,
    /// The cluster to snapshot. Immutable.
    pub source: Option<ClusterSnapshotSource>,
    /// Instead of a source cluster: the cluster snapshot to copy (CopyDBClusterSnapshot), here or
    /// from another region or account. Immutable.
    pub copy_from: Option<ClusterCopyFrom>,
    /// What else the snapshot is: a copy's key and tags, a schedule, its deletion, its shares,
    /// its adoption.
    #[serde(flatten)]
    pub options: SnapshotOptions,
    /// Tags of the snapshot, besides the ownership tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 40))]
    pub tags: Vec<Tag>,
    /// Where the snapshot lives: its AWSAccount and region.
    #[serde(flatten)]
    pub placement: crate::managed::placement::Where,
}

/// The cluster a snapshot is of: a DBCluster of this namespace, or an RDS cluster by its
/// identifier. Either must be this namespace's own (its ownership tags) or granted to it (its tag
/// rds.operator.rs/restorable-by, or the operator's --grant-restore), as for restoreFrom: a
/// snapshot is a copy of the data.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = kube::core::Rule::new("has(self.name) != has(self.dbClusterIdentifier)").message("source names its cluster once: name or dbClusterIdentifier"),
)]
pub struct ClusterSnapshotSource {
    /// A DBCluster of this namespace; the snapshot waits (ReferencesUnresolved) until it is
    /// Ready.
    #[schemars(length(min = 1, max = 253))]
    pub name: Option<String>,
    /// The RDS identifier of a cluster in the snapshot's account and region.
    #[serde(
        default,
        rename = "dbClusterIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 63))]
    pub db_cluster_identifier: Option<String>,
}

/// The cluster snapshot a DBClusterSnapshot copies: a DBClusterSnapshot of this namespace, or a
/// cluster snapshot by identifier or ARN. Either must be this namespace's own (its ownership tags,
/// or those of the cluster it was taken of) or granted to it, as for restoreFrom.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = kube::core::Rule::new("has(self.name) != has(self.dbClusterSnapshotIdentifier)").message("copyFrom names its snapshot once: name or dbClusterSnapshotIdentifier"),
)]
pub struct ClusterCopyFrom {
    /// A DBClusterSnapshot of this namespace, in any region of its account; the copy waits
    /// (ReferencesUnresolved) until it is Ready.
    #[schemars(length(min = 1, max = 253))]
    pub name: Option<String>,
    /// A cluster snapshot of this account and region by identifier (a manual one, or an
    /// automated one such as rds:orders-2026-12-01-03-00), or by ARN one of another region of
    /// the account, or one another account shared with this one.
    #[serde(
        default,
        rename = "dbClusterSnapshotIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 2048))]
    pub db_cluster_snapshot_identifier: Option<String>,
}

/// What the operator observed of the cluster snapshot.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DBClusterSnapshotStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// Name of the cluster snapshot in RDS.
    #[serde(
        default,
        rename = "dbClusterSnapshotIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    pub db_cluster_snapshot_identifier: Option<String>,
    /// The RDS cluster it is of.
    #[serde(
        default,
        rename = "dbClusterIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    pub db_cluster_identifier: Option<String>,
    /// What RDS reports of it.
    #[serde(flatten)]
    pub report: SnapshotReport,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region the snapshot lives in, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
}

impl DBClusterSnapshot {
    /// The RDS identifier: spec.dbClusterSnapshotIdentifier or metadata.name, lower-cased as RDS
    /// stores it.
    pub fn name_in_rds(&self) -> String {
        crate::managed::named::rds_name(
            self.spec.db_cluster_snapshot_identifier.as_ref(),
            self.metadata.name.as_ref(),
        )
    }
}

crate::placed!(DBClusterSnapshot, |s| s.report.arn.is_some());

#[cfg(test)]
mod tests;
