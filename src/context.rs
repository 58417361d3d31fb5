//! What every step of a reconcile shares: the clients, the observer, the event recorder and the
//! metrics. No globals.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::Client;
use kube::runtime::events::{Recorder, Reporter};

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
    backoff: Mutex<HashMap<String, (Option<i64>, u32)>>,
    identity: tokio::sync::OnceCell<AwsIdentity>,
}

impl Context {
    pub fn new(
        client: Client,
        rds: Rds,
        observer: Arc<Observer>,
        instance: String,
        metrics: Arc<Metrics>,
        health: Arc<Health>,
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
            backoff: Mutex::default(),
            identity: tokio::sync::OnceCell::new(),
        }
    }

    /// The operator's AWS account and region, asked of STS once (again after a failure).
    pub async fn identity(&self) -> Result<AwsIdentity, AwsError> {
        (self.identity)
            .get_or_try_init(|| self.rds.identity())
            .await
            .cloned()
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

    pub fn reset_failures(&self, uid: &str) {
        lock(&self.backoff).remove(uid);
    }
}
