//! Leader election with a coordination.k8s.io Lease: of several replicas exactly one reconciles;
//! when it stops (or stops renewing) another takes over once the lease expires.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};
use tracing::{info, warn};

/// One contender for the lease.
pub struct LeaderElection {
    api: Api<Lease>,
    name: String,
    identity: String,
    lease_duration: Duration,
}

impl LeaderElection {
    pub fn new(
        client: Client,
        namespace: &str,
        name: &str,
        identity: &str,
        lease_duration: Duration,
    ) -> Self {
        LeaderElection {
            api: Api::namespaced(client, namespace),
            name: name.to_owned(),
            identity: identity.to_owned(),
            lease_duration,
        }
    }

    /// How often the leader renews and followers retry: a third of the lease duration.
    pub fn renew_interval(&self) -> Duration {
        self.lease_duration / 3
    }

    /// Waits until this contender holds the lease.
    pub async fn acquire(&self) {
        loop {
            match self.try_acquire_or_renew().await {
                Ok(true) => {
                    info!(lease = %self.name, identity = %self.identity, "became leader");
                    return;
                }
                Ok(false) => {}
                Err(e) => warn!(error = %e, "leader election: cannot read or write the lease"),
            }
            tokio::time::sleep(self.renew_interval()).await;
        }
    }

    /// Renews the lease until it is lost (another holder, or renewals failing for a whole lease
    /// duration); then returns.
    pub async fn hold(&self) {
        let mut last_renewal = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(self.renew_interval()).await;
            match self.try_acquire_or_renew().await {
                Ok(true) => last_renewal = tokio::time::Instant::now(),
                Ok(false) => {
                    warn!(lease = %self.name, "leadership lost to another replica");
                    return;
                }
                Err(e) => {
                    warn!(error = %e, "leader election: renewal failed");
                    if last_renewal.elapsed() >= self.lease_duration {
                        warn!(lease = %self.name, "leadership lost: no renewal for a whole lease duration");
                        return;
                    }
                }
            }
        }
    }

    /// Gives the lease up so another replica can take over at once.
    pub async fn release(&self) {
        if let Ok(Some(mut lease)) = self.api.get_opt(&self.name).await {
            let spec = lease.spec.get_or_insert_with(Default::default);
            if spec.holder_identity.as_deref() == Some(self.identity.as_str()) {
                spec.holder_identity = None;
                spec.renew_time = None;
                if let Err(e) = self
                    .api
                    .replace(&self.name, &PostParams::default(), &lease)
                    .await
                {
                    warn!(error = %e, "could not release the lease");
                }
            }
        }
    }

    /// One round: take a free or expired lease, renew our own, or report that another holds it.
    pub async fn try_acquire_or_renew(&self) -> Result<bool, kube::Error> {
        let now = Timestamp::now();
        let duration_secs = self.lease_duration.as_secs().max(1) as i32;
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            let mut lease = Lease::default();
            lease.metadata.name = Some(self.name.clone());
            lease.spec = Some(k8s_openapi::api::coordination::v1::LeaseSpec {
                holder_identity: Some(self.identity.clone()),
                lease_duration_seconds: Some(duration_secs),
                acquire_time: Some(MicroTime(now)),
                renew_time: Some(MicroTime(now)),
                lease_transitions: Some(0),
                ..Default::default()
            });
            return conflict_is_false(self.api.create(&PostParams::default(), &lease).await);
        };
        let spec = lease.spec.get_or_insert_with(Default::default);
        let holder = spec.holder_identity.clone().unwrap_or_default();
        if holder != self.identity {
            let expires = spec.renew_time.as_ref().map(|t| {
                let held_for = spec.lease_duration_seconds.unwrap_or(duration_secs).max(1);
                t.0.as_second() + i64::from(held_for)
            });
            let free = holder.is_empty() || expires.is_none_or(|e| e < now.as_second());
            if !free {
                return Ok(false);
            }
            info!(lease = %self.name, previous = %holder, "taking over an expired lease");
            spec.holder_identity = Some(self.identity.clone());
            spec.acquire_time = Some(MicroTime(now));
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        spec.renew_time = Some(MicroTime(now));
        spec.lease_duration_seconds = Some(duration_secs);
        // replace() carries the resourceVersion read above: a concurrent writer makes it fail.
        let name = lease.name_any();
        conflict_is_false(
            self.api
                .replace(&name, &PostParams::default(), &lease)
                .await,
        )
    }
}

fn conflict_is_false(result: Result<Lease, kube::Error>) -> Result<bool, kube::Error> {
    match result {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
        Err(e) => Err(e),
    }
}
