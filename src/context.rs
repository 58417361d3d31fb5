//! What every step of a reconcile shares: the clients, the observer, the event recorder and the
//! metrics. No globals.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::Client;
use kube::runtime::events::{Recorder, Reporter};

use crate::lock;
use crate::metrics::Metrics;
use crate::observer::Observer;
use crate::rds::Rds;
use crate::secrets::MANAGER;

/// Everything a reconcile needs.
pub struct Context {
    pub client: Client,
    pub rds: Rds,
    pub observer: Arc<Observer>,
    pub recorder: Recorder,
    pub metrics: Arc<Metrics>,
    backoff: Mutex<HashMap<String, (Option<i64>, u32)>>,
}

impl Context {
    pub fn new(
        client: Client,
        rds: Rds,
        observer: Arc<Observer>,
        instance: String,
        metrics: Arc<Metrics>,
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
            backoff: Mutex::default(),
        }
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
