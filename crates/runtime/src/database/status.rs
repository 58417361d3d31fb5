//! The reported-status block both database kinds carry, flattened into `DBInstanceStatus` and
//! `DBClusterStatus`: what the operator observed of the database and what it did, in the fields the
//! two kinds have alike. Doc comments here become `kubectl explain` text.

use std::collections::BTreeMap;

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use crate::database::parts::{DryRun, Endpoint};
use crate::managed::fights::Corrections;

/// What both database kinds report alike (flattened: the fields stand in `status` itself).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseStatus {
    /// ARN of the RDS instance or cluster.
    pub arn: Option<String>,
    /// What CloudWatch says of the database: replica lag, free storage and its headroom, CPU and
    /// connections, read every health interval (the operator's --health-interval, 60 s by default).
    pub health: Option<crate::database::health::HealthStatus>,
    /// The CloudWatch alarms the operator keeps for the database (spec.alarms) and their states.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alarms: Vec<crate::database::alarms::AlarmStatus>,
    /// Where to connect: the instance's endpoint, or the cluster's writer endpoint.
    pub endpoint: Option<Endpoint>,
    /// The engine version RDS runs (the spec may name only its prefix, such as 8.0).
    pub engine_version: Option<String>,
    /// Whether RDS has IAM database authentication on (what a DBUser with auth IAM waits for).
    #[serde(rename = "iamDatabaseAuthenticationEnabled")]
    pub iam_database_authentication_enabled: Option<bool>,
    /// Changes RDS has accepted but not applied yet.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pending_modified_values: BTreeMap<String, String>,
    /// Keyed hash of the master password last sent to RDS (never the password itself), to notice
    /// a rotation in the Secret.
    pub master_user_password_hash: Option<String>,
    /// Name of the connection Secret last written.
    pub connection_secret: Option<String>,
    /// With manageMasterUserPassword: the secret RDS keeps the master password in.
    pub master_user_secret: Option<crate::database::parts::MasterUserSecret>,
    /// The rds.operator.rs/rotate-now value last acted on (an RDS-managed password rotated).
    pub last_rotate_request: Option<String>,
    /// When the operator stopped the database as spec.activation says (RFC 3339); kept while it
    /// is to stay stopped, so a start RDS makes by itself is told from one asked for.
    pub stopped_at: Option<String>,
    /// The rds.operator.rs/activation override of spec.activationSchedule the operator has seen,
    /// and when it ends.
    pub activation_override: Option<crate::database::activation::OverrideStatus>,
    /// The IAM roles RDS lists for the database, and whether the operator associated each for
    /// the spec (it removes only those).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub associated_roles: Vec<crate::database::parts::RoleStatus>,
    /// The workloads of the namespace that read the connection Secret, rolled to its version when
    /// its data changes (with the operator's --roll-secret-readers), and their rollouts.
    pub secret_readers: Option<crate::database::readers::SecretReaders>,
    /// The tag keys the operator applied from spec.tags: the only ones it removes when they leave
    /// the spec. Tags others set (AWS Backup plans, cost allocation) are left alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// Recent corrections of drift, per field, at the current generation: a field corrected three
    /// times within an hour is no longer corrected (Synced=False, reason Fighting) until the spec
    /// changes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = kube::core::ListMerge::Map(vec!["field".into()]))]
    pub corrections: Vec<Corrections>,
    /// The metadata.generation at which the database was adopted: until the spec changes, its
    /// differences from the spec are reported and not put right.
    pub adopted_generation: Option<i64>,
    /// The database in status is this resource's own: created, restored or adopted by it. One it
    /// only observed is not, and is never restored or created again when it goes.
    pub owned: Option<bool>,
    /// The maintenance RDS has scheduled (DescribePendingMaintenanceActions), as
    /// spec.maintenancePolicy deals with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_maintenance_actions: Vec<crate::maintenance::PendingAction>,
    /// With the rds.operator.rs/dry-run annotation: what the operator would do, and nothing of it
    /// done.
    pub dry_run: Option<DryRun>,
    /// The AWS account and region the database lives in, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
}
