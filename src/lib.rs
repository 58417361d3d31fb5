//! rds-operator: manages AWS RDS DB instances from `DBInstance` custom resources.
//!
//! - [`crd`] holds the DBInstance API (what `kubectl explain` shows);
//! - [`drift`] holds where drift is decided: spec vs observed, with normalisation rules;
//! - [`planner`] holds the pure decisions (create, adopt, delete, what status to report);
//! - [`observer`] holds every read of RDS state, and the poll intervals;
//! - [`rds`] holds the aws-sdk-rds calls and AWS error classification;
//! - [`connection`] holds the connection Secret's keys and templates (pure);
//! - [`secrets`] holds the Kubernetes Secrets read and written (passwords, connection);
//! - [`controller`] holds the reconcile shell (finalizer, status, events, backoff);
//! - [`metrics`], [`http`] and [`leader`] hold the metrics, the HTTP endpoints and leader election;
//! - [`telemetry`] holds logging.

pub mod connection;
pub mod controller;
pub mod crd;
pub mod drift;
pub mod http;
pub mod leader;
pub mod metrics;
pub mod observer;
pub mod planner;
pub mod rds;
pub mod secrets;
pub mod telemetry;

/// Locks a mutex, taking the data even if a panicking thread poisoned it: every value the
/// operator keeps behind a mutex (counters, snapshots, backoff state) stays usable after a panic.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
