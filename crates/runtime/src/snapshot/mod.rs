//! What the snapshot kinds share (DBSnapshot of an instance, DBClusterSnapshot of a cluster), and
//! no kind: the spec's options and the status's report (each kind flattens them into its own,
//! whose identifier fields carry its own names), what the read step finds, the pure plan of one
//! snapshot (`plan.rs`) and of a schedule (`schedule.rs`), the steps that read, choose the plan
//! and act (`steps.rs`), and the RDS calls (`calls.rs`, `snapshot_calls!`), all over
//! [`SnapshotKind`]: what a kind tells them (its spec's references, its status's identifiers, how
//! its source is read). The table tests go through the DBSnapshot kind (`dbsnapshot/tests`).

pub mod calls;
pub mod export;
pub mod plan;
pub mod schedule;
pub mod steps;

use std::collections::BTreeMap;
use std::future::Future;
use std::marker::PhantomData;

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::aws_error::AwsError;
use crate::context::Context;
use crate::database::choices::AdoptionPolicy;
use crate::error::Error;
use crate::managed::named::NamedKind;
use crate::rds::Rds;

/// What a snapshot kind's spec says besides its name, its source and its copy's source. Its rules
/// are the spec's (it is flattened into it): they name the kind's `source` and `copyFrom` too.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = kube::core::Rule::new("has(self.source) == has(oldSelf.source) && (!has(self.source) || self.source == oldSelf.source)").message("source is immutable: a snapshot is of one instance or cluster").field_path(".source"),
    validation = kube::core::Rule::new("has(self.copyFrom) == has(oldSelf.copyFrom) && (!has(self.copyFrom) || self.copyFrom == oldSelf.copyFrom)").message("copyFrom is immutable").field_path(".copyFrom"),
    validation = kube::core::Rule::new("has(self.source) || has(self.copyFrom) ? has(self.source) != has(self.copyFrom) : (has(self.adoptionPolicy) && self.adoptionPolicy == 'Adopt')").message("set either source (a new snapshot of an instance or cluster) or copyFrom (a copy of a snapshot), or neither with adoptionPolicy Adopt (take over an existing snapshot)"),
    validation = kube::core::Rule::new("!has(self.schedule) || has(self.source)").message("a schedule takes snapshots of a source").field_path(".schedule"),
    validation = kube::core::Rule::new("!has(self.schedule) || !has(self.adoptionPolicy) || self.adoptionPolicy == 'Never'").message("a schedule adopts nothing: its snapshots are its own").field_path(".adoptionPolicy"),
    validation = kube::core::Rule::new("has(self.copyFrom) || (!has(self.kmsKeyID) && !has(self.copyTags))").message("kmsKeyID and copyTags go with copyFrom"),
    validation = kube::core::Rule::new("!has(self.exportTo) || !has(self.schedule)").message("exportTo exports one snapshot: a schedule's are not exported").field_path(".exportTo"),
)]
pub struct SnapshotOptions {
    /// With copyFrom: the KMS key the copy is encrypted with (its ARN, ID or alias; a key of this
    /// region for a copy from another one). Default: the source's key in its region.
    #[serde(default, rename = "kmsKeyID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048))]
    pub kms_key_id: Option<String>,
    /// With copyFrom: copy the source snapshot's tags too (besides the ownership tags).
    pub copy_tags: Option<bool>,
    /// Instead of one snapshot, one per tick of a cron schedule, the `keep` newest kept.
    pub schedule: Option<SnapshotSchedule>,
    /// What deleting this object does to its snapshots: Delete (the RDS deletion of each one it
    /// made; the default for one snapshot it took) or Retain (they stay in RDS, tagged
    /// rds.operator.rs/retained; the default with a schedule, whose snapshots are backups, and
    /// for an adopted snapshot).
    pub deletion_policy: Option<SnapshotDeletionPolicy>,
    /// The AWS accounts allowed to restore (and copy) the snapshot, kept in sync with RDS's
    /// restore attribute: each one an AWSAccount granted to this namespace names, or one the
    /// operator's --grant-share-to lists; `all` makes it public, only for an unencrypted
    /// snapshot of a namespace --grant-public-snapshots lists. Otherwise nothing is shared
    /// (ShareNotGranted). A share is a copy of the data given away.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20), inner(regex(pattern = r"^([0-9]{12}|all)$")))]
    pub shared_with: Vec<String>,
    /// What to do when RDS has a snapshot of this identifier that is not this object's: Never
    /// (when left out: refuse it, NameInUse), Adopt (take it over; take none) or AdoptOrCreate
    /// (take it over, or take the snapshot when there is none). Adoption adds the ownership tags.
    /// One nobody owns is adopted only when a platform admin granted it to this namespace (its
    /// tag rds.operator.rs/adoptable-by, or the operator's --grant-adoption); one of another
    /// object is never adopted, and one retained by an object of this kind, namespace and name
    /// is taken back without asking. An adopted snapshot is retained when the object is deleted
    /// unless deletionPolicy says Delete.
    pub adoption_policy: Option<AdoptionPolicy>,
    /// Export the snapshot's data to S3, as Apache Parquet, once it is available
    /// (StartExportTask): one export task per destination, sent once and never again, even after
    /// a crash; status.export reports its state, progress and failure. A failed export is not
    /// retried; a changed exportTo is a new export.
    pub export_to: Option<export::ExportTo>,
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

/// What deleting a snapshot object does to the RDS snapshot.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum SnapshotDeletionPolicy {
    /// Delete the snapshot, when it is this object's.
    #[default]
    Delete,
    /// Keep the snapshot; only the object goes.
    Retain,
}

