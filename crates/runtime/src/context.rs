//! What every step of a reconcile shares: the clients, the observer, the event recorder, the
//! metrics, the operator's settings, and what the kinds keep for each other. No globals, and no
//! kind's types: a kind keeps its own through [`Context::shared`].

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::Client;
use kube::runtime::events::{Recorder, Reporter};

use crate::budget::ReadBudget;
use crate::error::Error;
use crate::rds_state::Observation;

use crate::http::Health;
use crate::locations::{Directory, Locations};
use crate::lock;
use crate::metrics::Metrics;
use crate::observer::Observer;
use crate::secrets::MANAGER;
use crate::sensitive::Sensitive;

/// Everything a reconcile needs.
pub struct Context {
    pub client: Client,
    /// Every (account, region) the operator works in, each with its adapter and its poll.
    pub locations: Arc<Locations>,
    /// The namespaces and AWSAccounts where objects are placed.
    pub directory: Directory,
    /// The operator's own namespace (its hash key, AWSAccount source Secrets, ACK's role map).
    pub own_namespace: String,
    /// The namespaces watched (empty: all).
    pub watched: Vec<String>,
    /// With `--shards`: the shards this replica leads.
    pub shards: Option<Arc<crate::shards::Shards>>,
    /// Whether this release reconciles the cluster-scoped kinds (AWSAccount): `--manage-accounts`.
    pub manage_accounts: bool,
    pub recorder: Recorder,
    pub metrics: Arc<Metrics>,
    pub health: Arc<Health>,
    /// The key of the password hashes in status (see `secrets::hash_key`).
    pub hash_key: Sensitive,
    /// The CA bundle connection Secrets carry (`--ca-bundle`), if any.
    pub ca_bundle: Option<Arc<str>>,
    /// How old a DBUser's IAM token grows before another replaces it (`--iam-token-refresh`).
    pub iam_token_refresh: std::time::Duration,
    /// Whether the readers of connection Secrets are rolled when their data changes
    /// (`--roll-secret-readers`): ask [`Context::rolls_readers_in`].
    pub roll_secret_readers: bool,
    /// The namespaces they are rolled in (`--roll-secret-readers-namespaces`: the chart grants
    /// list and patch on workloads there alone); None: every namespace watched.
    pub roll_secret_readers_in: Option<std::collections::BTreeSet<String>>,
    /// What the operator's settings grant to namespaces (`--grant-adoption`, `--grant-restore`).
    pub grants: Grants,
    /// Direct RDS reads per namespace (`--namespace-read-budget`).
    pub read_budget: ReadBudget,
    /// What the kinds keep for their reconciles and for each other, a value of each type
    /// ([`Context::shared`]).
    shared: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
    backoff: Mutex<HashMap<String, (Option<i64>, u32)>>,
}

/// What a [`Context`] is made of.
pub struct Parts {
    pub client: Client,
    pub locations: Arc<Locations>,
    pub directory: Directory,
    pub own_namespace: String,
    pub instance: String,
    pub metrics: Arc<Metrics>,
    pub health: Arc<Health>,
    pub hash_key: Sensitive,
}

impl Context {
    /// Whether the readers of connection Secrets of `namespace` are rolled when their data
    /// changes: rolling on, and that namespace among those it is granted in.
    pub fn rolls_readers_in(&self, namespace: &str) -> bool {
        rolls_in(
            self.roll_secret_readers,
            self.roll_secret_readers_in.as_ref(),
            namespace,
        )
    }

    pub fn new(parts: Parts) -> Self {
        let Parts {
            client,
            locations,
            directory,
            own_namespace,
            instance,
            metrics,
            health,
            hash_key,
        } = parts;
        let reporter = Reporter {
            controller: MANAGER.into(),
            instance: Some(instance),
        };
        Context {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            locations,
            directory,
            own_namespace,
            watched: Vec::new(),
            manage_accounts: true,
            shards: None,
            metrics,
            health,
            hash_key,
            ca_bundle: None,
            iam_token_refresh: std::time::Duration::from_secs(600),
            roll_secret_readers: false,
            roll_secret_readers_in: None,
            grants: Grants::default(),
            read_budget: ReadBudget::new(0),
            shared: Mutex::default(),
            backoff: Mutex::default(),
        }
    }

