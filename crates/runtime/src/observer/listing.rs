//! The shared listings of what is not an instance: every resource of one type in the account and
//! region (the DB clusters, the DB subnet groups, the DB parameter groups), listed 100 a page once
//! per drift interval from the first time a reconcile asks for one, with their tags from one
//! GetResources (100 a page) per poll for the types whose pages lack them. A reconcile then costs
//! no describe and no ListTagsForResource while the listing is fresh and the operator has not
//! changed the resource since; a parameter group still reads its parameters (RDS has no listing of
//! them across groups). Only what the listing has is served: a resource it lacks, or one RDS is
//! busy with, is read directly, so no create or delete is decided on a listing.
//!
//! A kind plugs in its observed type through [`Listed`]; the observer keeps one [`Listing`] per
//! type and names none of them.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use crate::aws_error::AwsError;
use crate::lock;
use crate::rds::Rds;

/// A resource type the observer lists: what it is called, how a page of them is read, and how one
/// is found.
pub trait Listed: Clone + PartialEq + Send + Sync + 'static {
    /// What the listing is, in the operator's log ("the clusters").
    const WHAT: &'static str;
    /// The resource type GetResources' ResourceTypeFilters name it by, when its pages lack its
    /// tags (None: they carry them).
    const TAGGED_AS: Option<&'static str> = None;
    /// What a reconcile asks for it by (the identifier or name, as RDS stores it).
    fn key(&self) -> String;
    /// Whether the listing may serve it (not while RDS is busy with it).
    fn settled(&self) -> bool {
        true
    }
    /// Its ARN, by which its tags are found.
    fn arn(&self) -> Option<&str> {
        None
    }
    /// Takes its tags, as GetResources has them.
    fn set_tags(&mut self, _tags: BTreeMap<String, String>) {}
    /// The DB instance it is about, when a change of it is news to that instance's DBInstance
    /// (pending maintenance): a listing that finds it changed wakes that DBInstance, as the
    /// instance poll does, instead of leaving it to the settled requeue (ten drift intervals).
    fn instance(&self) -> Option<&str> {
        None
    }
    /// Every one of the account and region, page by page.
    fn list(rds: &Rds) -> impl Future<Output = Result<Vec<Self>, AwsError>> + Send;
}

/// [`Listed`] for an observed type found by its name (lower case, as RDS stores it), with an
/// `arn` and `tags` GetResources fills: `listed_by_name!(Type, "the DB subnet groups",
/// "rds:subgrp", pages)`, where `Rds::pages` lists every one of the account and region; without
/// the resource type, its pages carry its tags.
#[macro_export]
macro_rules! listed_by_name {
    // Its pages carry its tags (DescribeIntegrations, DescribeDBShardGroups): no GetResources.
    ($type:ty, $what:literal, $pages:ident) => {
        impl $crate::observer::listing::Listed for $type {
            const WHAT: &'static str = $what;
            fn key(&self) -> String {
                self.name.to_lowercase()
            }
            fn arn(&self) -> Option<&str> {
                self.arn.as_deref()
            }
            async fn list(
                rds: &$crate::rds::Rds,
            ) -> Result<Vec<Self>, $crate::aws_error::AwsError> {
                rds.$pages().await
            }
        }
    };
    ($type:ty, $what:literal, $tagged_as:literal, $pages:ident) => {
        impl $crate::observer::listing::Listed for $type {
            const WHAT: &'static str = $what;
            const TAGGED_AS: Option<&'static str> = Some($tagged_as);
            fn key(&self) -> String {
                self.name.to_lowercase()
            }
            fn arn(&self) -> Option<&str> {
                self.arn.as_deref()
            }
            fn set_tags(&mut self, tags: std::collections::BTreeMap<String, String>) {
                self.tags = tags;
            }
            async fn list(
                rds: &$crate::rds::Rds,
            ) -> Result<Vec<Self>, $crate::aws_error::AwsError> {
                rds.$pages().await
            }
        }
    };
}

/// ARN -> tags, of the types whose pages lack them.
pub type Tags = HashMap<String, BTreeMap<String, String>>;

/// The resources of one type as the last listing found them.
pub struct Listing<T> {
    wanted: AtomicBool,
    state: Mutex<State<T>>,
}

struct State<T> {
    /// When the last complete listing started.
    read_at: Option<Instant>,
    found: HashMap<String, T>,
    /// Keys the operator changed, and when: a listing that started before is stale for them.
    mutated: HashMap<String, Instant>,
    /// Keys the operator is changing (its calls still out, how many): every listing is stale for
    /// them, one that started during the call included.
    changing: HashMap<String, usize>,
    /// Keys direct reads have found absent, since when (cleared when one is found).
    absent_since: HashMap<String, Instant>,
}

