//! rds-operator's shared runtime, the layer above the AWS plumbing and below the kinds: the
//! [`observer`] (the shared instance poll and the listings) with the event [`feed`], the
//! [`locations`] (an account and region each) and the [`context`] a reconcile runs in, the
//! skeleton every kind runs on ([`managed`]: read, plan, act, report), the [`database`] engine
//! DBInstance and DBCluster share, the [`snapshot`] kinds' engine, and [`maintenance`]. It knows
//! no kind: a kind is a trait implementation a layer above.

pub mod context;
pub mod database;
pub mod feed;
pub mod locations;
pub mod maintenance;
pub mod managed;
pub mod observer;
pub mod snapshot;

/// The plumbing and the foundations, re-exported under the paths the runtime uses.
pub use rds_operator_aws::{
    accounts, aws_error, error, health_metrics, http, metrics, rds, rds_state, secrets,
};
pub use rds_operator_foundation::{
    breaker, budget, crd, duration, leader, lock, sensitive, shards, silence, telemetry,
};
