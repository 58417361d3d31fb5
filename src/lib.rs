//! rds-operator: manages AWS RDS databases from custom resources.
//!
//! Each kind has its own folder, with its CRD types, its pure plan and table tests, its SDK calls
//! and its read and act: [`dbinstance`], [`dbsubnetgroup`], [`dbparametergroup`]. Every kind runs
//! on one skeleton, and what the kinds share is written once, in [`managed`]: the skeleton (read,
//! plan (pure), act, report; the one status writer and error policy), the API-server writes, the
//! conditions, the plan vocabulary, references between kinds, the CRD parts, the ownership tags,
//! the write tracker and the AWS error classes. [`kinds`] registers every kind, a line each.
//!
//! Around them: [`rds`] (the SDK client and call counts), [`observer`] (every read of RDS
//! instances, and the shared poll) with [`rds_state`] (what is seen of RDS: instances, snapshots,
//! the account, parameter catalogs), the optional event feed [`feed`], the per-namespace read
//! [`budget`], the Secrets I/O in [`secrets`], [`context`], [`error`], [`duration`], and
//! [`metrics`], [`http`], [`leader`] and [`telemetry`].

pub mod artifacthub;
pub mod awsaccount;
#[cfg(test)]
mod calls;
pub mod dbcluster;
pub mod dbclusterendpoint;
pub mod dbclusterparametergroup;
pub mod dbclustersnapshot;
pub mod dbinstance;
pub mod dbparametergroup;
pub mod dbproxy;
pub mod dbshardgroup;
pub mod dbsnapshot;
pub mod dbsubnetgroup;
pub mod dbuser;
pub mod eventsubscription;
pub mod globalcluster;
pub mod integration;
pub mod kinds;
pub mod olm;
pub mod optiongroup;

/// The AWS plumbing, the layer above the foundations (`crates/aws`): re-exported under its old
/// paths.
pub use rds_operator_aws::{
    accounts, aws_error, error, health_metrics, http, metrics, rds, rds_state, secrets,
};
pub(crate) use rds_operator_foundation::lock;
/// The foundations, the layer below every other (their own crate, `crates/foundation`): re-exported
/// under their old paths.
pub use rds_operator_foundation::{
    breaker, budget, crd, duration, leader, sensitive, shards, silence, telemetry,
};
/// The shared runtime, the layer above the plumbing (`crates/runtime`): re-exported under its old
/// paths, with the macros the kinds are written with.
pub use rds_operator_runtime::{
    context, database, feed, locations, maintenance, managed, observer, snapshot,
};
pub use rds_operator_runtime::{
    field_table, listed_by_name, named_fields, placed, reported_status, snapshot_calls,
    with_database_rows,
};