/// A change of one resource under way ([`Listing::changing`]); dropped once its call is answered
/// (or abandoned).
pub struct Changing<T> {
    listing: Arc<Listing<T>>,
    key: String,
}

impl<T> Drop for Changing<T> {
    fn drop(&mut self) {
        let mut state = lock(&self.listing.state);
        if let Some(n) = state.changing.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                state.changing.remove(&self.key);
            }
        }
        state.mutated.insert(self.key.clone(), Instant::now());
    }
}

impl<T> Default for Listing<T> {
    fn default() -> Self {
        Listing {
            wanted: AtomicBool::new(false),
            state: Mutex::new(State {
                read_at: None,
                found: HashMap::new(),
                mutated: HashMap::new(),
                changing: HashMap::new(),
                absent_since: HashMap::new(),
            }),
        }
    }
}

impl<T: Listed> Listing<T> {
    /// Whether a reconcile asked: only then is the listing made.
    pub fn wanted(&self) -> bool {
        self.wanted.load(Ordering::Relaxed)
    }

    /// The resource with this key as the listing has it, when fresh, settled, and not changed by
    /// the operator since; None: read it directly. Fresh: a listing is made once per drift
    /// interval (`max_age`), so the last complete one is up to two intervals old when a reconcile
    /// comes just before the next one completes; older than that, the polls stopped.
    pub fn get(&self, key: &str, max_age: Duration) -> Option<T> {
        self.complete(key, max_age)
            .flatten()
            .filter(|found| found.settled())
    }

    /// For a type whose listing names every resource that has one (pending maintenance): what
    /// the listing has for this key, None inside when it has nothing; None when the listing is
    /// not fresh, or the operator changed the key since it started.
    pub fn complete(&self, key: &str, max_age: Duration) -> Option<Option<T>> {
        self.wanted.store(true, Ordering::Relaxed);
        let state = lock(&self.state);
        let read_at = state.read_at?;
        let unchanged = !state.changing.contains_key(key)
            && (state.mutated.get(key)).is_none_or(|at| *at < read_at);
        let fresh = read_at.elapsed() <= max_age * 2;
        (fresh && unchanged).then(|| state.found.get(key).cloned())
    }

    /// Every resource of the listing, when fresh (as [`Listing::get`]); None: read directly.
    /// For a reader that finds what it needs by another field than the key (a cluster's shard
    /// group, by cluster).
    pub fn all(&self, max_age: Duration) -> Option<Vec<T>> {
        self.wanted.store(true, Ordering::Relaxed);
        let state = lock(&self.state);
        let read_at = state.read_at?;
        let fresh = read_at.elapsed() <= max_age * 2 && state.changing.is_empty();
        let stale = (state.mutated.values()).any(|at| *at >= read_at);
        (fresh && !stale).then(|| state.found.values().cloned().collect())
    }

    /// The operator changed this resource: read it directly until a listing started after.
    pub fn mutated(&self, key: &str) {
        lock(&self.state)
            .mutated
            .insert(key.to_owned(), Instant::now());
    }

    /// The operator is about to change this resource: read it directly while the guard lives
    /// (held across the call), then until a listing that started after the call was answered. A
    /// listing made while the call was out may show it unchanged, and a decision on that (a
    /// second RemoveFromGlobalCluster, say) would act twice.
    pub fn changing(self: Arc<Self>, key: &str) -> Changing<T> {
        *lock(&self.state)
            .changing
            .entry(key.to_owned())
            .or_default() += 1;
        Changing {
            listing: self,
            key: key.to_owned(),
        }
    }

    /// A direct read of this key found a resource, or none.
    pub fn read_directly(&self, key: &str, found: bool) {
        let mut state = lock(&self.state);
        if found {
            state.absent_since.remove(key);
        } else {
            let since = state.absent_since.entry(key.to_owned());
            since.or_insert_with(Instant::now);
        }
    }

    /// How long direct reads have found nothing with this key.
    pub fn absent_for(&self, key: &str) -> Option<Duration> {
        lock(&self.state)
            .absent_since
            .get(key)
            .map(Instant::elapsed)
    }

    /// One listing, with the tags `tags` has for it; the snapshot is replaced only when every page
    /// was read. The DB instances whose entries changed ([`Listing::take`]).
    async fn poll(&self, rds: &Rds, tags: &Tags) -> Result<Vec<String>, AwsError> {
        let started = Instant::now();
        let mut found = T::list(rds).await?;
        if T::TAGGED_AS.is_some() {
            for item in &mut found {
                let tagged = item.arn().and_then(|arn| tags.get(arn)).cloned();
                item.set_tags(tagged.unwrap_or_default());
            }
        }
        Ok(self.take(found, started))
    }