/// What the operator observed of the snapshot, besides its identifiers.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotReport {
    /// ARN of the snapshot.
    pub arn: Option<String>,
    /// The snapshot's state as RDS reports it (creating, available...).
    pub state: Option<String>,
    /// How far RDS is in taking it, in percent.
    pub percent_progress: Option<i32>,
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    /// Its size, in GiB.
    pub allocated_storage: Option<i32>,
    pub encrypted: Option<bool>,
    /// When RDS took it (RFC 3339).
    pub snapshot_create_time: Option<String>,
    /// The AWS accounts RDS lets restore the snapshot (its restore attribute).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_with: Vec<String>,
    /// With a schedule: the snapshots kept and the ticks.
    pub schedule: Option<ScheduleStatus>,
    /// The export to S3 (spec.exportTo).
    pub export: Option<export::ExportStatus>,
}

/// A schedule as last reconciled.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleStatus {
    /// The snapshots this object made that RDS has, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
    /// The last tick (RFC 3339) since the object was made, if any.
    pub last_tick: Option<String>,
    /// The next tick (RFC 3339).
    pub next_tick: Option<String>,
}

/// A kind's status as the plan writes it, whatever the kind calls its identifiers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields {
    /// The snapshot's identifier in RDS.
    pub name: Option<String>,
    /// The identifier of the instance or cluster it is of.
    pub source: Option<String>,
    pub report: SnapshotReport,
    /// The tag keys the operator applied from spec.tags.
    pub applied_tag_keys: Vec<String>,
}

/// What the read step found besides the snapshot of the object's name: its source (while a
/// snapshot is to be taken) and, with a schedule, the manual snapshots of the source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extra {
    pub source: Source,
    /// With a schedule: every manual snapshot of the source, read now (None: not read).
    pub series: Option<Vec<ObservedSnapshot>>,
    /// What sharing needs, read while the spec or the status names a share.
    pub shares: Option<Shares>,
    /// The namespaces the operator's --grant-adoption lists.
    pub adoption: Vec<String>,
    /// The tags of the instance or cluster the snapshot of the name is of, read while the
    /// snapshot carries ownership tags that are not this object's (RDS copies a source's tags to
    /// its snapshots).
    pub instance_tags: Option<BTreeMap<String, String>>,
    /// The export task of spec.exportTo, read now (None: not read; Some(None): RDS has none).
    pub export: Option<Option<export::ObservedExport>>,
    /// The namespaces the operator's --grant-roles lists (`managed::roles`: exportTo.iamRole).
    pub role_grants: Vec<String>,
}

/// What deciding a share needs: who may restore the snapshot now, and who may be given it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shares {
    /// The restore attribute's values of each snapshot read (the one of the name, or a
    /// schedule's kept ones), by identifier, read now.
    pub current: BTreeMap<String, Vec<String>>,
    /// The AWS account IDs of the AWSAccounts granted to the namespace (of their roles' ARNs).
    pub accounts: Vec<String>,
    /// What the operator's settings grant.
    pub grants: crate::context::Grants,
}

/// A snapshot as RDS reports it (DescribeDBSnapshots, DescribeDBClusterSnapshots).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedSnapshot {
    /// The identifier (lower case, as RDS stores it).
    pub name: String,
    pub arn: Option<String>,
    /// The identifier of the instance or cluster it is of.
    pub instance: String,
    /// The resource ID of the instance or cluster it is of (DbiResourceId, DbClusterResourceId).
    pub source_resource_id: Option<String>,
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
    /// RDS has no such identifier.
    NotFound(String),
    /// The RDS instance or cluster (or, for a copy, the snapshot: its identifier or ARN), its
    /// state and its tags (for a snapshot, also those of what it was taken of while that exists),
    /// and what the operator's settings grant.
    Found {
        identifier: String,
        status: String,
        tags: BTreeMap<String, String>,
        instance_tags: Option<BTreeMap<String, String>>,
        grants: crate::context::Grants,
    },
}

