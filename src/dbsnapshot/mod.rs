//! The `DBSnapshot` kind: a manual snapshot of an RDS instance, taken once (CreateDBSnapshot,
//! tagged with the ownership tags), reported as RDS has it, and deleted or kept with the object.
//! It runs on the group kinds' skeleton (`managed::named`) and the snapshot kinds' shared layer
//! (`snapshot`): read, plan (pure, table-tested in `tests/`), act (`aws.rs`), report.

pub mod aws;
pub mod controller;

use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use crate::crd::Tag;
use crate::snapshot::{SnapshotOptions, SnapshotReport};

/// An RDS DB snapshot.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "DBSnapshot",
    plural = "dbsnapshots",
    shortname = "dbsnap",
    category = "rds",
    namespaced,
    status = "DBSnapshotStatus",
    doc = "An AWS RDS DB snapshot managed by rds-operator.",
    printcolumn(
        name = "Source",
        type_ = "string",
        json_path = ".status.dbInstanceIdentifier"
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
    validation = kube::core::Rule::new("has(self.dbSnapshotIdentifier) == has(oldSelf.dbSnapshotIdentifier) && (!has(self.dbSnapshotIdentifier) || self.dbSnapshotIdentifier == oldSelf.dbSnapshotIdentifier)").message("dbSnapshotIdentifier is immutable").field_path(".dbSnapshotIdentifier"),
)]
#[serde(rename_all = "camelCase")]
pub struct DBSnapshotSpec {
    /// Name of the snapshot in RDS (a letter first, then letters, digits and single hyphens);
    /// defaults to metadata.name. Immutable.
    #[serde(
        default,
        rename = "dbSnapshotIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(
        length(min = 1, max = 255),
        regex(pattern = r"^[a-zA-Z][a-zA-Z0-9-]*$")
    )]
    pub db_snapshot_identifier: Option<String>,
    /// The instance to snapshot. Immutable.
    pub source: Option<SnapshotSource>,
    /// Instead of a source instance: the snapshot to copy (CopyDBSnapshot), here or from another
    /// region of the account. Immutable.
    pub copy_from: Option<CopyFrom>,
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

/// The instance a snapshot is of: a DBInstance of this namespace, or an RDS instance by its
/// identifier. Either must be this namespace's own (its ownership tags) or granted to it (its tag
/// rds.operator.rs/restorable-by, or the operator's --grant-restore), as for restoreFrom: a
/// snapshot is a copy of the data.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = kube::core::Rule::new("has(self.name) != has(self.dbInstanceIdentifier)").message("source names its instance once: name or dbInstanceIdentifier"),
)]
pub struct SnapshotSource {
    /// A DBInstance of this namespace; the snapshot waits (ReferencesUnresolved) until it is
    /// Ready.
    #[schemars(length(min = 1, max = 253))]
    pub name: Option<String>,
    /// The RDS identifier of an instance in the snapshot's account and region.
    #[serde(
        default,
        rename = "dbInstanceIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 63))]
    pub db_instance_identifier: Option<String>,
}

/// The snapshot a DBSnapshot copies: a DBSnapshot of this namespace, or a snapshot by identifier
/// or ARN. Either must be this namespace's own (its ownership tags, or those of the instance it
/// was taken of) or granted to it, as for restoreFrom.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = kube::core::Rule::new("has(self.name) != has(self.dbSnapshotIdentifier)").message("copyFrom names its snapshot once: name or dbSnapshotIdentifier"),
)]
pub struct CopyFrom {
    /// A DBSnapshot of this namespace, in any region of its account; the copy waits
    /// (ReferencesUnresolved) until it is Ready.
    #[schemars(length(min = 1, max = 253))]
    pub name: Option<String>,
    /// A snapshot of this account and region by identifier (a manual one, or an automated one
    /// such as rds:coffee-2026-12-01-03-00), or of another region of the account by ARN.
    #[serde(
        default,
        rename = "dbSnapshotIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 2048))]
    pub db_snapshot_identifier: Option<String>,
}

/// What the operator observed of the snapshot.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DBSnapshotStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// Name of the snapshot in RDS.
    #[serde(
        default,
        rename = "dbSnapshotIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    pub db_snapshot_identifier: Option<String>,
    /// The RDS instance it is of.
    #[serde(
        default,
        rename = "dbInstanceIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    pub db_instance_identifier: Option<String>,
    /// What RDS reports of it.
    #[serde(flatten)]
    pub report: SnapshotReport,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region the snapshot lives in, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
}

impl DBSnapshot {
    /// The RDS identifier: spec.dbSnapshotIdentifier or metadata.name, lower-cased as RDS stores
    /// it.
    pub fn name_in_rds(&self) -> String {
        crate::managed::named::rds_name(
            self.spec.db_snapshot_identifier.as_ref(),
            self.metadata.name.as_ref(),
        )
    }
}

crate::placed!(DBSnapshot, |s| s.report.arn.is_some());

#[cfg(test)]
mod tests;
