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

pub mod accounts;
pub mod artifacthub;
pub mod aws_error;
pub mod awsaccount;
pub mod context;
pub mod database;
pub mod dbcluster;
pub mod dbclusterendpoint;
pub mod dbclusterparametergroup;
pub mod dbclustersnapshot;
pub mod dbinstance;
pub mod dbparametergroup;
pub mod dbproxy;
pub mod dbsnapshot;
pub mod dbsubnetgroup;
pub mod error;
pub mod feed;
pub mod globalcluster;
pub mod http;
pub mod kinds;
pub mod locations;
pub mod maintenance;
pub mod managed;
pub mod metrics;
pub mod observer;
pub mod olm;
pub mod optiongroup;
pub mod rds;
pub mod rds_state;
pub mod secrets;
pub mod snapshot;

pub(crate) use rds_operator_foundation::lock;
/// The foundations, the layer below every other (their own crate, `crates/foundation`): re-exported
/// under their old paths.
pub use rds_operator_foundation::{
    breaker, budget, crd, duration, leader, sensitive, shards, silence, telemetry,
};
