//! Recovery wakes what waited. An object whose reconcile found its location's breaker open
//! (`crate::breaker`) waits for the next probe; when a probe's answer closes the breaker, every
//! object that waited there is woken at once, those that had a change to make (their plan had
//! steps when it failed) first, paced by a rate limiter so that recovery is not a storm of its
//! own. Every kind gets this from the skeleton.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};

use futures::{Stream, StreamExt};
use governor::{Quota, RateLimiter};
use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use tokio::sync::broadcast;

use crate::lock;

/// How many woken objects a second, at most, once a location recovers: 1,000 objects in 10 s,
/// well under the pace of the controller's own workers, so that recovery is not a storm.
pub const WAKES_PER_SECOND: u32 = 100;

/// The objects of kind `K` waiting on each location, by the location's id: (had a change to
/// make, the object).
pub struct Waiting<K: Resource> {
    by_location: Mutex<BTreeMap<u64, Vec<Waiter<K>>>>,
}

/// An object that waits: (had a change to make, the object).
type Waiter<K> = (bool, ObjectRef<K>);

impl<K: Resource> Default for Waiting<K> {
    fn default() -> Self {
        Waiting {
            by_location: Mutex::default(),
        }
    }
}

impl<K: Resource<DynamicType = ()>> Waiting<K> {
    /// `object` waits on `location`; `mutation`: its plan had a change to make.
    pub fn add(&self, location: u64, object: ObjectRef<K>, mutation: bool) {
        let mut waiting = lock(&self.by_location);
        let list = waiting.entry(location).or_default();
        match list.iter_mut().find(|(_, o)| *o == object) {
            Some(entry) => entry.0 |= mutation,
            None => list.push((mutation, object)),
        }
    }

    /// The objects that waited on `location`, those with a change to make first, in the order
    /// they came; none wait there any more.
    pub fn take(&self, location: u64) -> Vec<ObjectRef<K>> {
        let mut list = lock(&self.by_location)
            .remove(&location)
            .unwrap_or_default();
        list.sort_by_key(|(mutation, _)| !mutation);
        list.into_iter().map(|(_, o)| o).collect()
    }
}

/// The wake-ups of kind `K`'s objects when a location they waited on recovers, paced.
pub fn wakes<K>(
    waiting: Arc<Waiting<K>>,
    recoveries: broadcast::Receiver<u64>,
) -> impl Stream<Item = ObjectRef<K>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Send + Sync + 'static,
{
    let pace = Arc::new(RateLimiter::direct(Quota::per_second(
        NonZeroU32::new(WAKES_PER_SECOND).unwrap_or(NonZeroU32::MIN),
    )));
    let recovered = futures::stream::unfold(recoveries, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(location) => return Some((location, rx)),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    recovered
        .flat_map(move |location| futures::stream::iter(waiting.take(location)))
        .then(move |object| {
            let pace = pace.clone();
            async move {
                pace.until_ready().await;
                object
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn object(name: &str) -> ObjectRef<ConfigMap> {
        ObjectRef::new(name).within("ns")
    }

    #[test]
    fn changes_wake_first_and_each_object_once() {
        let waiting = Waiting::<ConfigMap>::default();
        waiting.add(1, object("read-only"), false);
        waiting.add(1, object("tag"), true);
        waiting.add(1, object("read-only"), false);
        waiting.add(1, object("later-a-change"), false);
        waiting.add(1, object("later-a-change"), true);
        waiting.add(2, object("elsewhere"), true);
        let woken: Vec<String> = waiting.take(1).into_iter().map(|o| o.name).collect();
        assert_eq!(woken, vec!["tag", "later-a-change", "read-only"]);
        assert!(waiting.take(1).is_empty(), "woken once");
        assert_eq!(
            waiting.take(2).len(),
            1,
            "another location's wait is its own"
        );
    }

    #[tokio::test]
    async fn a_recovery_wakes_its_waiting_objects_paced() {
        let waiting = Arc::new(Waiting::<ConfigMap>::default());
        let (tx, rx) = broadcast::channel(8);
        for i in 0..(WAKES_PER_SECOND + 10) {
            waiting.add(7, object(&format!("db{i}")), i % 2 == 0);
        }
        waiting.add(8, object("still-waiting"), true);
        let mut stream = Box::pin(wakes(waiting.clone(), rx));
        tx.send(7).unwrap();
        let started = std::time::Instant::now();
        let mut woken = Vec::new();
        for _ in 0..(WAKES_PER_SECOND + 10) {
            woken.push(stream.next().await.unwrap().name);
        }
        assert!(
            woken[..15]
                .iter()
                .all(|n| n[2..].parse::<u32>().unwrap() % 2 == 0)
        );
        // A second's worth at once, then one every 1/WAKES_PER_SECOND s.
        let paced = std::time::Duration::from_secs_f64(9.0 / f64::from(WAKES_PER_SECOND));
        assert!(started.elapsed() >= paced, "paced: {:?}", started.elapsed());
        assert_eq!(waiting.take(8).len(), 1, "the other location still waits");
    }
}
