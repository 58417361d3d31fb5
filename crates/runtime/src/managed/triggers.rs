//! What wakes a kind's reconciles from its own watch: an object the watch applied, and every
//! object the cache holds once a list (the first, or a relist after the watch fell behind) is
//! complete.
//!
//! kube-runtime's `applied_objects` wakes each object of a relist as the list's pages arrive,
//! while the cache still holds what it held before the relist (the reflector swaps the new list in
//! only at its end). A reconcile that starts meanwhile finds no object in the cache for one created
//! while the watch was away, and kube-runtime's controller drops that wake (`ObjectNotFound`, no
//! requeue): nothing wakes the object again until someone edits it. With 1,000 EventSubscriptions
//! made at once, a relist over two pages of 500 left 336 never reconciled (docs/scale.md). Here a
//! relist's objects wake only once the cache holds them all.

use futures::{Stream, StreamExt};
use kube::Resource;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher::{Error, Event};

/// The cache of a watch's objects and the wakes of its reconciles: an object the watch applies
/// (added or changed) at once; a list's objects (`InitApply`) not one by one but all together when
/// the list is done (`InitDone`), from the cache, which holds them all then. A deletion wakes
/// nothing (a finalizer's removal is an apply before it).
pub fn cached_triggers<K, S>(events: S) -> (Store<K>, impl Stream<Item = Result<K, Error>>)
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone,
    S: Stream<Item = Result<Event<K>, Error>>,
{
    let (reader, writer) = reflector::store();
    let cache = reader.clone();
    let triggers = reflector::reflector(writer, events)
        .flat_map(move |event| futures::stream::iter(wakes(event, &cache)));
    (reader, triggers)
}

/// The objects one event (already applied to `cache`) wakes.
fn wakes<K>(event: Result<Event<K>, Error>, cache: &Store<K>) -> Vec<Result<K, Error>>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    match event {
        Ok(Event::Apply(obj)) => vec![Ok(obj)],
        Ok(Event::InitDone) => (cache.state().iter()).map(|o| Ok(K::clone(o))).collect(),
        Ok(Event::Init | Event::InitApply(_) | Event::Delete(_)) => Vec::new(),
        Err(e) => vec![Err(e)],
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::controller::{Action, Controller};

    use super::*;

    fn object(i: usize) -> ConfigMap {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": format!("o-{i:02}"), "namespace": "ns", "resourceVersion": "5"}
        }))
        .unwrap()
    }

    /// A watch that listed nothing, then fell behind (410) and listed again in two pages, 20 then
    /// 5 objects made while it was away, the second page 300 ms after the first: every object is
    /// reconciled once the relist is done. Waking each as its page arrived, the first page's 20
    /// were looked up in a cache that did not hold them yet, and never reconciled.
    #[tokio::test]
    async fn every_object_of_a_relist_in_pages_is_reconciled() {
        let first_page: Vec<_> = (0..20).map(|i| Ok(Event::InitApply(object(i)))).collect();
        let second_page: Vec<_> = (20..25).map(|i| Ok(Event::InitApply(object(i)))).collect();
        let events = futures::stream::iter([Ok(Event::Init), Ok(Event::InitDone), Ok(Event::Init)])
            .chain(futures::stream::iter(first_page))
            .chain(
                futures::stream::once(tokio::time::sleep(Duration::from_millis(300)))
                    .filter_map(|_| async { None }),
            )
            .chain(futures::stream::iter(second_page))
            .chain(futures::stream::iter([Ok(Event::InitDone)]))
            .chain(futures::stream::pending());
        let (cache, triggers) = cached_triggers(events);
        let reconciled = Arc::new(Mutex::new(BTreeMap::<String, u32>::new()));
        let run = Controller::for_stream(triggers, cache).run(
            |obj: Arc<ConfigMap>, seen: Arc<Mutex<BTreeMap<String, u32>>>| async move {
                let name = obj.metadata.name.clone().unwrap_or_default();
                *seen.lock().unwrap().entry(name).or_default() += 1;
                Ok::<_, kube::Error>(Action::await_change())
            },
            |_, _, _| Action::await_change(),
            reconciled.clone(),
        );
        let all = async {
            while reconciled.lock().unwrap().len() < 25 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        // Until every object was reconciled, or for 2 s (a lost wake never comes).
        let settle = futures::future::select(Box::pin(run.for_each(|_| async {})), Box::pin(all));
        let _ = tokio::time::timeout(Duration::from_secs(2), settle).await;
        let reconciled = reconciled.lock().unwrap().clone();
        let missing: Vec<String> = (0..25)
            .map(|i| format!("o-{i:02}"))
            .filter(|name| !reconciled.contains_key(name))
            .collect();
        assert!(missing.is_empty(), "never reconciled: {missing:?}");
    }
}
