//! The `DBSnapshot` kind: a manual snapshot of an RDS instance, taken once (CreateDBSnapshot,
//! tagged with the ownership tags), reported as RDS has it, and deleted or kept with the object.
//! It runs on the group kinds' skeleton (`managed::groups`): read, plan (pure, `plan.rs` with its
//! table tests), act (`aws.rs`), report.

pub mod aws;
pub mod controller;
pub mod plan;
pub mod schedule;

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::crd::Tag;
use crate::database::choices::AdoptionPolicy;

/// An RDS DB snapshot.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
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
    validation = kube::core::Rule::new("has(self.source) == has(oldSelf.source) && (!has(self.source) || self.source == oldSelf.source)").message("source is immutable: a snapshot is of one instance").field_path(".source"),
    validation = kube::core::Rule::new("has(self.copyFrom) == has(oldSelf.copyFrom) && (!has(self.copyFrom) || self.copyFrom == oldSelf.copyFrom)").message("copyFrom is immutable").field_path(".copyFrom"),
    validation = kube::core::Rule::new("has(self.source) || has(self.copyFrom) ? has(self.source) != has(self.copyFrom) : (has(self.adoptionPolicy) && self.adoptionPolicy == 'Adopt')").message("set either source (a new snapshot of an instance) or copyFrom (a copy of a snapshot), or neither with adoptionPolicy Adopt (take over an existing snapshot)"),
    validation = kube::core::Rule::new("!has(self.schedule) || has(self.source)").message("a schedule takes snapshots of a source instance").field_path(".schedule"),
    validation = kube::core::Rule::new("!has(self.schedule) || !has(self.adoptionPolicy) || self.adoptionPolicy == 'Never'").message("a schedule adopts nothing: its snapshots are its own").field_path(".adoptionPolicy"),
    validation = kube::core::Rule::new("has(self.copyFrom) || (!has(self.kmsKeyID) && !has(self.copyTags))").message("kmsKeyID and copyTags go with copyFrom"),
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SnapshotSource>,
    /// Instead of a source instance: the snapshot to copy (CopyDBSnapshot), here or from another
    /// region of the account. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_from: Option<CopyFrom>,
    /// With copyFrom: the KMS key the copy is encrypted with (its ARN, ID or alias; a key of this
    /// region for a copy from another one). Default: the source's key in its region.
    #[serde(default, rename = "kmsKeyID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048))]
    pub kms_key_id: Option<String>,
    /// With copyFrom: copy the source snapshot's tags too (besides the ownership tags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_tags: Option<bool>,
    /// Instead of one snapshot, one per tick of a cron schedule, the `keep` newest kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<SnapshotSchedule>,
    /// What deleting this object does to its snapshots: Delete (DeleteDBSnapshot of each one it
    /// made; the default for one snapshot it took) or Retain (they stay in RDS, tagged
    /// rds.operator.rs/retained; the default with a schedule, whose snapshots are backups, and
    /// for an adopted snapshot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_policy: Option<SnapshotDeletionPolicy>,
    /// The AWS accounts allowed to restore (and copy) the snapshot, kept in sync with
    /// ModifyDBSnapshotAttribute (restore): each one an AWSAccount granted to this namespace names,
    /// or one the operator's --grant-share-to lists; `all` makes it public, only for an
    /// unencrypted snapshot of a namespace --grant-public-snapshots lists. Otherwise nothing is
    /// shared (ShareNotGranted). A share is a copy of the data given away.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20), inner(regex(pattern = r"^([0-9]{12}|all)$")))]
    pub shared_with: Vec<String>,
    /// What to do when RDS has a snapshot of this identifier that is not this object's: Never
    /// (when left out: refuse it, NameInUse), Adopt (take it over; take none) or AdoptOrCreate
    /// (take it over, or take the snapshot when there is none). Adoption adds the ownership tags.
    /// One nobody owns is adopted only when a platform admin granted it to this namespace (its
    /// tag rds.operator.rs/adoptable-by, or the operator's --grant-adoption); one of another
    /// object is never adopted, and one retained by a DBSnapshot of this namespace and name is
    /// taken back without asking. An adopted snapshot is retained when the object is deleted
    /// unless deletionPolicy says Delete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adoption_policy: Option<AdoptionPolicy>,
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
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = kube::core::Rule::new("has(self.name) != has(self.dbInstanceIdentifier)").message("source names its instance once: name or dbInstanceIdentifier"),
)]
pub struct SnapshotSource {
    /// A DBInstance of this namespace; the snapshot waits (ReferencesUnresolved) until it is
    /// Ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

/// A snapshot per tick, the newest `keep` of them kept.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotSchedule {
    /// When, in UTC: five cron fields (minute hour day-of-month month day-of-week, e.g.
    /// "0 3 * * *" for 03:00 each day), or six with seconds first. A tick missed while the
    /// operator was down is taken once, as soon as it runs again; a tick is not taken while the
    /// previous snapshot is still being taken.
    #[schemars(regex(pattern = r"^\S+( +\S+){4,5}$"))]
    pub cron: String,
    /// How many of this object's snapshots to keep, the newest; older ones it made are deleted,
    /// never any other snapshot.
    #[schemars(range(min = 1, max = 100))]
    pub keep: u32,
}

