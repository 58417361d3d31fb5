//! The watches' stores of a kind, one per watched namespace (or one for all), and what the
//! DBInstance reconciles ask of theirs.

use std::sync::{Arc, RwLock};

use kube::runtime::reflector::Store;

use super::DBInstance;
use crate::managed::placement::Placement;

/// The watches' stores of objects of kind `K`.
pub struct Stores<K: kube::Resource<DynamicType = ()> + 'static>(RwLock<Vec<Store<K>>>);

impl<K: kube::Resource<DynamicType = ()> + 'static> Default for Stores<K> {
    fn default() -> Self {
        Stores(RwLock::default())
    }
}

impl<K: kube::Resource<DynamicType = ()> + Clone + 'static> Stores<K> {
    /// Registers a watch's store.
    pub fn add(&self, store: Store<K>) {
        self.0
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(store);
    }

    /// Every object the watches know.
    pub fn all(&self) -> Vec<Arc<K>> {
        let stores = self.0.read().unwrap_or_else(|e| e.into_inner());
        stores.iter().flat_map(|s| s.state()).collect()
    }
}

/// The watches' stores of DBInstances.
pub type Instances = Stores<DBInstance>;

impl Stores<DBInstance> {
    /// The DBInstances of a namespace that use a Secret of this name (as password, generated
    /// password or connection Secret), as the watches know them.
    pub fn peers_using(&self, namespace: &str, secret: &str) -> Vec<DBInstance> {
        let stores = self.0.read().unwrap_or_else(|e| e.into_inner());
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
    /// identifier (managementPolicy ObserveOnly) in the same account and region (or whose place
    /// is not recorded yet, which may be the same), as the watches know them.
    pub fn observers_of(
        &self,
        identifier: &str,
        uid: Option<&str>,
        here: &Placement,
    ) -> Vec<String> {
        let stores = self.0.read().unwrap_or_else(|e| e.into_inner());
        let same_place = |db: &DBInstance| {
            (db.status.as_ref().and_then(|s| s.placement.as_ref()))
                .is_none_or(|p| p.account_id == here.account_id && p.region == here.region)
        };
        (stores.iter().flat_map(|s| s.state()))
            .filter(|db| db.metadata.uid.as_deref() != uid && db.identifier() == identifier)
            .filter(|db| same_place(db))
            .filter(|db| crate::dbinstance::plan::spec::observe_only(db))
            .filter_map(|db| db.metadata.namespace.clone())
            .collect()
    }
}
