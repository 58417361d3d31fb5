//! rds-operator's AWS plumbing, the layer above the foundations: [`rds`] (the SDK clients of an
//! account and region, where every call is counted and passes the location's breaker, and the
//! calls more than one part makes), [`aws_error`] (AWS's errors, classified once), [`accounts`]
//! (other accounts' credentials), [`rds_state`] (what is seen of RDS, as plain values), and the
//! operator's [`error`], [`metrics`], [`http`] endpoints and [`secrets`] I/O. It knows no kind.

pub mod accounts;
pub mod aws_error;
pub mod error;
pub mod health_metrics;
pub mod http;
pub mod metrics;
pub mod rds;
pub mod rds_state;
pub mod secrets;

/// The foundations, re-exported under the paths the plumbing uses.
pub use rds_operator_foundation::{
    breaker, budget, crd, duration, leader, lock, sensitive, shards, silence, telemetry,
};
