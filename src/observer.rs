//! How the operator learns what RDS holds. Every read of RDS state goes through [`Observer`], so the
//! strategy (today a targeted DescribeDBInstances per reconcile, later one shared paginated poll)
//! can change without touching the planner or the reconciler.

use std::time::Duration;

use crate::rds::{AwsError, ObservedInstance, Rds};

/// RDS states in which the instance is changing by itself and worth looking at again soon.
const TRANSITIONAL: &[&str] = &[
    "creating",
    "modifying",
    "backing-up",
    "deleting",
    "rebooting",
    "renaming",
    "resetting-master-credentials",
    "upgrading",
    "configuring-enhanced-monitoring",
    "configuring-iam-database-auth",
    "configuring-log-exports",
    "converting-to-vpc",
    "maintenance",
    "moving-to-vpc",
    "starting",
    "stopping",
    "storage-optimization",
];

/// Whether RDS is in the middle of something with this instance.
pub fn is_transitional(status: &str) -> bool {
    TRANSITIONAL.contains(&status)
}

/// The poll intervals: AWS has no watch, so the requeue interval is the poll.
#[derive(Clone, Copy, Debug)]
pub struct PollIntervals {
    /// While RDS is creating, modifying, deleting...
    pub busy: Duration,
    /// Once the instance is settled (available, stopped, failed...).
    pub settled: Duration,
}

impl Default for PollIntervals {
    fn default() -> Self {
        PollIntervals {
            busy: Duration::from_secs(5),
            settled: Duration::from_secs(60),
        }
    }
}

impl PollIntervals {
    /// When to look again at an instance in this RDS state.
    pub fn after(&self, status: &str) -> Duration {
        if is_transitional(status) {
            self.busy
        } else {
            self.settled
        }
    }
}

/// Reads RDS state for the reconciler.
#[derive(Clone)]
pub struct Observer {
    rds: Rds,
    pub intervals: PollIntervals,
}

impl Observer {
    pub fn new(rds: Rds, intervals: PollIntervals) -> Self {
        Observer { rds, intervals }
    }

    /// The instance with this identifier, or None when RDS has none.
    pub async fn observe(&self, identifier: &str) -> Result<Option<ObservedInstance>, AwsError> {
        self.rds.describe(identifier).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_states_poll_fast_and_settled_ones_slow() {
        let p = PollIntervals::default();
        assert_eq!(p.after("creating"), p.busy);
        assert_eq!(p.after("backing-up"), p.busy);
        assert_eq!(p.after("deleting"), p.busy);
        assert_eq!(p.after("available"), p.settled);
        assert_eq!(p.after("failed"), p.settled);
    }
}
