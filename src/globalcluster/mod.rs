//! The `GlobalCluster` kind: an Aurora global database, made from a primary DBCluster of the
//! namespace (CreateGlobalCluster with SourceDBClusterIdentifier) or empty with an engine, its
//! deletion protection and engine version kept (ModifyGlobalCluster), its members reported with
//! their roles and regions, and deleted (or kept) with the object once it has no member. It runs
//! on the group kinds' skeleton (`managed::named`): read (`controller.rs`), plan (pure,
//! `plan.rs` with its table tests), act (`aws.rs`), report.

pub mod aws;
pub mod controller;
pub mod plan;

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::crd::{LocalRef, Tag};
use crate::database::choices::ClusterEngine;

/// An Aurora global database.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "GlobalCluster",
    plural = "globalclusters",
    shortname = "gdb",
    category = "rds",
    namespaced,
    status = "GlobalClusterStatus",
    doc = "An AWS RDS (Aurora) global database managed by rds-operator.",
    printcolumn(name = "State", type_ = "string", json_path = ".status.state"),
    printcolumn(name = "Writer", type_ = "string", json_path = ".status.writer"),
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
    validation = kube::core::Rule::new("has(self.globalClusterIdentifier) == has(oldSelf.globalClusterIdentifier) && (!has(self.globalClusterIdentifier) || self.globalClusterIdentifier == oldSelf.globalClusterIdentifier)").message("globalClusterIdentifier is immutable").field_path(".globalClusterIdentifier"),
    validation = kube::core::Rule::new("has(self.sourceDBClusterRef) == has(oldSelf.sourceDBClusterRef) && (!has(self.sourceDBClusterRef) || self.sourceDBClusterRef == oldSelf.sourceDBClusterRef)").message("sourceDBClusterRef is immutable: the global database is made of it once").field_path(".sourceDBClusterRef"),
    validation = kube::core::Rule::new("!has(self.engine) || self.engine.startsWith('aurora')").message("a global database is Aurora's: engine aurora-mysql or aurora-postgresql (aurora-global-database.html)").field_path(".engine"),
    validation = kube::core::Rule::new("has(self.sourceDBClusterRef) != has(self.engine)").message("set either sourceDBClusterRef (made from a primary DBCluster, whose engine it takes) or engine (made empty)"),
    validation = kube::core::Rule::new("!has(self.sourceDBClusterRef) || !has(self.storageEncrypted)").message("storageEncrypted is the primary cluster's: set it there").field_path(".storageEncrypted"),
    validation = kube::core::Rule::new("has(self.storageEncrypted) == has(oldSelf.storageEncrypted) && (!has(self.storageEncrypted) || self.storageEncrypted == oldSelf.storageEncrypted)").message("storageEncrypted is immutable").field_path(".storageEncrypted"),
    validation = kube::core::Rule::new("!has(self.switchoverTo) || !has(self.failoverTo)").message("set either switchoverTo (no data lost) or failoverTo (for when the primary's region is down), not both"),
)]
#[serde(rename_all = "camelCase")]
pub struct GlobalClusterSpec {
    /// Name of the global database in RDS (a letter first, then letters, digits and hyphens);
    /// defaults to metadata.name. Immutable.
    #[schemars(
        length(min = 1, max = 255),
        regex(pattern = r"^[a-zA-Z][a-zA-Z0-9-]*$")
    )]
    pub global_cluster_identifier: Option<String>,
    /// The primary: a DBCluster of this namespace, Ready; the global database is made of it and
    /// takes its engine, version and encryption. Immutable.
    #[serde(
        default,
        rename = "sourceDBClusterRef",
        skip_serializing_if = "Option::is_none"
    )]
    pub source_db_cluster_ref: Option<LocalRef>,
    /// Instead of a source: the engine of an empty global database.
    pub engine: Option<ClusterEngine>,
    /// The engine version; a change is one ModifyGlobalCluster (a new major version with
    /// allowMajorVersionUpgrade).
    pub engine_version: Option<String>,
    /// Let a change of engineVersion cross a major version.
    pub allow_major_version_upgrade: Option<bool>,
    /// RDS refuses to delete a protected global database.
    pub deletion_protection: Option<bool>,
    /// Encryption of an empty global database (with engine). Immutable.
    pub storage_encrypted: Option<bool>,
    /// What deleting this object does, once the global database has no member cluster: Delete
    /// (DeleteGlobalCluster, the default) or Retain (it stays, tagged rds.operator.rs/retained).
    pub deletion_policy: Option<GlobalDeletionPolicy>,
    /// Move the primary, with no data lost, to this DBCluster of the namespace, a secondary of the
    /// global database (SwitchoverGlobalCluster): sent once, when RDS reports the global database
    /// available with every member connected and the DBCluster is Ready, and reported until RDS
    /// shows it the writer. The global writer endpoint stays the same; the members' connection
    /// Secrets follow.
    pub switchover_to: Option<LocalRef>,
    /// The most seconds the switchoverTo target may be behind the primary
    /// (AuroraGlobalDBReplicationLag, read from CloudWatch in the target's region) for the
    /// switchover to be sent: while it is further behind, or its lag is not known, the switchover
    /// waits, and Synced says why with the figure (docs/health.md).
    #[schemars(range(min = 0, max = 86400))]
    pub max_lag_seconds: Option<i32>,
    /// Make this DBCluster of the namespace the primary at once, losing the writes it has not yet
    /// received (FailoverGlobalCluster with AllowDataLoss), for when the primary's region is down.
    /// Sent once, only with allowDataLoss: true, and only once the operator finds the primary's
    /// region unavailable (its calls there fail) or the annotation rds.operator.rs/failover names
    /// the DBCluster.
    pub failover_to: Option<FailoverTo>,
    /// Tags of the global database, besides the ownership tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 40))]
    pub tags: Vec<Tag>,
    /// Where its calls go: its AWSAccount and the primary's region.
    #[serde(flatten)]
    pub placement: crate::managed::placement::Where,
}

