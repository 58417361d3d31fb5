//! The watches' stores of a kind, one per watched namespace (or one for all), kept in the context
//! (`Context::shared`) for the kind's reconciles and for the kinds that ask of it.

use std::sync::{Arc, RwLock};

use kube::runtime::reflector::Store;

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
