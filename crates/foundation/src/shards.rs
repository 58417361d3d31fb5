//! Scale out by account: with `--shards N`, the (account, region) pairs are spread over N shards by
//! a stable hash, each shard is led through a Lease of its own, and every replica leads a fair
//! share of them at once (N divided by the replicas alive, which each announce by a membership
//! Lease). A replica that dies stops renewing: its shards expire and the others take them within
//! one lease duration. A replica acts on a pair only while it holds the pair's shard and renewed
//! it within the renew deadline by its own monotonic clock, checked before every AWS call that
//! changes anything, so a frozen replica that wakes acts on nothing it no longer leads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use kube::{Client, ResourceExt};
use sha2::{Digest, Sha256};
use tokio::sync::watch;
use tokio::time::Instant;
use tracing::{info, warn};

use crate::leader::LeaderElection;
use crate::lock;

/// The shard of a pair's key (`managed::placement::Target::shard_key`): the first eight bytes of
/// its SHA-256, modulo the shard count. Stable across replicas, versions and restarts.
pub fn shard_of(key: &str, shards: usize) -> usize {
    let digest = Sha256::digest(key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    (u64::from_be_bytes(first) % shards.max(1) as u64) as usize
}

/// How many shards a replica should lead, with `alive` replicas (itself included).
pub fn fair_share(shards: usize, alive: usize) -> usize {
    shards.div_ceil(alive.max(1))
}

/// This replica's shards.
pub struct Shards {
    count: usize,
    leases: Vec<LeaderElection>,
    member: LeaderElection,
    member_prefix: String,
    api: Api<Lease>,
    /// When each shard was last renewed by this replica (None: not held).
    held: Mutex<Vec<Option<Instant>>>,
    /// Other members' Leases: (resourceVersion, when it was first seen so).
    members: Mutex<HashMap<String, (String, Instant)>>,
    lease_duration: Duration,
}

impl Shards {
    pub fn new(
        client: Client,
        namespace: &str,
        lease_name: &str,
        identity: &str,
        count: usize,
        lease_duration: Duration,
    ) -> Self {
        let lease = |name: String| {
            LeaderElection::new(client.clone(), namespace, &name, identity, lease_duration)
        };
        let member_prefix = format!("{lease_name}-member-");
        Shards {
            count,
            leases: (0..count)
                .map(|k| lease(format!("{lease_name}-shard-{k}")))
                .collect(),
            member: lease(format!("{member_prefix}{identity}")),
            member_prefix,
            api: Api::namespaced(client.clone(), namespace),
            held: Mutex::new(vec![None; count]),
            members: Mutex::default(),
            lease_duration,
        }
    }

    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether this replica leads the shard now: it holds its Lease and renewed it within the
    /// renew deadline, by its own monotonic clock (which runs on while the process is frozen).
    pub fn owns(&self, shard: usize) -> bool {
        let deadline = self.lease_duration * 2 / 3;
        lock(&self.held)
            .get(shard)
            .copied()
            .flatten()
            .is_some_and(|renewed| renewed.elapsed() < deadline)
    }

    /// The shards held now.
    pub fn held(&self) -> Vec<usize> {
        (0..self.count).filter(|k| self.owns(*k)).collect()
    }

    /// Keeps this replica's share until `shutdown`, then gives its shards up.
    pub async fn run(self: Arc<Self>, mut shutdown: watch::Receiver<bool>) {
        let every = self.lease_duration / 3;
        loop {
            self.round().await;
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = shutdown.wait_for(|s| *s) => break,
            }
        }
        for k in self.held() {
            lock(&self.held)[k] = None;
            self.leases[k].release().await;
        }
        self.member.release().await;
    }

    /// One round: announce this replica, count the replicas alive, renew what it holds (giving up
    /// what is above its share), then take free shards up to it.
    async fn round(&self) {
        if let Err(e) = self.member.attempt().await {
            warn!(error = %e, "shards: cannot renew the membership lease");
        }
        let alive = self.alive().await;
        let share = fair_share(self.count, alive);
        let mut holding = 0;
        for k in 0..self.count {
            if lock(&self.held)[k].is_none() {
                continue;
            }
            if holding >= share {
                info!(
                    shard = k,
                    share, "giving up a shard above this replica's share"
                );
                lock(&self.held)[k] = None;
                self.leases[k].release().await;
                continue;
            }
            holding += usize::from(self.attempt(k, alive, share, true).await);
        }
        for k in 0..self.count {
            if lock(&self.held)[k].is_some() {
                continue;
            }
            match holding < share {
                true => holding += usize::from(self.attempt(k, alive, share, false).await),
                // Watched still, so a shard whose leader dies expires here a lease duration after
                // its last renewal, not a lease duration after this replica first looks.
                false => self.leases[k].observe().await,
            }
        }
    }

    /// Renews or takes shard `k`; whether this replica holds it after.
    async fn attempt(&self, k: usize, alive: usize, share: usize, held: bool) -> bool {
        let started = Instant::now();
        match self.leases[k].attempt().await {
            Ok(true) => {
                if !held {
                    info!(shard = k, alive, share, "leading a shard");
                }
                lock(&self.held)[k] = Some(started);
                true
            }
            Ok(false) => {
                if held {
                    warn!(shard = k, "shard lost to another replica");
                }
                lock(&self.held)[k] = None;
                false
            }
            // Kept until the renew deadline passes (`owns`), as for the single lease.
            Err(e) => {
                warn!(shard = k, error = %e, "shards: renewal failed");
                self.owns(k)
            }
        }
    }

    /// The replicas alive: this one, and every other whose membership Lease changed within a lease
    /// duration of this replica's clock.
    async fn alive(&self) -> usize {
        let Ok(list) = self.api.list(&Default::default()).await else {
            return 1 + lock(&self.members).len();
        };
        let mine = format!("{}{}", self.member_prefix, self.member.identity());
        let mut members = lock(&self.members);
        let now = Instant::now();
        let mut alive = 1;
        let mut seen = Vec::new();
        for lease in list.items {
            let name = lease.name_any();
            if !name.starts_with(&self.member_prefix) || name == mine {
                continue;
            }
            let holder = (lease.spec.as_ref()).and_then(|s| s.holder_identity.clone());
            let version = lease.resource_version().unwrap_or_default();
            let entry = members
                .entry(name.clone())
                .or_insert((version.clone(), now));
            if entry.0 != version {
                *entry = (version, now);
            }
            if holder.is_some() && entry.1.elapsed() < self.lease_duration {
                alive += 1;
            }
            seen.push(name);
        }
        members.retain(|name, _| seen.contains(name));
        alive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_spread_over_the_shards_stably_and_each_replica_takes_a_fair_share() {
        let keys: Vec<String> = (0..400)
            .map(|i| format!("account:team-{i}/eu-west-1"))
            .collect();
        let mut per_shard = [0usize; 4];
        for key in &keys {
            let shard = shard_of(key, 4);
            assert_eq!(shard, shard_of(key, 4), "stable");
            per_shard[shard] += 1;
        }
        assert!(
            per_shard.iter().all(|n| (70..=130).contains(n)),
            "{per_shard:?}"
        );
        assert_eq!(shard_of("own/us-east-1", 1), 0);
        for (shards, alive, share) in [
            (4, 1, 4),
            (4, 2, 2),
            (4, 3, 2),
            (4, 4, 1),
            (4, 8, 1),
            (1, 0, 1),
        ] {
            assert_eq!(
                fair_share(shards, alive),
                share,
                "{shards} shards, {alive} alive"
            );
        }
    }
}