/// A failover to a secondary, its data loss spelled out.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new("self.allowDataLoss").message("failoverTo loses the writes the target has not received yet: set allowDataLoss: true to say so (switchoverTo moves the primary with none lost)"))]
#[x_kube(validation = kube::core::Rule::new("!has(self.failoverAfter) || duration(self.failoverAfter) >= duration('60s')").message("failoverAfter must be at least 60s: a shorter silence is a network blip, not a regional outage, and a failover loses data").field_path(".failoverAfter"))]
pub struct FailoverTo {
    /// The DBCluster of this namespace to make the primary.
    pub name: String,
    /// Must be true: the writes the target has not received are lost.
    pub allow_data_loss: bool,
    /// How long the region RDS reports the writer in must have answered no call at all (no answer,
    /// a connection refused, reset or timed out, or a 5xx, every probe failing; a throttle is an
    /// answer), while the target's region answers, before that approves the failover without the
    /// annotation. At least 60s; default 5m.
    pub failover_after: Option<kube::core::Duration>,
}

/// The shortest failoverAfter (CEL refuses a shorter one at apply; the plan holds an object
/// stored before that to it too).
pub const MIN_FAILOVER_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// How long the writer's region must be silent to approve a failover, when the spec names none.
pub const DEFAULT_FAILOVER_AFTER: std::time::Duration = std::time::Duration::from_secs(300);

/// The annotation that approves spec.failoverTo while the primary's region still answers: its
/// value is the name of the DBCluster to fail over to.
pub const FAILOVER_ANNOTATION: &str = "rds.operator.rs/failover";

/// What deleting a GlobalCluster does to the global database (its member clusters are their
/// DBClusters' and wait for nothing here: the deletion waits for them).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum GlobalDeletionPolicy {
    #[default]
    Delete,
    Retain,
}