/// A reference the spec makes: an object of the namespace by name, or an RDS identifier (or ARN).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reference {
    Name(String),
    Identifier(String),
}

impl Reference {
    /// A reference named once, by the object's name or by an identifier (CEL says which).
    pub fn of(name: &Option<String>, identifier: &Option<String>) -> Option<Reference> {
        match (name, identifier) {
            (Some(name), _) => Some(Reference::Name(name.clone())),
            (None, Some(identifier)) => Some(Reference::Identifier(identifier.clone())),
            (None, None) => None,
        }
    }
}

/// An instance or cluster as the read step needs it: its state, its tags and its resource ID.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceState {
    pub status: String,
    pub tags: BTreeMap<String, String>,
    pub resource_id: Option<String>,
}

/// What a snapshot kind tells the shared code: its spec's parts, its status's identifiers, how its
/// source is read, and its RDS calls (`calls::SnapshotCalls`, from `snapshot_calls!`).
pub trait SnapshotKind:
    NamedKind<Observed = Listed<Self>, Extra = Extra, Own = plan::Own> + calls::SnapshotCalls
{
    /// What a snapshot is of, in messages ("RDS instance", "DB cluster").
    const SOURCE: &'static str;
    /// What the observer's listing of the kind's snapshots is, in its log ("the manual DB
    /// snapshots").
    const LISTED: &'static str;
    fn options(&self) -> &SnapshotOptions;
    /// The source the spec names (None with copyFrom, or for an adoption).
    fn source(&self) -> Option<Reference>;
    /// The snapshot copyFrom names (None: not a copy).
    fn copy_from(&self) -> Option<Reference>;
    fn fields(status: &Self::Status) -> Fields;
    fn with_fields(fields: Fields) -> Self::Status;

    /// The snapshot of the name as the shared listing has it, while it may serve.
    fn listed(
        at: &crate::locations::Location,
        name: &str,
        max_age: std::time::Duration,
    ) -> Option<ObservedSnapshot> {
        (at.observer.listing::<Listed<Self>>())
            .get(name, max_age)
            .map(|o| o.0)
    }
    /// The instance or cluster of the identifier; None when RDS has none.
    fn describe_source(
        rds: &Rds,
        identifier: &str,
    ) -> impl Future<Output = Result<Option<SourceState>, AwsError>> + Send;
    /// What a name of the namespace resolves to: the RDS identifier of a Ready source object, or
    /// why not yet.
    fn resolve_source(
        ctx: &Context,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Result<String, String>, Error>> + Send;
}

/// Whether deleting the object keeps its snapshots: deletionPolicy, or by default Retain with a
/// schedule or for an adopted snapshot, and Delete for one it took.
pub fn retained(options: &SnapshotOptions, adopted: bool) -> bool {
    match options.deletion_policy {
        Some(policy) => policy == SnapshotDeletionPolicy::Retain,
        None => options.schedule.is_some() || adopted,
    }
}

/// Whether the spec asks to take over a snapshot that is not its own.
pub fn adoption_asked(options: &SnapshotOptions) -> bool {
    (options.adoption_policy).is_some_and(|p| p != AdoptionPolicy::Never)
}

/// A manual snapshot of kind `K` as the observer lists it: the shared observed snapshot, typed by
/// its kind so that each kind's listing is its own.
pub struct Listed<K>(pub ObservedSnapshot, PhantomData<fn() -> K>);

impl<K> std::fmt::Debug for Listed<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

// By hand: derived, they would ask `K` for the same.
impl<K> Clone for Listed<K> {
    fn clone(&self) -> Self {
        Listed(self.0.clone(), PhantomData)
    }
}

impl<K> From<ObservedSnapshot> for Listed<K> {
    fn from(snapshot: ObservedSnapshot) -> Self {
        Listed(snapshot, PhantomData)
    }
}

impl<K> std::ops::Deref for Listed<K> {
    type Target = ObservedSnapshot;
    fn deref(&self) -> &ObservedSnapshot {
        &self.0
    }
}

impl<K> std::ops::DerefMut for Listed<K> {
    fn deref_mut(&mut self) -> &mut ObservedSnapshot {
        &mut self.0
    }
}

impl<K> PartialEq for Listed<K> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<K: SnapshotKind> crate::observer::listing::Listed for Listed<K> {
    const WHAT: &'static str = K::LISTED;
    fn key(&self) -> String {
        self.0.name.to_lowercase()
    }
    /// Only a snapshot RDS has finished taking: one in progress is read directly.
    fn settled(&self) -> bool {
        self.0.status == "available"
    }
    async fn list(rds: &Rds) -> Result<Vec<Self>, AwsError> {
        let found = K::manual(rds).await?;
        Ok(found.into_iter().map(Listed::from).collect())
    }
}