    /// The instance with this identifier read directly, its read taken from the namespace's
    /// budget. With the budget spent: the shared poll's last entry when `fallback` and there is
    /// one the operator has not made stale, else `Error::ReadBudget` (retried once it refills).
    pub async fn direct_read(
        &self,
        observer: &Observer,
        namespace: &str,
        identifier: &str,
        fallback: bool,
    ) -> Result<Observation, Error> {
        match self.spend_read(namespace) {
            Ok(()) => Ok(observer.observe_directly(identifier).await?),
            Err(limited) => {
                let last = observer.last_polled(identifier).filter(|_| fallback);
                last.ok_or(limited)
            }
        }
    }

    /// One direct RDS read from the namespace's budget, counted in the metrics (direct or
    /// limited); Err: the budget is spent ([`Error::ReadBudget`], with the wait).
    pub fn spend_read(&self, namespace: &str) -> Result<(), Error> {
        match self.read_budget.take(namespace) {
            Ok(()) => {
                self.metrics.namespace_read(namespace, "direct");
                Ok(())
            }
            Err(wait) => {
                self.metrics.namespace_read(namespace, "limited");
                let per_minute = self.read_budget.per_minute;
                Err(Error::ReadBudget { per_minute, wait })
            }
        }
    }

    /// The value of type `T` the kinds share (made on first use): a kind's watches' stores, RDS's
    /// parameter catalogs, who refers to a kind. The context names no kind: each kind asks here for
    /// the types it declares.
    pub fn shared<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let mut shared = lock(&self.shared);
        let value = (shared.entry(TypeId::of::<T>()))
            .or_insert_with(|| Arc::new(T::default()))
            .clone();
        value
            .downcast()
            .unwrap_or_else(|_| unreachable!("a value is kept under its own type"))
    }

    /// The Secrets of the operator's own namespace.
    pub fn own_secrets(&self) -> kube::Api<k8s_openapi::api::core::v1::Secret> {
        kube::Api::namespaced(self.client.clone(), &self.own_namespace)
    }

    /// Failures in a row for this object at this generation; a new generation starts again at zero,
    /// so a corrected spec is retried at once.
    pub fn next_failure(&self, uid: &str, generation: Option<i64>) -> u32 {
        let mut map = lock(&self.backoff);
        let entry = map.entry(uid.to_owned()).or_insert((generation, 0));
        if entry.0 != generation {
            *entry = (generation, 0);
        }
        entry.1 += 1;
        entry.1
    }

    /// How long to wait before retrying this object after another failure: the plan's backoff
    /// (`plan::backoff_delay`) with up to a quarter more at random, so objects that failed together
    /// do not all come back together.
    pub fn backoff(&self, uid: &str, generation: Option<i64>) -> std::time::Duration {
        crate::duration::jitter(
            crate::duration::backoff_delay(self.next_failure(uid, generation)),
            0.25,
        )
    }

    pub fn reset_failures(&self, uid: &str) {
        lock(&self.backoff).remove(uid);
    }
}

/// What the operator's settings grant to namespaces (`*`: every namespace): a platform admin's
/// word, for clusters where the AWS account's tags are not the place to say it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    /// `--grant-adoption`: may observe or adopt an instance no DBInstance owns, untagged.
    pub adoption: Vec<String>,
    /// `--grant-restore`: may restore from any snapshot or instance of the account.
    pub restore: Vec<String>,
    /// `--grant-share-to`: AWS account IDs any namespace's DBSnapshots may be shared with (`*`:
    /// any account), besides those of the AWSAccounts granted to the namespace.
    pub share_to: Vec<String>,
    /// `--grant-public-snapshots`: namespaces whose unencrypted DBSnapshots may be made public.
    pub public_snapshots: Vec<String>,
    /// `--grant-roles`: may name any IAM role for RDS to act as, not only those under the IAM
    /// path `/rds-operator/<namespace>/` (`managed::roles`).
    pub roles: Vec<String>,
}

/// Rolling on, and `namespace` among those granted (None: every namespace watched, whose Roles
/// the chart grants it in).
fn rolls_in(
    on: bool,
    granted: Option<&std::collections::BTreeSet<String>>,
    namespace: &str,
) -> bool {
    on && granted.is_none_or(|n| n.contains(namespace))
}

#[cfg(test)]
mod rolling_tests {
    use super::rolls_in;

    #[test]
    fn readers_are_rolled_only_where_granted() {
        let shop = Some(std::collections::BTreeSet::from(["shop".to_owned()]));
        for (on, granted, namespace, rolls) in [
            (false, None, "shop", false),
            (true, None, "shop", true),
            (true, shop.clone(), "shop", true),
            (true, shop.clone(), "billing", false),
            (false, shop, "shop", false),
        ] {
            assert_eq!(
                rolls_in(on, granted.as_ref(), namespace),
                rolls,
                "{on} {granted:?} {namespace}"
            );
        }
    }
}
