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
pub mod breaker;
pub mod budget;
pub mod context;
pub mod crd;
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
pub mod duration;
pub mod error;
pub mod feed;
pub mod globalcluster;
pub mod http;
pub mod kinds;
pub mod leader;
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
pub mod sensitive;
pub mod shards;
pub mod silence;
pub mod snapshot;
pub mod telemetry;

/// Locks a mutex, taking the data even if a panicking thread poisoned it: every value the
/// operator keeps behind a mutex (counters, snapshots, backoff state) stays usable after a panic.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