    /// Takes a complete listing that started at `started`; the DB instances whose entries it
    /// found changed (new, gone or different), as [`Listed::instance`] names them.
    fn take(&self, found: Vec<T>, started: Instant) -> Vec<String> {
        let found: HashMap<String, T> = found.into_iter().map(|t| (t.key(), t)).collect();
        let mut state = lock(&self.state);
        // Only the entries about an instance are compared (none, for most types).
        let changed = |a: &HashMap<String, T>, b: &HashMap<String, T>| {
            (a.iter())
                .filter_map(|(key, t)| Some((key, t, t.instance()?)))
                .filter(|(key, t, _)| b.get(*key) != Some(*t))
                .map(|(_, _, instance)| instance.to_owned())
                .collect::<Vec<_>>()
        };
        let mut instances = changed(&found, &state.found);
        instances.extend(changed(&state.found, &found));
        instances.sort();
        instances.dedup();
        state.found = found;
        state.mutated.retain(|_, at| *at >= started);
        state.read_at = Some(started);
        instances
    }
}

/// A listing as the poll sees it, whatever its type.
pub(super) trait Poll: Send + Sync {
    fn wanted(&self) -> bool;
    fn what(&self) -> &'static str;
    fn tagged_as(&self) -> Option<&'static str>;
    fn poll<'a>(
        &'a self,
        rds: &'a Rds,
        tags: &'a Tags,
    ) -> BoxFuture<'a, Result<Vec<String>, AwsError>>;
}

impl<T: Listed> Poll for Listing<T> {
    fn wanted(&self) -> bool {
        Listing::wanted(self)
    }
    fn what(&self) -> &'static str {
        T::WHAT
    }
    fn tagged_as(&self) -> Option<&'static str> {
        T::TAGGED_AS
    }
    fn poll<'a>(
        &'a self,
        rds: &'a Rds,
        tags: &'a Tags,
    ) -> BoxFuture<'a, Result<Vec<String>, AwsError>> {
        Box::pin(Listing::poll(self, rds, tags))
    }
}

/// Every listing of a location, one per type, made when first asked for.
#[derive(Default)]
pub(super) struct Listings(Mutex<HashMap<TypeId, Entry>>);

struct Entry {
    typed: Arc<dyn Any + Send + Sync>,
    poll: Arc<dyn Poll>,
}

impl Listings {
    /// The listing of `T`.
    pub(super) fn of<T: Listed>(&self) -> Arc<Listing<T>> {
        let mut map = lock(&self.0);
        let entry = map.entry(TypeId::of::<T>()).or_insert_with(|| {
            let listing = Arc::new(Listing::<T>::default());
            Entry {
                typed: listing.clone(),
                poll: listing,
            }
        });
        (entry.typed.clone().downcast())
            .unwrap_or_else(|_| unreachable!("a listing is kept under its own type"))
    }