/// What the operator observed of the global database.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalClusterStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// Name of the global database in RDS.
    pub global_cluster_identifier: Option<String>,
    pub arn: Option<String>,
    /// Its state as RDS reports it (creating, available, switching-over...).
    pub state: Option<String>,
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    pub deletion_protection: Option<bool>,
    pub storage_encrypted: Option<bool>,
    /// The global writer endpoint: it reaches the writer of the current primary, wherever it is.
    pub endpoint: Option<String>,
    /// The primary's RDS identifier.
    pub writer: Option<String>,
    /// The member clusters, as RDS lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<GlobalMember>,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region its calls go to, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
    /// The switchover or failover sent for spec.switchoverTo or failoverTo: it is sent once (until
    /// the spec names another target).
    pub role_change: Option<RoleChange>,
}

/// A switchover or failover the operator sent.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleChange {
    /// Switchover or Failover.
    pub action: String,
    /// The DBCluster named as the new primary.
    pub target: String,
    /// Its RDS identifier.
    pub db_cluster_identifier: String,
    /// Whether RDS shows it the writer.
    pub completed: bool,
    /// What approved a failover: the annotation, or the primary's region silent, with its
    /// evidence.
    pub approved_by: Option<String>,
}

/// A member cluster of the global database.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalMember {
    /// The cluster's RDS identifier.
    pub db_cluster_identifier: String,
    /// Its region.
    pub region: String,
    /// writer (the primary) or reader (a secondary).
    pub role: String,
    /// How far its replication is, as RDS reports it (connected, pending-resync).
    pub synchronization_status: Option<String>,
    pub db_cluster_arn: Option<String>,
}

/// The global database as DescribeGlobalClusters shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedGlobalCluster {
    pub identifier: String,
    pub arn: Option<String>,
    pub status: String,
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    pub deletion_protection: Option<bool>,
    pub storage_encrypted: Option<bool>,
    pub endpoint: Option<String>,
    pub members: Vec<GlobalMember>,
    pub tags: BTreeMap<String, String>,
}

/// What the read step found besides the global database.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reads {
    /// The primary, while the global database is still to be made of it.
    pub primary: Primary,
    /// The DBCluster spec.switchoverTo or failoverTo names (None: not asked): its RDS identifier
    /// once Ready, or why it cannot be used.
    pub target: Option<Result<String, String>>,
    /// The switchoverTo target's replication lag in milliseconds (AuroraGlobalDBReplicationLag,
    /// the highest of the last minute), read while a switchover waits on maxLagSeconds (None: not
    /// read, or CloudWatch has no figure).
    pub target_lag_ms: Option<i64>,
    /// What the operator has heard lately from each region of the global database (its members'
    /// as last reported, and spec.region), read while a failover is asked: the evidence that
    /// approves it is the silence of the region RDS reports the writer in, with the target's
    /// region answering in the same window (`plan::role::approval`).
    pub regions: BTreeMap<String, RegionHeard>,
}

/// What the operator has heard from one region (its account's location there), as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionHeard {
    /// How long it has answered no call at all, if it is silent now (`crate::silence`).
    pub silence: Option<RegionSilence>,
    /// How long ago it last answered a call, and whether that answer was a throttle (None: no
    /// call there was ever answered).
    pub answered_ago: Option<(std::time::Duration, bool)>,
}

/// A region's silence, as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionSilence {
    /// Since when (RFC 3339).
    pub since: String,
    pub silent_for: std::time::Duration,
    /// The calls it left unanswered, and the last one's error code.
    pub calls: u32,
    pub last: String,
}

/// What the read step found of the primary, while the global database is still to be made of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Primary {
    /// Not asked: the global database exists, is made empty, or the object is being deleted.
    #[default]
    NotRead,
    /// The DBCluster is not Ready yet, or RDS has none in this location, and why.
    Unresolved(String),
    /// The primary cluster's ARN and its state.
    Found { arn: String, status: String },
}

impl GlobalCluster {
    /// The RDS identifier: spec.globalClusterIdentifier or metadata.name, lower-cased as RDS
    /// stores it.
    pub fn name_in_rds(&self) -> String {
        crate::managed::named::rds_name(
            self.spec.global_cluster_identifier.as_ref(),
            self.metadata.name.as_ref(),
        )
    }
}

crate::placed!(GlobalCluster, |s| s.arn.is_some());
