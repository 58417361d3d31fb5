//! The shared poll of the Aurora clusters: every DB cluster of the account and region, listed 100
//! a page (DescribeDBClusters), once per drift interval, from the first time a DBCluster asks. A
//! settled cluster's reconcile then costs no describe while the listing is fresh and the operator
//! has not changed the cluster since. Only what the listing has is served: a cluster it lacks,
//! one RDS is busy with, and every deletion are read directly, so no create or delete is decided
//! on the poll.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::dbcluster::observed::ObservedCluster;
use crate::lock;
use crate::managed::aws_error::AwsError;
use crate::rds::Rds;
use crate::rds_state::is_transitional;

/// The clusters as the last listing found them.
#[derive(Default)]
pub struct ClusterPoll {
    wanted: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// When the last complete listing started.
    read_at: Option<Instant>,
    clusters: HashMap<String, ObservedCluster>,
    /// Clusters the operator changed, and when: a listing that started before is stale for them.
    mutated: HashMap<String, Instant>,
    /// Identifiers direct reads have found absent, since when (cleared when one is found).
    absent_since: HashMap<String, Instant>,
}

impl ClusterPoll {
    /// Whether a DBCluster asked: only then is the listing made.
    pub fn wanted(&self) -> bool {
        self.wanted.load(Ordering::Relaxed)
    }

    /// The cluster with this identifier as the listing has it, when fresh (within `max_age`),
    /// settled, and not changed by the operator since; None: read it directly.
    pub fn cluster(&self, identifier: &str, max_age: Duration) -> Option<ObservedCluster> {
        self.wanted.store(true, Ordering::Relaxed);
        let state = lock(&self.state);
        let read_at = state.read_at?;
        let unchanged = (state.mutated.get(identifier)).is_none_or(|at| *at < read_at);
        let found = state.clusters.get(identifier)?;
        (read_at.elapsed() <= max_age && unchanged && !is_transitional(&found.status))
            .then(|| found.clone())
    }

    /// The operator changed this cluster: read it directly until a listing started after.
    pub fn mutated(&self, identifier: &str) {
        lock(&self.state)
            .mutated
            .insert(identifier.to_owned(), Instant::now());
    }

    /// A direct read of this identifier found a cluster, or none.
    pub fn read_directly(&self, identifier: &str, found: bool) {
        let mut state = lock(&self.state);
        if found {
            state.absent_since.remove(identifier);
        } else {
            let since = state.absent_since.entry(identifier.to_owned());
            since.or_insert_with(Instant::now);
        }
    }

    /// How long direct reads have found no cluster with this identifier.
    pub fn absent_for(&self, identifier: &str) -> Option<Duration> {
        lock(&self.state)
            .absent_since
            .get(identifier)
            .map(Instant::elapsed)
    }

    /// One listing; the snapshot is replaced only when every page was read.
    pub async fn poll(&self, rds: &Rds) -> Result<(), AwsError> {
        let started = Instant::now();
        let clusters = rds.cluster_pages().await?;
        let mut state = lock(&self.state);
        state.clusters = (clusters.into_iter())
            .map(|c| (c.identifier.clone(), c))
            .collect();
        state.mutated.retain(|_, at| *at >= started);
        state.read_at = Some(started);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll_with(identifier: &str, status: &str) -> ClusterPoll {
        let poll = ClusterPoll::default();
        {
            let mut state = lock(&poll.state);
            state.read_at = Some(Instant::now());
            let cluster = ObservedCluster {
                identifier: identifier.into(),
                status: status.into(),
                ..Default::default()
            };
            state.clusters.insert(identifier.into(), cluster);
        }
        poll
    }

    #[test]
    fn the_listing_serves_a_cluster_only_when_fresh_settled_unchanged_and_present() {
        let minute = Duration::from_secs(60);
        assert!(!ClusterPoll::default().wanted());
        let poll = poll_with("coffee", "available");
        assert!(
            poll.cluster("coffee", minute).is_some(),
            "fresh and settled"
        );
        assert!(poll.wanted(), "asking starts the listing");
        assert!(
            poll.cluster("tea", minute).is_none(),
            "absent: read directly"
        );
        assert!(
            poll.cluster("coffee", Duration::ZERO).is_none(),
            "older than asked"
        );
        poll.mutated("coffee");
        assert!(
            poll.cluster("coffee", minute).is_none(),
            "changed by the operator since"
        );
        let busy = poll_with("coffee", "modifying");
        assert!(
            busy.cluster("coffee", minute).is_none(),
            "RDS is busy with it"
        );
        assert!(
            ClusterPoll::default().cluster("coffee", minute).is_none(),
            "never listed"
        );
    }
}
