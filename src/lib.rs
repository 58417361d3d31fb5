//! rds-operator: manages AWS RDS databases from custom resources.
//!
//! Each kind has its own folder, with its CRD types, its pure plan and table tests, its SDK calls
//! and its read and act: [`dbinstance`], [`dbsubnetgroup`], [`dbparametergroup`]. Every reconcile
//! of every kind runs in one shell ([`shell`]): read, plan (pure), act, report. What the kinds
//! share is written once: [`managed`] (finalizer, status writes by server-side apply, Events,
//! references, the group kinds' `Reconciled` trait), [`tags`] (ownership tags and tag changes),
//! [`writes`] (read your own writes), [`rds`] (the SDK client, error classes, call counts),
//! [`context`] and [`error`].
//!
//! Around them: [`observer`] (every read of RDS instances, and the shared poll) with
//! [`rds_state`] (what is seen of RDS: instances, snapshots, the account, parameter catalogs), the
//! optional event feed [`feed`], the per-namespace read [`budget`], the Secrets I/O in
//! [`secrets`], [`duration`], and [`metrics`], [`http`], [`leader`] and [`telemetry`].

pub mod budget;
pub mod context;
pub mod dbinstance;
pub mod dbparametergroup;
pub mod dbsubnetgroup;
pub mod duration;
pub mod error;
pub mod feed;
pub mod http;
pub mod leader;
pub mod managed;
pub mod metrics;
pub mod observer;
pub mod rds;
pub mod rds_state;
pub mod secrets;
pub mod shell;
pub mod tags;
pub mod telemetry;
pub mod writes;

/// Locks a mutex, taking the data even if a panicking thread poisoned it: every value the
/// operator keeps behind a mutex (counters, snapshots, backoff state) stays usable after a panic.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