    /// The listings a reconcile asked for.
    pub(super) fn wanted(&self) -> Vec<Arc<dyn Poll>> {
        (lock(&self.0).values())
            .filter(|e| e.poll.wanted())
            .map(|e| e.poll.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rds_state::is_transitional;

    /// A cluster as a listing holds it: settled unless RDS is busy with it (DBCluster's
    /// `ObservedCluster` is listed so, a layer above).
    #[derive(Clone, Debug, Default, PartialEq)]
    struct ObservedCluster {
        identifier: String,
        status: String,
    }

    impl Listed for ObservedCluster {
        const WHAT: &'static str = "test clusters";
        fn key(&self) -> String {
            self.identifier.clone()
        }
        fn settled(&self) -> bool {
            !is_transitional(&self.status)
        }
        async fn list(_: &Rds) -> Result<Vec<Self>, AwsError> {
            Ok(Vec::new())
        }
    }

    /// A group as a listing holds it, by its name in lower case (`listed_by_name!`, as the
    /// DB subnet groups are listed a layer above).
    #[derive(Clone, Debug, Default, PartialEq)]
    struct ObservedSubnetGroup {
        name: String,
    }

    impl Listed for ObservedSubnetGroup {
        const WHAT: &'static str = "test groups";
        fn key(&self) -> String {
            self.name.to_lowercase()
        }
        async fn list(_: &Rds) -> Result<Vec<Self>, AwsError> {
            Ok(Vec::new())
        }
    }

    fn listing_with<T: Listed>(found: T) -> Listing<T> {
        let listing = Listing::default();
        {
            let mut state = lock(&listing.state);
            state.read_at = Some(Instant::now());
            state.found.insert(found.key(), found);
        }
        listing
    }

    fn cluster(identifier: &str, status: &str) -> Listing<ObservedCluster> {
        listing_with(ObservedCluster {
            identifier: identifier.into(),
            status: status.into(),
        })
    }

    #[test]
    fn the_listing_serves_a_cluster_only_when_fresh_settled_unchanged_and_present() {
        let minute = Duration::from_secs(60);
        assert!(!Listing::<ObservedCluster>::default().wanted());
        let poll = cluster("coffee", "available");
        assert!(poll.get("coffee", minute).is_some(), "fresh and settled");
        assert!(poll.wanted(), "asking starts the listing");
        assert!(poll.get("tea", minute).is_none(), "absent: read directly");
        assert!(
            poll.get("coffee", Duration::ZERO).is_none(),
            "older than asked"
        );
        poll.mutated("coffee");
        assert!(
            poll.get("coffee", minute).is_none(),
            "changed by the operator since"
        );
        // Made once per interval: the last complete listing serves until two intervals old.
        let aged = |secs| {
            let listing = cluster("coffee", "available");
            lock(&listing.state).read_at = Instant::now().checked_sub(Duration::from_secs(secs));
            listing.get("coffee", minute).is_some()
        };
        assert!(aged(90), "the next listing is under way");
        assert!(!aged(130), "the listings stopped");
        let busy = cluster("coffee", "modifying");
        assert!(busy.get("coffee", minute).is_none(), "RDS is busy with it");
        assert!(
            (Listing::<ObservedCluster>::default())
                .get("coffee", minute)
                .is_none(),
            "never listed"
        );
    }

    #[test]
    fn a_listing_made_while_a_change_was_out_does_not_serve_it() {
        let minute = Duration::from_secs(60);
        let poll = Arc::new(cluster("coffee", "available"));
        let listed_now = |poll: &Listing<ObservedCluster>| {
            lock(&poll.state).read_at = Some(Instant::now());
            poll.get("coffee", minute).is_some()
        };
        let call = poll.clone().changing("coffee");
        let other = poll.clone().changing("coffee");
        assert!(!listed_now(&poll), "listed while the call is out");
        drop(call);
        assert!(!listed_now(&poll), "another call on it is still out");
        drop(other);
        assert!(
            poll.get("coffee", minute).is_none(),
            "the last listing started before the answer"
        );
        std::thread::sleep(Duration::from_millis(2));
        assert!(listed_now(&poll), "a listing started after the answer");
    }

    #[test]
    fn the_listing_serves_a_group_only_when_fresh_unchanged_and_present() {
        let minute = Duration::from_secs(60);
        let poll = listing_with(ObservedSubnetGroup {
            name: "coffee".into(),
        });
        assert!(!Listing::<ObservedSubnetGroup>::default().wanted());
        assert!(poll.get("coffee", minute).is_some(), "fresh and present");
        assert!(poll.wanted(), "asking starts the listing");
        assert!(poll.get("tea", minute).is_none(), "absent: read directly");
        assert!(
            poll.get("coffee", Duration::ZERO).is_none(),
            "older than asked"
        );
        poll.mutated("coffee");
        assert!(
            poll.get("coffee", minute).is_none(),
            "changed by the operator since"
        );
        assert!(
            (Listing::<ObservedSubnetGroup>::default())
                .get("coffee", minute)
                .is_none(),
            "never listed"
        );
    }

    /// A listed entry about an instance (as pending maintenance is).
    #[derive(Clone, Debug, PartialEq)]
    struct About(&'static str, &'static str, &'static str);

    impl Listed for About {
        const WHAT: &'static str = "test entries";
        fn key(&self) -> String {
            self.0.to_owned()
        }
        fn instance(&self) -> Option<&str> {
            (!self.1.is_empty()).then_some(self.1)
        }
        async fn list(_: &Rds) -> Result<Vec<Self>, AwsError> {
            Ok(Vec::new())
        }
    }

    #[test]
    fn a_listing_names_the_instances_whose_entries_it_found_new_changed_or_gone() {
        let listing = Listing::<About>::default();
        let take = |found: Vec<About>| listing.take(found, Instant::now());
        // (the listing found, the instances it names)
        let rows: Vec<(Vec<About>, Vec<&str>)> = vec![
            (vec![About("db:a", "a", "x")], vec!["a"]),
            (vec![About("db:a", "a", "x")], vec![]),
            (
                vec![About("db:a", "a", "y"), About("cluster:c", "", "x")],
                vec!["a"],
            ),
            (vec![About("cluster:c", "", "y")], vec!["a"]),
            (
                vec![About("db:b", "b", "x"), About("db:a", "a", "x")],
                vec!["a", "b"],
            ),
            (
                vec![About("db:b", "b", "x"), About("db:a", "a", "x")],
                vec![],
            ),
        ];
        for (i, (found, named)) in rows.into_iter().enumerate() {
            assert_eq!(take(found), named, "row {i}");
            assert!(lock(&listing.state).read_at.is_some(), "row {i}: taken");
        }
    }
}