/// The snapshot a DBSnapshot copies: a DBSnapshot of this namespace, or a snapshot by identifier
/// or ARN. Either must be this namespace's own (its ownership tags, or those of the instance it
/// was taken of) or granted to it, as for restoreFrom.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = kube::core::Rule::new("has(self.name) != has(self.dbSnapshotIdentifier)").message("copyFrom names its snapshot once: name or dbSnapshotIdentifier"),
)]
pub struct CopyFrom {
    /// A DBSnapshot of this namespace, in any region of its account; the copy waits
    /// (ReferencesUnresolved) until it is Ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

/// What deleting a DBSnapshot does to the RDS snapshot.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum SnapshotDeletionPolicy {
    /// DeleteDBSnapshot, when the snapshot is this object's.
    #[default]
    Delete,
    /// Keep the snapshot; only the object goes.
    Retain,
}

/// What the operator observed of the snapshot.
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
    /// ARN of the snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arn: Option<String>,
    /// The RDS instance it is of.
    #[serde(
        default,
        rename = "dbInstanceIdentifier",
        skip_serializing_if = "Option::is_none"
    )]
    pub db_instance_identifier: Option<String>,
    /// The snapshot's state as RDS reports it (creating, available...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// How far RDS is in taking it, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent_progress: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    /// Its size, in GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocated_storage: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<bool>,
    /// When RDS took it (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_create_time: Option<String>,
    /// The AWS accounts RDS lets restore the snapshot (its restore attribute).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_with: Vec<String>,
    /// With a schedule: the snapshots kept and the ticks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ScheduleStatus>,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region the snapshot lives in, kept once it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::managed::placement::Placement>,
}

/// A schedule as last reconciled.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleStatus {
    /// The snapshots this object made that RDS has, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
    /// The last tick (RFC 3339) since the object was made, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_tick: Option<String>,
    /// The next tick (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_tick: Option<String>,
}

/// What the read step found besides the snapshot of the object's name: its source (while a
/// snapshot is to be taken) and, with a schedule, the manual snapshots of the source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extra {
    pub source: Source,
    /// With a schedule: every manual snapshot of the source instance, read now (None: not read).
    pub series: Option<Vec<ObservedSnapshot>>,
    /// What sharing needs, read while the spec or the status names a share.
    pub shares: Option<Shares>,
    /// The namespaces the operator's --grant-adoption lists.
    pub adoption: Vec<String>,
    /// The tags of the instance the snapshot of the name is of, read while the snapshot carries
    /// ownership tags that are not this object's (RDS copies an instance's tags to its snapshots).
    pub instance_tags: Option<BTreeMap<String, String>>,
}

/// What deciding a share needs: who may restore the snapshot now, and who may be given it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shares {
    /// The restore attribute's values (DescribeDBSnapshotAttributes), read now.
    pub current: Vec<String>,
    /// The AWS account IDs of the AWSAccounts granted to the namespace (of their roles' ARNs).
    pub accounts: Vec<String>,
    /// What the operator's settings grant.
    pub grants: crate::context::Grants,
}

/// The snapshot as RDS reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedSnapshot {
    /// The identifier (lower case, as RDS stores it).
    pub name: String,
    pub arn: Option<String>,
    pub instance: String,
    /// manual or automated.
    pub kind: String,
    pub status: String,
    pub percent_progress: Option<i32>,
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    pub allocated_storage: Option<i32>,
    pub encrypted: Option<bool>,
    pub created: Option<String>,
    pub tags: BTreeMap<String, String>,
}

/// What the read step found of the source, when the snapshot is still to be taken.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// Not read: the snapshot exists, or the object is being deleted.
    #[default]
    NotRead,
    /// A reference that cannot be used yet, and why (a DBInstance not Ready).
    Unresolved(String),
    /// The RDS instance has no such identifier.
    NotFound(String),
    /// The RDS instance (or, for a copy, the snapshot: its identifier or ARN), its state and its
    /// tags (for a snapshot, also those of the instance it was taken of while that exists), and
    /// what the operator's settings grant.
    Found {
        identifier: String,
        status: String,
        tags: BTreeMap<String, String>,
        instance_tags: Option<BTreeMap<String, String>>,
        grants: crate::context::Grants,
    },
}

impl DBSnapshot {
    /// The RDS identifier: spec.dbSnapshotIdentifier or metadata.name, lower-cased as RDS stores
    /// it.
    pub fn group_name(&self) -> String {
        (self.spec.db_snapshot_identifier.clone())
            .or_else(|| self.metadata.name.clone())
            .unwrap_or_default()
            .to_lowercase()
    }

    /// Whether deleting the object keeps its snapshots: deletionPolicy, or by default Retain with
    /// a schedule or for an adopted snapshot, and Delete for one it took.
    fn retained(&self, adopted: bool) -> bool {
        match self.spec.deletion_policy {
            Some(policy) => policy == SnapshotDeletionPolicy::Retain,
            None => self.spec.schedule.is_some() || adopted,
        }
    }

    /// Whether the spec asks to take over a snapshot that is not its own.
    fn adoption_asked(&self) -> bool {
        (self.spec.adoption_policy).is_some_and(|p| p != AdoptionPolicy::Never)
    }
}

crate::placed!(DBSnapshot, |s| s.arn.is_some());
