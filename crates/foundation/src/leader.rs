//! Leader election with a coordination.k8s.io Lease: of several replicas exactly one reconciles;
//! when it stops (or stops renewing) another takes over once the lease expires.
//!
//! As client-go does it: the leader gives up when it has not renewed for a renew deadline shorter
//! than the lease, every call is bounded in time (a connection that hangs cannot keep it believing
//! it leads), and a follower judges expiry by its own clock: a lease whose record it has seen
//! unchanged for a whole lease duration is free, whatever the other node's clock wrote in it.

use std::sync::Mutex;
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
    /// The other holder's record (holder, resourceVersion) as last seen, and when, locally.
    observed: Mutex<Option<(String, String, tokio::time::Instant)>>,
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
            observed: Mutex::new(None),
        }
    }

    /// Who this contender is.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// How long the leader keeps leading without a successful renewal: two thirds of the lease, so
    /// it stops before any follower may take over.
    pub fn renew_deadline(&self) -> Duration {
        self.lease_duration * 2 / 3
    }

    /// One bounded round of [`Self::try_acquire_or_renew`]: a call that hangs counts as failed.
    pub(crate) async fn attempt(&self) -> Result<bool, String> {
        match tokio::time::timeout(self.renew_interval(), self.try_acquire_or_renew()).await {
            Ok(Ok(held)) => Ok(held),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("the API server did not answer in time".to_owned()),
        }
    }

    /// How often the leader renews and followers retry: a third of the lease duration.
    pub fn renew_interval(&self) -> Duration {
        self.lease_duration / 3
    }

    /// Waits until this contender holds the lease.
    pub async fn acquire(&self) {
        loop {
            match self.attempt().await {
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

    /// Renews the lease until it is lost (another holder, or no successful renewal within the
    /// renew deadline); then returns, and the caller must stop at once.
    pub async fn hold(&self) {
        let mut last_renewal = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(self.renew_interval()).await;
            match self.attempt().await {
                Ok(true) => last_renewal = tokio::time::Instant::now(),
                Ok(false) => {
                    warn!(lease = %self.name, "leadership lost to another replica");
                    return;
                }
                Err(e) => {
                    warn!(error = %e, "leader election: renewal failed");
                    if last_renewal.elapsed() >= self.renew_deadline() {
                        warn!(lease = %self.name, "leadership lost: no renewal within the renew deadline");
                        return;
                    }
                }
            }
        }
    }

    /// Whether the other holder's record has stayed the same for a whole lease duration of this
    /// process's own clock (the other node's clock, in renewTime, is never compared with ours).
    fn expired_locally(&self, holder: &str, version: &str, held_for: Duration) -> bool {
        let mut observed = crate::lock(&self.observed);
        match observed.as_ref() {
            Some((h, v, since)) if h == holder && v == version => since.elapsed() >= held_for,
            _ => {
                *observed = Some((
                    holder.to_owned(),
                    version.to_owned(),
                    tokio::time::Instant::now(),
                ));
                false
            }
        }
    }

    /// Reads the lease and notes its record, without taking it: the expiry clock of
    /// [`Self::try_acquire_or_renew`] then runs from now, so a lease that stops changing can be
    /// taken a lease duration later.
    pub(crate) async fn observe(&self) {
        let Ok(Ok(Some(lease))) =
            tokio::time::timeout(self.renew_interval(), self.api.get_opt(&self.name)).await
        else {
            return;
        };
        let version = lease.resource_version().unwrap_or_default();
        let holder = (lease.spec.and_then(|s| s.holder_identity)).unwrap_or_default();
        if !holder.is_empty() && holder != self.identity {
            let _ = self.expired_locally(&holder, &version, Duration::MAX);
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
        let version = lease.resource_version().unwrap_or_default();
        let spec = lease.spec.get_or_insert_with(Default::default);
        let holder = spec.holder_identity.clone().unwrap_or_default();
        if holder != self.identity {
            let held_for = spec.lease_duration_seconds.unwrap_or(duration_secs).max(1);
            let held_for = Duration::from_secs(held_for as u64);
            if !holder.is_empty() && !self.expired_locally(&holder, &version, held_for) {
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
