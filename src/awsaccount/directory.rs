//! The AWSAccounts as placement reads them: one cluster-wide watch, which serves the accounts by
//! name (`accounts::Accounts`) and tells the placed kinds which account changed (`locate`'s
//! wake-up: an account granted, or its role mended, reconciles the objects that use it at once).

use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use tokio::sync::{broadcast, watch};

use super::AWSAccount;
use crate::accounts::{Account, Accounts};

/// How many account changes a slow controller may miss before it skips some (the periodic requeue
/// catches those).
const CHANGES: usize = 1024;

/// The watch's cache of AWSAccounts, and the names of those that change.
struct Directory {
    store: Store<AWSAccount>,
    changed: broadcast::Sender<String>,
}

impl Accounts for Directory {
    fn get(&self, name: &str) -> Option<Account> {
        self.store.get(&ObjectRef::new(name)).map(|a| a.account())
    }

    fn all(&self) -> Vec<Account> {
        self.store.state().iter().map(|a| a.account()).collect()
    }

    fn ready(&self) -> BoxFuture<'_, bool> {
        Box::pin(async { self.store.wait_until_ready().await.is_ok() })
    }

    fn changes(&self) -> BoxStream<'static, String> {
        crate::observer::wakes(self.changed.subscribe()).boxed()
    }
}

/// The watch of every AWSAccount, until `shutdown`: the directory it fills, and the watch to run.
pub fn watch(
    client: &kube::Client,
    shutdown: watch::Receiver<bool>,
) -> (Arc<dyn Accounts>, BoxFuture<'static, ()>) {
    let (store, writer) = reflector::store();
    let changed = broadcast::channel(CHANGES).0;
    let tell = changed.clone();
    let config = watcher::Config::default().any_semantic();
    let stream = watcher(Api::<AWSAccount>::all(client.clone()), config)
        .default_backoff()
        .reflect(writer)
        .touched_objects()
        .for_each(move |account| {
            if let Ok(account) = account {
                let _ = tell.send(account.name_any());
            }
            futures::future::ready(())
        });
    let run = async move {
        let mut shutdown = shutdown;
        tokio::select! {
            _ = stream => {}
            _ = shutdown.wait_for(|s| *s) => {}
        }
    };
    (Arc::new(Directory { store, changed }), Box::pin(run))
}
