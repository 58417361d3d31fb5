//! rds-operator: manages AWS RDS DB instances from `DBInstance` custom resources.
//!
//! Every reconcile is four steps, each in its own place:
//! 1. **read** ([`read`]): the DBInstance, its Secrets and the observed RDS instance, into
//!    [`plan::Facts`]; every read of RDS goes through [`observer`];
//! 2. **plan** ([`plan`], pure): the steps to take, the status and Events to report, when to look
//!    again; drift is decided in [`drift`];
//! 3. **act** ([`act`]): runs the steps through the adapters ([`rds`], [`secrets`]);
//! 4. **report** ([`report::write`]): status and Events, amended by what the act step achieved.
//!
//! The optional event feed ([`feed`]) tells the observer which instances changed.
//!
//! Around them: [`shell`] (the one reconcile shell and error policy of every kind), [`controller`]
//! (DBInstance's watches and pass), [`context`], [`error`], the CRD
//! in [`crd`], the pure connection Secret renderer in [`connection`], [`observed`] (what is seen
//! of an instance), [`duration`], and [`metrics`], [`http`], [`leader`] and [`telemetry`].

pub mod act;
pub mod budget;
pub mod connection;
pub mod context;
pub mod controller;
pub mod crd;
pub mod dbparametergroup;
pub mod dbsubnetgroup;
pub mod drift;
pub mod duration;
pub mod error;
pub mod feed;
pub mod http;
pub mod leader;
pub mod managed;
pub mod metrics;
pub mod observed;
pub mod observer;
pub mod plan;
pub mod rds;
pub mod read;
pub mod report;
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
