//! The per-namespace budget of direct RDS reads. Every DescribeDBInstances a reconcile makes for
//! itself (not the shared poll's) is taken from its namespace's budget, so one namespace with
//! hundreds of DBInstances at a short driftInterval cannot spend the account's RDS API rate for
//! everyone: the `driftInterval` floor then protects the account, not only one object. A GCRA
//! limiter per namespace (governor's keyed rate limiter), `per_minute` reads a minute with a
//! burst of as many.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// Direct reads a namespace may make each minute (none: unbounded).
pub struct ReadBudget {
    limiter: Option<DefaultKeyedRateLimiter<String>>,
    pub per_minute: u32,
}

impl ReadBudget {
    /// `per_minute` reads a minute per namespace; 0 bounds nothing.
    pub fn new(per_minute: u32) -> Self {
        let limiter = NonZeroU32::new(per_minute).map(|n| RateLimiter::keyed(Quota::per_minute(n)));
        ReadBudget {
            limiter,
            per_minute,
        }
    }

    /// Takes one read from the namespace's budget, or says how long until one is there.
    pub fn take(&self, namespace: &str) -> Result<(), Duration> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        let result = limiter.check_key(&namespace.to_owned());
        if limiter.len() > 1024 {
            // Namespaces gone quiet (their budget full again) need no entry.
            limiter.retain_recent();
        }
        result.map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_spends_its_own_budget_only() {
        let budget = ReadBudget::new(3);
        for _ in 0..3 {
            assert_eq!(budget.take("team-a"), Ok(()));
        }
        let wait = budget.take("team-a").expect_err("team A's budget is spent");
        assert!(
            wait > Duration::from_secs(10) && wait <= Duration::from_secs(20),
            "{wait:?}"
        );
        assert_eq!(budget.take("team-b"), Ok(()), "team B has its own");
        let unbounded = ReadBudget::new(0);
        assert!((0..10_000).all(|_| unbounded.take("team-a").is_ok()));
    }
}
