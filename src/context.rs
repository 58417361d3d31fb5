//! What every step of a reconcile shares: the clients, the observer, the event recorder and the
//! metrics. No globals.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use kube::Client;
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::reflector::Store;

use crate::budget::ReadBudget;
use crate::dbinstance::DBInstance;
use crate::dbinstance::plan::Sensitive;
use crate::dbinstance::plan::tenancy::Grants;
use crate::error::Error;
use crate::observed::Observation;

use crate::http::Health;
use crate::lock;
use crate::metrics::Metrics;
use crate::observed::AwsIdentity;
use crate::observer::Observer;
use crate::rds::{AwsError, Rds};
use crate::secrets::MANAGER;

/// Everything a reconcile needs.
pub struct Context {
    pub client: Client,
    pub rds: Rds,
    pub observer: Arc<Observer>,
    pub recorder: Recorder,
    pub metrics: Arc<Metrics>,
    pub health: Arc<Health>,
    /// The key of the password hashes in status (see `secrets::hash_key`).
    pub hash_key: Sensitive,
    /// What the operator's settings grant to namespaces (`--grant-adoption`, `--grant-restore`).
    pub grants: Grants,
    /// Direct RDS reads per namespace (`--namespace-read-budget`).
    pub read_budget: ReadBudget,
    /// Our own writes of the objects, which a reconcile waits for the cache to show.
    pub writes: crate::writes::Writes,
    /// The watches' caches of DBInstances, one per watched namespace (or one for all).
    stores: RwLock<Vec<Store<DBInstance>>>,
    backoff: Mutex<HashMap<String, (Option<i64>, u32)>>,
    identity: tokio::sync::OnceCell<AwsIdentity>,
    /// RDS's parameter catalogs by family: they do not change, so each is read once.
    catalogs: Mutex<HashMap<String, Arc<crate::observed::Catalog>>>,
}

impl Context {
    pub fn new(
        client: Client,
        rds: Rds,
        observer: Arc<Observer>,
        instance: String,
        metrics: Arc<Metrics>,
        health: Arc<Health>,
        hash_key: Sensitive,
    ) -> Self {
        let reporter = Reporter {
            controller: MANAGER.into(),
            instance: Some(instance),
        };
        Context {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            rds,
            observer,
            metrics,
            health,
            hash_key,
            grants: Grants::default(),
            read_budget: ReadBudget::new(0),
            writes: Default::default(),
            stores: RwLock::default(),
            backoff: Mutex::default(),
            identity: tokio::sync::OnceCell::new(),
            catalogs: Mutex::default(),
        }
    }

    /// Registers a watch's cache of DBInstances.
    pub fn add_store(&self, store: Store<DBInstance>) {
        self.stores
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(store);
    }

    /// The DBInstances of a namespace that use a Secret of this name (as password, generated
    /// password or connection Secret), as the watches know them.
    pub fn peers_using(&self, namespace: &str, secret: &str) -> Vec<DBInstance> {
        let stores = self.stores.read().unwrap_or_else(|e| e.into_inner());
        (stores.iter().flat_map(|s| s.state()))
            .filter(|db| db.metadata.namespace.as_deref() == Some(namespace))
            .filter(|db| {
                crate::dbinstance::plan::spec::secrets_of(db)
                    .iter()
                    .any(|(n, _)| n == secret)
            })
            .map(|db| (*db).clone())
            .collect()
    }

    /// The namespaces of the DBInstances (other than `uid`) that observe an instance of this
    /// identifier (managementPolicy ObserveOnly), as the watches know them.
    pub fn observers_of(&self, identifier: &str, uid: Option<&str>) -> Vec<String> {
        let stores = self.stores.read().unwrap_or_else(|e| e.into_inner());
        (stores.iter().flat_map(|s| s.state()))
            .filter(|db| db.metadata.uid.as_deref() != uid && db.identifier() == identifier)
            .filter(|db| crate::dbinstance::plan::spec::observe_only(db))
            .filter_map(|db| db.metadata.namespace.clone())
            .collect()
    }

    /// The instance with this identifier read directly, its read taken from the namespace's
    /// budget. With the budget spent: the shared poll's last entry when `fallback` and there is
    /// one the operator has not made stale, else `Error::ReadBudget` (retried once it refills).
    pub async fn direct_read(
        &self,
        namespace: &str,
        identifier: &str,
        fallback: bool,
    ) -> Result<Observation, Error> {
        match self.read_budget.take(namespace) {
            Ok(()) => {
                self.metrics.namespace_read(namespace, "direct");
                Ok(self.observer.observe_directly(identifier).await?)
            }
            Err(wait) => {
                self.metrics.namespace_read(namespace, "limited");
                let last = self.observer.last_polled(identifier).filter(|_| fallback);
                last.ok_or(Error::ReadBudget {
                    per_minute: self.read_budget.per_minute,
                    wait,
                })
            }
        }
    }

    /// The operator's AWS account and region, asked of STS once (again after a failure).
    pub async fn identity(&self) -> Result<AwsIdentity, AwsError> {
        (self.identity)
            .get_or_try_init(|| self.rds.identity())
            .await
            .cloned()
    }

    /// RDS's catalog of a parameter group family, read once (DescribeEngineDefaultParameters).
    pub async fn parameter_catalog(
        &self,
        family: &str,
    ) -> Result<Arc<crate::observed::Catalog>, AwsError> {
        if let Some(c) = lock(&self.catalogs).get(family) {
            return Ok(c.clone());
        }
        let catalog = Arc::new(self.rds.parameter_catalog(family).await?);
        lock(&self.catalogs).insert(family.to_owned(), catalog.clone());
        Ok(catalog)
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
            crate::dbinstance::plan::backoff_delay(self.next_failure(uid, generation)),
            0.25,
        )
    }

    pub fn reset_failures(&self, uid: &str) {
        lock(&self.backoff).remove(uid);
    }
}
