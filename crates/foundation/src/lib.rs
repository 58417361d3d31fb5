//! The operator's foundations, the lowest layer: what every other layer may use and which uses
//! none of them. [`duration`] (intervals, backoff, times), [`breaker`] and [`silence`] (a
//! location's breaker and its quiet periods), [`sensitive`] (values never printed), [`crd`] (the
//! CRD parts every kind shares: references, tags, the finalizer, the ownership and grant tag
//! names), [`budget`] (the per-namespace read budget), [`leader`] and [`shards`] (Lease leader
//! election and sharding), [`telemetry`] (logging), and [`lock`].

pub mod breaker;
pub mod budget;
pub mod crd;
pub mod duration;
pub mod leader;
pub mod sensitive;
pub mod shards;
pub mod silence;
pub mod telemetry;

/// Locks a mutex, taking the data even if a panicking thread poisoned it: every value the
/// operator keeps behind a mutex (counters, snapshots, backoff state) stays usable after a panic.
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
